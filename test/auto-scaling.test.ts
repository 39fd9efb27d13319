// Autoscaling on QPS per instance (lib/auto-scaling.ts).
import { CfnParameter, Duration, Size, TimeZone, Token } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import { ContainerImage, MemoryProfile, ResilientEndpoint, SageMakerInstanceType, VariantAutoScaling } from '../lib';
import { cronProblems, validateAutoScaling } from '../lib/auto-scaling';
import { RecommenderStack } from '../lib/examples/recommender-stack';
import { newStack, synthError, exampleStacks, warnings } from './util';

const image = ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1');

describe('recommender example', () => {
  let t: Template;
  let stack: RecommenderStack;
  beforeAll(() => {
    ({ recommender: stack, rec: t } = exampleStacks());
  });

  test('scalable target min 2 max 8 on endpoint/<name>/variant/Primary', () => {
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      MinCapacity: 2,
      MaxCapacity: 8,
      ServiceNamespace: 'sagemaker',
      ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
      ResourceId: `endpoint/${stack.endpoint.endpointName}/variant/Primary`,
      RoleARN: Match.objectLike({
        'Fn::Join': Match.arrayWith([Match.arrayWith([Match.stringLikeRegexp('AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint')])]),
      }),
    });
  });

  test('target tracking at 2400 invocations per instance per minute (40 QPS), scale-out cooldown 90 s', () => {
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      PolicyType: 'TargetTrackingScaling',
      TargetTrackingScalingPolicyConfiguration: {
        PredefinedMetricSpecification: { PredefinedMetricType: 'SageMakerVariantInvocationsPerInstance' },
        TargetValue: 2400,
        ScaleOutCooldown: 90,
        ScaleInCooldown: 300,
      },
    });
  });

  test('the fallback autoscales too, up to the primary max', () => {
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      MinCapacity: 1,
      MaxCapacity: 8,
      ResourceId: `endpoint/${stack.endpoint.endpointName}/variant/Fallback`,
    });
  });
});

describe('a QPS target a CPU instance cannot reach before its queue grows (the profile’s latency)', () => {
  // A profile whose requests take 40 ms each (every point), on an ml.m5.xlarge (4 vCPUs, 6 workers): 4 busy vCPUs
  // serve 4 × 1000 / 40 = 100 requests/s an instance; 70 % of it is 70.
  const withLatency = (latencyMs: number) =>
    MemoryProfile.fromJson(
      JSON.stringify({
        sizeUnit: 'rows',
        device: 'cpu',
        distribution: 'powerlaw:10:1000',
        baselineBytes: 100 * 2 ** 20,
        curve: { a: 0, b: 100, c: 0 },
        percentiles: { p50: { size: 20, bytes: 2000 }, p99: { size: 900, bytes: 90000 }, p999: { size: 990, bytes: 99000 } },
        points: [
          { size: 10, peakBytes: 1000, latencyMs },
          { size: 1000, peakBytes: 100000, latencyMs },
        ],
      }),
    );
  const profile = withLatency(40);
  const warningsOf = (qpsPerInstance: number | undefined, instanceType = SageMakerInstanceType.ML_M5_XLARGE) => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', { model: { image, memoryProfile: profile }, instanceType, autoScaling: { qpsPerInstance } });
    return warnings(stack).filter(w => w.includes('QpsTargetAboveCapacity'));
  };

  test('above 70 % of what the busy vCPUs serve: a warning naming the variant, the figure, how it was found and the fix', () => {
    expect(profile.meanLatencyMs()).toBeCloseTo(40, 6);
    const [w] = warningsOf(undefined); // the default 150
    expect(w).toMatch(
      /autoScaling\[Primary\]\.qpsPerInstance is 150, but one ml\.m5\.xlarge serves about 100 requests\/s of this model \(4 busy vCPUs × 1000 \/ 40 ms, the mean latency of model\.memoryProfile's distribution\).*Use at most 70 \(70 % of it\)\./,
    );
    expect(warningsOf(71)).toHaveLength(1);
    expect(warningsOf(70)).toEqual([]);
  });

  test('the figures are rounded down, so the advised target does not warn: 30 ms → 133.3 requests/s, at most 93 (93.3)', () => {
    const fast = withLatency(30);
    const warningsFor = (qpsPerInstance: number) => {
      const { stack } = newStack();
      new ResilientEndpoint(stack, 'E', {
        model: { image, memoryProfile: fast },
        instanceType: SageMakerInstanceType.ML_M5_XLARGE,
        autoScaling: { qpsPerInstance },
      });
      return warnings(stack).filter(w => w.includes('QpsTargetAboveCapacity'));
    };
    const [w] = warningsFor(94);
    expect(w).toMatch(/serves about 133 requests\/s of this model \(4 busy vCPUs × 1000 \/ 30 ms,.*Use at most 93 \(70 % of it\)\./);
    expect(warningsFor(93)).toEqual([]);
  });

  test('not on a GPU type (a CPU profile says nothing of GPU latency), nor without a profile', () => {
    expect(warningsOf(150, SageMakerInstanceType.ML_G4DN_XLARGE)).toEqual([]);
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE });
    expect(warnings(stack).filter(w => w.includes('QpsTargetAboveCapacity'))).toEqual([]);
  });

  test('the mean latency weighs the long tail: latency growing with size gives more than the median request', () => {
    const tail = MemoryProfile.fromJson(
      JSON.stringify({
        ...JSON.parse(
          JSON.stringify({
            baselineBytes: 1,
            curve: { a: 0, b: 0, c: 0 },
            percentiles: { p50: { size: 1, bytes: 0 }, p99: { size: 1, bytes: 0 }, p999: { size: 1, bytes: 0 } },
          }),
        ),
        distribution: 'powerlaw:10:1000',
        points: [
          { size: 10, peakBytes: 0, latencyMs: 10 },
          { size: 1000, peakBytes: 0, latencyMs: 1000 },
        ],
      }),
    );
    // Latency proportional to size (log-log line through (10, 10) and (1000, 1000)), sizes on a bounded Pareto
    // with α 1 on [10, 1000]: E[size] = 10 × 1000 / (1000 − 10) × ln(100) = 46.5 ms.
    expect(tail.meanLatencyMs()).toBeCloseTo((10 * 1000 * Math.log(100)) / 990, 1);
    expect(MemoryProfile.fromJson(JSON.stringify({ ...JSON.parse('{}') })).meanLatencyMs()).toBeUndefined();
  });
});

describe('a memory target that scales: the guard’s in-flight memory where the model has a profile, else memory with its scale-in disabled', () => {
  const policies = (t: Template) =>
    (Object.values(t.findResources('AWS::ApplicationAutoScaling::ScalingPolicy')) as any[]).map(
      p => p.Properties.TargetTrackingScalingPolicyConfiguration,
    );
  const memoryPolicy = (t: Template) => policies(t).find(c => c.CustomizedMetricSpecification);
  // A CPU model with a profile: 6 workers on an ml.m5.xlarge (16 GiB) with a warm baseline of 256 MiB each → 9.375 %.
  const profile = MemoryProfile.fromJson(
    JSON.stringify({
      device: 'cpu',
      distribution: 'powerlaw:10:1000',
      baselineBytes: 256 * 2 ** 20,
      curve: { a: 0, b: 100, c: 0 },
      percentiles: { p50: { size: 20, bytes: 2000 }, p99: { size: 900, bytes: 90000 }, p999: { size: 990, bytes: 99000 } },
    }),
  );

  test('a guarded model: GuardInFlightPercent in the application namespace, the target translated ((70 − 9.375) ÷ 90 × 100 = 67.4), scaling in too', () => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', {
      model: { image, memoryProfile: profile },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      autoScaling: { memoryTargetPercent: 70 },
    });
    const t = Template.fromStack(stack);
    expect(memoryPolicy(t)).toEqual({
      CustomizedMetricSpecification: {
        MetricName: 'GuardInFlightPercent',
        Namespace: 'ResilientEndpoint/Application',
        Dimensions: [
          { Name: 'EndpointName', Value: expect.anything() },
          { Name: 'VariantName', Value: 'Primary' },
        ],
        Statistic: 'Average',
      },
      TargetValue: 67.4,
      DisableScaleIn: false,
      ScaleInCooldown: 300,
      ScaleOutCooldown: 90,
    });
    // The containers publish the guard's metrics there (they learn the namespace).
    const env = (Object.values(t.findResources('AWS::SageMaker::Model')) as any[])[0].Properties.PrimaryContainer.Environment;
    expect(env.RESILIENT_ENDPOINT_METRICS_NAMESPACE).toBe('ResilientEndpoint/Application');
  });

  test('without a profile: SageMaker memory, scale-in disabled (memory that does not fall must not veto the QPS target); on a GPU a warning', () => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', {
      model: { image },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      autoScaling: { memoryTargetPercent: 70 },
    });
    expect(memoryPolicy(Template.fromStack(stack))).toMatchObject({
      CustomizedMetricSpecification: { MetricName: 'MemoryUtilization', Namespace: '/aws/sagemaker/Endpoints', Statistic: 'Average' },
      TargetValue: 70,
      DisableScaleIn: true,
    });
    const gpu = newStack();
    new ResilientEndpoint(gpu.stack, 'E', {
      // One copy of 8 GiB (+ 0.5 GiB of context) of the T4's 16 GiB: 53 %, under the target.
      model: { image, memoryFootprint: { gpu: Size.gibibytes(8) } },
      instanceType: SageMakerInstanceType.ML_G4DN_XLARGE,
      autoScaling: { memoryTargetPercent: 70 },
    });
    expect(memoryPolicy(Template.fromStack(gpu.stack))).toMatchObject({
      CustomizedMetricSpecification: { MetricName: 'GPUMemoryUtilization' },
      DisableScaleIn: true,
    });
    expect(warnings(gpu.stack).join('\n')).toMatch(
      /tracks GPUMemoryUtilization, which model copies and PyTorch's caching allocator.*\[ack: Annotation::GpuMemoryTargetWithoutGuard\]/,
    );
  });

  test('static occupancy at or above the target is a synth error naming the prop and the fix; within 10 % of it a warning', () => {
    // 3 copies × (4 GiB + 0.5 GiB of CUDA context) of the T4's 16 GiB = 84.4 % (the recommender's tuning).
    const { app, stack } = newStack();
    new ResilientEndpoint(stack, 'E', {
      model: { image, memoryFootprint: { gpu: Size.gibibytes(4), host: Size.gibibytes(3) } },
      instanceType: SageMakerInstanceType.ML_G4DN_2XLARGE,
      autoScaling: { memoryTargetPercent: 70 },
    });
    expect(synthError(app)).toMatch(
      /autoScaling\[Primary\]\.memoryTargetPercent: got 70; allowed: above the static occupancy \(84\.4 %\).*Fix: raise memoryTargetPercent above 94 \(occupancy ÷ 0\.9\)/,
    );
    const near = newStack();
    new ResilientEndpoint(near.stack, 'E', {
      model: { image, memoryFootprint: { gpu: Size.gibibytes(4), host: Size.gibibytes(3) } },
      instanceType: SageMakerInstanceType.ML_G4DN_2XLARGE,
      autoScaling: { memoryTargetPercent: 90 },
    });
    expect(warnings(near.stack).join('\n')).toMatch(
      /84\.4 % of ml\.g4dn\.2xlarge's GPU memory.*Use a target of at least 94\. \[ack: Annotation::MemoryTargetNearStaticOccupancy\]/,
    );
  });
});

test('QPS → per-minute target arithmetic', () => {
  expect(VariantAutoScaling.invocationsPerInstanceTarget(150)).toBe(9000);
  expect(VariantAutoScaling.invocationsPerInstanceTarget(2.5)).toBe(150);
});

test('two variants scaled on one endpoint synthesize; asking twice is a clear error', () => {
  const { app, stack } = newStack();
  const e = new ResilientEndpoint(stack, 'E', {
    model: { image },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    fallback: {},
    autoScaling: {
      concurrentRequestsPerModelTarget: 4,
      schedules: [{ schedule: appscaling.Schedule.cron({ hour: '19', minute: '0' }), minCapacity: 4, timeZone: TimeZone.EUROPE_BERLIN }],
    },
  });
  const t = Template.fromStack(stack);
  t.resourceCountIs('AWS::ApplicationAutoScaling::ScalableTarget', 2);
  t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
    TargetTrackingScalingPolicyConfiguration: Match.objectLike({
      PredefinedMetricSpecification: { PredefinedMetricType: 'SageMakerVariantConcurrentRequestsPerModelHighResolution' },
      TargetValue: 4,
    }),
  });
  t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
    ScheduledActions: [Match.objectLike({ Schedule: 'cron(0 19 * * ? *)', ScalableTargetAction: { MinCapacity: 4 }, Timezone: 'Europe/Berlin' })],
  });
  expect(e.autoScaling.Fallback.scalableTarget).toBeInstanceOf(appscaling.ScalableTarget);
  expect(synthError(app)).toBe('');
  const twice = newStack();
  const e2 = new ResilientEndpoint(twice.stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE });
  e2.autoScaleVariant('Primary');
  expect(synthError(twice.app)).toMatch(/autoScaleVariant: got 'Primary'; allowed: each variant autoscaled once/);
});

test("memoryTargetPercent: a second target-tracking policy on the variant's memory (GPU types: GPU memory summed over the GPUs)", () => {
  const { app, stack } = newStack();
  const cpu = new ResilientEndpoint(stack, 'Cpu', {
    model: { image },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    autoScaling: { memoryTargetPercent: 70 },
  });
  const gpu = new ResilientEndpoint(stack, 'Gpu', {
    model: { image },
    instanceType: SageMakerInstanceType.ML_G4DN_12XLARGE,
    autoScaling: { memoryTargetPercent: 60 },
  });
  const t = Template.fromStack(stack);
  const memoryPolicy = (endpointName: string, metricName: string, target: number) =>
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      PolicyType: 'TargetTrackingScaling',
      TargetTrackingScalingPolicyConfiguration: {
        CustomizedMetricSpecification: {
          Namespace: '/aws/sagemaker/Endpoints',
          MetricName: metricName,
          Dimensions: Match.arrayWith([
            { Name: 'EndpointName', Value: endpointName },
            { Name: 'VariantName', Value: 'Primary' },
          ]),
          Statistic: 'Average',
        },
        TargetValue: target,
        ScaleOutCooldown: 90,
        ScaleInCooldown: 300,
      },
    });
  memoryPolicy(cpu.endpointName, 'MemoryUtilization', 70);
  memoryPolicy(gpu.endpointName, 'GPUMemoryUtilization', 240); // 4 GPUs × 60 %
  // the QPS policy stays beside it
  expect(Object.keys(t.findResources('AWS::ApplicationAutoScaling::ScalingPolicy')).length).toBe(4);
  expect(synthError(app)).toBe('');
});

test('a ml.t2.medium variant with scaling fails synth with a clear message', () => {
  const { app, stack } = newStack();
  new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_T2_MEDIUM });
  expect(synthError(app)).toMatch(
    /autoScaling\[Primary\]\.instanceType: got 'ml\.t2\.medium'; allowed: a non-burstable instance type\. Fix: burstable T2\/T3 instances cannot be registered with Application Auto Scaling/,
  );
});

test.each([
  ['min 0', { capacity: { min: 0, max: 2 } }, /capacity\.min: got 0/],
  ['min > max', { capacity: { min: 3, max: 2 } }, /capacity: got 'min 3 > max 2'/],
  ['initial count outside bounds', { capacity: { min: 3, max: 5 } }, /instanceCount: got 2; allowed: within capacity \[3, 5\]/],
  ['QPS 0', { qpsPerInstance: 0 }, /qpsPerInstance: got 0; allowed: a number > 0/],
  ['memory target 100', { memoryTargetPercent: 100 }, /memoryTargetPercent: got 100; allowed: a percentage from 10 to 95/],
  ['schedule without bounds', { schedules: [{ schedule: appscaling.Schedule.cron({ hour: '1' }) }] }, /schedules\[0\]: got 'no bounds'/],
])('autoscaling validation: %s', (_n, autoScaling, pattern) => {
  const { app, stack } = newStack();
  new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, autoScaling: autoScaling as any });
  expect(synthError(app)).toMatch(pattern);
});

test('scaling metric helper', () => {
  const { stack } = newStack();
  const e = new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE });
  expect(e.metricInvocationsPerInstance()).toMatchObject({ metricName: 'InvocationsPerInstance', statistic: 'Sum', namespace: 'AWS/SageMaker' });
  expect(e.autoScaling.Primary.invocationsPolicy).toBeInstanceOf(appscaling.TargetTrackingScalingPolicy);
});

describe('validateAutoScaling: every rule with its exact message (construct path added by the CDK)', () => {
  const base = { endpointName: 'ep', variantName: 'Primary', instanceType: SageMakerInstanceType.ML_M5_XLARGE, initialInstanceCount: 2 };
  const cron = appscaling.Schedule.cron({ hour: '19', minute: '0' });
  const check = (p: Partial<Parameters<typeof validateAutoScaling>[0]>) => validateAutoScaling({ ...base, ...p }).all;
  const P = 'autoScaling[Primary]';

  test.each<[string, Partial<Parameters<typeof validateAutoScaling>[0]>]>([
    ['the defaults', {}],
    ['min = max = the initial count', { capacity: { min: 2, max: 2 } }],
    ['an initial count at the max', { initialInstanceCount: 4, capacity: { min: 1, max: 4 } }],
    ['a fractional QPS and concurrency', { qpsPerInstance: 0.5, concurrentRequestsPerModelTarget: 0.5 }],
    ['a schedule with only a max, above the capacity min', { schedules: [{ schedule: cron, maxCapacity: 2 }] }],
    ['a schedule with only a min, up to the capacity max', { schedules: [{ schedule: cron, minCapacity: 4 }] }],
    ['a schedule raising both bounds past the capacity', { schedules: [{ schedule: cron, minCapacity: 8, maxCapacity: 10 }] }],
    [
      'at(...) and rate(...) schedules',
      {
        schedules: [
          { schedule: appscaling.Schedule.rate(Duration.hours(1)), minCapacity: 3 },
          { schedule: appscaling.Schedule.expression('at(2026-12-24T18:00:00)'), minCapacity: 3 },
        ],
      },
    ],
  ])('accepted: %s', (_name, p) => {
    expect(check(p)).toEqual([]);
  });

  test.each<[string, Partial<Parameters<typeof validateAutoScaling>[0]>, string[]]>([
    [
      'min 0',
      { capacity: { min: 0, max: 2 } },
      [`${P}.capacity.min: got 0; allowed: an integer from 1 to 10000. Fix: use at least 1: plain variants cannot scale to zero`],
    ],
    [
      'a fractional min',
      { capacity: { min: 1.5, max: 2 } },
      [`${P}.capacity.min: got 1.5; allowed: an integer from 1 to 10000. Fix: use at least 1: plain variants cannot scale to zero`],
    ],
    [
      'a fractional max',
      { capacity: { min: 2, max: 2.5 } },
      [`${P}.capacity.max: got 2.5; allowed: an integer from 1 to 10000. Fix: use a whole number of instances ≥ 1`],
    ],
    [
      'min > max',
      { initialInstanceCount: 3, capacity: { min: 3, max: 2 } },
      [
        `${P}.capacity: got 'min 3 > max 2'; allowed: min ≤ max. Fix: raise max or lower min`,
        `${P}.instanceCount: got 3; allowed: within capacity [3, 2]. Fix: set the initial instance count inside the capacity bounds`,
      ],
    ],
    [
      'an initial count above the max',
      { initialInstanceCount: 5, capacity: { min: 1, max: 4 } },
      [`${P}.instanceCount: got 5; allowed: within capacity [1, 4]. Fix: set the initial instance count inside the capacity bounds`],
    ],
    [
      'no QPS',
      { qpsPerInstance: 0 },
      [`${P}.qpsPerInstance: got 0; allowed: a number > 0. Fix: give the requests per second one instance should carry, e.g. 150`],
    ],
    [
      'a NaN QPS',
      { qpsPerInstance: NaN },
      [`${P}.qpsPerInstance: got NaN; allowed: a number > 0. Fix: give the requests per second one instance should carry, e.g. 150`],
    ],
    [
      'no concurrency',
      { concurrentRequestsPerModelTarget: 0 },
      [`${P}.concurrentRequestsPerModelTarget: got 0; allowed: a number > 0. Fix: e.g. 4 in-flight requests per model copy`],
    ],
    [
      'a schedule without bounds',
      { schedules: [{ schedule: cron }] },
      [`${P}.schedules[0]: got 'no bounds'; allowed: minCapacity and/or maxCapacity. Fix: e.g. { minCapacity: 4 }`],
    ],
    [
      'a scheduled min 0 and a fractional max',
      { schedules: [{ schedule: cron, minCapacity: 0, maxCapacity: 2.5 }] },
      [
        `${P}.schedules[0].minCapacity: got 0; allowed: an integer from 1 to 10000. Fix: use at least 1`,
        `${P}.schedules[0].maxCapacity: got 2.5; allowed: an integer from 1 to 10000. Fix: use at least 1`,
      ],
    ],
    [
      'a scheduled min above the capacity max (the max stays)',
      { schedules: [{ schedule: cron, minCapacity: 5 }] },
      [
        `${P}.schedules[0]: got min 5 > max 4; allowed: scheduled bounds with min ≤ max (unset ones keep capacity [2, 4]). Fix: set both minCapacity and maxCapacity on the scheduled action, or keep the scheduled min within the capacity max`,
      ],
    ],
    [
      'a scheduled max below the capacity min (the min stays)',
      { schedules: [{ schedule: cron, maxCapacity: 1 }] },
      [
        `${P}.schedules[0]: got min 2 > max 1; allowed: scheduled bounds with min ≤ max (unset ones keep capacity [2, 4]). Fix: set both minCapacity and maxCapacity on the scheduled action, or keep the scheduled min within the capacity max`,
      ],
    ],
    [
      'a second schedule that is not an expression',
      {
        schedules: [
          { schedule: cron, minCapacity: 3 },
          { schedule: appscaling.Schedule.expression('every evening'), minCapacity: 3 },
        ],
      },
      [
        `${P}.schedules[1].schedule: got 'every evening'; allowed: a cron(...), at(...) or rate(...) expression. Fix: use appscaling.Schedule.cron({ hour: "19", minute: "0" })`,
      ],
    ],
    [
      'an expression with text before it',
      { schedules: [{ schedule: appscaling.Schedule.expression('daily cron(0 19 * * ? *)'), minCapacity: 3 }] },
      [
        `${P}.schedules[0].schedule: got 'daily cron(0 19 * * ? *)'; allowed: a cron(...), at(...) or rate(...) expression. Fix: use appscaling.Schedule.cron({ hour: "19", minute: "0" })`,
      ],
    ],
    [
      'a schedule missing (plain JavaScript)',
      { schedules: [{ minCapacity: 3 } as any] },
      [
        `${P}.schedules[0].schedule: got 'undefined'; allowed: a cron(...), at(...) or rate(...) expression. Fix: use appscaling.Schedule.cron({ hour: "19", minute: "0" })`,
      ],
    ],
    [
      'a cron hour out of range',
      { schedules: [{ schedule: appscaling.Schedule.expression('cron(0 25 * * ? *)'), minCapacity: 3 }] },
      [
        `${P}.schedules[0].schedule: got 'cron(0 25 * * ? *)'; allowed: hour 0–23 (got '25'). Fix: fix the cron field, e.g. appscaling.Schedule.cron({ hour: "19", minute: "0" })`,
      ],
    ],
  ])('refused: %s', (_name, p, expected) => {
    expect(check(p)).toEqual(expected);
  });

  test('bounds given as tokens (a CfnParameter) are refused with the reason, and not compared with anything else', () => {
    const { stack } = newStack();
    const param = (name: string) => Token.asNumber(new CfnParameter(stack, name, { type: 'Number' }).valueAsNumber);
    const refused = (bound: string) =>
      `${P}.capacity.${bound}: got a token; allowed: a literal integer from 1 to 10000 (the breaker, the readiness checks and the simulator use the bounds at synth). ` +
      'Fix: give a number; to vary it per environment, read it in the app (e.g. from context) rather than from a CfnParameter';
    expect(check({ capacity: { min: param('Min'), max: 4 }, schedules: [{ schedule: cron, maxCapacity: 1 }] })).toEqual([refused('min')]);
    expect(check({ capacity: { min: 2, max: param('Max') }, schedules: [{ schedule: cron, minCapacity: 9 }] })).toEqual([refused('max')]);
    expect(check({ capacity: { min: 0, max: param('Max2') } })).toEqual([
      `${P}.capacity.min: got 0; allowed: an integer from 1 to 10000. Fix: use at least 1: plain variants cannot scale to zero`,
      refused('max'),
    ]);
    expect(check({ initialInstanceCount: param('Count'), capacity: { min: 2, max: 4 } })).toEqual([]);
  });
});

describe('cronProblems: the fields of an Application Auto Scaling cron expression', () => {
  test.each<[string, string[]]>([
    ['cron(0 19 * * ? *)', []],
    [' cron(59 23 31 12 ? 2199) ', []],
    ['cron(0 0 1 1 ? 1970)', []],
    ['cron(0/15 8-18 ? JAN-DEC MON-FRI *)', []],
    ['cron(0 0 ? jan,dec sun,sat *)', []],
    ['cron(0 0 L * ? *)', []],
    ['cron(0 0 15W * ? *)', []],
    ['cron(0 0 LW * ? *)', []], // the last weekday of the month: W comes off, then L is the last day
    ['cron(0 0 ? * 6#3 *)', []],
    ['cron(0 0 ? * 1,7 *)', []],
    ['cron(0 0 ? FEB,MAR,APR,MAY,JUN,JUL,AUG,SEP,OCT,NOV ? *)', []],
    ['cron(0 0 ? * TUE,WED,THU *)', []],
    ['cron(0 19 * JUL ? *)', []], // July: its name ends in L, the last-day suffix
    ['cron(0 0 ? * 6#12 *)', []], // the #n suffix is any number
    [' cron(0 25 * * ? *) ', ["hour 0–23 (got '25')"]],
    ['cron( 0 25 * * ? * )', ["hour 0–23 (got '25')"]],
    ['cron(0  25 * * ? *)', ["hour 0–23 (got '25')"]],
    ['cron(0 0 L5 * ? *)', ["day of month 1–31 (got 'L5')"]],
    ['cron(0/1x 0 * * ? *)', ["minute step '1x' is not a number"]],
    ['cron(0/x1 0 * * ? *)', ["minute step 'x1' is not a number"]],
    ['at(cron(0 25 * * ? *))', []], // not a cron expression: its fields are not read
    ['cron(0 19 * * ? *) daily', ['a cron(...) expression with nothing after its closing parenthesis']],
    ['rate(5 minutes)', []],
    ['at(2026-12-24T18:00:00)', []],
    ['cron(60 0 * * ? *)', ["minute 0–59 (got '60')"]],
    ['cron(0 24 * * ? *)', ["hour 0–23 (got '24')"]],
    ['cron(0 0 0 * ? *)', ["day of month 1–31 (got '0')"]],
    ['cron(0 0 32 * ? *)', ["day of month 1–31 (got '32')"]],
    ['cron(0 0 ? 0 ? *)', ["month 1–12 (got '0')"]],
    ['cron(0 0 ? 13 ? *)', ["month 1–12 (got '13')"]],
    ['cron(0 0 ? FOO ? *)', ["month 1–12 (got 'FOO')"]],
    ['cron(0 0 ? * 0 *)', ["day of week 1–7 (got '0')"]],
    ['cron(0 0 ? * 8 *)', ["day of week 1–7 (got '8')"]],
    ['cron(0 0 ? * SUN-FOO *)', ["day of week 1–7 (got 'FOO')"]],
    ['cron(0 0 * * ? 1969)', ["year 1970–2199 (got '1969')"]],
    ['cron(0 0 * * ? 2200)', ["year 1970–2199 (got '2200')"]],
    ['cron(0 1,2,61 * * ? *)', ["hour 0–23 (got '61')"]],
    ['cron(1.5 0 * * ? *)', ["minute 0–59 (got '1.5')"]],
    ['cron(0/x 0 * * ? *)', ["minute step 'x' is not a number"]],
    ['cron(0 19 * * ?)', ['6 cron fields (minute hour day month weekday year), got 5']],
    ['cron(0 25 * 13 ? *)', ["hour 0–23 (got '25')", "month 1–12 (got '13')"]],
  ])('%s', (expression, expected) => {
    expect(cronProblems(expression)).toEqual(expected);
  });
});

describe('VariantAutoScaling: what it deploys from its props', () => {
  const scale = (p: Partial<ConstructorParameters<typeof VariantAutoScaling>[2]> = {}) => {
    const { stack } = newStack();
    const s = new VariantAutoScaling(stack, 'S', {
      endpointName: 'ep',
      variantName: 'Primary',
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      initialInstanceCount: 3,
      ...p,
    });
    return { s, t: Template.fromStack(stack) };
  };

  test('by default: capacity from the initial count to twice it, 150 QPS, cooldowns 90 s out and 300 s in', () => {
    const { s, t } = scale();
    expect(s.capacity).toEqual({ min: 3, max: 6 });
    expect([s.qpsPerInstance, s.scaleOutCooldown.toSeconds(), s.scaleInCooldown.toSeconds()]).toEqual([150, 90, 300]);
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      MinCapacity: 3,
      MaxCapacity: 6,
      ResourceId: 'endpoint/ep/variant/Primary',
    });
    expect(s.concurrencyPolicy).toBeUndefined();
    t.resourceCountIs('AWS::ApplicationAutoScaling::ScalingPolicy', 1);
  });

  test('given values are used as given: QPS 200 → 12,000 per minute, the cooldowns, the concurrency target', () => {
    const { s, t } = scale({
      qpsPerInstance: 200,
      scaleOutCooldown: Duration.seconds(30),
      scaleInCooldown: Duration.minutes(10),
      concurrentRequestsPerModelTarget: 6,
      capacity: { min: 2, max: 9 },
    });
    expect(s.capacity).toEqual({ min: 2, max: 9 });
    const config = (metric: string) => ({
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({
        PredefinedMetricSpecification: { PredefinedMetricType: metric },
        ScaleOutCooldown: 30,
        ScaleInCooldown: 600,
      }),
    });
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', config('SageMakerVariantInvocationsPerInstance'));
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({ TargetValue: 12000 }),
    });
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', config('SageMakerVariantConcurrentRequestsPerModelHighResolution'));
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({ TargetValue: 6 }),
    });
  });

  test('the scaling role is the account-wide service-linked role (IAM ARNs have no Region)', () => {
    const { t } = scale();
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      RoleARN: {
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            ':iam::123456789012:role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint',
          ],
        ],
      },
    });
  });

  test('each schedule is its own scheduled action with the bounds it sets (an unset one stays out), in order', () => {
    const { t } = scale({
      schedules: [
        { schedule: appscaling.Schedule.cron({ hour: '19', minute: '0' }), minCapacity: 5, maxCapacity: 8 },
        { schedule: appscaling.Schedule.cron({ hour: '23', minute: '30' }), maxCapacity: 4 },
      ],
    });
    const [target] = Object.values(t.findResources('AWS::ApplicationAutoScaling::ScalableTarget'));
    expect(target.Properties.ScheduledActions).toEqual([
      {
        ScheduledActionName: expect.stringMatching(/Schedule0/),
        Schedule: 'cron(0 19 * * ? *)',
        ScalableTargetAction: { MinCapacity: 5, MaxCapacity: 8 },
      },
      { ScheduledActionName: expect.stringMatching(/Schedule1/), Schedule: 'cron(30 23 * * ? *)', ScalableTargetAction: { MaxCapacity: 4 } },
    ]);
  });
});
