/**
 * The memory circuit breaker of one endpoint: its trigger alarms, the level parameter the container
 * reads, and its function (its own, or a SharedCircuitBreaker's), plus the pure mapping from the
 * construct's options to the policy's configuration and their validation.
 */
import { Duration, Stack, Tags } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { VariantAutoScaling } from '../auto-scaling';
import { endpointArnFor } from '../endpoint-base';
import { SageMakerInstanceType } from '../instance-types';
import { createAlarm } from '../monitoring/alarm-factory';
import { EndpointMetricFactory } from '../monitoring/metrics';
import { Described, PropErrors } from '../validation';
import {
  BREAKER_ENV as ENV,
  BREAKER_METRICS,
  BREAKER_NAMESPACE,
  BREAKER_SETTINGS_TAG,
  breakerAlarmName,
  DEFAULT_APPLICATION_NAMESPACE,
  ENDPOINT_EVENT_TYPES,
} from './contract';
import { BreakerConfig, DEFAULT_CONFIG, VariantCapacity } from './policy';
import { SharedCircuitBreaker } from './shared-circuit-breaker';
import { BreakerRuntime, createBreakerRuntime, grantScaling } from './wiring';
import { UNIT_PROPS, unitsChecked } from '../private/unit-props';
import { guardResourceTypes } from '../region-resource-types';

export type { BreakerConfig } from './policy';

/**
 * The 5XX window: the breaker's error-rate alarm and the function judge the same 10 minutes
 * (incident B: "sliding window of 10 minutes, open at 5 %").
 */
export const ERROR_WINDOW = Duration.minutes(10);
/** Circuit-breaker settings. Every field has the incident-proven default. */
export interface CircuitBreakerOptions {
  /**
   * Create the breaker.
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * Degrade when the hottest instance's memory (host, or GPU normalised by GPU count) reaches this %.
   * @default 80 (incident B)
   */
  readonly degradeAtPercent?: number;
  /**
   * Open (all traffic to the fallback, level 2) at this memory %.
   * @default 95
   */
  readonly criticalAtPercent?: number;
  /**
   * Recover only after memory stays below this % for `recoveryDwell` (hysteresis).
   * @default 70
   */
  readonly recoverBelowPercent?: number;
  /**
   * Open when the 5XX rate over the 10-minute window reaches this %.
   * @default 5 (incident B)
   */
  readonly errorRateThresholdPercent?: number;
  /**
   * Fewer invocations than this in the window: the error rate is not judged.
   * @default 20
   */
  readonly minInvocations?: number;
  /**
   * Minimum time in a state before any de-escalation.
   * @default Duration.minutes(5)
   */
  readonly minDwell?: Duration;
  /**
   * How long memory must stay below `recoverBelowPercent` before recovering (≤ 15 minutes).
   * @default Duration.minutes(5)
   */
  readonly recoveryDwell?: Duration;
  /**
   * Time between recovery steps.
   * @default Duration.minutes(2)
   */
  readonly recoveryStepInterval?: Duration;
  /**
   * Steps from the degraded share back to all traffic on the primary.
   * @default 3
   */
  readonly recoverySteps?: number;
  /**
   * Failed recovery probes in a row (memory back at the degrade level during RECOVERING, or within
   * 10 minutes of CLOSED) that are retried after the normal `minDwell`; from the next one the wait
   * before a probe doubles each time, up to `maxProbeWait`. Probing never stops, so a single spike at
   * steady traffic never leaves the endpoint degraded for good.
   * @default 3
   */
  readonly maxFailedProbes?: number;
  /**
   * The longest wait before a recovery probe once `maxFailedProbes` is passed.
   * @default Duration.hours(1)
   */
  readonly maxProbeWait?: Duration;
  /**
   * Share of traffic (%) the fallback gets in DEGRADED. OPEN gives it 100 %.
   * @default 50
   */
  readonly degradedFallbackSharePercent?: number;
  /**
   * Decide and log, but change nothing.
   * @default false
   */
  readonly dryRun?: boolean;
  /**
   * Retention of the breaker's logs.
   * @default logs.RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Reserve this many concurrent executions for the breaker function. Reserving fails the deploy
   * in accounts whose unreserved concurrency is at its minimum (new accounts with a low quota:
   * "decreases account's UnreservedConcurrentExecution below its minimum value"), so it is off by
   * default. Without it, concurrent evaluations (an alarm event and the schedule at once) are
   * harmless: each writes absolute weights and an absolute state computed from what it read, and
   * writes only when the state changes, so a second evaluation repeats the first or is superseded
   * by the next one a minute later.
   * @default - no reserved concurrency
   */
  readonly reservedConcurrency?: number;
  /**
   * Tag the endpoint's scalable targets and scope the breaker's `RegisterScalableTarget` by that tag
   * (`aws:ResourceTag`). `Tags` on `AWS::ApplicationAutoScaling::ScalableTarget` is weeks old in
   * CloudFormation: where it is not known yet the deploy fails on it, so `false` writes no tag and grants
   * `RegisterScalableTarget` on the account's SageMaker variant targets in this Region instead (conditions
   * `application-autoscaling:service-namespace` = sagemaker and `scalable-dimension` =
   * sagemaker:variant:DesiredInstanceCount). The capacity hold works the same either way: the function
   * addresses targets by resource id, never by tag.
   * @default true
   */
  readonly tagScalableTargets?: boolean;
  /**
   * Run this endpoint's breaker in a function shared by several endpoints (one function, queue, log
   * group, schedule and table for all), as `ResilientEndpointFleet` does.
   * @default - a function of its own
   */
  readonly shared?: SharedCircuitBreaker;
}

/** Props of {@link CircuitBreaker}. */
export interface CircuitBreakerProps extends CircuitBreakerOptions {
  /** Endpoint name (a literal, or a token such as a parameter or `CfnEndpoint.attrEndpointName`). */
  readonly endpointName: string;
  /**
   * The endpoint's ARN, for the function's IAM policy.
   * @default - built from `endpointName` (lower-cased when literal, as SageMaker writes ARNs)
   */
  readonly endpointArn?: string;
  /** The variant whose memory is watched and whose traffic is shifted. */
  readonly primaryVariantName: string;
  /** Its instance type (GPU count for normalisation). */
  readonly primaryInstanceType: SageMakerInstanceType;
  /**
   * The variant that receives shifted traffic.
   * @default - none: only the degrade level is published
   */
  readonly fallbackVariantName?: string;
  /**
   * The primary's autoscaling: while the breaker is not CLOSED it suspends the primary's dynamic
   * scale-in (through Application Auto Scaling, never by setting counts).
   * @default - no capacity actions on the primary
   */
  readonly primaryAutoScaling?: VariantAutoScaling;
  /**
   * The fallback's autoscaling: the breaker raises its minimum to what the shifted share needs and
   * never shifts more than its instances in service can carry.
   * @default - no capacity actions on the fallback; the full share is shifted
   */
  readonly fallbackAutoScaling?: VariantAutoScaling;
  /**
   * How often the endpoint publishes its utilization metrics (its `MetricsConfig`). The breaker's
   * memory triggers and its own reads use this period (10 s: high-resolution alarms).
   * @default Duration.minutes(1) (SageMaker's default)
   */
  readonly metricPublishFrequency?: Duration;
  /**
   * The endpoint publishes per-GPU metrics (`MetricsConfig.EnableEnhancedMetrics`): on multi-GPU
   * instances memory is judged on the hottest GPU, not on the mean.
   * @default false
   */
  readonly perGpuMetrics?: boolean;
  /**
   * The namespace the container publishes its guard metrics in (`GuardPressure`, `GuardMemoryRefusals`,
   * `DeliberateClientErrors`: the runtime helper, with `RESILIENT_ENDPOINT_METRICS_NAMESPACE`). The
   * breaker reads them and is triggered by them: the guard's pressure at the degrade level, or any
   * memory refusal, degrades at least; and the container's deliberate 4XX are told apart from dead workers.
   * @default 'ResilientEndpoint/Application'
   */
  readonly applicationNamespace?: string;
}

/**
 * The memory circuit breaker of one endpoint: trigger alarms at 80 % memory (at the endpoint's
 * publishing period) and on the 10-minute 5XX rate; an SSM parameter with the degrade level the
 * container reads; and a function — its own (with a dead-letter queue, log group, state table,
 * 1-minute schedule and rules for its alarms and the endpoint's state changes) or a
 * `SharedCircuitBreaker`'s — that runs the pure policy: it publishes the level at once, shifts
 * **weights** to the fallback when the endpoint is InService, and holds capacity through
 * Application Auto Scaling's settings (never instance counts). Usable alone for any endpoint.
 */
export class CircuitBreaker extends Construct {
  /** Namespace of the breaker's own metrics (`BreakerState`, `FallbackSharePercent`, `DegradeLevel`; dimension `EndpointName`). */
  public static readonly METRIC_NAMESPACE: string = BREAKER_NAMESPACE;

  /** The function. */
  public readonly function: lambda.Function;
  /** The parameter holding the breaker state; the container reads its `level`. */
  public readonly parameter: ssm.StringParameter;
  /** The alarms that trigger a fast evaluation. */
  public readonly alarms: cloudwatch.Alarm[] = [];
  /** Failed invocations. */
  public readonly deadLetterQueue: sqs.Queue;
  /** The table holding the breaker's state (its item, written only by the function; shared tables hold one per endpoint). */
  public readonly stateTable: dynamodb.Table;
  /** The policy configuration the function runs with (also what the simulator uses). */
  public readonly config: BreakerConfig;
  private readonly props: CircuitBreakerProps;

  constructor(scope: Construct, id: string, props: CircuitBreakerProps) {
    super(scope, id);
    props = unitsChecked(this, props, UNIT_PROPS.CircuitBreakerProps);
    guardResourceTypes(this);
    this.props = props;
    const errors = validateBreaker(props);
    this.node.addValidation({ validate: () => errors.all });
    const stack = Stack.of(this);
    const spec = props.primaryInstanceType.spec;
    const period = props.metricPublishFrequency ?? Duration.minutes(1);
    const perGpu = props.perGpuMetrics ?? false;
    const config = breakerConfig(props, props.fallbackVariantName !== undefined);
    this.config = config;
    const degradeAt = config.degradeAtPercent;
    const errorRate = config.errorRateOpen;
    const applicationNamespace = props.applicationNamespace ?? DEFAULT_APPLICATION_NAMESPACE;

    // The container's channel: the degrade level the function publishes. Its template value never
    // changes, so CloudFormation does not rewrite it on stack updates; if it ever did, the next
    // evaluation re-publishes the level from the state table.
    this.parameter = new ssm.StringParameter(this, 'State', {
      description: 'Circuit-breaker degrade level of a SageMaker endpoint; the container reads "level" (0 normal, 1 degraded, 2 critical)',
      stringValue: JSON.stringify({ level: 0, state: 'CLOSED', since: 0, share: 0, entryShare: 0, step: 0, reasons: ['initial'] }),
    });
    const endpointArn = props.endpointArn ?? endpointArnFor(this, props.endpointName);
    const scaled = [props.primaryAutoScaling, props.fallbackAutoScaling].filter((x): x is VariantAutoScaling => x !== undefined);
    // What the function needs to know of this endpoint (environment of its own function, or the
    // settings parameter a shared function reads).
    const settings = {
      endpointName: props.endpointName,
      primaryVariant: props.primaryVariantName,
      fallbackVariant: props.fallbackVariantName,
      parameterName: this.parameter.parameterName,
      gpuCount: spec.gpuCount,
      errorWindowSeconds: ERROR_WINDOW.toSeconds(),
      metricPeriodSeconds: period.toSeconds(),
      perGpuMetrics: perGpu,
      primaryCapacity: props.primaryAutoScaling ? capacityOf(props.primaryAutoScaling) : undefined,
      fallbackCapacity: props.fallbackAutoScaling && props.fallbackVariantName ? capacityOf(props.fallbackAutoScaling) : undefined,
      dryRun: props.dryRun ?? false,
      metricNamespace: BREAKER_NAMESPACE,
      applicationNamespace,
      config,
    };

    let runtime: BreakerRuntime;
    if (props.shared) {
      const settingsParameter = new ssm.StringParameter(this, 'Settings', {
        description: 'Circuit-breaker settings of a SageMaker endpoint, read by the shared breaker function',
        stringValue: stack.toJsonString(settings),
      });
      Tags.of(settingsParameter).add(BREAKER_SETTINGS_TAG, props.endpointName);
      runtime = props.shared.register({
        endpointName: props.endpointName,
        endpointArn,
        levelParameter: this.parameter,
        settingsParameter,
        scalableTargets: scaled,
        tagScalableTargets: props.tagScalableTargets !== false,
      });
    } else {
      runtime = createBreakerRuntime(this, {
        description: `Memory circuit breaker of SageMaker endpoint ${props.endpointName}`,
        logRetention: props.logRetention,
        reservedConcurrency: props.reservedConcurrency,
        environment: {
          [ENV.ENDPOINT_NAME]: props.endpointName,
          [ENV.PRIMARY_VARIANT]: props.primaryVariantName,
          [ENV.FALLBACK_VARIANT]: props.fallbackVariantName ?? '',
          [ENV.PARAMETER_NAME]: this.parameter.parameterName,
          [ENV.GPU_COUNT]: String(spec.gpuCount),
          [ENV.ERROR_WINDOW_SECONDS]: String(ERROR_WINDOW.toSeconds()),
          [ENV.METRIC_PERIOD_SECONDS]: String(period.toSeconds()),
          [ENV.PER_GPU_METRICS]: String(perGpu),
          ...(settings.primaryCapacity ? { [ENV.PRIMARY_CAPACITY]: JSON.stringify(settings.primaryCapacity) } : {}),
          ...(settings.fallbackCapacity ? { [ENV.FALLBACK_CAPACITY]: JSON.stringify(settings.fallbackCapacity) } : {}),
          [ENV.DRY_RUN]: String(props.dryRun ?? false),
          [ENV.METRIC_NAMESPACE]: BREAKER_NAMESPACE,
          [ENV.APPLICATION_NAMESPACE]: applicationNamespace,
          [ENV.BREAKER_CONFIG]: JSON.stringify(config),
        },
      });
      runtime.endpoints.addResources(endpointArn);
      this.parameter.grantRead(runtime.role);
      this.parameter.grantWrite(runtime.role);
      grantScaling(this, runtime.role, scaled, this.node.addr, props.tagScalableTargets !== false);
    }
    this.function = runtime.function;
    this.deadLetterQueue = runtime.deadLetterQueue;
    this.stateTable = runtime.stateTable;

    // Fast path: alarms on the breaker thresholds → EventBridge → function. Memory triggers use the
    // endpoint's publishing period: at 10 s they are high-resolution alarms on one 10-s period. (If
    // 10-s data were not stored for these metrics, such an alarm would not stay silent: with
    // notBreaching it flaps, ALARM on the slot that holds the minute's point and OK 10 s later
    // (PutMetricAlarm, Period; real-account.md item 23), and each ALARM starts an evaluation. The
    // function reads the data's own spacing, and the 1-minute schedule protects either way.)
    const m = new EndpointMetricFactory(props.endpointName, props.primaryVariantName, applicationNamespace);
    const alarmNames: string[] = [];
    const alarm = (aid: string, metric: cloudwatch.IMetric, threshold: number, description: string) => {
      const alarmName = breakerAlarmName(props.endpointName, props.primaryVariantName, aid);
      alarmNames.push(alarmName);
      const a = createAlarm(this, {
        id: aid,
        alarmName,
        description,
        metric,
        threshold,
        // Only a trigger: the function itself holds state on missing data.
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      this.alarms.push(a);
    };
    alarm(
      'HostMemory',
      m.memoryUtilization({ period }),
      degradeAt,
      `Breaker trigger: host memory >= ${degradeAt} % on the hottest instance of ${props.primaryVariantName}.`,
    );
    if (spec.gpuCount > 0) {
      alarm(
        'GpuMemory',
        m.gpuMemoryUtilization({ period }),
        degradeAt * spec.gpuCount,
        `Breaker trigger: GPU memory >= ${degradeAt} % of ${spec.gpuCount} GPU(s) (threshold ${degradeAt * spec.gpuCount} on the summed metric).`,
      );
    }
    if (perGpu && spec.gpuCount > 1) {
      alarm(
        'HottestGpuMemory',
        m.hottestGpuMemoryUtilization(),
        degradeAt,
        `Breaker trigger: one GPU of ${spec.gpuCount} at >= ${degradeAt} % memory (per-GPU enhanced metrics, Metrics Insights MAX).`,
      );
    }
    // The container guard (the lower layer) reports what it absorbs, every 10 s at high resolution: its
    // pressure at the degrade level, or any memory refusal, runs an evaluation within seconds.
    alarm(
      'GuardPressure',
      m.guardPressure(),
      degradeAt,
      `Breaker trigger: the container guard's pressure >= ${degradeAt} % of the container's memory budget on the hottest instance of ${props.primaryVariantName} (${applicationNamespace}).`,
    );
    alarm(
      'GuardMemoryRefusals',
      m.guardMemoryRefusals(),
      1,
      `Breaker trigger: the container guard refused a request for memory on ${props.primaryVariantName}: the breaker evaluates (it degrades at ${+(config.guardRefusalRate * 100).toFixed(4)} % of requests, or on refusals that recur while memory confirms) (${applicationNamespace}).`,
    );
    const window = ERROR_WINDOW;
    alarm(
      'ErrorRate',
      new cloudwatch.MathExpression({
        expression: `IF(inv >= ${config.minInvocations}, dead / inv, 0)`,
        usingMetrics: { dead: m.unexpectedModelErrors({ period: window }), inv: m.invocations({ period: window }) },
        period: window,
        label: 'Errors not chosen by the container over 10 minutes',
      }),
      errorRate,
      // 0.07 × 100 is 7.000000000000001
      `Breaker trigger: errors the container did not choose (dead or hung workers, timeouts, 5XX: InvocationModelErrors - DeliberateClientErrors) >= ${+(errorRate * 100).toFixed(4)} % over 10 minutes.`,
    );

    if (props.shared) {
      // The shared function's rules cover this endpoint's alarms and state changes.
      props.shared.watchAlarms(alarmNames);
      return;
    }
    new events.Rule(this, 'AlarmRule', {
      description: `Evaluate the circuit breaker of ${props.endpointName} when its alarms change state`,
      eventPattern: {
        source: ['aws.cloudwatch'],
        detailType: ['CloudWatch Alarm State Change'],
        resources: this.alarms.map(a => a.alarmArn),
      },
      targets: [new targets.LambdaFunction(this.function, { deadLetterQueue: this.deadLetterQueue, retryAttempts: 2 })],
    });
    // Weights refused while the endpoint was Updating are applied as soon as SageMaker reports its next
    // state change (no status filter: the event spells it IN_SERVICE, the API InService; the function
    // asks DescribeEndpoint anyway).
    new events.Rule(this, 'EndpointStateChange', {
      description: `Re-evaluate the circuit breaker of ${props.endpointName} when the endpoint changes state (e.g. back to InService)`,
      eventPattern: {
        source: ['aws.sagemaker'],
        detailType: ENDPOINT_EVENT_TYPES,
        detail: { EndpointName: [props.endpointName] },
      },
      targets: [new targets.LambdaFunction(this.function, { deadLetterQueue: this.deadLetterQueue, retryAttempts: 2 })],
    });
  }

  /** The breaker state as a metric: 0 CLOSED, 1 DEGRADED, 2 OPEN, 3 RECOVERING (`Maximum`). */
  public metricState(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(BREAKER_METRICS.STATE, props);
  }

  /** The degrade level the container applies: 0, 1 or 2 (`Maximum`). */
  public metricDegradeLevel(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(BREAKER_METRICS.DEGRADE_LEVEL, props);
  }

  /** Share of traffic on the fallback (%). */
  public metricFallbackShare(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(BREAKER_METRICS.FALLBACK_SHARE, props);
  }

  /** One of the breaker's own metrics (`ResilientEndpoint/CircuitBreaker`, dimension `EndpointName`; default `Maximum` per minute). */
  public metric(metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: BREAKER_NAMESPACE,
      metricName,
      dimensionsMap: { EndpointName: this.props.endpointName },
      statistic: 'Maximum',
      period: Duration.minutes(1),
      ...props,
    });
  }

  /** Lets a role (the model's) read the degrade level. */
  public grantReadLevel(grantee: iam.IGrantable): iam.Grant {
    return this.parameter.grantRead(grantee);
  }

  /** Dashboard widgets of the breaker. */
  public dashboardWidgets(): cloudwatch.IWidget[] {
    return [
      new cloudwatch.TextWidget({ markdown: '## Circuit breaker (0 CLOSED, 1 DEGRADED, 2 OPEN, 3 RECOVERING)', width: 24, height: 1 }),
      new cloudwatch.GraphWidget({ title: 'Breaker state', left: [this.metricState()], width: 12, leftYAxis: { min: 0, max: 3 } }),
      new cloudwatch.GraphWidget({
        title: 'Traffic on fallback (%)',
        left: [this.metricFallbackShare()],
        width: 12,
        leftYAxis: { min: 0, max: 100 },
      }),
    ];
  }
}

/**
 * Pure: the policy's configuration from the construct options. Defaults come from the policy's own
 * `DEFAULT_CONFIG`, so the Lambda, the construct and the simulator cannot disagree.
 */
export function breakerConfig(p: CircuitBreakerOptions, hasFallback: boolean): BreakerConfig {
  const d = DEFAULT_CONFIG;
  return {
    ...d,
    degradeAtPercent: p.degradeAtPercent ?? d.degradeAtPercent,
    criticalAtPercent: p.criticalAtPercent ?? d.criticalAtPercent,
    recoverBelowPercent: p.recoverBelowPercent ?? d.recoverBelowPercent,
    errorRateOpen: p.errorRateThresholdPercent !== undefined ? p.errorRateThresholdPercent / 100 : d.errorRateOpen,
    minInvocations: p.minInvocations ?? d.minInvocations,
    minDwellSeconds: p.minDwell?.toSeconds() ?? d.minDwellSeconds,
    recoveryDwellSeconds: p.recoveryDwell?.toSeconds() ?? d.recoveryDwellSeconds,
    recoveryStepSeconds: p.recoveryStepInterval?.toSeconds() ?? d.recoveryStepSeconds,
    recoverySteps: p.recoverySteps ?? d.recoverySteps,
    maxFailedProbes: p.maxFailedProbes ?? d.maxFailedProbes,
    maxProbeWaitSeconds: p.maxProbeWait?.toSeconds() ?? d.maxProbeWaitSeconds,
    degradedFallbackShare: p.degradedFallbackSharePercent !== undefined ? p.degradedFallbackSharePercent / 100 : d.degradedFallbackShare,
    hasFallback,
  };
}

/** What the function needs to know of a variant's autoscaling. */
function capacityOf(s: VariantAutoScaling): VariantCapacity {
  return { min: s.capacity.min, max: s.capacity.max, qpsPerInstance: s.qpsPerInstance, ...(s.hasSchedules ? { scheduled: true } : {}) };
}

/** Pure validation of breaker options. */
export function validateBreaker(p: CircuitBreakerOptions): PropErrors {
  const e = new PropErrors();
  // A memory level from 0 to 1 is a fraction given for a percentage (degrade at 0.8 for 80 %: degraded for
  // ever); 1 % of errors or of traffic is a real, if small, setting.
  let fractions = 0;
  const pct = (n: keyof CircuitBreakerOptions, v: number | undefined, memory: boolean, fix = 'give a percentage from 1 to 100') => {
    if (e.fraction(`circuitBreaker.${n}`, v, 1, !memory)) fractions++;
    else e.range(`circuitBreaker.${n}`, v, 1, 100, fix);
  };
  pct('degradeAtPercent', p.degradeAtPercent, true);
  pct('criticalAtPercent', p.criticalAtPercent, true);
  pct('recoverBelowPercent', p.recoverBelowPercent, true);
  pct('errorRateThresholdPercent', p.errorRateThresholdPercent, false);
  pct('degradedFallbackSharePercent', p.degradedFallbackSharePercent, false, 'give a share from 1 to 100 %');
  const { degradeAtPercent: degrade, criticalAtPercent: critical, recoverBelowPercent: recover } = breakerConfig(p, true);
  // (Thresholds given as fractions are reported above, once each.)
  if (!fractions && !(recover < degrade && degrade < critical)) {
    e.add(
      'circuitBreaker thresholds',
      new Described(`recover ${recover} / degrade ${degrade} / critical ${critical}`),
      'recoverBelowPercent < degradeAtPercent < criticalAtPercent (hysteresis)',
      'e.g. 70 / 80 / 95',
    );
  }
  e.range('circuitBreaker.recoverySteps', p.recoverySteps, 1, 20, 'give a whole number of steps, e.g. 3', true);
  e.range('circuitBreaker.minInvocations', p.minInvocations, 1, 1e9, 'give a whole number, e.g. 20', true);
  e.range('circuitBreaker.minDwell (s)', p.minDwell?.toSeconds(), 60, 3600, 'use Duration.minutes(1..60)');
  e.range(
    'circuitBreaker.recoveryDwell (s)',
    p.recoveryDwell?.toSeconds(),
    60,
    900,
    'use Duration.minutes(1..15): the breaker reads 15 minutes of history',
  );
  e.range('circuitBreaker.maxFailedProbes', p.maxFailedProbes, 0, 100, 'give a whole number of probes, e.g. 3', true);
  e.range('circuitBreaker.maxProbeWait (s)', p.maxProbeWait?.toSeconds(), 300, 86400, 'use Duration.minutes(5)..Duration.days(1)');
  e.range('circuitBreaker.recoveryStepInterval (s)', p.recoveryStepInterval?.toSeconds(), 60, 3600, 'use Duration.minutes(1..60)');
  e.range('circuitBreaker.reservedConcurrency', p.reservedConcurrency, 1, 1000, 'give a whole number of executions, e.g. 1, or leave it unset', true);
  return e;
}
