/**
 * One breaker function for several endpoints (a fleet's, or any stack's): its rules, its grants on
 * each registered endpoint, and the registration each endpoint's CircuitBreaker makes.
 */
import { Lazy, Stack, Tags } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { VariantAutoScaling } from '../auto-scaling';
import { BREAKER_ALARM_MARK, BREAKER_ENV as ENV, BREAKER_NAMESPACE } from './contract';
import { BREAKER_TAG, BreakerRuntime, createBreakerRuntime, grantScaling } from './wiring';

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

  constructor(scope: Construct, id: string, props: SharedCircuitBreakerProps = {}) {
    super(scope, id);
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
    new events.Rule(this, 'AlarmRule', {
      description: 'Evaluate the circuit breakers when one of their alarms (<endpoint>-<variant>-breaker-<metric>) changes state',
      eventPattern: {
        source: ['aws.cloudwatch'],
        detailType: ['CloudWatch Alarm State Change'],
        detail: { alarmName: events.Match.wildcard(`*${BREAKER_ALARM_MARK}*`) },
      },
      targets: [target()],
    });
    new events.Rule(this, 'EndpointStateChange', {
      description: 'Re-evaluate a circuit breaker when its endpoint changes state (e.g. back to InService)',
      eventPattern: {
        source: ['aws.sagemaker'],
        detailType: ['SageMaker Endpoint State Change'],
        detail: { EndpointName: Lazy.list({ produce: () => this.names }) },
      },
      targets: [target()],
    });
    this.node.addValidation({
      validate: () =>
        this.names.length
          ? []
          : [
              `${this.node.path}: got no endpoints; allowed: at least one. Fix: pass it as circuitBreaker.shared of a ResilientEndpoint, or remove it`,
            ],
    });
  }

  /** Registers an endpoint: the function may act on it, its parameters and its scalable targets. */
  public register(e: SharedBreakerEndpoint): BreakerRuntime {
    this.names.push(e.endpointName);
    this.settings.push(e.settingsParameter.parameterName);
    this.runtime.endpoints.addResources(e.endpointArn);
    e.levelParameter.grantRead(this.runtime.role);
    e.levelParameter.grantWrite(this.runtime.role);
    e.settingsParameter.grantRead(this.runtime.role);
    if (e.scalableTargets.length) {
      if (!this.scalingGranted) {
        grantScaling(this, this.runtime.role, e.scalableTargets, this.node.addr);
        this.scalingGranted = true;
      } else {
        for (const t of e.scalableTargets) Tags.of(t.scalableTarget).add(BREAKER_TAG, this.node.addr);
      }
    }
    return this.runtime;
  }

  private scalingGranted = false;
}

/** Props of {@link SharedCircuitBreaker}. */
export interface SharedCircuitBreakerProps {
  /**
   * Retention of the function's logs.
   * @default logs.RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: logs.RetentionDays;
}
