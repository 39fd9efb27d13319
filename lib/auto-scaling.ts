import { Duration, Stack, TimeZone, Token } from 'aws-cdk-lib';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { GUARD_METRICS } from './breaker/contract';
import { SageMakerInstanceType } from './instance-types';
import { Described, PropErrors } from './validation';
import { UNIT_PROPS, unitsChecked } from './private/unit-props';
import { guardResourceTypes } from './region-resource-types';

/**
 * Instance-count bounds of a variant: literal numbers, not tokens (the breaker's settings, the
 * readiness checks and the simulator use them at synth).
 */
export interface CapacityProps {
  /** Fewest instances (≥ 1: plain variants cannot scale to zero). */
  readonly min: number;
  /** Most instances (≥ min). */
  readonly max: number;
}

/** A known peak: capacity bounds that apply from a cron time on. */
export interface ScheduledCapacity {
  /** When the bounds apply, e.g. `appscaling.Schedule.cron({ hour: '19', minute: '0' })`. */
  readonly schedule: appscaling.Schedule;
  /**
   * Minimum from then on.
   * @default - unchanged
   */
  readonly minCapacity?: number;
  /**
   * Maximum from then on.
   * @default - unchanged
   */
  readonly maxCapacity?: number;
  /**
   * Time zone of the cron expression.
   * @default - UTC
   */
  readonly timeZone?: TimeZone;
}

/** Autoscaling settings of a variant. */
export interface AutoScalingOptions {
  /**
   * Autoscale at all.
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * Instance-count bounds.
   * @default - min = the initial instance count, max = twice that
   */
  readonly capacity?: CapacityProps;
  /**
   * Requests per second one instance should carry: the target-tracking target is this × 60,
   * because `SageMakerVariantInvocationsPerInstance` counts invocations per instance **per minute**.
   * @default 150 (incident B) → target 9000
   */
  readonly qpsPerInstance?: number;
  /**
   * Wait after a scale-out before the next one.
   * @default Duration.seconds(90) (incident B)
   */
  readonly scaleOutCooldown?: Duration;
  /**
   * Wait after a scale-in before the next one.
   * @default Duration.seconds(300)
   */
  readonly scaleInCooldown?: Duration;
  /**
   * Also scale out fast on the 10-second `ConcurrentRequestsPerModel` metric (target tracking, high
   * resolution): the in-flight requests to hold **per instance** — SageMaker counts the requests in
   * flight at each instance's model container, queued ones included, not per model-server worker.
   * Good for spiky traffic.
   * @default - off
   * @see https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-add-code-define.html
   */
  readonly concurrentRequestsPerModelTarget?: number;
  /**
   * Also scale out on memory (incident B: an O(n)-memory model on an undersized fleet runs out of
   * memory at a request rate the QPS target never reaches): a second target-tracking policy on the
   * variant's memory, in percent per instance — `MemoryUtilization` (namespace `/aws/sagemaker/Endpoints`,
   * statistic Average over the variant's instances), or on GPU types `GPUMemoryUtilization`, whose
   * per-instance figure sums the GPUs, so the target is this × the GPU count.
   *
   * Memory held by the model copies, and by the allocators' caches after a peak (PyTorch's CUDA caching
   * allocator, glibc's heap), does not fall as instances are added, while target tracking needs a metric that
   * "must increase or decrease proportionally to the capacity" (Application Auto Scaling user guide). So a model
   * with a `memoryProfile` (whose container runs the memory guard) is tracked on the guard's **in-flight memory**
   * (`GuardInFlightPercent`: what the guard has admitted for requests in flight, of the container's budget —
   * the load alone), with the target translated so that static occupancy plus in-flight memory stays at this
   * percent, scaling in as well as out. Without a profile it tracks SageMaker's memory metric and **only adds
   * capacity: its scale-in is disabled**, since Application Auto Scaling scales in only when every policy *with
   * scale-in enabled* agrees and memory that does not fall would hold the fleet at its maximum; the QPS target
   * releases capacity. `cdk synth` fails where the tuned static occupancy (workers × the profile's warm
   * baseline, else × the footprint; on GPUs plus 0.5 GiB of CUDA context a process) is at or above this, and
   * warns from 0.9 × this.
   * Keep it below the breaker's degrade trigger (80 %) so capacity is added before the breaker degrades.
   * @default - off
   * @see https://docs.aws.amazon.com/autoscaling/application/userguide/application-auto-scaling-target-tracking.html#target-tracking-considerations
   * @see https://docs.aws.amazon.com/autoscaling/application/userguide/target-tracking-scaling-policy-overview-create.html
   */
  readonly memoryTargetPercent?: number;
  /**
   * Known peaks.
   * @default - none
   */
  readonly schedules?: ScheduledCapacity[];
}

/**
 * How a memory target tracks the container guard's in-flight memory (`GuardInFlightPercent`), the load-proportional
 * part of memory: the target on it is `(memoryTargetPercent − staticPercent) ÷ budgetPercent × 100`, so that static
 * occupancy plus what requests hold stays at `memoryTargetPercent` of the instance's memory.
 */
export interface GuardInFlightTracking {
  /** The namespace the container publishes its guard metrics in (`RESILIENT_ENDPOINT_METRICS_NAMESPACE`). */
  readonly namespace: string;
  /** The memory the model fills before any request, percent of the instance's (per GPU on GPU types). */
  readonly staticPercent: number;
  /** The container's budget, percent of the instance's memory (`model.guardBudgetPercent`). */
  readonly budgetPercent: number;
}

/** What a memory target tracks, as synthesized. */
export interface MemoryTracking {
  /** The metric's name (`GuardInFlightPercent`, `MemoryUtilization` or `GPUMemoryUtilization`). */
  readonly metricName: string;
  /** The policy's target on that metric, per instance. */
  readonly targetValue: number;
  /** Whether the policy scales in too (only on a load-proportional metric). */
  readonly scaleIn: boolean;
}

/** Props of {@link VariantAutoScaling}. */
export interface VariantAutoScalingProps extends AutoScalingOptions {
  /** Endpoint name (literal). */
  readonly endpointName: string;
  /** Variant name. */
  readonly variantName: string;
  /** Variant instance type (burstable types cannot be autoscaled). */
  readonly instanceType: SageMakerInstanceType;
  /** Initial instance count of the variant. */
  readonly initialInstanceCount: number;
  /**
   * Track `memoryTargetPercent` on the container guard's in-flight memory (load-proportional: it falls as
   * instances are added, so the policy may scale in too) instead of SageMaker's memory metrics.
   * @default - SageMaker's `MemoryUtilization` / `GPUMemoryUtilization`, with the policy's scale-in disabled
   */
  readonly guardInFlight?: GuardInFlightTracking;
}

/** QPS per instance → the per-minute `SageMakerVariantInvocationsPerInstance` target. */
export function invocationsPerInstanceTarget(qpsPerInstance: number): number {
  return qpsPerInstance * 60;
}

/**
 * Target tracking on per-instance QPS for one production variant, with optional fast scale-out on
 * high-resolution concurrency and scheduled peaks. Ids derive from the variant, so several variants
 * of one endpoint can be scaled.
 */
export class VariantAutoScaling extends Construct {
  /**
   * The `SageMakerVariantInvocationsPerInstance` target (invocations per instance per minute) for a
   * per-instance QPS.
   */
  public static invocationsPerInstanceTarget(qpsPerInstance: number): number {
    return invocationsPerInstanceTarget(qpsPerInstance);
  }

  /** The scalable target (`endpoint/<name>/variant/<variant>`). */
  public readonly scalableTarget: appscaling.ScalableTarget;
  /** The QPS target-tracking policy. */
  public readonly invocationsPolicy: appscaling.TargetTrackingScalingPolicy;
  /** The fast scale-out policy, if any. */
  public readonly concurrencyPolicy?: appscaling.TargetTrackingScalingPolicy;
  /** The memory target-tracking policy, if any (`memoryTargetPercent`). */
  public readonly memoryPolicy?: appscaling.TargetTrackingScalingPolicy;
  /** Bounds in force. */
  public readonly capacity: CapacityProps;
  /** QPS per instance the target tracks. */
  public readonly qpsPerInstance: number;
  /** Scale-out cooldown in force. */
  public readonly scaleOutCooldown: Duration;
  /** Scale-in cooldown in force. */
  public readonly scaleInCooldown: Duration;
  /** Memory target (% per instance, per GPU on GPU types) in force, if any. */
  public readonly memoryTargetPercent?: number;
  /** What the memory target tracks (undefined without one). */
  public readonly memoryTracking?: MemoryTracking;
  /** Whether scheduled actions change this variant's bounds (the breaker then holds them while not CLOSED). */
  public readonly hasSchedules: boolean;

  constructor(scope: Construct, id: string, props: VariantAutoScalingProps) {
    super(scope, id);
    props = unitsChecked(this, props, UNIT_PROPS.VariantAutoScalingProps);
    guardResourceTypes(this);
    const errors = validateAutoScaling(props);
    this.node.addValidation({ validate: () => errors.all });
    this.capacity = props.capacity ?? { min: props.initialInstanceCount, max: props.initialInstanceCount * 2 };
    this.qpsPerInstance = props.qpsPerInstance ?? 150;
    this.scaleOutCooldown = props.scaleOutCooldown ?? Duration.seconds(90);
    this.scaleInCooldown = props.scaleInCooldown ?? Duration.seconds(300);
    this.memoryTargetPercent = props.memoryTargetPercent;
    this.hasSchedules = (props.schedules ?? []).some(s => s.minCapacity !== undefined || s.maxCapacity !== undefined);
    const stack = Stack.of(this);
    this.scalableTarget = new appscaling.ScalableTarget(this, 'Target', {
      serviceNamespace: appscaling.ServiceNamespace.SAGEMAKER,
      resourceId: `endpoint/${props.endpointName}/variant/${props.variantName}`,
      scalableDimension: 'sagemaker:variant:DesiredInstanceCount',
      minCapacity: Math.max(1, this.capacity.min),
      maxCapacity: Math.max(1, this.capacity.max, this.capacity.min),
      // The service-linked role Application Auto Scaling creates for SageMaker endpoints.
      role: iam.Role.fromRoleArn(
        this,
        'ServiceLinkedRole',
        stack.formatArn({
          service: 'iam',
          region: '',
          resource: 'role',
          resourceName: 'aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint',
        }),
      ),
    });
    this.invocationsPolicy = this.scalableTarget.scaleToTrackMetric('QpsPerInstance', {
      predefinedMetric: appscaling.PredefinedMetric.SAGEMAKER_VARIANT_INVOCATIONS_PER_INSTANCE,
      targetValue: invocationsPerInstanceTarget(this.qpsPerInstance),
      scaleOutCooldown: this.scaleOutCooldown,
      scaleInCooldown: this.scaleInCooldown,
    });
    if (props.concurrentRequestsPerModelTarget !== undefined) {
      this.concurrencyPolicy = this.scalableTarget.scaleToTrackMetric('ConcurrencyHighResolution', {
        predefinedMetric: appscaling.PredefinedMetric.SAGEMAKER_VARIANT_CONCURRENT_REQUESTS_PER_MODEL_HIGH_RESOLUTION,
        targetValue: props.concurrentRequestsPerModelTarget,
        scaleOutCooldown: this.scaleOutCooldown,
        scaleInCooldown: this.scaleInCooldown,
      });
    }
    if (props.memoryTargetPercent !== undefined) {
      const gpus = props.instanceType.spec.gpuCount;
      const g = props.guardInFlight;
      const dims = { EndpointName: props.endpointName, VariantName: props.variantName };
      // On the guard's in-flight memory (load-proportional: it may scale in), else on SageMaker's memory, which model
      // copies and allocator caches keep up however many instances there are: it adds capacity, never holds it
      // (AAS scales in only when every policy with scale-in enabled agrees).
      this.memoryTracking = g
        ? {
            metricName: GUARD_METRICS.IN_FLIGHT,
            targetValue: Math.max(1, Math.round((10 * 100 * (props.memoryTargetPercent - g.staticPercent)) / g.budgetPercent) / 10),
            scaleIn: true,
          }
        : {
            metricName: gpus > 0 ? 'GPUMemoryUtilization' : 'MemoryUtilization',
            targetValue: props.memoryTargetPercent * Math.max(1, gpus),
            scaleIn: false,
          };
      this.memoryPolicy = this.scalableTarget.scaleToTrackMetric('MemoryUtilization', {
        customMetric: new cloudwatch.Metric({
          namespace: g ? g.namespace : '/aws/sagemaker/Endpoints',
          metricName: this.memoryTracking.metricName,
          dimensionsMap: dims,
          statistic: cloudwatch.Stats.AVERAGE,
          period: Duration.minutes(1),
        }),
        targetValue: this.memoryTracking.targetValue,
        scaleOutCooldown: this.scaleOutCooldown,
        scaleInCooldown: this.scaleInCooldown,
        disableScaleIn: !this.memoryTracking.scaleIn,
      });
    }
    (props.schedules ?? []).forEach((s, i) => {
      if (s.minCapacity === undefined && s.maxCapacity === undefined) return; // reported by validation
      this.scalableTarget.scaleOnSchedule(`Schedule${i}`, {
        schedule: s.schedule,
        minCapacity: s.minCapacity,
        maxCapacity: s.maxCapacity,
        timeZone: s.timeZone,
      });
    });
  }
}

/** Pure validation of autoscaling settings. */
export function validateAutoScaling(p: VariantAutoScalingProps): PropErrors {
  const e = new PropErrors();
  const pre = `autoScaling[${p.variantName}]`;
  if (p.instanceType.isBurstable) {
    e.add(
      `${pre}.instanceType`,
      p.instanceType.name,
      'a non-burstable instance type',
      'burstable T2/T3 instances cannot be registered with Application Auto Scaling; use e.g. ml.m5.xlarge, or set autoScaling.enabled: false',
    );
  }
  const cap = p.capacity ?? { min: p.initialInstanceCount, max: p.initialInstanceCount * 2 };
  e.range(`${pre}.capacity.min`, cap.min, 1, 10000, 'use at least 1: plain variants cannot scale to zero', true);
  e.range(`${pre}.capacity.max`, cap.max, 1, 10000, 'use a whole number of instances ≥ 1', true);
  // The bounds are used at synth (the breaker's settings, the readiness checks, the simulator), so they
  // must be literal: a token (e.g. a CfnParameter) would be read as its placeholder number.
  for (const [bound, value] of [
    ['min', cap.min],
    ['max', cap.max],
  ] as const) {
    if (Token.isUnresolved(value)) {
      e.add(
        `${pre}.capacity.${bound}`,
        new Described('a token'),
        'a literal integer from 1 to 10000 (the breaker, the readiness checks and the simulator use the bounds at synth)',
        'give a number; to vary it per environment, read it in the app (e.g. from context) rather than from a CfnParameter',
      );
    }
  }
  const literal = (...values: number[]) => !values.some(v => Token.isUnresolved(v));
  if (literal(cap.min, cap.max) && cap.min > cap.max)
    e.add(`${pre}.capacity`, `min ${cap.min} > max ${cap.max}`, 'min ≤ max', 'raise max or lower min');
  if (literal(cap.min, cap.max, p.initialInstanceCount) && (p.initialInstanceCount < cap.min || p.initialInstanceCount > cap.max)) {
    e.add(
      `${pre}.instanceCount`,
      p.initialInstanceCount,
      `within capacity [${cap.min}, ${cap.max}]`,
      'set the initial instance count inside the capacity bounds',
    );
  }
  if (p.qpsPerInstance !== undefined && !(p.qpsPerInstance > 0)) {
    e.add(`${pre}.qpsPerInstance`, p.qpsPerInstance, 'a number > 0', 'give the requests per second one instance should carry, e.g. 150');
  }
  if (p.concurrentRequestsPerModelTarget !== undefined && !(p.concurrentRequestsPerModelTarget > 0)) {
    e.add(`${pre}.concurrentRequestsPerModelTarget`, p.concurrentRequestsPerModelTarget, 'a number > 0', 'e.g. 4 in-flight requests per model copy');
  }
  if (p.memoryTargetPercent !== undefined && !(p.memoryTargetPercent >= 10 && p.memoryTargetPercent <= 95)) {
    e.add(
      `${pre}.memoryTargetPercent`,
      p.memoryTargetPercent,
      'a percentage from 10 to 95',
      'e.g. 70: below the breaker’s 80 % degrade trigger, so capacity is added before the breaker degrades',
    );
  }
  (p.schedules ?? []).forEach((s, i) => {
    if (!literal(cap.min, cap.max)) return;
    const min = s.minCapacity;
    const max = s.maxCapacity;
    if (min === undefined && max === undefined)
      e.add(`${pre}.schedules[${i}]`, 'no bounds', 'minCapacity and/or maxCapacity', 'e.g. { minCapacity: 4 }');
    e.range(`${pre}.schedules[${i}].minCapacity`, min, 1, 10000, 'use at least 1', true);
    e.range(`${pre}.schedules[${i}].maxCapacity`, max, 1, 10000, 'use at least 1', true);
    // The bounds in force once the action runs (an unset one keeps the target's): AAS needs min ≤ max.
    const effMin = min ?? cap.min;
    const effMax = max ?? cap.max;
    if (effMin > effMax) {
      e.add(
        `${pre}.schedules[${i}]`,
        new Described(`min ${effMin} > max ${effMax}`),
        `scheduled bounds with min ≤ max (unset ones keep capacity [${cap.min}, ${cap.max}])`,
        'set both minCapacity and maxCapacity on the scheduled action, or keep the scheduled min within the capacity max',
      );
    }
    const expr = s.schedule?.expressionString;
    if (typeof expr !== 'string' || !/^(cron|at|rate)\(/.test(expr)) {
      e.add(
        `${pre}.schedules[${i}].schedule`,
        String(expr),
        'a cron(...), at(...) or rate(...) expression',
        'use appscaling.Schedule.cron({ hour: "19", minute: "0" })',
      );
    } else {
      for (const problem of cronProblems(expr))
        e.add(`${pre}.schedules[${i}].schedule`, expr, problem, 'fix the cron field, e.g. appscaling.Schedule.cron({ hour: "19", minute: "0" })');
    }
  });
  return e;
}

/** Ranges of the six fields of an Application Auto Scaling cron expression (minutes hours day month weekday year). */
const CRON_FIELDS: { name: string; min: number; max: number; names?: string[] }[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] },
  { name: 'day of week', min: 1, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
  { name: 'year', min: 1970, max: 2199 },
];

/**
 * Pure: the out-of-range fields of a `cron(...)` expression (empty for `at(...)`, `rate(...)` and
 * valid crons). Checks the numbers in each field (lists, ranges, steps; `*`, `?`, `L`, `W`, `#` pass).
 */
export function cronProblems(expression: string): string[] {
  const m = /^cron\((.*)\)$/.exec(expression.trim());
  if (!m) return /^\s*cron\(/.test(expression) ? ['a cron(...) expression with nothing after its closing parenthesis'] : [];
  const fields = m[1].trim().split(/\s+/);
  if (fields.length !== 6) return [`6 cron fields (minute hour day month weekday year), got ${fields.length}`];
  const out: string[] = [];
  fields.forEach((field, i) => {
    const f = CRON_FIELDS[i];
    for (const part of field.split(',')) {
      const [range, step] = part.split('/');
      if (step !== undefined && !/^\d+$/.test(step)) out.push(`${f.name} step '${step}' is not a number`);
      for (const token of range.split('-')) {
        if (f.names?.includes(token.toUpperCase())) continue; // before the L/W suffixes come off: JUL ends in L
        const t = token.replace(/[LW]$/, '').replace(/#\d+$/, '').toUpperCase();
        if (t === '' || t === '*' || t === '?' || t === 'L') continue;
        const n = f.names?.includes(t) ? f.names.indexOf(t) + f.min : Number(t);
        if (!Number.isInteger(n) || n < f.min || n > f.max) out.push(`${f.name} ${f.min}–${f.max} (got '${token}')`);
      }
    }
  });
  return out;
}
