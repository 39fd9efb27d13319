// Autoscaling on QPS per instance (lib/auto-scaling.ts).
import { TimeZone } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import { ContainerImage, ResilientEndpoint, SageMakerInstanceType, VariantAutoScaling } from '../lib';
import { RecommenderStack } from '../lib/examples/recommender-stack';
import { newStack, synthError, exampleStacks } from './util';

const image = ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1');

describe('recommender example', () => {
  let t: Template;
  let stack: RecommenderStack;
  beforeAll(() => {
    ({ recommender: stack, rec: t } = exampleStacks());
  });

  test('scalable target min 2 max 4 on endpoint/<name>/variant/Primary', () => {
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      MinCapacity: 2,
      MaxCapacity: 4,
      ServiceNamespace: 'sagemaker',
      ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
      ResourceId: `endpoint/${stack.endpoint.endpointName}/variant/Primary`,
      RoleARN: Match.objectLike({
        'Fn::Join': Match.arrayWith([Match.arrayWith([Match.stringLikeRegexp('AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint')])]),
      }),
    });
  });

  test('target tracking at 9000 invocations per instance per minute (150 QPS), scale-out cooldown 90 s', () => {
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      PolicyType: 'TargetTrackingScaling',
      TargetTrackingScalingPolicyConfiguration: {
        PredefinedMetricSpecification: { PredefinedMetricType: 'SageMakerVariantInvocationsPerInstance' },
        TargetValue: 9000,
        ScaleOutCooldown: 90,
        ScaleInCooldown: 300,
      },
    });
  });

  test('the fallback autoscales too, up to the primary max', () => {
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      MinCapacity: 1,
      MaxCapacity: 4,
      ResourceId: `endpoint/${stack.endpoint.endpointName}/variant/Fallback`,
    });
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
