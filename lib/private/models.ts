/**
 * ResilientEndpoint's models: the model server each variant runs (tuned, with its warnings), and the
 * `AWS::SageMaker::Model` per variant — image and model data bound to the execution role, the VPC
 * placement, and the container environment (tuning, the endpoint's own variables, the caller's).
 */
import { Lazy, Size, Stack, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { Construct } from 'constructs';
import { CONTAINER_BUDGET_DEFAULT_PERCENT, CONTAINER_BUDGET_ENV } from '../breaker/contract';
import { isInstanceSize, nearestCatalogType, SageMakerInstanceType } from '../instance-types';
import { MemoryProfile } from '../memory-profile';
import { MemoryFootprint, ModelServer, ModelServerOptions, ModelServerTuning, tuneModelServer, wholeBytes } from '../model-server';
import type { ModelProps, VariantInfo } from '../resilient-endpoint-props';
import { PropErrors } from '../validation';

/** Environment variable with the endpoint's name, in every model container. */
export const ENDPOINT_NAME_ENV = 'RESILIENT_ENDPOINT_NAME';
/** Environment variable with the production variant's name, in every model container. */
export const VARIANT_NAME_ENV = 'RESILIENT_ENDPOINT_VARIANT';

/** What every model of one endpoint shares. */
export interface ModelContext {
  readonly scope: Construct;
  readonly role: iam.IRole;
  readonly errors: PropErrors;
  readonly endpointName: string;
  /** Variables added to every container after construction (read lazily at synthesis). */
  readonly extraEnvironment: { readonly [key: string]: string };
}

/**
 * The model server of one variant: as given, else as the image says (AWS framework images), else the
 * inference toolkit with a warning; tuned to the instance type and the model's footprint.
 */
export function tuneVariant(
  scope: Construct,
  errors: PropErrors,
  prefix: string,
  type: SageMakerInstanceType,
  model: ModelProps,
  options?: ModelServerOptions,
): ModelServerTuning {
  const errs = new PropErrors();
  const detected = model.image?.modelServer;
  const server = options?.server ?? detected ?? ModelServer.SAGEMAKER_INFERENCE_TOOLKIT;
  const label = prefix ? `[${prefix.slice(0, -1)}] ` : '';
  if (!options?.server && detected === undefined) {
    Validations.of(scope).addWarning(
      `${prefix}ModelServerUnknown`,
      `${label}The image is not an AWS framework image this library recognises, so the SageMaker inference toolkit (MMS) variables are written. ` +
        'If the container runs another server, say so: modelServer: { server: ModelServer.TORCHSERVE | SCIKIT_LEARN | XGBOOST | NONE } (NONE writes nothing; pass your own environment).',
    );
  }
  const tuning = tuneModelServer(type, model.memoryFootprint ?? profiledFootprint(model), { ...options, server }, errs);
  errors.merge(prefix, errs);
  for (const w of tuning.warnings) Validations.of(scope).addWarning(`${prefix}ModelServer`, `${label}${w}`);
  // A SAGEMAKER_TS_* variable of the user's own makes AWS's PyTorch toolkit write the model's configuration with
  // SAGEMAKER_TS_MIN_WORKERS / _MAX_WORKERS, which default to 1 (ts_environment.py): the tuned workers would be lost.
  const env = model.environment ?? {};
  const own = Object.keys(env).filter(k => k.startsWith('SAGEMAKER_TS_'));
  if (server === ModelServer.TORCHSERVE && own.length && !(env.SAGEMAKER_TS_MIN_WORKERS && env.SAGEMAKER_TS_MAX_WORKERS)) {
    Validations.of(scope).addWarning(
      `${prefix}TorchServeWorkersReset`,
      `${label}model.environment sets ${own.join(', ')}: AWS's PyTorch toolkit then configures the model with SAGEMAKER_TS_MIN_WORKERS and SAGEMAKER_TS_MAX_WORKERS, which default to 1 worker, not the ${tuning.workers} tuned. ` +
        `Set SAGEMAKER_TS_MIN_WORKERS and SAGEMAKER_TS_MAX_WORKERS to ${tuning.workers} too. (The toolkit's transform runs a TorchServe batch's requests one after another, so SAGEMAKER_TS_BATCH_SIZE does not pad them into one GPU batch.)`,
    );
  }
  // (A name that is no instance type at all, e.g. 'ml.g4dn.xlarg', is an error instead: no advice to keep it.)
  if (type.specUnknown && /^ml\.[a-z0-9-]+\.[a-z0-9-]+$/.test(type.name) && isInstanceSize(type.name)) {
    const near = nearestCatalogType(type.name);
    Validations.of(scope).addWarning(
      `${prefix}UnknownInstanceSpec`,
      `${type.name} is not in the instance catalog and no InstanceSpec was given: worker tuning, GPU normalisation and NVMe checks are off. ` +
        (near ? `Did you mean ${near.name} (SageMakerInstanceType.${near.constant})? If ${type.name} is the type you want, give` : 'Give') +
        ` its hardware: SageMakerInstanceType.of('${type.name}', { vCpus, memoryGiB, ... }).`,
    );
  }
  return tuning;
}

/** The `AWS::SageMaker::Model` of one variant, with construct id `id` under the endpoint. */
export function createModel(ctx: ModelContext, id: string, model: ModelProps, variant: VariantInfo): sagemaker.CfnModel {
  let image: { imageUri: string };
  try {
    image = model.image.bind(ctx.scope, ctx.role);
  } catch (e) {
    ctx.errors.addMessage(`model.image: ${(e as Error).message}`);
    image = { imageUri: 'invalid-image' };
  }
  const data = model.modelData?.bind(ctx.scope, ctx.role);
  for (const e of model.modelData?.validate() ?? []) ctx.errors.addMessage(e);
  const label = MODEL_PROPS[id] ?? 'model';
  validateGuardBudget(ctx, label, model);
  if (model.memoryProfile && !model.memoryProfile.problem && model.memoryProfile.device === 'cpu' && variant.instanceType.isGpu) {
    Validations.of(ctx.scope).addWarning(
      `${variant.variantName}CpuProfileOnGpu`,
      `${variant.variantName}: ${label}.memoryProfile was measured on the CPU (device 'cpu': the worker's RSS), but ${variant.instanceType.name} serves on its GPU: ` +
        'the guard would estimate GPU memory with a curve of host memory. Profile on a GPU instance (the profiler records the CUDA allocator peak there) and pass that memory-profile.json.',
    );
  }
  const memory = memoryEnvironment(variant, model);
  const footprint = model.memoryFootprint ?? profiledFootprint(model);
  const admissible = Number(memory.RESILIENT_ENDPOINT_MAX_ADMISSIBLE_SIZE);
  const cap = sizeCap(model);
  if (model.memoryProfile && cap !== undefined && admissible < cap) {
    Validations.of(ctx.scope).addWarning(
      `${variant.variantName}MemoryProfileSize`,
      `${variant.variantName}: MAX_SEQ_LEN ${cap} admits requests a worker cannot hold: the profile says a worker's budget takes ${model.memoryProfile.sizeUnit} up to ${admissible}. ` +
        `The memory guard refuses (or, degraded, truncates) above that; set MAX_SEQ_LEN to ${admissible} or less, or use fewer workers or a larger instance.`,
    );
  }
  if (model.memoryProfile?.problem)
    ctx.errors.addMessage(
      `model.memoryProfile: got ${model.memoryProfile.problem}; allowed: a memory-profile.json the profiler wrote. Fix: run python3 -m resilient_endpoint_runtime.profile --model-dir … --out memory-profile.json`,
    );
  let vpcConfig: sagemaker.CfnModel.VpcConfigProperty | undefined;
  if (model.vpc) {
    const sgs = model.securityGroups ?? [defaultSecurityGroup(ctx.scope, model.vpc)];
    vpcConfig = { securityGroupIds: sgs.map(s => s.securityGroupId), subnets: modelSubnets(ctx.errors, model.vpc, model.vpcSubnets) };
  }
  return new sagemaker.CfnModel(ctx.scope, id, {
    executionRoleArn: ctx.role.roleArn,
    enableNetworkIsolation: model.networkIsolation ?? false,
    vpcConfig,
    primaryContainer: {
      image: image.imageUri,
      modelDataUrl: data?.uri,
      // Lazy: parts added after construction (breaker parameter, stage-metric namespace) reach every container.
      environment: Lazy.any({
        produce: () => ({
          ...variant.tuning.environment,
          ...ctx.extraEnvironment,
          // SageMaker hosting does not promise AWS_REGION (aws/sagemaker-containers PR 112 falls back to
          // SAGEMAKER_REGION), and a boto3 client without a Region raises NoRegionError: the runtime helper
          // reads the degrade level in this Region (real-account.md item 30).
          AWS_DEFAULT_REGION: Stack.of(ctx.scope).region,
          // SageMaker gives the container no variable with its endpoint's name, and one model can serve
          // several endpoints: the stage metrics' EndpointName/VariantName dimensions come from here.
          [ENDPOINT_NAME_ENV]: ctx.endpointName,
          [VARIANT_NAME_ENV]: variant.variantName,
          // The worker's memory budget (the guard, the stage metrics) and the profiled curve.
          ...memory,
          // The stated footprint travels with the model so synth-time checks can verify workers × footprint.
          ...(footprint?.host ? { RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES: String(wholeBytes(footprint.host)) } : {}),
          ...(footprint?.gpu ? { RESILIENT_ENDPOINT_GPU_FOOTPRINT_BYTES: String(wholeBytes(footprint.gpu)) } : {}),
          ...(model.environment ?? {}),
        }),
      }),
    },
  });
}

/** The prop path of each model the endpoint creates (its construct id → the prop it comes from). */
const MODEL_PROPS: Record<string, string> = { Model: 'model', FallbackModel: 'fallback.model', ShadowModel: 'shadow.model' };
const validatedModels = new WeakMap<PropErrors, WeakSet<ModelProps>>();

/** `guardBudgetPercent`: a whole percent in range (a fraction such as 0.9 is the usual mistake); once per model object. */
function validateGuardBudget(ctx: ModelContext, label: string, model: ModelProps): void {
  const seen = validatedModels.get(ctx.errors) ?? new WeakSet<ModelProps>();
  validatedModels.set(ctx.errors, seen);
  if (seen.has(model)) return;
  seen.add(model);
  const p = model.guardBudgetPercent;
  if (p === undefined) return;
  const { min, max } = GUARD_BUDGET_PERCENT_RANGE;
  if (Number.isFinite(p) && p > 0 && p < 1)
    ctx.errors.add(
      `${label}.guardBudgetPercent`,
      p,
      `a whole percent from ${min} to ${max}`,
      `write ${Math.round(p * 100)} (percent), not the fraction ${p}`,
    );
  else
    ctx.errors.range(
      `${label}.guardBudgetPercent`,
      p,
      min,
      max,
      `a whole percent of the instance's memory, e.g. ${CONTAINER_BUDGET_DEFAULT_PERCENT}`,
      true,
    );
}

/** The largest request the length caps let through (MAX_SEQ_LEN in the model's environment), if stated. */
function sizeCap(model: ModelProps): number | undefined {
  const cap = Number(model.environment?.MAX_SEQ_LEN);
  return Number.isInteger(cap) && cap > 0 ? cap : undefined;
}

/** The P99.9 request the length caps admit, and the memory it adds (bytes). */
export function admittedP999(profile: MemoryProfile, model: ModelProps): { size: number; bytes: number } {
  const cap = sizeCap(model);
  const size = cap !== undefined ? Math.min(profile.p999.size, cap) : profile.p999.size;
  return { size, bytes: Math.round(profile.estimateBytes(size)) };
}

/** A profile's footprint: the worker's baseline plus the P99.9 request it admits, on the device it was measured on. */
function profiledFootprint(model: ModelProps): MemoryFootprint | undefined {
  const p = model.memoryProfile;
  if (!p || p.problem) return undefined;
  const bytes = Size.bytes(p.baselineBytes + admittedP999(p, model).bytes);
  return p.device === 'cuda' ? { gpu: bytes } : { host: bytes };
}

/** Environment variable with a worker's memory budget (bytes): the container's budget ÷ workers (the stage metrics' 100 %). */
export const WORKER_BUDGET_ENV = 'RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES';
/** The same for each GPU: one GPU's budget ÷ the workers on it. */
export const WORKER_GPU_BUDGET_ENV = 'RESILIENT_ENDPOINT_WORKER_GPU_MEMORY_BYTES';
/** The percent the container's budget is of the instance's memory (the guard applies it to a smaller cgroup limit too). */
export const CONTAINER_BUDGET_PERCENT_ENV = 'RESILIENT_ENDPOINT_CONTAINER_BUDGET_PERCENT';
/** The range `model.guardBudgetPercent` accepts. */
export const GUARD_BUDGET_PERCENT_RANGE = { min: 50, max: 99 } as const;

/** The model's guard budget percent when it is valid, else the default (the invalid value is a synth error). */
export function guardBudgetPercent(model: ModelProps): number {
  const p = model.guardBudgetPercent;
  return p !== undefined && Number.isInteger(p) && p >= GUARD_BUDGET_PERCENT_RANGE.min && p <= GUARD_BUDGET_PERCENT_RANGE.max
    ? p
    : CONTAINER_BUDGET_DEFAULT_PERCENT;
}

/**
 * The container's memory budget in bytes — the guard's hard edge for all its workers together:
 * `model.guardBudgetPercent` (default 90) % of the instance's memory, and on GPU instances of each GPU's
 * (undefined for an instance type the catalog does not know).
 */
export function containerBudgets(variant: VariantInfo): { host: number; gpu?: number } | undefined {
  const t = variant.instanceType;
  if (t.specUnknown) return undefined;
  const share = guardBudgetPercent(variant.model) / 100;
  const gib = 1024 ** 3;
  const host = Math.floor(share * t.spec.memoryGiB * gib);
  const gpu = t.spec.gpuCount > 0 && t.spec.gpuMemoryGiB > 0 ? Math.floor(share * t.spec.gpuMemoryGiB * gib) : undefined;
  return { host, gpu };
}

/**
 * Each worker's share of the container's budget in bytes: the container's ÷ workers, and on GPU instances
 * one GPU's ÷ the workers on it (undefined for an instance type the catalog does not know).
 */
export function workerBudgets(variant: VariantInfo): { host: number; gpu?: number } | undefined {
  const c = containerBudgets(variant);
  if (!c) return undefined;
  const workers = Math.max(1, variant.tuning.workers);
  const host = Math.floor(c.host / workers);
  const gpu = c.gpu !== undefined ? Math.floor(c.gpu / Math.ceil(workers / variant.instanceType.spec.gpuCount)) : undefined;
  return { host, gpu };
}

/**
 * The container's memory settings: the container's budget (what the runtime helper's MemoryGuard admits
 * against, all workers together: lib/breaker/contract.ts CONTAINER_BUDGET_ENV), each worker's share (its
 * stage metrics are a percentage of it) and, with a profile, the guard's curve, the profiled baseline and
 * P99.9 request (for the readiness rule), and the largest size a worker admits.
 */
function memoryEnvironment(variant: VariantInfo, model: ModelProps): Record<string, string> {
  const budgets = workerBudgets(variant);
  const container = containerBudgets(variant);
  if (!budgets || !container) return {};
  const env: Record<string, string> = {
    [CONTAINER_BUDGET_ENV.HOST]: String(container.host),
    [CONTAINER_BUDGET_PERCENT_ENV]: String(guardBudgetPercent(model)),
    [WORKER_BUDGET_ENV]: String(budgets.host),
  };
  if (container.gpu !== undefined) env[CONTAINER_BUDGET_ENV.GPU] = String(container.gpu);
  if (budgets.gpu !== undefined) env[WORKER_GPU_BUDGET_ENV] = String(budgets.gpu);
  const deviceBudget = budgets.gpu ?? budgets.host;
  const p = model.memoryProfile;
  if (p && !p.problem) {
    const p999 = admittedP999(p, model);
    env.RESILIENT_ENDPOINT_MEMORY_CURVE = JSON.stringify(p.curve);
    env.RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES = String(p.baselineBytes);
    env.RESILIENT_ENDPOINT_PROFILE_P999 = JSON.stringify(p999);
    env.RESILIENT_ENDPOINT_PROFILE_DEVICE = p.device;
    env.RESILIENT_ENDPOINT_MAX_ADMISSIBLE_SIZE = String(Math.min(1e15, p.largestSizeWithin(deviceBudget - p.baselineBytes)));
  }
  return env;
}

/** One security group per endpoint for models placed in a VPC without their own: no inbound rules. */
function defaultSecurityGroup(scope: Construct, vpc: ec2.IVpc): ec2.ISecurityGroup {
  const id = 'ModelSecurityGroup';
  return (
    (scope.node.tryFindChild(id) as ec2.ISecurityGroup | undefined) ??
    new ec2.SecurityGroup(scope, id, { vpc, description: 'SageMaker model containers (no inbound rules)', allowAllOutbound: true })
  );
}

/**
 * The model's subnets: the selection given, else the VPC's private subnets with egress, else its
 * isolated ones (a VPC reaching S3 and ECR through VPC endpoints). Never public subnets by default:
 * the network interfaces SageMaker attaches to model containers give "a network connection within
 * your VPC that is not connected to the internet", and the guide has the VPC reach S3 through an S3
 * VPC endpoint (SageMaker developer guide, "Give SageMaker AI Hosted Endpoints Access to Resources in
 * Your Amazon VPC", host-vpc.html). A selection the VPC cannot satisfy is a synth-time error naming
 * the prop, not aws-cdk-lib's stack trace.
 */
function modelSubnets(errors: PropErrors, vpc: ec2.IVpc, selection: ec2.SubnetSelection | undefined): string[] {
  const fallback =
    vpc.privateSubnets.length > 0 ? ec2.SubnetType.PRIVATE_WITH_EGRESS : vpc.isolatedSubnets.length > 0 ? ec2.SubnetType.PRIVATE_ISOLATED : undefined;
  if (!selection && !fallback) {
    errors.addMessage(
      'model.vpc: got a VPC with no private or isolated subnets; allowed: a VPC with private (with egress) ' +
        'or isolated subnets. Fix: add private subnets to the VPC, or pass model.vpcSubnets to choose subnets explicitly.',
    );
    return [];
  }
  try {
    return vpc.selectSubnets(selection ?? { subnetType: fallback }).subnetIds;
  } catch (e) {
    const why = (e as Error).message.split('\n')[0].replace(/^«\w+» /, '');
    errors.addMessage(
      `model.vpcSubnets: got a selection the VPC cannot satisfy (${why}); allowed: subnets the VPC has. ` +
        "Fix: select one of the VPC's subnet types or groups, or leave vpcSubnets unset.",
    );
    return [];
  }
}
