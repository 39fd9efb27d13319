import * as fs from 'fs';
import * as path from 'path';
import { App, CfnParameter, Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AlarmTier, ContainerImage, EndpointMonitoring, ResilientEndpoint, SageMakerInstanceType } from '../lib';
import { RecommenderStack } from '../lib/examples/recommender-stack';
import { fractionWarnings, validateMonitoring } from '../lib/monitoring/endpoint-monitoring';
import { EndpointMetricFactory } from '../lib/monitoring/metrics';
import { evaluateAlarm } from './metric-math';
import { exampleStacks, nagFindings, newStack, synthError, warnings } from './util';

const image = ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1');

function alarmNamed(t: Template, suffix: string): any {
  const all = Object.values(t.findResources('AWS::CloudWatch::Alarm')) as any[];
  const found = all.filter(a => typeof a.Properties.AlarmName === 'string' && a.Properties.AlarmName.endsWith(suffix));
  expect(found).toHaveLength(1);
  return found[0].Properties;
}

describe('recommender example monitoring', () => {
  let t: Template;
  let stack: RecommenderStack;
  beforeAll(() => {
    ({ recommender: stack, rec: t } = exampleStacks());
  });

  test('host memory at 85 % on the hottest instance', () => {
    const a = alarmNamed(t, '-Primary-infra-HostMemory');
    expect(a).toMatchObject({
      Namespace: '/aws/sagemaker/Endpoints',
      MetricName: 'MemoryUtilization',
      Statistic: 'Maximum',
      Threshold: 85,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Period: 60,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      TreatMissingData: 'missing',
    });
    expect(a.Unit).toBeUndefined(); // Unit on an alarm is a filter
    expect(a.Dimensions).toEqual(
      expect.arrayContaining([
        { Name: 'EndpointName', Value: stack.endpoint.endpointName },
        { Name: 'VariantName', Value: 'Primary' },
      ]),
    );
  });

  test('GPU memory at 85 % of one T4 on g4dn.2xlarge', () => {
    expect(alarmNamed(t, '-Primary-infra-GpuMemory')).toMatchObject({ MetricName: 'GPUMemoryUtilization', Statistic: 'Maximum', Threshold: 85 });
  });

  test('CPU normalised by 8 vCPUs, disk at 75 %', () => {
    expect(alarmNamed(t, '-Primary-infra-Cpu')).toMatchObject({ MetricName: 'CPUUtilization', Threshold: 720, EvaluationPeriods: 5 });
    expect(alarmNamed(t, '-Primary-infra-Disk')).toMatchObject({ MetricName: 'DiskUtilization', Threshold: 75 });
  });

  test('P99 latency at 500,000 µs, 5XX rate as Average, missing data not breaching', () => {
    expect(alarmNamed(t, '-Primary-business-LatencyP99')).toMatchObject({
      Namespace: 'AWS/SageMaker',
      MetricName: 'ModelLatency',
      ExtendedStatistic: 'p99',
      Threshold: 500000,
      TreatMissingData: 'notBreaching',
    });
    expect(alarmNamed(t, '-Primary-business-LatencyP99').Unit).toBeUndefined();
    expect(alarmNamed(t, '-Primary-business-ErrorRate5xx')).toMatchObject({
      MetricName: 'Invocation5XXErrors',
      Statistic: 'Average',
      Threshold: 0.01,
      Period: 300,
    });
    const s = alarmNamed(t, '-Primary-business-SuccessRate');
    expect(s).toMatchObject({ Threshold: 99, ComparisonOperator: 'LessThanThreshold' });
    expect(JSON.stringify(s.Metrics)).toMatch(/IF\(inv_primary > 0, 100 \* \(1 - IF\(\(merr_primary - IF\(FILL\(dce_primary, -1\)/);
  });

  test('application tier: per-stage memory at 85 % in the namespace the container receives', () => {
    const a = alarmNamed(t, '-Primary-app-Stage-inference-Memory');
    expect(a).toMatchObject({ Namespace: 'ResilientEndpoint/Application', MetricName: 'MemoryUtilization', Threshold: 85 });
    expect(a.Dimensions).toEqual(expect.arrayContaining([{ Name: 'Stage', Value: 'inference' }]));
    t.hasResourceProperties('AWS::SageMaker::Model', {
      PrimaryContainer: Match.objectLike({
        Environment: Match.objectLike({ RESILIENT_ENDPOINT_METRICS_NAMESPACE: 'ResilientEndpoint/Application' }),
      }),
    });
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'cloudwatch:PutMetricData',
            Condition: { StringEquals: { 'cloudwatch:namespace': 'ResilientEndpoint/Application' } },
          }),
        ]),
      },
    });
  });

  test('composite alarm over every alarm notifies an encrypted topic on ALARM and OK', () => {
    const composite = Object.values(t.findResources('AWS::CloudWatch::CompositeAlarm'))[0] as any;
    // every monitoring alarm (the breaker's 80 % triggers are not for people)
    const alarms = Object.entries(t.findResources('AWS::CloudWatch::Alarm'))
      .filter(([, a]: any) => !a.Properties.AlarmName.includes('-breaker-'))
      .map(([id]) => id);
    expect(alarms.length).toBeGreaterThan(10);
    const rule = JSON.stringify(composite.Properties.AlarmRule);
    for (const id of alarms) expect(rule).toContain(id);
    expect(composite.Properties.AlarmActions).toHaveLength(1);
    expect(composite.Properties.OKActions).toHaveLength(1);
    t.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
  });

  test('dashboard with three tiers', () => {
    const body = JSON.stringify(Object.values(t.findResources('AWS::CloudWatch::Dashboard'))[0]);
    for (const tier of ['## Infrastructure', '## Application', '## Business']) expect(body).toContain(tier);
  });

  test('cdk-nag clean', () => {
    expect(nagFindings(stack)).toEqual([]);
  });
});

describe('normalisation and options', () => {
  test('g4dn.12xlarge alarms at 85 % of its four GPUs: threshold 340 on the 0–400 metric', () => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_G4DN_12XLARGE });
    const t = Template.fromStack(stack);
    expect(alarmNamed(t, '-Primary-infra-GpuMemory')).toMatchObject({ Threshold: 340 });
    expect(alarmNamed(t, '-Primary-infra-Cpu')).toMatchObject({ Threshold: 90 * 48 });
  });

  test('CPU instance has no GPU alarm; tiers can be switched off; thresholds tunable', () => {
    const { stack } = newStack();
    const e = new ResilientEndpoint(stack, 'E', {
      model: { image },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      monitoring: { applicationAlarms: false, businessAlarms: false, memoryThresholdPercent: 80, dashboard: false },
    });
    const t = Template.fromStack(stack);
    const names = (Object.values(t.findResources('AWS::CloudWatch::Alarm')) as any[])
      .map(a => a.Properties.AlarmName)
      .filter((n: string) => !n.includes('-breaker-'));
    expect(names.some((n: string) => n.includes('GpuMemory'))).toBe(false);
    expect(names.every((n: string) => n.includes('-infra-'))).toBe(true);
    expect(alarmNamed(t, '-infra-HostMemory')).toMatchObject({ Threshold: 80 });
    t.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    expect(e.monitoring!.alarmsOf(AlarmTier.BUSINESS)).toHaveLength(0);
  });

  test('monitoring can be switched off entirely', () => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', {
      model: { image },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      monitoring: { enabled: false },
      circuitBreaker: { enabled: false },
    });
    Template.fromStack(stack).resourceCountIs('AWS::CloudWatch::Alarm', 0);
  });

  test('budget at 80 % of a monthly amount notifies the topic', () => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, monitoring: { monthlyBudgetUsd: 2000 } });
    Template.fromStack(stack).hasResourceProperties('AWS::Budgets::Budget', {
      Budget: Match.objectLike({ BudgetLimit: { Amount: 2000, Unit: 'USD' }, TimeUnit: 'MONTHLY' }),
      NotificationsWithSubscribers: [Match.objectLike({ Notification: Match.objectLike({ Threshold: 80, ThresholdType: 'PERCENTAGE' }) })],
    });
    // The topic's policy replaces SNS's default one: Budgets needs its own Allow, and the key its own grant.
    Template.fromStack(stack).hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'budgets.amazonaws.com' },
            Action: 'sns:Publish',
            Condition: { StringEquals: { 'aws:SourceAccount': '123456789012' } },
          }),
        ]),
      },
    });
    Template.fromStack(stack).hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Allow', Principal: { Service: 'budgets.amazonaws.com' } })]) },
    });
  });

  test('an imported alarm topic cannot be granted to: a warning says what its policy must allow', () => {
    const { stack } = newStack();
    const topic = sns.Topic.fromTopicArn(stack, 'T', 'arn:aws:sns:us-east-1:123456789012:oncall');
    new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, monitoring: { alarmTopic: topic } });
    expect(warnings(stack).join('\n')).toMatch(/imported topic.*cloudwatch\.amazonaws\.com sns:Publish/);
  });

  test("usable alone for an endpoint defined elsewhere; rollback alarms: one variant's memory alarms first, then its business tier", () => {
    const stack = new Stack();
    const m = new EndpointMonitoring(stack, 'M', {
      endpointName: 'legacy',
      variants: ['AllTraffic', 'Canary'].map(variantName => ({ variantName, instanceType: SageMakerInstanceType.ML_G5_XLARGE })),
    });
    const names = (alarms: { node: { defaultChild?: unknown } }[]) => alarms.map(a => (a.node.defaultChild as any).alarmName);
    const tail = ['infra-HostMemory', 'infra-GpuMemory', 'business-ErrorRate5xx', 'business-ModelErrorRate', 'business-LatencyP99'];
    expect(names(m.rollbackAlarms())).toEqual(tail.map(k => `legacy-AllTraffic-${k}`)); // the first variant by default
    expect(names(m.rollbackAlarms('Canary'))).toEqual(tail.map(k => `legacy-Canary-${k}`));
  });

  test('thresholds outside (0, 100] are errors, all at once', () => {
    const { app, stack } = newStack();
    new ResilientEndpoint(stack, 'E', {
      model: { image },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      monitoring: { memoryThresholdPercent: 120, gpuMemoryThresholdPercent: -1, latencyP99Threshold: Duration.minutes(5), stages: [] },
    });
    const msg = synthError(app);
    expect(msg).toMatch(/monitoring\.memoryThresholdPercent: got 120; allowed: a percentage above 0 and at most 100/);
    expect(msg).toMatch(/monitoring\.gpuMemoryThresholdPercent: got -1/);
    expect(msg).toMatch(/monitoring\.latencyP99Threshold \(ms\): got 300000/);
    expect(msg).toMatch(/monitoring\.stages/);
  });
});

describe('alarms page for the right reasons, and reach someone', () => {
  test("the model-error alarm counts dead workers whatever status they surface as, and ignores the container's deliberate 4XX", () => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', {
      model: { image },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      monitoring: { notify: { emails: ['oncall@example.com'] } },
    });
    const t = Template.fromStack(stack);
    const a = alarmNamed(t, '-Primary-business-ModelErrorRate');
    const success = alarmNamed(t, '-Primary-business-SuccessRate');
    expect(a.Threshold).toBe(0.01);
    expect(a.ComparisonOperator).toBe('GreaterThanOrEqualToThreshold');
    // 5-minute Sums as CloudWatch aggregates them: 1,000 requests of which 300 answered 413 on purpose (a degrade level).
    const rejections = { Invocations: 1000, InvocationModelErrors: 300, Invocation4XXErrors: 300, DeliberateClientErrors: 300 };
    expect(evaluateAlarm(a.Metrics, rejections)).toBe(0);
    expect(evaluateAlarm(success.Metrics, rejections)).toBe(100);
    // A container dies while 5XX stays flat (socket errors, timeouts: InvocationModelErrors without a status).
    const silentDeaths = { Invocations: 1000, InvocationModelErrors: 20, Invocation4XXErrors: 0, DeliberateClientErrors: 0 };
    expect(evaluateAlarm(a.Metrics, silentDeaths)).toBeCloseTo(0.02);
    expect(evaluateAlarm(success.Metrics, silentDeaths)).toBeCloseTo(98);
    // Deaths that surface as 4XX (TorchServe's 507 or 413): 320 4XX, of which the container chose 300.
    const deathsAs4xx = { Invocations: 1000, InvocationModelErrors: 320, Invocation4XXErrors: 320, DeliberateClientErrors: 300 };
    expect(evaluateAlarm(a.Metrics, deathsAs4xx)).toBeCloseTo(0.02);
    expect(evaluateAlarm(success.Metrics, deathsAs4xx)).toBeCloseTo(98);
    // A container that publishes no DeliberateClientErrors (no runtime helper): every 4XX is subtracted, as before.
    expect(evaluateAlarm(a.Metrics, { Invocations: 1000, InvocationModelErrors: 320, Invocation4XXErrors: 300 })).toBeCloseTo(0.02);
    // More deliberate 4XX than model errors in a period: clamped at 0, never a negative rate.
    expect(evaluateAlarm(a.Metrics, { Invocations: 1000, InvocationModelErrors: 10, Invocation4XXErrors: 10, DeliberateClientErrors: 30 })).toBe(0);
    expect(evaluateAlarm(a.Metrics, { Invocations: 0, InvocationModelErrors: 0, Invocation4XXErrors: 0, DeliberateClientErrors: 0 })).toBe(0);
  });

  test('the deployment rollback alarms do not roll back on deliberate rejections either', () => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', {
      model: { image },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      monitoring: { notify: { emails: ['oncall@example.com'] } },
    });
    const t = Template.fromStack(stack).toJSON();
    const endpoint = Object.values(t.Resources as Record<string, any>).find(r => r.Type === 'AWS::SageMaker::Endpoint')!;
    const rollback = endpoint.Properties.DeploymentConfig.AutoRollbackConfiguration.Alarms.map((x: any) => x.AlarmName.Ref);
    expect(rollback.length).toBeGreaterThanOrEqual(4);
    for (const logicalId of rollback) {
      const a = t.Resources[logicalId].Properties;
      const values = { Invocations: 1000, InvocationModelErrors: 500, Invocation4XXErrors: 500, Invocation5XXErrors: 0, DeliberateClientErrors: 500 };
      // Every rollback alarm on error metrics reads 0 % when all errors are the container's 413s …
      if (a.Metrics) expect(evaluateAlarm(a.Metrics, values)).toBe(0);
      // … and rolls back when workers die as 4XX (TorchServe 507/413) while 5XX stays 0.
      if (a.Metrics) expect(evaluateAlarm(a.Metrics, { ...values, DeliberateClientErrors: 0 })).toBe(0.5);
      else expect(['MemoryUtilization', 'GPUMemoryUtilization', 'ModelLatency', 'Invocation5XXErrors']).toContain(a.MetricName);
    }
  });

  test('notify: e-mail and other subscriptions on the alarm topic; none at all is a warning that says how', () => {
    const { stack } = newStack();
    const pager = new sns.Topic(stack, 'Pager');
    new ResilientEndpoint(stack, 'E', {
      model: { image },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      monitoring: {
        notify: {
          emails: ['oncall@example.com'],
          subscriptions: [{ bind: () => ({ subscriberId: 'p', endpoint: pager.topicArn, protocol: sns.SubscriptionProtocol.HTTPS }) }],
        },
      },
    });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
    t.resourceCountIs('AWS::SNS::Subscription', 2);
    expect(warnings(stack).join('\n')).not.toMatch(/no subscription/);

    const bare = newStack();
    new ResilientEndpoint(bare.stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE });
    expect(warnings(bare.stack).join('\n')).toMatch(
      /the alarm topic of .* has no subscription, so its alarms reach no one\. Fix: monitoring: \{ notify: \{ emails:/,
    );
    // Your own topic: its subscriptions are yours, no warning.
    const own = newStack();
    new ResilientEndpoint(own.stack, 'E', {
      model: { image },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      monitoring: { alarmTopic: new sns.Topic(own.stack, 'T') },
    });
    expect(warnings(own.stack).join('\n')).not.toMatch(/no subscription/);
  });

  test("the Budgets statement is scoped to the account's budgets (aws:SourceArn), besides aws:SourceAccount", () => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', {
      model: { image },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      monitoring: { monthlyBudgetUsd: 100, notify: { emails: ['a@example.com'] } },
    });
    const policy = Object.values(Template.fromStack(stack).findResources('AWS::SNS::TopicPolicy'))[0] as any;
    const budget = policy.Properties.PolicyDocument.Statement.find((x: any) => x.Principal?.Service === 'budgets.amazonaws.com');
    expect(budget.Condition).toEqual({
      StringEquals: { 'aws:SourceAccount': '123456789012' },
      ArnLike: { 'aws:SourceArn': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':budgets::123456789012:*']] } },
    });
  });
});

describe('validateMonitoring: every rule with its exact message', () => {
  const check = (p: Parameters<typeof validateMonitoring>[0]) => validateMonitoring(p).all;
  const pctRule = (name: string, example: number, v: number) =>
    `monitoring.${name}: got ${v}; allowed: a percentage above 0 and at most 100 (0 would make the alarm fire on every datapoint, or never). Fix: give a percentage, e.g. ${example}`;
  const percentages: [string, number][] = [
    ['memoryThresholdPercent', 85],
    ['gpuMemoryThresholdPercent', 85],
    ['cpuThresholdPercent', 90],
    ['diskThresholdPercent', 75],
    ['stageMemoryThresholdPercent', 85],
    ['errorRateThresholdPercent', 1],
    ['modelErrorRateThresholdPercent', 1],
    ['successRateThresholdPercent', 99],
  ];

  const errorRates = ['errorRateThresholdPercent', 'modelErrorRateThresholdPercent'];

  test.each(percentages)('%s: above 0 and at most 100, each bound and NaN (its example: %i)', (name, example) => {
    for (const v of [1.01, 50, 100]) expect(check({ [name]: v })).toEqual([]);
    for (const v of [0, -1, 100.5, NaN]) expect(check({ [name]: v })).toEqual([pctRule(name, example, v)]);
  });

  test.each(percentages)('%s: from 0 to 1, a fraction given for a percentage — an error, except for the error rates (real SLOs)', name => {
    for (const v of [0.01, 0.85, 1]) {
      const meant = +(v * 100).toPrecision(12);
      expect(check({ [name]: v })).toEqual(
        errorRates.includes(name)
          ? []
          : [
              `monitoring.${name}: got ${v} (${v} %: a fraction given for ${meant} %?); allowed: a percentage above 1 and at most 100, in percent (not a fraction). Fix: give ${meant} for ${meant} %`,
            ],
      );
    }
  });

  test('the error rates below 1 % warn instead, naming the prop; from 1 % up, nothing', () => {
    expect(fractionWarnings({ errorRateThresholdPercent: 0.05, modelErrorRateThresholdPercent: 0.5 })).toEqual([
      {
        id: 'errorRateThresholdPercentFraction',
        message:
          'monitoring.errorRateThresholdPercent is 0.05: the 5XX alarm fires at 0.05 % (1 in 2,000). The prop is in percent: if 0.05 was a fraction for 5 %, give 5; if 0.05 % is meant, acknowledge this warning.',
      },
      {
        id: 'modelErrorRateThresholdPercentFraction',
        message:
          'monitoring.modelErrorRateThresholdPercent is 0.5: the model-error alarm fires at 0.5 % (1 in 200). The prop is in percent: if 0.5 was a fraction for 50 %, give 50; if 0.5 % is meant, acknowledge this warning.',
      },
    ]);
    expect(fractionWarnings({ errorRateThresholdPercent: 1, modelErrorRateThresholdPercent: 5, memoryThresholdPercent: 0.85 })).toEqual([]);
  });

  test('latency from 1 ms to 60 s; a budget of at least 1 USD', () => {
    for (const ms of [1, 60000]) expect(check({ latencyP99Threshold: Duration.millis(ms) })).toEqual([]);
    expect(check({ latencyP99Threshold: Duration.millis(60001) })).toEqual([
      'monitoring.latencyP99Threshold (ms): got 60001; allowed: a number from 1 to 60000. Fix: use Duration.millis(1..60000); real-time containers must answer within 60 s',
    ]);
    expect(check({ monthlyBudgetUsd: 1 })).toEqual([]);
    expect(check({ monthlyBudgetUsd: 0.5 })).toEqual([
      'monitoring.monthlyBudgetUsd: got 0.5; allowed: a number from 1 to 1000000000. Fix: give the monthly budget in USD, e.g. 2000',
    ]);
  });

  test('e-mail addresses, each bad one named', () => {
    expect(check({ notify: { emails: ['oncall@example.com', 'a.b+c@d.co.uk'] } })).toEqual([]);
    // A list in one string is one bad address, not two.
    expect(
      check({ notify: { emails: ['oncall', 'a@b', 'x y@example.com', 'ok@example.com', '@example.com', 'oncall@example.com,dev@example.com'] } }),
    ).toEqual(
      ['oncall', 'a@b', 'x y@example.com', '@example.com', 'oncall@example.com,dev@example.com'].map(
        a => `monitoring.notify.emails: got '${a}'; allowed: an e-mail address. Fix: give e.g. 'oncall@example.com'`,
      ),
    );
  });

  test('stages: at least one when given, each 1–64 letters, digits, _ or -', () => {
    expect(check({ stages: ['preprocess', 'inference_2', 'post-process', 'a'.repeat(64)] })).toEqual([]);
    expect(check({ stages: [] })).toEqual([
      "monitoring.stages: got '[]'; allowed: at least one stage name. Fix: list the stages, e.g. ['preprocess', 'inference']",
    ]);
    expect(check({ stages: ['ok', 'pre process', '', 'a'.repeat(65), 'x.y'] })).toEqual(
      ['pre process', '', 'a'.repeat(65), 'x.y'].map(
        s => `monitoring.stages: got '${s}'; allowed: letters, digits, _ and -, 1–64 characters. Fix: use e.g. 'inference'`,
      ),
    );
  });

  test('nothing given: nothing to report', () => {
    expect(check({})).toEqual([]);
  });
});

describe('EndpointMetricFactory: each metric as SageMaker publishes it', () => {
  const m = new EndpointMetricFactory('ep', 'Primary');
  const dims = { EndpointName: 'ep', VariantName: 'Primary' };
  const shape = (metric: any) => ({
    namespace: metric.namespace,
    metricName: metric.metricName,
    statistic: metric.statistic,
    period: metric.period.toSeconds(),
    dimensions: metric.dimensions,
  });

  test.each<[keyof EndpointMetricFactory, string, string, string]>([
    ['memoryUtilization', '/aws/sagemaker/Endpoints', 'MemoryUtilization', 'Maximum'],
    ['gpuMemoryUtilization', '/aws/sagemaker/Endpoints', 'GPUMemoryUtilization', 'Maximum'],
    ['gpuUtilization', '/aws/sagemaker/Endpoints', 'GPUUtilization', 'Maximum'],
    ['cpuUtilization', '/aws/sagemaker/Endpoints', 'CPUUtilization', 'Maximum'],
    ['diskUtilization', '/aws/sagemaker/Endpoints', 'DiskUtilization', 'Maximum'],
    ['invocations', 'AWS/SageMaker', 'Invocations', 'Sum'],
    ['invocationsPerInstance', 'AWS/SageMaker', 'InvocationsPerInstance', 'Sum'],
    ['invocation5xxErrors', 'AWS/SageMaker', 'Invocation5XXErrors', 'Sum'],
    ['invocation4xxErrors', 'AWS/SageMaker', 'Invocation4XXErrors', 'Sum'],
    ['invocationModelErrors', 'AWS/SageMaker', 'InvocationModelErrors', 'Sum'],
    ['modelLatency', 'AWS/SageMaker', 'ModelLatency', 'p99'],
    ['overheadLatency', 'AWS/SageMaker', 'OverheadLatency', 'Average'],
    ['concurrentRequestsPerModel', 'AWS/SageMaker', 'ConcurrentRequestsPerModel', 'Maximum'],
    ['invocation5xxRate', 'AWS/SageMaker', 'Invocation5XXErrors', 'Average'],
  ])('%s: %s %s, %s over 1 minute, per endpoint and variant', (method, namespace, metricName, statistic) => {
    expect(shape((m[method] as () => cloudwatch.Metric).call(m))).toEqual({ namespace, metricName, statistic, period: 60, dimensions: dims });
  });

  test('options override the period, the statistic and add dimensions; the 5XX rate stays an Average', () => {
    expect(shape(m.memoryUtilization({ period: Duration.seconds(10), statistic: 'Average', dimensionsMap: { InstanceId: 'i-1' } }))).toEqual({
      namespace: '/aws/sagemaker/Endpoints',
      metricName: 'MemoryUtilization',
      statistic: 'Average',
      period: 10,
      dimensions: { ...dims, InstanceId: 'i-1' },
    });
    expect(m.invocation5xxRate({ statistic: 'Sum' }).statistic).toBe('Average');
    expect(shape(m.metric('Custom/NS', 'Stage', { dimensionsMap: { Stage: 'pre' } }))).toEqual({
      namespace: 'Custom/NS',
      metricName: 'Stage',
      statistic: 'Average',
      period: 60,
      dimensions: { ...dims, Stage: 'pre' },
    });
  });

  test('the hottest GPU: a Metrics Insights MAX over the per-GPU series of this endpoint and variant, at 1 minute', () => {
    const q = new EndpointMetricFactory("it's", 'Primary').hottestGpuMemoryUtilization();
    expect([q.expression, q.period.toSeconds(), q.label]).toEqual([
      `SELECT MAX(GPUMemoryUtilization) FROM SCHEMA("/aws/sagemaker/Endpoints", AcceleratorId, EndpointName, InstanceId, VariantName) WHERE EndpointName = 'it''s' AND VariantName = 'Primary'`,
      60,
      'Hottest GPU memory (%)',
    ]);
    expect(m.hottestGpuMemoryUtilization({ period: Duration.minutes(5), label: 'x' })).toMatchObject({ label: 'x' });
  });

  test('errors the container did not choose, and the success rate: per-variant ids, over 5 minutes, the application namespace', () => {
    const e = new EndpointMetricFactory('ep', 'Fall-back 2').unexpectedModelErrorRate();
    const dead = '(merr_fall_back_2 - IF(FILL(dce_fall_back_2, -1) >= 0, FILL(dce_fall_back_2, 0), e4_fall_back_2))';
    expect([e.expression, e.period.toSeconds(), e.label, Object.keys(e.usingMetrics)]).toEqual([
      `IF(inv_fall_back_2 > 0, IF(${dead} > 0, ${dead}, 0) / inv_fall_back_2, 0)`,
      300,
      'Errors not chosen by the container (0-1)',
      ['merr_fall_back_2', 'dce_fall_back_2', 'e4_fall_back_2', 'inv_fall_back_2'],
    ]);
    const dims = { EndpointName: 'ep', VariantName: 'Fall-back 2' };
    expect(Object.values(e.usingMetrics).map(x => shape(x))).toEqual([
      { namespace: 'AWS/SageMaker', metricName: 'InvocationModelErrors', statistic: 'Sum', period: 300, dimensions: dims },
      { namespace: 'ResilientEndpoint/Application', metricName: 'DeliberateClientErrors', statistic: 'Sum', period: 300, dimensions: dims },
      { namespace: 'AWS/SageMaker', metricName: 'Invocation4XXErrors', statistic: 'Sum', period: 300, dimensions: dims },
      { namespace: 'AWS/SageMaker', metricName: 'Invocations', statistic: 'Sum', period: 300, dimensions: dims },
    ]);
    expect(m.unexpectedModelErrorRate({ period: Duration.minutes(1) }).period.toSeconds()).toBe(60);
    const count = new EndpointMetricFactory('ep', 'P', 'Mine/App').unexpectedModelErrors();
    expect([count.period.toSeconds(), (count.usingMetrics.dce_p as cloudwatch.Metric).namespace]).toEqual([300, 'Mine/App']);
    const s = m.successRate({ period: Duration.minutes(1) });
    const deadP = '(merr_primary - IF(FILL(dce_primary, -1) >= 0, FILL(dce_primary, 0), e4_primary))';
    expect([s.expression, s.period.toSeconds(), s.label, Object.values(s.usingMetrics).map(x => (x as cloudwatch.Metric).metricName)]).toEqual([
      `IF(inv_primary > 0, 100 * (1 - IF(${deadP} > 0, ${deadP}, 0) / inv_primary), 100)`,
      60,
      'Success rate (%)',
      ['InvocationModelErrors', 'DeliberateClientErrors', 'Invocation4XXErrors', 'Invocations'],
    ]);
    const { stack } = newStack();
    const token = new EndpointMetricFactory('ep', new CfnParameter(stack, 'V').valueAsString).successRate();
    expect(token.expression).toMatch(/^IF\(inv_variant > 0, 100 \* \(1 - IF\(\(merr_variant - IF\(FILL\(dce_variant/);
    // The guard's own metrics: high resolution, 10 s, in the application namespace.
    expect([m.guardPressure(), m.guardMemoryRefusals(), m.deliberateClientErrors()].map(x => shape(x))).toEqual([
      {
        namespace: 'ResilientEndpoint/Application',
        metricName: 'GuardPressure',
        statistic: 'Maximum',
        period: 10,
        dimensions: { EndpointName: 'ep', VariantName: 'Primary' },
      },
      {
        namespace: 'ResilientEndpoint/Application',
        metricName: 'GuardMemoryRefusals',
        statistic: 'Sum',
        period: 10,
        dimensions: { EndpointName: 'ep', VariantName: 'Primary' },
      },
      {
        namespace: 'ResilientEndpoint/Application',
        metricName: 'DeliberateClientErrors',
        statistic: 'Sum',
        period: 60,
        dimensions: { EndpointName: 'ep', VariantName: 'Primary' },
      },
    ]);
  });
});

test("docs/monitoring.md's alarm table is what the recommender example deploys: every alarm, statistic, threshold, datapoints and missing-data rule", () => {
  const readme = fs.readFileSync(path.join(__dirname, '..', 'docs', 'monitoring.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Monitoring (`monitoring`): every alarm created'));
  const rows = section
    .slice(section.search(/^\|\s*tier\s*\|\s*alarm\s*\|/m))
    .split('\n')
    .slice(2);
  const table = rows
    .slice(
      0,
      rows.findIndex(l => !l.startsWith('| ')),
    )
    .map(l => l.split('|').map(c => c.trim()));
  expect(table.length).toBe(9);
  const { rec } = exampleStacks();
  const alarms = (Object.values(rec.findResources('AWS::CloudWatch::Alarm')) as any[]).map(a => a.Properties);
  const primary = SageMakerInstanceType.ML_G4DN_2XLARGE.spec; // the example's primary: 8 vCPUs, 1 GPU
  let checked = 0;
  for (const [, tier, alarm, , statistic, threshold, , datapoints, missing] of table) {
    const key = alarm.split(' ')[0].replace('<stage>', 'inference');
    const found = alarms.filter(a => String(a.AlarmName).endsWith(`-Primary-${tier}-${key}`));
    expect([key, found.length]).toEqual([key, 1]);
    const a = found[0];
    const [, op, base, times] = /^([≥<]) ([\d.,]+)(?: × (GPUs|vCPUs))?/.exec(threshold)!;
    const factor = times === 'GPUs' ? primary.gpuCount : times === 'vCPUs' ? primary.vCpus : 1;
    expect([key, a.Threshold, a.ComparisonOperator]).toEqual([
      key,
      Number(base.replace(/,/g, '')) * factor,
      op === '≥' ? 'GreaterThanOrEqualToThreshold' : 'LessThanThreshold',
    ]);
    const stat = statistic.split(' ')[0];
    if (stat === 'math') expect([key, a.Metrics?.filter((x: any) => x.Expression).length]).toEqual([key, 1]);
    else expect([key, a.Statistic ?? a.ExtendedStatistic]).toEqual([key, stat]);
    const m = /^(\d+) of (\d+)/.exec(datapoints) ?? /^(1) × (\d+) min/.exec(datapoints);
    const [alarmOn, outOf] = datapoints.includes(' of ') ? [Number(m![1]), Number(m![2])] : [1, 1];
    expect([key, a.DatapointsToAlarm, a.EvaluationPeriods]).toEqual([key, alarmOn, outOf]);
    const minutes = /× (\d+) min/.exec(datapoints)?.[1];
    if (minutes)
      expect([key, a.Period ?? a.Metrics[0].Period ?? a.Metrics.find((x: any) => x.MetricStat)?.MetricStat.Period]).toEqual([
        key,
        Number(minutes) * 60,
      ]);
    expect([key, a.TreatMissingData]).toEqual([key, missing === 'missing' ? 'missing' : 'notBreaching']);
    checked++;
  }
  expect(checked).toBe(9);
});

describe('what EndpointMonitoring deploys, exactly', () => {
  /** Monitoring alone for endpoint 'legacy', variant 'AllTraffic', in a fresh stack. */
  function alone(instanceType: SageMakerInstanceType, props: Partial<ConstructorParameters<typeof EndpointMonitoring>[2]> = {}) {
    const stack = new Stack();
    const m = new EndpointMonitoring(stack, 'M', { endpointName: 'legacy', variants: [{ variantName: 'AllTraffic', instanceType }], ...props });
    return { stack, m, t: Template.fromStack(stack) };
  }
  const descriptions = (t: Template) =>
    Object.fromEntries(
      (Object.values(t.findResources('AWS::CloudWatch::Alarm')) as any[]).map(a => [a.Properties.AlarmName, a.Properties.AlarmDescription]),
    );
  const tail = ' Endpoint legacy, variant AllTraffic.';

  test('every alarm description of a CPU endpoint (ml.m5.xlarge: 4 vCPUs), with the defaults', () => {
    expect(descriptions(alone(SageMakerInstanceType.ML_M5_XLARGE).t)).toEqual({
      'legacy-AllTraffic-infra-HostMemory': `Host memory >= 85 % on the hottest instance (Maximum over instances, 1-minute data, 2 of 3 minutes).${tail}`,
      'legacy-AllTraffic-infra-Cpu': `CPU >= 90 % of 4 vCPUs for 5 minutes (raw metric summed over vCPUs, 0-400: threshold 360).${tail}`,
      'legacy-AllTraffic-infra-Disk': `Disk >= 75 %: data capture stops at high disk use.${tail}`,
      ...Object.fromEntries(
        ['preprocess', 'inference', 'postprocess'].map(s => [
          `legacy-AllTraffic-app-Stage-${s}-Memory`,
          `Memory of stage '${s}' >= 85 % of its worker's memory budget (published by the container in ResilientEndpoint/Application).${tail}`,
        ]),
      ),
      'legacy-AllTraffic-business-ErrorRate5xx': `5XX rate >= 1 % over 5 minutes (Average of Invocation5XXErrors is the rate, 0-1: threshold 0.01).${tail}`,
      'legacy-AllTraffic-business-ModelErrorRate': `Errors the container did not choose (dead or hung workers, timeouts, 5XX) >= 1 % of invocations over 5 minutes ((InvocationModelErrors - DeliberateClientErrors) / Invocations, 0-1; less every 4XX where the container publishes no DeliberateClientErrors).${tail}`,
      'legacy-AllTraffic-business-LatencyP99': `P99 ModelLatency >= 500 ms for 3 minutes (metric in microseconds: threshold 500000).${tail}`,
      'legacy-AllTraffic-business-SuccessRate': `Success rate < 99 % over 5 minutes (100 × (1 − errors the container did not choose / invocations): dead workers count whatever status they surface as).${tail}`,
    });
  });

  test('a 4-GPU endpoint with per-GPU metrics and its own thresholds: descriptions, thresholds, statistics, periods, rollback order', () => {
    const { t, m } = alone(SageMakerInstanceType.ML_G4DN_12XLARGE, {
      perGpuMetrics: true,
      gpuMemoryThresholdPercent: 80,
      cpuThresholdPercent: 50,
      errorRateThresholdPercent: 5,
      stages: ['inference'],
    });
    const d = descriptions(t);
    expect(d['legacy-AllTraffic-infra-GpuMemory']).toBe(
      `GPU memory >= 80 % of the instance's 4 GPU(s) (raw metric summed over GPUs, 0-400: threshold 320).${tail}`,
    );
    expect(d['legacy-AllTraffic-infra-HottestGpuMemory']).toBe(
      `Memory of the hottest single GPU >= 80 % (per-GPU enhanced metrics; the summed metric hides one full GPU among 4).${tail}`,
    );
    expect(d['legacy-AllTraffic-infra-Cpu']).toBe(
      `CPU >= 50 % of 48 vCPUs for 5 minutes (raw metric summed over vCPUs, 0-4800: threshold 2400).${tail}`,
    );
    expect(d['legacy-AllTraffic-business-ErrorRate5xx']).toBe(
      `5XX rate >= 5 % over 5 minutes (Average of Invocation5XXErrors is the rate, 0-1: threshold 0.05).${tail}`,
    );
    expect(alarmNamed(t, '-infra-GpuMemory')).toMatchObject({ Threshold: 320 });
    expect(alarmNamed(t, '-infra-HottestGpuMemory')).toMatchObject({ Threshold: 80, TreatMissingData: 'notBreaching' });
    expect(alarmNamed(t, '-infra-Cpu')).toMatchObject({ Threshold: 2400, Statistic: 'Average', Period: 60 });
    expect(alarmNamed(t, '-business-ErrorRate5xx')).toMatchObject({ Threshold: 0.05, Statistic: 'Average', Period: 300 });
    const success = alarmNamed(t, '-business-SuccessRate');
    expect(success.Metrics.filter((x: any) => x.MetricStat).map((x: any) => x.MetricStat.Period)).toEqual([300, 300, 300, 300]);
    const names = (alarms: cloudwatch.Alarm[]) => alarms.map(a => (a.node.defaultChild as any).alarmName);
    // Memory first (the host, the hottest GPU, then the sum), then the business tier.
    expect(names(m.rollbackAlarms())).toEqual(
      [
        'infra-HostMemory',
        'infra-HottestGpuMemory',
        'infra-GpuMemory',
        'business-ErrorRate5xx',
        'business-ModelErrorRate',
        'business-LatencyP99',
      ].map(k => `legacy-AllTraffic-${k}`),
    );
    expect(m.alarmsOf(AlarmTier.APPLICATION).map(a => (a.node.defaultChild as any).alarmName)).toEqual([
      'legacy-AllTraffic-app-Stage-inference-Memory',
    ]);
    expect(m.alarmsOf(AlarmTier.INFRASTRUCTURE)).toHaveLength(5);
  });

  test('one GPU: no hottest-GPU alarm even with per-GPU metrics; a type outside the catalog (0 vCPUs known): no CPU alarm', () => {
    expect(
      Object.keys(descriptions(alone(SageMakerInstanceType.ML_G5_XLARGE, { perGpuMetrics: true }).t)).filter(n => n.includes('-infra-')),
    ).toEqual([
      'legacy-AllTraffic-infra-HostMemory',
      'legacy-AllTraffic-infra-GpuMemory',
      'legacy-AllTraffic-infra-Cpu',
      'legacy-AllTraffic-infra-Disk',
    ]);
    expect(Object.keys(descriptions(alone(SageMakerInstanceType.of('ml.zz9.xlarge')).t)).filter(n => n.includes('-infra-'))).toEqual([
      'legacy-AllTraffic-infra-HostMemory',
      'legacy-AllTraffic-infra-Disk',
    ]);
  });

  test('the composite alarm: its name, description and rule; with every tier off its rule is FALSE, never TRUE', () => {
    const { t } = alone(SageMakerInstanceType.ML_M5_XLARGE);
    const composite = Object.values(t.findResources('AWS::CloudWatch::CompositeAlarm'))[0] as any;
    expect(composite.Properties.AlarmName).toBe('legacy-unhealthy');
    expect(composite.Properties.AlarmDescription).toBe(
      'SageMaker endpoint legacy is unhealthy: at least one infrastructure, application or business alarm is in ALARM.',
    );
    const off = alone(SageMakerInstanceType.ML_M5_XLARGE, { infrastructureAlarms: false, applicationAlarms: false, businessAlarms: false });
    off.t.resourceCountIs('AWS::CloudWatch::Alarm', 0);
    off.t.hasResourceProperties('AWS::CloudWatch::CompositeAlarm', { AlarmRule: 'FALSE' });
    const infraOff = alone(SageMakerInstanceType.ML_M5_XLARGE, { infrastructureAlarms: false });
    expect(Object.keys(descriptions(infraOff.t)).filter(n => n.includes('-infra-'))).toEqual([]);
  });

  test('alarm actions: only the composite notifies by default; notifyOnEachAlarm adds ALARM and OK actions to every alarm', () => {
    const actions = (t: Template) =>
      (Object.values(t.findResources('AWS::CloudWatch::Alarm')) as any[]).map(a => [
        a.Properties.AlarmActions?.length ?? 0,
        a.Properties.OKActions?.length ?? 0,
      ]);
    expect(new Set(actions(alone(SageMakerInstanceType.ML_M5_XLARGE).t).map(String))).toEqual(new Set(['0,0']));
    const each = actions(alone(SageMakerInstanceType.ML_M5_XLARGE, { notifyOnEachAlarm: true }).t);
    expect(each).toHaveLength(10);
    expect(new Set(each.map(String))).toEqual(new Set(['1,1']));
  });

  test("the topic's policy and key: CloudWatch may publish for this endpoint's alarms only; CloudWatch and Budgets may use the rotated key", () => {
    const { t, stack } = alone(SageMakerInstanceType.ML_M5_XLARGE, { notify: { emails: ['oncall@example.com'] } });
    const policy = Object.values(t.findResources('AWS::SNS::TopicPolicy'))[0] as any;
    expect(policy.Properties.PolicyDocument.Statement).toContainEqual({
      Sid: 'AllowCloudWatchAlarmsOfThisEndpoint',
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: 'sns:Publish',
      Resource: { Ref: expect.any(String) },
      Condition: {
        StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
        ArnLike: {
          'aws:SourceArn': {
            'Fn::Join': [
              '',
              ['arn:', { Ref: 'AWS::Partition' }, ':cloudwatch:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':alarm:legacy-*'],
            ],
          },
        },
      },
    });
    expect(policy.Properties.PolicyDocument.Statement).toContainEqual({
      Sid: 'AllowPublishThroughSSLOnly',
      Effect: 'Deny',
      Principal: '*',
      Action: 'sns:Publish',
      Resource: { Ref: expect.any(String) },
      Condition: { Bool: { 'aws:SecureTransport': 'false' } },
    });
    const key = Object.values(t.findResources('AWS::KMS::Key'))[0] as any;
    expect(key.Properties.Description).toBe('Encrypts the alarm topic of SageMaker endpoint legacy');
    expect(key.Properties.EnableKeyRotation).toBe(true);
    for (const service of ['cloudwatch.amazonaws.com', 'budgets.amazonaws.com']) {
      expect(key.Properties.KeyPolicy.Statement).toContainEqual({
        Effect: 'Allow',
        Principal: { Service: service },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        Resource: '*',
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
      });
    }
    expect(warnings(stack)).toEqual([]);
  });

  test('subscriptions without e-mails: exactly those; no subscription at all is the RE-AlarmTopicUnsubscribed warning', () => {
    const stack = new Stack();
    const pager = new sns.Topic(stack, 'Pager');
    new EndpointMonitoring(stack, 'M', {
      endpointName: 'legacy',
      variants: [{ variantName: 'AllTraffic', instanceType: SageMakerInstanceType.ML_M5_XLARGE }],
      notify: { subscriptions: [{ bind: () => ({ subscriberId: 'p', endpoint: pager.topicArn, protocol: sns.SubscriptionProtocol.HTTPS }) }] },
    });
    Template.fromStack(stack).resourceCountIs('AWS::SNS::Subscription', 1);
    expect(warnings(stack)).toEqual([]);
    expect(warnings(alone(SageMakerInstanceType.ML_M5_XLARGE).stack).join('\n')).toMatch(/\[ack: Annotation::RE-AlarmTopicUnsubscribed\]/);
  });

  test('the monthly budget: cost of resources tagged with the endpoint, 80 % of actual spend notifies the topic', () => {
    const { t } = alone(SageMakerInstanceType.ML_M5_XLARGE, { monthlyBudgetUsd: 2000 });
    const budget = (Object.values(t.findResources('AWS::Budgets::Budget'))[0] as any).Properties;
    expect(budget).toEqual({
      Budget: {
        BudgetType: 'COST',
        TimeUnit: 'MONTHLY',
        BudgetLimit: { Amount: 2000, Unit: 'USD' },
        CostFilters: { TagKeyValue: ['user:resilient-endpoint$legacy'] },
      },
      NotificationsWithSubscribers: [
        {
          Notification: { NotificationType: 'ACTUAL', ComparisonOperator: 'GREATER_THAN', Threshold: 80, ThresholdType: 'PERCENTAGE' },
          Subscribers: [{ SubscriptionType: 'SNS', Address: { Ref: expect.any(String) } }],
        },
      ],
    });
  });

  describe('AWS Budgets exists in the aws and aws-cn partitions only (botocore endpoints.json; real-account.md item 42)', () => {
    /** A monitoring with a budget in a stack of `region` (undefined: environment-agnostic), with the app's target partitions. */
    const budgetIn = (region: string | undefined, partitions?: string[]) => {
      const app = new App({ context: partitions ? { '@aws-cdk/core:target-partitions': partitions } : {} });
      const stack = new Stack(app, 'Costs', region ? { env: { account: '123456789012', region } } : {});
      new EndpointMonitoring(stack, 'M', {
        endpointName: 'legacy',
        variants: [{ variantName: 'AllTraffic', instanceType: SageMakerInstanceType.ML_M5_XLARGE }],
        monthlyBudgetUsd: 2000,
        dashboard: false,
      });
      return { app, stack };
    };
    const budgetOf = (stack: Stack) => Object.values(Template.fromStack(stack).findResources('AWS::Budgets::Budget'));

    test('a GovCloud stack: a synth error naming the stack, its Region and partition, and the way out', () => {
      const expected =
        /\[Costs\/M\] monitoring\.monthlyBudgetUsd: got 2000 in stack Costs, whose partition aws-us-gov has no AWS Budgets endpoint \(Region us-gov-west-1\); allowed: a stack in the aws or aws-cn partition\. Fix: remove monthlyBudgetUsd, and create the budget where the account is billed \(for GovCloud: in the associated commercial account\)/;
      expect(synthError(budgetIn('us-gov-west-1').app)).toMatch(expected);
      // An environment-agnostic stack that targets GovCloud alone: the same error.
      expect(synthError(budgetIn(undefined, ['aws-us-gov']).app)).toMatch(
        /got 2000 in stack Costs, whose partition aws-us-gov has no AWS Budgets endpoint \(the partitions of @aws-cdk\/core:target-partitions\)/,
      );
    });

    test('a commercial or China stack, or an agnostic one targeting them (cdk init sets aws, aws-cn): the budget, unconditional, no warning', () => {
      for (const { stack } of [budgetIn('eu-west-1'), budgetIn('cn-north-1'), budgetIn(undefined, ['aws', 'aws-cn'])]) {
        const budgets = budgetOf(stack);
        expect(budgets).toHaveLength(1);
        expect(budgets[0].Condition).toBeUndefined();
        expect(warnings(stack).filter(w => /BudgetPartition/.test(w))).toEqual([]);
      }
    });

    test('an environment-agnostic stack that may go to GovCloud: the budget only where Budgets exists (a condition on AWS::Partition), and a warning', () => {
      for (const [partitions, where] of [
        [undefined, 'any partition'],
        [['aws', 'aws-us-gov'], 'aws-us-gov'],
      ] as const) {
        const { stack } = budgetIn(undefined, partitions as string[] | undefined);
        const t = Template.fromStack(stack).toJSON();
        const [budget] = budgetOf(stack);
        expect(t.Conditions[budget.Condition]).toEqual({
          'Fn::Or': [{ 'Fn::Equals': [{ Ref: 'AWS::Partition' }, 'aws'] }, { 'Fn::Equals': [{ Ref: 'AWS::Partition' }, 'aws-cn'] }],
        });
        expect(warnings(stack).join('\n')).toContain(
          `monitoring.monthlyBudgetUsd in the environment-agnostic stack Costs: AWS Budgets exists in the aws and aws-cn partitions only, and this stack may be deployed to ${where}; the budget is created only where Budgets exists`,
        );
      }
    });
  });

  /** The dashboard's body as JSON: a Fn::Join of JSON text and tokens (ARNs, the Region), the tokens as "T". */
  const dashboardOf = (t: Template) => {
    const body = (Object.values(t.findResources('AWS::CloudWatch::Dashboard'))[0] as any).Properties.DashboardBody;
    return JSON.parse(body['Fn::Join'][1].map((p: unknown) => (typeof p === 'string' ? p : 'T')).join(''));
  };
  const widgetsOf = (dash: any) =>
    dash.widgets.map((w: any) =>
      w.type === 'text'
        ? `text ${w.properties.markdown}`
        : w.type === 'alarm'
          ? `alarms ${w.properties.title} ${w.properties.alarms.length}`
          : `graph ${w.properties.title} ${w.width} ${JSON.stringify(w.properties.annotations?.horizontal)}`,
    );
  const line = (v: number) => JSON.stringify([{ value: v, label: 'alarm threshold', color: '#d62728', yAxis: 'left' }]);

  test('a CPU endpoint without application alarms: no GPU graph, no application row; addDashboardRow appends', () => {
    const stack = new Stack();
    const m = new EndpointMonitoring(stack, 'M', {
      endpointName: 'legacy',
      variants: [{ variantName: 'AllTraffic', instanceType: SageMakerInstanceType.ML_M5_XLARGE }],
      applicationAlarms: false,
    });
    m.addDashboardRow(new cloudwatch.TextWidget({ markdown: '## Breaker', width: 24, height: 1 }));
    expect(widgetsOf(dashboardOf(Template.fromStack(stack)))).toEqual([
      'text ## Infrastructure: legacy',
      `graph Host memory % (hottest instance) 8 ${line(85)}`,
      `graph CPU (sum over vCPUs) 8 ${line(360)}`,
      `graph Disk % 8 ${line(75)}`,
      'text ## Business',
      `graph 5XX rate (0-1) 8 ${line(0.01)}`,
      `graph Errors not chosen by the container: dead or hung workers, 5XX (0-1) 8 ${line(0.01)}`,
      `graph P99 model latency (µs) 8 ${line(500000)}`,
      `graph Success rate % 8 ${line(99)}`,
      'text ## Resource efficiency',
      'graph CPU-seconds per million predictions (hourly) 12 undefined',
      'alarms Alarms 8',
      'text ## Breaker',
    ]);
  });

  test('the dashboard: 3 hours by default, a header and a graph per tier with each alarm threshold, then every alarm', () => {
    const { t } = alone(SageMakerInstanceType.ML_G4DN_12XLARGE, { stages: ['inference'] });
    const dash = dashboardOf(t);
    expect(dash.start).toBe('-PT3H');
    expect(widgetsOf(dash)).toEqual([
      'text ## Infrastructure: legacy',
      `graph Host memory % (hottest instance) 8 ${line(85)}`,
      `graph GPU memory (sum over GPUs) 8 ${line(340)}`,
      `graph CPU (sum over vCPUs) 8 ${line(4320)}`,
      `graph Disk % 8 ${line(75)}`,
      'text ## Application: memory per stage',
      `graph Stage-inference-Memory 8 ${line(85)}`,
      'text ## Business',
      `graph 5XX rate (0-1) 8 ${line(0.01)}`,
      `graph Errors not chosen by the container: dead or hung workers, 5XX (0-1) 8 ${line(0.01)}`,
      `graph P99 model latency (µs) 8 ${line(500000)}`,
      `graph Success rate % 8 ${line(99)}`,
      'text ## Resource efficiency',
      'graph CPU-seconds per million predictions (hourly) 12 undefined',
      'alarms Alarms 10',
    ]);
  });
});

describe("incident B's resource efficiency: CPU-seconds per million predictions", () => {
  // Hourly statistics as CloudWatch aggregates them for a variant whose every prediction costs `costMs` of CPU:
  // CPUUtilization Average (per instance, summed over its vCPUs: 100 is one vCPU busy), Invocations Sum,
  // InvocationsPerInstance Sum (each request adds 1/instances).
  const hour = (qps: number, instances: number, costMs: number) => {
    const invocations = qps * 3600;
    const cpuSecondsPerInstance = (invocations * costMs) / 1000 / instances;
    return { CPUUtilization: (100 * cpuSecondsPerInstance) / 3600, Invocations: invocations, InvocationsPerInstance: invocations / instances };
  };
  const synth = (monitoring: Record<string, unknown>, instanceType = SageMakerInstanceType.ML_M5_XLARGE) => {
    const { app, stack } = newStack('Efficiency');
    new ResilientEndpoint(stack, 'E', {
      endpointName: 'clu',
      model: { image },
      instanceType,
      instanceCount: 2,
      monitoring: { notify: { emails: ['a@example.com'] }, ...monitoring },
    });
    return { app, stack };
  };

  test('the alarm at the target: CPU time per million invocations, whatever the vCPUs and the instance count', () => {
    const t = Template.fromStack(synth({ cpuSecondsPerMillionTarget: 100 }).stack);
    const a = alarmNamed(t, '-Primary-efficiency-CpuSecondsPerMillion');
    expect(a).toMatchObject({
      Threshold: 100,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      TreatMissingData: 'notBreaching',
    });
    const stats = a.Metrics.filter((m: any) => m.MetricStat).map((m: any) => [
      m.MetricStat.Metric.Namespace,
      m.MetricStat.Metric.MetricName,
      m.MetricStat.Stat,
      m.MetricStat.Period,
    ]);
    expect(stats.sort()).toEqual([
      ['/aws/sagemaker/Endpoints', 'CPUUtilization', 'Average', 3600],
      ['AWS/SageMaker', 'Invocations', 'Sum', 3600],
      ['AWS/SageMaker', 'InvocationsPerInstance', 'Sum', 3600],
    ]);
    // Incident B's baseline: 120 µs of CPU per prediction is 120 CPU-seconds per million, at any load,
    // instance count or instance size (CPUUtilization is already a sum over vCPUs: no division by them).
    for (const [qps, instances] of [
      [150, 2],
      [150, 4],
      [600, 6],
      [5, 1],
    ])
      expect(evaluateAlarm(a.Metrics, hour(qps, instances, 0.12))).toBeCloseTo(120, 6);
    expect(evaluateAlarm(a.Metrics, hour(150, 4, 0.1))).toBeCloseTo(100, 6); // the post-mortem's target
    // No traffic: no datapoint (missing data, not breaching), not a division by zero.
    expect(evaluateAlarm(a.Metrics, { CPUUtilization: 3, Invocations: 0, InvocationsPerInstance: 0 })).toBeNaN();
  });

  test('not a page nor a rollback alarm: outside the -unhealthy composite and the deployment alarms', () => {
    const { stack } = synth({ cpuSecondsPerMillionTarget: 100 });
    const t = Template.fromStack(stack);
    const composite = Object.values(t.findResources('AWS::CloudWatch::CompositeAlarm')).find((c: any) =>
      /-unhealthy$/.test(c.Properties.AlarmName),
    ) as any;
    expect(JSON.stringify(composite.Properties.AlarmRule)).not.toContain('efficiency');
    expect(alarmNamed(t, '-Primary-efficiency-CpuSecondsPerMillion').AlarmActions).toBeUndefined();
    const withEach = Template.fromStack(synth({ cpuSecondsPerMillionTarget: 100, notifyOnEachAlarm: true }).stack);
    expect(alarmNamed(withEach, '-Primary-efficiency-CpuSecondsPerMillion').AlarmActions).toHaveLength(1);
  });

  test('the dashboard graphs it with or without a target; no alarm without one; a bad target is a synth error', () => {
    const { stack } = synth({});
    const t = Template.fromStack(stack);
    expect(Object.values(t.findResources('AWS::CloudWatch::Alarm')).filter((a: any) => /efficiency/.test(a.Properties.AlarmName))).toEqual([]);
    const body = JSON.stringify(Object.values(t.findResources('AWS::CloudWatch::Dashboard'))[0]);
    expect(body).toContain('## Resource efficiency');
    expect(body).toContain('CPU-seconds per million predictions');
    expect(body).toContain('IF(inv_primary > 0, 1000000 * (cpu_primary / 100) * PERIOD(cpu_primary) * (inv_primary / ipi_primary) / inv_primary)');
    const bad = synth({ cpuSecondsPerMillionTarget: 0 });
    expect(synthError(bad.app)).toMatch(/monitoring.cpuSecondsPerMillionTarget: got 0; allowed: a number from 0.001/);
  });

  test('the metric helper, for an endpoint defined elsewhere', () => {
    const e = new EndpointMetricFactory('ep', 'Blue').cpuSecondsPerMillionPredictions({ period: Duration.hours(6) });
    expect([e.period.toSeconds(), e.label]).toEqual([21600, 'CPU-seconds per million predictions (Blue)']);
    expect(Object.keys(e.usingMetrics).sort()).toEqual(['cpu_blue', 'inv_blue', 'ipi_blue']);
  });
});
