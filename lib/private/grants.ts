/**
 * What ResilientEndpoint's execution role needs beyond pulling its image and model data (which the
 * image and model-data sources grant): SageMaker's own logs and metrics, the containers' stage
 * metrics, and reading the deployment's rollback alarms.
 */
import { ArnFormat, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { acknowledgeWildcard } from '../nag';

/** SageMaker writes the endpoint's container logs and its `/aws/sagemaker/*` metrics with the execution role. */
export function grantSageMakerRuntime(scope: Construct, role: iam.IRole, endpointName: string): void {
  const logGroups = Stack.of(scope).formatArn({
    service: 'logs',
    resource: 'log-group',
    resourceName: `/aws/sagemaker/Endpoints/${endpointName}:*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
      resources: [logGroups, logGroups.replace(/:\*$/, '')],
    }),
  );
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['cloudwatch:PutMetricData'],
      resources: ['*'], // PutMetricData has no resource-level permissions; the namespace condition scopes it
      conditions: { StringLike: { 'cloudwatch:namespace': ['/aws/sagemaker/*'] } },
    }),
  );
  acknowledgeWildcard(
    role,
    'Resource',
    '*',
    'cloudwatch:PutMetricData (and ecr:GetAuthorizationToken) have no resource-level permissions, so AWS requires "*"; PutMetricData is limited by a cloudwatch:namespace condition.',
  );
  acknowledgeWildcard(
    role,
    'Resource',
    logGroups,
    'SageMaker names the endpoint log group /aws/sagemaker/Endpoints/<endpoint-name> and its streams per variant and instance; the statement allows log writes under that prefix only.',
  );
}

/** The containers publish their per-stage metrics into one namespace. */
export function grantStageMetrics(role: iam.IRole, namespace: string): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['cloudwatch:PutMetricData'],
      resources: ['*'], // no resource-level permissions; scoped by namespace
      conditions: { StringEquals: { 'cloudwatch:namespace': namespace } },
    }),
  );
}

/** SageMaker reads the rollback alarms with the execution role (developer guide, deployment-guardrails-configuration). */
export function grantRollbackAlarms(role: iam.IRole, alarms: cloudwatch.IAlarm[]): void {
  if (alarms.length)
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['cloudwatch:DescribeAlarms'], resources: alarms.map(a => a.alarmArn) }));
}
