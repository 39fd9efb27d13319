/**
 * The props of ResilientEndpoint and the variant descriptions it exposes, in a file of their own: the
 * modules that build the endpoint (lib/private/*) take these types, and the construct imports those
 * modules, so neither imports the other.
 */
import { Duration, Size } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { AutoScalingOptions } from './auto-scaling';
import { CircuitBreakerOptions } from './breaker/circuit-breaker';
import { DataCaptureOptions } from './data-capture';
import { DeploymentOptions } from './deployment';
import { DriftOptions } from './drift/drift-monitor';
import { SageMakerInstanceType } from './instance-types';
import { ContainerImage, ModelData } from './model-artifacts';
import { MemoryProfile } from './memory-profile';
import { MemoryFootprint, ModelServerOptions, ModelServerTuning } from './model-server';
import { MonitoringOptions } from './monitoring/endpoint-monitoring';

/** What runs in a production variant. */
export interface ModelProps {
  /** The container image. */
  readonly image: ContainerImage;
  /**
   * The model artifact (`model.tar.gz`).
   * @default - none (the image carries the model)
   */
  readonly modelData?: ModelData;
  /**
   * Memory one model copy needs under peak load; bounds the worker count.
   * @default - unknown: CPU workers are not capped by memory; one worker per GPU on GPU instances (with a warning)
   */
  readonly memoryFootprint?: MemoryFootprint;
  /**
   * The model's memory measured on its real inference code (`MemoryProfile.fromFile('memory-profile.json')`,
   * written by `python3 -m resilient_endpoint_runtime.profile`). Sets the footprint when `memoryFootprint`
   * is not given (the baseline plus the P99.9 request the length caps admit), the container's memory guard
   * curve (`RESILIENT_ENDPOINT_MEMORY_CURVE`) and the largest size a worker admits; the readiness rule
   * `RE-ProfiledMemory` fails `cdk synth` when the P99.9 request cannot fit a worker's budget.
   * @default - none: the guard in the container has no curve and admits everything
   */
  readonly memoryProfile?: MemoryProfile;
  /**
   * The container's memory budget — the memory guard's hard edge for all its workers together — as a whole
   * percent of the instance's memory (and of each GPU's on GPU types), from 50 to 99. Written into the
   * container as `RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES` (`..._CONTAINER_GPU_MEMORY_BYTES` per GPU); each
   * worker's share (`RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES`) is that ÷ workers. It must be above the
   * circuit breaker's degrade trigger (`circuitBreaker.degradeAtPercent`, 80) so that shifting traffic and
   * scaling act before the guard refuses (at or below it is a synth error naming both props, unless the
   * breaker is off), and below 100 so that the kernel's OOM killer never does.
   * @default 90
   */
  readonly guardBudgetPercent?: number;
  /**
   * Extra container environment. Wins over the tuned model-server variables.
   * @default - none
   */
  readonly environment?: { [key: string]: string };
  /**
   * Block all network access of the container. The container then cannot read the circuit
   * breaker's degrade level from SSM or publish stage metrics: use a VPC with endpoints instead.
   * @default false
   */
  readonly networkIsolation?: boolean;
  /**
   * Run the container in this VPC.
   * @default - no VPC (SageMaker's own network)
   */
  readonly vpc?: ec2.IVpc;
  /**
   * Subnets in `vpc`.
   * @default - the VPC's private subnets with egress, or its isolated subnets when it has none
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /**
   * Security groups for the container's network interfaces in `vpc`.
   * @default - a new security group with no inbound rules
   */
  readonly securityGroups?: ec2.ISecurityGroup[];
}

/** A second production variant that the circuit breaker shifts traffic to. */
export interface FallbackVariantProps {
  /**
   * What the fallback runs: usually a lighter model (shorter max sequence, smaller batch).
   * @default - the primary's model
   */
  readonly model?: ModelProps;
  /**
   * Instance type of the fallback.
   * @default - the primary's instance type
   */
  readonly instanceType?: SageMakerInstanceType;
  /**
   * Instances at creation (the fallback autoscales too).
   * @default 1
   */
  readonly instanceCount?: number;
  /**
   * Variant name.
   * @default 'Fallback'
   */
  readonly variantName?: string;
  /**
   * Model-server settings for the fallback.
   * @default - the primary's
   */
  readonly modelServer?: ModelServerOptions;
  /**
   * Autoscaling of the fallback, so it can absorb what the breaker shifts to it.
   * @default - on: min = its instance count, max = the primary's max, 150 QPS per instance
   */
  readonly autoScaling?: AutoScalingOptions;
}

/** A shadow variant that receives a copy of production traffic (responses are discarded). */
export interface ShadowVariantProps {
  /** What the shadow runs (the candidate model). */
  readonly model: ModelProps;
  /**
   * Instance type.
   * @default - the primary's
   */
  readonly instanceType?: SageMakerInstanceType;
  /**
   * Instances.
   * @default 1
   */
  readonly instanceCount?: number;
  /**
   * Percentage of production requests copied to the shadow (1–100).
   * @default 5 (incident B)
   */
  readonly samplingPercent?: number;
  /**
   * Variant name.
   * @default 'Shadow'
   */
  readonly variantName?: string;
}

/**
 * How the endpoint publishes its utilization metrics (`AWS::SageMaker::EndpointConfig.MetricsConfig`).
 * @see https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch-enhanced-metrics.html
 */
export interface MetricPublishingOptions {
  /**
   * Write `MetricsConfig` on the endpoint config. `MetricsConfig` is weeks old in CloudFormation: in a
   * Region whose CloudFormation does not know it yet the deploy fails on it, so `false` leaves it out
   * (SageMaker's defaults: 1-minute utilization data, no per-instance or per-GPU series). The breaker then
   * works on 1-minute data; nothing else changes.
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * Publishing period of the utilization metrics (and, with enhanced metrics, the invocation metrics):
   * 10, 30, 60, 120, 180, 240 or 300 seconds. At 10 s the circuit breaker sees memory within seconds
   * instead of 1–2 minutes.
   * @default Duration.seconds(10)
   */
  readonly frequency?: Duration;
  /**
   * Enhanced metrics: per-instance (`InstanceId`) and per-GPU (`AcceleratorId`) dimensions, so memory
   * is judged on the hottest GPU instead of the mean over a multi-GPU instance.
   * @default true
   */
  readonly enhancedMetrics?: boolean;
  /**
   * Detailed observability (container Prometheus metrics, per-GPU inference-component metrics). The
   * SageMaker API turns it on for new endpoint configs when it is not given; this construct writes
   * `false` unless asked, because nothing here reads those metrics and they are billed.
   * @default false
   */
  readonly detailedObservability?: boolean;
}

/**
 * What a redeploy (a new endpoint config) changes on the live endpoint. The endpoint is updated with
 * `RetainAllVariantProperties: true`, which keeps each variant's live instance count and weight;
 * each option here names one of them to take from the new config instead
 * (`ExcludeRetainedVariantProperties`: `DesiredInstanceCount` from `InitialInstanceCount`,
 * `DesiredWeight` from `InitialVariantWeight`). A new instance type or model is always applied.
 * @see https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_UpdateEndpoint.html
 */
export interface RedeployOptions {
  /**
   * A changed `instanceCount` reaches the live endpoint on the next deploy.
   * @default - true when no variant is autoscaled; false otherwise (Application Auto Scaling owns the
   * counts: change `autoScaling.capacity` instead, which a deploy applies)
   */
  readonly applyInstanceCounts?: boolean;
  /**
   * The variants' weights are reset to the config's (primary 1, fallback 0, shadow its sampling) on the next deploy.
   * @default - false when the circuit breaker shifts weights to a fallback (a deploy during an incident
   * must not undo its shift); true otherwise (e.g. a changed shadow sampling applies)
   */
  readonly applyWeights?: boolean;
}

/** Props of {@link ResilientEndpoint}. */
export interface ResilientEndpointProps {
  /** What runs in the primary variant. */
  readonly model: ModelProps;
  /** Instance type of the primary variant (see `CapacityPlan` to choose one). */
  readonly instanceType: SageMakerInstanceType;
  /**
   * Instances of the primary variant at creation. More than one spreads the variant over
   * Availability Zones.
   * @default 2
   */
  readonly instanceCount?: number;
  /**
   * Name of the primary production variant.
   * @default 'Primary'
   */
  readonly variantName?: string;
  /**
   * Endpoint name. The endpoint is updated in place when its config changes, so a stable name is safe.
   * @default - a unique name derived from the construct path (lower case, ≤ 63 characters)
   */
  readonly endpointName?: string;
  /**
   * A fallback variant (weight 0 until the circuit breaker shifts traffic to it).
   * @default - none: the breaker only publishes the degrade level
   */
  readonly fallback?: FallbackVariantProps;
  /**
   * Model-server tuning.
   * @default - the serving stack detected from the image, workers from the instance hardware, 6 MiB requests, 3600 s download timeout
   */
  readonly modelServer?: ModelServerOptions;
  /**
   * Data capture.
   * @default - on, 1 % sampling, input and output, into a bucket the construct creates
   */
  readonly dataCapture?: DataCaptureOptions;
  /**
   * Metric publishing of the endpoint.
   * @default - every 10 seconds, enhanced (per-instance, per-GPU) metrics on, detailed observability off
   */
  readonly metricPublishing?: MetricPublishingOptions;
  /**
   * KMS key for the instances' EBS storage volume. On instance types with local NVMe storage (g4dn, g5,
   * `*d` families) the key does not encrypt that storage (the instance encrypts it in hardware), so it
   * is set on the endpoint config with a synth warning (`VolumeKmsKeyOnNvme`).
   * @default - AWS-managed encryption of the volume
   */
  readonly volumeKmsKey?: kms.IKey;
  /**
   * Size of the instances' EBS storage volume (1–512 GiB). A synth error on types with local NVMe, which
   * reject `VolumeSizeInGB`.
   * @default - SageMaker's default for the instance type
   */
  readonly volumeSize?: Size;
  /**
   * Autoscaling of the primary variant on per-instance QPS.
   * @default - on: min = instanceCount, max = 2 × instanceCount, 150 QPS per instance (target 9000/min), scale-out cooldown 90 s
   */
  readonly autoScaling?: AutoScalingOptions;
  /**
   * Deployment guardrails for model updates (blue/green canary by default, auto-rollback on the memory and business alarms).
   * @default - a blue/green canary of 1 instance (its traffic share is 1 ÷ the variant's instances: 50 % of 2),
   * a 5-minute bake, then all at once; all at once after the bake when a variant has a single instance
   */
  readonly deployment?: DeploymentOptions;
  /**
   * A shadow variant for testing a new model on a copy of traffic. Cannot be combined with a
   * fallback variant (AWS allows one production plus one shadow variant).
   * @default - none
   */
  readonly shadow?: ShadowVariantProps;
  /**
   * Three-tier CloudWatch monitoring (alarms, composite alarm, topic, dashboard).
   * @default - all tiers on: memory and GPU memory at 85 %, P99 latency 500 ms, 5XX rate 1 %
   */
  readonly monitoring?: MonitoringOptions;
  /**
   * The memory circuit breaker (publishes the degrade level, shifts weights to the fallback, holds
   * capacity while degraded).
   * @default - on, with a function of its own: degrade at 80 % memory, open at 95 % or 5 % 5XX over
   * 10 minutes, recover after 5 minutes below 70 % in steps (a recovery that fails is retried, less often after 3 failures)
   */
  readonly circuitBreaker?: CircuitBreakerOptions;
  /**
   * Data drift on the captured requests (incident B's checklist: Wasserstein weekly at 0.15, KL daily at
   * 0.3, cluster shares; incident A: the request sizes against the memory profile's). Needs data capture.
   * Off unless given: its features depend on the payload, and its alarms are for the model's owner (the
   * readiness rule `RE-Drift` warns while it is off). `drift: {}` compares the request size, in the memory
   * profile's own unit, with the distribution the profile was measured on, and the request bytes with the
   * first window after each model change.
   * @default - no drift monitor
   */
  readonly drift?: DriftOptions;
  /**
   * What a redeploy changes on the live endpoint (instance counts, weights).
   * @default - counts applied unless autoscaled, weights applied unless the breaker shifts them
   */
  readonly redeploy?: RedeployOptions;
  /**
   * Execution role for the models.
   * @default - a role with exactly the grants the image, model data, data capture and breaker need
   */
  readonly role?: iam.IRole;
}

/** The part a variant plays. */
export enum VariantRole {
  /** Takes the traffic normally. */
  PRIMARY = 'PRIMARY',
  /** Takes traffic when the circuit breaker shifts it. */
  FALLBACK = 'FALLBACK',
  /** Receives a copy of traffic; its responses are discarded. */
  SHADOW = 'SHADOW',
}

/** A production variant as synthesized. */
export interface VariantInfo {
  /** Variant name. */
  readonly variantName: string;
  /** Instance type. */
  readonly instanceType: SageMakerInstanceType;
  /** Initial instance count. */
  readonly instanceCount: number;
  /** Initial weight. */
  readonly initialWeight: number;
  /** Primary or fallback. */
  readonly role: VariantRole;
  /** The model-server tuning written into its container. */
  readonly tuning: ModelServerTuning;
  /** What the variant runs (footprint and environment, e.g. for the simulator). */
  readonly model: ModelProps;
}
