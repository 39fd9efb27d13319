/**
 * ResilientEndpoint's models: the model server each variant runs (tuned, with its warnings), and the
 * `AWS::SageMaker::Model` per variant — image and model data bound to the execution role, the VPC
 * placement, and the container environment (tuning, the endpoint's own variables, the caller's).
 */
import { Lazy, Stack, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { Construct } from 'constructs';
import { SageMakerInstanceType } from '../instance-types';
import { ModelServer, ModelServerOptions, ModelServerTuning, tuneModelServer } from '../model-server';
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
  const tuning = tuneModelServer(type, model.memoryFootprint, { ...options, server }, errs);
  errors.merge(prefix, errs);
  for (const w of tuning.warnings) Validations.of(scope).addWarning(`${prefix}ModelServer`, `${label}${w}`);
  if (type.specUnknown) {
    Validations.of(scope).addWarning(
      `${prefix}UnknownInstanceSpec`,
      `${type.name} is not in the instance catalog and no InstanceSpec was given: worker tuning, GPU normalisation and NVMe checks are off. Use SageMakerInstanceType.of('${type.name}', { vCpus, memoryGiB, ... }).`,
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
          // The stated footprint travels with the model so synth-time checks can verify workers × footprint.
          ...(model.memoryFootprint?.host ? { RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES: String(model.memoryFootprint.host.toBytes()) } : {}),
          ...(model.memoryFootprint?.gpu ? { RESILIENT_ENDPOINT_GPU_FOOTPRINT_BYTES: String(model.memoryFootprint.gpu.toBytes()) } : {}),
          ...(model.environment ?? {}),
        }),
      }),
    },
  });
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
