/**
 * The AWS clients of the operator commands (`doctor`, `drill`): the AWS SDK v3 with the default
 * credential chain and Region (or `--region`). Bundled with the SDK into dist/cli-bundles/ops.js at
 * build time (scripts/bundle-lambda.mjs), so the installed package needs no SDK of its own.
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

/** Clients for one Region (undefined: the SDK's default chain: AWS_REGION, the profile's region). */
export function opsClients(region?: string, maxAttempts = 3): OpsClients {
  const o = { region, maxAttempts };
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

/** An AWS error's name (the SDK's `name`, e.g. 'ThrottlingException', 'Throttling', 'AccessDeniedException'). */
export function errorName(e: unknown): string {
  return (e as { name?: string })?.name ?? 'Error';
}

/** Whether AWS refused the call for its rate (the SDK gave up retrying). */
export function isThrottling(e: unknown): boolean {
  return /thrott|TooManyRequests|RequestLimitExceeded|SlowDown/i.test(errorName(e));
}

export function isAccessDenied(e: unknown): boolean {
  return /AccessDenied|UnauthorizedOperation|NotAuthorized/i.test(errorName(e));
}
