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
import { PropErrors } from '../validation';
import { UNIT_PROPS, unitsChecked } from '../private/unit-props';
import { guardResourceTypes } from '../region-resource-types';

/** The namespace Model Monitor's built-in container publishes per-feature metrics to for real-time endpoints (developer guide, model-monitor-interpreting-cloudwatch). */
export const MODEL_MONITOR_NAMESPACE = 'aws/sagemaker/Endpoints/data-metrics';

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
   * The schedule (Model Monitor accepts hourly and daily cron expressions).
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
   * The job's longest run (at most 1 hour for an hourly schedule).
   * @default Duration.hours(1)
   */
  readonly maxRuntime?: Duration;
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

  constructor(scope: Construct, id: string, props: DataQualityMonitorProps) {
    super(scope, id);
    props = unitsChecked(this, props, UNIT_PROPS.DataQualityMonitorProps);
    guardResourceTypes(this);
    const errors = validateModelMonitor(props);
    this.node.addValidation({ validate: () => errors.all });
    const prefix = props.capturePrefix.replace(/^\/+|\/+$/g, '');
    const capture = [prefix, props.endpointName].filter(Boolean).join('/');
    const reports = [prefix, 'model-monitor-reports', props.endpointName].filter(Boolean).join('/');
    const baseline = props.baselineUri.replace(/\/+$/, '');
    const scheduleName = `${props.endpointName}-data-quality`.slice(0, 63);

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
      stoppingCondition: { maxRuntimeInSeconds: props.maxRuntime?.toSeconds() ?? 3600 },
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
    for (const feature of [...new Set(props.alarmFeatures ?? [])]) {
      const alarm = createAlarm(this, {
        id: `Violation${feature.replace(/[^A-Za-z0-9]/g, '')}`,
        alarmName: `${props.endpointName}-drift-modelmonitor-${feature}`,
        description: `Model Monitor: feature '${feature}' of endpoint ${props.endpointName} drifted from its baseline by >= ${threshold} (feature_baseline_drift_${feature}).`,
        metric: new cloudwatch.Metric({
          namespace: MODEL_MONITOR_NAMESPACE,
          metricName: `feature_baseline_drift_${feature}`,
          dimensionsMap: { Endpoint: props.endpointName, MonitoringSchedule: scheduleName },
          statistic: 'Maximum',
          period: Duration.days(1),
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
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['cloudwatch:PutMetricData'],
        resources: ['*'],
        conditions: { StringEquals: { 'cloudwatch:namespace': MODEL_MONITOR_NAMESPACE } },
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
        'ecr:GetAuthorizationToken and cloudwatch:PutMetricData have no resource-level permissions (PutMetricData is limited to Model Monitor’s namespace by condition).',
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
  const s = p.maxRuntime?.toSeconds();
  e.range('drift.modelMonitor.maxRuntime (s)', s, 1, 86400, 'use at most Duration.hours(1) for an hourly schedule', true);
  if (p.scheduleExpression !== undefined && !/^cron\(.+\)$/.test(p.scheduleExpression))
    e.add(
      'drift.modelMonitor.scheduleExpression',
      p.scheduleExpression,
      "a cron expression, e.g. 'cron(0 3 ? * * *)'",
      'Model Monitor schedules hourly or daily cron expressions',
    );
  for (const f of p.alarmFeatures ?? [])
    if (!/^[A-Za-z0-9_.-]{1,200}$/.test(f))
      e.add('drift.modelMonitor.alarmFeatures', f, 'a feature name as Model Monitor names it', 'use the column name from statistics.json');
  return e;
}
