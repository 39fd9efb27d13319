// doctor's drift check against CloudWatch-shaped answers (ListMetrics, GetMetricData with hourly
// buckets, newest first): the runs published in their window, or not, or read nothing.
import { CloudWatchClient, DescribeAlarmsCommand, GetMetricDataCommand, ListMetricsCommand, MetricAlarm } from '@aws-sdk/client-cloudwatch';
import { GetObjectCommand, NoSuchKey, S3Client } from '@aws-sdk/client-s3';
import { ListMonitoringSchedulesCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3lib from 'aws-cdk-lib/aws-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { OpsClients } from '../bin/ops/aws';
import { driftDoctor, modelMonitorMetrics } from '../bin/ops/doctor-drift';
import { driftRuns } from '../bin/ops/drift-check';
import { DataQualityMonitor } from '../lib';
import { newStack } from './util';

const cw = mockClient(CloudWatchClient);
const c = { cloudwatch: new CloudWatchClient({}) } as unknown as OpsClients;
const NOW = Date.parse('2026-12-02T06:30:00Z');
const DAY = 86_400_000;
const listed = {
  Metrics: [
    {
      Namespace: 'ResilientEndpoint/Drift',
      MetricName: 'DriftRecords',
      Dimensions: [
        { Name: 'EndpointName', Value: 'clu' },
        { Name: 'Distance', Value: 'kl' },
      ],
    },
  ],
};
const result = (id: string, points: [string, number][]) => ({
  Id: id,
  Label: 'DriftRecords',
  StatusCode: 'Complete' as const,
  Timestamps: points.map(p => new Date(p[0])),
  Values: points.map(p => p[1]),
});

beforeEach(() => cw.reset());

test('no drift metric: SKIP (drift off)', async () => {
  cw.on(ListMetricsCommand).resolves({ Metrics: [] });
  const r = await driftRuns(c, 'clu', NOW);
  expect(r).toEqual([expect.objectContaining({ id: 'drift-runs', result: 'SKIP' })]);
  expect(cw.commandCalls(ListMetricsCommand)[0].args[0].input).toMatchObject({
    Namespace: 'ResilientEndpoint/Drift',
    MetricName: 'DriftRecords',
    Dimensions: [{ Name: 'EndpointName', Value: 'clu' }],
  });
});

test("both runs in their windows: PASS with the records read; the query asks for the last 170 hours' hourly sums", async () => {
  cw.on(ListMetricsCommand).resolves(listed);
  cw.on(GetMetricDataCommand).resolves({
    MetricDataResults: [result('kl', [['2026-12-02T03:00:00Z', 1200]]), result('wasserstein', [['2026-11-30T03:00:00Z', 8400]])],
  });
  const r = await driftRuns(c, 'clu', NOW);
  expect(r.map(x => [x.id, x.result])).toEqual([
    ['drift-runs-kl', 'PASS'],
    ['drift-runs-wasserstein', 'PASS'],
  ]);
  expect(r[1].saw).toMatch(/read 8400 captured records in the last 170 hours/);
  const input = cw.commandCalls(GetMetricDataCommand)[0].args[0].input;
  expect(input.StartTime).toEqual(new Date(NOW - 170 * 3_600_000));
  expect(input.MetricDataQueries![0].MetricStat).toMatchObject({ Period: 3600, Stat: 'Sum' });
  expect(input.MetricDataQueries![0].MetricStat!.Metric!.Dimensions).toEqual([
    { Name: 'EndpointName', Value: 'clu' },
    { Name: 'Distance', Value: 'kl' },
  ]);
});

test('a daily run older than 26 hours: FAIL; a run that read nothing: WARN', async () => {
  cw.on(ListMetricsCommand).resolves(listed);
  cw.on(GetMetricDataCommand).resolves({
    MetricDataResults: [result('kl', [['2026-12-01T03:00:00Z', 500]]), result('wasserstein', [['2026-11-30T03:00:00Z', 0]])],
  });
  const r = await driftRuns(c, 'clu', NOW);
  expect(r.map(x => [x.id, x.result])).toEqual([
    ['drift-runs-kl', 'FAIL'],
    ['drift-runs-wasserstein', 'WARN'],
  ]);
  expect(r[0].saw).toBe('the daily KL run published nothing in the last 26 hours');
  expect(r[0].fix).toMatch(/dead-letter queue/);
  // 27.5 hours before NOW is outside; 25.5 hours before is inside.
  cw.on(GetMetricDataCommand).resolves({ MetricDataResults: [result('kl', [['2026-12-01T05:00:00Z', 1]]), result('wasserstein', [])] });
  expect((await driftRuns(c, 'clu', NOW)).map(x => x.result)).toEqual(['PASS', 'FAIL']);
});

// ---- the baselines and Model Monitor's metrics (bin/ops/doctor-drift.ts) ----
describe('drift-baseline: each feature’s baseline, its source and age, from the run status', () => {
  const s3 = mockClient(S3Client);
  const sm = mockClient(SageMakerClient);
  const clients = { cloudwatch: new CloudWatchClient({}), s3: new S3Client({}), sagemaker: new SageMakerClient({}) } as unknown as OpsClients;
  const ep = {
    EndpointName: 'clu',
    DataCaptureConfig: { EnableCapture: true, DestinationS3Uri: 's3://capture-bkt/data-capture', CaptureStatus: 'Started' },
  } as any;
  const cfg = { CreationTime: new Date(NOW - 40 * DAY) } as any;
  const status = (features: Record<string, unknown>) => ({
    format: 1,
    endpointName: 'clu',
    modelVersion: 'clu-model-1',
    distance: 'kl',
    at: '2026-12-02T03:00:41.000Z',
    records: 1200,
    features,
  });
  const serve = (doc: unknown) =>
    s3
      .on(GetObjectCommand, { Bucket: 'capture-bkt', Key: 'drift-baselines/clu/status.json' })
      .resolves({ Body: { transformToString: async () => JSON.stringify(doc) } as any });
  beforeEach(() => {
    s3.reset();
    sm.reset();
    cw.reset();
  });

  test('PASS: every feature with its source and age, read from the capture bucket the live endpoint names', async () => {
    serve(
      status({
        RequestSize: { source: 'memory-profile', from: 'powerlaw:100:200000' },
        RequestBytes: {
          source: 'learned',
          from: 's3://capture-bkt/drift-baselines/clu/0a1b2c3d4e5f6a7b.json',
          createdAt: new Date(NOW - 39 * DAY).toISOString(),
        },
        x: { source: 'file', from: 's3://training/clu/baseline.json', createdAt: '2026-09-01T00:00:00Z' },
      }),
    );
    const [r] = await driftDoctor(clients, 'clu', ep, cfg, NOW);
    expect(r).toMatchObject({ id: 'drift-baseline', result: 'PASS' });
    expect(r.saw).toBe(
      'last run kl at 2026-12-02T03:00:41.000Z over 1200 records: RequestSize: the memory profile (powerlaw:100:200000); ' +
        'RequestBytes: learned s3://capture-bkt/drift-baselines/clu/0a1b2c3d4e5f6a7b.json, 39 days old (2026-10-24); ' +
        'x: file s3://training/clu/baseline.json, 92 days old (2026-09-01)',
    );
  });

  test('WARN: a feature compared with nothing; a learned baseline made long after the config (re-learned)', async () => {
    serve(status({ RequestBytes: { source: 'none' } }));
    const [none] = await driftDoctor(clients, 'clu', ep, cfg, NOW);
    expect(none).toMatchObject({ result: 'WARN', fix: expect.stringMatching(/^RequestBytes had no baseline, so drift was not measured for it/) });
    serve(
      status({
        RequestBytes: { source: 'learned', from: 's3://capture-bkt/drift-baselines/clu/x.json', createdAt: new Date(NOW - 10 * DAY).toISOString() },
      }),
    );
    const [again] = await driftDoctor(clients, 'clu', ep, cfg, NOW);
    expect(again.result).toBe('WARN');
    expect(again.saw).toMatch(/RequestBytes: learned .*, 10 days old .*; the endpoint config dates from 2026-10-23$/);
    expect(again.fix).toMatch(
      /more than 9 days after the endpoint's config: an earlier one was deleted and re-learned.*lifecycle rules reach only the capture prefix/,
    );
    // Learned within the first days: PASS.
    serve(
      status({
        RequestBytes: { source: 'learned', from: 's3://capture-bkt/drift-baselines/clu/x.json', createdAt: new Date(NOW - 33 * DAY).toISOString() },
      }),
    );
    expect((await driftDoctor(clients, 'clu', ep, cfg, NOW))[0].result).toBe('PASS');
  });

  test('SKIP: capture off, no status yet, or no permission (named)', async () => {
    expect((await driftDoctor(clients, 'clu', { EndpointName: 'clu' } as any, undefined, NOW))[0]).toMatchObject({
      result: 'SKIP',
      saw: 'data capture off: no drift baselines',
    });
    s3.on(GetObjectCommand).rejects(new NoSuchKey({ message: 'The specified key does not exist.', $metadata: {} }));
    expect((await driftDoctor(clients, 'clu', ep, cfg, NOW))[0].saw).toMatch(
      /^no drift run status at s3:\/\/capture-bkt\/drift-baselines\/clu\/status.json/,
    );
    s3.on(GetObjectCommand).rejects(Object.assign(new Error('Access Denied'), { name: 'AccessDenied' }));
    expect((await driftDoctor(clients, 'clu', ep, cfg, NOW))[0]).toMatchObject({
      result: 'SKIP',
      saw: 'not allowed: AccessDenied',
      fix: expect.stringMatching(/s3:GetObject on the capture bucket’s drift-baselines\/<endpoint>\/status.json/),
    });
  });

  test('the wording for every source: none, a baseline with no date, one learned in the run itself; several without one', async () => {
    serve(
      status({
        a: { source: 'none' },
        b: { source: 'none' },
        c: { source: 'file', from: 's3://t/b.json' },
        d: { source: 'learned', from: 's3://capture-bkt/drift-baselines/clu/h.json', createdAt: new Date(NOW - DAY).toISOString(), learnedNow: true },
        e: { source: 'memory-profile', from: 'P50/P99/P99.9' },
      }),
    );
    const [r] = await driftDoctor(clients, 'clu', ep, cfg, NOW);
    expect(r).toMatchObject({ id: 'drift-baseline', result: 'WARN' });
    expect(r.saw).toBe(
      'last run kl at 2026-12-02T03:00:41.000Z over 1200 records: a: none; b: none; c: file s3://t/b.json, age unknown; ' +
        'd: learned s3://capture-bkt/drift-baselines/clu/h.json, learned in that run; e: the memory profile (P50/P99/P99.9)',
    );
    expect(r.fix).toMatch(/^a, b had no baseline, so drift was not measured for them:/);
  });

  test('re-learned: only a learned baseline, only after 9 days past the config, and named', async () => {
    const at = (days: number) => new Date(cfg.CreationTime.getTime() + days * DAY).toISOString();
    // A baseline file written after the config is the owner's, not a re-learned one.
    serve(status({ f: { source: 'file', from: 's3://t/b.json', createdAt: at(20) } }));
    expect((await driftDoctor(clients, 'clu', ep, cfg, NOW))[0].result).toBe('PASS');
    serve(status({ L: { source: 'learned', from: 's3://capture-bkt/drift-baselines/clu/h.json', createdAt: at(9) } }));
    expect((await driftDoctor(clients, 'clu', ep, cfg, NOW))[0].result).toBe('PASS'); // the first week's run, and a day
    serve(
      status({
        L: { source: 'learned', from: 's3://capture-bkt/drift-baselines/clu/h.json', createdAt: at(9.5) },
        M: { source: 'learned', from: 's3://capture-bkt/drift-baselines/clu/h.json', createdAt: at(1) },
      }),
    );
    const r = (await driftDoctor(clients, 'clu', ep, cfg, NOW))[0];
    expect(r.result).toBe('WARN');
    expect(r.fix).toMatch(/^the learned baseline of L was made more than 9 days after/);
    // No config date: nothing to compare with.
    expect((await driftDoctor(clients, 'clu', ep, undefined, NOW))[0].result).toBe('PASS');
  });

  test('the bucket comes from the live capture, else the config; its key is the endpoint’s status', async () => {
    serve(status({ a: { source: 'memory-profile', from: 'powerlaw:5:3000' } }));
    const fromConfig = { ...cfg, DataCaptureConfig: { DestinationS3Uri: 's3://capture-bkt/other-prefix' } };
    expect((await driftDoctor(clients, 'clu', { EndpointName: 'clu' } as any, fromConfig, NOW))[0].result).toBe('PASS');
    expect(s3.commandCalls(GetObjectCommand).map(c => c.args[0].input)).toEqual([{ Bucket: 'capture-bkt', Key: 'drift-baselines/clu/status.json' }]);
  });

  test('an AWS error on one check: throttled is a WARN, anything else a WARN with its words; the other check still runs', async () => {
    s3.on(GetObjectCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    sm.on(ListMonitoringSchedulesCommand).rejects(Object.assign(new Error('User: x is not authorized'), { name: 'AccessDeniedException' }));
    const [baseline, mm] = await driftDoctor(clients, 'clu', ep, cfg, NOW);
    expect(baseline).toEqual({ id: 'drift-baseline', result: 'WARN', saw: 'throttled: ThrottlingException', fix: 'run doctor again in a minute' });
    expect(mm).toEqual({
      id: 'model-monitor-metrics',
      result: 'SKIP',
      saw: 'not allowed: AccessDeniedException',
      fix: 'allow sagemaker:ListMonitoringSchedules, cloudwatch:ListMetrics and cloudwatch:DescribeAlarms',
    });
    s3.on(GetObjectCommand).rejects(Object.assign(new Error('socket hang up'), { name: 'Error' }));
    const [other] = await driftDoctor(clients, 'clu', ep, cfg, NOW);
    expect(other).toMatchObject({ id: 'drift-baseline', result: 'WARN', saw: 'Error: socket hang up' });
  });
});

describe('model-monitor-metrics: the feature_baseline_drift_* metrics the account has, and whether the alarms read them', () => {
  const s3 = mockClient(S3Client);
  const sm = mockClient(SageMakerClient);
  const clients = { cloudwatch: new CloudWatchClient({}), s3: new S3Client({}), sagemaker: new SageMakerClient({}) } as unknown as OpsClients;
  const ep = { EndpointName: 'clu' } as any; // capture off here: only the Model Monitor row

  /** The violation alarms as the construct synthesizes them (DescribeAlarms returns the template's properties). */
  function synthesizedAlarms(metric?: { namespace: string; endpointDimension: string; scheduleDimension: string }): MetricAlarm[] {
    const { stack } = newStack('MM');
    new DataQualityMonitor(stack, 'M', {
      endpointName: 'clu',
      captureBucket: s3lib.Bucket.fromBucketName(stack, 'B', 'bkt'),
      capturePrefix: 'data-capture',
      imageUri: '156813124566.dkr.ecr.us-east-1.amazonaws.com/sagemaker-model-monitor-analyzer',
      baselineUri: 's3://b/mm',
      alarmFeatures: ['x', 'y'],
      metric,
    });
    return Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm')).map((a: any) => a.Properties as MetricAlarm);
  }
  /** ListMetrics as CloudWatch answers it: every metric with the filter's dimensions, two a page. */
  function serveMetrics(metrics: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: string }[] }[]): void {
    cw.on(ListMetricsCommand).callsFake((input: any) => {
      const match = metrics.filter(m =>
        (input.Dimensions ?? []).every((f: any) => m.Dimensions.some(d => d.Name === f.Name && (f.Value === undefined || d.Value === f.Value))),
      );
      const start = Number(input.NextToken ?? 0);
      return { Metrics: match.slice(start, start + 2), NextToken: start + 2 < match.length ? String(start + 2) : undefined };
    });
  }
  const standard = ['Invocations', 'ModelLatency', 'Invocation5XXErrors'].map(MetricName => ({
    Namespace: 'AWS/SageMaker',
    MetricName,
    Dimensions: [
      { Name: 'EndpointName', Value: 'clu' },
      { Name: 'VariantName', Value: 'Primary' },
    ],
  }));
  beforeEach(() => {
    s3.reset();
    sm.reset();
    cw.reset();
    sm.on(ListMonitoringSchedulesCommand).resolves({
      MonitoringScheduleSummaries: [
        {
          MonitoringScheduleName: 'clu-data-quality',
          MonitoringScheduleArn: 'arn:aws:sagemaker:us-east-1:123456789012:monitoring-schedule/clu-data-quality',
          CreationTime: new Date(NOW - 30 * DAY),
          LastModifiedTime: new Date(NOW - DAY),
          MonitoringScheduleStatus: 'Scheduled',
          EndpointName: 'clu',
        },
      ],
    });
  });

  test('no schedule on the endpoint: no row (Model Monitor is optional)', async () => {
    sm.on(ListMonitoringSchedulesCommand).resolves({ MonitoringScheduleSummaries: [] });
    expect(await modelMonitorMetrics(clients, 'clu')).toBeUndefined();
    s3.on(GetObjectCommand).rejects(new NoSuchKey({ message: 'x', $metadata: {} }));
    expect((await driftDoctor(clients, 'clu', ep, undefined, NOW)).map(c => c.id)).toEqual(['drift-baseline']);
  });

  test.each([
    ['aws/sagemaker/Endpoints/data-metrics', 'Endpoint', 'MonitoringSchedule'],
    ['/aws/sagemaker/Endpoints/data-metric', 'EndpointName', 'ScheduleName'],
    ['/aws/sagemaker/Endpoint/data-metrics', 'Endpoint', 'MonitoringSchedule'],
  ])('found in %s {%s, %s}: PASS, named, and the default alarms read it', async (ns, e, s) => {
    const drift = ['x', 'y'].map(f => ({
      Namespace: ns,
      MetricName: `feature_baseline_drift_${f}`,
      Dimensions: [
        { Name: e, Value: 'clu' },
        { Name: s, Value: 'clu-data-quality' },
      ],
    }));
    serveMetrics([...standard, ...drift, { ...drift[0], MetricName: 'feature_non_null_x' }]);
    cw.on(DescribeAlarmsCommand).resolves({ MetricAlarms: synthesizedAlarms() });
    const r = (await modelMonitorMetrics(clients, 'clu'))!;
    expect(r).toMatchObject({ id: 'model-monitor-metrics', result: 'PASS' });
    expect(r.saw).toBe(`found ${ns} {${[e, s].sort().join(', ')}}: x, y; the violation alarms read it`);
    // Every dimension AWS's pages name was asked for, in no namespace in particular.
    const asked = cw.commandCalls(ListMetricsCommand).map(c => c.args[0].input);
    expect(asked.every(i => i.Namespace === undefined)).toBe(true);
    expect(new Set(asked.map(i => i.Dimensions![0].Name))).toEqual(new Set(['Endpoint', 'EndpointName', 'MonitoringSchedule', 'ScheduleName']));
  });

  test('found in a spelling the alarms do not read (pinned to another): FAIL, naming both and the fix', async () => {
    serveMetrics([
      ...standard,
      {
        Namespace: '/aws/sagemaker/Endpoints/data-metric',
        MetricName: 'feature_baseline_drift_x',
        Dimensions: [
          { Name: 'EndpointName', Value: 'clu' },
          { Name: 'ScheduleName', Value: 'clu-data-quality' },
        ],
      },
    ]);
    cw.on(DescribeAlarmsCommand).resolves({
      MetricAlarms: synthesizedAlarms({
        namespace: 'aws/sagemaker/Endpoints/data-metrics',
        endpointDimension: 'Endpoint',
        scheduleDimension: 'MonitoringSchedule',
      }),
    });
    const r = (await modelMonitorMetrics(clients, 'clu'))!;
    expect(r.result).toBe('FAIL');
    expect(r.saw).toBe(
      'found /aws/sagemaker/Endpoints/data-metric {EndpointName, ScheduleName}: x; the violation alarms read aws/sagemaker/Endpoints/data-metrics {Endpoint, MonitoringSchedule}',
    );
    expect(r.fix).toMatch(/pin the spelling the account has with drift.modelMonitor.metric \(namespace \/aws\/sagemaker\/Endpoints\/data-metric/);
  });

  test('none in any namespace: WARN with what to check', async () => {
    serveMetrics(standard);
    cw.on(DescribeAlarmsCommand).resolves({ MetricAlarms: synthesizedAlarms() });
    const r = (await modelMonitorMetrics(clients, 'clu'))!;
    expect(r).toMatchObject({
      result: 'WARN',
      saw: 'no feature_baseline_drift_* metric for clu or its schedules clu-data-quality (Scheduled) in any namespace',
    });
    expect(r.fix).toMatch(/publish_cloudwatch_metrics Enabled and its role cloudwatch:PutMetricData/);
  });

  test('every page read, the features sorted, the dimensions in any order; the calls asked for this endpoint', async () => {
    const features = ['e', 'd', 'c', 'b', 'a'];
    serveMetrics(
      features.map(f => ({
        Namespace: 'aws/sagemaker/Endpoints/data-metrics',
        MetricName: `feature_baseline_drift_${f}`,
        // ListMetrics' order of dimensions need not be the alarm's.
        Dimensions: [
          { Name: 'MonitoringSchedule', Value: 'clu-data-quality' },
          { Name: 'Endpoint', Value: 'clu' },
        ],
      })),
    );
    cw.on(DescribeAlarmsCommand).resolves({ MetricAlarms: synthesizedAlarms() });
    const r = (await modelMonitorMetrics(clients, 'clu'))!;
    expect(r).toEqual({
      id: 'model-monitor-metrics',
      result: 'PASS',
      saw: 'found aws/sagemaker/Endpoints/data-metrics {Endpoint, MonitoringSchedule}: a, b, c, d, e; the violation alarms read it',
    });
    expect(sm.commandCalls(ListMonitoringSchedulesCommand)[0].args[0].input).toEqual({ EndpointName: 'clu' });
    expect(cw.commandCalls(DescribeAlarmsCommand)[0].args[0].input).toEqual({
      AlarmNamePrefix: 'clu-drift-modelmonitor-',
      AlarmTypes: ['MetricAlarm'],
    });
  });

  test('found, but no violation alarm: PASS, saying so; found where none of the three default spellings is: FAIL naming them', async () => {
    const metric = (Namespace: string) => ({
      Namespace,
      MetricName: 'feature_baseline_drift_x',
      Dimensions: [
        { Name: 'Endpoint', Value: 'clu' },
        { Name: 'MonitoringSchedule', Value: 'clu-data-quality' },
      ],
    });
    serveMetrics([metric('aws/sagemaker/Endpoints/data-metrics')]);
    cw.on(DescribeAlarmsCommand).resolves({ MetricAlarms: [] });
    expect(await modelMonitorMetrics(clients, 'clu')).toEqual({
      id: 'model-monitor-metrics',
      result: 'PASS',
      saw: 'found aws/sagemaker/Endpoints/data-metrics {Endpoint, MonitoringSchedule}: x; no violation alarm on them',
    });
    serveMetrics([metric('aws/sagemaker/ModelMonitoring/data-metrics')]);
    cw.on(DescribeAlarmsCommand).resolves({ MetricAlarms: synthesizedAlarms() });
    const r = (await modelMonitorMetrics(clients, 'clu'))!;
    expect(r.result).toBe('FAIL');
    expect(r.saw).toBe(
      'found aws/sagemaker/ModelMonitoring/data-metrics {Endpoint, MonitoringSchedule}: x; the violation alarms read ' +
        'aws/sagemaker/Endpoints/data-metrics {Endpoint, MonitoringSchedule}, /aws/sagemaker/Endpoints/data-metric {EndpointName, ScheduleName}, /aws/sagemaker/Endpoint/data-metrics {Endpoint, MonitoringSchedule}',
    );
  });
});
