import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { Described, PropErrors } from './validation';

/** How a model update shifts traffic to the new fleet. */
export enum TrafficShift {
  /** Blue/green: a canary share of capacity first, bake, then the rest at once. */
  CANARY = 'CANARY',
  /** Blue/green: equal steps with a bake between them. */
  LINEAR = 'LINEAR',
  /** Blue/green: everything at once, then bake. */
  ALL_AT_ONCE = 'ALL_AT_ONCE',
  /** Rolling batches in place (single-variant endpoints only). */
  ROLLING = 'ROLLING',
}

/** Deployment guardrails for model updates. */
export interface DeploymentOptions {
  /**
   * Use guardrails at all.
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * Traffic shifting.
   * @default TrafficShift.CANARY
   */
  readonly trafficShift?: TrafficShift;
  /**
   * Canary size, % of the variant's capacity (1–50).
   * @default 5 (incident B)
   */
  readonly canaryPercent?: number;
  /**
   * Linear step, % of capacity (10–50).
   * @default 20
   */
  readonly linearStepPercent?: number;
  /**
   * Rolling batch, % of capacity (5–50).
   * @default 25
   */
  readonly rollingBatchPercent?: number;
  /**
   * Bake time between steps (0–3600 s).
   * @default Duration.minutes(5)
   */
  readonly waitInterval?: Duration;
  /**
   * Time the old fleet is kept after the shift (0–3600 s).
   * @default Duration.seconds(0)
   */
  readonly terminationWait?: Duration;
  /**
   * Limit for the whole deployment (600–28800 s; must exceed the waits).
   * @default Duration.minutes(60)
   */
  readonly maximumExecutionTimeout?: Duration;
  /**
   * Alarms that roll the deployment back (at most 10).
   * @default - the monitoring's memory and business alarms of the primary variant
   */
  readonly autoRollbackAlarms?: cloudwatch.IAlarm[];
}

/** Pure: the endpoint's `DeploymentConfig` from the options; errors into `errors`. */
export function deploymentConfig(o: DeploymentOptions, alarms: cloudwatch.IAlarm[], variantCount: number,
  errors: PropErrors): sagemaker.CfnEndpoint.DeploymentConfigProperty {
  const shift = o.trafficShift ?? TrafficShift.CANARY;
  const wait = o.waitInterval?.toSeconds() ?? 300;
  const term = o.terminationWait?.toSeconds() ?? 0;
  const max = o.maximumExecutionTimeout?.toSeconds() ?? 3600;
  errors.range('deployment.waitInterval (s)', wait, 0, 3600, 'use Duration.seconds(0..3600)', true);
  errors.range('deployment.terminationWait (s)', term, 0, 3600, 'use Duration.seconds(0..3600)', true);
  errors.range('deployment.maximumExecutionTimeout (s)', max, 600, 28800, 'use Duration.seconds(600..28800)', true);
  errors.range('deployment.canaryPercent', o.canaryPercent, 1, 50, 'a canary is at most 50 % of capacity, e.g. 5', true);
  errors.range('deployment.linearStepPercent', o.linearStepPercent, 10, 50, 'linear steps are 10–50 % of capacity', true);
  errors.range('deployment.rollingBatchPercent', o.rollingBatchPercent, 5, 50, 'rolling batches are 5–50 % of capacity', true);
  if (alarms.length > 10) {
    errors.add('deployment.autoRollbackAlarms', new Described(`${alarms.length} alarms`), 'at most 10 (AWS limit)', 'keep the memory and error alarms');
  }
  const steps = shift === TrafficShift.LINEAR ? Math.ceil(100 / (o.linearStepPercent ?? 20)) : shift === TrafficShift.CANARY ? 2 : 1;
  if (max <= steps * wait + term) {
    errors.add('deployment.maximumExecutionTimeout (s)', max, `more than the waits it contains (${steps * wait + term} s)`, 'raise maximumExecutionTimeout or shorten waitInterval');
  }
  const autoRollbackConfiguration = alarms.length ? { alarms: alarms.slice(0, 10).map(a => ({ alarmName: a.alarmName })) } : undefined;
  if (shift === TrafficShift.ROLLING) {
    if (variantCount > 1) {
      errors.add('deployment.trafficShift', 'ROLLING', 'blue/green shifting on endpoints with more than one variant', 'use TrafficShift.CANARY, or remove the fallback/shadow variant');
    }
    return {
      rollingUpdatePolicy: {
        maximumBatchSize: { type: 'CAPACITY_PERCENT', value: o.rollingBatchPercent ?? 25 },
        waitIntervalInSeconds: wait,
        maximumExecutionTimeoutInSeconds: max,
      },
      autoRollbackConfiguration,
    };
  }
  const routing: sagemaker.CfnEndpoint.TrafficRoutingConfigProperty = shift === TrafficShift.CANARY
    ? { type: 'CANARY', canarySize: { type: 'CAPACITY_PERCENT', value: o.canaryPercent ?? 5 }, waitIntervalInSeconds: wait }
    : shift === TrafficShift.LINEAR
      ? { type: 'LINEAR', linearStepSize: { type: 'CAPACITY_PERCENT', value: o.linearStepPercent ?? 20 }, waitIntervalInSeconds: wait }
      : { type: 'ALL_AT_ONCE', waitIntervalInSeconds: wait };
  return {
    blueGreenUpdatePolicy: {
      trafficRoutingConfiguration: routing,
      terminationWaitInSeconds: term,
      maximumExecutionTimeoutInSeconds: max,
    },
    autoRollbackConfiguration,
  };
}
