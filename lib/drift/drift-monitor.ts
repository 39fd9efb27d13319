import { Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { bundledCode, deployedLength, LAMBDA_ENVIRONMENT_LIMIT } from '../breaker/wiring';
import { MemoryProfile } from '../memory-profile';
import { createAlarm } from '../monitoring/alarm-factory';
import { acknowledgeWildcard } from '../nag';
import { PropErrors } from '../validation';
import { BYTES_SELECTOR, CaptureSide, parseSelector } from './capture';
import {
  DRIFT_CONFIG_ENV,
  DRIFT_METRICS,
  DRIFT_NAMESPACE,
  DriftFunctionConfig,
  DriftRunInput,
  FeatureConfig,
  learnedBaselinePrefix,
} from './contract';
import { DriftFeature, DriftFeatureKind, DriftFeatures } from './features';
import { DataQualityMonitor, ModelMonitorOptions } from './model-monitor';
import { DriftNormalisation } from './statistics';
import { UNIT_PROPS, unitsChecked } from '../private/unit-props';
import { guardResourceTypes } from '../region-resource-types';

/** Where a drift baseline comes from. */
export abstract class DriftBaseline {
  /**
   * A baseline document already in S3 (e.g. written by the training pipeline with `buildBaseline`):
   * the function may read that one object.
   * @param uri `s3://bucket/key` (a literal)
   */
  public static fromS3Uri(uri: string): DriftBaseline {
    return new S3UriBaseline(uri);
  }

  /** A baseline document on disk, shipped as an asset with the stack (versioned with the code that deploys the model). */
  public static fromFile(path: string): DriftBaseline {
    return new FileBaseline(path);
  }

  /**
   * No file: the first window captured after each model change becomes the baseline (stored in the capture
   * bucket at `drift-baselines/<endpoint>/<model hash>.json`, outside the capture prefix and its expiry, kept
   * for the model's life), and the next windows are compared with it. A drift that is already there on the
   * first day is not seen: prefer a baseline from the training data.
   */
  public static fromCapture(): DriftBaseline {
    return new CaptureBaseline();
  }

  /** Grants the function the baseline's object; returns its `s3://` URI (empty: none) or the problem. */
  public abstract bind(scope: Construct, grantee: iam.IGrantable): DriftBaselineConfig;
}

/** A bound baseline. */
export interface DriftBaselineConfig {
  /** The baseline document's `s3://` URI; empty: learned from the capture. */
  readonly uri: string;
  /**
   * Why the baseline cannot be used (a synth error).
   * @default - none
   */
  readonly problem?: string;
}

class S3UriBaseline extends DriftBaseline {
  constructor(private readonly uri: string) {
    super();
  }
  public bind(scope: Construct, grantee: iam.IGrantable): DriftBaselineConfig {
    const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/(.+)$/.exec(this.uri);
    if (Token.isUnresolved(this.uri) || !m) {
      const errors = new PropErrors();
      errors.add(
        'drift.baseline',
        this.uri,
        'a literal s3://bucket/key',
        'give the baseline document’s S3 URI, e.g. s3://my-bucket/baselines/model-v3.json',
      );
      return { uri: '', problem: errors.all[0] };
    }
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [`arn:${Stack.of(scope).partition}:s3:::${m[1]}/${m[2]}`] }),
    );
    return { uri: this.uri };
  }
}

class FileBaseline extends DriftBaseline {
  constructor(private readonly path: string) {
    super();
  }
  public bind(scope: Construct, grantee: iam.IGrantable): DriftBaselineConfig {
    const asset = new s3assets.Asset(scope, 'BaselineFile', { path: this.path });
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [asset.bucket.arnForObjects(asset.s3ObjectKey)] }),
    );
    return { uri: asset.s3ObjectUrl };
  }
}

class CaptureBaseline extends DriftBaseline {
  public bind(): DriftBaselineConfig {
    return { uri: '' };
  }
}

/** Drift settings of a `ResilientEndpoint` (`drift: {…}`). Off unless given. */
export interface DriftOptions {
  /**
   * Create the drift monitor.
   * @default true when `drift` is given
   */
  readonly enabled?: boolean;
  /**
   * The features compared.
   * @default - `DriftFeatures.defaults(memoryProfile)`: the request size as the memory profile measured it,
   * compared with the profiled distribution in the profile's own unit (when the profile records how its
   * sizes are read: `sizeSelector`), and the request body's bytes, compared with a baseline learned from
   * the first window (bytes are not the profile's unit)
   */
  readonly features?: DriftFeature[];
  /**
   * The baseline.
   * @default DriftBaseline.fromCapture() - the first window after each model change
   */
  readonly baseline?: DriftBaseline;
  /**
   * How Wasserstein-1 is made unit-less.
   * @default DriftNormalisation.STANDARD_DEVIATION - 0.15 means a shift of 0.15 baseline standard deviations
   */
  readonly normalisation?: DriftNormalisation;
  /**
   * Normalised Wasserstein-1 alarm threshold (weekly).
   * @default 0.15 (incident B's checklist item 8)
   */
  readonly wassersteinThreshold?: number;
  /**
   * KL divergence alarm threshold, nats (daily).
   * @default 0.3 (incident B)
   */
  readonly klThreshold?: number;
  /**
   * Share-shift alarm threshold for categorical features (total variation, 0–1: the share of traffic that
   * changed category; weekly). Incident B names the cluster-share comparison but no number: 0.1 is this
   * library's choice (a tenth of the traffic changed cluster).
   * @default 0.1
   */
  readonly shareShiftThreshold?: number;
  /**
   * When the Wasserstein run starts; it reads the `wassersteinWindow` before it.
   * @default - weekly, Mondays 03:00 UTC
   */
  readonly wassersteinSchedule?: events.Schedule;
  /**
   * The capture read by the Wasserstein run.
   * @default Duration.days(7)
   */
  readonly wassersteinWindow?: Duration;
  /**
   * When the KL run starts.
   * @default - daily, 03:00 UTC
   */
  readonly klSchedule?: events.Schedule;
  /**
   * The capture read by the KL run.
   * @default Duration.days(1)
   */
  readonly klWindow?: Duration;
  /**
   * Page on drift: the drift alarms' composite sends ALARM and OK to the alarm topic. Drift is a slow
   * signal for the model's owner, not an outage: off by default, the alarms show on the dashboard.
   * @default false
   */
  readonly notify?: boolean;
  /**
   * Values kept per feature and run (a uniform reservoir sample): bounds the function's memory
   * (8 bytes a value) whatever the window's volume.
   * @default 50000
   */
  readonly sampleSize?: number;
  /**
   * Capture objects read per run at most (SageMaker writes many small objects; the rest is skipped and logged).
   * @default 20000
   */
  readonly maxObjects?: number;
  /**
   * KL's additive smoothing: pseudo-counts added to every bin on both sides (an empty bin would make KL infinite).
   * @default 0.5
   */
  readonly smoothing?: number;
  /**
   * The function's log retention.
   * @default logs.RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Also run SageMaker Model Monitor's data-quality job on the same capture (AWS's managed path, with its
   * own statistics); its violation alarms join the drift tier.
   * @default - none
   */
  readonly modelMonitor?: ModelMonitorOptions;
}

/** Props of {@link DriftMonitor}. */
export interface DriftMonitorProps extends DriftOptions {
  /** The endpoint's name (a literal: alarm names derive from it). */
  readonly endpointName: string;
  /** The capture bucket. */
  readonly captureBucket: s3.IBucket;
  /** The capture prefix (the endpoint config's `DestinationS3Uri` key, without slashes at the ends). */
  readonly capturePrefix: string;
  /**
   * The KMS key the captured objects are encrypted with (the function gets kms:Decrypt on it).
   * @default - the bucket's default encryption (an AWS managed key needs no grant)
   */
  readonly captureKey?: kms.IKey;
  /**
   * Variants to read.
   * @default - every variant folder under the endpoint's
   */
  readonly variantNames?: string[];
  /**
   * The model's memory profile: `requestSize` features are compared with the request distribution it was measured on.
   * @default - none
   */
  readonly memoryProfile?: MemoryProfile;
  /**
   * The model version the learned baseline is kept for (a new version learns a new one).
   * @default - the endpoint name (one learned baseline for the endpoint's life)
   */
  readonly modelVersion?: string;
  /**
   * The topic drift alarms notify when `notify` is on.
   * @default - none (with `notify` on, a synth error)
   */
  readonly alarmTopic?: sns.ITopic;
}

/** One drift alarm. */
export interface DriftAlarm {
  /** The alarm. */
  readonly alarm: cloudwatch.Alarm;
  /** The feature. */
  readonly feature: string;
  /** The metric name (`WassersteinDistance`, `KLDivergence`, `ShareShift`). */
  readonly metricName: string;
  /** Its threshold. */
  readonly threshold: number;
}

/**
 * Drift on the captured requests: a function that reads the data capture for a window (weekly for
 * Wasserstein-1, daily for KL), compares each feature with a baseline, and publishes one metric per
 * feature and distance; an alarm per metric, a composite "drift" alarm (the endpoint's drift tier) and
 * dashboard widgets. Usable alone for any capture bucket, prefix and endpoint.
 */
export class DriftMonitor extends Construct {
  /** The function. */
  public readonly function: lambda.Function;
  /** Failed runs. */
  public readonly deadLetterQueue: sqs.Queue;
  /** Every drift alarm. */
  public readonly alarms: DriftAlarm[] = [];
  /** ALARM when any drift alarm is (the drift tier). */
  public readonly compositeAlarm: cloudwatch.CompositeAlarm;
  /** The weekly (Wasserstein) and daily (KL) schedules. */
  public readonly schedules: events.Rule[] = [];
  /** The features compared. */
  public readonly features: DriftFeature[];
  /** The Model Monitor schedule, when asked for. */
  public readonly modelMonitor?: DataQualityMonitor;
  /**
   * ALARM when the daily runs compared nothing for want of a baseline on two days running (no file, no
   * memory profile in the feature's unit, nothing learned yet or a learned baseline deleted): drift is not
   * being measured, which must not read as "no drift".
   */
  public readonly baselineMissingAlarm: cloudwatch.Alarm;
  /** Where learned baselines and the last run's status are kept: `s3://<capture bucket>/drift-baselines/<endpoint>/`. */
  public readonly learnedBaselines: string;
  private readonly endpointName: string;

  constructor(scope: Construct, id: string, props: DriftMonitorProps) {
    super(scope, id);
    props = unitsChecked(this, props, UNIT_PROPS.DriftMonitorProps);
    guardResourceTypes(this);
    const errors = validateDrift(props);
    this.node.addValidation({ validate: () => errors.all });
    this.endpointName = props.endpointName;
    this.features = props.features ?? DriftFeatures.defaults(props.memoryProfile);
    const prefix = props.capturePrefix.replace(/^\/+|\/+$/g, '');
    const endpointPrefix = [prefix, props.endpointName].filter(Boolean).join('/');
    // Beside the capture prefix, not below it: the capture's expiry rule (filtered to its prefix) never reaches them.
    const learnedPrefix = learnedBaselinePrefix(props.endpointName);
    this.learnedBaselines = `s3://${props.captureBucket.bucketName}/${learnedPrefix}/`;
    const baseline = props.baseline ?? DriftBaseline.fromCapture();
    const learn = true; // features without a baseline in the file learn theirs from the first window

    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Drift function of SageMaker endpoint ${props.endpointName}: reads its data capture`,
    });
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }));
    this.grantCaptureRead(role, props, endpointPrefix, learnedPrefix, learn);
    const bound = baseline.bind(this, role);
    if (bound.problem) errors.addMessage(bound.problem);
    const baselineUri = bound.uri;

    const p = props.memoryProfile;
    this.checkUnits(p, props.features !== undefined, errors);
    const config: DriftFunctionConfig = {
      endpointName: props.endpointName,
      bucket: props.captureBucket.bucketName,
      prefix,
      variants: props.variantNames ?? [],
      features: this.features.map(f => featureConfig(f, compareWithProfile(f, p))),
      modelVersion: props.modelVersion ?? props.endpointName,
      baselineUri,
      learnedPrefix,
      learn,
      sizeProfile:
        p && !p.problem && this.features.some(f => compareWithProfile(f, p))
          ? {
              distribution: p.distribution,
              p50: p.p50.size,
              p99: p.p99.size,
              p999: p.p999.size,
              min: Math.min(p.p50.size, ...p.points.map(x => x.size)),
              max: Math.max(p.p999.size, ...p.points.map(x => x.size)),
            }
          : undefined,
      normalisation: props.normalisation ?? DriftNormalisation.STANDARD_DEVIATION,
      smoothing: props.smoothing ?? 0.5,
      sampleSize: props.sampleSize ?? 50000,
      maxObjects: props.maxObjects ?? 20000,
    };
    // Lambda's 4 KB limit on the environment (keys and values) fails the deploy, not the synth: checked here,
    // with every token (the bucket's and the model's generated names, an asset's URL) at its longest.
    const envBytes = driftEnvironmentBytes(config);
    if (envBytes > LAMBDA_ENVIRONMENT_LIMIT)
      errors.addMessage(
        `drift: the drift function's configuration would be ~${envBytes} bytes in its environment (${config.features.length} features); ` +
          `allowed: ${LAMBDA_ENVIRONMENT_LIMIT} bytes (Lambda's 4 KB limit on environment variables, keys and values; the deploy would fail). ` +
          'Fix: split the features over two DriftMonitors on the same capture, or shorten their names and selectors',
      );
    this.function = new lambda.Function(this, 'Function', {
      description: `Data drift of SageMaker endpoint ${props.endpointName} (Wasserstein weekly, KL daily)`,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      handler: 'index.handler',
      code: bundledCode(this, 'drift'),
      role,
      // 1 GB: the samples (features × sampleSize × 8 bytes) and one object's lines at a time, with room;
      // and Lambda's CPU share grows with memory (parsing is CPU-bound).
      memorySize: 1024,
      timeout: Duration.minutes(15),
      logGroup,
      deadLetterQueue: this.deadLetterQueue,
      retryAttempts: 0, // a run reads a whole window: a retry re-reads it; the dead-letter queue keeps the event
      environment: { [DRIFT_CONFIG_ENV]: Stack.of(this).toJsonString(config) },
    });
    this.deadLetterQueue.grantSendMessages(role);

    const hours = (d: Duration | undefined, def: number) => Math.max(1, Math.round(d?.toHours({ integral: false }) ?? def));
    const run = (ruleId: string, description: string, schedule: events.Schedule, input: DriftRunInput) => {
      this.schedules.push(
        new events.Rule(this, ruleId, {
          description,
          schedule,
          targets: [
            new targets.LambdaFunction(this.function, {
              event: events.RuleTargetInput.fromObject(input),
              deadLetterQueue: this.deadLetterQueue,
              retryAttempts: 2,
            }),
          ],
        }),
      );
    };
    run(
      'WeeklyWasserstein',
      `Weekly Wasserstein drift of ${props.endpointName}`,
      props.wassersteinSchedule ?? events.Schedule.cron({ weekDay: 'MON', hour: '3', minute: '0' }),
      { distance: 'wasserstein', windowHours: hours(props.wassersteinWindow, 168) },
    );
    run('DailyKl', `Daily KL drift of ${props.endpointName}`, props.klSchedule ?? events.Schedule.cron({ hour: '3', minute: '0' }), {
      distance: 'kl',
      windowHours: hours(props.klWindow, 24),
    });

    this.createAlarms(props);
    this.baselineMissingAlarm = createAlarm(this, {
      id: 'BaselineMissing',
      alarmName: `${props.endpointName}-drift-baseline-missing`,
      description:
        `The daily drift runs of endpoint ${props.endpointName} compared at least one feature with nothing, two days running: ` +
        `no baseline in the file, none from the memory profile in the feature's unit, none learned (no traffic yet, or the learned baseline under ${learnedPrefix}/ was deleted). ` +
        'Drift is not measured for those features. Run `sagemaker-resilient-endpoint doctor` (drift-baseline) to see which.',
      metric: this.metricBaselineMissing('kl'),
      threshold: 1,
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
      // Each run publishes the count, 0 included; a missing run is doctor's drift-runs check.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.checkLifecycle(props.captureBucket, learnedPrefix);
    if (props.modelMonitor) {
      this.modelMonitor = new DataQualityMonitor(this, 'ModelMonitor', {
        ...props.modelMonitor,
        endpointName: props.endpointName,
        captureBucket: props.captureBucket,
        capturePrefix: prefix,
        captureKey: props.captureKey,
      });
    }
    const tier = [...this.alarms.map(a => a.alarm), this.baselineMissingAlarm, ...(this.modelMonitor?.alarms ?? [])];
    this.compositeAlarm = new cloudwatch.CompositeAlarm(this, 'Drift', {
      compositeAlarmName: `${props.endpointName}-drift`,
      alarmDescription: `Data drift on SageMaker endpoint ${props.endpointName}: a feature's distance from its baseline passed its threshold (Wasserstein ${props.wassersteinThreshold ?? 0.15} weekly, KL ${props.klThreshold ?? 0.3} daily).`,
      alarmRule: cloudwatch.AlarmRule.anyOf(...tier.map(a => cloudwatch.AlarmRule.fromAlarm(a, cloudwatch.AlarmState.ALARM))),
    });
    if (props.notify) {
      if (!props.alarmTopic) {
        errors.add('drift.notify', true, 'a topic to notify', 'give drift.alarmTopic, or keep monitoring on (its topic is used)');
      } else {
        const action = new actions.SnsAction(props.alarmTopic);
        this.compositeAlarm.addAlarmAction(action);
        this.compositeAlarm.addOkAction(action);
      }
    }
  }

  /** A distance metric of a feature (`Maximum` over a day: each run publishes one value). */
  public metricDistance(feature: string, metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: DRIFT_NAMESPACE,
      metricName,
      dimensionsMap: { EndpointName: this.endpointName, Feature: feature },
      statistic: 'Maximum',
      period: Duration.days(1),
      ...props,
    });
  }

  /** Capture records a run read (`Sum` over a day): 0 is published too, so a missing point means the job did not run. */
  public metricRecords(distance: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.dailyRunMetric(DRIFT_METRICS.RECORDS, distance, 'Sum', props);
  }

  /** Features a run compared with no baseline (`Maximum` over a day; 0 published too). */
  public metricBaselineMissing(distance: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.dailyRunMetric(DRIFT_METRICS.BASELINE_MISSING, distance, 'Maximum', props);
  }

  /** A per-run drift metric of this endpoint and distance, over a day. */
  private dailyRunMetric(metricName: string, distance: string, statistic: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: DRIFT_NAMESPACE,
      metricName,
      dimensionsMap: { EndpointName: this.endpointName, Distance: distance },
      statistic,
      period: Duration.days(1),
      ...props,
    });
  }

  /** A dashboard row: every distance with its threshold, and the records read. */
  public dashboardWidgets(): cloudwatch.IWidget[] {
    const byMetric = (name: string) => this.alarms.filter(a => a.metricName === name);
    const graph = (title: string, list: DriftAlarm[]) =>
      new cloudwatch.GraphWidget({
        title,
        width: 6,
        left: list.map(a => a.alarm.metric),
        leftAnnotations: [...new Set(list.map(a => a.threshold))].map(value => ({ value, label: 'alarm threshold', color: '#d62728' })),
      });
    return [
      new cloudwatch.TextWidget({ markdown: `## Drift: ${this.endpointName}`, width: 24, height: 1 }),
      ...[DRIFT_METRICS.WASSERSTEIN, DRIFT_METRICS.KL, DRIFT_METRICS.SHARE_SHIFT].filter(m => byMetric(m).length).map(m => graph(m, byMetric(m))),
      new cloudwatch.GraphWidget({
        title: 'Capture records read per run; features without a baseline',
        width: 6,
        left: [this.metricRecords('wasserstein'), this.metricRecords('kl')],
        right: [this.metricBaselineMissing('wasserstein'), this.metricBaselineMissing('kl')],
      }),
    ];
  }

  private createAlarms(props: DriftMonitorProps): void {
    const w = props.wassersteinThreshold ?? 0.15;
    const k = props.klThreshold ?? 0.3;
    const s = props.shareShiftThreshold ?? 0.1;
    const ids = new Set<string>();
    for (const f of this.features) {
      // Ids from the names; a clash (a name given twice, reported by validation) gets the next free one.
      let base = f.name.replace(/[^A-Za-z0-9]/g, '') || 'Feature';
      for (let n = 2; ids.has(base); n++) base = `${f.name.replace(/[^A-Za-z0-9]/g, '')}${n}`;
      ids.add(base);
      const numeric = (f.kind ?? DriftFeatureKind.NUMERIC) === DriftFeatureKind.NUMERIC;
      const specs: [string, number, number, string][] = [
        numeric
          ? [
              DRIFT_METRICS.WASSERSTEIN,
              w,
              7,
              `normalised Wasserstein-1 >= ${w} (${props.normalisation ?? 'std'}-normalised: ${w} baseline standard deviations for a shift)`,
            ]
          : [DRIFT_METRICS.SHARE_SHIFT, s, 7, `category shares moved by >= ${s} (total variation: that share of traffic changed category)`],
        [DRIFT_METRICS.KL, k, 1, `KL divergence >= ${k} nats from the baseline's ${numeric ? 'decile bins' : 'categories'}`],
      ];
      for (const [metricName, threshold, days, what] of specs) {
        const alarm = createAlarm(this, {
          id: `${base}${metricName}`,
          alarmName: `${props.endpointName}-drift-${f.name}-${metricName}`,
          description: `Feature '${f.name}' of endpoint ${props.endpointName}: ${what}. Published by the drift function once per run.`,
          // The run's value, kept for the run's period: a weekly metric is judged over 7 days (PutMetricAlarm:
          // Period × EvaluationPeriods at most 604,800 s for periods of an hour or more).
          metric: this.metricDistance(f.name, metricName, { period: Duration.days(days) }),
          threshold,
          // A run that found no data publishes no distance: silence is not drift (the records metric and doctor watch the runs).
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        });
        this.alarms.push({ alarm, feature: f.name, metricName, threshold });
      }
    }
  }

  /**
   * Like with like: a request-size feature is compared with the memory profile only in the profile's unit.
   * A feature given in another unit (or none) is compared with a learned baseline instead, and synthesis
   * warns naming both units; a profile whose size selector cannot be read is an error.
   */
  private checkUnits(profile: MemoryProfile | undefined, given: boolean, errors: PropErrors): void {
    if (!profile || profile.problem) return;
    for (const [prop, sel] of [
      ['sizeSelector', profile.sizeSelector],
      ['csvSizeSelector', profile.csvSizeSelector],
    ] as const) {
      if (sel === undefined || sel === BYTES_SELECTOR) continue;
      try {
        parseSelector(sel);
      } catch (err) {
        errors.add(`model.memoryProfile ${prop}`, sel, "a drift selector such as '$.events.length()', or 'bytes()'", (err as Error).message);
      }
    }
    if (!given) {
      if (!profile.sizeSelector)
        Validations.of(this).addWarning(
          'RE-DriftProfileUnit',
          `drift on ${this.endpointName}: the memory profile's sizes are in '${profile.sizeUnit}' but it does not record how to read them from a request (its sizeSelector), ` +
            'so drift compares only the request bytes, with a baseline learned from the first window. Fix: set PROFILE_SIZE_SELECTOR (e.g. "$.events.length()") in inference.py and profile again, ' +
            'or add "sizeSelector" to memory-profile.json, or give drift.features with unit: \'' +
            profile.sizeUnit +
            "'",
        );
      return;
    }
    for (const f of this.features) {
      if (!f.requestSize || compareWithProfile(f, profile)) continue;
      const unit = unitOf(f);
      if (unit === 'bytes') continue; // the bytes are never the profile's distribution unless the profile is in bytes
      Validations.of(this).addWarning(
        'RE-DriftProfileUnit',
        `drift feature '${f.name}' of ${this.endpointName} is a request size in ${unit === undefined ? 'no stated unit' : `'${unit}'`}, ` +
          `but the memory profile's sizes are in '${profile.sizeUnit}': it is compared with a learned baseline (or the baseline file), not with the profile. ` +
          `Fix: if '${f.name}' counts ${profile.sizeUnit}, give it unit: '${profile.sizeUnit}'; otherwise acknowledge this warning`,
      );
    }
  }

  /**
   * Warns when a lifecycle rule of the capture bucket (one in this app) would expire the learned baselines:
   * a baseline silently re-learned from current traffic absorbs the slow drift it should measure.
   */
  private checkLifecycle(bucket: s3.IBucket, learnedPrefix: string): void {
    const cfn = bucket.node.defaultChild;
    if (!(cfn instanceof s3.CfnBucket)) return;
    this.node.addValidation({
      validate: () => {
        const config = Stack.of(cfn).resolve(cfn.lifecycleConfiguration) as { rules?: any[] } | undefined;
        for (const r of config?.rules ?? []) {
          const prefix: unknown = r.prefix ?? r.Prefix ?? r.filter?.prefix;
          const expires = r.expirationInDays ?? r.ExpirationInDays ?? r.expirationDate ?? r.ExpirationDate;
          const on = (r.status ?? r.Status) !== 'Disabled';
          if (on && expires !== undefined && (typeof prefix !== 'string' || `${learnedPrefix}/`.startsWith(prefix))) {
            Validations.of(this).addWarning(
              'RE-DriftBaselineExpiry',
              `the capture bucket's lifecycle rule ${r.id ? `'${r.id}' ` : ''}expires ${typeof prefix === 'string' && prefix ? `objects under '${prefix}'` : 'every object'}, ` +
                `the learned drift baselines (${learnedPrefix}/) included: each would be re-learned from current traffic, absorbing slow drift. ` +
                'Fix: filter the rule to the capture prefix (e.g. prefix: "data-capture/"), as the bucket ResilientEndpoint creates does',
            );
          }
        }
        return [];
      },
    });
  }

  /**
   * Least privilege on the capture: list and read only the endpoint's prefix (and the learned baselines'),
   * write only the learned baselines, decrypt with the capture key.
   */
  private grantCaptureRead(role: iam.Role, props: DriftMonitorProps, endpointPrefix: string, learnedPrefix: string, learn: boolean): void {
    const bucket = props.captureBucket;
    const objects = [bucket.arnForObjects(`${endpointPrefix}/*`), bucket.arnForObjects(`${learnedPrefix}/*`)];
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: objects }));
    // Without ListBucket a missing learned baseline would read as AccessDenied, not NoSuchKey.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${endpointPrefix}/*`, `${learnedPrefix}/*`] } },
      }),
    );
    if (learn) role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [objects[1]] }));
    if (props.captureKey) {
      // Reading needs Decrypt; writing a learned baseline into a bucket encrypted with this key, GenerateDataKey.
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: learn ? ['kms:Decrypt', 'kms:GenerateDataKey'] : ['kms:Decrypt'], resources: [props.captureKey.keyArn] }),
      );
    }
    acknowledgeWildcard(
      role,
      'Resource',
      objects[0],
      'SageMaker writes capture objects under generated keys (variant/yyyy/mm/dd/hh/<uuid>.jsonl) below the endpoint prefix; the drift function only reads them.',
    );
    acknowledgeWildcard(
      role,
      'Resource',
      objects[1],
      "The learned baselines are one object per model version (<hash>.json) under this endpoint's baseline prefix, with the last run's status.json.",
    );
  }
}

/** The longest a deployed token of the configuration can be: S3 bucket and SageMaker model names are at most 63 characters. */
const TOKEN_MAX = 63;

/** The deployed size of the drift function's environment (key and JSON value), tokens at their longest. */
export function driftEnvironmentBytes(config: DriftFunctionConfig): number {
  return DRIFT_CONFIG_ENV.length + deployedLength(JSON.stringify(config), TOKEN_MAX);
}

/** What a feature's values count: 'bytes' for `bytes()`, else its `unit` (undefined: not stated). */
export function unitOf(f: DriftFeature): string | undefined {
  return f.selector === BYTES_SELECTOR ? 'bytes' : f.unit;
}

/**
 * A request-size feature is compared with the memory profile's distribution only in the profile's unit
 * (like with like): the profile's sizes count what its `sizeUnit` says, measured as its `sizeSelector` reads them.
 */
export function compareWithProfile(f: DriftFeature, profile: MemoryProfile | undefined): boolean {
  if (!profile || profile.problem || !f.requestSize || (f.kind ?? DriftFeatureKind.NUMERIC) !== DriftFeatureKind.NUMERIC) return false;
  const unit = unitOf(f);
  return unit !== undefined && unit === profile.sizeUnit;
}

/** The function's view of a feature (false flags left out: the configuration shares Lambda's 4 KB). */
export function featureConfig(f: DriftFeature, profileBaseline = false): FeatureConfig {
  const logScale = f.logScale ?? f.requestSize ?? false;
  return {
    name: f.name,
    selector: f.selector,
    csvSelector: f.csvSelector,
    kind: (f.kind ?? DriftFeatureKind.NUMERIC) === DriftFeatureKind.NUMERIC ? 'numeric' : 'categorical',
    side: (f.side ?? CaptureSide.INPUT) === CaptureSide.OUTPUT ? 'output' : 'input',
    ...(profileBaseline ? { profileBaseline } : {}),
    ...(logScale ? { logScale } : {}),
  };
}

/** Pure validation of the drift props. */
export function validateDrift(p: DriftMonitorProps | (DriftOptions & { endpointName?: string })): PropErrors {
  const e = new PropErrors();
  e.range('drift.wassersteinThreshold', p.wassersteinThreshold, 0.001, 10, 'use 0.15 (incident B) or another normalised distance above 0');
  e.range('drift.klThreshold', p.klThreshold, 0.001, 10, 'use 0.3 nats (incident B)');
  e.range('drift.shareShiftThreshold', p.shareShiftThreshold, 0.001, 1, 'use a share from 0.001 to 1, e.g. 0.1');
  e.range('drift.sampleSize', p.sampleSize, 100, 2_000_000, 'use e.g. 50000 (8 bytes a value per feature)', true);
  e.range('drift.maxObjects', p.maxObjects, 1, 1_000_000, 'use e.g. 20000', true);
  e.range('drift.smoothing', p.smoothing, 0.000001, 10, 'use 0.5 (a half count per bin)');
  const windowHours = (name: string, d: Duration | undefined) => {
    const h = d?.toHours({ integral: false });
    if (h !== undefined && !(h >= 1 && h <= 24 * 31))
      e.add(`drift.${name}`, d!.toHumanString(), 'from 1 hour to 31 days (the capture is read hour by hour)', 'use e.g. Duration.days(7)');
  };
  windowHours('wassersteinWindow', p.wassersteinWindow);
  windowHours('klWindow', p.klWindow);
  const features = p.features ?? [];
  if (p.features && !features.length) e.add('drift.features', '[]', 'at least one feature', 'omit features for the request size, or list yours');
  const names = new Set<string>();
  for (const f of features) {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(f.name))
      e.add('drift.features.name', f.name, 'letters, digits, _ . -, 1–64 characters', "use e.g. 'SequenceLength'");
    if (names.has(f.name)) e.add('drift.features.name', f.name, 'unique names', 'give each feature its own name');
    names.add(f.name);
    for (const [prop, sel] of [
      ['selector', f.selector],
      ['csvSelector', f.csvSelector],
    ] as const) {
      if (sel === undefined || (prop === 'selector' && sel === 'bytes()')) continue;
      try {
        parseSelector(sel);
      } catch (err) {
        e.add(`drift.features.${prop}`, sel, "a selector such as '$.instances[*][0]' or '$.events.length()'", (err as Error).message);
      }
    }
  }
  if (p.endpointName !== undefined && Token.isUnresolved(p.endpointName))
    e.add('drift.endpointName', 'a token', 'a literal endpoint name (alarm names derive from it)', 'give the endpoint a literal endpointName');
  return e;
}
