import { createHash } from 'crypto';
import * as fs from 'fs';
import { Arn, Aws, CfnMapping, CfnRule, Fn, Stack, Token } from 'aws-cdk-lib';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import { Construct } from 'constructs';
import { DLC_ACCOUNTS, FIRST_PARTY_ACCOUNTS, IMAGE_REPOSITORIES } from './image-registries';
import { ModelServer } from './model-server';
import { acknowledgeWildcard } from './nag';
import { stackLabel, stackPartitions } from './validation';

/** What a container image resolves to once bound to a model's execution role. */
export interface ContainerImageConfig {
  /** The image URI for `PrimaryContainer.Image`. */
  readonly imageUri: string;
}

/**
 * The model's container image. Each source grants the execution role exactly
 * what SageMaker needs to pull it.
 */
export abstract class ContainerImage {
  /**
   * The model server an image of this ECR repository runs (as the construct detects it from the
   * repository's name, e.g. `pytorch-inference` → TorchServe), or undefined for an unknown image.
   */
  public static modelServerOf(repository: string): ModelServer | undefined {
    return modelServerOfRepository(repository);
  }

  /** The repositories `fromDlc` knows (AWS's inference images). */
  public static readonly IMAGE_REPOSITORIES: string[] = Object.keys(IMAGE_REPOSITORIES);

  /** An image in an ECR repository of this (or another) account, by tag. */
  public static fromEcrRepository(repository: ecr.IRepository, tag: string = 'latest'): ContainerImage {
    return new EcrImage(repository, tag);
  }

  /**
   * An AWS inference image for the stack's Region: a Deep Learning Container (`pytorch-inference`,
   * `huggingface-pytorch-inference`, `tensorflow-inference`, `mxnet-inference`, `djl-inference`, …) or a
   * first-party image (`sagemaker-scikit-learn`, `sagemaker-xgboost`, `tei`), from the registry account
   * of that Region in the SageMaker Python SDK's image catalog — every commercial, China and GovCloud
   * Region it lists (`ContainerImage.IMAGE_REPOSITORIES` names the repositories). A stack in a Region
   * where AWS publishes no version of that repository, or an unknown repository, is a synth error. In an
   * environment-agnostic stack (no `env`, as `cdk init` writes it) the account is a `Fn::FindInMap` on
   * `AWS::Region`, and the template's `Rules` section asserts the Region has the repository: the deploy
   * fails before any resource is created, with a message naming the stack, in a Region without it.
   * The tag is not checked. The serving stack is detected from the repository.
   */
  public static fromDlc(repositoryName: string, tag: string): ContainerImage {
    return new DlcImage(repositoryName, tag);
  }

  /**
   * An image by URI, e.g. an AWS Deep Learning Container
   * (`763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-inference:2.3-gpu-py311`).
   * ECR URIs get a pull grant scoped to that repository.
   */
  public static fromImageUri(imageUri: string): ContainerImage {
    return new UriImage(imageUri);
  }

  /** Grants the role pull access and returns the URI. */
  public abstract bind(scope: Construct, role: iam.IRole): ContainerImageConfig;

  /**
   * The serving stack this image runs, when the image says so (AWS framework images); undefined
   * for other images.
   */
  public get modelServer(): ModelServer | undefined {
    return undefined;
  }
}

/**
 * Pure: the serving stack of an AWS framework image repository (undefined when not recognised).
 * PyTorch images run TorchServe; Hugging Face and MXNet ones the inference toolkit on MMS;
 * scikit-learn and XGBoost their own servers; TensorFlow Serving reads none of these variables.
 */
export function modelServerOfRepository(repository: string): ModelServer | undefined {
  const name = repository.split('/').pop() ?? repository;
  if (/^sagemaker-scikit-learn/.test(name)) return ModelServer.SCIKIT_LEARN;
  if (/^sagemaker-xgboost/.test(name)) return ModelServer.XGBOOST;
  if (/^huggingface-(pytorch|tensorflow)-inference$/.test(name)) return ModelServer.SAGEMAKER_INFERENCE_TOOLKIT;
  if (/^(huggingface-pytorch-tgi|djl|tei|huggingface-.*-tgi)/.test(name)) return ModelServer.NONE; // LLM servers with their own settings
  if (/^pytorch-inference/.test(name)) return ModelServer.TORCHSERVE;
  if (/^mxnet-inference/.test(name)) return ModelServer.SAGEMAKER_INFERENCE_TOOLKIT;
  if (/^tensorflow-inference/.test(name)) return ModelServer.NONE;
  return undefined;
}

class DlcImage extends ContainerImage {
  constructor(
    private readonly repositoryName: string,
    private readonly tag: string,
  ) {
    super();
  }
  public get modelServer(): ModelServer | undefined {
    return modelServerOfRepository(this.repositoryName);
  }
  public bind(scope: Construct, role: iam.IRole): ContainerImageConfig {
    const stack = Stack.of(scope);
    const account = imageAccount(stack, this.repositoryName);
    grantEcrPull(role, Arn.format({ service: 'ecr', account, resource: 'repository', resourceName: this.repositoryName }, stack));
    return { imageUri: `${account}.dkr.ecr.${stack.region}.${stack.urlSuffix}/${this.repositoryName}:${this.tag}` };
  }
}

/**
 * The value of the image-account mapping in a Region where AWS publishes no version of the repository:
 * the lookup resolves there, so the template's rule (not a missing mapping key) is what stops the deploy.
 */
export const NO_IMAGE_ACCOUNT = 'no-image-in-this-region';

/**
 * The registry account of an AWS inference image in the stack's Region (lib/image-registries.ts, from
 * the SageMaker Python SDK's image catalog). The check is per repository, not per tag: a Region is
 * accepted when AWS publishes some version of the repository there. With a known Region: a literal, or
 * a throw (reported as a synth error naming the model) for a Region without the repository. In an
 * environment-agnostic stack (`cdk init` writes stacks without `env`): a `Fn::FindInMap` on
 * `AWS::Region`, and a template rule whose assertion fails the deploy before any resource is created,
 * with a message naming the stack and the repository, in a Region without it (CloudFormation user
 * guide, rules-section-structure: rules "validate parameter values before CloudFormation creates or
 * updates any resources"; `Fn::Contains` is a rule-specific intrinsic function). Throws for an unknown
 * repository, and for a stack whose target partitions have no Region with the repository.
 */
export function imageAccount(stack: Stack, repository: string): string {
  const repo = IMAGE_REPOSITORIES[repository];
  const where = stackLabel(stack);
  if (!repo) {
    throw new Error(
      `ContainerImage.fromDlc in ${where}: got repository '${repository}'; allowed: one of AWS's inference images (${Object.keys(IMAGE_REPOSITORIES).join(', ')}). ` +
        'Fix: use one of them, or ContainerImage.fromImageUri for any other image',
    );
  }
  const accounts = repo.accounts === 'dlc' ? DLC_ACCOUNTS : FIRST_PARTY_ACCOUNTS;
  if (!Token.isUnresolved(stack.region)) {
    if (!repo.regions.includes(stack.region)) {
      throw new Error(
        `ContainerImage.fromDlc('${repository}') in ${where}: got Region ${stack.region}, where AWS publishes no version of ${repository}; allowed: the Regions AWS publishes it in (${repo.regions.join(', ')}). ` +
          'Fix: deploy the stack to one of them, or use ContainerImage.fromImageUri with an image in your Region',
      );
    }
    return accounts[stack.region];
  }
  // Environment-agnostic: the Region is known at deploy. The Regions it may go to (of its target
  // partitions, else every Region aws-cdk-lib knows) that lack the repository map to a placeholder, and
  // the rule refuses them.
  const partitions = stackPartitions(stack);
  const inPartitions = (r: string) => !partitions || partitions.includes(RegionInfo.get(r).partition ?? '');
  if (!repo.regions.some(inPartitions)) {
    throw new Error(
      `ContainerImage.fromDlc('${repository}') in the environment-agnostic ${where}: got the target partitions ${partitions!.join(', ')} (@aws-cdk/core:target-partitions), where AWS publishes no version of ${repository} in any Region; ` +
        `allowed: partitions with a Region among the ${repo.regions.length} where AWS publishes it (${repo.regions.join(', ')}). Fix: give the stack one of those Regions (env: { region }), or use ContainerImage.fromImageUri`,
    );
  }
  const id = `SageMakerImageAccounts${repository.replace(/[^A-Za-z0-9]/g, '')}`;
  let mapping = stack.node.tryFindChild(id) as CfnMapping | undefined;
  if (!mapping) {
    const without = RegionInfo.regions.map(r => r.name).filter(r => inPartitions(r) && !repo.regions.includes(r));
    mapping = new CfnMapping(stack, id, {
      mapping: Object.fromEntries([...repo.regions.map(r => [r, { account: accounts[r] }]), ...without.map(r => [r, { account: NO_IMAGE_ACCOUNT }])]),
    });
    new CfnRule(stack, `${id}Region`, {
      assertions: [
        {
          assert: Fn.conditionContains([...repo.regions], Aws.REGION),
          assertDescription:
            `ContainerImage.fromDlc('${repository}') in ${where}: AWS publishes no version of ${repository} in this Region (the Regions it does publish it in are listed in this rule). ` +
            'Deploy the stack to one of them, give it a Region (env: { region }) to have this checked at synth, or use ContainerImage.fromImageUri with an image in this Region.',
        },
      ],
    });
  }
  return mapping.findInMap(Aws.REGION, 'account');
}

/**
 * Lets the role pull images from one ECR repository (given by ARN, e.g. another account's DLC
 * repository, where `IRepository.grantPull` cannot be used). GetAuthorizationToken has no
 * resource-level permissions: AWS requires "*" there.
 */
function grantEcrPull(role: iam.IRole, repositoryArn: string): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'],
      resources: [repositoryArn],
    }),
  );
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ecr:GetAuthorizationToken'], resources: ['*'] }));
  acknowledgeWildcard(
    role,
    'Resource',
    '*',
    'ecr:GetAuthorizationToken and cloudwatch:PutMetricData have no resource-level permissions (AWS requires "*"); PutMetricData is limited by a cloudwatch:namespace condition.',
  );
}

class EcrImage extends ContainerImage {
  constructor(
    private readonly repository: ecr.IRepository,
    private readonly tag: string,
  ) {
    super();
  }
  public bind(_scope: Construct, role: iam.IRole): ContainerImageConfig {
    this.repository.grantPull(role);
    return { imageUri: this.repository.repositoryUriForTag(this.tag) };
  }
}

/**
 * Why an image URI cannot be pulled by SageMaker, or undefined when it can be. Without a registry host
 * (`pytorch-inference:2.3.0-cpu-py311`, `library/ubuntu`) a name means Docker Hub (Docker's reference
 * grammar: the first part is a host only with a '.' or ':' in it, or `localhost`), which SageMaker
 * hosting does not pull from: it takes Amazon ECR images, or a private registry reached through the
 * model's VPC (`ImageConfig`, CreateModel API). Such a name is also no AWS image whose server the
 * tuning could recognise, so it would get the inference toolkit's settings whatever it runs.
 */
export function imageUriProblem(uri: string): string | undefined {
  if (Token.isUnresolved(uri)) return undefined;
  const slash = uri.indexOf('/');
  const first = slash < 0 ? '' : uri.slice(0, slash);
  if (first && (/[.:]/.test(first) || first === 'localhost')) return undefined;
  const repository = uri.split(/[:@]/)[0];
  const dlc = Object.keys(IMAGE_REPOSITORIES).includes(repository) ? repository : undefined;
  const tag = /^[^@]*:([^@/]+)$/.exec(uri)?.[1] ?? '<tag>';
  const account = dlc ? (IMAGE_REPOSITORIES[dlc].accounts === 'dlc' ? DLC_ACCOUNTS : FIRST_PARTY_ACCOUNTS)['us-east-1'] : '123456789012';
  return (
    `ContainerImage.fromImageUri: got '${uri}'; allowed: an image URI with its registry host, e.g. ` +
    `${account}.dkr.ecr.us-east-1.amazonaws.com/${repository}:${tag} (without one the name means Docker Hub, which SageMaker does not pull from, ` +
    'and the model server cannot be recognised). Fix: ' +
    (dlc
      ? `ContainerImage.fromDlc('${dlc}', '${tag}') for AWS's image in the stack's Region, or the image's full ECR URI`
      : "the image's full ECR URI, or ContainerImage.fromEcrRepository")
  );
}

const ECR_URI = /^(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?\/([^:@]+)(?:[:@].+)?$/;

class UriImage extends ContainerImage {
  constructor(private readonly uri: string) {
    super();
  }
  public get modelServer(): ModelServer | undefined {
    const m = Token.isUnresolved(this.uri) ? null : ECR_URI.exec(this.uri);
    return m ? modelServerOfRepository(m[3]) : undefined;
  }
  public bind(scope: Construct, role: iam.IRole): ContainerImageConfig {
    const problem = imageUriProblem(this.uri);
    if (problem) throw new Error(problem); // reported with the other errors at synth (createModel)
    const m = Token.isUnresolved(this.uri) ? null : ECR_URI.exec(this.uri);
    if (m) {
      const [, account, region, repo] = m;
      grantEcrPull(role, Arn.format({ service: 'ecr', account, region, resource: 'repository', resourceName: repo }, Stack.of(scope)));
    }
    return { imageUri: this.uri };
  }
}

/** What model data resolves to once bound to a model's execution role. */
export interface ModelDataConfig {
  /** The S3 URI for `PrimaryContainer.ModelDataUrl`. */
  readonly uri: string;
}

/** The model artifact (`model.tar.gz`) in S3. Each source grants read access to exactly that object. */
export abstract class ModelData {
  /** An object in a bucket. */
  public static fromBucket(bucket: s3.IBucket, objectKey: string): ModelData {
    return new BucketModelData(bucket, objectKey);
  }

  /** An S3 URI, `s3://bucket/key`. */
  public static fromS3Uri(uri: string): ModelData {
    return new UriModelData(uri);
  }

  /**
   * A local `model.tar.gz`, uploaded as a CDK file asset at deploy time (no AWS call at synth).
   * The role may read exactly that object.
   */
  public static fromAsset(path: string): ModelData {
    return new AssetModelData(path);
  }

  /** Grants the role read access and returns the URI. */
  public abstract bind(scope: Construct, role: iam.IRole): ModelDataConfig;

  /** Problems with this source (for validation), empty when fine. */
  public validate(): string[] {
    return [];
  }
}

class BucketModelData extends ModelData {
  constructor(
    private readonly bucket: s3.IBucket,
    private readonly key: string,
  ) {
    super();
  }
  public bind(_scope: Construct, role: iam.IRole): ModelDataConfig {
    this.bucket.grantRead(role, this.key);
    return { uri: this.bucket.s3UrlForObject(this.key) };
  }
}

class AssetModelData extends ModelData {
  constructor(private readonly path: string) {
    super();
  }
  public validate(): string[] {
    if (!fs.existsSync(this.path)) {
      return [
        `model.modelData: got the file '${this.path}'; allowed: an existing model.tar.gz. Fix: build it first (the examples' models: npm run bundle), or use ModelData.fromS3Uri`,
      ];
    }
    return [];
  }
  public bind(scope: Construct, role: iam.IRole): ModelDataConfig {
    if (!fs.existsSync(this.path)) return { uri: 's3://missing-model-asset/model.tar.gz' }; // reported by validate()
    // One asset per file per construct: the same file bound twice (primary and fallback) is uploaded once.
    const id = `ModelData${createHash('sha256').update(this.path).digest('hex').slice(0, 8)}`;
    const asset = (scope.node.tryFindChild(id) as s3assets.Asset | undefined) ?? new s3assets.Asset(scope, id, { path: this.path });
    // Exactly that object (Asset.grantRead would allow s3:GetObject*, GetBucket* and List* on the whole assets bucket).
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:GetObject'],
        resources: [`arn:${Aws.PARTITION}:s3:::${asset.s3BucketName}/${asset.s3ObjectKey}`],
      }),
    );
    return { uri: asset.s3ObjectUrl };
  }
}

const S3_URI = /^s3:\/\/([^/]+)\/(.+)$/;

class UriModelData extends ModelData {
  constructor(private readonly uri: string) {
    super();
  }
  public validate(): string[] {
    if (Token.isUnresolved(this.uri) || S3_URI.test(this.uri)) return [];
    return [
      `model.modelData: got '${this.uri}'; allowed: an S3 URI of the form s3://bucket/key. Fix: point at the model.tar.gz object, e.g. s3://my-bucket/models/model.tar.gz`,
    ];
  }
  public bind(_scope: Construct, role: iam.IRole): ModelDataConfig {
    const m = Token.isUnresolved(this.uri) ? null : S3_URI.exec(this.uri);
    if (m) {
      const [, bucket, key] = m;
      const objectArn = `arn:${Aws.PARTITION}:s3:::${bucket}/${key.endsWith('/') ? `${key}*` : key}`;
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [objectArn] }));
    }
    return { uri: this.uri };
  }
}
