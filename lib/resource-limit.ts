import { CfnResource, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
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

/** CloudWatch's quota of Metrics Insights alarms per Region and account (cloudwatch-metrics-insights-limits). */
export const METRICS_INSIGHTS_ALARM_LIMIT = 200;

const appsChecked = new WeakSet<IConstruct>();

/**
 * Adds, once per app, a synth-time check that the app's Metrics Insights alarms (the per-GPU alarms of
 * multi-GPU endpoints with enhanced metrics) stay within CloudWatch's 200 per Region: an error naming the
 * count, the Region and the fix, instead of a failing deploy.
 */
export function addMetricsInsightsAlarmCheck(scope: IConstruct): void {
  const root = scope.node.root;
  if (appsChecked.has(root)) return;
  appsChecked.add(root);
  root.node.addValidation({
    validate: () => {
      const byRegion = new Map<string, number>();
      for (const c of root.node.findAll()) {
        if (!(c instanceof cloudwatch.CfnAlarm)) continue;
        const metrics = Stack.of(c).resolve(c.metrics) as { expression?: string }[] | undefined;
        if (!(metrics ?? []).some(m => typeof m.expression === 'string' && /^\s*SELECT\b/i.test(m.expression))) continue;
        const region = Token.isUnresolved(Stack.of(c).region) ? 'the region-agnostic stacks' : Stack.of(c).region;
        byRegion.set(region, (byRegion.get(region) ?? 0) + 1);
      }
      return [...byRegion]
        .filter(([, n]) => n > METRICS_INSIGHTS_ALARM_LIMIT)
        .map(
          ([region, n]) =>
            `got ${n} Metrics Insights alarms in ${region} (the per-GPU alarms of multi-GPU endpoints with enhanced metrics, in this app alone); ` +
            `allowed: ${METRICS_INSIGHTS_ALARM_LIMIT} per Region (CloudWatch quota; the deploy would fail). Fix: set metricPublishing.enhancedMetrics: false on some multi-GPU endpoints, or spread them across Regions or accounts`,
        );
    },
  });
}
