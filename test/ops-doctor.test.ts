import { ApplicationAutoScalingClient, DescribeScalableTargetsCommand, ListTagsForResourceCommand } from '@aws-sdk/client-application-auto-scaling';
import {
  CloudWatchClient,
  CloudWatchServiceException,
  CompositeAlarm,
  DescribeAlarmsCommand,
  GetMetricDataCommand,
  GetMetricDataCommandInput,
  ListMetricsCommand,
  MetricAlarm,
} from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DescribeRuleCommand, EventBridgeClient, ListRuleNamesByTargetCommand } from '@aws-sdk/client-eventbridge';
import { LambdaClient, ListFunctionsCommand } from '@aws-sdk/client-lambda';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { DescribeEndpointCommand, DescribeEndpointConfigCommand, SageMakerClient, SageMakerServiceException } from '@aws-sdk/client-sagemaker';
import { AuthorizationErrorException, ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetParameterCommand, GetServiceSettingCommand, SSMClient } from '@aws-sdk/client-ssm';
import { Template } from 'aws-cdk-lib/assertions';
import { mockClient } from 'aws-sdk-client-mock';
import { fixFor, opsClients, resolveRegion } from '../bin/ops/aws';
import { doctor, formatReport, readStored, SIMULATOR_DELAYS, spacingSeconds, STALE_AFTER_S } from '../bin/ops/doctor';
import {
  FAMILY_METRICS,
  gpuMemoryHeld,
  liveVariants,
  metricFamily,
  PROBE_NAMESPACE,
  QUIET_MINUTES,
  utilisationMetrics,
} from '../bin/ops/doctor-live';
import { doctorMain } from '../bin/ops/index';
import { ContainerImage, ResilientEndpoint, SageMakerInstanceType } from '../lib';
import { BREAKER_TAG } from '../lib/breaker/contract';
import { serializeState } from '../lib/breaker/policy';
import { DEFAULT_ASSUMPTIONS } from '../lib/simulation/engine';
import { assumptionsFrom } from '../bin/simulate';
import { CloudWatchFake } from './cloudwatch-fake';
import { newStack } from './util';

const sm = mockClient(SageMakerClient);
const cw = mockClient(CloudWatchClient);
const sns = mockClient(SNSClient);
const lambda = mockClient(LambdaClient);
const ddb = mockClient(DynamoDBClient);
const ssm = mockClient(SSMClient);
const aas = mockClient(ApplicationAutoScalingClient);
const ev = mockClient(EventBridgeClient);
const s3 = mockClient(S3Client);
const clients = opsClients('us-east-1', 1);

const NOW = Date.UTC(2026, 11, 1, 12, 0, 30);
const EP = 'rec';
const TOPIC = 'arn:aws:sns:us-east-1:123456789012:rec-alarms';
const FN_ARN = 'arn:aws:lambda:us-east-1:123456789012:function:Rec-CircuitBreakerFn-1A2B3C';
const DIMS = { EndpointName: EP, VariantName: 'Primary' };
/** ListMetrics's entry for the guard's GuardPressure series of this endpoint's primary variant, in `Namespace`. */
const guardSeries = (Namespace: string) => ({
  Namespace,
  MetricName: 'GuardPressure',
  Dimensions: Object.entries(DIMS).map(([Name, Value]) => ({ Name, Value })),
});

/** The breaker function's environment as the CircuitBreaker construct writes it. */
const ENV = {
  ENDPOINT_NAME: EP,
  PRIMARY_VARIANT: 'Primary',
  FALLBACK_VARIANT: 'Fallback',
  PARAMETER_NAME: '/rec/level',
  TABLE_NAME: 'Rec-BreakerState-XYZ',
  GPU_COUNT: '1',
  METRIC_PERIOD_SECONDS: '10',
  PER_GPU_METRICS: 'false',
  PRIMARY_CAPACITY: JSON.stringify({ min: 2, max: 4, qpsPerInstance: 150 }),
  FALLBACK_CAPACITY: JSON.stringify({ min: 1, max: 4, qpsPerInstance: 150 }),
};

/**
 * The alarms as DescribeAlarms returns them for what the construct deploys: the recommender endpoint with
 * the default monitoring (notify by e-mail), synthesized once. In that default only the composite alarm
 * carries the topic (real-account.md item 46).
 */
let DEPLOYED: { metric: MetricAlarm[]; composite: CompositeAlarm[] };
/** The rollback alarms the synthesized endpoint's deployment names (AutoRollbackConfiguration). */
let ROLLBACK: string[];
beforeAll(() => {
  const { stack } = newStack();
  new ResilientEndpoint(stack, 'Rec', {
    endpointName: EP,
    model: { image: ContainerImage.fromImageUri('763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-inference:2.3.0-gpu') },
    instanceType: SageMakerInstanceType.ML_G4DN_2XLARGE,
    monitoring: { notify: { emails: ['oncall@example.com'] } },
  });
  const t = Template.fromStack(stack);
  // Each a Ref to one of the stack's alarms: its (literal) name.
  const resources = t.toJSON().Resources;
  ROLLBACK = (Object.values(t.findResources('AWS::SageMaker::Endpoint'))[0] as any).Properties.DeploymentConfig.AutoRollbackConfiguration.Alarms.map(
    (a: any) => resources[a.AlarmName.Ref].Properties.AlarmName,
  );
  const topics = Object.keys(t.findResources('AWS::SNS::Topic'));
  // A Ref to the stack's topic is the topic's ARN; the alarm names are literal (a literal endpoint name).
  const arn = (x: any): string => (topics.includes(x?.Ref) ? TOPIC : typeof x === 'string' ? x : JSON.stringify(x));
  const actions = (xs: any[] | undefined) => (xs ?? []).map(arn);
  const since = new Date(NOW - 86_400_000);
  DEPLOYED = {
    metric: (Object.values(t.findResources('AWS::CloudWatch::Alarm')) as any[]).map(({ Properties: p }) => ({
      AlarmName: p.AlarmName,
      StateValue: 'OK',
      StateUpdatedTimestamp: since,
      Period: p.Period,
      EvaluationPeriods: p.EvaluationPeriods,
      Metrics: p.Metrics,
      AlarmActions: actions(p.AlarmActions),
      OKActions: actions(p.OKActions),
    })),
    composite: (Object.values(t.findResources('AWS::CloudWatch::CompositeAlarm')) as any[]).map(({ Properties: p }) => ({
      AlarmName: p.AlarmName,
      StateValue: 'OK',
      StateUpdatedTimestamp: since,
      AlarmActions: actions(p.AlarmActions),
      OKActions: actions(p.OKActions),
    })),
  };
});

function alarm(name: string, over: Partial<MetricAlarm> = {}): MetricAlarm {
  return {
    AlarmName: name,
    StateValue: 'OK',
    StateUpdatedTimestamp: new Date(NOW - 86_400_000),
    Period: 60,
    EvaluationPeriods: 5,
    AlarmActions: [TOPIC],
    OKActions: [TOPIC],
    ...over,
  };
}

/** DescribeEndpoint's answer for the deployed recommender, live capture and metrics included. */
function describeEndpoint(over: Record<string, unknown> = {}): any {
  return {
    EndpointName: EP,
    EndpointArn: `arn:aws:sagemaker:us-east-1:123456789012:endpoint/${EP}`,
    EndpointConfigName: 'rec-config-1',
    EndpointStatus: 'InService',
    CreationTime: new Date(NOW - 86_400_000),
    LastModifiedTime: new Date(NOW - 86_400_000),
    ProductionVariants: [
      { VariantName: 'Primary', CurrentWeight: 1, DesiredWeight: 1, CurrentInstanceCount: 2, DesiredInstanceCount: 2 },
      { VariantName: 'Fallback', CurrentWeight: 0, DesiredWeight: 0, CurrentInstanceCount: 1, DesiredInstanceCount: 1 },
    ],
    // What the live endpoint does (DescribeEndpoint): capture working, 10-s enhanced metrics.
    DataCaptureConfig: {
      EnableCapture: true,
      CaptureStatus: 'Started',
      CurrentSamplingPercentage: 1,
      DestinationS3Uri: 's3://rec-capture/datacapture',
    },
    MetricsConfig: { EnableEnhancedMetrics: true, MetricPublishFrequencyInSeconds: 10 },
    // The deployment guardrails the construct writes: its rollback alarms.
    LastDeploymentConfig: { AutoRollbackConfiguration: { Alarms: ROLLBACK.map(AlarmName => ({ AlarmName })) } },
    ...over,
  };
}

/**
 * GetMetricData's answer to a request with math expressions, which CloudWatchFake does not evaluate: what
 * doctor reports for each answer CloudWatch may give is what these tests pin. The FILL probe over a series
 * with no point: 30 points of -1 (`fillOfEmpty`) or none; an alarm's own expression: 30 values.
 */
function expressionAnswer(input: GetMetricDataCommandInput, fillOfEmpty: boolean): any {
  return {
    MetricDataResults: (input.MetricDataQueries ?? [])
      .filter(q => q.ReturnData !== false)
      .map(q => {
        const fill = /^FILL\(liveNone, -1\)$/.test(q.Expression ?? '');
        const n = fill && !fillOfEmpty ? 0 : 30;
        return {
          Id: q.Id,
          Timestamps: Array.from({ length: n }, (_, i) => new Date(NOW - (i + 1) * 60_000)),
          Values: Array(n).fill(fill ? -1 : 0),
          StatusCode: 'Complete',
        };
      }),
    $metadata: {},
  };
}

/** DescribeEndpointConfig's answer with these two variants' types and, if given, a publishing period. */
const endpointConfigOf = (types: [string, string], seconds?: number): any => ({
  EndpointConfigName: 'rec-config-1',
  EndpointConfigArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint-config/rec-config-1',
  CreationTime: new Date(NOW - 86_400_000),
  ProductionVariants: [
    { VariantName: 'Primary', ModelName: 'm1', InstanceType: types[0], InitialInstanceCount: 2 },
    { VariantName: 'Fallback', ModelName: 'm2', InstanceType: types[1], InitialInstanceCount: 1 },
  ],
  ...(seconds ? { MetricsConfig: { EnableEnhancedMetrics: true, MetricPublishFrequencyInSeconds: seconds } } : {}),
});

/** A healthy account: the recommender on g4dn.2xlarge with 10-s enhanced metrics, as deployed by the construct. */
function healthy(
  opts: {
    tenSecondPoints?: boolean;
    gpuDims?: string[][];
    alarms?: MetricAlarm[];
    composites?: CompositeAlarm[];
    subscriptions?: string[];
    /** SageMaker's memory data: its newest sample (default NOW − 30 s: its interval ended 20 s ago). */
    memoryUntil?: number;
    /** false: no GPUMemoryUtilization point. */
    gpuPoints?: boolean;
    /** The container guard's metrics: every `every` s (10, or 60 for 1-minute data) up to `until`, in `namespace`; false: none. */
    guard?: false | { every?: number; until?: number; namespace?: string };
    /** Seconds after its timestamp a point becomes readable (CloudWatchFake's delay). */
    readableAfterS?: number;
    /** Whether CloudWatch's FILL gives points over a series with no point at all (default: it does). */
    fillOfEmpty?: boolean;
  } = {},
): CloudWatchFake {
  sm.on(DescribeEndpointCommand).resolves(describeEndpoint());
  sm.on(DescribeEndpointConfigCommand).resolves({
    EndpointConfigName: 'rec-config-1',
    EndpointConfigArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint-config/rec-config-1',
    CreationTime: new Date(NOW - 86_400_000),
    ProductionVariants: [
      { VariantName: 'Primary', ModelName: 'm1', InstanceType: 'ml.g4dn.2xlarge', InitialInstanceCount: 2 },
      { VariantName: 'Fallback', ModelName: 'm2', InstanceType: 'ml.g4dn.2xlarge', InitialInstanceCount: 1 },
    ],
    MetricsConfig: { EnableEnhancedMetrics: true, MetricPublishFrequencyInSeconds: 10 },
    DataCaptureConfig: {
      EnableCapture: true,
      InitialSamplingPercentage: 1,
      DestinationS3Uri: 's3://rec-capture/datacapture',
      CaptureOptions: [{ CaptureMode: 'Input' }, { CaptureMode: 'Output' }],
    },
  });
  // CloudWatch as SageMaker fills it: memory every 10 s (or every minute), invocations per minute, the breaker function's runs.
  const fake = new CloudWatchFake(opts.readableAfterS ?? 0);
  // 1-minute data: points at the minute, the newest a minute and a half old (its minute ended 30 s ago).
  const minutely = opts.tenSecondPoints === false;
  const memoryFrom = minutely ? Math.floor((NOW - 20 * 60_000) / 60_000) * 60_000 : NOW - 20 * 60_000;
  for (let t = memoryFrom; t <= (opts.memoryUntil ?? (minutely ? NOW - 90_000 : NOW - 30_000)); t += minutely ? 60_000 : 10_000) {
    fake.put('/aws/sagemaker/Endpoints', 'MemoryUtilization', DIMS, t, 40);
    if (opts.gpuPoints !== false) fake.put('/aws/sagemaker/Endpoints', 'GPUMemoryUtilization', DIMS, t, 55);
  }
  // The container guard's statistic sets (runtime helper GuardMetricsPublisher), one PutMetricData every 10 s.
  if (opts.guard !== false) {
    const g = opts.guard ?? {};
    for (let t = Math.floor((NOW - 20 * 60_000) / 60_000) * 60_000; t <= (g.until ?? NOW - 30_000); t += (g.every ?? 10) * 1000) {
      const ns = g.namespace ?? 'ResilientEndpoint/Application';
      fake.put(ns, 'GuardPressure', DIMS, t, 62).put(ns, 'GuardMemoryRefusals', DIMS, t, 0).put(ns, 'DeliberateClientErrors', DIMS, t, 1);
    }
  }
  const lastMinute = Math.floor(NOW / 60_000) * 60_000 - 60_000;
  fake.putMinutes('AWS/SageMaker', 'Invocations', DIMS, lastMinute, Array(60).fill(6000));
  fake.putMinutes('AWS/Lambda', 'Invocations', { FunctionName: 'Rec-CircuitBreakerFn-1A2B3C' }, lastMinute, Array(10).fill(1));
  fake.putMinutes('AWS/Lambda', 'Errors', { FunctionName: 'Rec-CircuitBreakerFn-1A2B3C' }, lastMinute, Array(10).fill(0));
  // The drift function's runs (bin/ops/drift-check.ts): the daily KL run 3 hours ago, the weekly one 2 days ago.
  fake.put('ResilientEndpoint/Drift', 'DriftRecords', { EndpointName: EP, Distance: 'kl' }, NOW - 3 * 3_600_000, 1200);
  fake.put('ResilientEndpoint/Drift', 'DriftRecords', { EndpointName: EP, Distance: 'wasserstein' }, NOW - 48 * 3_600_000, 8400);
  cw.on(ListMetricsCommand, { Namespace: 'ResilientEndpoint/Drift' }).resolves({
    Metrics: [{ Namespace: 'ResilientEndpoint/Drift', MetricName: 'DriftRecords', Dimensions: [{ Name: 'EndpointName', Value: EP }] }],
  });
  cw.on(GetMetricDataCommand).callsFake(input =>
    input.MetricDataQueries?.some((q: { Expression?: string }) => q.Expression)
      ? expressionAnswer(input, opts.fillOfEmpty ?? true)
      : fake.getMetricData(input, NOW),
  );
  const variantLevel = [
    { Name: 'EndpointName', Value: EP },
    { Name: 'VariantName', Value: 'Primary' },
  ];
  const fallbackLevel = [
    { Name: 'EndpointName', Value: EP },
    { Name: 'VariantName', Value: 'Fallback' },
  ];
  cw.on(ListMetricsCommand, { MetricName: 'MemoryUtilization' }).resolves({
    Metrics: [variantLevel, fallbackLevel].map(Dimensions => ({
      Namespace: '/aws/sagemaker/Endpoints',
      MetricName: 'MemoryUtilization',
      Dimensions,
    })),
  });
  cw.on(ListMetricsCommand, { MetricName: 'GPUUtilization' }).resolves({
    Metrics: [variantLevel, fallbackLevel].map(Dimensions => ({ Namespace: '/aws/sagemaker/Endpoints', MetricName: 'GPUUtilization', Dimensions })),
  });
  const gpuSets = opts.gpuDims ?? [
    ['EndpointName', 'VariantName'],
    ['AcceleratorId', 'EndpointName', 'InstanceId', 'VariantName'],
  ];
  cw.on(ListMetricsCommand, { MetricName: 'GPUMemoryUtilization' }).resolves({
    Metrics: [
      ...gpuSets.map(set => ({
        Namespace: '/aws/sagemaker/Endpoints',
        MetricName: 'GPUMemoryUtilization',
        Dimensions: set.map(Name => ({ Name, Value: Name === 'EndpointName' ? EP : Name === 'VariantName' ? 'Primary' : 'x' })),
      })),
      { Namespace: '/aws/sagemaker/Endpoints', MetricName: 'GPUMemoryUtilization', Dimensions: fallbackLevel },
    ],
  });
  cw.on(DescribeAlarmsCommand).resolves({
    MetricAlarms: opts.alarms ?? DEPLOYED.metric,
    CompositeAlarms: opts.composites ?? DEPLOYED.composite,
  });
  sns.on(ListSubscriptionsByTopicCommand).resolves({
    Subscriptions: (opts.subscriptions ?? ['arn:aws:sns:us-east-1:123456789012:rec-alarms:0b3f']).map(SubscriptionArn => ({
      SubscriptionArn,
      Protocol: 'email',
      TopicArn: TOPIC,
    })),
  });
  lambda.on(ListFunctionsCommand).resolves({
    Functions: [
      { FunctionName: 'Other', FunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:Other', Environment: { Variables: { FOO: 'bar' } } },
      { FunctionName: 'Rec-CircuitBreakerFn-1A2B3C', FunctionArn: FN_ARN, Environment: { Variables: ENV } },
    ],
  });
  ev.on(ListRuleNamesByTargetCommand).resolves({ RuleNames: ['Rec-Schedule', 'Rec-Alarms', 'Rec-EndpointEvents'] });
  ev.on(DescribeRuleCommand).resolves({ State: 'ENABLED' });
  const state = { state: 'CLOSED' as const, since: NOW - 3_600_000, share: 0, entryShare: 0, step: 0 };
  ddb.on(GetItemCommand).resolves({ Item: { pk: { S: 'breaker' }, version: { N: '12' }, state: { S: serializeState(state, []) } } });
  ssm.on(GetParameterCommand).resolves({ Parameter: { Name: '/rec/level', Value: serializeState(state, []) } });
  ssm.on(GetServiceSettingCommand).resolves({ ServiceSetting: { SettingId: '/ssm/parameter-store/high-throughput-enabled', SettingValue: 'false' } });
  aas.on(DescribeScalableTargetsCommand).resolves({
    ScalableTargets: ['Primary', 'Fallback'].map((v, i) => ({
      ServiceNamespace: 'sagemaker',
      ResourceId: `endpoint/${EP}/variant/${v}`,
      ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
      MinCapacity: i === 0 ? 2 : 1,
      MaxCapacity: 4,
      RoleARN:
        'arn:aws:iam::123456789012:role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint',
      CreationTime: new Date(NOW - 86_400_000),
      ScalableTargetARN: `arn:aws:application-autoscaling:us-east-1:123456789012:scalable-target/0ec${i}`,
    })),
  });
  aas.on(ListTagsForResourceCommand).resolves({ Tags: { [BREAKER_TAG]: 'c8a1b2' } });
  s3.on(ListObjectsV2Command).resolves({ KeyCount: 1, Contents: [{ Key: 'datacapture/rec/Primary/2026/12/01/12/x.jsonl' }] });
  // The drift run's status (bin/ops/doctor-drift.ts; its cases in test/ops-doctor-drift.test.ts).
  const status = { format: 1, endpointName: EP, modelVersion: 'm', distance: 'kl', at: new Date(NOW - 9 * 3_600_000).toISOString(), records: 1200 };
  const features = {
    RequestBytes: {
      source: 'learned',
      from: `s3://b/drift-baselines/${EP}/0123456789abcdef.json`,
      createdAt: new Date(NOW - 3_600_000).toISOString(),
    },
  };
  s3.on(GetObjectCommand).resolves({ Body: { transformToString: async () => JSON.stringify({ ...status, features }) } as any });
  return fake;
}

const byId = async () => {
  const r = await doctor(clients, EP, NOW);
  return {
    r,
    c: Object.fromEntries(
      r.checks.map(x => [`${x.id}${r.checks.filter(y => y.id === x.id).length > 1 ? `:${r.checks.filter(y => y.id === x.id).indexOf(x)}` : ''}`, x]),
    ),
  };
};

beforeEach(() => {
  for (const m of [sm, cw, sns, lambda, ddb, ssm, aas, ev, s3]) m.reset();
});

test('a healthy deployment: every check passes, nothing fails, exit code 0', async () => {
  healthy();
  const { r } = await byId();
  // Traffic never stopped in the last 3 hours (and the fallback had none): GPU memory at rest cannot be judged.
  expect(r.checks.filter(x => x.result !== 'PASS').map(x => `${x.id} ${x.result}`)).toEqual(['gpu-memory-held SKIP', 'gpu-memory-held SKIP']);
  expect(r.checks.map(x => x.id)).toEqual([
    'endpoint',
    'breaker-function',
    'metrics-config',
    'data-capture',
    'ten-second-data',
    'guard-metrics',
    'variant-series',
    'alarms',
    'alarm-subscribers',
    'breaker-runs',
    'breaker-rules',
    'breaker-state',
    'level-parameter',
    'weights',
    'scalable-targets',
    'scalable-targets',
    'capture-objects',
    'parameter-store-throughput',
    'drift-runs-kl',
    'drift-runs-wasserstein',
    'utilisation-metrics',
    'utilisation-metrics',
    'fill-empty-series',
    'rollback-alarms',
    'gpu-memory-held',
    'gpu-memory-held',
    'drift-baseline',
  ]);
  expect(r.ok).toBe(true);
  expect(r.checks.find(x => x.id === 'ten-second-data')!.saw).toMatch(/MemoryUtilization: \d+ points, 10 s apart/);
  expect(r.checks.find(x => x.id === 'breaker-function')!.saw).toBe('Rec-CircuitBreakerFn-1A2B3C');
});

test('a 10-second query answered with 1-minute points: WARN with what it means for detection, not FAIL', async () => {
  healthy({ tenSecondPoints: false });
  const { r } = await byId();
  const x = r.checks.find(c => c.id === 'ten-second-data')!;
  expect(x.result).toBe('WARN');
  expect(x.saw).toMatch(/a 10-second query returned points a minute apart/);
  expect(x.fix).toMatch(/1–2 minutes/);
  expect(r.ok).toBe(true);
});

test('a topic whose only subscription is pending: FAIL (an alarm reaches no one), exit code 1', async () => {
  healthy({ subscriptions: ['PendingConfirmation'] });
  const x = (await byId()).r.checks.find(c => c.id === 'alarm-subscribers')!;
  expect(x).toMatchObject({ result: 'FAIL', saw: 'rec-alarms: 1 subscription(s), none confirmed: an alarm reaches no one' });
  expect(x.fix).toMatch(/confirm/);
  const out: string[] = [];
  expect(await doctorMain(['--endpoint', EP], clients, { log: s => out.push(s), error: s => out.push(s) })).toBe(1);
  expect(out.join('\n')).toMatch(/\| alarm-subscribers \| FAIL \|/);
});

test('an alarm stuck in INSUFFICIENT_DATA past its evaluation window is named; one within it is not', async () => {
  healthy({
    alarms: [
      alarm(`${EP}-Primary-Stage-inference-MemoryUtilization`, { StateValue: 'INSUFFICIENT_DATA', StateUpdatedTimestamp: new Date(NOW - 3_600_000) }),
      alarm(`${EP}-Primary-MemoryUtilization`, { StateValue: 'INSUFFICIENT_DATA', StateUpdatedTimestamp: new Date(NOW - 120_000) }),
    ],
  });
  const x = (await byId()).r.checks.find(c => c.id === 'alarms')!;
  expect(x.result).toBe('WARN');
  expect(x.saw).toMatch(/1 in INSUFFICIENT_DATA past their evaluation window: rec-Primary-Stage-inference-MemoryUtilization$/);
});

test("no per-GPU series with the breaker's dimension set: WARN naming the sets seen", async () => {
  healthy({
    gpuDims: [
      ['EndpointName', 'VariantName'],
      ['EndpointName', 'InstanceId', 'VariantName'],
    ],
  });
  lambda.on(ListFunctionsCommand).resolves({
    Functions: [
      { FunctionName: 'Rec-CircuitBreakerFn-1A2B3C', FunctionArn: FN_ARN, Environment: { Variables: { ...ENV, PER_GPU_METRICS: 'true' } } },
    ],
  });
  const x = (await byId()).r.checks.find(c => c.id === 'per-gpu-series')!;
  expect(x.result).toBe('WARN');
  expect(x.saw).toBe(
    'GPUMemoryUtilization dimension sets: {EndpointName, VariantName}, {EndpointName, InstanceId, VariantName}; none is {AcceleratorId, EndpointName, InstanceId, VariantName}',
  );
});

test('a throttled call is a WARN for that check; the others still run', async () => {
  healthy();
  cw.on(DescribeAlarmsCommand).rejects(
    new CloudWatchServiceException({ name: 'Throttling', $fault: 'client', $metadata: { httpStatusCode: 400 }, message: 'Rate exceeded' }),
  );
  const { r } = await byId();
  expect(r.checks.find(c => c.id === 'alarms')).toMatchObject({
    result: 'WARN',
    saw: expect.stringMatching(/AWS throttled the call \(Throttling\)/),
  });
  expect(r.checks.find(c => c.id === 'breaker-state')!.result).toBe('PASS');
  expect(r.ok).toBe(true);
});

test('no such endpoint: one FAIL and nothing else is checked; --json prints the report', async () => {
  sm.on(DescribeEndpointCommand).rejects(
    new SageMakerServiceException({
      name: 'ValidationException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
      message: 'Could not find endpoint "nope".',
    }),
  );
  const out: string[] = [];
  expect(await doctorMain(['--endpoint', 'nope', '--json'], clients, { log: s => out.push(s), error: () => undefined })).toBe(1);
  const r = JSON.parse(out.join(''));
  expect(r.checks).toEqual([{ id: 'endpoint', result: 'FAIL', saw: 'no endpoint named nope in this Region', fix: 'check --endpoint and --region' }]);
});

test('a drill in progress and a disabled rule are reported', async () => {
  healthy();
  const drilled = {
    state: 'DEGRADED' as const,
    since: NOW - 60_000,
    share: 0.5,
    entryShare: 0.5,
    step: 0,
    drill: { to: 'DEGRADED' as const, until: NOW + 240_000, id: 'drill-x' },
  };
  ddb.on(GetItemCommand).resolves({ Item: { pk: { S: 'breaker' }, version: { N: '13' }, state: { S: serializeState(drilled, []) } } });
  ev.on(DescribeRuleCommand, { Name: 'Rec-Schedule' }).resolves({ State: 'DISABLED' });
  const { r } = await byId();
  expect(r.checks.find(c => c.id === 'breaker-state')).toMatchObject({ result: 'WARN', saw: expect.stringMatching(/drill drill-x holds it until/) });
  expect(r.checks.find(c => c.id === 'breaker-rules')).toMatchObject({ result: 'FAIL', saw: 'disabled: Rec-Schedule (DISABLED)' });
});

test('usage errors exit 2 with the usage; --help exits 0', async () => {
  const out: string[] = [];
  const o = { log: (s: string) => out.push(s), error: (s: string) => out.push(s) };
  expect(await doctorMain([], clients, o)).toBe(2);
  expect(await doctorMain(['--endpoint'], clients, o)).toBe(2);
  expect(await doctorMain(['--help'], clients, o)).toBe(0);
  expect(await doctorMain(['--endpoint', EP, '--timeout', '2s'], clients, o)).toBe(2);
  expect(out.join('\n')).toMatch(/--endpoint NAME is required[\s\S]*usage: sagemaker-resilient-endpoint doctor/);
  expect(out.join('\n')).toMatch(/--timeout: got 2s; allowed: 5s to 10m/);
  expect(out.join('\n')).toMatch(/Time bound: ends within --timeout \(60 s by default\) whatever the network does/);
});

test('spacing comes from the timestamps, in any order', () => {
  expect(spacingSeconds([new Date(60_000), new Date(0), new Date(120_000)])).toBe(60);
  expect(spacingSeconds([new Date(0)])).toBeUndefined();
});

test('the table has a row per check and the counts', async () => {
  healthy({ subscriptions: [] });
  const text = formatReport(await doctor(clients, EP, NOW));
  expect(text).toMatch(/^doctor: rec at 2026-12-01T12:00:30.000Z/);
  expect(text).toMatch(/\| alarm-subscribers \| FAIL \| rec-alarms: no subscription: an alarm reaches no one \| set monitoring.notify/);
  expect(text).toMatch(/24 PASS, 0 WARN, 1 FAIL, 2 SKIP: FAILED$/);
});

test('when AWS cannot be reached at all the report fails (a pipeline must not read it as healthy)', async () => {
  sm.on(DescribeEndpointCommand).rejects(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:443'), { name: 'Error' }));
  const r = await doctor(clients, EP, NOW);
  expect(r.checks).toEqual([
    expect.objectContaining({ id: 'endpoint', result: 'FAIL', saw: 'could not check: Error: connect ECONNREFUSED 127.0.0.1:443' }),
  ]);
  expect(r.ok).toBe(false);
});

describe('a doctor that tells the truth (real-account.md items 45, 46)', () => {
  test("the construct's default deployment: only the composite alarm pages, and doctor reads who it pages from it", async () => {
    // The fixture is the synthesized template's: no metric alarm carries an action, the composite carries the topic.
    expect(DEPLOYED.metric.length).toBeGreaterThan(5);
    expect(DEPLOYED.metric.flatMap(a => [...a.AlarmActions!, ...a.OKActions!])).toEqual([]);
    expect(DEPLOYED.composite).toEqual([expect.objectContaining({ AlarmName: `${EP}-unhealthy`, AlarmActions: [TOPIC], OKActions: [TOPIC] })]);
    healthy();
    const { r } = await byId();
    expect(r.checks.find(c => c.id === 'alarm-subscribers')).toMatchObject({ result: 'PASS', saw: 'rec-alarms: 1 confirmed subscription(s)' });
    expect(r.checks.find(c => c.id === 'alarms')!.saw).toMatch(new RegExp(`^${DEPLOYED.metric.length} metric \\+ 1 composite alarms, none stuck`));
    expect(r.ok).toBe(true);
  });

  test('no composite alarm returned (DescribeAlarms allowed on alarm ARNs only): says that composite alarms need DescribeAlarms on *', async () => {
    healthy({ composites: [] });
    const { r } = await byId();
    expect(r.checks.find(c => c.id === 'alarms')).toMatchObject({
      result: 'WARN',
      fix: expect.stringContaining('CloudWatch returns composite alarms only to callers allowed cloudwatch:DescribeAlarms on "*"'),
    });
    expect(r.checks.find(c => c.id === 'alarm-subscribers')).toMatchObject({
      result: 'FAIL',
      saw: `no alarm notifies an SNS topic (${DEPLOYED.metric.length} metric, 0 composite alarms read)`,
      fix: expect.stringMatching(/^CloudWatch returns composite alarms only to callers allowed cloudwatch:DescribeAlarms on "\*"/),
    });
  });

  test("SNS's AuthorizationErrorException is no permission (SKIP), not a failure of the deployment", async () => {
    healthy();
    sns.on(ListSubscriptionsByTopicCommand).rejects(
      new AuthorizationErrorException({
        message: 'User: arn:aws:iam::123456789012:user/dev is not authorized to perform: SNS:ListSubscriptionsByTopic on resource: ' + TOPIC,
        $metadata: { httpStatusCode: 403 },
      }),
    );
    const { r } = await byId();
    expect(r.checks.find(c => c.id === 'alarm-subscribers')).toMatchObject({
      result: 'SKIP',
      saw: expect.stringMatching(/^no permission: User: .* is not authorized to perform: SNS:ListSubscriptionsByTopic/),
    });
    expect(r.ok).toBe(true);
  });

  test('capture is read from the live endpoint: a stopped capture FAILs with the fix; the live sampling percentage is the one used', async () => {
    healthy();
    sm.on(DescribeEndpointCommand).resolves(
      describeEndpoint({
        DataCaptureConfig: {
          EnableCapture: true,
          CaptureStatus: 'Stopped',
          CurrentSamplingPercentage: 1,
          DestinationS3Uri: 's3://rec-capture/datacapture',
        },
      }),
    );
    const { r } = await byId();
    expect(r.checks.find(c => c.id === 'data-capture')).toMatchObject({
      result: 'FAIL',
      saw: 'configured (1 % to s3://rec-capture/datacapture) but CaptureStatus is Stopped: no request is captured',
      fix: expect.stringMatching(/s3:PutObject .* start capture again/),
    });
    expect(r.checks.find(c => c.id === 'capture-objects')).toMatchObject({ result: 'SKIP', saw: 'data capture stopped (see data-capture)' });
    expect(r.ok).toBe(false);
    // Live 0.01 % of 6,000/min for an hour: ~36 to capture though the config says 1 % (~3,600): still expected, and found.
    sm.on(DescribeEndpointCommand).resolves(
      describeEndpoint({
        DataCaptureConfig: {
          EnableCapture: true,
          CaptureStatus: 'Started',
          CurrentSamplingPercentage: 0,
          DestinationS3Uri: 's3://rec-capture/datacapture',
        },
      }),
    );
    const again = (await byId()).r;
    expect(again.checks.find(c => c.id === 'data-capture')).toMatchObject({
      result: 'PASS',
      saw: 'Started: 0 % of requests to s3://rec-capture/datacapture (live endpoint)',
    });
    expect(again.checks.find(c => c.id === 'capture-objects')!.saw).toMatch(/× 0 %: too few to expect a captured request/);
  });

  test('MetricsConfig is read from the live endpoint: 1-minute publishing there is a WARN though the config says 10 s', async () => {
    healthy();
    sm.on(DescribeEndpointCommand).resolves(
      describeEndpoint({ MetricsConfig: { EnableEnhancedMetrics: false, MetricPublishFrequencyInSeconds: 60 } }),
    );
    const x = (await byId()).r.checks.find(c => c.id === 'metrics-config')!;
    expect(x).toMatchObject({ result: 'WARN', saw: 'MetricsConfig (live endpoint): enhanced metrics off, every 60 s; the breaker expects 10 s' });
  });

  test('the Region: --region, else AWS_REGION, else AWS_DEFAULT_REGION (what the AWS CLI and boto3 read), else the profile', () => {
    expect(resolveRegion('eu-west-1', { AWS_REGION: 'us-east-1', AWS_DEFAULT_REGION: 'us-west-2' })).toBe('eu-west-1');
    expect(resolveRegion(undefined, { AWS_REGION: 'us-east-1', AWS_DEFAULT_REGION: 'us-west-2' })).toBe('us-east-1');
    expect(resolveRegion(undefined, { AWS_DEFAULT_REGION: 'us-west-2' })).toBe('us-west-2');
    expect(resolveRegion(undefined, {})).toBeUndefined();
  });

  test('every error names its fix: "Region is missing" says --region; missing credentials, timeouts, unknown errors say what to do', async () => {
    sm.on(DescribeEndpointCommand).rejects(new Error('Region is missing'));
    const r = await doctor(clients, EP, NOW);
    expect(r.checks).toEqual([
      expect.objectContaining({
        id: 'endpoint',
        result: 'FAIL',
        fix: 'pass --region R (or set AWS_REGION or AWS_DEFAULT_REGION, or region in your AWS profile)',
      }),
    ]);
    expect(fixFor(Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' }))).toMatch(
      /aws configure/,
    );
    expect(fixFor(Object.assign(new Error('a request has exceeded the configured 10000 ms requestTimeout'), { name: 'TimeoutError' }))).toMatch(
      /network, a proxy .* --region/,
    );
    expect(fixFor(Object.assign(new Error('getaddrinfo ENOTFOUND api.sagemaker.xx-nowhere-1.amazonaws.com'), { code: 'ENOTFOUND' }))).toMatch(
      /could not be reached/,
    );
    expect(fixFor(Object.assign(new Error('The security token included in the request is expired'), { name: 'ExpiredTokenException' }))).toMatch(
      /expired/,
    );
    expect(fixFor(Object.assign(new Error('x'), { name: 'UnrecognizedClientException' }))).toMatch(/not valid/);
    expect(fixFor(Object.assign(new Error('x'), { name: 'Weird' }))).toMatch(/^Weird is not one doctor knows: .*--region/);
    expect(r.checks.every(c => !/see the error/.test(c.fix ?? ''))).toBe(true);
  });
});

/**
 * CloudWatch's answers through `fake`, shaped as AWS may give them: in pages of `pageSize` points per query
 * (StatusCode PartialData and a NextToken until the last page; the next page continues each series), and
 * with the `nothingBelowAMinute` metrics answering a query whose Period is under 60 s with no point — the
 * second shape a 10-s query of standard-resolution data may take (the reference says only that sub-minute
 * periods are for high-resolution metrics).
 */
function shaped(fake: CloudWatchFake, o: { pageSize?: number; nothingBelowAMinute?: string[] } = {}): void {
  cw.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => {
    const full = fake.getMetricData({ ...input, NextToken: undefined }, NOW);
    const page = Number(input.NextToken ?? 0);
    const size = o.pageSize ?? 100_800;
    let more = false;
    const results = full.MetricDataResults!.map((r, i) => {
      const stat = input.MetricDataQueries![i].MetricStat!;
      const nothing = stat.Period! < 60 && (o.nothingBelowAMinute ?? []).includes(stat.Metric!.MetricName!);
      const ts = nothing ? [] : r.Timestamps!;
      const vs = nothing ? [] : r.Values!;
      const rest = ts.length > (page + 1) * size;
      more ||= rest;
      return {
        ...r,
        Timestamps: ts.slice(page * size, (page + 1) * size),
        Values: vs.slice(page * size, (page + 1) * size),
        StatusCode: rest ? 'PartialData' : 'Complete',
      };
    });
    return { MetricDataResults: results, ...(more ? { NextToken: String(page + 1) } : {}), Messages: [], $metadata: {} };
  });
}

const GUARD = ['GuardPressure', 'GuardMemoryRefusals', 'DeliberateClientErrors'];
const WHERE = 'ResilientEndpoint/Application {EndpointName=rec, VariantName=Primary}';
const check = async (id: string) => (await byId()).r.checks.find(c => c.id === id)!;

describe("what CloudWatch stores: the container guard's metrics and SageMaker's 10-s data (issue 28)", () => {
  test('guard metrics kept at 10 s: PASS, the delay measured (newest interval ended 20 s ago) and the simulator flag named', async () => {
    healthy();
    const x = await check('guard-metrics');
    expect(x).toMatchObject({
      result: 'PASS',
      saw: `${WHERE}: GuardPressure, GuardMemoryRefusals, DeliberateClientErrors: 88 points, 10 s apart, newest 20 s late: 10-s data, within the simulator's --guard-metric-delay 20 s (one reading)`,
      measured: {
        GuardPressure: { resolutionS: 10, delayS: 20 },
        GuardMemoryRefusals: { resolutionS: 10, delayS: 20 },
        DeliberateClientErrors: { resolutionS: 10, delayS: 20 },
      },
    });
    // The query: the breaker's namespace, exactly the container's dimensions, at 10 s and at 60 s, over 15 minutes.
    const q = cw
      .commandCalls(GetMetricDataCommand)
      .map(c => c.args[0].input)
      .find(i => i.MetricDataQueries!.some(m => m.MetricStat!.Metric!.MetricName === 'GuardPressure'))!;
    expect(q.MetricDataQueries!.map(m => [m.MetricStat!.Metric!.MetricName, m.MetricStat!.Period, m.MetricStat!.Stat])).toEqual([
      ['GuardPressure', 10, 'Maximum'],
      ['GuardPressure', 60, 'Maximum'],
      ['GuardMemoryRefusals', 10, 'Sum'],
      ['GuardMemoryRefusals', 60, 'Sum'],
      ['DeliberateClientErrors', 10, 'Sum'],
      ['DeliberateClientErrors', 60, 'Sum'],
    ]);
    expect(q.MetricDataQueries![0].MetricStat!.Metric).toEqual({
      Namespace: 'ResilientEndpoint/Application',
      MetricName: 'GuardPressure',
      Dimensions: [
        { Name: 'EndpointName', Value: 'rec' },
        { Name: 'VariantName', Value: 'Primary' },
      ],
    });
    expect((q.EndTime as Date).getTime() - (q.StartTime as Date).getTime()).toBe(15 * 60_000);
  });

  test("the namespace is the breaker's (its APPLICATION_NAMESPACE), not the default", async () => {
    healthy({ guard: { namespace: 'Rec/App' } });
    lambda.on(ListFunctionsCommand).resolves({
      Functions: [
        {
          FunctionName: 'Rec-CircuitBreakerFn-1A2B3C',
          FunctionArn: FN_ARN,
          Environment: { Variables: { ...ENV, APPLICATION_NAMESPACE: 'Rec/App' } },
        },
      ],
    });
    const x = await check('guard-metrics');
    expect(x.result).toBe('PASS');
    expect(x.saw).toMatch(
      /^Rec\/App \{EndpointName=rec, VariantName=Primary\}: GuardPressure, GuardMemoryRefusals, DeliberateClientErrors: 88 points/,
    );
  });

  test('guard metrics only at 1 minute (a 10-s query returns points a minute apart): WARN naming --no-guard-ten-second-data', async () => {
    healthy({ guard: { every: 60, until: NOW - 90_000 } });
    const x = await check('guard-metrics');
    expect(x.result).toBe('WARN');
    expect(x.saw).toMatch(
      /DeliberateClientErrors: 14 points, 60 s apart, newest 30 s late: a 10-second query returned points a minute apart: CloudWatch keeps this data at 1 minute$/,
    );
    expect(x.fix).toMatch(
      /^the breaker's guard path works on 1-minute data .*StorageResolution 1.*; the simulator models it with --no-guard-ten-second-data \(and --metric-delay, 90 s by default\)$/,
    );
    expect(x.measured!.GuardPressure).toEqual({ resolutionS: 60, delayS: 30 });
  });

  test('guard metrics only at 1 minute (a 10-s query returns nothing, a 1-minute one returns points): the same WARN', async () => {
    const fake = healthy({ guard: { every: 60, until: NOW - 90_000 } });
    shaped(fake, { nothingBelowAMinute: GUARD });
    const x = await check('guard-metrics');
    expect(x.result).toBe('WARN');
    expect(x.saw).toMatch(
      /DeliberateClientErrors: 0 points, a 1-minute query: 15 points, newest 30 s late: a 10-second query returned nothing, a 1-minute query returned points: CloudWatch keeps this data at 1 minute$/,
    );
    expect(x.fix).toMatch(/--no-guard-ten-second-data/);
    expect(x.measured!.GuardPressure).toEqual({ resolutionS: 60, delayS: 30 });
  });

  test('no guard point at all and no such series anywhere: WARN, the container publishes nothing, with the likely causes', async () => {
    healthy({ guard: false });
    cw.on(ListMetricsCommand, { MetricName: 'GuardPressure' }).resolves({ Metrics: [] });
    const { r } = await byId();
    const x = r.checks.find(c => c.id === 'guard-metrics')!;
    expect(x).toMatchObject({
      result: 'WARN',
      saw: `no GuardPressure, GuardMemoryRefusals, DeliberateClientErrors point in ${WHERE} in the last 15 minutes: the container publishes nothing the breaker reads`,
    });
    expect(x.fix).toMatch(
      /no network route to CloudWatch .*no cloudwatch:PutMetricData for ResilientEndpoint\/Application on the endpoint role, a namespace mismatch .*, or no guard running .*no traffic yet/,
    );
    expect(r.ok).toBe(true);
    // Looked for in every namespace: no Namespace in the request.
    expect(cw.commandCalls(ListMetricsCommand, { MetricName: 'GuardPressure' })[0].args[0].input).toEqual({
      MetricName: 'GuardPressure',
      Dimensions: [{ Name: 'EndpointName', Value: 'rec' }],
      NextToken: undefined,
    });
  });

  test('no guard point where the breaker reads, the series in another namespace: WARN naming the namespace mismatch', async () => {
    healthy({ guard: { namespace: 'Rec/App' } });
    cw.on(ListMetricsCommand, { MetricName: 'GuardPressure' }).resolves({ Metrics: [guardSeries('Rec/App')] });
    const x = await check('guard-metrics');
    expect(x.result).toBe('WARN');
    expect(x.saw).toMatch(/publishes nothing the breaker reads; GuardPressure of this endpoint exists in Rec\/App$/);
    expect(x.fix).toMatch(/^namespace mismatch: the container publishes in Rec\/App .* the breaker reads ResilientEndpoint\/Application/);
    // Without a breaker doctor looks in the default namespace, and says so.
    lambda.on(ListFunctionsCommand).resolves({ Functions: [] });
    const alone = await check('guard-metrics');
    expect(alone.fix).toMatch(/and doctor looked in \(no breaker found: the default\) ResilientEndpoint\/Application: deploy both/);
  });

  test('no guard point for 15 minutes though the series exists: WARN, publishing stopped, see the log group', async () => {
    healthy({ guard: false });
    cw.on(ListMetricsCommand, { MetricName: 'GuardPressure' }).resolves({ Metrics: [guardSeries('ResilientEndpoint/Application')] });
    const x = await check('guard-metrics');
    expect(x.result).toBe('WARN');
    expect(x.saw).toMatch(/the series exists \(\{EndpointName=rec, VariantName=Primary\}: data in the last two weeks\), so publishing stopped$/);
    expect(x.fix).toMatch(/\/aws\/sagemaker\/Endpoints\/rec for "publishing the guard's metrics failed"/);
  });

  test('a stale newest guard point (nothing for almost 5 minutes): WARN, publishing stopped', async () => {
    healthy({ guard: { until: NOW - 5 * 60_000 } });
    const x = await check('guard-metrics');
    expect(x.result).toBe('WARN');
    expect(x.saw).toMatch(
      /DeliberateClientErrors: 61 points, 10 s apart, newest 290 s late: 10-s data, but nothing newer for that long: publishing stopped$/,
    );
    expect(x.measured!.GuardPressure).toEqual({ resolutionS: 10, delayS: 290 });
    expect(290).toBeGreaterThan(STALE_AFTER_S.tenSecond);
  });

  test('data readable later than the simulator assumes: WARN with the figure and the flag to simulate it, for the guard and for SageMaker', async () => {
    healthy({ readableAfterS: 40 });
    const g = await check('guard-metrics');
    expect(g.result).toBe('WARN');
    expect(g.saw).toMatch(/newest 30 s late: 10-s data, later than the simulator's --guard-metric-delay 20 s assumes/);
    expect(g.fix).toBe('simulate with --guard-metric-delay 30 to see what the delay costs; run doctor again to confirm it');
    const m = await check('ten-second-data');
    expect(m.result).toBe('WARN');
    expect(m.fix).toBe('simulate with --metric-delay-10s 30 to see what the delay costs; run doctor again to confirm it');
    expect(m.measured).toEqual({ MemoryUtilization: { resolutionS: 10, delayS: 30 }, GPUMemoryUtilization: { resolutionS: 10, delayS: 30 } });
  });

  test('pages: PartialData with a NextToken is read to the end, newest-first timestamps, the delay from the newest point', async () => {
    const fake = healthy();
    shaped(fake, { pageSize: 30 });
    const x = await check('guard-metrics');
    expect(x.result).toBe('PASS');
    expect(x.saw).toMatch(
      /^ResilientEndpoint\/Application \{EndpointName=rec, VariantName=Primary\}: GuardPressure, GuardMemoryRefusals, DeliberateClientErrors: 88 points, 10 s apart, newest 20 s late:/,
    );
    const calls = cw
      .commandCalls(GetMetricDataCommand)
      .filter(c => c.args[0].input.MetricDataQueries![0].MetricStat!.Metric!.MetricName === 'GuardPressure');
    expect(calls.map(c => c.args[0].input.NextToken)).toEqual([undefined, '1', '2']);
    // As AWS answers by default (ScanBy TimestampDescending): the first page holds the newest points, newest first.
    const first = await calls[0].returnValue;
    expect(first.MetricDataResults![0].StatusCode).toBe('PartialData');
    expect(first.MetricDataResults![0].Timestamps![0].getTime()).toBe(NOW - 30_000);
    expect(first.MetricDataResults![0].Timestamps![1].getTime()).toBe(NOW - 40_000);
  });

  test("SageMaker's memory data: 10 s PASS with its delay and --metric-delay-10s; a stale newest point WARNs", async () => {
    healthy();
    const ok = await check('ten-second-data');
    expect(ok.result).toBe('PASS');
    expect(ok.saw).toBe(
      "MemoryUtilization, GPUMemoryUtilization: 88 points, 10 s apart, newest 20 s late: 10-s data, within the simulator's --metric-delay-10s 20 s (one reading)",
    );
    healthy({ memoryUntil: NOW - 10 * 60_000 });
    const stale = await check('ten-second-data');
    expect(stale.result).toBe('WARN');
    expect(stale.saw).toMatch(/newest 590 s late: 10-s data, but nothing newer for that long: publishing stopped$/);
  });

  test('a metric with no point beside one with 10-s points: the one with points judges (PASS), the other is named', async () => {
    healthy({ gpuPoints: false });
    const x = await check('ten-second-data');
    expect(x).toMatchObject({
      result: 'PASS',
      saw: "MemoryUtilization: 88 points, 10 s apart, newest 20 s late: 10-s data, within the simulator's --metric-delay-10s 20 s (one reading); GPUMemoryUtilization: 0 points: none in the last 15 minutes (the other metrics judge)",
    });
  });

  test("SageMaker's memory data at 1 minute, the 10-s query answered with nothing: WARN naming --no-ten-second-data", async () => {
    const fake = healthy({ tenSecondPoints: false });
    shaped(fake, { nothingBelowAMinute: ['MemoryUtilization', 'GPUMemoryUtilization'] });
    const x = await check('ten-second-data');
    expect(x.result).toBe('WARN');
    expect(x.saw).toMatch(
      /^MemoryUtilization, GPUMemoryUtilization: 0 points, a 1-minute query: 15 points, newest 30 s late: a 10-second query returned nothing, a 1-minute query returned points: CloudWatch keeps this data at 1 minute$/,
    );
    expect(x.fix).toMatch(/works on 1-minute data; it detects in 1–2 minutes .*; the simulator models it with --no-ten-second-data/);
    expect(x.measured!.MemoryUtilization.resolutionS).toBe(60);
  });

  test('one point only: too few to tell the spacing (WARN); both queries empty: none', () => {
    const one = readStored('GuardPressure', { t: [new Date(NOW - 30_000)], v: [1] }, { t: [new Date(NOW - 60_000)], v: [1] }, NOW);
    expect(one).toEqual({ metric: 'GuardPressure', points: 1, minutePoints: 1, spacingS: undefined, delayS: 20 });
    expect(readStored('GuardPressure', { t: [], v: [] }, undefined, NOW)).toMatchObject({ resolutionS: 'none', points: 0, minutePoints: 0 });
    expect(readStored('X', { t: [], v: [], status: 'Forbidden' }, { t: [], v: [], status: 'Complete' }, NOW).status).toBe('Forbidden');
    // Nothing at 10 s and a single 1-minute point: not enough to call it 1-minute data; the delay from that minute's end.
    expect(readStored('X', { t: [], v: [] }, { t: [new Date(NOW - 150_000)], v: [1] }, NOW)).toEqual({
      metric: 'X',
      points: 0,
      minutePoints: 1,
      spacingS: undefined,
      delayS: 90,
    });
    // One 10-s point beside several 1-minute ones: the 10-s query's spacing is unknown, so the resolution is not called.
    const minutes = [NOW - 90_000, NOW - 150_000, NOW - 210_000].map(x => new Date(x));
    expect(readStored('X', { t: [new Date(NOW - 30_000)], v: [1] }, { t: minutes, v: [1, 1, 1] }, NOW).resolutionS).toBeUndefined();
    // A point in the interval still running (published with the receipt time): 0 s late, not negative.
    const running = readStored('X', { t: [new Date(NOW - 10_000), new Date(NOW - 5_000)].reverse(), v: [1, 1] }, undefined, NOW);
    expect(running).toMatchObject({ resolutionS: 10, delayS: 0 });
  });

  test('1-minute guard data with nothing for over 5 minutes: WARN, 1-minute data and publishing stopped', async () => {
    healthy({ guard: { every: 60, until: NOW - 6 * 60_000 } });
    const x = await check('guard-metrics');
    expect(x.result).toBe('WARN');
    expect(x.saw).toMatch(
      /newest 330 s late: a 10-second query returned points a minute apart: CloudWatch keeps this data at 1 minute, and nothing newer for that long: publishing stopped$/,
    );
  });

  test('10-s guard data exactly 120 s late: later than assumed (WARN), not yet stopped; 130 s: stopped', async () => {
    healthy({ guard: { until: NOW - 130_000 } });
    const late = await check('guard-metrics');
    expect(late.measured!.GuardPressure.delayS).toBe(120);
    expect(late.saw).toMatch(/newest 120 s late: 10-s data, later than the simulator's --guard-metric-delay 20 s assumes/);
    healthy({ guard: { until: NOW - 140_000 } });
    const stopped = await check('guard-metrics');
    expect(stopped.saw).toMatch(/newest 130 s late: 10-s data, but nothing newer for that long: publishing stopped$/);
  });

  test('a CloudWatch that always has another page: read at most 10 pages, and the PartialData it ended on is said', async () => {
    const fake = healthy();
    cw.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => {
      const r = fake.getMetricData({ ...input, NextToken: undefined }, NOW);
      const guard = input.MetricDataQueries![0].MetricStat!.Metric!.Namespace === 'ResilientEndpoint/Application';
      if (!guard) return r;
      // Each page one point of each series (the newest first), and always a NextToken.
      const page = Number(input.NextToken ?? 0);
      return {
        MetricDataResults: r.MetricDataResults!.map(x => ({
          ...x,
          Timestamps: x.Timestamps!.slice(page, page + 1),
          Values: x.Values!.slice(page, page + 1),
          StatusCode: 'PartialData',
        })),
        NextToken: String(page + 1),
        $metadata: {},
      };
    });
    const x = await check('guard-metrics');
    const calls = cw
      .commandCalls(GetMetricDataCommand)
      .filter(c => c.args[0].input.MetricDataQueries![0].MetricStat!.Metric!.Namespace === 'ResilientEndpoint/Application');
    expect(calls).toHaveLength(10);
    expect(x.saw).toMatch(
      /GuardPressure, GuardMemoryRefusals, DeliberateClientErrors: 10 points, 10 s apart, newest 20 s late, CloudWatch answered PartialData: 10-s data/,
    );
  });

  test("the delays and flags named are the simulator's own", () => {
    expect(SIMULATOR_DELAYS.guard.seconds).toBe(DEFAULT_ASSUMPTIONS.guardMetricDelayS);
    expect(SIMULATOR_DELAYS.sageMaker.seconds).toBe(DEFAULT_ASSUMPTIONS.metricDelay10S);
    expect(SIMULATOR_DELAYS.minute.seconds).toBe(DEFAULT_ASSUMPTIONS.metricDelayS);
    expect(assumptionsFrom({ [SIMULATOR_DELAYS.guard.flag.slice(2)]: '33' })).toMatchObject({ guardMetricDelayS: 33 });
    expect(assumptionsFrom({ [SIMULATOR_DELAYS.sageMaker.flag.slice(2)]: '34' })).toMatchObject({ metricDelay10S: 34 });
    expect(assumptionsFrom({ [SIMULATOR_DELAYS.minute.flag.slice(2)]: '35' })).toMatchObject({ metricDelayS: 35 });
    expect(assumptionsFrom({ [SIMULATOR_DELAYS.guard.noTenSecond.slice(2)]: 'true' })).toMatchObject({ guardTenSecondData: false });
    expect(assumptionsFrom({ [SIMULATOR_DELAYS.sageMaker.noTenSecond.slice(2)]: 'true' })).toMatchObject({ tenSecondData: false });
  });

  /** The endpoint config as DescribeEndpointConfig returns it, with other instance types or MetricsConfig. */
  const endpointConfig = (types: [string, string], metricsConfig?: { EnableEnhancedMetrics: boolean; MetricPublishFrequencyInSeconds?: number }) => ({
    EndpointConfigName: 'rec-config-1',
    EndpointConfigArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint-config/rec-config-1',
    CreationTime: new Date(NOW - 86_400_000),
    ProductionVariants: [
      { VariantName: 'Primary', ModelName: 'm1', InstanceType: types[0] as any, InitialInstanceCount: 2 },
      { VariantName: 'Fallback', ModelName: 'm2', InstanceType: types[1] as any, InitialInstanceCount: 1 },
    ],
    ...(metricsConfig ? { MetricsConfig: metricsConfig } : {}),
  });
  /** GPUMemoryUtilization every 10 s from `from` to `until` (SageMaker's 10-s publishing). */
  const gpuPoints = (fake: CloudWatchFake, from: number, until: number) => {
    for (let t = from; t <= until; t += 10_000) fake.put('/aws/sagemaker/Endpoints', 'GPUMemoryUtilization', DIMS, t, 55);
  };

  test("SageMaker's data published every minute, or the endpoint config unread: nothing finer to look for (SKIP)", async () => {
    // No MetricsConfig: SageMaker publishes every 60 s (DescribeEndpointConfig MetricsConfig, MetricPublishFrequencyInSeconds).
    healthy();
    sm.on(DescribeEndpointCommand).resolves(describeEndpoint({ MetricsConfig: undefined }));
    sm.on(DescribeEndpointConfigCommand).resolves(endpointConfig(['ml.g4dn.2xlarge', 'ml.g4dn.2xlarge']));
    const none = await check('ten-second-data');
    expect(none).toMatchObject({ result: 'SKIP', saw: expect.stringMatching(/^the endpoint publishes every 60 s: nothing finer to look for/) });
    sm.on(DescribeEndpointConfigCommand).resolves(
      endpointConfig(['ml.g4dn.2xlarge', 'ml.g4dn.2xlarge'], { EnableEnhancedMetrics: true, MetricPublishFrequencyInSeconds: 60 }),
    );
    const minute = await check('ten-second-data');
    expect(minute).toMatchObject({ result: 'SKIP', saw: expect.stringMatching(/^the endpoint publishes every 60 s: nothing finer/) });
    sm.on(DescribeEndpointConfigCommand).rejects(
      new SageMakerServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        $metadata: { httpStatusCode: 400 },
        message: 'not authorized',
      }),
    );
    const unread = await check('ten-second-data');
    expect(unread).toMatchObject({ result: 'SKIP', saw: expect.stringMatching(/^the endpoint publishes every 60 s/) });
  });

  test('no variant (the endpoint reports none, no breaker names one): both stored-data checks SKIP', async () => {
    healthy();
    sm.on(DescribeEndpointCommand).resolves(describeEndpoint({ ProductionVariants: undefined }));
    lambda.on(ListFunctionsCommand).resolves({ Functions: [] });
    const { c } = await byId();
    expect(c['ten-second-data']).toEqual({ id: 'ten-second-data', result: 'SKIP', saw: 'no variant' });
    expect(c['guard-metrics']).toEqual({ id: 'guard-metrics', result: 'SKIP', saw: 'no variant' });
  });

  test('GPUMemoryUtilization is looked for where a variant runs on GPU instances only', async () => {
    const metricsAsked = () =>
      cw
        .commandCalls(GetMetricDataCommand)
        .map(x => x.args[0].input.MetricDataQueries!)
        .filter(q => q[0].MetricStat!.Metric!.Namespace === '/aws/sagemaker/Endpoints')
        .flatMap(q => q.map(m => `${m.MetricStat!.Metric!.MetricName}@${m.MetricStat!.Period}`));
    const tenS = { EnableEnhancedMetrics: true, MetricPublishFrequencyInSeconds: 10 };
    healthy();
    sm.on(DescribeEndpointConfigCommand).resolves(endpointConfig(['ml.c5.xlarge', 'ml.m5.large'], tenS));
    const cpu = await check('ten-second-data');
    expect(metricsAsked()).toEqual(['MemoryUtilization@10', 'MemoryUtilization@60']);
    expect(cpu.measured).toEqual({ MemoryUtilization: { resolutionS: 10, delayS: 20 } });
    cw.resetHistory();
    healthy();
    sm.on(DescribeEndpointConfigCommand).resolves(endpointConfig(['ml.c5.xlarge', 'ml.g5.xlarge'], tenS));
    const mixed = await check('ten-second-data');
    expect(metricsAsked()).toEqual(['MemoryUtilization@10', 'MemoryUtilization@60', 'GPUMemoryUtilization@10', 'GPUMemoryUtilization@60']);
    expect(Object.keys(mixed.measured!)).toEqual(['MemoryUtilization', 'GPUMemoryUtilization']);
  });

  test("no SageMaker memory point in the last 15 minutes: WARN naming each metric's figures", async () => {
    healthy({ memoryUntil: NOW - 21 * 60_000 });
    const x = await check('ten-second-data');
    expect(x).toMatchObject({
      result: 'WARN',
      saw: 'no datapoints in the last 15 minutes (MemoryUtilization: 0 points; GPUMemoryUtilization: 0 points)',
      fix: 'send traffic or wait for instances in service, then run doctor again',
    });
  });

  test("several metrics: the worst verdict and its fix, whichever metric has it; equal results: the first metric's fix", async () => {
    const stoppedFix = 'see whether the instances are in service and the container runs, then run doctor again';
    // Memory stopped (590 s late), GPU memory fresh: WARN, the stopped fix.
    gpuPoints(healthy({ memoryUntil: NOW - 10 * 60_000, gpuPoints: false }), NOW - 20 * 60_000, NOW - 30_000);
    const memStopped = await check('ten-second-data');
    expect(memStopped).toMatchObject({ result: 'WARN', fix: stoppedFix });
    // Memory fresh, GPU memory stopped: the same.
    gpuPoints(healthy({ gpuPoints: false }), NOW - 20 * 60_000, NOW - 10 * 60_000);
    const gpuStopped = await check('ten-second-data');
    expect(gpuStopped).toMatchObject({ result: 'WARN', fix: stoppedFix });
    // Memory stopped, GPU memory 40 s late (later than assumed): both WARN, the first metric's fix.
    gpuPoints(healthy({ memoryUntil: NOW - 10 * 60_000, gpuPoints: false }), NOW - 20 * 60_000, NOW - 50_000);
    const both = await check('ten-second-data');
    expect(both.saw).toMatch(/GPUMemoryUtilization: \d+ points, 10 s apart, newest 40 s late: 10-s data, later than/);
    expect(both).toMatchObject({ result: 'WARN', fix: stoppedFix });
  });

  test('metrics that mean the same with different figures: one meaning, each figure with its own metrics', async () => {
    // GPU memory only for the last 5 minutes: 28 points (NOW − 300 s … NOW − 30 s), memory 88.
    gpuPoints(healthy({ gpuPoints: false }), NOW - 300_000, NOW - 30_000);
    const x = await check('ten-second-data');
    expect(x).toMatchObject({
      result: 'PASS',
      saw: "MemoryUtilization: 88 points, 10 s apart, newest 20 s late; GPUMemoryUtilization: 28 points, 10 s apart, newest 20 s late: 10-s data, within the simulator's --metric-delay-10s 20 s (one reading)",
    });
  });

  test('one guard metric with points, the others with none: the one judges (PASS); not "publishes nothing"', async () => {
    const fake = healthy({ guard: false });
    for (let t = NOW - 20 * 60_000; t <= NOW - 30_000; t += 10_000) fake.put('ResilientEndpoint/Application', 'GuardPressure', DIMS, t, 62);
    const x = await check('guard-metrics');
    expect(x).toMatchObject({
      result: 'PASS',
      saw: `${WHERE}: GuardPressure: 88 points, 10 s apart, newest 20 s late: 10-s data, within the simulator's --guard-metric-delay 20 s (one reading); GuardMemoryRefusals, DeliberateClientErrors: 0 points: none in the last 15 minutes (the other metrics judge)`,
    });
  });

  test('where the guard series is listed: every ListMetrics page is read', async () => {
    healthy({ guard: false });
    // ListMetrics returns up to 500 results a page, then a NextToken (CloudWatch API reference, ListMetrics).
    cw.on(ListMetricsCommand, { MetricName: 'GuardPressure' }).callsFake(input =>
      input.NextToken === 'p2' ? { Metrics: [guardSeries('Rec/App')] } : { Metrics: [guardSeries('ResilientEndpoint/Application')], NextToken: 'p2' },
    );
    const x = await check('guard-metrics');
    expect(x.saw).toMatch(/; GuardPressure of this endpoint exists in Rec\/App$/);
    expect(cw.commandCalls(ListMetricsCommand, { MetricName: 'GuardPressure' }).map(c => c.args[0].input.NextToken)).toEqual([undefined, 'p2']);
  });
});

test("the guard check within doctor's bound: a GetMetricData that never answers FAILs it, named, its call aborted, the rest not run", async () => {
  const fake = healthy();
  cw.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) =>
    input.MetricDataQueries![0].MetricStat!.Metric!.Namespace === 'ResilientEndpoint/Application'
      ? new Promise(() => undefined)
      : fake.getMetricData(input, NOW),
  );
  const t0 = Date.now();
  const r = await doctor(clients, EP, NOW, { deadlineMs: 1000 });
  expect(Date.now() - t0).toBeLessThan(2500);
  const at = r.checks.findIndex(x => x.id === 'guard-metrics');
  expect(r.checks[at]).toMatchObject({ result: 'FAIL', saw: expect.stringMatching(/^timed out: no answer from AWS within doctor's 1 s bound/) });
  expect(r.checks.slice(0, at).every(x => x.result === 'PASS')).toBe(true);
  expect(r.checks.slice(at + 1).every(x => x.result === 'SKIP' && x.saw === "not run: doctor's 1 s bound was reached during guard-metrics")).toBe(
    true,
  );
  const guardCall = cw
    .commandCalls(GetMetricDataCommand)
    .find(c => c.args[0].input.MetricDataQueries![0].MetricStat!.Metric!.Namespace === 'ResilientEndpoint/Application')!;
  expect((guardCall.args as unknown as [unknown, { abortSignal: AbortSignal }])[1].abortSignal.aborted).toBe(true);
  expect(r.ok).toBe(false);
});

describe('what is live, and what no AWS text settles (issue 39)', () => {
  const liveVariant = (instanceType: string, variantName = 'Primary') => ({
    variantName,
    instanceTypes: [instanceType],
    from: 'live endpoint' as const,
  });

  test('ten-second-data reads the live endpoint’s publishing, not its config’s', async () => {
    healthy();
    // The config that created it said nothing (60 s); the live endpoint publishes every 10 s: the 10-s data is looked for.
    sm.on(DescribeEndpointConfigCommand).resolves({ ...endpointConfigOf(['ml.g4dn.2xlarge', 'ml.g4dn.2xlarge']), MetricsConfig: undefined });
    expect(await check('ten-second-data')).toMatchObject({ result: 'PASS', saw: expect.stringMatching(/10 s apart/) });
    // The config says 10 s, the live endpoint 60 s: nothing finer to look for, and where that was read.
    sm.on(DescribeEndpointCommand).resolves(
      describeEndpoint({ MetricsConfig: { EnableEnhancedMetrics: true, MetricPublishFrequencyInSeconds: 60 } }),
    );
    sm.on(DescribeEndpointConfigCommand).resolves(endpointConfigOf(['ml.g4dn.2xlarge', 'ml.g4dn.2xlarge'], 10));
    expect(await check('ten-second-data')).toMatchObject({
      result: 'SKIP',
      saw: expect.stringMatching(/^the endpoint publishes every 60 s: nothing finer .*; as the live endpoint says\)$/),
    });
  });

  test('the live instance types: the endpoint’s instance pools, else the config it runs', () => {
    const ep = describeEndpoint({
      ProductionVariants: [
        { VariantName: 'Primary', InstancePools: [{ InstanceType: 'ml.inf2.xlarge', CurrentInstanceCount: 2 }] },
        { VariantName: 'Fallback' },
      ],
    });
    expect(liveVariants(ep, endpointConfigOf(['ml.g5.xlarge', 'ml.c5.xlarge']) as any)).toEqual([
      { variantName: 'Primary', instanceTypes: ['ml.inf2.xlarge'], from: 'live endpoint' },
      { variantName: 'Fallback', instanceTypes: ['ml.c5.xlarge'], from: 'endpoint config' },
    ]);
    expect(
      [
        'ml.g4dn.xlarge',
        'ml.p5.48xlarge',
        'ml.inf1.xlarge',
        'ml.inf2.48xlarge',
        'ml.trn1.32xlarge',
        'ml.trn2.48xlarge',
        'ml.m5.large',
        'ml.c7i.large',
      ].map(metricFamily),
    ).toEqual(['gpu', 'gpu', 'neuron', 'neuron', 'neuron', 'neuron', 'cpu', 'cpu']);
    expect(FAMILY_METRICS.neuron).not.toContain('GPUMemoryUtilization');
  });

  test('Neuron types (inf, trn) publish no GPUMemoryUtilization: not looked for, and said what it means', async () => {
    healthy();
    sm.on(DescribeEndpointConfigCommand).resolves(endpointConfigOf(['ml.inf2.xlarge', 'ml.trn1.2xlarge'], 10));
    cw.on(ListMetricsCommand, { MetricName: 'GPUMemoryUtilization' }).resolves({ Metrics: [] });
    cw.on(ListMetricsCommand, { MetricName: 'GPUUtilization' }).resolves({ Metrics: [] });
    const { r, c } = await byId();
    const asked = cw
      .commandCalls(GetMetricDataCommand)
      .flatMap(x => x.args[0].input.MetricDataQueries!)
      .map(q => q.MetricStat?.Metric?.MetricName);
    expect(asked).toContain('MemoryUtilization');
    expect(asked).not.toContain('GPUMemoryUtilization');
    expect(c['ten-second-data'].measured).toEqual({ MemoryUtilization: expect.anything() });
    const u = r.checks.filter(x => x.id === 'utilisation-metrics');
    expect(u.map(x => x.result)).toEqual(['PASS', 'PASS']);
    expect(u[0].saw).toMatch(
      /^Primary \(ml\.inf2\.xlarge, Neuron: Inferentia\/Trainium, from the endpoint config\): MemoryUtilization: SageMaker publishes no device-memory metric/,
    );
    expect(u[0].saw).toMatch(/the alarms and the breaker judge host memory only/);
    expect(c['gpu-memory-held:0'] ?? c['gpu-memory-held']).toMatchObject({ result: 'SKIP', saw: 'no GPU variant' });
  });

  test('a GPU type without GPUMemoryUtilization, or a GPU metric on a Neuron type: WARN with what it means', async () => {
    const queries: string[] = [];
    cw.on(ListMetricsCommand).callsFake(input => {
      queries.push(input.MetricName);
      const has = input.MetricName === 'MemoryUtilization' || (input.MetricName === 'GPUUtilization' && input.Dimensions[1].Value === 'Neuron');
      return { Metrics: has ? [{ MetricName: input.MetricName, Dimensions: input.Dimensions }] : [] };
    });
    const [gpu, neuron] = await utilisationMetrics(clients, EP, [liveVariant('ml.g5.xlarge'), liveVariant('ml.inf2.xlarge', 'Neuron')]);
    expect(gpu).toMatchObject({ result: 'WARN', saw: expect.stringMatching(/no GPUMemoryUtilization on a GPU type$/) });
    expect(gpu.fix).toMatch(/the GPU-memory alarms and the breaker's GPU trigger have no data/);
    expect(neuron).toMatchObject({
      result: 'WARN',
      saw: expect.stringMatching(/GPUUtilization on a Neuron type, which SageMaker documents only for GPUs$/),
    });
    expect(queries).toEqual([
      'MemoryUtilization',
      'GPUMemoryUtilization',
      'GPUUtilization',
      'MemoryUtilization',
      'GPUMemoryUtilization',
      'GPUUtilization',
    ]);
  });

  test('FILL over a series with no point at all: asked of CloudWatch; points → PASS, nothing → WARN saying what the error alarms then lack', async () => {
    healthy();
    const ok = await check('fill-empty-series');
    expect(ok).toMatchObject({
      result: 'PASS',
      saw: expect.stringMatching(/^FILL\(m, -1\) over a series with no point in 30 minutes gave 30 points \(-1\)/),
    });
    expect(ok.saw).toMatch(/rec-Primary-business-ModelErrorRate: 30 values in the last 30 minutes/);
    const probe = cw
      .commandCalls(GetMetricDataCommand)
      .find(x => x.args[0].input.MetricDataQueries!.some(q => q.Expression === 'FILL(liveNone, -1)'))!;
    expect(probe.args[0].input.MetricDataQueries![0].MetricStat!.Metric!.Namespace).toBe(PROBE_NAMESPACE);
    healthy({ fillOfEmpty: false });
    const none = await check('fill-empty-series');
    expect(none).toMatchObject({
      result: 'WARN',
      saw: expect.stringMatching(/^FILL\(m, -1\) over a series with no point in 30 minutes gave nothing; /),
    });
    expect(none.fix).toMatch(/the ModelErrorRate alarm \(a rollback alarm\) and the breaker error alarm may then see no data/);
  });

  test("the live endpoint's rollback alarms by kind: the construct's mix PASSes naming the math ones; a missing one, or no single-metric one, WARNs", async () => {
    healthy();
    const x = await check('rollback-alarms');
    expect(x.result).toBe('PASS');
    expect(x.saw).toMatch(/rec-Primary-infra-HostMemory \(single metric\)/);
    expect(x.saw).toMatch(/rec-Primary-business-ModelErrorRate \(metric math\)/);
    expect(x.saw).toMatch(/whether it honours metric-math and Metrics Insights alarms is not documented/);
    sm.on(DescribeEndpointCommand).resolves(
      describeEndpoint({ LastDeploymentConfig: { AutoRollbackConfiguration: { Alarms: [{ AlarmName: 'gone' }] } } }),
    );
    expect(await check('rollback-alarms')).toMatchObject({
      result: 'WARN',
      fix: expect.stringMatching(/^no alarm named gone: it can never trip a rollback/),
    });
    const math = ROLLBACK.filter(n => /ModelErrorRate/.test(n)).map(AlarmName => ({ AlarmName }));
    sm.on(DescribeEndpointCommand).resolves(describeEndpoint({ LastDeploymentConfig: { AutoRollbackConfiguration: { Alarms: math } } }));
    expect(await check('rollback-alarms')).toMatchObject({ result: 'WARN', saw: expect.stringMatching(/none reads a single metric$/) });
    sm.on(DescribeEndpointCommand).resolves(describeEndpoint({ LastDeploymentConfig: undefined }));
    expect(await check('rollback-alarms')).toMatchObject({ result: 'SKIP' });
  });

  test('GPU memory at rest: held at its peak through quiet minutes → WARN (the allocator’s cache); falling with the traffic → PASS', async () => {
    const run = async (quietValue: number, quietMinutes = 20) => {
      const fake = new CloudWatchFake();
      const minute = Math.floor(NOW / 60_000) * 60_000;
      for (let k = 60; k >= 1; k--) {
        const t = minute - k * 60_000;
        const busy = k > quietMinutes;
        fake.put('AWS/SageMaker', 'Invocations', DIMS, t, busy ? 6000 : 0);
        fake.put('/aws/sagemaker/Endpoints', 'GPUMemoryUtilization', DIMS, t, busy ? 80 : quietValue);
      }
      cw.on(GetMetricDataCommand).callsFake(input => fake.getMetricData(input, NOW));
      return (await gpuMemoryHeld(clients, EP, [liveVariant('ml.g5.xlarge')], NOW))[0];
    };
    const held = await run(79);
    expect(held).toMatchObject({
      result: 'WARN',
      saw: 'Primary: GPUMemoryUtilization 80.0 in the busy minutes, at least 79.0 through the 20 quiet minutes after them: GPU memory stays taken when the traffic stops',
    });
    expect(held.fix).toMatch(/the breaker's recovery \(below 70 % for 5 minutes\) waits for it/);
    expect(await run(30)).toMatchObject({
      result: 'PASS',
      saw: expect.stringMatching(/at least 30\.0 through the 20 quiet minutes after them: it falls with the traffic/),
    });
    // The edges: 2 points under the peak is still held, more is falling; 10 quiet minutes judge, 9 do not.
    expect((await run(78)).result).toBe('WARN');
    expect((await run(77.9)).result).toBe('PASS');
    expect(await run(30, QUIET_MINUTES)).toMatchObject({ result: 'PASS', saw: expect.stringMatching(/through the 10 quiet minutes/) });
    expect(await run(30, QUIET_MINUTES - 1)).toMatchObject({
      result: 'SKIP',
      saw: expect.stringMatching(/^Primary: no stretch of 10 minutes without invocations after traffic/),
    });
  });
});
