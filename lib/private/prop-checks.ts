/**
 * Prop checks of ResilientEndpoint that need no construct of their own: each adds its problems to
 * the endpoint's error collector (reported all at once at synthesis) and returns a usable stand-in,
 * so synthesis goes on. Warnings go on the endpoint as acknowledgeable annotations.
 */
import { Duration, Size, SizeRoundingBehavior, Stack, Token, Validations } from 'aws-cdk-lib';
import { Construct, IConstruct } from 'constructs';
import { CONTAINER_BUDGET_DEFAULT_PERCENT } from '../breaker/contract';
import { DEFAULT_CONFIG } from '../breaker/policy';
import { isInstanceSize, nearestCatalogType, SageMakerInstanceType } from '../instance-types';
import { ContainerImage } from '../model-artifacts';
import type { MetricPublishingOptions, ResilientEndpointProps, VariantInfo } from '../resilient-endpoint-props';
import { Described, PropErrors } from '../validation';
import { GUARD_BUDGET_PERCENT_RANGE } from './models';

const NAME_PATTERN = /^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/;
/** `MetricsConfig.MetricPublishFrequencyInSeconds` values SageMaker accepts (API reference, MetricsConfig). */
const PUBLISH_FREQUENCIES = [10, 30, 60, 120, 180, 240, 300];

/** An instance type's name and hardware spec; burstable types get a warning. */
export function validateInstanceType(scope: Construct, errors: PropErrors, prop: string, t: SageMakerInstanceType): void {
  const near = nearestCatalogType(t.name);
  const meant = near && `did you mean ${near.name}? Use SageMakerInstanceType.${near.constant}`;
  if (!/^ml\.[a-z0-9-]+\.[a-z0-9-]+$/.test(t.name)) {
    errors.add(
      prop,
      t.name,
      "an ml.* instance type such as 'ml.m5.xlarge'",
      meant ?? 'use a SageMakerInstanceType constant or SageMakerInstanceType.of(name, spec)',
    );
  } else if (!isInstanceSize(t.name)) {
    errors.add(
      prop,
      t.name,
      'an instance type whose size AWS uses (medium, large, xlarge, 2xlarge … 48xlarge)',
      meant ?? 'check the name against the SageMaker AI pricing page, e.g. ml.m5.xlarge',
    );
  }
  if (!t.specUnknown) {
    const spec = t.spec;
    const field = (name: keyof typeof spec, min: number, fix: string) =>
      errors.range(`${prop} (${t.name}) spec.${name}`, spec[name] as number, min, 1e6, fix, true);
    field('vCpus', 1, 'give the whole number of vCPUs, e.g. 4');
    field('gpuCount', 0, 'give the whole number of GPUs (0 for CPU types)');
    field('localNvmeGB', 0, 'give the local NVMe size in whole GB (0 for EBS-only types)');
    errors.range(`${prop} (${t.name}) spec.memoryGiB`, spec.memoryGiB, 0.5, 1e6, 'give the host memory in GiB, e.g. 16');
    errors.range(
      `${prop} (${t.name}) spec.gpuMemoryGiB`,
      spec.gpuMemoryGiB,
      spec.gpuCount > 0 ? 1 : 0,
      1e4,
      spec.gpuCount > 0 ? 'give the memory of one GPU in GiB, e.g. 16' : 'give 0 for CPU types',
    );
  }
  if (t.isBurstable) {
    Validations.of(scope).addWarning(
      'BurstableInstance',
      `${prop} is ${t.name}, a burstable demo-grade type (incident B: 4 GiB, 110 s cold start, CPU credits run out, cannot autoscale). Use e.g. ml.m5.xlarge for production.`,
    );
  }
}

/** Checks a literal endpoint name; returns a usable stand-in when it is bad. */
export function validateEndpointName(errors: PropErrors, name: string): string {
  if (Token.isUnresolved(name) || NAME_PATTERN.test(name)) return name;
  errors.add(
    'endpointName',
    name,
    'letters, digits and hyphens, 1–63 characters, starting and ending with a letter or digit',
    "rename the endpoint, e.g. 'recommender-prod', or omit endpointName for a generated one",
  );
  return 'invalid-endpoint-name';
}

/** An endpoint as the app-wide name check sees it (found by its symbol, so two copies of the library are one app). */
interface NamedEndpoint extends IConstruct {
  readonly endpointName: string;
}

/** The account and Region a construct deploys to (a nested stack's are its top stack's); tokens for an env-agnostic stack. */
function environmentOf(c: IConstruct): string {
  let stack = Stack.of(c);
  while (stack.nestedStackParent) stack = stack.nestedStackParent;
  return `${stack.account}/${stack.region}`;
}

/**
 * Errors for an endpoint whose name another endpoint of the app also has, in the same account and Region
 * (SageMaker endpoint names are unique there, and each endpoint's alarms, parameters and rules are named
 * after it: CloudFormation would fail on them one by one, never naming endpointName). Env-agnostic stacks
 * deploy to the same account and Region as each other; a stack with an explicit env is compared with those
 * of the same env only.
 */
export function duplicateEndpointNames(endpoint: NamedEndpoint, isEndpoint: (x: unknown) => x is NamedEndpoint): string[] {
  const name = endpoint.endpointName;
  const env = environmentOf(endpoint);
  const others = endpoint.node.root.node
    .findAll()
    .filter(c => c !== endpoint && isEndpoint(c) && c.endpointName === name && environmentOf(c) === env)
    .map(c => c.node.path);
  if (!others.length) return [];
  return [
    `endpointName: got '${name}', also the name of ${others.join(', ')}; allowed: a name no other endpoint of the app has in the same account and Region ` +
      "(SageMaker's endpoint names are unique there, and the endpoint's alarms, parameters and rules are named after it). " +
      'Fix: give each endpoint its own endpointName, or omit endpointName for generated ones',
  ];
}

/** Checks a literal variant name; returns a usable stand-in when it is bad. */
export function validateVariantName(errors: PropErrors, prop: string, name: string): string {
  if (Token.isUnresolved(name) || NAME_PATTERN.test(name)) return name;
  errors.add(prop, name, 'letters, digits and hyphens, 1–63 characters, starting and ending with a letter or digit', "use e.g. 'Primary'");
  return `Invalid${prop.replace(/[^A-Za-z]/g, '')}`;
}

/** The stand-in image of a model given without one (a registry host that never resolves: no second error). */
export const MISSING_IMAGE = 'missing.invalid/missing-image';

/** Required props a plain-JavaScript (or jsii) caller may have left out, reported as errors with stand-ins. */
export function requireProps(errors: PropErrors, props: ResilientEndpointProps | undefined): ResilientEndpointProps {
  const p: Partial<ResilientEndpointProps> = props ?? {};
  let model = p.model;
  let instanceType = p.instanceType;
  if (!model || !model.image) {
    errors.add(
      model ? 'model.image' : 'model',
      new Described('nothing'),
      'a model with a container image',
      "pass model: { image: ContainerImage.fromImageUri('…'), modelData: ModelData.fromS3Uri('s3://…/model.tar.gz') }",
    );
    model = { ...(model ?? {}), image: ContainerImage.fromImageUri(MISSING_IMAGE) };
  }
  if (!(instanceType instanceof SageMakerInstanceType)) {
    errors.add(
      'instanceType',
      instanceType === undefined ? new Described('nothing') : String(instanceType),
      'a SageMakerInstanceType',
      "pass e.g. SageMakerInstanceType.ML_M5_XLARGE, or SageMakerInstanceType.of('ml.m5.xlarge')",
    );
    instanceType = typeof instanceType === 'string' ? SageMakerInstanceType.of(instanceType) : SageMakerInstanceType.ML_M5_XLARGE;
  }
  return { ...p, model, instanceType };
}

/** Metric publishing as the endpoint config's MetricsConfig takes it. */
export interface PublishingSettings {
  /** Write MetricsConfig at all (false: SageMaker's defaults, 60 s, no enhanced metrics). */
  readonly configured: boolean;
  readonly frequencySeconds: number;
  readonly enhancedMetrics: boolean;
  readonly detailedObservability: boolean;
}

/** The MetricsConfig values: 10-s data and per-GPU dimensions by default. */
export function publishingSettings(errors: PropErrors, options: MetricPublishingOptions = {}): PublishingSettings {
  if (options.enabled === false) {
    // Where CloudFormation does not know MetricsConfig yet: SageMaker's defaults (1-minute data, no per-GPU series).
    if (options.frequency || options.enhancedMetrics || options.detailedObservability) {
      errors.add(
        'metricPublishing',
        new Described('enabled: false with frequency, enhancedMetrics or detailedObservability'),
        'either MetricsConfig (enabled) or none at all',
        'drop the other settings, or leave enabled on',
      );
    }
    return { configured: false, frequencySeconds: 60, enhancedMetrics: false, detailedObservability: false };
  }
  const asked = (options.frequency ?? Duration.seconds(10)).toSeconds();
  if (!PUBLISH_FREQUENCIES.includes(asked)) {
    errors.add('metricPublishing.frequency (s)', asked, PUBLISH_FREQUENCIES.join(', '), 'use e.g. Duration.seconds(10) or Duration.minutes(1)');
  }
  return {
    configured: true,
    frequencySeconds: PUBLISH_FREQUENCIES.includes(asked) ? asked : 60, // (a usable stand-in while the error is reported)
    enhancedMetrics: options.enhancedMetrics ?? true,
    detailedObservability: options.detailedObservability ?? false,
  };
}

/** Volume settings every variant can take. */
export interface StorageSettings {
  /** The EBS volume size asked for, in GiB (only EBS-backed variants get it). */
  readonly volumeGiB?: number;
  /** No variant has local NVMe storage (so a KMS key encrypts every variant's storage). */
  readonly ebsOnly: boolean;
}

/** Local NVMe types reject a volume size; a KMS key does not reach their NVMe (warning). */
export function storageSettings(
  scope: Construct,
  errors: PropErrors,
  props: { volumeSize?: Size; volumeKmsKey?: unknown },
  variants: VariantInfo[],
): StorageSettings {
  const nvmeTypes = [...new Set(variants.filter(v => v.instanceType.hasLocalNvme).map(v => v.instanceType.name))];
  if (props.volumeKmsKey && nvmeTypes.length) {
    // The SageMaker API model (CreateEndpointConfig KmsKeyId, 2026) says the key "does not encrypt
    // instance local storage" on Nitro types with local NVMe (older texts said the call fails).
    Validations.of(scope).addWarning(
      'VolumeKmsKeyOnNvme',
      `volumeKmsKey does not encrypt the local NVMe storage of ${nvmeTypes.join(', ')}: ` +
        'that storage is encrypted by a hardware module on the instance. The key is still set on the endpoint config.',
    );
  }
  const volumeGiB = props.volumeSize?.toGibibytes({ rounding: SizeRoundingBehavior.NONE });
  if (props.volumeSize && nvmeTypes.length) {
    errors.add(
      'volumeSize',
      new Described(`${volumeGiB} GiB`),
      `no volume size on instance types with local NVMe storage (${nvmeTypes.join(', ')})`,
      'remove volumeSize: those types use their local NVMe disk and SageMaker rejects VolumeSizeInGB',
    );
  }
  errors.range('volumeSize (GiB)', volumeGiB, 1, 512, 'use Size.gibibytes(1..512)', true);
  return { volumeGiB, ebsOnly: nvmeTypes.length === 0 };
}

/**
 * The guard budget ordered against the breaker's trigger: the container's memory guard refuses requests
 * at `model.guardBudgetPercent` of memory, the breaker shifts traffic and holds capacity from
 * `circuitBreaker.degradeAtPercent`. A budget at or below the trigger refuses before the breaker can act
 * (the layers' rule: the slow, graceful layer acts before the fast, blunt one). Values that are bad on
 * their own (out of range, fractions) are reported by their own checks, not here.
 */
export function validateGuardBudgetOrder(errors: PropErrors, props: ResilientEndpointProps): void {
  if (props.circuitBreaker?.enabled === false) return;
  const given = props.circuitBreaker?.degradeAtPercent;
  const degrade = given ?? DEFAULT_CONFIG.degradeAtPercent;
  if (Token.isUnresolved(degrade) || !(degrade >= 1 && degrade <= 100)) return;
  const budget = props.model?.guardBudgetPercent ?? CONTAINER_BUDGET_DEFAULT_PERCENT;
  const { min, max } = GUARD_BUDGET_PERCENT_RANGE;
  if (Token.isUnresolved(budget) || !(Number.isInteger(budget) && budget >= min && budget <= max)) return;
  if (budget > degrade) return;
  const trigger = `circuitBreaker.degradeAtPercent (${degrade}${given === undefined ? ', the default' : ''})`;
  const lowest = Math.max(min, Math.floor(degrade) + 1);
  errors.add(
    'model.guardBudgetPercent',
    new Described(`${budget}${props.model?.guardBudgetPercent === undefined ? ' (the default)' : ''}, at or below ${trigger}`),
    lowest <= max
      ? `a budget above the breaker's trigger: from ${lowest} to ${max}`
      : `a budget above the breaker's trigger, which leaves none at ${degrade} (the budget's maximum is ${max})`,
    `the guard would refuse requests before the breaker shifts traffic and holds capacity: ` +
      (lowest <= max ? `raise model.guardBudgetPercent to ${Math.max(lowest, Math.min(max, CONTAINER_BUDGET_DEFAULT_PERCENT))} or more, or ` : '') +
      `lower circuitBreaker.degradeAtPercent below ${budget}`,
  );
}
