// The drift monitor as synthesized: the function and its schedules, the least-privilege access to the
// capture, the alarms at incident B's thresholds with their tier, the Model Monitor option, cdk-nag, and
// the synth errors. One endpoint stack (drift on, with Model Monitor) and one standalone monitor, shared.
import * as path from 'path';
import { Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Fn } from 'aws-cdk-lib';
import {
  ContainerImage,
  DataQualityMonitor,
  DriftBaseline,
  DriftFeature,
  DriftFeatures,
  DriftMonitor,
  DriftNormalisation,
  MemoryProfile,
  ModelMonitorOptions,
  ProductionReadinessChecks,
  ResilientEndpoint,
  SageMakerInstanceType,
} from '../lib';
import { collectEndpoints } from '../lib/checks';
import { DRIFT_CONFIG_ENV } from '../lib/drift/contract';
import { modelMonitorScheduleName, scheduleIntervalSeconds } from '../lib/drift/model-monitor';
import { iamStatements, nagFindings, newStack, synthError, warnings } from './util';

const IMAGE = ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/clustering:1');
const ANALYZER = '156813124566.dkr.ecr.us-east-1.amazonaws.com/sagemaker-model-monitor-analyzer';
const profile = MemoryProfile.fromFile(path.join(__dirname, '..', 'examples', 'models', 'clustering', 'memory-profile.json'));

let endpointStack: Stack;
let t: Template;
let alone: Stack;
let ta: Template;
let endpoint: ResilientEndpoint;

beforeAll(() => {
  ({ stack: endpointStack } = newStack('DriftEndpoint'));
  endpoint = new ResilientEndpoint(endpointStack, 'Clu', {
    endpointName: 'clustering',
    model: { image: IMAGE, memoryProfile: profile },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    instanceCount: 2,
    monitoring: { notify: { emails: ['oncall@example.com'] }, monthlyBudgetUsd: 2000 },
    drift: {
      features: DriftFeatures.clusteringExample(),
      baseline: DriftBaseline.fromS3Uri('s3://training-data/clustering/drift-baseline.json'),
      modelMonitor: { imageUri: ANALYZER, baselineUri: 's3://training-data/clustering/model-monitor', alarmFeatures: ['x'] },
    },
  });
  t = Template.fromStack(endpointStack);

  ({ stack: alone } = newStack('DriftAlone'));
  const key = new kms.Key(alone, 'CaptureKey', { enableKeyRotation: true });
  const bucket = s3.Bucket.fromBucketName(alone, 'Capture', 'my-capture-bucket');
  new DriftMonitor(alone, 'Drift', {
    endpointName: 'rec',
    captureBucket: bucket,
    capturePrefix: '/capture/',
    captureKey: key,
    features: DriftFeatures.recommenderExample(),
    normalisation: DriftNormalisation.INTERQUARTILE_RANGE,
    notify: true,
    alarmTopic: sns.Topic.fromTopicArn(alone, 'Topic', 'arn:aws:sns:us-east-1:123456789012:oncall'),
    wassersteinWindow: Duration.days(14),
  });
  ta = Template.fromStack(alone);
});

const config = (tpl: Template) => {
  const fns = Object.values(tpl.findResources('AWS::Lambda::Function')).filter((f: any) => f.Properties.Environment?.Variables?.[DRIFT_CONFIG_ENV]);
  expect(fns).toHaveLength(1);
  const v = (fns[0] as any).Properties.Environment.Variables[DRIFT_CONFIG_ENV];
  // The JSON with its tokens (bucket name, model name) left as CloudFormation references.
  const text =
    typeof v === 'string'
      ? v
      : v['Fn::Join'][1].map((p: unknown) => (typeof p === 'string' ? p : '"TOKEN"').replace(/^""TOKEN""$/, '"TOKEN"')).join('');
  return JSON.parse(text.replace(/""TOKEN""/g, '"TOKEN"'));
};

describe('the function and its schedules', () => {
  test('a Node.js 24 function with 15 minutes and 1 GB, weekly Wasserstein over 7 days and daily KL over 1', () => {
    t.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Timeout: 900,
      MemorySize: 1024,
      DeadLetterConfig: Match.objectLike({}),
      Environment: { Variables: Match.objectLike({ [DRIFT_CONFIG_ENV]: Match.anyValue() }) },
    });
    const rules = Object.values(t.findResources('AWS::Events::Rule'))
      .map((r: any) => r.Properties)
      .filter(p => /drift/.test(p.Description));
    const byInput = Object.fromEntries(rules.map(r => [JSON.parse(r.Targets[0].Input).distance, r]));
    expect(byInput.wasserstein.ScheduleExpression).toBe('cron(0 3 ? * MON *)');
    expect(JSON.parse(byInput.wasserstein.Targets[0].Input)).toEqual({ distance: 'wasserstein', windowHours: 168 });
    expect(byInput.kl.ScheduleExpression).toBe('cron(0 3 * * ? *)');
    expect(JSON.parse(byInput.kl.Targets[0].Input)).toEqual({ distance: 'kl', windowHours: 24 });
    expect(byInput.kl.Targets[0].DeadLetterConfig).toBeDefined();
    // A window of 14 days is read by the standalone monitor's weekly run.
    const weekly = Object.values(ta.findResources('AWS::Events::Rule')).map((r: any) => JSON.parse(r.Properties.Targets[0].Input));
    expect(weekly).toContainEqual({ distance: 'wasserstein', windowHours: 336 });
  });

  test("its configuration: the endpoint's variants, capture prefix, features, baseline, the memory profile's sizes", () => {
    const c = config(t);
    expect(c).toMatchObject({
      endpointName: 'clustering',
      prefix: 'data-capture',
      variants: ['Primary'],
      baselineUri: 's3://training-data/clustering/drift-baseline.json',
      learnedPrefix: 'drift-baselines/clustering', // beside the capture prefix: its expiry never reaches it
      normalisation: 'std',
      smoothing: 0.5,
      sampleSize: 50000,
      sizeProfile: { distribution: 'powerlaw:100:200000', p50: profile.p50.size, p99: profile.p99.size, p999: profile.p999.size },
    });
    expect(c.features).toContainEqual({
      name: 'Rows',
      selector: '$.instances.length()',
      csvSelector: '$.length()',
      kind: 'numeric',
      side: 'input',
      profileBaseline: true, // rows, the profile's unit
      logScale: true,
    });
    expect(c.features.find((f: any) => f.name === 'Cluster')).toEqual({
      name: 'Cluster',
      selector: '$.clusters[*]',
      kind: 'categorical',
      side: 'output',
    });
    expect(c.modelVersion).toBe('TOKEN'); // the primary model's name: a new model learns a new baseline
    const alone = config(ta);
    expect(alone).toMatchObject({ prefix: 'capture', variants: [], normalisation: 'iqr', baselineUri: '' });
  });
});

describe('least privilege on the capture', () => {
  const statements = (tpl: Template) => iamStatements(tpl).filter(s => JSON.stringify(s).match(/s3:|kms:/));

  test('reads the endpoint prefix only, lists it with a prefix condition, writes only the learned baselines', () => {
    const st = statements(ta);
    const flat = JSON.stringify(st);
    expect(flat).not.toMatch(/"s3:\*"|"s3:GetObject\*"|"s3:List\*"/);
    const get = st.find(s => s.Action === 's3:GetObject' && JSON.stringify(s.Resource).includes('capture/rec/*'));
    expect(JSON.stringify(get.Resource)).toContain('my-capture-bucket/capture/rec/*');
    expect(JSON.stringify(get.Resource)).toContain('my-capture-bucket/drift-baselines/rec/*');
    const list = st.find(s => s.Action === 's3:ListBucket');
    expect(list.Condition).toEqual({ StringLike: { 's3:prefix': ['capture/rec/*', 'drift-baselines/rec/*'] } });
    const put = st.filter(s => [s.Action].flat().includes('s3:PutObject'));
    expect(put).toHaveLength(1);
    expect(JSON.stringify(put[0].Resource)).toContain('my-capture-bucket/drift-baselines/rec/*');
    expect(JSON.stringify(put[0].Resource)).not.toContain('capture/rec/*');
    // kms on the capture key only
    const k = st.find(s => [s.Action].flat().includes('kms:Decrypt'));
    expect(k.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^CaptureKey/), 'Arn'] });
  });

  test('the baseline file: that one object', () => {
    const st = iamStatements(t).filter(s => JSON.stringify(s.Resource).includes('training-data/clustering/drift-baseline.json'));
    expect(st).toEqual([expect.objectContaining({ Action: 's3:GetObject' })]);
    expect(st[0].Resource).toEqual({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::training-data/clustering/drift-baseline.json']] });
  });

  test('no CloudWatch write permission: metrics go out as Embedded Metric Format log lines', () => {
    const lambdaRoles = iamStatements(ta);
    expect(JSON.stringify(lambdaRoles)).not.toContain('cloudwatch:PutMetricData');
  });

  test('cdk-nag AwsSolutions: clean', () => {
    expect(nagFindings(endpointStack)).toEqual([]);
    expect(nagFindings(alone)).toEqual([]);
  });
});

describe('alarms: incident B thresholds, a drift tier that pages only when asked', () => {
  const alarms = (tpl: Template) => Object.values(tpl.findResources('AWS::CloudWatch::Alarm')).map((a: any) => a.Properties);
  const drift = (tpl: Template, metric: string) => alarms(tpl).filter(a => a.MetricName === metric && a.Namespace === 'ResilientEndpoint/Drift');

  test('Wasserstein at 0.15 over a week, per numeric feature', () => {
    const w = drift(t, 'WassersteinDistance');
    expect(w.map(a => a.Dimensions.find((d: any) => d.Name === 'Feature').Value).sort()).toEqual(['Rows', 'x', 'y']);
    for (const a of w) {
      expect(a).toMatchObject({
        Threshold: 0.15,
        Period: 604800,
        Statistic: 'Maximum',
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
      expect(a.AlarmName).toMatch(/^clustering-drift-/); // the alarm topic's policy allows <endpoint>-* alarms
    }
  });

  test('KL at 0.3 over a day, for every feature; share shift at 0.1 for the clusters', () => {
    const k = drift(t, 'KLDivergence');
    expect(k).toHaveLength(4);
    for (const a of k) expect(a).toMatchObject({ Threshold: 0.3, Period: 86400 });
    const s = drift(t, 'ShareShift');
    expect(s).toEqual([
      expect.objectContaining({ Threshold: 0.1, Period: 604800, Dimensions: expect.arrayContaining([{ Name: 'Feature', Value: 'Cluster' }]) }),
    ]);
  });

  test('the drift composite: no action by default; the paging composite does not include drift', () => {
    const composites = Object.values(t.findResources('AWS::CloudWatch::CompositeAlarm')).map((a: any) => a.Properties);
    const tier = composites.find(c => c.AlarmName === 'clustering-drift');
    expect(tier.AlarmActions).toBeUndefined();
    const rule = JSON.stringify(tier.AlarmRule);
    expect(rule.match(/ALARM\(/g)).toHaveLength(8 + 1 + 1); // 4 features × 2 distances, the missing baseline, and Model Monitor's alarm
    const unhealthy = composites.find(c => c.AlarmName === 'clustering-unhealthy');
    expect(JSON.stringify(unhealthy.AlarmRule)).not.toContain('drift');
    const paged = Object.values(ta.findResources('AWS::CloudWatch::CompositeAlarm')).map((a: any) => a.Properties)[0];
    expect(paged.AlarmActions).toEqual(['arn:aws:sns:us-east-1:123456789012:oncall']);
    expect(paged.OKActions).toEqual(['arn:aws:sns:us-east-1:123456789012:oncall']);
  });

  test('a dashboard row on the endpoint dashboard', () => {
    const body = JSON.stringify(Object.values(t.findResources('AWS::CloudWatch::Dashboard'))[0]);
    expect(body).toContain('## Drift: clustering');
    expect(body).toContain('WassersteinDistance');
    expect(body).toContain('DriftRecords');
  });

  test('metric helpers', () => {
    const m = endpoint.drift!.metricRecords('kl');
    expect([m.namespace, m.metricName, m.statistic, m.dimensions]).toEqual([
      'ResilientEndpoint/Drift',
      'DriftRecords',
      'Sum',
      { EndpointName: 'clustering', Distance: 'kl' },
    ]);
  });
});

test('the readiness facts: a drift function naming the endpoint, a Model Monitor schedule on it, a budget on its tag', () => {
  const [facts] = collectEndpoints(t.toJSON());
  expect([facts.driftMonitors, facts.budget]).toEqual([2, true]);
  // An unfiltered (account-wide) budget covers it too; a budget on another endpoint's tag does not.
  const json = t.toJSON();
  const budgets = Object.values(json.Resources).filter((r: any) => r.Type === 'AWS::Budgets::Budget') as any[];
  budgets[0].Properties.Budget.CostFilters = { TagKeyValue: ['user:resilient-endpoint$other'] };
  expect(collectEndpoints(json)[0].budget).toBe(false);
  delete budgets[0].Properties.Budget.CostFilters;
  expect(collectEndpoints(json)[0].budget).toBe(true);
});

describe('Model Monitor on the same capture', () => {
  test('a data-quality job definition and a daily schedule with the baseline', () => {
    t.hasResourceProperties('AWS::SageMaker::DataQualityJobDefinition', {
      DataQualityAppSpecification: { ImageUri: ANALYZER, Environment: { publish_cloudwatch_metrics: 'Enabled' } },
      DataQualityBaselineConfig: {
        ConstraintsResource: { S3Uri: 's3://training-data/clustering/model-monitor/constraints.json' },
        StatisticsResource: { S3Uri: 's3://training-data/clustering/model-monitor/statistics.json' },
      },
      DataQualityJobInput: { EndpointInput: { EndpointName: 'clustering', LocalPath: '/opt/ml/processing/input/endpoint' } },
      JobResources: { ClusterConfig: { InstanceCount: 1, InstanceType: 'ml.m5.xlarge', VolumeSizeInGB: 20 } },
      StoppingCondition: { MaxRuntimeInSeconds: 3600 },
    });
    t.hasResourceProperties('AWS::SageMaker::MonitoringSchedule', {
      MonitoringScheduleName: 'clustering-data-quality',
      EndpointName: 'clustering',
      MonitoringScheduleConfig: {
        MonitoringType: 'DataQuality',
        ScheduleConfig: { ScheduleExpression: 'cron(0 3 ? * * *)' },
        MonitoringJobDefinitionName: Match.anyValue(),
      },
    });
    const schedule = Object.values(t.findResources('AWS::SageMaker::MonitoringSchedule'))[0] as any;
    expect(schedule.DependsOn).toEqual(expect.arrayContaining([expect.stringMatching(/^CluEndpoint/)]));
  });

  test("its violations: an alarm on the feature's baseline drift metric, in every spelling AWS's pages give", () => {
    const alarm = Object.values(t.findResources('AWS::CloudWatch::Alarm'))
      .map((a: any) => a.Properties)
      .find(a => a.AlarmName === 'clustering-drift-modelmonitor-x');
    expect(alarm).toMatchObject({ Threshold: 0.1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'notBreaching' });
    const expr = alarm.Metrics.find((m: any) => m.Expression);
    expect(expr.Expression).toBe('m0 + m1 + m2'); // metric math: a missing value is 0 in arithmetic
    const stats = alarm.Metrics.filter((m: any) => m.MetricStat).map((m: any) => m.MetricStat);
    const spelled = stats.map((m: any) => [
      m.Metric.Namespace,
      m.Metric.MetricName,
      m.Metric.Dimensions.map((d: any) => `${d.Name}=${d.Value}`)
        .sort()
        .join(','),
    ]);
    expect(spelled).toEqual([
      // developer guide model-monitor-interpreting-cloudwatch, model-monitor-byoc-cloudwatch, and the Clarify analyzers' form
      ['aws/sagemaker/Endpoints/data-metrics', 'feature_baseline_drift_x', 'Endpoint=clustering,MonitoringSchedule=clustering-data-quality'],
      ['/aws/sagemaker/Endpoints/data-metric', 'feature_baseline_drift_x', 'EndpointName=clustering,ScheduleName=clustering-data-quality'],
      ['/aws/sagemaker/Endpoint/data-metrics', 'feature_baseline_drift_x', 'Endpoint=clustering,MonitoringSchedule=clustering-data-quality'],
    ]);
    for (const m of stats) expect([m.Stat, m.Period]).toEqual(['Maximum', 86400]);
  });

  test('publishing: a namespace pattern over the spellings, not an exact match; never the endpoint namespaces the alarms read', () => {
    // The Model Monitor job's role (the model's own role has its statement for the container's metrics).
    const put = iamStatements(t).filter(
      s => [s.Action].flat().includes('cloudwatch:PutMetricData') && JSON.stringify(s.Condition).includes('data-metric'),
    );
    expect(put).toHaveLength(1);
    expect(put[0].Condition).toEqual({ StringLike: { 'cloudwatch:namespace': ['aws/sagemaker/*data-metric*', '/aws/sagemaker/*data-metric*'] } });
    // What IAM's StringLike does with the patterns ('*' any run of characters, case-sensitive).
    const like = (p: string, v: string) =>
      new RegExp(
        `^${p
          .split('*')
          .map(x => x.replace(/[.?+^$()[\]{}|\\/]/g, '\\$&'))
          .join('.*')}$`,
      ).test(v);
    const allowed = (ns: string) => put[0].Condition.StringLike['cloudwatch:namespace'].some((p: string) => like(p, ns));
    for (const ns of ['aws/sagemaker/Endpoints/data-metrics', '/aws/sagemaker/Endpoints/data-metric', '/aws/sagemaker/Endpoint/data-metrics'])
      expect(allowed(ns)).toBe(true);
    for (const ns of ['/aws/sagemaker/Endpoints', 'ResilientEndpoint/Drift', 'ResilientEndpoint/Application', 'AWS/SageMaker'])
      expect(allowed(ns)).toBe(false);
  });

  test('a pinned spelling (what doctor found): one metric, and its namespace granted', () => {
    const { stack } = newStack('Pinned');
    new DataQualityMonitor(stack, 'M', {
      endpointName: 'rec',
      captureBucket: s3.Bucket.fromBucketName(stack, 'B', 'bkt'),
      capturePrefix: 'capture',
      imageUri: ANALYZER,
      baselineUri: 's3://b/mm',
      alarmFeatures: ['len'],
      metric: { namespace: 'custom/data-metrics', endpointDimension: 'Endpoint', scheduleDimension: 'MonitoringSchedule' },
    });
    const tp = Template.fromStack(stack);
    tp.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'custom/data-metrics',
      MetricName: 'feature_baseline_drift_len',
      Dimensions: [
        { Name: 'Endpoint', Value: 'rec' },
        { Name: 'MonitoringSchedule', Value: 'rec-data-quality' },
      ],
    });
    const put = iamStatements(tp).find(s => [s.Action].flat().includes('cloudwatch:PutMetricData'));
    expect(put.Condition.StringLike['cloudwatch:namespace'][0]).toBe('custom/data-metrics');
  });
});

describe('Model Monitor: what SageMaker accepts, at synth', () => {
  const monitor = (id: string, over: Partial<ModelMonitorOptions> & { endpointName?: string }) => {
    const { app, stack } = newStack(id);
    const m = new DataQualityMonitor(stack, 'M', {
      endpointName: 'rec',
      captureBucket: s3.Bucket.fromBucketName(stack, 'B', 'bkt'),
      capturePrefix: 'capture',
      imageUri: ANALYZER,
      baselineUri: 's3://b/mm',
      alarmFeatures: ['len'],
      ...over,
    });
    return { app, stack, m };
  };

  test('schedule expressions: the three cron forms of botocore ScheduleConfig; intervals in seconds', () => {
    expect(scheduleIntervalSeconds('cron(0 * ? * * *)')).toBe(3600);
    expect(scheduleIntervalSeconds('cron(0 12 ? * * *)')).toBe(86400);
    expect(scheduleIntervalSeconds('cron(0 00 ? * * *)')).toBe(86400);
    expect(scheduleIntervalSeconds('cron(0 23 ? * * *)')).toBe(86400);
    expect(scheduleIntervalSeconds('cron(0 17/12 ? * * *)')).toBe(12 * 3600);
    expect(scheduleIntervalSeconds('cron(0 0/2 ? * * *)')).toBe(2 * 3600);
    expect(scheduleIntervalSeconds('cron(0 0/24 ? * * *)')).toBe(24 * 3600);
    expect(scheduleIntervalSeconds('cron(0 05/01 ? * * *)')).toBe(3600);
    for (const bad of [
      'cron(0 24 ? * * *)', // no hour 24
      'cron(0 0/25 ? * * *)', // interval 1–24
      'cron(0 0/0 ? * * *)',
      'cron(30 3 ? * * *)', // minute 0 only
      'cron(0 3 * * ? *)', // EventBridge's form, not SageMaker's
      'cron(0 3 ? * MON *)', // no weekly schedule
      'cron(0 3 ? * * *) ',
      'rate(1 day)',
      'NOW',
      '',
    ])
      expect([bad, scheduleIntervalSeconds(bad)]).toEqual([bad, undefined]);
  });

  test('a schedule SageMaker would refuse, and a maxRuntime longer than its interval: synth errors naming both', () => {
    const a = monitor('Sched', { scheduleExpression: 'cron(0 3 * * ? *)' });
    expect(synthError(a.app)).toMatch(
      /drift.modelMonitor.scheduleExpression: got 'cron\(0 3 \* \* \? \*\)'; allowed: what SageMaker accepts for a monitoring schedule: 'cron\(0 \* \? \* \* \*\)' \(hourly\)/,
    );
    expect(synthError(monitor('Now', { scheduleExpression: 'NOW' }).app)).toMatch(/got 'NOW'.*NOW runs the job once/);
    expect(synthError(monitor('Hourly', { scheduleExpression: 'cron(0 * ? * * *)', maxRuntime: Duration.hours(2) }).app)).toMatch(
      /drift.modelMonitor.maxRuntime: got 7200 s; allowed: whole seconds from 1 to 3600 \(MaxRuntimeInSeconds cannot exceed the schedule's interval of 3600 s for 'cron\(0 \* \? \* \* \*\)'/,
    );
    expect(synthError(monitor('Six', { scheduleExpression: 'cron(0 0/6 ? * * *)', maxRuntime: Duration.hours(7) }).app)).toMatch(/from 1 to 21600/);
    expect(synthError(monitor('Daily', { maxRuntime: Duration.hours(25) }).app)).toMatch(/from 1 to 86400/);
    expect(synthError(monitor('Frac', { maxRuntime: Duration.millis(1500) }).app)).toMatch(/maxRuntime: got 1.5 s/);
    // What SageMaker accepts synthesizes.
    const ok = monitor('Ok', { scheduleExpression: 'cron(0 0/6 ? * * *)', maxRuntime: Duration.hours(6) });
    Template.fromStack(ok.stack).hasResourceProperties('AWS::SageMaker::DataQualityJobDefinition', {
      StoppingCondition: { MaxRuntimeInSeconds: 21600 },
    });
    const hourly = monitor('HourlyOk', { scheduleExpression: 'cron(0 * ? * * *)', maxRuntime: Duration.hours(1) });
    Template.fromStack(hourly.stack).hasResourceProperties('AWS::SageMaker::MonitoringSchedule', {
      MonitoringScheduleConfig: Match.objectLike({ ScheduleConfig: { ScheduleExpression: 'cron(0 * ? * * *)' } }),
    });
  });

  test('schedule names: within 63 characters and the API pattern for every endpoint name length, unique per endpoint', () => {
    const pattern = /^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/; // botocore MonitoringScheduleName
    const names = new Set<string>();
    for (let n = 1; n <= 63; n++) {
      for (const endpointName of ['e'.repeat(n), `${'a-'.repeat(31)}b`.slice(0, n).replace(/-$/, 'c'), 'x'.repeat(Math.max(0, n - 1)) + '9']) {
        const name = modelMonitorScheduleName(endpointName);
        expect([endpointName, name.length <= 63, pattern.test(name)]).toEqual([endpointName, true, true]);
        names.add(`${endpointName}→${name}`);
      }
    }
    // 57 and 62 characters: a plain cut at 63 ends in '-'.
    for (const len of [57, 62]) {
      const endpointName = 'r'.repeat(len);
      expect(`${endpointName}-data-quality`.slice(0, 63)).toMatch(/-$/);
      expect(modelMonitorScheduleName(endpointName)).toMatch(pattern);
    }
    // Long names sharing a prefix: two schedules.
    const a = `${'p'.repeat(55)}-blue-01`;
    const b = `${'p'.repeat(55)}-blue-02`;
    expect(modelMonitorScheduleName(a)).not.toBe(modelMonitorScheduleName(b));
    expect(modelMonitorScheduleName('clustering')).toBe('clustering-data-quality');
    expect(modelMonitorScheduleName('x'.repeat(50))).toBe(`${'x'.repeat(50)}-data-quality`); // 63: still plain
    expect(modelMonitorScheduleName('x'.repeat(51))).toMatch(/^x{51}-dq-[0-9a-f]{8}$/);
    // The template: the schedule and the alarms' dimension carry the same name.
    const long = monitor('Long', { endpointName: b });
    const tp = Template.fromStack(long.stack);
    const schedule = (Object.values(tp.findResources('AWS::SageMaker::MonitoringSchedule'))[0] as any).Properties.MonitoringScheduleName;
    expect(schedule).toBe(modelMonitorScheduleName(b));
    expect(long.m.scheduleName).toBe(schedule);
    expect(JSON.stringify(tp.findResources('AWS::CloudWatch::Alarm'))).toContain(`"Value":"${schedule}"`);
  });

  test('an endpoint name SageMaker would refuse, or a token: a synth error', () => {
    expect(synthError(monitor('BadName', { endpointName: 'rec_1' }).app)).toMatch(
      /drift.modelMonitor endpointName: got 'rec_1'; allowed: a literal endpoint name/,
    );
    expect(synthError(monitor('TokenName', { endpointName: Fn.ref('Name') }).app)).toMatch(/drift.modelMonitor endpointName: got '\$\{Token/);
  });
});

describe("the drift function's environment: under Lambda's 4 KB, checked at synth", () => {
  const features = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      name: `feature_${String(i).padStart(2, '0')}`,
      selector: `$.instances[*][${i}]`,
      csvSelector: `$[*][${i}]`,
    }));

  test('40 features with CSV selectors: a synth error naming the size, the limit and the fix', () => {
    const { app, stack } = newStack('Wide');
    new ResilientEndpoint(stack, 'E', {
      endpointName: 'wide',
      model: { image: IMAGE },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      instanceCount: 2,
      drift: { features: features(40) },
    });
    const msg = synthError(app);
    expect(msg).toMatch(/drift: the drift function's configuration would be ~\d{4} bytes in its environment \(40 features\); allowed: 4096 bytes/);
    expect(msg).toMatch(/Fix: split the features over two DriftMonitors/);
  });

  test('the check flips exactly where the deployed size (every reference at its longest, 63 characters) passes 4 KB', () => {
    const seen: boolean[] = [];
    for (let n = 24; n <= 40; n += 4) {
      const { app, stack } = newStack(`N${n}`);
      const d = new DriftMonitor(stack, 'D', {
        endpointName: 'wide-endpoint',
        captureBucket: new s3.Bucket(stack, 'Capture'), // a generated name: a token
        capturePrefix: 'data-capture',
        modelVersion: Fn.ref('ModelName'), // a model's generated name: a token
        baseline: DriftBaseline.fromS3Uri('s3://training-data/wide/drift-baseline.json'),
        features: features(n),
      });
      const error = synthError(app);
      const env = stack.resolve((d.function.node.defaultChild as lambda.CfnFunction).environment);
      const parts: unknown[] = env.variables[DRIFT_CONFIG_ENV]['Fn::Join'][1];
      expect(parts.filter(p => typeof p !== 'string')).toHaveLength(2); // the bucket's and the model's names
      const deployed = DRIFT_CONFIG_ENV.length + parts.reduce((k: number, p) => k + (typeof p === 'string' ? p.length : 63), 0);
      expect([n, deployed > 4096]).toEqual([n, /4096 bytes/.test(error)]);
      seen.push(deployed > 4096);
    }
    expect(seen).toContain(true);
    expect(seen).toContain(false);
  });
});

describe('like with like: a request size against the memory profile only in the profile’s unit', () => {
  const profileJson = (fields: Record<string, unknown>) =>
    MemoryProfile.fromJson(
      JSON.stringify({
        version: 1,
        sizeUnit: 'events',
        baselineBytes: 1,
        curve: { a: 0, b: 1, c: 0 },
        percentiles: { p50: { size: 11, bytes: 1 }, p99: { size: 444, bytes: 1 }, p999: { size: 2801, bytes: 1 } },
        distribution: 'powerlaw:5:3000',
        points: [],
        ...fields,
      }),
    );
  const monitor = (id: string, profile: MemoryProfile, features?: DriftFeature[]) => {
    const { app, stack } = newStack(id);
    new DriftMonitor(stack, 'D', {
      endpointName: 'rec',
      captureBucket: s3.Bucket.fromBucketName(stack, 'B', 'bkt'),
      capturePrefix: 'capture',
      memoryProfile: profile,
      features,
    });
    return { app, stack };
  };
  const byName = (stack: Stack) => Object.fromEntries(config(Template.fromStack(stack)).features.map((f: any) => [f.name, f]));

  test('the profile records how its sizes are read; old profiles without it still load', () => {
    const p = MemoryProfile.fromFile(path.join(__dirname, '..', 'examples', 'models', 'clustering', 'memory-profile.json'));
    expect([p.sizeUnit, p.sizeSelector, p.csvSizeSelector]).toEqual(['rows', '$.instances.length()', '$.length()']);
    const r = MemoryProfile.fromFile(path.join(__dirname, '..', 'examples', 'models', 'recommender', 'memory-profile.json'));
    expect([r.sizeUnit, r.sizeSelector, r.csvSizeSelector]).toEqual(['events', '$.events.length()', undefined]);
    const old = profileJson({});
    expect([old.problem, old.sizeSelector, old.csvSizeSelector]).toEqual([undefined, undefined, undefined]);
    expect(profileJson({ sizeUnit: 'bytes' }).sizeSelector).toBe('bytes()'); // bytes need no selector
    expect(profileJson({ sizeSelector: '  ', csvSizeSelector: 7 }).sizeSelector).toBeUndefined();
  });

  test('drift: {} with a profile that records its selector: the size in its unit against it, the bytes learned', () => {
    const { stack } = monitor('Defaults', profileJson({ sizeSelector: '$.events.length()' }));
    expect(warnings(stack).join('\n')).not.toMatch(/RE-DriftProfileUnit|does not record how to read them/); // it does record it
    const f = byName(stack);
    expect(f).toEqual({
      RequestSize: { name: 'RequestSize', selector: '$.events.length()', kind: 'numeric', side: 'input', profileBaseline: true, logScale: true },
      RequestBytes: { name: 'RequestBytes', selector: 'bytes()', kind: 'numeric', side: 'input', logScale: true },
    });
    // A profile measured in bytes: the bytes are its unit, compared with it, once.
    const b = byName(monitor('BytesProfile', profileJson({ sizeUnit: 'bytes' })).stack);
    expect(b).toEqual({
      RequestBytes: { name: 'RequestBytes', selector: 'bytes()', kind: 'numeric', side: 'input', profileBaseline: true, logScale: true },
    });
  });

  test('a profile without a selector: only the bytes, learned, and a warning naming the profile’s unit and the fix', () => {
    const { stack } = monitor('NoSelector', profileJson({}));
    expect(Object.keys(byName(stack))).toEqual(['RequestBytes']);
    expect(byName(stack).RequestBytes.profileBaseline).toBeUndefined();
    expect(config(Template.fromStack(stack)).sizeProfile).toBeUndefined(); // nothing compares with it
    expect(warnings(stack).join('\n')).toMatch(
      /memory profile's sizes are in 'events' but it does not record how to read them.*Fix: set PROFILE_SIZE_SELECTOR \(e\.g\. "\$\.events\.length\(\)"\) in inference\.py and profile again, or add "sizeSelector" to memory-profile\.json, or give drift\.features with unit: 'events'[\s\S]*RE-DriftProfileUnit/,
    );
  });

  test('features in another unit, or none: compared with a learned baseline, with a warning naming both units', () => {
    const { stack } = monitor('Mismatch', profileJson({ sizeSelector: '$.events.length()' }), [
      { name: 'Tokens', selector: '$.tokens.length()', requestSize: true, unit: 'tokens' },
      { name: 'Len', selector: '$.events.length()', requestSize: true },
      { name: 'Events', selector: '$.events.length()', requestSize: true, unit: 'events' },
      DriftFeatures.requestBytes(),
    ]);
    const f = byName(stack);
    expect([f.Tokens.profileBaseline, f.Len.profileBaseline, f.Events.profileBaseline, f.RequestBytes.profileBaseline]).toEqual([
      undefined,
      undefined,
      true,
      undefined,
    ]);
    const w = warnings(stack).join('\n');
    expect(w).toMatch(/drift feature 'Tokens' of rec is a request size in 'tokens', but the memory profile's sizes are in 'events'/);
    expect(w).toMatch(
      /drift feature 'Len' of rec is a request size in no stated unit, but the memory profile's sizes are in 'events'.*give it unit: 'events'/,
    );
    expect(w).not.toMatch(/'Events'|'RequestBytes'/); // like with like; and bytes are never the profile's unit here
  });

  test('the examples’ feature sets state their units', () => {
    expect(DriftFeatures.recommenderExample().map(f => [f.name, f.unit])).toEqual([
      ['SequenceLength', 'events'],
      ['Profile', undefined],
      ['RequestBytes', 'bytes'],
    ]);
    expect(DriftFeatures.clusteringExample().find(f => f.name === 'Rows')?.unit).toBe('rows');
  });

  test('a size selector the drift function cannot read: a synth error naming the profile field', () => {
    const { app } = monitor('BadSelector', profileJson({ sizeSelector: 'events.length' }));
    expect(synthError(app)).toMatch(/model.memoryProfile sizeSelector: got 'events.length'; allowed: a drift selector/);
  });
});

describe('synth errors', () => {
  test('bad values, all at once, each naming the prop, the value, the range and the fix', () => {
    const { app, stack } = newStack('Bad');
    new ResilientEndpoint(stack, 'E', {
      model: { image: IMAGE },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      drift: {
        wassersteinThreshold: 0,
        klThreshold: -1,
        sampleSize: 10,
        klWindow: Duration.minutes(10),
        features: [
          { name: 'a b', selector: 'events' },
          { name: 'x', selector: '$.a[?(@.x)]' },
          { name: 'x', selector: '$.b' },
        ],
        baseline: DriftBaseline.fromS3Uri('https://example.com/b.json'),
        modelMonitor: { imageUri: 'analyzer:latest', baselineUri: 'b' },
      },
    });
    const msg = synthError(app);
    for (const re of [
      /drift.wassersteinThreshold: got 0; allowed: a number from 0.001 to 10/,
      /drift.klThreshold: got -1/,
      /drift.sampleSize: got 10; allowed: an integer from 100/,
      /drift.klWindow: got '10 minutes'; allowed: from 1 hour to 31 days/,
      /drift.features.name: got 'a b'/,
      /drift.features.selector: got 'events'.*starts with '\$'/,
      /drift.features.selector: got '\$.a\[\?\(@.x\)\]'/,
      /drift.features.name: got 'x'; allowed: unique names/,
      /drift.baseline: got 'https:\/\/example.com\/b.json'; allowed: a literal s3:\/\/bucket\/key/,
      /drift.modelMonitor.imageUri: got 'analyzer:latest'/,
      /drift.modelMonitor.baselineUri: got 'b'/,
    ])
      expect(msg).toMatch(re);
  });

  test('drift needs the capture; notify needs a topic', () => {
    const { app, stack } = newStack('NoCapture');
    new ResilientEndpoint(stack, 'E', {
      model: { image: IMAGE },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      dataCapture: { enabled: false },
      drift: {},
    });
    expect(synthError(app)).toMatch(/drift: got 'on'; allowed: data capture on/);
    const b = newStack('NoTopic');
    new DriftMonitor(b.stack, 'D', {
      endpointName: 'e',
      captureBucket: s3.Bucket.fromBucketName(b.stack, 'B', 'bkt'),
      capturePrefix: 'p',
      notify: true,
    });
    expect(synthError(b.app)).toMatch(/drift.notify: got true; allowed: a topic to notify/);
  });

  test('off by default; drift: {} compares the request bytes with a learned baseline', () => {
    const a = newStack('Default');
    new ResilientEndpoint(a.stack, 'E', { model: { image: IMAGE }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, instanceCount: 2 });
    const none = Template.fromStack(a.stack);
    expect(
      Object.values(none.findResources('AWS::CloudWatch::Alarm')).filter((x: any) => x.Properties.Namespace === 'ResilientEndpoint/Drift'),
    ).toHaveLength(0);
    // The readiness rules see it: no drift monitor, no budget (warnings).
    const ids = (tpl: Template) => ProductionReadinessChecks.checkTemplate(tpl.toJSON()).map(f => f.ruleId);
    expect(ids(none)).toEqual(expect.arrayContaining(['RE-Drift', 'RE-Budget']));
    expect(ids(t)).not.toContain('RE-Drift');
    expect(ids(t)).not.toContain('RE-Budget');
    const b = newStack('Minimal');
    new ResilientEndpoint(b.stack, 'E', { model: { image: IMAGE }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, instanceCount: 2, drift: {} });
    const c = config(Template.fromStack(b.stack));
    // No memory profile: the bytes, with a learned baseline (never a profile's distribution).
    expect(c.features).toEqual([{ name: 'RequestBytes', selector: 'bytes()', kind: 'numeric', side: 'input', logScale: true }]);
    expect(c.baselineUri).toBe('');
    expect(c.learn).toBe(true);
  });
});
