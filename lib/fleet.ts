import { NestedStack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { ResilientEndpoint, ResilientEndpointProps } from './resilient-endpoint';

/**
 * Many guarded endpoints under one stack. Each endpoint brings 40–60 CloudFormation resources (its
 * models, config, role, scaling, about 15 alarms, its breaker, buckets), so one stack holds at most
 * 11 CPU or 8 GPU endpoints with a fallback before CloudFormation's 500-resource limit. A fleet puts
 * each endpoint in its own nested stack (aws-cdk-lib `NestedStack`): the parent holds one
 * `AWS::CloudFormation::Stack` per endpoint, and each endpoint keeps every alarm and its own
 * breaker. 30 endpoints deploy (and update) as one stack.
 */
export class ResilientEndpointFleet extends Construct {
  /** The endpoints, in the order added. */
  public readonly endpoints: ResilientEndpoint[] = [];

  /** Adds an endpoint in a nested stack of its own (named after `id`). */
  public addEndpoint(id: string, props: ResilientEndpointProps): ResilientEndpoint {
    const nested = new NestedStack(this, id, { description: `SageMaker endpoint ${id} of fleet ${this.node.path}` });
    const endpoint = new ResilientEndpoint(nested, 'Endpoint', props);
    this.endpoints.push(endpoint);
    return endpoint;
  }
}

