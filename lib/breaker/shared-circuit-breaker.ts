/**
 * One breaker function for several endpoints (a fleet's, or any stack's): its rules, its grants on
 * each registered endpoint, and the registration each endpoint's CircuitBreaker makes.
 */
import { Lazy, Stack, Tags, Token } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { VariantAutoScaling } from '../auto-scaling';
import { PropErrors, stackLabel } from '../validation';
import { BREAKER_ENV as ENV, BREAKER_NAMESPACE, ENDPOINT_EVENT_TYPES } from './contract';
import {
  BREAKER_TAG,
  BreakerRuntime,
  createBreakerRuntime,
  deployedLength,
  EVENT_PATTERN_LIMIT,
  grantScaling,
  IAM_MANAGED_POLICIES_PER_ROLE,
  IAM_MANAGED_POLICIES_PER_ROLE_MAX,
  LAMBDA_ENVIRONMENT_LIMIT,
  ListRules,
  MAX_ENDPOINT_NAME,
  sharedEnvironmentBytes,
} from './wiring';
import { guardResourceTypes } from '../region-resource-types';

/** What an endpoint hands a shared breaker. */
export interface SharedBreakerEndpoint {
  /** Endpoint name. */
  readonly endpointName: string;
  /** Endpoint ARN (the function may act on exactly the registered endpoints). */
  readonly endpointArn: string;
  /** The parameter with the endpoint's degrade level (read and written by the function). */
  readonly levelParameter: ssm.IStringParameter;
  /** The parameter with the endpoint's breaker settings (read by the function). */
  readonly settingsParameter: ssm.IStringParameter;
  /** Scalable targets the function may adjust. */
  readonly scalableTargets: VariantAutoScaling[];
  /**
   * Scope the function's grant on them by a tag put on the targets (see CircuitBreakerOptions.tagScalableTargets).
   * @default true
   */
  readonly tagScalableTargets?: boolean;
}

/**
 * One breaker function for several endpoints: one function, dead-letter queue, log group, 1-minute
 * schedule and state table (one item per endpoint), rules for the endpoints' breaker alarms and
 * state changes. Each evaluation batches its reads across the endpoints (GetMetricData takes up to
 * 500 queries a call) and decides for each endpoint on its own, so one endpoint's failure or
 * `Updating` status never delays another's. The function may act only on the registered endpoints,
 * their parameters and their tagged scalable targets. Use `SharedCircuitBreaker.of(scope)` for the
 * one of a stack, or create your own and pass it as `circuitBreaker.shared`.
 */
export class SharedCircuitBreaker extends Construct {
  /** The stack's shared breaker, created on first use. */
  public static of(scope: Construct): SharedCircuitBreaker {
    const stack = Stack.of(scope);
    const id = 'ResilientEndpointSharedBreaker';
    return (stack.node.tryFindChild(id) as SharedCircuitBreaker | undefined) ?? new SharedCircuitBreaker(stack, id);
  }

  /** The function. */
  public readonly function: lambda.Function;
  /** Failed invocations. */
  public readonly deadLetterQueue: sqs.Queue;
  /** One state item per endpoint. */
  public readonly stateTable: dynamodb.Table;
  private readonly runtime: BreakerRuntime;
  private readonly names: string[] = [];
  private readonly settings: string[] = [];

  constructor(
    scope: Construct,
    id: string,
    private readonly props: SharedCircuitBreakerProps = {},
  ) {
    super(scope, id);
    guardResourceTypes(this);
    this.runtime = createBreakerRuntime(this, {
      description: 'Memory circuit breaker of the SageMaker endpoints of this stack',
      logRetention: props.logRetention,
      environment: {
        [ENV.CONFIG_PARAMETERS]: Lazy.string({ produce: () => this.settings.join(',') }),
        [ENV.METRIC_NAMESPACE]: BREAKER_NAMESPACE,
      },
    });
    this.function = this.runtime.function;
    this.deadLetterQueue = this.runtime.deadLetterQueue;
    this.stateTable = this.runtime.stateTable;
    this.stateTable.grant(this.runtime.role, 'dynamodb:BatchGetItem'); // the endpoints' states in one read
    const target = () => new targets.LambdaFunction(this.function, { deadLetterQueue: this.deadLetterQueue, retryAttempts: 2 });
    // Exact lists (no wildcard rules: EventBridge allows 30 per bus, not adjustable), split into as many
    // rules as EventBridge's 2,048-character pattern limit needs (real-account.md item 25).
    this.alarmRules = new ListRules(
      this,
      'AlarmRule',
      'Evaluate the circuit breakers when one of their alarms (<endpoint>-<variant>-breaker-<metric>) changes state',
      alarmName => ({ source: ['aws.cloudwatch'], detailType: ['CloudWatch Alarm State Change'], detail: { alarmName } }),
      target,
    );
    this.endpointRules = new ListRules(
      this,
      'EndpointStateChange',
      'Re-evaluate a circuit breaker when its endpoint changes state or capacity (e.g. back to InService)',
      names => ({ source: ['aws.sagemaker'], detailType: ENDPOINT_EVENT_TYPES, detail: { EndpointName: names } }),
      target,
    );
    this.node.addValidation({ validate: () => this.validateLimits() });
  }

  /**
   * The limits a fleet meets at deploy, checked at synth (each error names the limit, the count and the
   * fix): Lambda's 4 KB environment, EventBridge's 2,048-character patterns, IAM's 10 managed policies
   * per role (real-account.md item 25).
   */
  private validateLimits(): string[] {
    const props = new PropErrors();
    // IAM's quota of managed policies per role: 10 by default, raised on request to at most 20 (IAM quotas;
    // AWS knowledge center "iam-increase-policy-size").
    props.range(
      'managedPolicyQuota',
      this.props.managedPolicyQuota,
      IAM_MANAGED_POLICIES_PER_ROLE,
      IAM_MANAGED_POLICIES_PER_ROLE_MAX,
      "give the account's quota of managed policies per role (IAM's default 10, at most 20), or leave it unset",
      true,
    );
    const errors: string[] = [...props.all, ...this.elsewhere];
    if (!this.names.length && !this.elsewhere.length) {
      errors.push(`got no endpoints; allowed: at least one. Fix: pass it as circuitBreaker.shared of a ResilientEndpoint, or remove it`);
    }
    const env = sharedEnvironmentBytes(this.settings, this.runtime.stateTable);
    if (env > LAMBDA_ENVIRONMENT_LIMIT) {
      errors.push(
        `the shared breaker function's environment would be ~${env} bytes for ${this.names.length} endpoints (one settings-parameter name each, up to 40 characters); ` +
          `allowed: ${LAMBDA_ENVIRONMENT_LIMIT} bytes (Lambda's 4 KB limit on environment variables; the deploy would fail). Fix: split the endpoints across fleets in separate stacks`,
      );
    }
    for (const [what, rules] of [
      ['alarm', this.alarmRules],
      ['endpoint-event', this.endpointRules],
    ] as const) {
      if (rules.largestPattern > EVENT_PATTERN_LIMIT) {
        errors.push(
          `an ${what} rule's event pattern would be ~${rules.largestPattern} characters; allowed: ${EVENT_PATTERN_LIMIT} (EventBridge's pattern limit). Fix: shorten the endpoint names`,
        );
      }
    }
    const managed = this.runtime.role.node.children.filter(c => c instanceof iam.ManagedPolicy).length;
    const quota = this.props.managedPolicyQuota ?? IAM_MANAGED_POLICIES_PER_ROLE;
    if (managed > quota) {
      errors.push(
        `the shared breaker function's role needs ${managed} managed policies for the grants of ${this.names.length} endpoints (aws-cdk-lib splits a policy over 10 KB into 6 KB managed policies); ` +
          `allowed: ${quota} per role (${quota === IAM_MANAGED_POLICIES_PER_ROLE ? "IAM's default quota" : 'managedPolicyQuota'}; the deploy would fail). Fix: split the endpoints across fleets in separate stacks, or raise the IAM quota (up to 20) and pass it as managedPolicyQuota`,
      );
    }
    return errors;
  }

  /**
   * Registers an endpoint: the function may act on it, its parameters and its scalable targets. The
   * endpoint may be in another stack of the same account and Region (CloudFormation exports carry its
   * parameters' names to this stack, which then deploys after it); an endpoint of another account or
   * Region is a synth error: the function calls SageMaker, CloudWatch and Parameter Store in its own
   * Region, and EventBridge rules see only their own Region's events.
   */
  public register(e: SharedBreakerEndpoint): BreakerRuntime {
    const mine = Stack.of(this);
    const theirs = Stack.of(e.levelParameter);
    if (!sameEnvironment(mine, theirs)) {
      // Not wired (no reference across environments): the validation reports it.
      this.elsewhere.push(
        `got the endpoint ${e.endpointName} of ${stackLabel(theirs)} (${environmentOf(theirs)}) for this shared breaker of ${stackLabel(mine)} (${environmentOf(mine)}); ` +
          "allowed: endpoints of the breaker's own account and Region (its function calls SageMaker, CloudWatch and Parameter Store in its Region, and EventBridge rules see only that Region's events). " +
          `Fix: give both stacks the same env, or use a shared breaker in the endpoint's stack (SharedCircuitBreaker.of(stack))`,
      );
      return this.runtime;
    }
    this.names.push(e.endpointName);
    this.endpointRules.add(e.endpointName, deployedLength(e.endpointName, MAX_ENDPOINT_NAME));
    this.settings.push(e.settingsParameter.parameterName);
    this.runtime.endpoints.addResources(e.endpointArn);
    e.levelParameter.grantRead(this.runtime.role);
    e.levelParameter.grantWrite(this.runtime.role);
    e.settingsParameter.grantRead(this.runtime.role);
    // One grant per way of scoping, whatever the number of endpoints (the tag is the same for all).
    const tagged = e.tagScalableTargets !== false;
    if (e.scalableTargets.length && !this.scalingGranted.has(tagged)) {
      grantScaling(this, this.runtime.role, e.scalableTargets, this.node.addr, tagged);
      this.scalingGranted.add(tagged);
    } else if (tagged) {
      for (const t of e.scalableTargets) Tags.of(t.scalableTarget).add(BREAKER_TAG, this.node.addr);
    }
    return this.runtime;
  }

  /**
   * Adds an endpoint's breaker alarms (`<endpoint>-<variant>-breaker-<metric>`) to the alarm rules, so a
   * change of their state evaluates the endpoint at once.
   */
  public watchAlarms(alarmNames: string[]): void {
    for (const name of alarmNames) this.alarmRules.add(name, deployedLength(name, MAX_ENDPOINT_NAME));
  }

  private readonly scalingGranted = new Set<boolean>();
  private readonly elsewhere: string[] = [];
  private readonly alarmRules: ListRules;
  private readonly endpointRules: ListRules;
}

/** Whether two stacks deploy to the same account and Region (environment-agnostic counts as the same as itself only). */
function sameEnvironment(a: Stack, b: Stack): boolean {
  const same = (x: string, y: string) => (Token.isUnresolved(x) ? Token.isUnresolved(y) : x === y);
  return same(a.account, b.account) && same(a.region, b.region);
}

/** A stack's account and Region, for a message. */
function environmentOf(stack: Stack): string {
  const known = (v: string, what: string) => (Token.isUnresolved(v) ? `any ${what}` : `${what} ${v}`);
  return `${known(stack.account, 'account')}, ${known(stack.region, 'Region')}`;
}

/** Props of {@link SharedCircuitBreaker}. */
export interface SharedCircuitBreakerProps {
  /**
   * Retention of the function's logs.
   * @default logs.RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * The quota of managed policies per IAM role in the account (IAM's default is 10, adjustable to 20).
   * The function's grants name every endpoint, and aws-cdk-lib moves a policy over 10 KB into 6 KB
   * managed policies; synthesis fails when more are needed than this. An integer from 10 to 20.
   * @default 10
   */
  readonly managedPolicyQuota?: number;
}
