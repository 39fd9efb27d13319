import { CfnResource, Stack } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';

/** CloudFormation's limit of resources per stack (CloudFormation quotas). */
export const CFN_RESOURCE_LIMIT = 500;

/** The guarded endpoints of each stack that has the check (for the per-endpoint counts of its message). */
const endpointsOf = new WeakMap<Stack, IConstruct[]>();

/**
 * Adds, once per stack, a synth-time check that the stack stays under CloudFormation's 500-resource
 * limit, with an error that names what each endpoint adds and what to do — instead of a
 * `TooManyResourcesInStack` failure at deploy time.
 */
export function addResourceLimitCheck(endpoint: IConstruct): void {
  const stack = Stack.of(endpoint);
  const known = endpointsOf.get(stack);
  if (known) {
    known.push(endpoint);
    return;
  }
  const endpoints = [endpoint];
  endpointsOf.set(stack, endpoints);
  stack.node.addValidation({
    validate: () => {
      const own = (root: IConstruct) => root.node.findAll().filter(c => CfnResource.isCfnResource(c) && Stack.of(c) === stack).length;
      const total = own(stack);
      if (total <= CFN_RESOURCE_LIMIT) return [];
      const each = endpoints.map(e => `${e.node.path}: ${own(e)}`).join(', ');
      return [
        `stack ${stack.stackName}: got ${total} CloudFormation resources; allowed: at most ${CFN_RESOURCE_LIMIT} per stack (CloudFormation would fail with TooManyResourcesInStack). ` +
          `Each ResilientEndpoint adds its own (${each}). Fix: put the endpoints in a ResilientEndpointFleet (one nested stack each: fleet.addEndpoint(id, props)), or split them across stacks.`,
      ];
    },
  });
}
