import { Duration, RemovalPolicy, Token, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { acknowledgeWildcard } from './nag';
import { Described, PropErrors } from './validation';
import { UNIT_PROPS, unitsChecked } from './private/unit-props';
import { guardResourceTypes } from './region-resource-types';

/** Which side of each invocation is captured. */
export enum CaptureMode {
  /** Requests only. */
  INPUT = 'Input',
  /** Responses only. */
  OUTPUT = 'Output',
  /** Requests and responses. */
  INPUT_AND_OUTPUT = 'InputAndOutput',
}

/** Data capture settings. On by default at 1 % sampling. */
export interface DataCaptureOptions {
  /**
   * Capture at all. Capture buffers cost container memory (incident A), so keep sampling low.
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * Percentage of invocations captured: an integer from 1 to 100 (SageMaker accepts integers only,
   * so sampling below 1 % is impossible).
   * @default 1
   */
  readonly samplingPercentage?: number;
  /**
   * What to capture.
   * @default CaptureMode.INPUT_AND_OUTPUT
   */
  readonly captureMode?: CaptureMode;
  /**
   * Content types captured as JSON (at most 10).
   * @default ['application/json']
   */
  readonly jsonContentTypes?: string[];
  /**
   * Content types captured as CSV (at most 10).
   * @default - none
   */
  readonly csvContentTypes?: string[];
  /**
   * Destination bucket.
   * @default - a bucket created by the construct: KMS-encrypted, SSL only, public access blocked,
   * server access logs on, captured objects (those under `prefix`) expiring after `retention`
   */
  readonly bucket?: s3.IBucket;
  /**
   * Key prefix inside the bucket (no leading or trailing slash).
   * @default 'data-capture'
   */
  readonly prefix?: string;
  /**
   * KMS key SageMaker uses to encrypt captured objects.
   * @default - the bucket's default encryption (the AWS-managed `aws/s3` key for a created bucket)
   */
  readonly encryptionKey?: kms.IKey;
  /**
   * How long captured objects (those under `prefix`) are kept in a bucket the construct creates. Only the
   * capture prefix expires: the drift monitor's learned baselines (`drift-baselines/`) are kept.
   * @default Duration.days(30)
   */
  readonly retention?: Duration;
}

/** Props of {@link DataCapture}. */
export interface DataCaptureProps extends DataCaptureOptions {
  /** The model execution role that writes the captured objects. */
  readonly role: iam.IRole;
}

/**
 * The capture destination and the `DataCaptureConfig` of an endpoint config.
 * Usable alone with a hand-written `CfnEndpointConfig`.
 */
export class DataCapture extends Construct {
  /** The destination bucket (undefined when capture is disabled). */
  public readonly bucket?: s3.IBucket;
  /** The `DataCaptureConfig` to put on the endpoint config (undefined when disabled). */
  public readonly config?: sagemaker.CfnEndpointConfig.DataCaptureConfigProperty;
  /** The sampling percentage in force (0 when disabled). */
  public readonly samplingPercentage: number;

  constructor(scope: Construct, id: string, props: DataCaptureProps) {
    super(scope, id);
    guardResourceTypes(this);
    // Server access logs are granted through a bucket policy, never the legacy `AccessControl`
    // (LogDeliveryWrite ACL), whatever the consumer's app sets: aws-cdk-lib reads this feature flag
    // from the construct tree, so setting it here, before the buckets exist, scopes it to them.
    this.node.setContext(cxapi.S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);
    props = unitsChecked(this, props, UNIT_PROPS.DataCaptureProps);
    const errors = validateDataCapture(props);
    this.node.addValidation({ validate: () => errors.all });

    if (props.enabled === false) {
      this.samplingPercentage = 0;
      return;
    }
    this.samplingPercentage = props.samplingPercentage ?? 1;
    const prefix = (props.prefix ?? 'data-capture').replace(/^\/+|\/+$/g, '');

    if (props.bucket) {
      this.bucket = props.bucket;
    } else {
      const logs = new s3.Bucket(this, 'AccessLogs', {
        encryption: s3.BucketEncryption.S3_MANAGED, // log delivery cannot write to KMS-encrypted buckets
        enforceSSL: true,
        blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
        objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED, // log delivery is granted by bucket policy: no ACLs needed
        lifecycleRules: [{ expiration: Duration.days(90) }],
        removalPolicy: RemovalPolicy.RETAIN,
      });
      Validations.of(logs).acknowledge({
        id: 'AwsSolutions-S1',
        reason: 'This is the server-access-log bucket of the data capture bucket; logging it into itself would recurse.',
      });
      this.bucket = new s3.Bucket(this, 'Bucket', {
        encryption: props.encryptionKey ? s3.BucketEncryption.KMS : s3.BucketEncryption.KMS_MANAGED,
        encryptionKey: props.encryptionKey,
        bucketKeyEnabled: true,
        enforceSSL: true,
        blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
        serverAccessLogsBucket: logs,
        serverAccessLogsPrefix: 'capture-bucket/',
        // The capture prefix only (S3 LifecycleRule: a rule without a filter applies to every object): the
        // drift monitor's learned baselines sit beside it (drift-baselines/) and must outlive the capture,
        // or each would be re-learned every `retention` from current traffic, absorbing slow drift.
        lifecycleRules: [{ id: 'ExpireCapture', prefix: `${prefix}/`, expiration: Duration.days(retentionDays(props.retention)) }],
        removalPolicy: RemovalPolicy.RETAIN,
      });
    }

    const objects = this.bucket.arnForObjects(`${prefix}/*`);
    props.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [objects] }));
    props.encryptionKey?.grantEncrypt(props.role);
    acknowledgeWildcard(
      props.role,
      'Resource',
      objects,
      'SageMaker writes data-capture objects under generated keys (endpoint/variant/yyyy/mm/dd/hh/<uuid>.jsonl) below the capture prefix; only s3:PutObject is allowed there.',
    );

    const json = props.jsonContentTypes ?? ['application/json'];
    const csv = props.csvContentTypes ?? [];
    this.config = {
      enableCapture: true,
      initialSamplingPercentage: this.samplingPercentage,
      destinationS3Uri: this.bucket.s3UrlForObject(prefix),
      kmsKeyId: props.encryptionKey?.keyArn,
      captureOptions: captureModes(props.captureMode ?? CaptureMode.INPUT_AND_OUTPUT),
      captureContentTypeHeader: {
        jsonContentTypes: json.length ? json : undefined,
        csvContentTypes: csv.length ? csv : undefined,
      },
    };
  }
}

/** Lifecycle days from the retention: whole and ≥ 1 (bad values are reported by validation). */
function retentionDays(retention: Duration | undefined): number {
  const days = retention?.toDays({ integral: false }) ?? 30;
  return Math.max(1, Math.round(days));
}

function captureModes(mode: CaptureMode): sagemaker.CfnEndpointConfig.CaptureOptionProperty[] {
  if (mode === CaptureMode.INPUT_AND_OUTPUT) return [{ captureMode: 'Input' }, { captureMode: 'Output' }];
  return [{ captureMode: mode }];
}

/** Pure validation of data-capture options. */
export function validateDataCapture(props: DataCaptureOptions): PropErrors {
  const errors = new PropErrors();
  if (props.enabled === false) return errors;
  const s = props.samplingPercentage;
  if (s !== undefined && !Token.isUnresolved(s) && (!Number.isInteger(s) || s < 1 || s > 100)) {
    const fix =
      s > 0 && s < 1
        ? // Below 1 % (the default) or a fraction given for a percentage (0.5 for 50 %): both readings named.
          `SageMaker accepts whole percentages only, so 1 is the minimum; use 1 (or ${+(s * 100).toPrecision(12)} if ${s} was a fraction for ${+(s * 100).toPrecision(12)} %), or set enabled: false to switch capture off`
        : 'use a whole percentage from 1 to 100 (1 is the incident-proven default)';
    errors.add('dataCapture.samplingPercentage', s, 'an integer from 1 to 100', fix);
  }
  for (const [name, list] of [
    ['jsonContentTypes', props.jsonContentTypes],
    ['csvContentTypes', props.csvContentTypes],
  ] as const) {
    if (list && list.length > 10)
      errors.add(
        `dataCapture.${name}`,
        new Described(`${list.length} entries`),
        'at most 10 content types',
        'list only the content types your clients send',
      );
  }
  if (props.prefix !== undefined && !Token.isUnresolved(props.prefix) && (props.prefix.length === 0 || props.prefix.length > 400)) {
    errors.add('dataCapture.prefix', props.prefix, 'a non-empty key prefix of at most 400 characters', "use e.g. 'data-capture'");
  }
  const days = props.retention?.toDays({ integral: false });
  if (days !== undefined && !(Number.isInteger(days) && days >= 1)) {
    errors.add(
      'dataCapture.retention',
      new Described(`${props.retention!.toHumanString()} (${+days.toFixed(3)} days)`),
      'whole days, at least 1 (S3 lifecycle expiration counts days)',
      'use e.g. Duration.days(30)',
    );
  }
  if (props.bucket && props.retention) {
    errors.add(
      'dataCapture.retention',
      new Described(`${props.retention.toDays({ integral: false })} days`),
      'only with a bucket the construct creates',
      'set the lifecycle on your own bucket, or drop `retention`',
    );
  }
  return errors;
}
