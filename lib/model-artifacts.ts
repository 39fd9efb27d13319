import { Arn, Aws, Stack, Token } from 'aws-cdk-lib';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { acknowledgeWildcard } from './nag';

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
  /** An image in an ECR repository of this (or another) account, by tag. */
  public static fromEcrRepository(repository: ecr.IRepository, tag: string = 'latest'): ContainerImage {
    return new EcrImage(repository, tag);
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
}

class EcrImage extends ContainerImage {
  constructor(private readonly repository: ecr.IRepository, private readonly tag: string) {
    super();
  }
  public bind(_scope: Construct, role: iam.IRole): ContainerImageConfig {
    this.repository.grantPull(role);
    return { imageUri: this.repository.repositoryUriForTag(this.tag) };
  }
}

const ECR_URI = /^(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?\/([^:@]+)(?:[:@].+)?$/;

class UriImage extends ContainerImage {
  constructor(private readonly uri: string) {
    super();
  }
  public bind(scope: Construct, role: iam.IRole): ContainerImageConfig {
    const m = Token.isUnresolved(this.uri) ? null : ECR_URI.exec(this.uri);
    if (m) {
      const [, account, region, repo] = m;
      role.addToPrincipalPolicy(new iam.PolicyStatement({
        actions: ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'],
        resources: [Arn.format({ service: 'ecr', account, region, resource: 'repository', resourceName: repo }, Stack.of(scope))],
      }));
      // GetAuthorizationToken has no resource-level permissions: AWS requires "*".
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ecr:GetAuthorizationToken'], resources: ['*'] }));
      acknowledgeWildcard(role, 'Resource', '*', 'ecr:GetAuthorizationToken and cloudwatch:PutMetricData have no resource-level permissions (AWS requires "*"); PutMetricData is limited by a cloudwatch:namespace condition.');
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

  /** Grants the role read access and returns the URI. */
  public abstract bind(scope: Construct, role: iam.IRole): ModelDataConfig;

  /** Problems with this source (for validation), empty when fine. */
  public validate(): string[] {
    return [];
  }
}

class BucketModelData extends ModelData {
  constructor(private readonly bucket: s3.IBucket, private readonly key: string) {
    super();
  }
  public bind(_scope: Construct, role: iam.IRole): ModelDataConfig {
    this.bucket.grantRead(role, this.key);
    return { uri: this.bucket.s3UrlForObject(this.key) };
  }
}

const S3_URI = /^s3:\/\/([^/]+)\/(.+)$/;

class UriModelData extends ModelData {
  constructor(private readonly uri: string) {
    super();
  }
  public validate(): string[] {
    if (Token.isUnresolved(this.uri) || S3_URI.test(this.uri)) return [];
    return [`model.modelData: got '${this.uri}'; allowed: an S3 URI of the form s3://bucket/key. Fix: point at the model.tar.gz object, e.g. s3://my-bucket/models/model.tar.gz`];
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
