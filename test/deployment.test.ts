// Deployment guardrails and shadow testing (lib/deployment.ts).
import { Duration } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { ContainerImage, ResilientEndpoint, SageMakerInstanceType, TrafficShift } from '../lib';
import { deploymentConfig, DeploymentOptions } from '../lib/deployment';
import { PropErrors } from '../lib/validation';
import { RecommenderStack } from '../lib/examples/recommender-stack';
import { newStack, synthError, exampleStacks } from './util';

const image = ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1');

describe('recommender example', () => {
  let t: Template;
  let stack: RecommenderStack;
  beforeAll(() => {
    ({ recommender: stack, rec: t } = exampleStacks());
  });

  test('with a 1-instance fallback: blue/green all at once with a bake and auto-rollback on memory and business alarms (≤ 10)', () => {
    const ep = Object.values(t.findResources('AWS::SageMaker::Endpoint'))[0] as any;
    const dc = ep.Properties.DeploymentConfig;
    // A canary may be at most half of a variant's instances: the 1-instance fallback has no canary.
    expect(dc.BlueGreenUpdatePolicy.TrafficRoutingConfiguration).toEqual({ Type: 'ALL_AT_ONCE', WaitIntervalInSeconds: 300 });
    // Each rollback alarm, followed to the alarm it names: the primary's memory and business alarms.
    const resources = t.toJSON().Resources;
    const names = dc.AutoRollbackConfiguration.Alarms.map((a: any) => resources[a.AlarmName.Ref].Properties.AlarmName as string);
    const prefix = `${stack.endpoint.endpointName}-Primary-`;
    expect(names.every((n: string) => n.startsWith(prefix))).toBe(true);
    expect(names.map((n: string) => n.slice(prefix.length)).sort()).toEqual([
      'business-ErrorRate5xx',
      'business-LatencyP99',
      'business-ModelErrorRate',
      'infra-GpuMemory',
      'infra-HostMemory',
    ]);
  });
});

test('linear, all-at-once and rolling deployment options', () => {
  const { stack } = newStack();
  new ResilientEndpoint(stack, 'L', {
    model: { image },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    instanceCount: 4,
    deployment: { trafficShift: TrafficShift.LINEAR, linearStepInstances: 2 },
  });
  new ResilientEndpoint(stack, 'R', {
    model: { image },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    deployment: { trafficShift: TrafficShift.ROLLING },
  });
  const t = Template.fromStack(stack);
  t.hasResourceProperties('AWS::SageMaker::Endpoint', {
    DeploymentConfig: Match.objectLike({
      BlueGreenUpdatePolicy: Match.objectLike({
        TrafficRoutingConfiguration: { Type: 'LINEAR', LinearStepSize: { Type: 'INSTANCE_COUNT', Value: 2 }, WaitIntervalInSeconds: 300 },
      }),
    }),
  });
  t.hasResourceProperties('AWS::SageMaker::Endpoint', {
    DeploymentConfig: Match.objectLike({
      RollingUpdatePolicy: {
        MaximumBatchSize: { Type: 'CAPACITY_PERCENT', Value: 25 },
        WaitIntervalInSeconds: 300,
        MaximumExecutionTimeoutInSeconds: 3600,
      },
    }),
  });
});

test.each([
  [
    'canary with a 1-instance fallback',
    { trafficShift: TrafficShift.CANARY },
    /deployment\.trafficShift: got 'CANARY'; allowed: a variant of at least 2 instances \(the smallest has 1\)/,
  ],
  ['wait 2 h', { waitInterval: Duration.hours(2) }, /deployment\.waitInterval \(s\): got 7200/],
  [
    'timeout not longer than the waits (all at once: one bake)',
    { waitInterval: Duration.minutes(10), maximumExecutionTimeout: Duration.minutes(10) },
    /maximumExecutionTimeout \(s\): got 600; allowed: more than the waits it contains \(600 s\)/,
  ],
  ['rolling with a fallback', { trafficShift: TrafficShift.ROLLING }, /deployment\.trafficShift: got 'ROLLING'/],
])('deployment validation: %s', (_n, deployment, pattern) => {
  const { app, stack } = newStack();
  new ResilientEndpoint(stack, 'E', {
    model: { image },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    fallback: {},
    deployment: deployment as any,
  });
  expect(synthError(app)).toMatch(pattern);
});

test('shadow variant copies 5 % of traffic; with a fallback it is a clear error', () => {
  const { stack } = newStack();
  new ResilientEndpoint(stack, 'S', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, shadow: { model: { image } } });
  Template.fromStack(stack).hasResourceProperties('AWS::SageMaker::EndpointConfig', {
    ShadowProductionVariants: [Match.objectLike({ VariantName: 'Shadow', InitialVariantWeight: 0.05, InitialInstanceCount: 1 })],
  });
  const bad = newStack();
  new ResilientEndpoint(bad.stack, 'S', {
    model: { image },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    fallback: {},
    shadow: { model: { image } },
  });
  expect(synthError(bad.app)).toMatch(
    /shadow: got a shadow variant together with a fallback variant; allowed: one production variant plus one shadow variant/,
  );
});

describe('deploymentConfig: the DeploymentConfig SageMaker gets for each shift and fleet size, and every rule', () => {
  const alarms = (k: number) => Array.from({ length: k }, (_, i) => ({ alarmName: `a${i}` }) as unknown as cloudwatch.IAlarm);
  const plan = (o: DeploymentOptions, n: number, variantCount = 1, alarmCount = 2) => {
    const errors = new PropErrors();
    const p = deploymentConfig(o, { alarms: alarms(alarmCount), variantCount, minVariantInstances: n }, errors);
    return { ...p, errors: errors.all };
  };
  const rollback = { alarms: [{ alarmName: 'a0' }, { alarmName: 'a1' }] };
  const blueGreen = (routing: object, term = 0, max = 3600) => ({
    blueGreenUpdatePolicy: { trafficRoutingConfiguration: routing, terminationWaitInSeconds: term, maximumExecutionTimeoutInSeconds: max },
    autoRollbackConfiguration: rollback,
  });

  test('by default, 2 or more instances: a canary of 1 instance, a 5-minute bake, a 1-hour limit, rollback on the alarms', () => {
    expect(plan({}, 2)).toEqual({
      trafficShift: TrafficShift.CANARY,
      note: undefined,
      errors: [],
      config: blueGreen({ type: 'CANARY', canarySize: { type: 'INSTANCE_COUNT', value: 1 }, waitIntervalInSeconds: 300 }),
    });
  });

  test('by default, a 1-instance variant: all at once with the bake, and a note that says why', () => {
    expect(plan({}, 1)).toEqual({
      trafficShift: TrafficShift.ALL_AT_ONCE,
      note: "deployment: a variant has 1 instance, and a canary may be at most half of a variant's instances, so model updates shift all at once, then bake with auto-rollback. Give every variant 2 or more instances for a canary.",
      errors: [],
      config: blueGreen({ type: 'ALL_AT_ONCE', waitIntervalInSeconds: 300 }),
    });
  });

  test('given values are used as given', () => {
    const p = plan(
      {
        trafficShift: TrafficShift.CANARY,
        canaryInstances: 2,
        waitInterval: Duration.minutes(10),
        terminationWait: Duration.minutes(2),
        maximumExecutionTimeout: Duration.hours(2),
      },
      5,
    );
    expect(p.errors).toEqual([]);
    expect(p.config).toEqual(blueGreen({ type: 'CANARY', canarySize: { type: 'INSTANCE_COUNT', value: 2 }, waitIntervalInSeconds: 600 }, 120, 7200));
    expect(plan({ trafficShift: TrafficShift.LINEAR, linearStepInstances: 2 }, 10).config).toEqual(
      blueGreen({ type: 'LINEAR', linearStepSize: { type: 'INSTANCE_COUNT', value: 2 }, waitIntervalInSeconds: 300 }),
    );
    expect(plan({ trafficShift: TrafficShift.ALL_AT_ONCE, waitInterval: Duration.seconds(0) }, 4).config).toEqual(
      blueGreen({ type: 'ALL_AT_ONCE', waitIntervalInSeconds: 0 }),
    );
    expect(plan({ trafficShift: TrafficShift.ROLLING, rollingBatchPercent: 40 }, 4)).toEqual({
      trafficShift: TrafficShift.ROLLING,
      note: undefined,
      errors: [],
      config: {
        rollingUpdatePolicy: {
          maximumBatchSize: { type: 'CAPACITY_PERCENT', value: 40 },
          waitIntervalInSeconds: 300,
          maximumExecutionTimeoutInSeconds: 3600,
        },
        autoRollbackConfiguration: rollback,
      },
    });
    expect(plan({ trafficShift: TrafficShift.ROLLING }, 4).config.rollingUpdatePolicy).toMatchObject({ maximumBatchSize: { value: 25 } });
  });

  test('rollback alarms: none → no rollback configuration; more than 10 → an error, and only 10 are passed on', () => {
    expect(plan({}, 2, 1, 0).config.autoRollbackConfiguration).toBeUndefined();
    const p = plan({}, 2, 1, 11);
    expect(p.errors).toEqual([
      'deployment.autoRollbackAlarms: got 11 alarms; allowed: at most 10 (AWS limit). Fix: keep the memory and error alarms',
    ]);
    expect((p.config.autoRollbackConfiguration as any).alarms).toHaveLength(10);
    expect(plan({}, 2, 1, 10).errors).toEqual([]);
  });

  test.each<[string, DeploymentOptions, number, string[]]>([
    [
      'a canary asked for on 1 instance',
      { trafficShift: TrafficShift.CANARY },
      1,
      [
        "deployment.trafficShift: got 'CANARY'; allowed: a variant of at least 2 instances (the smallest has 1). Fix: use TrafficShift.ALL_AT_ONCE, or give every variant 2 or more instances",
      ],
    ],
    [
      'a canary of 2 on 1 instance',
      { trafficShift: TrafficShift.CANARY, canaryInstances: 2 },
      1,
      [
        'deployment.canaryInstances: got 2; allowed: an integer from 1 to 1. Fix: a canary needs a variant of at least 2 instances (the smallest has 1): use TrafficShift.ALL_AT_ONCE, or 2+ instances per variant',
      ],
    ],
    [
      'a canary of more than half',
      { canaryInstances: 3 },
      5,
      ["deployment.canaryInstances: got 3; allowed: an integer from 1 to 2. Fix: a canary is at most half of the smallest variant's 5 instances"],
    ],
    [
      'a canary of 2 on 2 instances',
      { canaryInstances: 2 },
      2,
      ["deployment.canaryInstances: got 2; allowed: an integer from 1 to 1. Fix: a canary is at most half of the smallest variant's 2 instances"],
    ],
    ['a canary of half', { canaryInstances: 2 }, 4, []],
    [
      'a fractional canary',
      { canaryInstances: 1.5 },
      4,
      ["deployment.canaryInstances: got 1.5; allowed: an integer from 1 to 2. Fix: a canary is at most half of the smallest variant's 4 instances"],
    ],
    [
      'a linear step over half',
      { trafficShift: TrafficShift.LINEAR, linearStepInstances: 6 },
      10,
      [
        "deployment.linearStepInstances: got 6; allowed: an integer from 1 to 5. Fix: linear steps are 10–50 % of the smallest variant's 10 instances (1..5)",
      ],
    ],
    [
      'a linear step under 10 %',
      { trafficShift: TrafficShift.LINEAR },
      20,
      [
        "deployment.linearStepInstances: got 1; allowed: an integer from 2 to 10. Fix: linear steps are 10–50 % of the smallest variant's 20 instances (2..10)",
        'deployment.maximumExecutionTimeout (s): got 3600; allowed: more than the waits it contains (6000 s). Fix: raise maximumExecutionTimeout or shorten waitInterval', // 20 steps of 1 with a 5-minute bake each
      ],
    ],
    ['linear on 2 instances, one at a time', { trafficShift: TrafficShift.LINEAR }, 2, []],
    [
      'linear on 1 instance',
      { trafficShift: TrafficShift.LINEAR },
      1,
      [
        "deployment.trafficShift: got 'LINEAR'; allowed: a variant of at least 2 instances (the smallest has 1). Fix: use TrafficShift.ALL_AT_ONCE, or give every variant 2 or more instances",
      ],
    ],
    [
      'a bake over an hour',
      { waitInterval: Duration.seconds(3601), maximumExecutionTimeout: Duration.hours(8) },
      2,
      ['deployment.waitInterval (s): got 3601; allowed: an integer from 0 to 3600. Fix: use Duration.seconds(0..3600)'],
    ],
    [
      'a termination wait over an hour',
      { terminationWait: Duration.seconds(3601), maximumExecutionTimeout: Duration.hours(8) },
      2,
      ['deployment.terminationWait (s): got 3601; allowed: an integer from 0 to 3600. Fix: use Duration.seconds(0..3600)'],
    ],
    [
      'a limit under 10 minutes',
      { waitInterval: Duration.seconds(60), maximumExecutionTimeout: Duration.seconds(599) },
      2,
      ['deployment.maximumExecutionTimeout (s): got 599; allowed: an integer from 600 to 28800. Fix: use Duration.seconds(600..28800)'],
    ],
    [
      'a limit over 8 hours',
      { maximumExecutionTimeout: Duration.seconds(28801) },
      2,
      ['deployment.maximumExecutionTimeout (s): got 28801; allowed: an integer from 600 to 28800. Fix: use Duration.seconds(600..28800)'],
    ],
    [
      'a limit equal to a canary’s two bakes and the termination wait',
      { waitInterval: Duration.seconds(1500), terminationWait: Duration.seconds(600) },
      2,
      [
        'deployment.maximumExecutionTimeout (s): got 3600; allowed: more than the waits it contains (3600 s). Fix: raise maximumExecutionTimeout or shorten waitInterval',
      ],
    ],
    ['a limit a second longer than them', { waitInterval: Duration.seconds(1499), terminationWait: Duration.seconds(600) }, 2, []],
    [
      'ten linear steps of 10 minutes in an hour',
      { trafficShift: TrafficShift.LINEAR, waitInterval: Duration.minutes(10) },
      10,
      [
        'deployment.maximumExecutionTimeout (s): got 3600; allowed: more than the waits it contains (6000 s). Fix: raise maximumExecutionTimeout or shorten waitInterval',
      ],
    ],
    [
      'five linear steps of 10 minutes in an hour',
      { trafficShift: TrafficShift.LINEAR, linearStepInstances: 2, waitInterval: Duration.minutes(10) },
      10,
      [],
    ],
    [
      'all at once: one bake',
      { trafficShift: TrafficShift.ALL_AT_ONCE, waitInterval: Duration.seconds(3599), maximumExecutionTimeout: Duration.seconds(3600) },
      2,
      [],
    ],
    [
      'a rolling batch over half',
      { trafficShift: TrafficShift.ROLLING, rollingBatchPercent: 60 },
      2,
      ['deployment.rollingBatchPercent: got 60; allowed: an integer from 5 to 50. Fix: rolling batches are 5–50 % of capacity'],
    ],
    [
      'a rolling batch under 5 %',
      { trafficShift: TrafficShift.ROLLING, rollingBatchPercent: 4 },
      2,
      ['deployment.rollingBatchPercent: got 4; allowed: an integer from 5 to 50. Fix: rolling batches are 5–50 % of capacity'],
    ],
  ])('%s', (_name, o, n, expected) => {
    expect(plan(o, n).errors).toEqual(expected);
  });

  test('rolling on an endpoint with more than one variant is refused (rolling updates are for single-variant endpoints)', () => {
    expect(plan({ trafficShift: TrafficShift.ROLLING }, 2, 2).errors).toEqual([
      "deployment.trafficShift: got 'ROLLING'; allowed: blue/green shifting on endpoints with more than one variant. Fix: use TrafficShift.CANARY, or remove the fallback/shadow variant",
    ]);
    expect(plan({ trafficShift: TrafficShift.ROLLING }, 2, 1).errors).toEqual([]);
  });
});
