import { Arn, ArnFormat, Duration, Names, Tags, Token, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { Construct } from 'constructs';
import { AutoScalingOptions, VariantAutoScaling } from './auto-scaling';
import { wholeBytes } from './model-server';
import { CircuitBreaker, CircuitBreakerOptions } from './breaker/circuit-breaker';
import { DEGRADE_PARAMETER_ENV } from './breaker/contract';
import { DataCapture } from './data-capture';
import { deploymentConfig, DeploymentOptions } from './deployment';
import { DriftMonitor, DriftOptions } from './drift/drift-monitor';
import { APPLICATION_NAMESPACE_ENV, DEFAULT_APPLICATION_NAMESPACE, EndpointMonitoring, MonitoringOptions } from './monitoring/endpoint-monitoring';
import { EndpointAttributes, EndpointBase, ImportedEndpoint } from './endpoint-base';
import { EndpointMetricFactory } from './monitoring/metrics';
import { addMetricsInsightsAlarmCheck, addResourceLimitCheck } from './resource-limit';
import { ResilientEndpointProps, VariantInfo } from './resilient-endpoint-props';
import { PropErrors } from './validation';
import {
  duplicateEndpointNames,
  publishingSettings,
  requireProps,
  storageSettings,
  validateEndpointName,
  validateGuardBudgetOrder,
  validateInstanceType,
  validateVariantName,
} from './private/prop-checks';
import { checkUnitProps, UNIT_PROPS } from './private/unit-props';
import { grantRollbackAlarms, grantSageMakerRuntime, grantStageMetrics } from './private/grants';
import { createModel, guardBudgetPercent, tuneVariant } from './private/models';
import { resolveVariants } from './private/variants';
import { guardResourceTypes } from './region-resource-types';

export { ENDPOINT_NAME_ENV, VARIANT_NAME_ENV } from './private/models';

const RESILIENT_ENDPOINT_SYMBOL = Symbol.for('sagemaker-resilient-endpoint.ResilientEndpoint');

/**
 * A SageMaker real-time endpoint with production defaults that keep it from running out of
 * memory: tuned model server, data capture at 1 %, and (in later parts) autoscaling on
 * per-instance QPS, three-tier alarms and a memory circuit breaker.
 */
export class ResilientEndpoint extends EndpointBase {
  /**
   * Whether `x` is a ResilientEndpoint: works across two copies of this library in one app, where
   * `instanceof` does not (as aws-cdk's `Stack.isStack`).
   */
  public static isResilientEndpoint(x: any): x is ResilientEndpoint {
    return x !== null && typeof x === 'object' && RESILIENT_ENDPOINT_SYMBOL in x;
  }

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
    const valid = Token.isUnresolved(endpointArn) || /^arn:[^:]+:sagemaker:[^:]*:[^:]*:endpoint\/[a-zA-Z0-9-]{1,63}$/i.test(endpointArn);
    const endpointName = valid ? Arn.split(endpointArn, ArnFormat.SLASH_RESOURCE_NAME).resourceName! : 'invalid';
    const imported = new ImportedEndpoint(scope, id, { endpointName, endpointArn });
    if (!valid) {
      const errors = new PropErrors();
      errors.add(
        'fromEndpointArn',
        endpointArn,
        'arn:<partition>:sagemaker:<region>:<account>:endpoint/<name>',
        'pass the endpoint ARN as DescribeEndpoint reports it, or use fromEndpointName',
      );
      imported.node.addValidation({ validate: () => errors.all });
    }
    return imported;
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
  /** The drift monitor (undefined unless `drift` is given). */
  public readonly drift?: DriftMonitor;
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
    guardResourceTypes(this);
    this.node.addValidation({ validate: () => this.errors.all });
    Object.defineProperty(this, RESILIENT_ENDPOINT_SYMBOL, { value: true });
    addResourceLimitCheck(this);
    addMetricsInsightsAlarmCheck(this);
    // Plain-JavaScript (and jsii) callers can omit required props: report them, keep synthesizing.
    // Duration and Size props that are not (plain JavaScript): an error each, and their defaults apply.
    const props = checkUnitProps(this.errors, requireProps(this.errors, propsIn), UNIT_PROPS.ResilientEndpointProps);
    validateGuardBudgetOrder(this.errors, props);

    this.endpointName = validateEndpointName(
      this.errors,
      props.endpointName ?? Names.uniqueResourceName(this, { maxLength: 63, separator: '-' }).toLowerCase(),
    );
    if (props.endpointName !== undefined && !Token.isUnresolved(this.endpointName)) {
      // (Generated names embed the construct path: only given names can collide.)
      this.node.addValidation({ validate: () => duplicateEndpointNames(this, ResilientEndpoint.isResilientEndpoint) });
    }
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
    this.cfnEndpoint.excludeRetainedVariantProperties = this.redeployExclusions(props);
    if (props.deployment?.enabled !== false) this.addDeploymentGuardrails(props.deployment ?? {}, allVariants.length);
    this.circuitBreaker = props.circuitBreaker?.enabled !== false ? this.createCircuitBreaker(props.circuitBreaker, props.monitoring) : undefined;
    this.drift = props.drift && props.drift.enabled !== false ? this.createDrift(props, models.get(this.primaryVariant)!) : undefined;
    // The cost-allocation tag on everything but the scalable targets (no cost of their own; and their `Tags`
    // are new in CloudFormation: see circuitBreaker.tagScalableTargets).
    Tags.of(this).add('resilient-endpoint', this.endpointName, { excludeResourceTypes: ['AWS::ApplicationAutoScaling::ScalableTarget'] });

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
    // A memory target on a guarded model tracks the guard's in-flight memory (load-proportional); the containers
    // then publish the guard's metrics (the application namespace, as the breaker reads it).
    const occupancy = staticOccupancyPercent(v);
    const guarded = options.memoryTargetPercent !== undefined && occupancy !== undefined && hasGuard(v);
    if (guarded) this.publishApplicationMetrics(this.monitoring?.applicationNamespace ?? DEFAULT_APPLICATION_NAMESPACE);
    const scaling = new VariantAutoScaling(this, `AutoScaling${idPart}`, {
      ...options,
      endpointName: this.endpointName,
      variantName,
      instanceType: v.instanceType,
      initialInstanceCount: v.instanceCount,
      guardInFlight: guarded
        ? { namespace: this.applicationNamespace!, staticPercent: occupancy.percent, budgetPercent: guardBudgetPercent(v.model) }
        : undefined,
    });
    scaling.node.addDependency(this.cfnEndpoint);
    this.autoScaling[variantName] = scaling;
    if (occupancy !== undefined && scaling.memoryTargetPercent !== undefined) {
      const target = scaling.memoryTargetPercent;
      const what =
        `autoScaling[${variantName}].memoryTargetPercent ${target}: the model's static occupancy is ${occupancy.percent.toFixed(1)} % of ${v.instanceType.name}'s ${occupancy.device} memory ` +
        `(${occupancy.how}), memory that does not fall as instances are added`;
      if (occupancy.percent >= target) {
        this.errors.add(
          `autoScaling[${variantName}].memoryTargetPercent`,
          target,
          `above the static occupancy (${occupancy.percent.toFixed(1)} %): a target it never falls below scales the variant out to its maximum at once`,
          `raise memoryTargetPercent above ${Math.ceil(occupancy.percent / 0.9)} (occupancy ÷ 0.9), use fewer workers (modelServer.workers) or a larger instance, or leave memory to the breaker`,
        );
      } else if (occupancy.percent >= 0.9 * target) {
        Validations.of(this).addWarning(
          'MemoryTargetNearStaticOccupancy',
          `${what}: within 10 % of the target, so any load scales out. Use a target of at least ${Math.ceil(occupancy.percent / 0.9)}.`,
        );
      }
    }
    if (scaling.memoryTargetPercent !== undefined && v.instanceType.isGpu && !guarded) {
      Validations.of(this).addWarning(
        'GpuMemoryTargetWithoutGuard',
        `autoScaling[${variantName}].memoryTargetPercent on ${v.instanceType.name} tracks GPUMemoryUtilization, which model copies and PyTorch's caching allocator (memory stays reserved at its peak until empty_cache) keep up however many instances there are: ` +
          "the policy only adds capacity (its scale-in is disabled) and may add it again after every scale-in. Give the model a memoryProfile (and its GPU footprint) so the target tracks the guard's in-flight memory, which falls as instances are added.",
      );
    }
    const served = profiledQps(v);
    if (served !== undefined && scaling.qpsPerInstance > QPS_TARGET_UTILISATION * served.qps) {
      Validations.of(this).addWarning(
        'QpsTargetAboveCapacity',
        `autoScaling[${variantName}].qpsPerInstance is ${scaling.qpsPerInstance}, but one ${v.instanceType.name} serves about ${Math.floor(served.qps)} requests/s of this model ` +
          `(${served.slots} busy vCPUs × 1000 / ${+served.meanLatencyMs.toFixed(1)} ms, the mean latency of model.memoryProfile's distribution): target tracking adds capacity only ` +
          `after the queue has grown. Use at most ${Math.floor(QPS_TARGET_UTILISATION * served.qps)} (${100 * QPS_TARGET_UTILISATION} % of it).`,
      );
    }
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
      metricsConfig: publishing.configured
        ? {
            metricPublishFrequencyInSeconds: publishing.frequencySeconds,
            enableEnhancedMetrics: publishing.enhancedMetrics,
            enableDetailedObservability: publishing.detailedObservability,
          }
        : undefined,
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
    if (options.applicationAlarms !== false) this.publishApplicationMetrics(monitoring.applicationNamespace);
    return monitoring;
  }

  /**
   * The containers learn the application namespace and may publish into it (once): the per-stage memory
   * of the application tier, and the guard's pressure, refusals and deliberate 4XX the breaker reads.
   */
  private publishApplicationMetrics(namespace: string): void {
    if (this.applicationNamespace !== undefined) return;
    this.applicationNamespace = namespace;
    this.addContainerEnvironment(APPLICATION_NAMESPACE_ENV, namespace);
    grantStageMetrics(this.role, namespace);
  }

  private applicationNamespace?: string;

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

  /**
   * The live variant properties a redeploy takes from the new config (`ExcludeRetainedVariantProperties`):
   * counts unless Application Auto Scaling owns them, weights unless the breaker shifts them.
   */
  private redeployExclusions(props: ResilientEndpointProps): sagemaker.CfnEndpoint.VariantPropertyProperty[] | undefined {
    const scaled = Object.keys(this.autoScaling).length > 0;
    const breakerShifts = props.circuitBreaker?.enabled !== false && this.fallbackVariant !== undefined;
    const counts = props.redeploy?.applyInstanceCounts ?? !scaled;
    const weights = props.redeploy?.applyWeights ?? !breakerShifts;
    if (counts && scaled) {
      Validations.of(this).addWarning(
        'RedeployCounts',
        'redeploy.applyInstanceCounts is on for an autoscaled endpoint: every deploy sets the instance counts back to instanceCount, also in the middle of a scale-out. Prefer changing autoScaling.capacity.',
      );
    }
    if (weights && breakerShifts) {
      Validations.of(this).addWarning(
        'RedeployWeights',
        "redeploy.applyWeights is on while the circuit breaker shifts weights to the fallback: a deploy during an incident sends all traffic back to the primary until the breaker's next evaluation.",
      );
    }
    const exclude = [...(counts ? ['DesiredInstanceCount'] : []), ...(weights ? ['DesiredWeight'] : [])];
    return exclude.length ? exclude.map(variantPropertyType => ({ variantPropertyType })) : undefined;
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
    // (plan.note, the all-at-once default of a 1-instance variant, is the documented default of
    // deployment.trafficShift: not an annotation that every synth of such an endpoint would print.)
    grantRollbackAlarms(this.role, alarms);
  }

  /** The drift monitor on the capture: versioned by the primary model (every change of it is a new model name). */
  private createDrift(props: ResilientEndpointProps, model: sagemaker.CfnModel): DriftMonitor | undefined {
    if (!this.dataCapture?.bucket) {
      this.errors.add('drift', 'on', 'data capture on', 'drift reads the captured requests: keep dataCapture on (1 % is the default)');
      return undefined;
    }
    const options: DriftOptions = props.drift ?? {};
    const drift = new DriftMonitor(this, 'Drift', {
      ...options,
      endpointName: this.endpointName,
      captureBucket: this.dataCapture.bucket,
      capturePrefix: props.dataCapture?.prefix ?? 'data-capture',
      captureKey: props.dataCapture?.encryptionKey,
      variantNames: this.variants.map(v => v.variantName),
      memoryProfile: props.model.memoryProfile,
      modelVersion: model.attrModelName,
      alarmTopic: this.monitoring?.topic,
    });
    drift.function.node.addDependency(this.cfnEndpoint);
    drift.modelMonitor?.node.addDependency(this.cfnEndpoint);
    this.monitoring?.addDashboardRow(...drift.dashboardWidgets());
    return drift;
  }

  /** The memory circuit breaker; the containers learn where their degrade level is and may read it. */
  private createCircuitBreaker(options: CircuitBreakerOptions = {}, monitoring: MonitoringOptions = {}): CircuitBreaker {
    // The guard's metrics reach the breaker whenever it is on, with or without the application alarms.
    const namespace = this.monitoring?.applicationNamespace ?? monitoring.applicationNamespace ?? DEFAULT_APPLICATION_NAMESPACE;
    this.publishApplicationMetrics(namespace);
    const breaker = new CircuitBreaker(this, 'CircuitBreaker', {
      applicationNamespace: namespace,
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

/** The share of what an instance serves that the QPS target should ask of it (headroom for the scale-out's minutes). */
export const QPS_TARGET_UTILISATION = 0.7;

/**
 * Requests a second one instance of a CPU variant serves by its measured profile: its busy vCPUs (workers up to
 * the vCPUs, as the capacity planner counts them) over the profile's mean latency. Undefined on GPU types (a
 * profile measured on the CPU says nothing of GPU latency) or without a usable profile.
 */
export function profiledQps(v: VariantInfo): { qps: number; slots: number; meanLatencyMs: number } | undefined {
  const profile = v.model.memoryProfile;
  if (!profile || profile.problem || v.instanceType.isGpu || v.instanceType.specUnknown || profile.device !== 'cpu') return undefined;
  const meanLatencyMs = profile.meanLatencyMs();
  if (meanLatencyMs === undefined || !(meanLatencyMs > 0)) return undefined;
  const slots = Math.max(1, Math.min(v.tuning.workers, v.instanceType.spec.vCpus));
  return { qps: (slots * 1000) / meanLatencyMs, slots, meanLatencyMs };
}

/** CUDA context and allocator slack a worker process holds on its GPU besides its model (inferred: PyTorch's context is 0.3–0.5 GiB). */
export const GPU_PROCESS_ALLOWANCE_BYTES = 0.5 * 1024 ** 3;

/**
 * The memory a variant's tuning fills before any request, as a percent of its instance's memory (host), or of its
 * GPUs' (GPU types): on GPUs the model copies at their stated GPU footprint (what the caching allocator keeps after
 * a peak) plus {@link GPU_PROCESS_ALLOWANCE_BYTES} a process; on CPUs the workers × the profile's warm baseline, else
 * × the stated host footprint. Undefined where nothing is stated or the hardware is unknown.
 */
export function staticOccupancyPercent(v: VariantInfo): { percent: number; device: 'GPU' | 'host'; how: string } | undefined {
  const t = v.instanceType;
  if (t.specUnknown) return undefined;
  const workers = v.tuning.workers;
  const GIB = 1024 ** 3;
  const fp = v.model.memoryFootprint;
  if (t.isGpu) {
    if (!fp?.gpu || !(t.spec.gpuMemoryGiB > 0)) return undefined;
    const copy = wholeBytes(fp.gpu);
    const bytes = workers * (copy + GPU_PROCESS_ALLOWANCE_BYTES);
    return {
      percent: (100 * bytes) / (t.spec.gpuCount * t.spec.gpuMemoryGiB * GIB),
      device: 'GPU',
      how: `${workers} copies × (${(copy / GIB).toFixed(2)} GiB + 0.5 GiB of CUDA context) of ${t.spec.gpuCount} × ${t.spec.gpuMemoryGiB} GiB`,
    };
  }
  const profile = v.model.memoryProfile;
  const each = profile && !profile.problem && profile.device === 'cpu' ? profile.baselineBytes : fp?.host && wholeBytes(fp.host);
  if (!each) return undefined;
  return {
    percent: (100 * workers * each) / (t.spec.memoryGiB * GIB),
    device: 'host',
    how: `${workers} workers × ${(each / GIB).toFixed(2)} GiB (${profile && !profile.problem && profile.device === 'cpu' ? "the profile's warm baseline" : 'the stated footprint'}) of ${t.spec.memoryGiB} GiB`,
  };
}

/** Whether the variant's container runs the memory guard with a curve (a usable profile: the construct writes its curve). */
function hasGuard(v: VariantInfo): boolean {
  const p = v.model.memoryProfile;
  return p !== undefined && !p.problem;
}
