import { Annotations, ArnFormat, Aws, CfnCondition, Duration, Fn, Names, Stack, Token, Validations } from 'aws-cdk-lib';
import * as budgets from 'aws-cdk-lib/aws-budgets';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { SageMakerInstanceType } from '../instance-types';
import { DEFAULT_APPLICATION_NAMESPACE } from '../breaker/contract';
import { fractionWarning, PropErrors, stackLabel, stackPartitions } from '../validation';
import { createAlarm } from './alarm-factory';
import { EndpointMetricFactory } from './metrics';
import { UNIT_PROPS, unitsChecked } from '../private/unit-props';
import { createdOnlyInPartitions, guardResourceTypes } from '../region-resource-types';

/** Default namespace of the application-tier metrics the container publishes (per-stage memory, the guard's). */
export { DEFAULT_APPLICATION_NAMESPACE };
/** Environment variable that carries the application-tier namespace into the container. */
export const APPLICATION_NAMESPACE_ENV = 'RESILIENT_ENDPOINT_METRICS_NAMESPACE';

/**
 * The partitions AWS Budgets has an endpoint in: botocore's endpoints.json lists `budgets` in `aws` and
 * `aws-cn` only; GovCloud budgets are created in the associated commercial account.
 */
export const BUDGETS_PARTITIONS: readonly string[] = ['aws', 'aws-cn'];

/** Monitoring settings. Every tier is on by default with the incident-proven thresholds. */
export interface MonitoringOptions {
  /**
   * Create the monitoring at all.
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * Infrastructure tier: host memory, GPU memory, CPU and disk alarms.
   * @default true
   */
  readonly infrastructureAlarms?: boolean;
  /**
   * Host memory alarm threshold (% of the hottest instance's memory, 0–100).
   * @default 85 (incident B)
   */
  readonly memoryThresholdPercent?: number;
  /**
   * GPU memory alarm threshold, as % of the instance's **total** GPU memory (0–100). The raw metric is
   * summed over GPUs (0 – 100 × GPUs), so the alarm threshold is this × GPU count.
   * @default 85 (incident A)
   */
  readonly gpuMemoryThresholdPercent?: number;
  /**
   * CPU alarm threshold, as % of all vCPUs (0–100), normalised the same way.
   * @default 90
   */
  readonly cpuThresholdPercent?: number;
  /**
   * Disk alarm threshold (0–100). Data capture stops at high disk use (keep below 75 %).
   * @default 75
   */
  readonly diskThresholdPercent?: number;
  /**
   * Application tier: alarms on the per-stage memory metrics the container publishes.
   * @default true
   */
  readonly applicationAlarms?: boolean;
  /**
   * Namespace of the per-stage metrics (reaches the container as `RESILIENT_ENDPOINT_METRICS_NAMESPACE`).
   * @default 'ResilientEndpoint/Application'
   */
  readonly applicationNamespace?: string;
  /**
   * Processing stages the container reports memory for.
   * @default ['preprocess', 'inference', 'postprocess']
   */
  readonly stages?: string[];
  /**
   * Per-stage memory alarm threshold (0–100), in percent of the worker's memory budget: the stage metric is
   * the resident memory of the worker running the stage against `RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES`
   * (the runtime's `process_memory_percent`), not a share of the instance's memory.
   * @default 85
   */
  readonly stageMemoryThresholdPercent?: number;
  /**
   * Business tier: error rates, P99 latency and success rate.
   * @default true
   */
  readonly businessAlarms?: boolean;
  /**
   * 5XX rate alarm threshold, % of invocations over 5 minutes (0–100).
   * @default 1
   */
  readonly errorRateThresholdPercent?: number;
  /**
   * Model-error rate alarm threshold, % of invocations over 5 minutes (0–100).
   * @default 1
   */
  readonly modelErrorRateThresholdPercent?: number;
  /**
   * P99 model latency alarm threshold. (`ModelLatency` is in microseconds: 500 ms = 500,000.)
   * @default Duration.millis(500) (incident B)
   */
  readonly latencyP99Threshold?: Duration;
  /**
   * Success-rate alarm: alarm when fewer than this % of requests succeed over 5 minutes (0–100).
   * @default 99
   */
  readonly successRateThresholdPercent?: number;
  /**
   * Resource efficiency (incident B's checklist): alarm when a variant spends more than this many CPU-seconds
   * per million predictions over 3 hours running (the post-mortem measured 120 and set 100 as its target).
   * The dashboard graphs the figure either way. The alarm is a cost signal, not an outage: it is not part of
   * the `-unhealthy` composite nor a rollback alarm, and notifies only with `notifyOnEachAlarm`.
   * @default - no alarm (the dashboard graph only)
   */
  readonly cpuSecondsPerMillionTarget?: number;
  /**
   * Topic for the composite alarm's ALARM and OK notifications.
   * @default - an encrypted topic created by the construct
   */
  readonly alarmTopic?: sns.ITopic;
  /**
   * Who is told: subscriptions added to the alarm topic. A topic with no subscription reaches no one;
   * when the construct creates the topic and nothing subscribes, synthesis warns (`RE-AlarmTopicUnsubscribed`).
   * @default - no subscription (warned)
   */
  readonly notify?: AlarmNotifications;
  /**
   * Also send every single alarm to the topic (otherwise only the composite notifies).
   * @default false
   */
  readonly notifyOnEachAlarm?: boolean;
  /**
   * Create a CloudWatch dashboard.
   * @default true
   */
  readonly dashboard?: boolean;
  /**
   * Monthly budget in USD: an AWS Budgets alarm at 80 % of it notifies the topic (incident B checklist).
   * Costs are filtered by the `resilient-endpoint` cost-allocation tag, which must be activated in Billing.
   * AWS Budgets exists in the `aws` and `aws-cn` partitions only: in a GovCloud stack this is a synth
   * error (create the budget in the associated commercial account); in an environment-agnostic stack
   * that may be deployed to another partition, the budget gets a CloudFormation condition on
   * `AWS::Partition` (created only where Budgets exists) and a warning (`RE-BudgetPartition`).
   * Within those partitions CloudFormation has `AWS::Budgets::Budget` in some Regions only (AWS's offline
   * validator's per-Region data): a stack with another Region is a synth error, and an environment-agnostic
   * stack's `Rules` refuse those Regions; budgets belong to the account, so create the budget from a
   * stack in a Region that has them.
   * @default - no budget
   */
  readonly monthlyBudgetUsd?: number;
}

/** Subscriptions of the alarm topic. */
export interface AlarmNotifications {
  /**
   * E-mail addresses to notify (each gets a confirmation mail from SNS; until it is confirmed, nothing is delivered).
   * @default - none
   */
  readonly emails?: string[];
  /**
   * Other subscriptions: a pager's HTTPS endpoint, a chat integration's SQS queue or Lambda function, ….
   * @default - none
   */
  readonly subscriptions?: sns.ITopicSubscription[];
}

/** A variant to monitor. */
export interface MonitoredVariant {
  /** Variant name. */
  readonly variantName: string;
  /** Its instance type (for GPU / vCPU normalisation). */
  readonly instanceType: SageMakerInstanceType;
}

/** Props of {@link EndpointMonitoring}. */
export interface EndpointMonitoringProps extends MonitoringOptions {
  /** Endpoint name (a literal string: alarm names are derived from it). */
  readonly endpointName: string;
  /** The production variants. */
  readonly variants: MonitoredVariant[];
  /**
   * The endpoint publishes per-GPU metrics (enhanced metrics): on multi-GPU types the GPU-memory alarm
   * also watches the hottest single GPU.
   * @default false
   */
  readonly perGpuMetrics?: boolean;
}

/** The tier an alarm belongs to. */
export enum AlarmTier {
  /** Instance resources. */
  INFRASTRUCTURE = 'infra',
  /** Per-stage memory inside the container. */
  APPLICATION = 'app',
  /** What users see. */
  BUSINESS = 'business',
}

/** One alarm with its tier and variant. */
export interface TieredAlarm {
  /** The alarm. */
  readonly alarm: cloudwatch.Alarm;
  /** Its tier. */
  readonly tier: AlarmTier;
  /** The variant it watches. */
  readonly variantName: string;
  /** Short metric key, e.g. `HostMemory`. */
  readonly key: string;
  /** The raw threshold (in the metric's own unit and range). */
  readonly threshold: number;
}

/**
 * Three-tier CloudWatch monitoring of one SageMaker endpoint: infrastructure (memory, GPU memory,
 * CPU, disk), application (per-stage memory the container publishes) and business (5XX rate, model
 * errors, P99 latency, success rate), one composite "unhealthy" alarm, an encrypted SNS topic, a
 * dashboard and an optional budget. Usable alone for an endpoint defined elsewhere.
 */
export class EndpointMonitoring extends Construct {
  /** Every alarm, with tier and variant. */
  public readonly alarms: TieredAlarm[] = [];
  /** The composite alarm (ALARM when any tier is in alarm). */
  public readonly compositeAlarm: cloudwatch.CompositeAlarm;
  /** The notification topic. */
  public readonly topic: sns.ITopic;
  /** The dashboard, if created. */
  public readonly dashboard?: cloudwatch.Dashboard;
  /** The application-tier namespace. */
  public readonly applicationNamespace: string;
  /** The resource-efficiency alarms (one per variant), when `cpuSecondsPerMillionTarget` is given. */
  public readonly efficiencyAlarms: cloudwatch.Alarm[] = [];

  private readonly props: EndpointMonitoringProps;
  private readonly errors: PropErrors;

  constructor(scope: Construct, id: string, props: EndpointMonitoringProps) {
    super(scope, id);
    props = unitsChecked(this, props, UNIT_PROPS.EndpointMonitoringProps);
    guardResourceTypes(this);
    this.props = props;
    const errors = validateMonitoring(props);
    this.node.addValidation({ validate: () => errors.all });
    this.errors = errors;
    for (const w of fractionWarnings(props)) Validations.of(this).addWarning(w.id, w.message);
    this.applicationNamespace = props.applicationNamespace ?? DEFAULT_APPLICATION_NAMESPACE;

    this.topic = props.alarmTopic ?? this.createTopic();
    this.allowAlarmsToPublish();
    this.subscribe(props.notify, props.alarmTopic === undefined);

    for (const v of props.variants) {
      const m = new EndpointMetricFactory(props.endpointName, v.variantName, this.applicationNamespace);
      if (props.infrastructureAlarms !== false) this.infrastructureTier(v, m);
      if (props.applicationAlarms !== false) this.applicationTier(v);
      if (props.businessAlarms !== false) this.businessTier(v, m);
    }

    const rule = this.alarms.length
      ? cloudwatch.AlarmRule.anyOf(...this.alarms.map(a => cloudwatch.AlarmRule.fromAlarm(a.alarm, cloudwatch.AlarmState.ALARM)))
      : cloudwatch.AlarmRule.fromBoolean(false);
    this.compositeAlarm = new cloudwatch.CompositeAlarm(this, 'Unhealthy', {
      compositeAlarmName: `${props.endpointName}-unhealthy`,
      alarmDescription: `SageMaker endpoint ${props.endpointName} is unhealthy: at least one infrastructure, application or business alarm is in ALARM.`,
      alarmRule: rule,
    });
    const action = new actions.SnsAction(this.topic);
    this.compositeAlarm.addAlarmAction(action);
    this.compositeAlarm.addOkAction(action);
    if (props.cpuSecondsPerMillionTarget !== undefined) this.efficiencyTier(props.cpuSecondsPerMillionTarget);
    if (props.notifyOnEachAlarm) {
      for (const a of [...this.alarms.map(x => x.alarm), ...this.efficiencyAlarms]) {
        a.addAlarmAction(action);
        a.addOkAction(action);
      }
    }

    if (props.dashboard !== false) this.dashboard = this.createDashboard();
    if (props.monthlyBudgetUsd !== undefined) this.createBudget(props.monthlyBudgetUsd);
  }

  /** Alarms of one tier. */
  public alarmsOf(tier: AlarmTier): cloudwatch.Alarm[] {
    return this.alarms.filter(a => a.tier === tier).map(a => a.alarm);
  }

  /**
   * Alarms suited to deployment auto-rollback (at most 10, AWS's limit): the primary variant's
   * memory alarms first, then the business tier.
   */
  public rollbackAlarms(variantName?: string): cloudwatch.Alarm[] {
    const v = variantName ?? this.props.variants[0]?.variantName;
    const order = ['HostMemory', 'HottestGpuMemory', 'GpuMemory', 'ErrorRate5xx', 'ModelErrorRate', 'LatencyP99'];
    return this.alarms
      .filter(a => a.variantName === v && order.includes(a.key))
      .sort((a, b) => order.indexOf(a.key) - order.indexOf(b.key))
      .map(a => a.alarm)
      .slice(0, 10);
  }

  /** Adds a row of widgets to the dashboard (e.g. the circuit breaker's state). */
  public addDashboardRow(...widgets: cloudwatch.IWidget[]): void {
    this.dashboard?.addWidgets(...widgets);
  }

  private infrastructureTier(v: MonitoredVariant, m: EndpointMetricFactory): void {
    const p = this.props;
    const spec = v.instanceType.spec;
    // Utilization metrics report every minute while instances run: missing data means no instance
    // is reporting (creating, or down), which must not read as healthy -> MISSING (INSUFFICIENT_DATA).
    const missing = cloudwatch.TreatMissingData.MISSING;
    const mem = p.memoryThresholdPercent ?? 85;
    this.add(
      v,
      AlarmTier.INFRASTRUCTURE,
      'HostMemory',
      m.memoryUtilization(),
      mem,
      2,
      3,
      missing,
      `Host memory >= ${mem} % on the hottest instance (Maximum over instances, 1-minute data, 2 of 3 minutes).`,
    );
    if (spec.gpuCount > 0) {
      const g = p.gpuMemoryThresholdPercent ?? 85;
      this.add(
        v,
        AlarmTier.INFRASTRUCTURE,
        'GpuMemory',
        m.gpuMemoryUtilization(),
        g * spec.gpuCount,
        2,
        3,
        missing,
        `GPU memory >= ${g} % of the instance's ${spec.gpuCount} GPU(s) (raw metric summed over GPUs, 0-${100 * spec.gpuCount}: threshold ${g * spec.gpuCount}).`,
      );
      if (spec.gpuCount > 1 && p.perGpuMetrics) {
        // The summed metric reads one GPU at 100 % and three at 40 % as 220 of 400: alarm on the hottest GPU too.
        this.add(
          v,
          AlarmTier.INFRASTRUCTURE,
          'HottestGpuMemory',
          m.hottestGpuMemoryUtilization(),
          g,
          2,
          3,
          cloudwatch.TreatMissingData.NOT_BREACHING,
          `Memory of the hottest single GPU >= ${g} % (per-GPU enhanced metrics; the summed metric hides one full GPU among ${spec.gpuCount}).`,
        );
      }
    }
    if (spec.vCpus > 0) {
      const c = p.cpuThresholdPercent ?? 90;
      this.add(
        v,
        AlarmTier.INFRASTRUCTURE,
        'Cpu',
        m.cpuUtilization({ statistic: 'Average' }),
        c * spec.vCpus,
        5,
        5,
        missing,
        `CPU >= ${c} % of ${spec.vCpus} vCPUs for 5 minutes (raw metric summed over vCPUs, 0-${100 * spec.vCpus}: threshold ${c * spec.vCpus}).`,
      );
    }
    const d = p.diskThresholdPercent ?? 75;
    this.add(v, AlarmTier.INFRASTRUCTURE, 'Disk', m.diskUtilization(), d, 3, 3, missing, `Disk >= ${d} %: data capture stops at high disk use.`);
  }

  /** Incident B's resource efficiency: CPU-seconds per million predictions above the target for 3 hours. */
  private efficiencyTier(target: number): void {
    for (const v of this.props.variants) {
      const m = new EndpointMetricFactory(this.props.endpointName, v.variantName, this.applicationNamespace);
      this.efficiencyAlarms.push(
        createAlarm(this, {
          id: `${v.variantName}CpuSecondsPerMillion`,
          alarmName: `${this.props.endpointName}-${v.variantName}-efficiency-CpuSecondsPerMillion`,
          description:
            `CPU-seconds per million predictions > ${target} for 3 hours (incident B's resource efficiency: baseline 120, target 100). ` +
            `CPUUtilization (summed over vCPUs) / 100 × period × instances (Invocations / InvocationsPerInstance) per million Invocations. Endpoint ${this.props.endpointName}, variant ${v.variantName}.`,
          metric: m.cpuSecondsPerMillionPredictions(),
          threshold: target,
          comparison: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 3,
          datapointsToAlarm: 3,
          // No traffic, no predictions to divide by: not a cost problem.
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }
  }

  private applicationTier(v: MonitoredVariant): void {
    const p = this.props;
    const t = p.stageMemoryThresholdPercent ?? 85;
    for (const stage of p.stages ?? ['preprocess', 'inference', 'postprocess']) {
      const metric = new cloudwatch.Metric({
        namespace: this.applicationNamespace,
        metricName: 'MemoryUtilization',
        dimensionsMap: { EndpointName: p.endpointName, VariantName: v.variantName, Stage: stage },
        statistic: 'Maximum',
        period: Duration.minutes(1),
      });
      // The container may not publish (yet): silence is not a memory problem -> NOT_BREACHING.
      this.add(
        v,
        AlarmTier.APPLICATION,
        `Stage-${stage}-Memory`,
        metric,
        t,
        2,
        3,
        cloudwatch.TreatMissingData.NOT_BREACHING,
        `Memory of stage '${stage}' >= ${t} % of its worker's memory budget (published by the container in ${this.applicationNamespace}).`,
      );
    }
  }

  private businessTier(v: MonitoredVariant, m: EndpointMetricFactory): void {
    const p = this.props;
    // No traffic means no errors and no latency data: NOT_BREACHING for every business alarm.
    const nb = cloudwatch.TreatMissingData.NOT_BREACHING;
    const five = Duration.minutes(5);
    const e = p.errorRateThresholdPercent ?? 1;
    this.add(
      v,
      AlarmTier.BUSINESS,
      'ErrorRate5xx',
      m.invocation5xxRate({ period: five }),
      e / 100,
      1,
      1,
      nb,
      `5XX rate >= ${e} % over 5 minutes (Average of Invocation5XXErrors is the rate, 0-1: threshold ${e / 100}).`,
    );
    const me = p.modelErrorRateThresholdPercent ?? 1;
    // Not on InvocationModelErrors alone: it counts the container's deliberate 4XX rejections too, and
    // this alarm also rolls deployments back (real-account.md item 27). Nor less every 4XX: a worker killed
    // for memory can surface as a 4XX (item 48). Less what the container says it chose.
    this.add(
      v,
      AlarmTier.BUSINESS,
      'ModelErrorRate',
      m.unexpectedModelErrorRate({ period: five }),
      me / 100,
      1,
      1,
      nb,
      `Errors the container did not choose (dead or hung workers, timeouts, 5XX) >= ${me} % of invocations over 5 minutes ((InvocationModelErrors - DeliberateClientErrors) / Invocations, 0-1; less every 4XX where the container publishes no DeliberateClientErrors).`,
    );
    const lat = p.latencyP99Threshold ?? Duration.millis(500);
    const micros = lat.toMilliseconds() * 1000;
    this.add(
      v,
      AlarmTier.BUSINESS,
      'LatencyP99',
      m.modelLatency(),
      micros,
      3,
      3,
      nb,
      `P99 ModelLatency >= ${lat.toMilliseconds()} ms for 3 minutes (metric in microseconds: threshold ${micros}).`,
    );
    const s = p.successRateThresholdPercent ?? 99;
    this.add(
      v,
      AlarmTier.BUSINESS,
      'SuccessRate',
      m.successRate({ period: five }),
      s,
      1,
      1,
      nb,
      `Success rate < ${s} % over 5 minutes (100 × (1 − errors the container did not choose / invocations): dead workers count whatever status they surface as).`,
      cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
    );
  }

  private add(
    v: MonitoredVariant,
    tier: AlarmTier,
    key: string,
    metric: cloudwatch.IMetric,
    threshold: number,
    datapoints: number,
    periods: number,
    missing: cloudwatch.TreatMissingData,
    description: string,
    comparison?: cloudwatch.ComparisonOperator,
  ): void {
    const alarm = createAlarm(this, {
      id: `${v.variantName}${key.replace(/[^A-Za-z0-9]/g, '')}`,
      // Endpoint, variant, tier and metric readable from the name alone.
      alarmName: `${this.props.endpointName}-${v.variantName}-${tier}-${key}`,
      description: `${description} Endpoint ${this.props.endpointName}, variant ${v.variantName}.`,
      metric,
      threshold,
      comparison,
      evaluationPeriods: periods,
      datapointsToAlarm: datapoints,
      treatMissingData: missing,
    });
    this.alarms.push({ alarm, tier, variantName: v.variantName, key, threshold });
  }

  /**
   * A topic policy replaces SNS's default policy, which is what lets same-account CloudWatch alarms
   * publish: with only the deny-non-TLS statement of `enforceSSL`, every alarm action fails with "not
   * authorized to perform SNS:Publish" (AWS knowledge center, cloudwatch-receive-sns-for-alarm-trigger).
   * So CloudWatch gets `sns:Publish`, scoped to this account and to this endpoint's alarms (every
   * alarm name here starts with `<endpointName>-`).
   */
  private allowAlarmsToPublish(): void {
    const stack = Stack.of(this);
    const alarms = stack.formatArn({
      service: 'cloudwatch',
      resource: 'alarm',
      resourceName: `${this.props.endpointName}-*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const added = this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        // SNS wants every statement id of a topic policy unique: on a topic shared by endpoints, each has its own.
        sid: this.props.alarmTopic ? `AllowCloudWatchAlarmsOf${Names.uniqueId(this)}` : 'AllowCloudWatchAlarmsOfThisEndpoint',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account }, ArnLike: { 'aws:SourceArn': alarms } },
      }),
    );
    if (!added.statementAdded) {
      Annotations.of(this).addWarning(
        `monitoring.alarmTopic is an imported topic, so this construct cannot add to its policy: make sure it lets cloudwatch.amazonaws.com sns:Publish (aws:SourceArn ${this.nameForMessages()}-* alarms), or alarm notifications are dropped.`,
      );
    }
  }

  /** The notify subscriptions; a warning when the construct's own topic would reach no one. */
  private subscribe(notify: AlarmNotifications | undefined, ownTopic: boolean): void {
    for (const email of notify?.emails ?? []) this.topic.addSubscription(new subscriptions.EmailSubscription(email));
    for (const s of notify?.subscriptions ?? []) this.topic.addSubscription(s);
    const count = (notify?.emails?.length ?? 0) + (notify?.subscriptions?.length ?? 0);
    if (ownTopic && count === 0) {
      Validations.of(this).addWarning(
        'RE-AlarmTopicUnsubscribed',
        `the alarm topic of ${this.nameForMessages()} has no subscription, so its alarms reach no one. ` +
          "Fix: monitoring: { notify: { emails: ['oncall@example.com'] } } (or notify.subscriptions for a pager or chat), or pass your own monitoring.alarmTopic.",
      );
    }
  }

  /**
   * The endpoint's name as a message shows it: the name, or — when it is known only at deploy (a token,
   * which would print as `${Token[TOKEN.15]}`) — the endpoint's construct path.
   */
  private nameForMessages(): string {
    const name = this.props.endpointName;
    return Token.isUnresolved(name) ? `the endpoint at ${this.node.scope?.node.path ?? this.node.path} (its name is known at deploy)` : name;
  }

  private createTopic(): sns.ITopic {
    return createAlarmTopic(this, `SageMaker endpoint ${this.props.endpointName}`);
  }

  private createBudget(amount: number): void {
    const stack = Stack.of(this);
    const partitions = stackPartitions(stack);
    const without = partitions?.filter(p => !BUDGETS_PARTITIONS.includes(p));
    if (partitions && without!.length === partitions.length) {
      this.errors.addMessage(
        `monitoring.monthlyBudgetUsd: got ${amount} in ${stackLabel(stack)}, whose partition ${partitions.join(', ')} has no AWS Budgets endpoint ` +
          `(${Token.isUnresolved(stack.region) ? 'the partitions of @aws-cdk/core:target-partitions' : `Region ${stack.region}`}); allowed: a stack in the ${BUDGETS_PARTITIONS.join(' or ')} partition. ` +
          'Fix: remove monthlyBudgetUsd, and create the budget where the account is billed (for GovCloud: in the associated commercial account), filtered by the resilient-endpoint tag',
      );
      return;
    }
    const topic = this.topic;
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('budgets.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        // Budgets user guide, budgets-sns-policy: the account and any budget of it.
        conditions: {
          StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
          ArnLike: { 'aws:SourceArn': `arn:${Stack.of(this).partition}:budgets::${Stack.of(this).account}:*` },
        },
      }),
    );
    const budget = new budgets.CfnBudget(this, 'MonthlyBudget', {
      budget: {
        budgetType: 'COST',
        timeUnit: 'MONTHLY',
        budgetLimit: { amount, unit: 'USD' },
        costFilters: { TagKeyValue: [`user:resilient-endpoint$${this.props.endpointName}`] },
      },
      notificationsWithSubscribers: [
        {
          notification: { notificationType: 'ACTUAL', comparisonOperator: 'GREATER_THAN', threshold: 80, thresholdType: 'PERCENTAGE' },
          subscribers: [{ subscriptionType: 'SNS', address: topic.topicArn }],
        },
      ],
    });
    if (without === undefined || without.length) {
      // Environment-agnostic and possibly deployed where Budgets has no endpoint: the budget exists only
      // in the partitions that have it, so the same template deploys everywhere.
      budget.cfnOptions.condition = new CfnCondition(this, 'BudgetsPartition', {
        expression: Fn.conditionOr(...BUDGETS_PARTITIONS.map(p => Fn.conditionEquals(Aws.PARTITION, p))),
      });
      // Only those partitions' Regions can lack its type (the template's Rules: lib/region-resource-types.ts).
      createdOnlyInPartitions(budget, BUDGETS_PARTITIONS);
      Validations.of(this).addWarning(
        'RE-BudgetPartition',
        `monitoring.monthlyBudgetUsd in the environment-agnostic ${stackLabel(stack)}: AWS Budgets exists in the ${BUDGETS_PARTITIONS.join(' and ')} partitions only, ` +
          `and this stack may be deployed to ${without?.length ? without.join(', ') : 'any partition'}; the budget is created only where Budgets exists (a condition on AWS::Partition). ` +
          "In GovCloud, create the budget in the associated commercial account. To target aws and aws-cn alone, set the context '@aws-cdk/core:target-partitions': ['aws', 'aws-cn'] (cdk init's cdk.json sets it)",
      );
    }
  }

  private createDashboard(): cloudwatch.Dashboard {
    const p = this.props;
    const dash = new cloudwatch.Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    const graph = (title: string, key: string, tier: AlarmTier) => {
      const list = this.alarms.filter(a => a.key === key && a.tier === tier);
      if (!list.length) return undefined;
      return new cloudwatch.GraphWidget({
        title,
        width: 8,
        left: list.map(a => a.alarm.metric),
        leftAnnotations: [...new Set(list.map(a => a.threshold))].map(value => ({ value, label: 'alarm threshold', color: '#d62728' })),
      });
    };
    const row = (title: string, ws: (cloudwatch.IWidget | undefined)[]) => {
      const present = ws.filter((w): w is cloudwatch.IWidget => w !== undefined);
      if (present.length) dash.addWidgets(new cloudwatch.TextWidget({ markdown: `## ${title}`, width: 24, height: 1 }), ...present);
    };
    row(`Infrastructure: ${p.endpointName}`, [
      graph('Host memory % (hottest instance)', 'HostMemory', AlarmTier.INFRASTRUCTURE),
      graph('GPU memory (sum over GPUs)', 'GpuMemory', AlarmTier.INFRASTRUCTURE),
      graph('CPU (sum over vCPUs)', 'Cpu', AlarmTier.INFRASTRUCTURE),
      graph('Disk %', 'Disk', AlarmTier.INFRASTRUCTURE),
    ]);
    row(
      'Application: memory per stage',
      [...new Set(this.alarms.filter(a => a.tier === AlarmTier.APPLICATION).map(a => a.key))].map(k => graph(k, k, AlarmTier.APPLICATION)),
    );
    row('Business', [
      graph('5XX rate (0-1)', 'ErrorRate5xx', AlarmTier.BUSINESS),
      graph('Errors not chosen by the container: dead or hung workers, 5XX (0-1)', 'ModelErrorRate', AlarmTier.BUSINESS),
      graph('P99 model latency (µs)', 'LatencyP99', AlarmTier.BUSINESS),
      graph('Success rate %', 'SuccessRate', AlarmTier.BUSINESS),
    ]);
    const target = p.cpuSecondsPerMillionTarget;
    row('Resource efficiency', [
      new cloudwatch.GraphWidget({
        title: 'CPU-seconds per million predictions (hourly)',
        width: 12,
        left: p.variants.map(v =>
          new EndpointMetricFactory(p.endpointName, v.variantName, this.applicationNamespace).cpuSecondsPerMillionPredictions(),
        ),
        leftAnnotations: target === undefined ? [] : [{ value: target, label: 'alarm threshold (target)', color: '#d62728' }],
      }),
    ]);
    dash.addWidgets(
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: [this.compositeAlarm, ...this.alarms.map(a => a.alarm)], width: 24 }),
    );
    return dash;
  }
}

/**
 * An alarm topic encrypted with its own rotating KMS key, which CloudWatch alarms and AWS Budgets of this
 * account may use (constructs `TopicKey` and `AlarmTopic` under `scope`; `of` names what it alarms for).
 */
export function createAlarmTopic(scope: Construct, of: string): sns.Topic {
  const key = new kms.Key(scope, 'TopicKey', {
    enableKeyRotation: true,
    description: `Encrypts the alarm topic of ${of}`,
  });
  // CloudWatch alarms and AWS Budgets publish to the encrypted topic: they need the key.
  for (const service of ['cloudwatch.amazonaws.com', 'budgets.amazonaws.com']) {
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal(service)],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'], // in a key policy, "*" means this key
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(scope).account } },
      }),
    );
  }
  return new sns.Topic(scope, 'AlarmTopic', { masterKey: key, enforceSSL: true });
}

/** Warnings (id and text) for error-rate thresholds below 1 %, which may be fractions given for percentages. */
export function fractionWarnings(p: MonitoringOptions): { id: string; message: string }[] {
  return (['errorRateThresholdPercent', 'modelErrorRateThresholdPercent'] as const).flatMap(name => {
    const what = name === 'errorRateThresholdPercent' ? 'the 5XX alarm fires' : 'the model-error alarm fires';
    const message = fractionWarning(`monitoring.${name}`, p[name], what);
    return message ? [{ id: `${name}Fraction`, message }] : [];
  });
}

/** Pure validation of monitoring options. */
export function validateMonitoring(p: MonitoringOptions): PropErrors {
  const e = new PropErrors();
  // A threshold of 0 makes a ">=" alarm fire on every datapoint (and a "<" success-rate alarm never):
  // thresholds start above 0.
  // A value from 0 to 1 is a fraction given for a percentage where no percentage that small makes sense
  // (a memory, CPU or disk alarm at 0.85 % is in ALARM for ever, and as a rollback alarm rolls back every
  // deployment; a success-rate alarm below 1 % fires only when 99 % of requests fail): an error. Error
  // rates of 0.1–1 % are real SLOs, so there it is a warning (fractionWarnings).
  const pct = (name: keyof MonitoringOptions, v: number | undefined, example: number, smallIsReal = false) => {
    if (v === undefined || (!smallIsReal && e.fraction(`monitoring.${name}`, v, 1, false))) return;
    if (!(v > 0 && v <= 100))
      e.add(
        `monitoring.${name}`,
        v,
        'a percentage above 0 and at most 100 (0 would make the alarm fire on every datapoint, or never)',
        `give a percentage, e.g. ${example}`,
      );
  };
  pct('memoryThresholdPercent', p.memoryThresholdPercent, 85);
  pct('gpuMemoryThresholdPercent', p.gpuMemoryThresholdPercent, 85);
  pct('cpuThresholdPercent', p.cpuThresholdPercent, 90);
  pct('diskThresholdPercent', p.diskThresholdPercent, 75);
  pct('stageMemoryThresholdPercent', p.stageMemoryThresholdPercent, 85);
  pct('errorRateThresholdPercent', p.errorRateThresholdPercent, 1, true);
  pct('modelErrorRateThresholdPercent', p.modelErrorRateThresholdPercent, 1, true);
  pct('successRateThresholdPercent', p.successRateThresholdPercent, 99);
  const ms = p.latencyP99Threshold?.toMilliseconds();
  e.range('monitoring.latencyP99Threshold (ms)', ms, 1, 60000, 'use Duration.millis(1..60000); real-time containers must answer within 60 s');
  e.range('monitoring.monthlyBudgetUsd', p.monthlyBudgetUsd, 1, 1e9, 'give the monthly budget in USD, e.g. 2000');
  e.range(
    'monitoring.cpuSecondsPerMillionTarget',
    p.cpuSecondsPerMillionTarget,
    0.001,
    1e9,
    'give CPU-seconds per million predictions, e.g. 100 (incident B: baseline 120, target 100)',
  );
  for (const email of p.notify?.emails ?? []) {
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) e.add('monitoring.notify.emails', email, 'an e-mail address', "give e.g. 'oncall@example.com'");
  }
  if (p.stages && p.stages.length === 0)
    e.add('monitoring.stages', '[]', 'at least one stage name', "list the stages, e.g. ['preprocess', 'inference']");
  for (const s of p.stages ?? []) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(s)) e.add('monitoring.stages', s, 'letters, digits, _ and -, 1–64 characters', "use e.g. 'inference'");
  }
  return e;
}
