import * as fs from 'fs';
import * as path from 'path';
import { App, Duration } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import { CircuitBreaker, ContainerImage, ResilientEndpoint, SageMakerInstanceType } from '../lib';
import { validateBreaker } from '../lib/breaker/circuit-breaker';
import { RecommenderStack } from '../lib/examples/recommender-stack';
import { evaluateAlarm } from './metric-math';
import { exampleStacks, iamStatements, nagFindings, newStack, synthError } from './util';

/** The statements of the breaker role's policy (the one policy that may change an endpoint's weights). */
function breakerStatements(t: Template): any[] {
  const policies = (Object.values(t.findResources('AWS::IAM::Policy')) as any[]).filter(p =>
    JSON.stringify(p).includes('UpdateEndpointWeightsAndCapacities'),
  );
  expect(policies).toHaveLength(1);
  return policies[0].Properties.PolicyDocument.Statement;
}

describe('recommender example breaker', () => {
  let t: Template;
  let stack: RecommenderStack;
  beforeAll(() => {
    ({ recommender: stack, rec: t } = exampleStacks());
  });

  test('function: Node.js 24 on arm64, no reserved concurrency by default, DLQ, log retention', () => {
    t.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      ReservedConcurrentExecutions: Match.absent(),
      Handler: 'index.handler',
      DeadLetterConfig: { TargetArn: Match.anyValue() },
      Environment: { Variables: Match.objectLike({ PRIMARY_VARIANT: 'Primary', FALLBACK_VARIANT: 'Fallback', GPU_COUNT: '1', DRY_RUN: 'false' }) },
    });
    t.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
  });

  test('the function asset is the pre-built bundle and the notices of the packages in it, nothing else (its hash changes only when the code does)', () => {
    const fn = stack.endpoint.circuitBreaker!.node.findAll().find((c): c is lambda.Function => c instanceof lambda.Function)!;
    const code = fn.node.findAll().find((c): c is s3assets.Asset => c instanceof s3assets.Asset)!;
    expect(fs.readdirSync(path.join(App.of(stack)!.outdir, code.assetPath)).sort()).toEqual(['THIRD-PARTY-NOTICES.txt', 'index.js']);
  });

  test('alarms at 80 % host and GPU memory and 5 % 5XX over 10 minutes', () => {
    const alarms = (Object.values(t.findResources('AWS::CloudWatch::Alarm')) as any[])
      .map(a => a.Properties)
      .filter(p => p.AlarmName.includes('-breaker-'));
    const host = alarms.find(a => a.AlarmName.endsWith('HostMemory'));
    expect(host).toMatchObject({ MetricName: 'MemoryUtilization', Statistic: 'Maximum', Threshold: 80 });
    expect(alarms.find(a => a.AlarmName.endsWith('GpuMemory'))).toMatchObject({ MetricName: 'GPUMemoryUtilization', Threshold: 80 });
    const err = alarms.find(a => a.AlarmName.endsWith('ErrorRate'));
    expect(err.Threshold).toBe(0.05);
    expect(JSON.stringify(err.Metrics)).toMatch(/"Period":600/);
  });

  test("the error trigger counts dead workers (model errors less the container's deliberate 4XX), 0 below 20 invocations (the policy's minimum)", () => {
    const err = (Object.values(t.findResources('AWS::CloudWatch::Alarm')) as any[]).find(a => a.Properties.AlarmName.endsWith('breaker-ErrorRate'));
    const expr = err.Properties.Metrics.find((q: any) => q.Expression && q.ReturnData !== false);
    expect(expr).toMatchObject({ Expression: 'IF(inv >= 20, dead / inv, 0)', ReturnData: true });
    expect(
      err.Properties.Metrics.filter((q: any) => q.MetricStat).map((q: any) => [
        q.MetricStat.Metric.Namespace,
        q.MetricStat.Metric.MetricName,
        q.MetricStat.Stat,
      ]),
    ).toEqual([
      ['AWS/SageMaker', 'InvocationModelErrors', 'Sum'],
      ['ResilientEndpoint/Application', 'DeliberateClientErrors', 'Sum'],
      ['AWS/SageMaker', 'Invocation4XXErrors', 'Sum'],
      ['AWS/SageMaker', 'Invocations', 'Sum'],
    ]);
    // 10-minute Sums, as CloudWatch aggregates them.
    const at = (v: Record<string, number>) => evaluateAlarm(err.Properties.Metrics, { Invocation5XXErrors: 0, ...v });
    // A container dies while 5XX stays flat: 60 broken connections of 1,000.
    expect(at({ Invocations: 1000, InvocationModelErrors: 60, Invocation4XXErrors: 0, DeliberateClientErrors: 0 })).toBeCloseTo(0.06);
    // Deaths surfacing as 4XX: 100 4XX of which the container chose 40.
    expect(at({ Invocations: 1000, InvocationModelErrors: 100, Invocation4XXErrors: 100, DeliberateClientErrors: 40 })).toBeCloseTo(0.06);
    // Only the container's own refusals: nothing.
    expect(at({ Invocations: 1000, InvocationModelErrors: 100, Invocation4XXErrors: 100, DeliberateClientErrors: 100 })).toBe(0);
    expect(at({ Invocations: 19, InvocationModelErrors: 19, Invocation4XXErrors: 0, DeliberateClientErrors: 0 })).toBe(0);
  });

  test("the guard's triggers: its pressure at 80 % and any memory refusal, 10-s high-resolution alarms in the application namespace", () => {
    const alarms = (Object.values(t.findResources('AWS::CloudWatch::Alarm')) as any[]).map(a => a.Properties);
    const dims = [
      { Name: 'EndpointName', Value: stack.endpoint.endpointName },
      { Name: 'VariantName', Value: 'Primary' },
    ];
    expect(alarms.find(a => a.AlarmName.endsWith('breaker-GuardPressure'))).toMatchObject({
      Namespace: 'ResilientEndpoint/Application',
      MetricName: 'GuardPressure',
      Statistic: 'Maximum',
      Period: 10,
      Threshold: 80,
      Dimensions: dims,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(alarms.find(a => a.AlarmName.endsWith('breaker-GuardMemoryRefusals'))).toMatchObject({
      Namespace: 'ResilientEndpoint/Application',
      MetricName: 'GuardMemoryRefusals',
      Statistic: 'Sum',
      Period: 10,
      Threshold: 1,
      Dimensions: dims,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    // The alarm rule delivers their state changes to the function.
    const rule = (Object.values(t.findResources('AWS::Events::Rule')) as any[]).find(
      r => r.Properties.EventPattern?.source?.[0] === 'aws.cloudwatch',
    );
    const guardAlarms = Object.entries(t.findResources('AWS::CloudWatch::Alarm'))
      .filter(([, a]: [string, any]) => /breaker-Guard/.test(a.Properties.AlarmName))
      .map(([id]) => id);
    expect(guardAlarms).toHaveLength(2);
    for (const id of guardAlarms) expect(JSON.stringify(rule.Properties.EventPattern.resources)).toContain(id);
    // The function reads them in that namespace.
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ APPLICATION_NAMESPACE: 'ResilientEndpoint/Application' }) },
    });
  });

  test('both rules deliver to the function, retried twice, then to the dead-letter queue', () => {
    const rules = Object.values(t.findResources('AWS::Events::Rule')) as any[];
    const fn = Object.keys(t.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler' } }));
    const own = rules.filter(
      r => r.Properties.ScheduleExpression === 'rate(1 minute)' || r.Properties.EventPattern?.source?.[0] === 'aws.cloudwatch',
    );
    expect(own).toHaveLength(2);
    for (const r of own) {
      expect(r.Properties.Targets).toEqual([
        expect.objectContaining({
          Arn: { 'Fn::GetAtt': [expect.stringMatching(new RegExp(`^(${fn.join('|')})$`)), 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 2 },
          DeadLetterConfig: { Arn: expect.anything() },
        }),
      ]);
    }
  });

  test('EventBridge rule on those alarms and a 1-minute schedule, both to the function', () => {
    t.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.cloudwatch'],
        'detail-type': ['CloudWatch Alarm State Change'],
        resources: Match.arrayWith([{ 'Fn::GetAtt': [Match.stringLikeRegexp('CircuitBreakerHostMemory'), 'Arn'] }]),
      },
    });
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 minute)' });
  });

  test('role: SageMaker actions on this endpoint ARN only, SSM on its parameter only', () => {
    const policies = (Object.values(t.findResources('AWS::IAM::Policy')) as any[]).filter(p =>
      JSON.stringify(p).includes('UpdateEndpointWeightsAndCapacities'),
    );
    expect(policies).toHaveLength(1);
    const statements = policies[0].Properties.PolicyDocument.Statement as any[];
    const sm = statements.find(s => JSON.stringify(s.Action).includes('sagemaker:'));
    expect(sm.Action).toEqual(['sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpointWeightsAndCapacities']);
    expect(sm.Resource).toEqual({ Ref: stack.getLogicalId(stack.endpoint.cfnEndpoint) }); // the endpoint's ARN
    expect(JSON.stringify(sm.Resource)).not.toContain('*');
    for (const s of statements.filter(x => JSON.stringify(x.Action).includes('ssm:'))) {
      expect(JSON.stringify(s.Resource)).toMatch(/parameter/);
      expect(JSON.stringify(s.Resource)).not.toContain('*');
    }
    const wild = statements.filter(s => s.Resource === '*');
    expect(wild.flatMap(s => [s.Action].flat()).sort()).toEqual([
      'application-autoscaling:DescribeScalableTargets',
      'cloudwatch:DescribeAlarms',
      'cloudwatch:GetMetricData',
    ]); // read-only
  });

  test('the container learns where its degrade level is and may read it', () => {
    t.hasResourceProperties('AWS::SageMaker::Model', {
      PrimaryContainer: Match.objectLike({
        Environment: Match.objectLike({ RESILIENT_ENDPOINT_DEGRADE_PARAMETER: { Ref: Match.stringLikeRegexp('CircuitBreakerState') } }),
      }),
    });
    t.hasResourceProperties('AWS::SSM::Parameter', { Type: 'String', Value: Match.stringLikeRegexp('"level":0') });
  });

  test('dashboard shows the breaker state; cdk-nag clean', () => {
    expect(JSON.stringify(t.findResources('AWS::CloudWatch::Dashboard'))).toContain('BreakerState');
    expect(nagFindings(stack)).toEqual([]);
  });
});

test('usable alone for any endpoint; dry run; reserved concurrency only when asked', () => {
  const { stack } = newStack();
  new CircuitBreaker(stack, 'B', {
    endpointName: 'legacy',
    primaryVariantName: 'AllTraffic',
    primaryInstanceType: SageMakerInstanceType.ML_M5_XLARGE,
    dryRun: true,
    reservedConcurrency: 1,
  });
  const t = Template.fromStack(stack);
  t.hasResourceProperties('AWS::Lambda::Function', {
    ReservedConcurrentExecutions: 1,
    Environment: { Variables: Match.objectLike({ DRY_RUN: 'true', FALLBACK_VARIANT: '', GPU_COUNT: '0', ERROR_WINDOW_SECONDS: '600' }) },
  });
  expect((Object.values(t.findResources('AWS::CloudWatch::Alarm')) as any[]).map(a => a.Properties.AlarmName).sort()).toEqual([
    'legacy-AllTraffic-breaker-ErrorRate',
    'legacy-AllTraffic-breaker-GuardMemoryRefusals',
    'legacy-AllTraffic-breaker-GuardPressure',
    'legacy-AllTraffic-breaker-HostMemory',
  ]);
  // No autoscaling, no capacity actions: none of what Application Auto Scaling validates is granted.
  const actions = iamStatements(t).flatMap(s => [s.Action].flat());
  expect(actions.filter(a => /DescribeEndpointConfig|DescribeAlarms|PutMetricAlarm|DeleteAlarms|RegisterScalableTarget/.test(a))).toEqual([]);
});

test('invalid thresholds fail synthesis with every error', () => {
  const { app, stack } = newStack();
  new ResilientEndpoint(stack, 'E', {
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    circuitBreaker: { degradeAtPercent: 60, recoverBelowPercent: 75, recoverySteps: 0, recoveryDwell: Duration.hours(1) },
  });
  const msg = synthError(app);
  expect(msg).toMatch(
    /circuitBreaker thresholds: got recover 75 \/ degrade 60 \/ critical 95; allowed: recoverBelowPercent < degradeAtPercent < criticalAtPercent/,
  );
  expect(msg).toMatch(/circuitBreaker\.recoverySteps: got 0/);
  expect(msg).toMatch(/circuitBreaker\.recoveryDwell \(s\): got 3600/);
});

describe('seeing memory within seconds; acting while the endpoint is Updating', () => {
  let t: Template;
  beforeAll(() => {
    ({ rec: t } = exampleStacks());
  });

  test('the endpoint config publishes every 10 s with enhanced (per-instance, per-GPU) metrics; detailed observability stays off', () => {
    t.hasResourceProperties('AWS::SageMaker::EndpointConfig', {
      MetricsConfig: { MetricPublishFrequencyInSeconds: 10, EnableEnhancedMetrics: true, EnableDetailedObservability: false },
    });
  });

  test('memory triggers are high-resolution alarms on one 10-s period; the function reads at that period', () => {
    const alarms = (Object.values(t.findResources('AWS::CloudWatch::Alarm')) as any[])
      .map(a => a.Properties)
      .filter(p => JSON.stringify(p.AlarmName).includes('-breaker-'));
    const host = alarms.find(a => JSON.stringify(a.AlarmName).includes('HostMemory'));
    expect(host).toMatchObject({ Period: 10, EvaluationPeriods: 1, Threshold: 80 });
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ METRIC_PERIOD_SECONDS: '10', PER_GPU_METRICS: 'true' }) },
    });
  });

  test('SageMaker endpoint state changes of this endpoint trigger an evaluation (weights refused while Updating are retried at once)', () => {
    t.hasResourceProperties('AWS::Events::Rule', {
      // Status changes and capacity / deployment updates (the second is what a scale-out reports).
      EventPattern: {
        source: ['aws.sagemaker'],
        'detail-type': ['SageMaker Endpoint State Change', 'SageMaker Endpoint Deployment State Change'],
        detail: { EndpointName: [Match.anyValue()] },
      },
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('CircuitBreakerFunction'), 'Arn'] } })],
    });
  });

  test('state in a DynamoDB table (PITR, encrypted) the function may only get and put; capacity bounds passed to the function', () => {
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
    const statements = iamStatements(t);
    const ddb = statements.find(s => JSON.stringify(s.Action).includes('dynamodb:'));
    expect(ddb.Action).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem']);
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          PRIMARY_CAPACITY: JSON.stringify({ min: 2, max: 6, qpsPerInstance: 50 }),
          FALLBACK_CAPACITY: JSON.stringify({ min: 1, max: 6, qpsPerInstance: 500 }),
          TABLE_NAME: { Ref: Match.stringLikeRegexp('CircuitBreakerStateTable') },
        }),
      },
    });
  });

  test('capacity actions: what Application Auto Scaling validates before it changes a SageMaker target, scoped as AWS scopes it', () => {
    // AAS user guide security_iam_permission_validation / security_iam_id-based-policy-examples ("SageMaker endpoints");
    // the alarm writes as AmazonSageMakerCanvasFullAccess scopes them (real-account.md item 36).
    // The breaker role's policy (the one that may change the endpoint's weights).
    const statements = breakerStatements(t);
    const find = (action: string) => statements.filter(s => [s.Action].flat().includes(action));
    const config = find('sagemaker:DescribeEndpointConfig');
    expect(config).toEqual([{ Action: 'sagemaker:DescribeEndpointConfig', Effect: 'Allow', Resource: expect.anything() }]);
    expect(JSON.stringify(config[0].Resource)).toMatch(/:sagemaker:us-east-1:",\{"Ref":"AWS::AccountId"\},":endpoint-config\/\*"/);
    expect(find('cloudwatch:DescribeAlarms').map(s => s.Resource)).toEqual(['*']); // the validation lists alarms without naming one
    const writes = find('cloudwatch:PutMetricAlarm');
    expect(writes).toEqual([
      {
        Action: ['cloudwatch:DeleteAlarms', 'cloudwatch:PutMetricAlarm'],
        Effect: 'Allow',
        Resource: expect.anything(),
        Condition: { StringEquals: { 'aws:CalledViaLast': 'application-autoscaling.amazonaws.com' } },
      },
    ]);
    expect(JSON.stringify(writes[0].Resource)).toMatch(/:cloudwatch:us-east-1:",\{"Ref":"AWS::AccountId"\},":alarm:TargetTracking\*"/);
    // UpdateEndpointWeightsAndCapacities and DescribeEndpoint: the breaker's own statement, on this endpoint only.
    expect(statements.filter(s => JSON.stringify(s.Action).includes('UpdateEndpointWeightsAndCapacities'))).toHaveLength(1);
  });

  test('capacity actions: RegisterScalableTarget only on the scalable targets tagged for this breaker', () => {
    const statements = iamStatements(t);
    const aas = statements.find(s => s.Action === 'application-autoscaling:RegisterScalableTarget');
    const [[tagKey, tagValue]] = Object.entries(aas.Condition.StringEquals) as [string, string][];
    expect(tagKey).toBe('aws:ResourceTag/resilient-endpoint:circuit-breaker');
    const targets = Object.values(t.findResources('AWS::ApplicationAutoScaling::ScalableTarget')) as any[];
    expect(targets).toHaveLength(2);
    for (const target of targets)
      expect(target.Properties.Tags).toEqual(expect.arrayContaining([{ Key: 'resilient-endpoint:circuit-breaker', Value: tagValue }]));
  });
});

test('a primary with scheduled actions tells the function so (it holds scheduled scaling while not CLOSED); a fallback without them does not', () => {
  const { stack } = newStack();
  new ResilientEndpoint(stack, 'E', {
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    instanceCount: 2,
    autoScaling: {
      capacity: { min: 2, max: 6 },
      schedules: [{ schedule: appscaling.Schedule.cron({ hour: '22', minute: '0' }), minCapacity: 2, maxCapacity: 2 }],
    },
    fallback: { model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') }, instanceCount: 1 },
  });
  const env = (Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function')) as any[])
    .map(f => f.Properties.Environment?.Variables ?? {})
    .find(v => v.PRIMARY_CAPACITY);
  expect(JSON.parse(env.PRIMARY_CAPACITY)).toEqual({ min: 2, max: 6, qpsPerInstance: 150, scheduled: true });
  expect(JSON.parse(env.FALLBACK_CAPACITY)).not.toHaveProperty('scheduled');
});

test('multi-GPU types alarm on the hottest GPU (Metrics Insights MAX over per-GPU series) as well as the summed metric', () => {
  const { stack } = newStack();
  new ResilientEndpoint(stack, 'E', {
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
    instanceType: SageMakerInstanceType.ML_G4DN_12XLARGE,
  });
  const alarms = (Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm')) as any[]).map(a => a.Properties);
  const hottest = alarms.filter(a => JSON.stringify(a.Metrics ?? '').includes('SELECT MAX(GPUMemoryUtilization)'));
  expect(hottest.map(a => a.Threshold).sort()).toEqual([80, 85]); // breaker trigger and infrastructure alarm, per GPU (0–100)
  for (const a of hottest) {
    expect(a.Metrics).toEqual([
      expect.objectContaining({
        Expression: expect.stringMatching(
          /^SELECT MAX\(GPUMemoryUtilization\) FROM SCHEMA\("\/aws\/sagemaker\/Endpoints", AcceleratorId, EndpointName, InstanceId, VariantName\) WHERE EndpointName = '.+' AND VariantName = 'Primary'$/,
        ),
        Period: expect.any(Number),
      }),
    ]);
  }
  // The summed metric stays: 85 % of 4 GPUs for the infrastructure alarm, 80 % of 4 for the breaker's trigger.
  expect(
    alarms
      .filter(a => a.MetricName === 'GPUMemoryUtilization')
      .map(a => a.Threshold)
      .sort(),
  ).toEqual([320, 340]);
});

test('metric publishing: opt out to 1-minute standard metrics; other periods are rejected', () => {
  const { app, stack } = newStack();
  new ResilientEndpoint(stack, 'E', {
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    metricPublishing: { frequency: Duration.minutes(1), enhancedMetrics: false },
  });
  Template.fromStack(stack).hasResourceProperties('AWS::SageMaker::EndpointConfig', {
    MetricsConfig: { MetricPublishFrequencyInSeconds: 60, EnableEnhancedMetrics: false, EnableDetailedObservability: false },
  });
  expect(synthError(app)).toBe('');
  const bad = newStack();
  new ResilientEndpoint(bad.stack, 'E', {
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    metricPublishing: { frequency: Duration.seconds(15) },
  });
  expect(synthError(bad.app)).toMatch(/metricPublishing\.frequency \(s\): got 15; allowed: 10, 30, 60, 120, 180, 240, 300/);
});

test('on 4 GPUs the summed GPU metric alarms at 4 × the level, the hottest single GPU at the level itself', () => {
  const { stack } = newStack();
  new ResilientEndpoint(stack, 'E', {
    endpointName: 'big',
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
    instanceType: SageMakerInstanceType.ML_G4DN_12XLARGE,
    circuitBreaker: { degradeAtPercent: 75 },
  });
  const alarms = (Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm')) as any[]).map(a => a.Properties);
  expect(alarms.find(a => a.AlarmName === 'big-Primary-breaker-GpuMemory')).toMatchObject({ MetricName: 'GPUMemoryUtilization', Threshold: 300 });
  expect(alarms.find(a => a.AlarmName === 'big-Primary-breaker-HottestGpuMemory')).toMatchObject({ Threshold: 75 });
});

test('every trigger alarm of the breaker, exactly: metric, period, threshold, description (4 GPUs, per-GPU metrics, 10-s data)', () => {
  const { stack } = newStack();
  new ResilientEndpoint(stack, 'E', {
    endpointName: 'big',
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
    instanceType: SageMakerInstanceType.ML_G4DN_12XLARGE,
    circuitBreaker: { degradeAtPercent: 75, errorRateThresholdPercent: 7, minInvocations: 30 },
  });
  const alarms = (Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm')) as any[])
    .map(a => a.Properties)
    .filter(a => String(a.AlarmName).includes('-breaker-'))
    .sort((a, b) => String(a.AlarmName).localeCompare(String(b.AlarmName)));
  const common = {
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    EvaluationPeriods: 1,
    DatapointsToAlarm: 1,
    TreatMissingData: 'notBreaching', // only a trigger: the function holds its state on missing data
    Tags: [{ Key: 'resilient-endpoint', Value: 'big' }],
  };
  const dims = [
    { Name: 'EndpointName', Value: 'big' },
    { Name: 'VariantName', Value: 'Primary' },
  ];
  const instance = (MetricName: string) => ({
    Namespace: '/aws/sagemaker/Endpoints',
    MetricName,
    Statistic: 'Maximum',
    Period: 10,
    Dimensions: dims,
  });
  expect(alarms).toEqual([
    // no actions: a trigger pages nobody
    {
      ...common,
      AlarmName: 'big-Primary-breaker-ErrorRate',
      AlarmDescription:
        'Breaker trigger: errors the container did not choose (dead or hung workers, timeouts, 5XX: InvocationModelErrors - DeliberateClientErrors) >= 7 % over 10 minutes.',
      Threshold: 0.07,
      Metrics: [
        { Id: 'expr_1', Label: 'Errors not chosen by the container over 10 minutes', Expression: 'IF(inv >= 30, dead / inv, 0)', ReturnData: true },
        {
          Id: 'dead',
          Label: 'Errors not chosen by the container (dead or hung workers, 5XX)',
          Expression:
            'IF((merr_primary - IF(FILL(dce_primary, -1) >= 0, FILL(dce_primary, 0), e4_primary)) > 0, (merr_primary - IF(FILL(dce_primary, -1) >= 0, FILL(dce_primary, 0), e4_primary)), 0)',
          ReturnData: false,
        },
        {
          Id: 'merr_primary',
          ReturnData: false,
          MetricStat: { Metric: { Namespace: 'AWS/SageMaker', MetricName: 'InvocationModelErrors', Dimensions: dims }, Period: 600, Stat: 'Sum' },
        },
        {
          Id: 'dce_primary',
          ReturnData: false,
          MetricStat: {
            Metric: { Namespace: 'ResilientEndpoint/Application', MetricName: 'DeliberateClientErrors', Dimensions: dims },
            Period: 600,
            Stat: 'Sum',
          },
        },
        {
          Id: 'e4_primary',
          ReturnData: false,
          MetricStat: { Metric: { Namespace: 'AWS/SageMaker', MetricName: 'Invocation4XXErrors', Dimensions: dims }, Period: 600, Stat: 'Sum' },
        },
        {
          Id: 'inv',
          ReturnData: false,
          MetricStat: { Metric: { Namespace: 'AWS/SageMaker', MetricName: 'Invocations', Dimensions: dims }, Period: 600, Stat: 'Sum' },
        },
      ],
    },
    {
      ...common,
      ...instance('GPUMemoryUtilization'),
      AlarmName: 'big-Primary-breaker-GpuMemory',
      AlarmDescription: 'Breaker trigger: GPU memory >= 75 % of 4 GPU(s) (threshold 300 on the summed metric).',
      Threshold: 300,
    },
    {
      ...common,
      Namespace: 'ResilientEndpoint/Application',
      MetricName: 'GuardMemoryRefusals',
      Statistic: 'Sum',
      Period: 10,
      Dimensions: dims,
      AlarmName: 'big-Primary-breaker-GuardMemoryRefusals',
      AlarmDescription:
        'Breaker trigger: the container guard refused a request for memory on Primary: the breaker evaluates (it degrades at 1 % of requests, or on refusals that recur while memory confirms) (ResilientEndpoint/Application).',
      Threshold: 1,
    },
    {
      ...common,
      Namespace: 'ResilientEndpoint/Application',
      MetricName: 'GuardPressure',
      Statistic: 'Maximum',
      Period: 10,
      Dimensions: dims,
      AlarmName: 'big-Primary-breaker-GuardPressure',
      AlarmDescription:
        "Breaker trigger: the container guard's pressure >= 75 % of the container's memory budget on the hottest instance of Primary (ResilientEndpoint/Application).",
      Threshold: 75,
    },
    {
      ...common,
      ...instance('MemoryUtilization'),
      AlarmName: 'big-Primary-breaker-HostMemory',
      AlarmDescription: 'Breaker trigger: host memory >= 75 % on the hottest instance of Primary.',
      Threshold: 75,
    },
    {
      ...common,
      AlarmName: 'big-Primary-breaker-HottestGpuMemory',
      AlarmDescription: 'Breaker trigger: one GPU of 4 at >= 75 % memory (per-GPU enhanced metrics, Metrics Insights MAX).',
      Threshold: 75,
      Metrics: [
        {
          Id: 'expr_1',
          Label: 'Hottest GPU memory (%)',
          Period: 60,
          ReturnData: true,
          Expression:
            "SELECT MAX(GPUMemoryUtilization) FROM SCHEMA(\"/aws/sagemaker/Endpoints\", AcceleratorId, EndpointName, InstanceId, VariantName) WHERE EndpointName = 'big' AND VariantName = 'Primary'",
        },
      ],
    },
  ]);
});

test("the breaker's own metrics and dashboard widgets", () => {
  const { stack } = newStack();
  const e = new ResilientEndpoint(stack, 'E', {
    endpointName: 'ep',
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
  });
  const b = e.circuitBreaker!;
  const shape = (m: any) => [m.namespace, m.metricName, m.statistic, m.period.toSeconds(), m.dimensions];
  expect([b.metricState(), b.metricDegradeLevel(), b.metricFallbackShare()].map(shape)).toEqual([
    ['ResilientEndpoint/CircuitBreaker', 'BreakerState', 'Maximum', 60, { EndpointName: 'ep' }],
    ['ResilientEndpoint/CircuitBreaker', 'DegradeLevel', 'Maximum', 60, { EndpointName: 'ep' }],
    ['ResilientEndpoint/CircuitBreaker', 'FallbackSharePercent', 'Maximum', 60, { EndpointName: 'ep' }],
  ]);
  expect(shape(b.metricState({ period: Duration.minutes(5), statistic: 'Average' }))).toEqual([
    'ResilientEndpoint/CircuitBreaker',
    'BreakerState',
    'Average',
    300,
    { EndpointName: 'ep' },
  ]);
  const widgets = b.dashboardWidgets().map(w => JSON.parse(JSON.stringify(stack.resolve(w.toJson()))));
  expect(widgets.map(w => [w[0].type, w[0].width, w[0].properties.title ?? w[0].properties.markdown, w[0].properties.yAxis?.left])).toEqual([
    ['text', 24, '## Circuit breaker (0 CLOSED, 1 DEGRADED, 2 OPEN, 3 RECOVERING)', undefined],
    ['metric', 12, 'Breaker state', { min: 0, max: 3 }],
    ['metric', 12, 'Traffic on fallback (%)', { min: 0, max: 100 }],
  ]);
  expect(widgets[1][0].properties.metrics).toEqual([
    ['ResilientEndpoint/CircuitBreaker', 'BreakerState', 'EndpointName', 'ep', { stat: 'Maximum', period: 60 }],
  ]);
  expect(widgets[2][0].properties.metrics).toEqual([
    ['ResilientEndpoint/CircuitBreaker', 'FallbackSharePercent', 'EndpointName', 'ep', { stat: 'Maximum', period: 60 }],
  ]);
});

test('on one GPU the breaker triggers on host and GPU memory and the 5XX rate only (no hottest-GPU query)', () => {
  const { stack } = newStack();
  new ResilientEndpoint(stack, 'E', {
    endpointName: 'one',
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
    instanceType: SageMakerInstanceType.ML_G4DN_XLARGE,
  });
  const names = (Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm')) as any[])
    .map(a => String(a.Properties.AlarmName))
    .filter(n => n.includes('-breaker-'))
    .sort();
  expect(names).toEqual([
    'one-Primary-breaker-ErrorRate',
    'one-Primary-breaker-GpuMemory',
    'one-Primary-breaker-GuardMemoryRefusals',
    'one-Primary-breaker-GuardPressure',
    'one-Primary-breaker-HostMemory',
  ]);
});

describe('validateBreaker: each rule with its exact message', () => {
  const check = (p: Parameters<typeof validateBreaker>[0]) => validateBreaker(p).all;
  test.each<[string, Parameters<typeof validateBreaker>[0], string[]]>([
    ['nothing set', {}, []],
    [
      'every bound at its edge',
      {
        degradeAtPercent: 2,
        criticalAtPercent: 100,
        recoverBelowPercent: 1.01,
        errorRateThresholdPercent: 100,
        degradedFallbackSharePercent: 100,
        recoverySteps: 20,
        minInvocations: 1,
        minDwell: Duration.minutes(60),
        recoveryDwell: Duration.minutes(15),
        maxFailedProbes: 0,
        maxProbeWait: Duration.days(1),
        recoveryStepInterval: Duration.minutes(1),
        reservedConcurrency: 1000,
      },
      [],
    ],
    [
      'a percentage of 0',
      { errorRateThresholdPercent: 0 },
      ['circuitBreaker.errorRateThresholdPercent: got 0; allowed: a number from 1 to 100. Fix: give a percentage from 1 to 100'],
    ],
    [
      'each level out of range',
      { recoverBelowPercent: 0, degradeAtPercent: 101, criticalAtPercent: 102 },
      [
        'circuitBreaker.degradeAtPercent: got 101; allowed: a number from 1 to 100. Fix: give a percentage from 1 to 100',
        'circuitBreaker.criticalAtPercent: got 102; allowed: a number from 1 to 100. Fix: give a percentage from 1 to 100',
        'circuitBreaker.recoverBelowPercent: got 0; allowed: a number from 1 to 100. Fix: give a percentage from 1 to 100',
      ],
    ],
    [
      'memory levels from 0 to 1 (fractions for percentages): once each, no hysteresis error on top; 1 % of errors or of traffic is allowed',
      { recoverBelowPercent: 0.7, degradeAtPercent: 0.8, criticalAtPercent: 1, errorRateThresholdPercent: 1, degradedFallbackSharePercent: 1 },
      [
        'circuitBreaker.degradeAtPercent: got 0.8 (0.8 %: a fraction given for 80 %?); allowed: a percentage above 1 and at most 100, in percent (not a fraction). Fix: give 80 for 80 %',
        'circuitBreaker.criticalAtPercent: got 1 (1 %: a fraction given for 100 %?); allowed: a percentage above 1 and at most 100, in percent (not a fraction). Fix: give 100 for 100 %',
        'circuitBreaker.recoverBelowPercent: got 0.7 (0.7 %: a fraction given for 70 %?); allowed: a percentage above 1 and at most 100, in percent (not a fraction). Fix: give 70 for 70 %',
      ],
    ],
    [
      'error rate and share below 1 %: fractions',
      { errorRateThresholdPercent: 0.05, degradedFallbackSharePercent: 0.5 },
      [
        'circuitBreaker.errorRateThresholdPercent: got 0.05 (0.05 %: a fraction given for 5 %?); allowed: a percentage from 1 to 100, in percent (not a fraction). Fix: give 5 for 5 %',
        'circuitBreaker.degradedFallbackSharePercent: got 0.5 (0.5 %: a fraction given for 50 %?); allowed: a percentage from 1 to 100, in percent (not a fraction). Fix: give 50 for 50 %',
      ],
    ],
    [
      'a share over 100 %',
      { degradedFallbackSharePercent: 101 },
      ['circuitBreaker.degradedFallbackSharePercent: got 101; allowed: a number from 1 to 100. Fix: give a share from 1 to 100 %'],
    ],
    [
      'recovery at the degrade level',
      { recoverBelowPercent: 80 },
      [
        'circuitBreaker thresholds: got recover 80 / degrade 80 / critical 95; allowed: recoverBelowPercent < degradeAtPercent < criticalAtPercent (hysteresis). Fix: e.g. 70 / 80 / 95',
      ],
    ],
    [
      '21 recovery steps',
      { recoverySteps: 21 },
      ['circuitBreaker.recoverySteps: got 21; allowed: an integer from 1 to 20. Fix: give a whole number of steps, e.g. 3'],
    ],
    [
      'half an invocation',
      { minInvocations: 0.5 },
      ['circuitBreaker.minInvocations: got 0.5; allowed: an integer from 1 to 1000000000. Fix: give a whole number, e.g. 20'],
    ],
    [
      'a dwell of 30 s',
      { minDwell: Duration.seconds(30) },
      ['circuitBreaker.minDwell (s): got 30; allowed: a number from 60 to 3600. Fix: use Duration.minutes(1..60)'],
    ],
    [
      'a recovery dwell of 16 min',
      { recoveryDwell: Duration.minutes(16) },
      [
        'circuitBreaker.recoveryDwell (s): got 960; allowed: a number from 60 to 900. Fix: use Duration.minutes(1..15): the breaker reads 15 minutes of history',
      ],
    ],
    [
      'a fractional probe count',
      { maxFailedProbes: 1.5 },
      ['circuitBreaker.maxFailedProbes: got 1.5; allowed: an integer from 0 to 100. Fix: give a whole number of probes, e.g. 3'],
    ],
    [
      'a probe wait of 2 days',
      { maxProbeWait: Duration.days(2) },
      ['circuitBreaker.maxProbeWait (s): got 172800; allowed: a number from 300 to 86400. Fix: use Duration.minutes(5)..Duration.days(1)'],
    ],
    [
      'a step interval of 2 hours',
      { recoveryStepInterval: Duration.hours(2) },
      ['circuitBreaker.recoveryStepInterval (s): got 7200; allowed: a number from 60 to 3600. Fix: use Duration.minutes(1..60)'],
    ],
    [
      'a fractional concurrency',
      { reservedConcurrency: 1.5 },
      [
        'circuitBreaker.reservedConcurrency: got 1.5; allowed: an integer from 1 to 1000. Fix: give a whole number of executions, e.g. 1, or leave it unset',
      ],
    ],
  ])('%s', (_name, p, expected) => {
    expect(check(p)).toEqual(expected);
  });
});

test("the breaker's trigger alarms as a property, and grantReadLevel gives a role read access to the level parameter alone", () => {
  const { stack } = newStack();
  const e = new ResilientEndpoint(stack, 'E', {
    endpointName: 'ep',
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
  });
  const b = e.circuitBreaker!;
  expect(b.alarms.map(a => a instanceof cloudwatch.Alarm && (a.node.defaultChild as cloudwatch.CfnAlarm).alarmName)).toEqual([
    'ep-Primary-breaker-HostMemory',
    'ep-Primary-breaker-GuardPressure',
    'ep-Primary-breaker-GuardMemoryRefusals',
    'ep-Primary-breaker-ErrorRate',
  ]);
  const reader = new iam.Role(stack, 'Reader', { assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com') });
  expect(b.grantReadLevel(reader).success).toBe(true);
  const t = Template.fromStack(stack);
  const [policy] = Object.values(
    t.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: stack.getLogicalId(reader.node.defaultChild as iam.CfnRole) }] } }),
  );
  expect(policy.Properties.PolicyDocument.Statement).toEqual([
    expect.objectContaining({
      Effect: 'Allow',
      Action: expect.arrayContaining(['ssm:GetParameter']),
      Resource: expect.objectContaining({
        'Fn::Join': expect.arrayContaining([
          expect.arrayContaining([{ Ref: stack.getLogicalId(b.parameter.node.defaultChild as ssm.CfnParameter) }]),
        ]),
      }),
    }),
  ]);
});

test('the container learns the application namespace and may publish its guard metrics there whenever the breaker is on, with or without the application alarms', () => {
  const { stack } = newStack();
  const image = ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1');
  const type = SageMakerInstanceType.ML_M5_XLARGE;
  new ResilientEndpoint(stack, 'NoMonitoring', { endpointName: 'a', model: { image }, instanceType: type, monitoring: { enabled: false } });
  new ResilientEndpoint(stack, 'NoAppAlarms', {
    endpointName: 'b',
    model: { image },
    instanceType: type,
    monitoring: { applicationAlarms: false, applicationNamespace: 'Mine/App' },
  });
  new ResilientEndpoint(stack, 'Neither', {
    endpointName: 'c',
    model: { image },
    instanceType: type,
    monitoring: { enabled: false },
    circuitBreaker: { enabled: false },
  });
  const t = Template.fromStack(stack).toJSON();
  const resources = Object.values(t.Resources as Record<string, any>);
  const namespaceOf = (endpoint: string) =>
    resources
      .filter(r => r.Type === 'AWS::SageMaker::Model' && r.Properties.PrimaryContainer.Environment.RESILIENT_ENDPOINT_NAME === endpoint)
      .map(r => r.Properties.PrimaryContainer.Environment.RESILIENT_ENDPOINT_METRICS_NAMESPACE);
  expect(namespaceOf('a')).toEqual(['ResilientEndpoint/Application']);
  expect(namespaceOf('b')).toEqual(['Mine/App']);
  expect(namespaceOf('c')).toEqual([undefined]);
  const put = iamStatements(t).filter(s => s.Action === 'cloudwatch:PutMetricData' && s.Condition?.StringEquals);
  expect(put.map(s => s.Condition.StringEquals['cloudwatch:namespace']).sort()).toEqual(['Mine/App', 'ResilientEndpoint/Application']);
  // The function of b reads the guard's metrics in b's namespace.
  const fnEnv = resources.filter(r => r.Type === 'AWS::Lambda::Function').map(r => r.Properties.Environment?.Variables ?? {});
  expect(fnEnv.filter(v => v.ENDPOINT_NAME === 'b').map(v => v.APPLICATION_NAMESPACE)).toEqual(['Mine/App']);
});
