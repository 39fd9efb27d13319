/**
 * AWS's managed path: a SageMaker Model Monitor data-quality job definition and schedule on the same
 * capture, with a baseline (`constraints.json` and `statistics.json`, as Model Monitor's baselining job
 * writes them), its per-feature drift metrics alarmed into the same topic. Model Monitor computes its
 * own statistics (not the Wasserstein and KL distances incident B asks for), and the SageMaker developer
 * guide notes that Model Monitor "is no longer open to new customers" (model-monitor-data-capture):
 * this is for accounts that already use it.
 *
 * Every property below is from the CloudFormation resource schemas, as aws-cdk-lib 2.276's L1 types
 * carry them: AWS::SageMaker::DataQualityJobDefinition
 * (docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-sagemaker-dataqualityjobdefinition.html)
 * and AWS::SageMaker::MonitoringSchedule (…/aws-resource-sagemaker-monitoringschedule.html).
 */
import { createHash } from 'crypto';
import { ArnFormat, Duration, Fn, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { createAlarm } from '../monitoring/alarm-factory';
import { acknowledgeWildcard } from '../nag';
import { Described, PropErrors } from '../validation';
import { UNIT_PROPS, unitsChecked } from '../private/unit-props';
import { guardResourceTypes } from '../region-resource-types';

/**
 * Where Model Monitor's built-in analyzer publishes `feature_baseline_drift_<feature>` for a real-time
 * endpoint: AWS's own texts disagree, and nothing more authoritative is public.
 *
 * - Developer guide `model-monitor-interpreting-cloudwatch`: namespace `/aws/sagemaker/Endpoints/data-metric`,
 *   dimensions `EndpointName` and `ScheduleName`.
 * - Developer guide `model-monitor-byoc-cloudwatch` (what a container's metrics file defaults to):
 *   `/aws/sagemaker/Endpoint/data-metrics`, with `Endpoint` and `MonitoringSchedule` recommended.
 * - Developer guide `clarify-model-monitor-bias-drift-cw` (the sibling analyzer): `aws/sagemaker/Endpoints/bias-metrics`
 *   with `Endpoint` and `MonitoringSchedule`; by analogy `aws/sagemaker/Endpoints/data-metrics`.
 * - The SageMaker Python SDK (`sagemaker/model_monitor/model_monitoring.py`, v2.257.6) names no namespace: it
 *   only sets the job's `publish_cloudwatch_metrics` environment to `Enabled`; botocore's SageMaker model
 *   says nothing about metrics; the analyzer image's code is not public.
 *
 * So an alarm watches all three spellings at once (the value of whichever carries data), the job's
 * role may publish to any namespace of that family (a pattern, not an exact match that a wrong spelling
 * would turn into a denial), and `doctor` lists the `feature_baseline_drift_*` metrics it finds for the
 * endpoint with their namespace and dimensions. `ModelMonitorOptions.metric` pins the one doctor found.
 */
export const MODEL_MONITOR_METRIC_SPELLINGS: readonly ModelMonitorMetric[] = [
  { namespace: 'aws/sagemaker/Endpoints/data-metrics', endpointDimension: 'Endpoint', scheduleDimension: 'MonitoringSchedule' },
  { namespace: '/aws/sagemaker/Endpoints/data-metric', endpointDimension: 'EndpointName', scheduleDimension: 'ScheduleName' },
  { namespace: '/aws/sagemaker/Endpoint/data-metrics', endpointDimension: 'Endpoint', scheduleDimension: 'MonitoringSchedule' },
];

/** The first spelling (kept for compatibility): the one most code in the wild alarms on. */
export const MODEL_MONITOR_NAMESPACE = MODEL_MONITOR_METRIC_SPELLINGS[0].namespace;

/**
 * The namespaces the job's role may publish to (`cloudwatch:namespace`, `StringLike`): every spelling above,
 * and none of the namespaces the library's alarms and circuit breaker read (`/aws/sagemaker/Endpoints`,
 * `ResilientEndpoint/*`), so the job cannot write the endpoint's memory metrics.
 */
export const MODEL_MONITOR_PUBLISH_NAMESPACES: readonly string[] = ['aws/sagemaker/*data-metric*', '/aws/sagemaker/*data-metric*'];

/** One spelling of Model Monitor's per-feature metrics: a namespace and the names of its two dimensions. */
export interface ModelMonitorMetric {
  /** The namespace, e.g. `aws/sagemaker/Endpoints/data-metrics`. */
  readonly namespace: string;
  /** The dimension that holds the endpoint's name, e.g. `Endpoint`. */
  readonly endpointDimension: string;
  /** The dimension that holds the schedule's name, e.g. `MonitoringSchedule`. */
  readonly scheduleDimension: string;
}

/** The longest MonitoringScheduleName (botocore `MonitoringScheduleName`: 1–63, `[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}`). */
export const SCHEDULE_NAME_MAX = 63;
/** botocore's pattern of a MonitoringScheduleName (and of an EndpointName), anchored. */
export const SCHEDULE_NAME_PATTERN = /^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/;

/**
 * The schedule's name: `<endpoint>-data-quality` when it fits in 63 characters; otherwise the endpoint name
 * cut (without trailing hyphens), `-dq-` and 8 hex digits of the full endpoint name's SHA-256, so two long
 * names that share a prefix still get two schedules. Both forms match botocore's pattern, and a hashed name
 * never ends in `-data-quality`, so the forms cannot collide.
 */
export function modelMonitorScheduleName(endpointName: string): string {
  const plain = `${endpointName}-data-quality`;
  if (plain.length <= SCHEDULE_NAME_MAX) return plain;
  const hash = createHash('sha256').update(endpointName).digest('hex').slice(0, 8);
  const head = endpointName.slice(0, SCHEDULE_NAME_MAX - '-dq-'.length - hash.length).replace(/-+$/, '');
  return `${head}-dq-${hash}`;
}

/**
 * The interval of a schedule expression SageMaker accepts, in seconds (undefined for any other text):
 * `cron(0 * ? * * *)` hourly, `cron(0 H ? * * *)` daily, `cron(0 H/N ? * * *)` every N hours (botocore
 * `ScheduleConfig.ScheduleExpression`: "cron(0 [00-23] ? * * *)", "cron(0 [00-23]/[01-24] ? * * *)"; the
 * SageMaker Python SDK's `CronExpressionGenerator` writes the same three). `NOW` (one run) is not a schedule.
 */
export function scheduleIntervalSeconds(expression: string): number | undefined {
  const hour = '(?:[01]?[0-9]|2[0-3])';
  if (expression === 'cron(0 * ? * * *)') return 3600;
  if (new RegExp(`^cron\\(0 ${hour} \\? \\* \\* \\*\\)$`).test(expression)) return 86400;
  const m = new RegExp(`^cron\\(0 ${hour}/(0?[1-9]|1[0-9]|2[0-4]) \\? \\* \\* \\*\\)$`).exec(expression);
  return m ? Number(m[1]) * 3600 : undefined;
}

/** Model Monitor settings of a `ResilientEndpoint` drift monitor (`drift: { modelMonitor: {…} }`). */
export interface ModelMonitorOptions {
  /**
   * The Region's Model Monitor analyzer image (`<account>.dkr.ecr.<region>.amazonaws.com/sagemaker-model-monitor-analyzer`):
   * the account differs per Region (developer guide, model-monitor-pre-built-container). Not looked up by
   * the library: AWS's table is the source.
   */
  readonly imageUri: string;
  /**
   * The baseline folder: `constraints.json` and `statistics.json` as Model Monitor's baselining job writes them (`s3://bucket/prefix`).
   */
  readonly baselineUri: string;
  /**
   * Features to alarm on (Model Monitor's `feature_baseline_drift_<name>` metric for each).
   * @default - none: the schedule runs and writes its violations report, no alarm
   */
  readonly alarmFeatures?: string[];
  /**
   * Alarm threshold on `feature_baseline_drift_<name>` (Model Monitor's default comparison threshold is 0.1).
   * @default 0.1
   */
  readonly threshold?: number;
  /**
   * The schedule, as SageMaker accepts it (botocore `ScheduleConfig.ScheduleExpression`): hourly
   * `cron(0 * ? * * *)`, daily `cron(0 H ? * * *)` or every N hours `cron(0 H/N ? * * *)` (H 0–23, N 1–24).
   * Anything else, `NOW` included (one run, no schedule for the alarms to watch), is a synth error.
   * @default 'cron(0 3 ? * * *)' - daily 03:00 UTC
   */
  readonly scheduleExpression?: string;
  /**
   * The processing instance type.
   * @default 'ml.m5.xlarge'
   */
  readonly instanceType?: string;
  /**
   * The processing volume, GB.
   * @default 20
   */
  readonly volumeSizeGb?: number;
  /**
   * The job's longest run: whole seconds, at most the schedule's interval (botocore
   * `MonitoringStoppingCondition.MaxRuntimeInSeconds`: "cannot exceed the frequency of the job", 1–86,400 s),
   * so at most 1 hour for an hourly schedule.
   * @default Duration.hours(1)
   */
  readonly maxRuntime?: Duration;
  /**
   * The namespace and dimension names the violation alarms read `feature_baseline_drift_<feature>` with.
   * AWS's pages give three spellings (see `doctor`'s `model-monitor-metrics` check, which lists what the
   * account really has); by default an alarm watches all three at once.
   * @default - all three documented spellings (the value of whichever has data)
   */
  readonly metric?: ModelMonitorMetric;
}

/** Props of {@link DataQualityMonitor}. */
export interface DataQualityMonitorProps extends ModelMonitorOptions {
  /** The endpoint (a literal name: the schedule's and the alarms' names derive from it). */
  readonly endpointName: string;
  /** The capture bucket (the job reads the endpoint's capture and writes its reports there). */
  readonly captureBucket: s3.IBucket;
  /** The capture prefix. */
  readonly capturePrefix: string;
  /**
   * The capture's KMS key.
   * @default - the bucket's default encryption
   */
  readonly captureKey?: kms.IKey;
  /**
   * The topic the alarms notify.
   * @default - none (alarms only)
   */
  readonly alarmTopic?: sns.ITopic;
}

/** A Model Monitor data-quality schedule on an endpoint's capture, with violation alarms. */
export class DataQualityMonitor extends Construct {
  /** The job definition. */
  public readonly jobDefinition: sagemaker.CfnDataQualityJobDefinition;
  /** The schedule. */
  public readonly schedule: sagemaker.CfnMonitoringSchedule;
  /** The job's role. */
  public readonly role: iam.Role;
  /** One alarm per `alarmFeatures` entry. */
  public readonly alarms: cloudwatch.Alarm[] = [];
  /** The schedule's name (`<endpoint>-data-quality`, or a cut name with a hash for long endpoint names). */
  public readonly scheduleName: string;

  constructor(scope: Construct, id: string, props: DataQualityMonitorProps) {
    super(scope, id);
    props = unitsChecked(this, props, UNIT_PROPS.DataQualityMonitorProps);
    guardResourceTypes(this);
    const errors = validateModelMonitor(props);
    if (Token.isUnresolved(props.endpointName) || !SCHEDULE_NAME_PATTERN.test(props.endpointName))
      errors.add(
        'drift.modelMonitor endpointName',
        props.endpointName,
        'a literal endpoint name (botocore EndpointName: [a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}): the schedule and the alarms are named after it',
        'give the endpoint a literal endpointName',
      );
    this.node.addValidation({ validate: () => errors.all });
    const prefix = props.capturePrefix.replace(/^\/+|\/+$/g, '');
    const capture = [prefix, props.endpointName].filter(Boolean).join('/');
    const reports = [prefix, 'model-monitor-reports', props.endpointName].filter(Boolean).join('/');
    const baseline = props.baselineUri.replace(/\/+$/, '');
    // Unique per endpoint and within botocore's pattern (a plain cut at 63 could end in '-' or collide).
    const scheduleName = Token.isUnresolved(props.endpointName) ? props.endpointName : modelMonitorScheduleName(props.endpointName);
    this.scheduleName = scheduleName;

    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com'),
      description: `Model Monitor data-quality job of SageMaker endpoint ${props.endpointName}`,
    });
    this.grant(props, capture, reports, baseline);

    this.jobDefinition = new sagemaker.CfnDataQualityJobDefinition(this, 'JobDefinition', {
      // DataQualityAppSpecification: ImageUri (required), Environment (optional map)
      dataQualityAppSpecification: { imageUri: props.imageUri, environment: { publish_cloudwatch_metrics: 'Enabled' } },
      // DataQualityBaselineConfig: ConstraintsResource.S3Uri, StatisticsResource.S3Uri
      dataQualityBaselineConfig: {
        constraintsResource: { s3Uri: `${baseline}/constraints.json` },
        statisticsResource: { s3Uri: `${baseline}/statistics.json` },
      },
      // DataQualityJobInput.EndpointInput: EndpointName and LocalPath (required)
      dataQualityJobInput: { endpointInput: { endpointName: props.endpointName, localPath: '/opt/ml/processing/input/endpoint' } },
      // DataQualityJobOutputConfig: MonitoringOutputs[].S3Output {LocalPath, S3Uri} (required), KmsKeyId (optional)
      dataQualityJobOutputConfig: {
        kmsKeyId: props.captureKey?.keyArn,
        monitoringOutputs: [{ s3Output: { localPath: '/opt/ml/processing/output', s3Uri: props.captureBucket.s3UrlForObject(reports) } }],
      },
      // JobResources.ClusterConfig: InstanceCount, InstanceType, VolumeSizeInGB (required)
      jobResources: {
        clusterConfig: { instanceCount: 1, instanceType: props.instanceType ?? 'ml.m5.xlarge', volumeSizeInGb: props.volumeSizeGb ?? 20 },
      },
      // RoleArn (required), StoppingCondition.MaxRuntimeInSeconds
      roleArn: this.role.roleArn,
      stoppingCondition: { maxRuntimeInSeconds: props.maxRuntime?.toSeconds({ integral: false }) ?? 3600 },
    });
    // The job definition is validated with the role's permissions at creation.
    const policy = this.role.node.tryFindChild('DefaultPolicy');
    if (policy) this.jobDefinition.node.addDependency(policy);

    // AWS::SageMaker::MonitoringSchedule: MonitoringScheduleName (required), EndpointName,
    // MonitoringScheduleConfig {MonitoringJobDefinitionName, MonitoringType, ScheduleConfig.ScheduleExpression}.
    this.schedule = new sagemaker.CfnMonitoringSchedule(this, 'Schedule', {
      monitoringScheduleName: scheduleName,
      endpointName: props.endpointName,
      monitoringScheduleConfig: {
        // The definition's name is the last part of its ARN (…:data-quality-job-definition/<name>): no physical
        // name, so a changed definition can be replaced.
        monitoringJobDefinitionName: Fn.select(1, Fn.split('/', this.jobDefinition.attrJobDefinitionArn)),
        monitoringType: 'DataQuality',
        scheduleConfig: { scheduleExpression: props.scheduleExpression ?? 'cron(0 3 ? * * *)' },
      },
    });

    const threshold = props.threshold ?? 0.1;
    const spellings = props.metric ? [props.metric] : MODEL_MONITOR_METRIC_SPELLINGS;
    for (const feature of [...new Set(props.alarmFeatures ?? [])]) {
      const metricName = `feature_baseline_drift_${feature}`;
      const metrics = spellings.map(
        m =>
          new cloudwatch.Metric({
            namespace: m.namespace,
            metricName,
            dimensionsMap: { [m.endpointDimension]: props.endpointName, [m.scheduleDimension]: scheduleName },
            statistic: 'Maximum',
            period: Duration.days(1),
          }),
      );
      const alarm = createAlarm(this, {
        id: `Violation${feature.replace(/[^A-Za-z0-9]/g, '')}`,
        alarmName: `${props.endpointName}-drift-modelmonitor-${feature}`,
        description:
          `Model Monitor: feature '${feature}' of endpoint ${props.endpointName} drifted from its baseline by >= ${threshold} (${metricName}` +
          (metrics.length > 1
            ? `, read in its ${metrics.length} documented spellings: ${spellings.map(m => m.namespace).join(', ')}).`
            : ` in ${spellings[0].namespace}).`),
        // AWS's pages disagree on the namespace and dimensions: the alarm reads every spelling, so it sees the
        // metric whichever is real (MODEL_MONITOR_METRIC_SPELLINGS). A sum, not MAX([…]): metric math's
        // arithmetic treats a missing value as 0, so the sum is the value of the spelling that has data, and
        // CloudWatch recommends against MAX and the other aggregations in alarms (using-metric-math).
        metric:
          metrics.length === 1
            ? metrics[0]
            : new cloudwatch.MathExpression({
                expression: metrics.map((_, i) => `m${i}`).join(' + '),
                usingMetrics: Object.fromEntries(metrics.map((m, i) => [`m${i}`, m])),
                period: Duration.days(1),
                label: metricName,
              }),
        threshold,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      if (props.alarmTopic) {
        alarm.addAlarmAction(new actions.SnsAction(props.alarmTopic));
        alarm.addOkAction(new actions.SnsAction(props.alarmTopic));
      }
      this.alarms.push(alarm);
    }
  }

  private grant(props: DataQualityMonitorProps, capture: string, reports: string, baseline: string): void {
    const stack = Stack.of(this);
    const bucket = props.captureBucket;
    const role = this.role;
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [bucket.arnForObjects(`${capture}/*`)] }));
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${capture}/*`, `${reports}/*`] } },
      }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:GetObject'], resources: [bucket.arnForObjects(`${reports}/*`)] }),
    );
    const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(baseline);
    if (m) {
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['s3:GetObject'],
          resources: [`arn:${stack.partition}:s3:::${m[1]}/${m[2]}/constraints.json`, `arn:${stack.partition}:s3:::${m[1]}/${m[2]}/statistics.json`],
        }),
      );
    }
    if (props.captureKey) {
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['kms:Decrypt', 'kms:GenerateDataKey'], resources: [props.captureKey.keyArn] }));
    }
    // The analyzer image, in AWS's account for the Region.
    const image = /^(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?\/([^:@]+)/.exec(props.imageUri);
    if (image) {
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['ecr:BatchGetImage', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchCheckLayerAvailability'],
          resources: [`arn:${stack.partition}:ecr:${image[2]}:${image[1]}:repository/${image[3]}`],
        }),
      );
    }
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ecr:GetAuthorizationToken'], resources: ['*'] }));
    // A pattern over the documented spellings, not an exact match: a wrong spelling must not become a
    // denial (the metrics would never exist and the alarms would sit silent), and the endpoint's own
    // namespaces stay out of reach.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['cloudwatch:PutMetricData'],
        resources: ['*'],
        conditions: {
          StringLike: { 'cloudwatch:namespace': [...(props.metric ? [props.metric.namespace] : []), ...MODEL_MONITOR_PUBLISH_NAMESPACES] },
        },
      }),
    );
    const processingLogs = stack.formatArn({
      service: 'logs',
      resource: 'log-group',
      resourceName: '/aws/sagemaker/ProcessingJobs:*',
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
        resources: [processingLogs],
      }),
    );
    const why: [string, string][] = [
      [bucket.arnForObjects(`${capture}/*`), 'Model Monitor reads the capture objects under generated keys below the endpoint prefix.'],
      [bucket.arnForObjects(`${reports}/*`), 'Model Monitor writes its reports under generated keys below this endpoint’s report prefix.'],
      [
        '*',
        'ecr:GetAuthorizationToken and cloudwatch:PutMetricData have no resource-level permissions (PutMetricData is limited to Model Monitor’s data-metrics namespaces by condition).',
      ],
      [processingLogs, 'Processing jobs log to streams named after each job in /aws/sagemaker/ProcessingJobs.'],
    ];
    for (const [resource, reason] of why) acknowledgeWildcard(role, 'Resource', resource, reason);
  }
}

/** Pure validation of the Model Monitor option. */
export function validateModelMonitor(p: ModelMonitorOptions): PropErrors {
  const e = new PropErrors();
  if (!Token.isUnresolved(p.imageUri) && !/^\d{12}\.dkr\.ecr\.[a-z0-9-]+\.amazonaws\.com(\.cn)?\/[^\s]+$/.test(p.imageUri))
    e.add(
      'drift.modelMonitor.imageUri',
      p.imageUri,
      '<account>.dkr.ecr.<region>.amazonaws.com/sagemaker-model-monitor-analyzer',
      "take the Region's image from the SageMaker developer guide (model-monitor-pre-built-container)",
    );
  if (!Token.isUnresolved(p.baselineUri) && !/^s3:\/\/[^/]+\/.+/.test(p.baselineUri))
    e.add(
      'drift.modelMonitor.baselineUri',
      p.baselineUri,
      's3://bucket/prefix holding constraints.json and statistics.json',
      "run Model Monitor's baselining job and give its output folder",
    );
  e.range('drift.modelMonitor.threshold', p.threshold, 0.0001, 1000, 'use e.g. 0.1');
  e.range('drift.modelMonitor.volumeSizeGb', p.volumeSizeGb, 1, 16384, 'use e.g. 20', true);
  const expression = p.scheduleExpression ?? 'cron(0 3 ? * * *)';
  const interval = Token.isUnresolved(expression) ? 86400 : scheduleIntervalSeconds(expression);
  if (interval === undefined)
    e.add(
      'drift.modelMonitor.scheduleExpression',
      expression,
      "what SageMaker accepts for a monitoring schedule: 'cron(0 * ? * * *)' (hourly), 'cron(0 H ? * * *)' (daily at hour H, 0–23) or 'cron(0 H/N ? * * *)' (every N hours, 1–24)",
      expression === 'NOW'
        ? "NOW runs the job once, so its alarms would never see a second value: use a recurring schedule, e.g. 'cron(0 3 ? * * *)'"
        : "use e.g. 'cron(0 3 ? * * *)' (botocore ScheduleConfig.ScheduleExpression lists no other form)",
    );
  const s = p.maxRuntime?.toSeconds({ integral: false });
  const most = Math.min(86400, interval ?? 86400);
  if (s !== undefined && !Token.isUnresolved(s) && !(Number.isInteger(s) && s >= 1 && s <= most))
    e.add(
      'drift.modelMonitor.maxRuntime',
      new Described(`${s} s`),
      `whole seconds from 1 to ${most} (MaxRuntimeInSeconds cannot exceed the schedule's interval${interval === undefined ? '' : ` of ${interval} s for '${expression}'`}, nor 86,400)`,
      `use at most Duration.seconds(${most})`,
    );
  if (p.metric) {
    if (!/^[^:]{1,255}$/.test(p.metric.namespace) || p.metric.namespace.startsWith('AWS/'))
      e.add(
        'drift.modelMonitor.metric.namespace',
        p.metric.namespace,
        'a custom namespace, 1–255 characters, not AWS/…',
        "give the namespace doctor's model-monitor-metrics check found",
      );
    for (const [k, v] of [
      ['endpointDimension', p.metric.endpointDimension],
      ['scheduleDimension', p.metric.scheduleDimension],
    ] as const)
      if (!/^[^:\s]{1,255}$/.test(v))
        e.add(`drift.modelMonitor.metric.${k}`, v, 'a dimension name', "give the dimension doctor's model-monitor-metrics check found");
  }
  for (const f of p.alarmFeatures ?? [])
    if (!/^[A-Za-z0-9_.-]{1,200}$/.test(f))
      e.add('drift.modelMonitor.alarmFeatures', f, 'a feature name as Model Monitor names it', 'use the column name from statistics.json');
  return e;
}
