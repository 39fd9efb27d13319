/**
 * How a breaker function is wired, for one endpoint or shared by several: the pre-built bundle, the
 * function with its table, log group, dead-letter queue, role and schedule, and the tag-scoped grant
 * on the scalable targets it may adjust.
 */
import * as fs from 'fs';
import * as path from 'path';
import { ArnFormat, Duration, Lazy, RemovalPolicy, Stack, Tags, Token, Tokenization } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { VariantAutoScaling } from '../auto-scaling';
import { acknowledgeWildcard } from '../nag';
import { BREAKER_ENV as ENV, BREAKER_NAMESPACE, BREAKER_TAG } from './contract';

/** Tag on the scalable targets a breaker may adjust (its IAM grant is conditioned on it). */
export { BREAKER_TAG };
/** Where the pre-built Lambda bundle lives, for the source tree and the packed library alike (undefined: not built). */
export function lambdaBundleDir(name: string): string | undefined {
  const candidates = [
    path.join(__dirname, '..', '..', 'lambda-bundles', name), // dist/lib/breaker → dist/lambda-bundles
    path.join(__dirname, '..', '..', 'dist', 'lambda-bundles', name), // lib/breaker → dist/lambda-bundles (source tree)
  ];
  return candidates.find(p => fs.existsSync(path.join(p, 'index.js')));
}

/**
 * The code of a pre-built function: its bundle as an asset, or — when it has not been built (a source
 * checkout before `npm run bundle`) — a placeholder and a synth error on `scope` that says how to build
 * it, instead of a stack trace.
 */
export function bundledCode(scope: Construct, name: string): lambda.Code {
  const dir = lambdaBundleDir(name);
  if (dir) return lambda.Code.fromAsset(dir);
  scope.node.addValidation({
    validate: () => [
      `the pre-built Lambda bundle '${name}' is missing (dist/lambda-bundles/${name}/index.js); allowed: a built library. ` +
        "Fix: run 'npm run bundle' (or 'npm run synth', which builds it) in the library's folder; an installed package ships it built",
    ],
  });
  return lambda.Code.fromInline('exports.handler = async () => { throw new Error("bundle missing"); };');
}

/** The function and what it needs, as one breaker (own or shared) runs it. */
export interface BreakerRuntime {
  /** The function. */
  readonly function: lambda.Function;
  /** Its role. */
  readonly role: iam.Role;
  /** Failed invocations. */
  readonly deadLetterQueue: sqs.Queue;
  /** The breakers' state items. */
  readonly stateTable: dynamodb.Table;
  /** The statement allowing the SageMaker actions: its resources are the endpoints served. */
  readonly endpoints: iam.PolicyStatement;
}

/**
 * The breaker function with its table, log group, dead-letter queue, role and 1-minute schedule,
 * created under `scope` (the same construct ids for an own or a shared breaker).
 */
export function createBreakerRuntime(
  scope: Construct,
  o: { description: string; logRetention?: logs.RetentionDays; reservedConcurrency?: number; environment: Record<string, string> },
): BreakerRuntime {
  // The breaker's own state, in items only the function writes (CloudFormation owns the table, never
  // its items), with a version for compare-and-swap between concurrent evaluations.
  const stateTable = new dynamodb.Table(scope, 'StateTable', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    removalPolicy: RemovalPolicy.DESTROY, // runtime state only: rebuilt from CLOSED by the next evaluation
  });
  const logGroup = new logs.LogGroup(scope, 'Logs', {
    retention: o.logRetention ?? logs.RetentionDays.THREE_MONTHS,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  const deadLetterQueue = new sqs.Queue(scope, 'DeadLetters', {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  const role = new iam.Role(scope, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description: o.description });
  const endpoints = new iam.PolicyStatement({ actions: ['sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpointWeightsAndCapacities'] });
  role.addToPrincipalPolicy(endpoints);
  stateTable.grant(role, 'dynamodb:GetItem', 'dynamodb:PutItem');
  // Reads without resource-level permissions: metrics, and the live scalable targets before the breaker
  // changes them (a stack update may have reset them).
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['cloudwatch:GetMetricData', 'application-autoscaling:DescribeScalableTargets'], resources: ['*'] }),
  );
  acknowledgeWildcard(
    role,
    'Resource',
    '*',
    'cloudwatch:GetMetricData and application-autoscaling:DescribeScalableTargets have no resource-level permissions; AWS requires "*". They only read.',
  );
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }));
  const fn = new lambda.Function(scope, 'Function', {
    description: o.description,
    runtime: lambda.Runtime.NODEJS_24_X,
    architecture: lambda.Architecture.ARM_64,
    handler: 'index.handler',
    code: bundledCode(scope, 'circuit-breaker'),
    role,
    memorySize: 256,
    timeout: Duration.seconds(60),
    reservedConcurrentExecutions: o.reservedConcurrency,
    logGroup,
    deadLetterQueue,
    retryAttempts: 2,
    environment: { ...o.environment, [ENV.TABLE_NAME]: stateTable.tableName },
  });
  deadLetterQueue.grantSendMessages(role);
  new events.Rule(scope, 'Schedule', {
    description: 'Evaluate the circuit breaker every minute (recovery steps)',
    schedule: events.Schedule.rate(Duration.minutes(1)),
    targets: [new targets.LambdaFunction(fn, { deadLetterQueue, retryAttempts: 2 })],
  });
  return { function: fn, role, deadLetterQueue, stateTable, endpoints };
}

/**
 * Capacity actions go through Application Auto Scaling's own settings of exactly these targets. A
 * scalable target's ARN has a generated id that CloudFormation does not return, so the grant is scoped
 * by a tag put on the targets (aws:ResourceTag; inferred from Application Auto Scaling's tag-based
 * authorization: were it not honoured, the call is denied, the function logs it, and weights and the
 * degrade level work as before) — or, without tags (`tagged` false, for Regions whose CloudFormation
 * does not know `Tags` on scalable targets yet), to the account's SageMaker variant targets in this
 * Region by RegisterScalableTarget's own condition keys (service authorization reference:
 * application-autoscaling:service-namespace and application-autoscaling:scalable-dimension).
 */
export function grantScaling(scope: Construct, role: iam.IRole, scaled: VariantAutoScaling[], tagValue: string, tagged = true): void {
  if (!scaled.length) return;
  if (tagged) for (const t of scaled) Tags.of(t.scalableTarget).add(BREAKER_TAG, tagValue);
  const anyTarget = Stack.of(scope).formatArn({
    service: 'application-autoscaling',
    resource: 'scalable-target',
    resourceName: '*',
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['application-autoscaling:RegisterScalableTarget'],
      resources: [anyTarget],
      conditions: tagged
        ? { StringEquals: { [`aws:ResourceTag/${BREAKER_TAG}`]: tagValue } }
        : {
            StringEquals: {
              'application-autoscaling:service-namespace': 'sagemaker',
              'application-autoscaling:scalable-dimension': 'sagemaker:variant:DesiredInstanceCount',
            },
          },
    }),
  );
  acknowledgeWildcard(
    role,
    'Resource',
    anyTarget,
    tagged
      ? 'A scalable target ARN ends in an id CloudFormation does not return; the statement is limited to the targets tagged for this breaker (aws:ResourceTag condition).'
      : "A scalable target ARN ends in an id CloudFormation does not return, and the targets are untagged (tagScalableTargets: false, for Regions whose CloudFormation lacks scalable-target Tags): limited to SageMaker variant instance counts by the action's condition keys.",
  );
}

/** EventBridge's largest event pattern: 2,048 characters (EventBridge user guide, eb-quota). */
export const EVENT_PATTERN_LIMIT = 2048;

/** The longest an endpoint name can be (SageMaker's EndpointName: 63 characters): a token's estimate. */
export const MAX_ENDPOINT_NAME = 63;

/**
 * The length a string will have once deployed: its literal characters, and `tokenLength` for each
 * token in it (a CloudFormation reference whose value is unknown at synth).
 */
export function deployedLength(value: string, tokenLength: number): number {
  if (!Token.isUnresolved(value)) return value.length;
  const fragments = Tokenization.reverseString(value);
  // Every token as `tokenLength` placeholder characters, then the joined text's length.
  return String(fragments.mapTokens({ mapToken: () => 'x'.repeat(tokenLength) }).join({ join: (a: unknown, b: unknown) => `${a}${b}` })).length;
}

/**
 * Rules whose pattern lists values (endpoint names, alarm names), split so that each pattern stays within
 * EventBridge's 2,048 characters whatever the number of values: a new rule starts when the next value
 * would not fit. The first rule keeps `id`; the next are `${id}2`, `${id}3`, ….
 */
export class ListRules {
  private readonly groups: { values: string[]; size: number; rule: events.Rule }[] = [];

  constructor(
    private readonly scope: Construct,
    private readonly id: string,
    private readonly description: string,
    /** The pattern for a list of values. */
    private readonly pattern: (values: string[]) => events.EventPattern,
    private readonly target: () => events.IRuleTarget,
  ) {}

  /** The rules created so far. */
  public get rules(): events.Rule[] {
    return this.groups.map(g => g.rule);
  }

  /** The largest pattern, in deployed characters (an estimate for tokens, see `deployedLength`). */
  public get largestPattern(): number {
    return Math.max(0, ...this.groups.map(g => g.size));
  }

  /** Adds a value whose deployed length is `length`. */
  public add(value: string, length: number): void {
    let group = this.groups[this.groups.length - 1];
    // A rule holds at least one value, so a value longer than the limit gets a rule of its own (and the
    // validation reports it); a further value adds its quotes and a comma.
    if (!group || group.size + length + 3 > EVENT_PATTERN_LIMIT) {
      const values: string[] = [];
      const n = this.groups.length + 1;
      const rule = new events.Rule(this.scope, n === 1 ? this.id : `${this.id}${n}`, {
        description: n === 1 ? this.description : `${this.description} (part ${n})`,
        eventPattern: this.pattern(Lazy.list({ produce: () => values })),
        targets: [this.target()],
      });
      group = { values, size: JSON.stringify(this.pattern([])).length, rule };
      this.groups.push(group);
    }
    group.size += length + (group.values.length ? 3 : 2); // ,"value" or, the first, "value"
    group.values.push(value);
  }
}

/** Lambda's limit on a function's environment variables: 4 KB, keys and values (Lambda quotas). */
export const LAMBDA_ENVIRONMENT_LIMIT = 4096;

/** IAM's default quota of managed policies attached to a role: 10 (adjustable to 20; IAM quotas). */
export const IAM_MANAGED_POLICIES_PER_ROLE = 10;

/** The most managed policies a role can have once the quota is raised: 20 (IAM quotas; AWS knowledge center iam-increase-policy-size). */
export const IAM_MANAGED_POLICIES_PER_ROLE_MAX = 20;

/**
 * The longest name CloudFormation generates for an `AWS::SSM::Parameter` without a `Name`: 40 characters
 * ("CFN-" + the logical id, truncated, + "-" + 12 random characters: the SSM resource provider's
 * CreateHandler with cloudformation-java-plugin IdentifierUtils, GENERATED_PHYSICALID_MAXLEN = 40).
 */
export const GENERATED_PARAMETER_NAME_MAX = 40;

/**
 * The deployed size of a shared breaker's environment (keys and values): one settings-parameter name per
 * endpoint (a generated name is at most 40 characters), the table name (CloudFormation names it
 * <stack>-<logical id>-<12 random>), and the fixed variables.
 */
export function sharedEnvironmentBytes(settingsParameters: string[], table: dynamodb.Table): number {
  const stack = Stack.of(table);
  const tableName = Math.min(
    255,
    deployedLength(stack.stackName, 128) + stack.getLogicalId(table.node.defaultChild as dynamodb.CfnTable).length + 14,
  );
  const names =
    settingsParameters.reduce((n, p) => n + deployedLength(p, GENERATED_PARAMETER_NAME_MAX), 0) + Math.max(0, settingsParameters.length - 1);
  const fixed = [ENV.CONFIG_PARAMETERS, ENV.METRIC_NAMESPACE, ENV.TABLE_NAME].reduce((n, k) => n + k.length, 0) + BREAKER_NAMESPACE.length;
  return names + tableName + fixed;
}
