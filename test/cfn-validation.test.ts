// CloudFormation's own schema validation (aws-cdk-lib's built-in cfn-validate plugin) on every shape of
// stack the library ships, with errors and warnings failing synthesis. The other suites turn the
// plugin off for speed (test/jest-setup.ts); this one turns it back on.
import { App, CfnResource, Duration, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { ClusteringStack } from '../lib/examples/clustering-stack';
import { RecommenderStack } from '../lib/examples/recommender-stack';
import { ContainerImage, ResilientEndpoint, ResilientEndpointFleet, SageMakerInstanceType, SharedCircuitBreaker, TrafficShift } from '../lib';
import { appContext } from './util';

const env = { account: '123456789012', region: 'us-east-1' };
const image = ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3');
const cpu = { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE };

let saved: string | undefined;
beforeAll(() => {
  saved = process.env.CDK_VALIDATION;
  process.env.CDK_VALIDATION = 'true';
});
afterAll(() => {
  process.env.CDK_VALIDATION = saved;
});

/** cdk.json's context (validateAgainstDefaultRules: errors fail) plus strict mode (warnings fail too). */
const strictApp = () => new App({ context: { ...appContext(), '@aws-cdk/core:strictCfnValidateErrors': true } });

/** Every shape of stack the library ships, each in its own stack of one app. */
const shapes: [string, (app: App) => void][] = [
  [
    'the example stacks',
    app => {
      new RecommenderStack(app, 'Rec');
      new ClusteringStack(app, 'Clu');
    },
  ],
  [
    'a fleet with its shared breaker (parent and nested stacks)',
    app => {
      const fleet = new ResilientEndpointFleet(new Stack(app, 'Fleet', { env }), 'Models');
      for (let i = 0; i < 3; i++) fleet.addEndpoint(`Model${i}`, cpu);
    },
  ],
  [
    'endpoints sharing one breaker in a plain stack',
    app => {
      const stack = new Stack(app, 'Plain', { env });
      for (let i = 0; i < 2; i++) new ResilientEndpoint(stack, `E${i}`, { ...cpu, circuitBreaker: { shared: SharedCircuitBreaker.of(stack) } });
    },
  ],
  [
    'an endpoint with every option: VPC, shadow, linear deployment, 1-minute publishing',
    app => {
      const stack = new Stack(app, 'Everything', { env });
      const vpc = new ec2.Vpc(stack, 'Vpc', {
        maxAzs: 2,
        natGateways: 0,
        subnetConfiguration: [{ name: 'p', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
      });
      new ResilientEndpoint(stack, 'Endpoint', {
        model: { image, vpc },
        instanceType: SageMakerInstanceType.ML_M5_2XLARGE,
        instanceCount: 4,
        shadow: { model: { image }, samplingPercent: 10 },
        deployment: { trafficShift: TrafficShift.LINEAR, linearStepInstances: 2, waitInterval: Duration.minutes(10) },
        metricPublishing: { frequency: Duration.minutes(1) },
      });
    },
  ],
];

// One app holds them all, plus one resource CloudFormation would reject: the schema engine starts once
// (~0.7 s), the planted finding proves the check runs here with findings failing synthesis, and every
// other finding (each names its construct path) would be one in the library's stacks.
test(`the only finding is the planted one; none in: ${shapes.map(([name]) => name).join('; ')}`, () => {
  const app = strictApp();
  shapes.forEach(([, build]) => build(app));
  const planted = new Stack(app, 'Planted', { env });
  new CfnResource(planted, 'Endpoint', { type: 'AWS::SageMaker::Endpoint', properties: { EndpointConfigName: 'c', NotAProperty: 1 } });
  let message = '';
  try {
    app.synth();
  } catch (e) {
    message = (e as Error).message;
  }
  const findings = message.split('\n').filter(l => /^\s*(ERROR|WARN(ING)?)\b/.test(l));
  expect(findings).toEqual([expect.stringMatching(/ERROR NotAProperty: Additional properties are not allowed/)]);
  expect(message).toMatch(/^\s*Planted\/Endpoint \(Endpoint\)/m);
});
