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
   * @default TrafficShift.CANARY when every production variant has at least 2 instances (a canary
   * is at most half of them); otherwise TrafficShift.ALL_AT_ONCE with the bake and auto-rollback
   */
  readonly trafficShift?: TrafficShift;
  /**
   * Canary size in **instances** of the new fleet. SageMaker applies canary sizes in whole
   * instances and requires at most 50 % of the variant's instances, so the canary's traffic share
   * is `canaryInstances / instances` (1 of 2 instances is 50 % of the traffic, 1 of 20 is 5 %).
   * @default 1
   * @see https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-blue-green-canary.html
   */
  readonly canaryInstances?: number;
  /**
   * Linear step in **instances** (10–50 % of the variant's instances, whole instances).
   * @default 1
   */
  readonly linearStepInstances?: number;
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

/** What the deployment config is computed from. */
export interface DeploymentContext {
  /** Rollback alarms (at most 10). */
  readonly alarms: cloudwatch.IAlarm[];
  /** Production variants plus shadow variants. */
  readonly variantCount: number;
  /** Fewest instances of any production variant (the canary and linear sizes are checked against it). */
  readonly minVariantInstances: number;
}

/** The deployment config and what was chosen for the user. */
export interface DeploymentPlan {
  readonly config: sagemaker.CfnEndpoint.DeploymentConfigProperty;
  /** The traffic shift in force. */
  readonly trafficShift: TrafficShift;
  /** A note when the default was changed (e.g. ALL_AT_ONCE for a 1-instance variant). */
  readonly note?: string;
}

/**
 * Pure: the endpoint's `DeploymentConfig` from the options; errors into `errors`.
 * Canary and linear sizes are whole instances (`CapacitySize.Type = INSTANCE_COUNT`), checked
 * against the smallest variant: CanarySize ≤ 50 %, LinearStepSize 10–50 % of the variant's
 * instance count (botocore `TrafficRoutingConfig`; developer guide deployment-guardrails-blue-green).
 */
export function deploymentConfig(o: DeploymentOptions, ctx: DeploymentContext, errors: PropErrors): DeploymentPlan {
  const n = ctx.minVariantInstances;
  let note: string | undefined;
  let shift = o.trafficShift ?? TrafficShift.CANARY;
  if (o.trafficShift === undefined && n < 2) {
    shift = TrafficShift.ALL_AT_ONCE;
    note = `deployment: a variant has ${n} instance, and a canary may be at most half of a variant's instances, so model updates shift all at once, then bake with auto-rollback. Give every variant 2 or more instances for a canary.`;
  }
  const wait = o.waitInterval?.toSeconds() ?? 300;
  const term = o.terminationWait?.toSeconds() ?? 0;
  const max = o.maximumExecutionTimeout?.toSeconds() ?? 3600;
  errors.range('deployment.waitInterval (s)', wait, 0, 3600, 'use Duration.seconds(0..3600)', true);
  errors.range('deployment.terminationWait (s)', term, 0, 3600, 'use Duration.seconds(0..3600)', true);
  errors.range('deployment.maximumExecutionTimeout (s)', max, 600, 28800, 'use Duration.seconds(600..28800)', true);
  const canary = o.canaryInstances ?? 1;
  const linear = o.linearStepInstances ?? 1;
  if (shift === TrafficShift.CANARY) {
    errors.range(
      'deployment.canaryInstances',
      canary,
      1,
      Math.max(1, Math.floor(n / 2)),
      n < 2
        ? `a canary needs a variant of at least 2 instances (the smallest has ${n}): use TrafficShift.ALL_AT_ONCE, or 2+ instances per variant`
        : `a canary is at most half of the smallest variant's ${n} instances`,
      true,
    );
    if (n < 2 && canary <= 1)
      errors.add(
        'deployment.trafficShift',
        'CANARY',
        `a variant of at least 2 instances (the smallest has ${n})`,
        'use TrafficShift.ALL_AT_ONCE, or give every variant 2 or more instances',
      );
  }
  if (shift === TrafficShift.LINEAR) {
    const lo = Math.max(1, Math.ceil(0.1 * n));
    const hi = Math.floor(0.5 * n);
    if (hi < lo) {
      errors.add(
        'deployment.trafficShift',
        'LINEAR',
        `a variant of at least 2 instances (the smallest has ${n})`,
        'use TrafficShift.ALL_AT_ONCE, or give every variant 2 or more instances',
      );
    } else {
      errors.range(
        'deployment.linearStepInstances',
        linear,
        lo,
        hi,
        `linear steps are 10–50 % of the smallest variant's ${n} instances (${lo}..${hi})`,
        true,
      );
    }
  }
  if (!errors.fraction('deployment.rollingBatchPercent', o.rollingBatchPercent, 5, true, 50))
    errors.range('deployment.rollingBatchPercent', o.rollingBatchPercent, 5, 50, 'rolling batches are 5–50 % of capacity', true);
  if (ctx.alarms.length > 10) {
    errors.add(
      'deployment.autoRollbackAlarms',
      new Described(`${ctx.alarms.length} alarms`),
      'at most 10 (AWS limit)',
      'keep the memory and error alarms',
    );
  }
  const steps = shift === TrafficShift.LINEAR ? Math.ceil(n / Math.max(1, linear)) : shift === TrafficShift.CANARY ? 2 : 1;
  if (max <= steps * wait + term) {
    errors.add(
      'deployment.maximumExecutionTimeout (s)',
      max,
      `more than the waits it contains (${steps * wait + term} s)`,
      'raise maximumExecutionTimeout or shorten waitInterval',
    );
  }
  const autoRollbackConfiguration = ctx.alarms.length ? { alarms: ctx.alarms.slice(0, 10).map(a => ({ alarmName: a.alarmName })) } : undefined;
  if (shift === TrafficShift.ROLLING) {
    if (ctx.variantCount > 1) {
      errors.add(
        'deployment.trafficShift',
        'ROLLING',
        'blue/green shifting on endpoints with more than one variant',
        'use TrafficShift.CANARY, or remove the fallback/shadow variant',
      );
    }
    return {
      trafficShift: shift,
      note,
      config: {
        rollingUpdatePolicy: {
          maximumBatchSize: { type: 'CAPACITY_PERCENT', value: o.rollingBatchPercent ?? 25 },
          waitIntervalInSeconds: wait,
          maximumExecutionTimeoutInSeconds: max,
        },
        autoRollbackConfiguration,
      },
    };
  }
  const routing: sagemaker.CfnEndpoint.TrafficRoutingConfigProperty =
    shift === TrafficShift.CANARY
      ? { type: 'CANARY', canarySize: { type: 'INSTANCE_COUNT', value: canary }, waitIntervalInSeconds: wait }
      : shift === TrafficShift.LINEAR
        ? { type: 'LINEAR', linearStepSize: { type: 'INSTANCE_COUNT', value: linear }, waitIntervalInSeconds: wait }
        : { type: 'ALL_AT_ONCE', waitIntervalInSeconds: wait };
  return {
    trafficShift: shift,
    note,
    config: {
      blueGreenUpdatePolicy: {
        trafficRoutingConfiguration: routing,
        terminationWaitInSeconds: term,
        maximumExecutionTimeoutInSeconds: max,
      },
      autoRollbackConfiguration,
    },
  };
}
