/**
 * The AWS clients of the operator commands (`doctor`, `drill`): the AWS SDK v3 with the default
 * credential chain and Region (or `--region`). Bundled with the SDK into dist/cli-bundles/ops.js at
 * build time (scripts/bundle-lambda.mjs), so the installed package needs no SDK of its own.
 *
 * Every call has a time limit and a bounded retry: a connection that does not open in
 * `connectionTimeoutMs`, or a request with no complete answer in `requestTimeoutMs`, fails with a
 * `TimeoutError` (the SDK's handler with `throwOnRequestTimeout`; without it the handler only logs), and
 * the SDK's standard retry tries `maxAttempts` times in all, with backoff, for timeouts, throttling and
 * other transient errors. A call therefore gives up after about maxAttempts × requestTimeoutMs plus the
 * backoff; `doctor` bounds its whole run on top of that (doctor.ts, DOCTOR_DEADLINE_MS).
 */
import { ApplicationAutoScalingClient } from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { SNSClient } from '@aws-sdk/client-sns';
import { SSMClient } from '@aws-sdk/client-ssm';

export interface OpsClients {
  readonly sagemaker: SageMakerClient;
  readonly runtime: SageMakerRuntimeClient;
  readonly cloudwatch: CloudWatchClient;
  readonly sns: SNSClient;
  readonly lambda: LambdaClient;
  readonly dynamodb: DynamoDBClient;
  readonly ssm: SSMClient;
  readonly autoscaling: ApplicationAutoScalingClient;
  readonly events: EventBridgeClient;
  readonly s3: S3Client;
}

/** Time limits of one AWS call. */
export interface CallLimits {
  /** Tries per call in all (the SDK's standard retry, with backoff). @default 3 */
  readonly maxAttempts?: number;
  /** A request with no complete answer within this is abandoned (TimeoutError) and retried. @default 10000 */
  readonly requestTimeoutMs?: number;
  /** A connection not open within this is abandoned (TimeoutError) and retried. @default 5000 */
  readonly connectionTimeoutMs?: number;
  /** Another endpoint for every service (a local server in tests; the SDK also reads AWS_ENDPOINT_URL). */
  readonly endpoint?: string;
  /** Credentials instead of the default chain (tests). */
  readonly credentials?: { accessKeyId: string; secretAccessKey: string };
}

export const DEFAULT_LIMITS = { maxAttempts: 3, requestTimeoutMs: 10_000, connectionTimeoutMs: 5_000 } as const;

/**
 * The Region to use: `--region`, else AWS_REGION, else AWS_DEFAULT_REGION (which the AWS CLI and boto3
 * read and the JavaScript SDK does not: real-account.md item 45), else undefined (the SDK then reads the
 * profile's `region`).
 */
export function resolveRegion(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return flag || env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined;
}

/** Clients for one Region (undefined: the SDK's default chain: AWS_REGION, the profile's region). */
export function opsClients(region?: string, maxAttempts: number = DEFAULT_LIMITS.maxAttempts, limits: CallLimits = {}): OpsClients {
  quietNodeNotice();
  const o = {
    region,
    maxAttempts: limits.maxAttempts ?? maxAttempts,
    requestHandler: {
      requestTimeout: limits.requestTimeoutMs ?? DEFAULT_LIMITS.requestTimeoutMs,
      connectionTimeout: limits.connectionTimeoutMs ?? DEFAULT_LIMITS.connectionTimeoutMs,
      throwOnRequestTimeout: true,
    },
    ...(limits.endpoint ? { endpoint: limits.endpoint } : {}),
    ...(limits.credentials ? { credentials: limits.credentials } : {}),
  };
  return {
    sagemaker: new SageMakerClient(o),
    runtime: new SageMakerRuntimeClient(o),
    cloudwatch: new CloudWatchClient(o),
    sns: new SNSClient(o),
    lambda: new LambdaClient(o),
    dynamodb: new DynamoDBClient(o),
    ssm: new SSMClient(o),
    autoscaling: new ApplicationAutoScalingClient(o),
    events: new EventBridgeClient(o),
    s3: new S3Client(o),
  };
}

/**
 * The same clients, every call of which is aborted when `signal` is (the SDK's `abortSignal`): what a
 * run's time bound uses to leave no request behind.
 */
export function withAbort(c: OpsClients, signal: AbortSignal): OpsClients {
  const wrap = <T extends object>(client: T): T =>
    new Proxy(client, {
      get(target, prop, receiver) {
        if (prop !== 'send') return Reflect.get(target, prop, receiver);
        return (command: unknown, options?: object) => (target as any).send(command, { ...(options ?? {}), abortSignal: signal });
      },
    });
  return Object.fromEntries(Object.entries(c).map(([k, v]) => [k, wrap(v)])) as unknown as OpsClients;
}

/**
 * The SDK prints an 8-line NodeVersionSupportWarning on Node.js < 22 at the first client, in the middle
 * of the output; the commands print one line after their report instead (`nodeNotice`). A user's own
 * AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED stands.
 */
function quietNodeNotice(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}

/** One line about the Node.js version the SDK will stop supporting, or undefined. */
export function nodeNotice(version: string = process.version): string | undefined {
  const major = Number(/^v(\d+)/.exec(version)?.[1]);
  return major < 22
    ? `note: Node.js ${version}: AWS SDK for JavaScript releases after the first week of January 2027 need Node.js 22 or later (this command works as is).`
    : undefined;
}

/** An AWS error's name (the SDK's `name`, e.g. 'ThrottlingException', 'Throttling', 'AccessDeniedException'). */
export function errorName(e: unknown): string {
  return (e as { name?: string })?.name ?? 'Error';
}

/** Whether AWS refused the call for its rate (the SDK gave up retrying). */
export function isThrottling(e: unknown): boolean {
  return /thrott|TooManyRequests|RequestLimitExceeded|SlowDown/i.test(errorName(e));
}

/** Whether the caller lacks a permission (SNS says AuthorizationErrorException: real-account.md item 45). */
export function isAccessDenied(e: unknown): boolean {
  return /AccessDenied|UnauthorizedOperation|NotAuthorized|AuthorizationError/i.test(errorName(e));
}

/** Whether the call got no answer in time (the handler's TimeoutError, after the SDK's retries). */
export function isTimeout(e: unknown): boolean {
  const x = e as { name?: string; code?: string };
  return x?.name === 'TimeoutError' || x?.code === 'ETIMEDOUT';
}

/** What to do about an error that stopped a call: every error names its fix (`command`: what to run again). */
export function fixFor(e: unknown, command: 'doctor' | 'drill' = 'doctor'): string {
  const name = errorName(e);
  const msg = String((e as Error)?.message ?? '');
  if (/Region is missing/i.test(msg)) return 'pass --region R (or set AWS_REGION or AWS_DEFAULT_REGION, or region in your AWS profile)';
  if (name === 'CredentialsProviderError' || /Could not load credentials/i.test(msg))
    return `configure AWS credentials (aws configure, AWS_PROFILE, or aws sso login) and run ${command} again`;
  if (/ExpiredToken|RequestExpired|TokenRefreshRequired/i.test(name) || /expired/i.test(msg))
    return `your credentials expired: refresh them (aws sso login, or new session credentials) and run ${command} again`;
  if (/UnrecognizedClient|InvalidClientTokenId|InvalidSignature|SignatureDoesNotMatch/i.test(name))
    return 'the credentials are not valid in this account or partition: check AWS_PROFILE and --region';
  if (isTimeout(e))
    return `no answer from AWS in time: check the network, a proxy (HTTPS_PROXY) or the VPC endpoint to the service, and --region; then run ${command} again`;
  if (
    /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH/.test(msg) ||
    /ENOTFOUND|ECONNREFUSED|ECONNRESET/.test(String((e as { code?: string })?.code))
  )
    return 'AWS could not be reached: check the network, a proxy (HTTPS_PROXY) and --region (a Region name that does not exist resolves to no endpoint)';
  if (isThrottling(e)) return `AWS throttled the call after the SDK retries: run ${command} again in a minute`;
  if (isAccessDenied(e))
    return command === 'doctor'
      ? "grant the caller the action named in the error (docs/operations.md: doctor's permissions)"
      : "grant the caller the action named in the error (docs/operations.md: drill's permissions)";
  return `${name} is not one ${command} knows: read the message, check --endpoint and --region, then run ${command} again`;
}
