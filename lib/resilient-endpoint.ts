import { Annotations, ArnFormat, Duration, Lazy, Names, Size, Stack, Tags, Token, Validations } from 'aws-cdk-lib';
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
import { MemoryFootprint, ModelServer, ModelServerOptions, ModelServerTuning, tuneModelServer } from './model-server';
import { APPLICATION_NAMESPACE_ENV, EndpointMonitoring, MonitoringOptions } from './monitoring/endpoint-monitoring';
import { EndpointAttributes, EndpointBase, ImportedEndpoint } from './endpoint-base';
import { EndpointMetricFactory } from './monitoring/metrics';
import { addResourceLimitCheck, ENDPOINT_MARK } from './resource-limit';
import { acknowledgeWildcard } from './nag';
import { PropErrors } from './validation';
import {
  publishingSettings,
  requireProps,
  storageSettings,
  validateEndpointName,
  validateInstanceType,
  validateVariantName,
} from './private/prop-checks';
import { resolveVariants } from './private/variants';

/** Environment variable with the endpoint's name, in every model container. */
export const ENDPOINT_NAME_ENV = 'RESILIENT_ENDPOINT_NAME';
/** Environment variable with the production variant's name, in every model container. */
export const VARIANT_NAME_ENV = 'RESILIENT_ENDPOINT_VARIANT';

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
    this.grantBaseRuntime();

    // --- variants ---
    const resolved = resolveVariants(props, this.errors, {
      validateVariantName: (prop, name) => validateVariantName(this.errors, prop, name),
      validateInstanceType: (prop, t) => validateInstanceType(this, this.errors, prop, t),
      tune: (prefix, type, model, options) => this.tune(prefix, type, model, options),
    });
    this.primaryVariant = resolved.primary;
    this.fallbackVariant = resolved.fallback;
    this.shadowVariant = resolved.shadow;
    this.variants = [this.primaryVariant, ...(this.fallbackVariant ? [this.fallbackVariant] : [])];

    // --- storage rules (local NVMe types reject a volume size; a KMS key does not reach their NVMe) ---
    const allVariants = [...this.variants, ...(this.shadowVariant ? [this.shadowVariant] : [])];
    const { volumeGiB, ebsOnly } = storageSettings(this, this.errors, props, allVariants);

    // --- models ---
    const models = new Map<VariantInfo, sagemaker.CfnModel>();
    models.set(this.primaryVariant, this.createModel('Model', props.model, this.primaryVariant));
    if (this.fallbackVariant) {
      models.set(this.fallbackVariant, this.createModel('FallbackModel', props.fallback?.model ?? props.model, this.fallbackVariant));
    }
    if (this.shadowVariant && props.shadow) {
      models.set(this.shadowVariant, this.createModel('ShadowModel', props.shadow.model, this.shadowVariant));
    }
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

    // --- data capture ---
    const capture = new DataCapture(this, 'DataCapture', { ...props.dataCapture, role: this.role });
    this.dataCapture = capture.config ? capture : undefined;

    // --- metric publishing (MetricsConfig): 10-s data, per-GPU dimensions ---
    const publishing = publishingSettings(this.errors, props.metricPublishing);
    this.metricPublishFrequency = Duration.seconds(publishing.frequencySeconds);
    this.enhancedMetrics = publishing.enhancedMetrics;

    // --- endpoint config and endpoint ---
    this.cfnEndpointConfig = new sagemaker.CfnEndpointConfig(this, 'EndpointConfig', {
      metricsConfig: {
        metricPublishFrequencyInSeconds: publishing.frequencySeconds,
        enableEnhancedMetrics: this.enhancedMetrics,
        enableDetailedObservability: publishing.detailedObservability,
      },
      productionVariants: this.variants.map(variantSpec),
      shadowProductionVariants: this.shadowVariant ? [variantSpec(this.shadowVariant)] : undefined,
      kmsKeyId: props.volumeKmsKey?.keyArn,
      dataCaptureConfig: capture.config,
    });
    if (props.volumeKmsKey && ebsOnly) props.volumeKmsKey.grantEncryptDecrypt(this.role);
    // (No DependsOn on the models: the config references each model's name, which already orders them.)

    this.cfnEndpoint = new sagemaker.CfnEndpoint(this, 'Endpoint', {
      endpointName: this.endpointName,
      endpointConfigName: this.cfnEndpointConfig.attrEndpointConfigName,
      // A redeploy must not reset the breaker's weights or the scaler's instance counts.
      retainAllVariantProperties: true,
    });
    // The ARN as SageMaker reports it (Ref of AWS::SageMaker::Endpoint), right for literal and token names alike.
    this.endpointArn = this.cfnEndpoint.ref;
    // --- monitoring ---
    if (props.monitoring?.enabled !== false) {
      this.monitoring = new EndpointMonitoring(this, 'Monitoring', {
        ...props.monitoring,
        endpointName: this.endpointName,
        variants: this.variants.map(v => ({ variantName: v.variantName, instanceType: v.instanceType })),
        perGpuMetrics: this.enhancedMetrics,
      });
      if (props.monitoring?.applicationAlarms !== false) {
        const ns = this.monitoring.applicationNamespace;
        this.addContainerEnvironment(APPLICATION_NAMESPACE_ENV, ns);
        this.role.addToPrincipalPolicy(
          new iam.PolicyStatement({
            actions: ['cloudwatch:PutMetricData'],
            resources: ['*'], // no resource-level permissions; scoped by namespace
            conditions: { StringEquals: { 'cloudwatch:namespace': ns } },
          }),
        );
      }
    }
    // --- autoscaling (Application Auto Scaling owns instance counts; the breaker only moves weights) ---
    if (props.autoScaling?.enabled !== false) this.autoScaleVariant(this.primaryVariant.variantName, props.autoScaling);
    if (this.fallbackVariant && props.fallback?.autoScaling?.enabled !== false) {
      const primaryMax = this.autoScaling[this.primaryVariant.variantName]?.capacity.max ?? this.primaryVariant.instanceCount;
      this.autoScaleVariant(this.fallbackVariant.variantName, {
        capacity: { min: this.fallbackVariant.instanceCount, max: Math.max(this.fallbackVariant.instanceCount, primaryMax) },
        ...props.fallback?.autoScaling,
      });
    }

    // --- deployment guardrails ---
    if (props.deployment?.enabled !== false) {
      const alarms = props.deployment?.autoRollbackAlarms ?? this.monitoring?.rollbackAlarms() ?? [];
      const plan = deploymentConfig(
        props.deployment ?? {},
        {
          alarms,
          variantCount: allVariants.length,
          minVariantInstances: Math.min(...this.variants.map(v => this.autoScaling[v.variantName]?.capacity.min ?? v.instanceCount)),
        },
        this.errors,
      );
      this.cfnEndpoint.deploymentConfig = plan.config;
      if (plan.note) Annotations.of(this).addInfo(plan.note);
      if (alarms.length) {
        // SageMaker reads the rollback alarms with the execution role (developer guide, deployment-guardrails-configuration).
        this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['cloudwatch:DescribeAlarms'], resources: alarms.map(a => a.alarmArn) }));
      }
    }

    // --- circuit breaker ---
    if (props.circuitBreaker?.enabled !== false) {
      this.circuitBreaker = new CircuitBreaker(this, 'CircuitBreaker', {
        ...props.circuitBreaker,
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
      this.circuitBreaker.function.node.addDependency(this.cfnEndpoint);
      this.addContainerEnvironment(DEGRADE_PARAMETER_ENV, this.circuitBreaker.parameter.parameterName);
      this.circuitBreaker.grantReadLevel(this.role);
      this.monitoring?.addDashboardRow(...this.circuitBreaker.dashboardWidgets());
    }
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

  private tune(prefix: string, type: SageMakerInstanceType, model: ModelProps, options?: ModelServerOptions): ModelServerTuning {
    const errs = new PropErrors();
    // The serving stack: as given, else as the image says (AWS framework images), else the toolkit with a warning.
    const detected = model.image?.modelServer;
    const server = options?.server ?? detected ?? ModelServer.SAGEMAKER_INFERENCE_TOOLKIT;
    if (!options?.server && detected === undefined) {
      Validations.of(this).addWarning(
        `${prefix}ModelServerUnknown`,
        `${prefix ? `[${prefix.slice(0, -1)}] ` : ''}The image is not an AWS framework image this library recognises, so the SageMaker inference toolkit (MMS) variables are written. ` +
          'If the container runs another server, say so: modelServer: { server: ModelServer.TORCHSERVE | SCIKIT_LEARN | XGBOOST | NONE } (NONE writes nothing; pass your own environment).',
      );
    }
    const tuning = tuneModelServer(type, model.memoryFootprint, { ...options, server }, errs);
    this.errors.merge(prefix, errs);
    for (const w of tuning.warnings) {
      Validations.of(this).addWarning(`${prefix}ModelServer`, `${prefix ? `[${prefix.slice(0, -1)}] ` : ''}${w}`);
    }
    if (type.specUnknown) {
      Validations.of(this).addWarning(
        `${prefix}UnknownInstanceSpec`,
        `${type.name} is not in the instance catalog and no InstanceSpec was given: worker tuning, GPU normalisation and NVMe checks are off. Use SageMakerInstanceType.of('${type.name}', { vCpus, memoryGiB, ... }).`,
      );
    }
    return tuning;
  }

  /**
   * The model's subnets: the selection given, else the VPC's private subnets with egress, else its
   * isolated ones (a VPC reaching S3 and ECR through VPC endpoints). Never public subnets by default:
   * SageMaker gives the container no public IP there. A selection the VPC cannot satisfy is a
   * synth-time error naming the prop, not aws-cdk-lib's stack trace.
   */
  private modelSubnets(vpc: ec2.IVpc, selection: ec2.SubnetSelection | undefined): string[] {
    const fallback =
      vpc.privateSubnets.length > 0
        ? ec2.SubnetType.PRIVATE_WITH_EGRESS
        : vpc.isolatedSubnets.length > 0
          ? ec2.SubnetType.PRIVATE_ISOLATED
          : undefined;
    if (!selection && !fallback) {
      this.errors.addMessage(
        'model.vpc: got a VPC with no private or isolated subnets; allowed: a VPC with private (with egress) ' +
          'or isolated subnets. Fix: add private subnets to the VPC, or pass model.vpcSubnets to choose subnets explicitly.',
      );
      return [];
    }
    try {
      return vpc.selectSubnets(selection ?? { subnetType: fallback }).subnetIds;
    } catch (e) {
      const why = (e as Error).message.split('\n')[0].replace(/^«\w+» /, '');
      this.errors.addMessage(
        `model.vpcSubnets: got a selection the VPC cannot satisfy (${why}); allowed: subnets the VPC has. ` +
          "Fix: select one of the VPC's subnet types or groups, or leave vpcSubnets unset.",
      );
      return [];
    }
  }

  private createModel(id: string, model: ModelProps, variant: VariantInfo): sagemaker.CfnModel {
    let image: { imageUri: string };
    try {
      image = model.image.bind(this, this.role);
    } catch (e) {
      this.errors.addMessage(`model.image: ${(e as Error).message}`);
      image = { imageUri: 'invalid-image' };
    }
    const data = model.modelData?.bind(this, this.role);
    for (const e of model.modelData?.validate() ?? []) this.errors.addMessage(e);
    let vpcConfig: sagemaker.CfnModel.VpcConfigProperty | undefined;
    if (model.vpc) {
      const sgs = model.securityGroups ?? [this.defaultSecurityGroup(model.vpc)];
      vpcConfig = { securityGroupIds: sgs.map(s => s.securityGroupId), subnets: this.modelSubnets(model.vpc, model.vpcSubnets) };
    }
    const cfn = new sagemaker.CfnModel(this, id, {
      executionRoleArn: this.role.roleArn,
      enableNetworkIsolation: model.networkIsolation ?? false,
      vpcConfig,
      primaryContainer: {
        image: image.imageUri,
        modelDataUrl: data?.uri,
        // Lazy: parts added after construction (breaker parameter, stage-metric namespace) reach every container.
        environment: Lazy.any({
          produce: () => ({
            ...variant.tuning.environment,
            ...this.extraEnvironment,
            // SageMaker gives the container no variable with its endpoint's name, and one model can serve
            // several endpoints: the stage metrics' EndpointName/VariantName dimensions come from here.
            [ENDPOINT_NAME_ENV]: this.endpointName,
            [VARIANT_NAME_ENV]: variant.variantName,
            // The stated footprint travels with the model so synth-time checks can verify workers × footprint.
            ...(model.memoryFootprint?.host ? { RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES: String(model.memoryFootprint.host.toBytes()) } : {}),
            ...(model.memoryFootprint?.gpu ? { RESILIENT_ENDPOINT_GPU_FOOTPRINT_BYTES: String(model.memoryFootprint.gpu.toBytes()) } : {}),
            ...(model.environment ?? {}),
          }),
        }),
      },
    });
    return cfn;
  }

  private sg?: ec2.ISecurityGroup;
  private defaultSecurityGroup(vpc: ec2.IVpc): ec2.ISecurityGroup {
    this.sg ??= new ec2.SecurityGroup(this, 'ModelSecurityGroup', {
      vpc,
      description: 'SageMaker model containers (no inbound rules)',
      allowAllOutbound: true,
    });
    return this.sg;
  }

  private grantBaseRuntime(): void {
    // SageMaker writes container logs and metrics with the execution role.
    const stack = Stack.of(this);
    const logGroups = stack.formatArn({
      service: 'logs',
      resource: 'log-group',
      resourceName: `/aws/sagemaker/Endpoints/${this.endpointName}:*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
        resources: [logGroups, logGroups.replace(/:\*$/, '')],
      }),
    );
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['cloudwatch:PutMetricData'],
        resources: ['*'], // PutMetricData has no resource-level permissions; the namespace condition scopes it
        conditions: { StringLike: { 'cloudwatch:namespace': ['/aws/sagemaker/*'] } },
      }),
    );
    acknowledgeWildcard(
      this.role,
      'Resource',
      '*',
      'cloudwatch:PutMetricData (and ecr:GetAuthorizationToken) have no resource-level permissions, so AWS requires "*"; PutMetricData is limited by a cloudwatch:namespace condition.',
    );
    acknowledgeWildcard(
      this.role,
      'Resource',
      logGroups,
      'SageMaker names the endpoint log group /aws/sagemaker/Endpoints/<endpoint-name> and its streams per variant and instance; the statement allows log writes under that prefix only.',
    );
  }
}
