import { NestedStack, Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { SharedCircuitBreaker } from './breaker/shared-circuit-breaker';
import { ResilientEndpoint } from './resilient-endpoint';
import { ResilientEndpointProps } from './resilient-endpoint-props';
import { CFN_RESOURCE_LIMIT } from './resource-limit';

/**
 * Many guarded endpoints under one stack. Each endpoint brings 40–60 CloudFormation resources (its
 * models, config, role, scaling, about 15 alarms, its breaker, buckets), so one stack holds at most
 * 11 CPU or 8 GPU endpoints with a fallback before CloudFormation's 500-resource limit. A fleet puts
 * each endpoint in its own nested stack (aws-cdk-lib `NestedStack`): the parent holds one
 * `AWS::CloudFormation::Stack` per endpoint, each endpoint keeps every alarm, and all share one
 * breaker function, queue, log group, schedule and state table in the parent. 30 endpoints deploy
 * (and update) as one stack.
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

  /**
   * Adds an endpoint in a nested stack of its own (named after `id`). Its circuit breaker runs in the
   * fleet's shared breaker function unless `circuitBreaker.shared` names another.
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
    const endpoint = new ResilientEndpoint(nested, 'Endpoint', { ...props, circuitBreaker: breaker });
    this.endpoints.push(endpoint);
    return endpoint;
  }
}
