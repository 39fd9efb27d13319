// Deployment guardrails and shadow testing (lib/deployment.ts).
import { Duration } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { ContainerImage, ResilientEndpoint, SageMakerInstanceType, TrafficShift } from '../lib';
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
