import { Aspects, IAspect, NestedStack, Stack, Validations } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct, IConstruct } from 'constructs';
import { SharedCircuitBreaker } from './breaker/shared-circuit-breaker';
import { createAlarmTopic } from './monitoring/endpoint-monitoring';
import { ResilientEndpoint } from './resilient-endpoint';
import { ResilientEndpointProps } from './resilient-endpoint-props';
import { CFN_RESOURCE_LIMIT } from './resource-limit';
import { guardResourceTypes } from './region-resource-types';

/** Props of {@link ResilientEndpointFleet}. */
export interface ResilientEndpointFleetProps {
  /**
   * One alarm topic for the whole fleet: every endpoint's alarms notify it, and each address or
   * subscription in the endpoints' `monitoring.notify` is subscribed once (one SNS confirmation e-mail
   * per address, not one per endpoint). An endpoint with its own `monitoring.alarmTopic` keeps it.
   * `false`: each endpoint creates its own topic with its own subscriptions.
   * @default true
   */
  readonly sharedAlarmTopic?: boolean;
}

/**
 * Many guarded endpoints under one stack. Each endpoint brings 40–60 CloudFormation resources (its
 * models, config, role, scaling, about 15 alarms, its breaker, buckets), so one stack holds at most
 * 11 CPU or 8 GPU endpoints with a fallback before CloudFormation's 500-resource limit. A fleet puts
 * each endpoint in its own nested stack (aws-cdk-lib `NestedStack`): the parent holds one
 * `AWS::CloudFormation::Stack` per endpoint, each endpoint keeps every alarm, and all share one
 * breaker function, queue, log group, schedule and state table in the parent — and one alarm topic,
 * unless `sharedAlarmTopic` is false. 30 endpoints deploy (and update) as one stack.
 */
export class ResilientEndpointFleet extends Construct {
  /** CloudFormation's limit of resources per stack (500), which a fleet keeps each stack under. */
  public static readonly CFN_RESOURCE_LIMIT: number = CFN_RESOURCE_LIMIT;

  /** The endpoints, in the order added. */
  public readonly endpoints: ResilientEndpoint[] = [];
  /** The breaker function the fleet's endpoints share (created with the first endpoint that has a breaker). */
  public get sharedBreaker(): SharedCircuitBreaker | undefined {
    return this.node.tryFindChild('SharedBreaker') as SharedCircuitBreaker | undefined;
  }
  /** The alarm topic the fleet's endpoints share (created with the first endpoint that has monitoring), if any. */
  public get alarmTopic(): sns.ITopic | undefined {
    return (this.node.tryFindChild('SharedAlarms') as Construct | undefined)?.node.tryFindChild('AlarmTopic') as sns.ITopic | undefined;
  }

  private readonly shareTopic: boolean;
  /** What the shared topic already delivers to (each e-mail address, each subscription object, once). */
  private readonly subscribed = new Set<string | sns.ITopicSubscription>();

  constructor(scope: Construct, id: string, props: ResilientEndpointFleetProps = {}) {
    super(scope, id);
    guardResourceTypes(this);
    this.shareTopic = props.sharedAlarmTopic ?? true;
    // Judged once the app is complete (an aspect runs at synthesis, after every addEndpoint).
    const completeFleet: IAspect = {
      visit: (node: IConstruct) => {
        if (node === this) this.warnIfIncomplete();
      },
    };
    Aspects.of(this).add(completeFleet);
  }

  /**
   * Adds an endpoint in a nested stack of its own (named after `id`). Its circuit breaker runs in the
   * fleet's shared breaker function unless `circuitBreaker.shared` names another; its alarms notify the
   * fleet's shared topic unless `monitoring.alarmTopic` names another.
   */
  public addEndpoint(id: string, props: ResilientEndpointProps): ResilientEndpoint {
    const existing = this.endpoints.find(e => Stack.of(e).node.id === id);
    if (existing) {
      // Reported with every other error at synth; the first endpoint of that id stays the one deployed.
      this.node.addValidation({
        validate: () => [`fleet.addEndpoint: got id '${id}' a second time; allowed: one endpoint per id. Fix: give each endpoint its own id`],
      });
      return existing;
    }
    const nested = new NestedStack(this, id, { description: `SageMaker endpoint ${id} of fleet ${this.node.path}` });
    const breaker =
      props.circuitBreaker?.enabled === false
        ? props.circuitBreaker
        : { ...props.circuitBreaker, shared: props.circuitBreaker?.shared ?? this.sharedBreaker ?? new SharedCircuitBreaker(this, 'SharedBreaker') };
    const endpoint = new ResilientEndpoint(nested, 'Endpoint', { ...props, circuitBreaker: breaker, monitoring: this.monitoringOf(props) });
    this.endpoints.push(endpoint);
    return endpoint;
  }

  /** An endpoint's monitoring, on the shared topic (whose subscriptions the fleet makes) unless it has its own. */
  private monitoringOf(props: ResilientEndpointProps): ResilientEndpointProps['monitoring'] {
    const m = props.monitoring;
    if (!this.shareTopic || m?.enabled === false || m?.alarmTopic) return m;
    const topic = (this.alarmTopic as sns.Topic | undefined) ?? createAlarmTopic(new Construct(this, 'SharedAlarms'), `fleet ${this.node.path}`);
    for (const email of m?.notify?.emails ?? []) {
      if (!this.subscribed.has(email)) topic.addSubscription(new subscriptions.EmailSubscription(email));
      this.subscribed.add(email);
    }
    for (const s of m?.notify?.subscriptions ?? []) {
      if (!this.subscribed.has(s)) topic.addSubscription(s);
      this.subscribed.add(s);
    }
    return { ...m, alarmTopic: topic, notify: undefined };
  }

  /** Warnings on a fleet that deploys nothing, or whose shared topic reaches no one. */
  private warnIfIncomplete(): void {
    if (this.endpoints.length === 0) {
      Validations.of(this).addWarning(
        'EmptyFleet',
        `the fleet ${this.node.path} has no endpoints, so it deploys nothing. Fix: fleet.addEndpoint(id, props), or remove the fleet.`,
      );
    }
    if (this.alarmTopic && this.subscribed.size === 0) {
      Validations.of(this).addWarning(
        'RE-AlarmTopicUnsubscribed',
        `the fleet's shared alarm topic has no subscription, so the alarms of its ${this.endpoints.length} endpoints reach no one. ` +
          "Fix: monitoring: { notify: { emails: ['oncall@example.com'] } } on any of its endpoints (each address is subscribed once), or pass your own monitoring.alarmTopic.",
      );
    }
  }
}
