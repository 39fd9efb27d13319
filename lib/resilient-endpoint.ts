import { Annotations, Arn, ArnFormat, Duration, Names, Size, Tags, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { Construct } from 'constructs';
import { AutoScalingOptions, VariantAutoScaling } from './auto-scaling';
import { CircuitBreaker, CircuitBreakerOptions, DEGRADE_PARAMETER_ENV } from './circuit-breaker';
import { DataCapture, DataCaptureOptions } from './data-capture';
import { deploymentConfig, DeploymentOptions } from './deployment';
import { SageMakerInstanceType } from './instance-types';
import { ContainerImage, ModelData } from './model-artifacts';
import { MemoryFootprint, ModelServerOptions, ModelServerTuning } from './model-server';
import { APPLICATION_NAMESPACE_ENV, EndpointMonitoring, MonitoringOptions } from './monitoring/endpoint-monitoring';
import { EndpointAttributes, EndpointBase, ImportedEndpoint } from './endpoint-base';
import { EndpointMetricFactory } from './monitoring/metrics';
import { addResourceLimitCheck, ENDPOINT_MARK } from './resource-limit';
import { PropErrors } from './validation';
import {
  publishingSettings,
  requireProps,
  storageSettings,
  validateEndpointName,
  validateInstanceType,
  validateVariantName,
} from './private/prop-checks';
import { grantRollbackAlarms, grantSageMakerRuntime, grantStageMetrics } from './private/grants';
import { createModel, tuneVariant } from './private/models';
import { resolveVariants } from './private/variants';

export { ENDPOINT_NAME_ENV, VARIANT_NAME_ENV } from './private/models';

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
   * KMS key for the instances' EBS storage volume. Not allowed on instance types with local
   * NVMe storage (g4dn, g5, `*d` families): SageMaker rejects it there.
   * @default - AWS-managed encryption of the volume
   */
  readonly volumeKmsKey?: kms.IKey;
  /**
   * Size of the instances' EBS storage volume (1–512 GiB). Not allowed on types with local NVMe.
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
   * @default - canary 5 % of capacity, 5-minute bake, then all at once
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
   * 10 minutes, recover below 70 % once the load has fallen
   */
  readonly circuitBreaker?: CircuitBreakerOptions;
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

/**
 * A SageMaker real-time endpoint with production defaults that keep it from running out of
 * memory: tuned model server, data capture at 1 %, and (in later parts) autoscaling on
 * per-instance QPS, three-tier alarms and a memory circuit breaker.
 */
export class ResilientEndpoint extends EndpointBase {
  /** Imports an endpoint by name (its metric helpers describe the variant `AllTraffic`). */
  public static fromEndpointName(scope: Construct, id: string, endpointName: string): EndpointBase {
    return new ImportedEndpoint(scope, id, { endpointName });
  }

  /**
   * Imports an endpoint by ARN (literal or token); its name is the ARN's resource name. Grants use the
   * ARN as given; the metric helpers read the endpoint's metrics in this stack's account and region.
   */
  public static fromEndpointArn(scope: Construct, id: string, endpointArn: string): EndpointBase {
    // A literal must be an endpoint ARN (SageMaker's ARN format for endpoints); a token is checked by CloudFormation.
    if (!Token.isUnresolved(endpointArn) && !/^arn:[^:]+:sagemaker:[^:]*:[^:]*:endpoint\/[a-zA-Z0-9-]{1,63}$/i.test(endpointArn)) {
      throw new Error(
        `${scope.node.path}/${id}: fromEndpointArn got '${endpointArn}'; allowed: arn:<partition>:sagemaker:<region>:<account>:endpoint/<name>. ` +
          'Fix: pass the endpoint ARN as DescribeEndpoint reports it, or use fromEndpointName.',
      );
    }
    const endpointName = Arn.split(endpointArn, ArnFormat.SLASH_RESOURCE_NAME).resourceName!;
    return new ImportedEndpoint(scope, id, { endpointName, endpointArn });
  }

  /** Imports an endpoint from its attributes. */
  public static fromEndpointAttributes(scope: Construct, id: string, attrs: EndpointAttributes): EndpointBase {
    return new ImportedEndpoint(scope, id, attrs);
  }

  public readonly endpointName: string;
  public readonly endpointArn: string;
  /** The models' execution role. */
  public readonly role: iam.IRole;
  /** The production variants (primary first). */
  public readonly variants: VariantInfo[];
  /** The primary variant. */
  public readonly primaryVariant: VariantInfo;
  /** The fallback variant, if any. */
  public readonly fallbackVariant?: VariantInfo;
  /** Data capture (bucket and config); undefined when disabled. */
  public readonly dataCapture?: DataCapture;
  /** The monitoring (undefined when disabled). */
  public readonly monitoring?: EndpointMonitoring;
  /** Autoscaling per variant name. */
  public readonly autoScaling: { [variantName: string]: VariantAutoScaling } = {};
  /** The shadow variant, if any. */
  public readonly shadowVariant?: VariantInfo;
  /** The circuit breaker (undefined when disabled). */
  public readonly circuitBreaker?: CircuitBreaker;
  /** The L1 endpoint config. */
  public readonly cfnEndpointConfig: sagemaker.CfnEndpointConfig;
  /** How often the endpoint publishes utilization metrics. */
  public readonly metricPublishFrequency: Duration;
  /** Whether per-instance / per-GPU (enhanced) metrics are published. */
  public readonly enhancedMetrics: boolean;
  /** The L1 endpoint. */
  public readonly cfnEndpoint: sagemaker.CfnEndpoint;

  private readonly errors = new PropErrors();

  constructor(scope: Construct, id: string, propsIn: ResilientEndpointProps) {
    super(scope, id);
    this.node.addValidation({ validate: () => this.errors.all });
    (this as unknown as Record<symbol, boolean>)[ENDPOINT_MARK] = true;
    addResourceLimitCheck(this);
    // Plain-JavaScript (and jsii) callers can omit required props: report them, keep synthesizing.
    const props = requireProps(this.errors, propsIn);

    this.endpointName = validateEndpointName(
      this.errors,
      props.endpointName ?? Names.uniqueResourceName(this, { maxLength: 63, separator: '-' }).toLowerCase(),
    );
    this.role =
      props.role ??
      new iam.Role(this, 'ExecutionRole', {
        assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com'),
        description: `Execution role of the models behind SageMaker endpoint ${this.endpointName}`,
      });
    grantSageMakerRuntime(this, this.role, this.endpointName);

    const resolved = resolveVariants(props, this.errors, {
      validateVariantName: (prop, name) => validateVariantName(this.errors, prop, name),
      validateInstanceType: (prop, t) => validateInstanceType(this, this.errors, prop, t),
      tune: (prefix, type, model, options) => tuneVariant(this, this.errors, prefix, type, model, options),
    });
    this.primaryVariant = resolved.primary;
    this.fallbackVariant = resolved.fallback;
    this.shadowVariant = resolved.shadow;
    this.variants = [this.primaryVariant, ...(this.fallbackVariant ? [this.fallbackVariant] : [])];
    const allVariants = [...this.variants, ...(this.shadowVariant ? [this.shadowVariant] : [])];

    const models = this.createModels(props);
    const capture = new DataCapture(this, 'DataCapture', { ...props.dataCapture, role: this.role });
    this.dataCapture = capture.config ? capture : undefined;
    const publishing = publishingSettings(this.errors, props.metricPublishing);
    this.metricPublishFrequency = Duration.seconds(publishing.frequencySeconds);
    this.enhancedMetrics = publishing.enhancedMetrics;
    this.cfnEndpointConfig = this.createEndpointConfig(props, allVariants, models, capture, publishing);
    this.cfnEndpoint = new sagemaker.CfnEndpoint(this, 'Endpoint', {
      endpointName: this.endpointName,
      endpointConfigName: this.cfnEndpointConfig.attrEndpointConfigName,
      // A redeploy must not reset the breaker's weights or the scaler's instance counts.
      retainAllVariantProperties: true,
    });
    // The ARN as SageMaker reports it (Ref of AWS::SageMaker::Endpoint), right for literal and token names alike.
    this.endpointArn = this.cfnEndpoint.ref;

    this.monitoring = props.monitoring?.enabled !== false ? this.createMonitoring(props.monitoring) : undefined;
    this.autoScaleVariants(props);
    if (props.deployment?.enabled !== false) this.addDeploymentGuardrails(props.deployment ?? {}, allVariants.length);
    this.circuitBreaker = props.circuitBreaker?.enabled !== false ? this.createCircuitBreaker(props.circuitBreaker) : undefined;
    Tags.of(this).add('resilient-endpoint', this.endpointName);

    // The role's policy must exist before SageMaker assumes it to pull the image and model.
    const policy = this.role.node.tryFindChild('DefaultPolicy');
    if (policy) {
      for (const m of models.values()) m.node.addDependency(policy);
    }
  }

  /**
   * Autoscales a production variant on per-instance QPS. Each variant can be scaled once.
   * @returns the scaling construct (its scalable target and policies)
   */
  public autoScaleVariant(variantName: string, options: AutoScalingOptions = {}): VariantAutoScaling | undefined {
    const v = this.variants.find(x => x.variantName === variantName);
    if (!v) {
      this.errors.add(
        'autoScaleVariant',
        variantName,
        `a production variant of this endpoint (${this.variants.map(x => x.variantName).join(', ')})`,
        'pass an existing variant name',
      );
      return undefined;
    }
    if (this.autoScaling[variantName]) {
      this.errors.add(
        'autoScaleVariant',
        variantName,
        'each variant autoscaled once',
        `variant '${variantName}' already has autoscaling: change its options instead of adding a second one`,
      );
      return this.autoScaling[variantName];
    }
    const idPart = Token.isUnresolved(variantName) ? `Variant${this.variants.indexOf(v)}` : variantName.replace(/[^A-Za-z0-9]/g, '');
    const scaling = new VariantAutoScaling(this, `AutoScaling${idPart}`, {
      ...options,
      endpointName: this.endpointName,
      variantName,
      instanceType: v.instanceType,
      initialInstanceCount: v.instanceCount,
    });
    scaling.node.addDependency(this.cfnEndpoint);
    this.autoScaling[variantName] = scaling;
    return scaling;
  }

  /** The variant the `metricXxx()` helpers describe: the primary. */
  public get metricsVariantName(): string {
    return this.primaryVariant.variantName;
  }

  /** The metric factory of a variant (default: the primary); a name that is not a variant here throws. */
  public metrics(variantName?: string): EndpointMetricFactory {
    const name = variantName ?? this.primaryVariant.variantName;
    if (!this.variants.some(v => v.variantName === name)) {
      throw new Error(`${this.node.path}: no production variant named '${name}' (variants: ${this.variants.map(v => v.variantName).join(', ')})`);
    }
    return super.metrics(name);
  }

  /** Adds environment to every model container (e.g. the breaker's parameter name). */
  protected addContainerEnvironment(key: string, value: string): void {
    this.extraEnvironment[key] = value;
  }

  private readonly extraEnvironment: { [key: string]: string } = {};

  /** One model per variant (primary, fallback, shadow), under this endpoint. */
  private createModels(props: ResilientEndpointProps): Map<VariantInfo, sagemaker.CfnModel> {
    const ctx = { scope: this, role: this.role, errors: this.errors, endpointName: this.endpointName, extraEnvironment: this.extraEnvironment };
    const models = new Map<VariantInfo, sagemaker.CfnModel>();
    models.set(this.primaryVariant, createModel(ctx, 'Model', props.model, this.primaryVariant));
    if (this.fallbackVariant) {
      models.set(this.fallbackVariant, createModel(ctx, 'FallbackModel', props.fallback?.model ?? props.model, this.fallbackVariant));
    }
    if (this.shadowVariant && props.shadow) {
      models.set(this.shadowVariant, createModel(ctx, 'ShadowModel', props.shadow.model, this.shadowVariant));
    }
    return models;
  }

  /** The endpoint config: variants (storage by instance family), metric publishing, data capture, volume key. */
  private createEndpointConfig(
    props: ResilientEndpointProps,
    allVariants: VariantInfo[],
    models: Map<VariantInfo, sagemaker.CfnModel>,
    capture: DataCapture,
    publishing: ReturnType<typeof publishingSettings>,
  ): sagemaker.CfnEndpointConfig {
    // Local NVMe types reject a volume size; a KMS key does not reach their NVMe.
    const { volumeGiB, ebsOnly } = storageSettings(this, this.errors, props, allVariants);
    const variantSpec = (v: VariantInfo) => ({
      variantName: v.variantName,
      modelName: models.get(v)!.attrModelName,
      instanceType: v.instanceType.name,
      initialInstanceCount: v.instanceCount,
      initialVariantWeight: v.initialWeight,
      modelDataDownloadTimeoutInSeconds: v.tuning.modelDataDownloadTimeoutSeconds,
      containerStartupHealthCheckTimeoutInSeconds: v.tuning.containerStartupHealthCheckTimeoutSeconds,
      volumeSizeInGb: !v.instanceType.hasLocalNvme && volumeGiB ? Math.round(volumeGiB) : undefined,
    });
    const config = new sagemaker.CfnEndpointConfig(this, 'EndpointConfig', {
      metricsConfig: {
        metricPublishFrequencyInSeconds: publishing.frequencySeconds,
        enableEnhancedMetrics: publishing.enhancedMetrics,
        enableDetailedObservability: publishing.detailedObservability,
      },
      productionVariants: this.variants.map(variantSpec),
      shadowProductionVariants: this.shadowVariant ? [variantSpec(this.shadowVariant)] : undefined,
      kmsKeyId: props.volumeKmsKey?.keyArn,
      dataCaptureConfig: capture.config,
    });
    if (props.volumeKmsKey && ebsOnly) props.volumeKmsKey.grantEncryptDecrypt(this.role);
    // (No DependsOn on the models: the config references each model's name, which already orders them.)
    return config;
  }

  /** The three alarm tiers; the containers learn the stage-metric namespace and may publish into it. */
  private createMonitoring(options: MonitoringOptions = {}): EndpointMonitoring {
    const monitoring = new EndpointMonitoring(this, 'Monitoring', {
      ...options,
      endpointName: this.endpointName,
      variants: this.variants.map(v => ({ variantName: v.variantName, instanceType: v.instanceType })),
      perGpuMetrics: this.enhancedMetrics,
    });
    if (options.applicationAlarms !== false) {
      this.addContainerEnvironment(APPLICATION_NAMESPACE_ENV, monitoring.applicationNamespace);
      grantStageMetrics(this.role, monitoring.applicationNamespace);
    }
    return monitoring;
  }

  /** Application Auto Scaling owns instance counts (the breaker only moves weights and holds capacity). */
  private autoScaleVariants(props: ResilientEndpointProps): void {
    if (props.autoScaling?.enabled !== false) this.autoScaleVariant(this.primaryVariant.variantName, props.autoScaling);
    if (this.fallbackVariant && props.fallback?.autoScaling?.enabled !== false) {
      const primaryMax = this.autoScaling[this.primaryVariant.variantName]?.capacity.max ?? this.primaryVariant.instanceCount;
      this.autoScaleVariant(this.fallbackVariant.variantName, {
        capacity: { min: this.fallbackVariant.instanceCount, max: Math.max(this.fallbackVariant.instanceCount, primaryMax) },
        ...props.fallback?.autoScaling,
      });
    }
  }

  /** Blue/green or rolling updates that roll back on the memory and business alarms. */
  private addDeploymentGuardrails(options: DeploymentOptions, variantCount: number): void {
    const alarms = options.autoRollbackAlarms ?? this.monitoring?.rollbackAlarms() ?? [];
    const plan = deploymentConfig(
      options,
      {
        alarms,
        variantCount,
        minVariantInstances: Math.min(...this.variants.map(v => this.autoScaling[v.variantName]?.capacity.min ?? v.instanceCount)),
      },
      this.errors,
    );
    this.cfnEndpoint.deploymentConfig = plan.config;
    if (plan.note) Annotations.of(this).addInfo(plan.note);
    grantRollbackAlarms(this.role, alarms);
  }

  /** The memory circuit breaker; the containers learn where their degrade level is and may read it. */
  private createCircuitBreaker(options: CircuitBreakerOptions = {}): CircuitBreaker {
    const breaker = new CircuitBreaker(this, 'CircuitBreaker', {
      ...options,
      endpointName: this.endpointName,
      endpointArn: this.endpointArn,
      primaryVariantName: this.primaryVariant.variantName,
      primaryInstanceType: this.primaryVariant.instanceType,
      fallbackVariantName: this.fallbackVariant?.variantName,
      primaryAutoScaling: this.autoScaling[this.primaryVariant.variantName],
      fallbackAutoScaling: this.fallbackVariant ? this.autoScaling[this.fallbackVariant.variantName] : undefined,
      metricPublishFrequency: this.metricPublishFrequency,
      perGpuMetrics: this.enhancedMetrics,
    });
    // Only the function waits for the endpoint (the parameter is read by the models, which come first).
    breaker.function.node.addDependency(this.cfnEndpoint);
    this.addContainerEnvironment(DEGRADE_PARAMETER_ENV, breaker.parameter.parameterName);
    breaker.grantReadLevel(this.role);
    this.monitoring?.addDashboardRow(...breaker.dashboardWidgets());
    return breaker;
  }
}
