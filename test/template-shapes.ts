// Every shape of stack the library ships, built into one app: the example stacks, a fleet (parent and
// nested stacks), endpoints sharing one breaker in a plain stack, and an endpoint with every option.
// Used by test/cfn-validation.test.ts (CloudFormation's schemas) and scripts/compare-templates.mjs
// (templates before and after a refactor). Public API only, so it builds against older commits too.
import { App, Duration, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { ClusteringStack } from '../lib/examples/clustering-stack';
import { RecommenderStack } from '../lib/examples/recommender-stack';
import { ContainerImage, ResilientEndpoint, ResilientEndpointFleet, SageMakerInstanceType, SharedCircuitBreaker, TrafficShift } from '../lib';

const env = { account: '123456789012', region: 'us-east-1' };
/** Someone is paged (an unsubscribed alarm topic is a warning). */
const monitoring = { notify: { emails: ['oncall@example.com'] } };

/** Each shape, named, as a function that adds its stacks to an app. */
export const TEMPLATE_SHAPES: [string, (app: App) => void][] = [
  [
    'the example stacks',
    app => {
      new RecommenderStack(app, 'Rec', { alarmEmails: monitoring.notify.emails });
      new ClusteringStack(app, 'Clu', { alarmEmails: monitoring.notify.emails });
    },
  ],
  [
    'a fleet with its shared breaker (parent and nested stacks)',
    app => {
      const image = ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3');
      const fleet = new ResilientEndpointFleet(new Stack(app, 'Fleet', { env }), 'Models');
      for (let i = 0; i < 3; i++) fleet.addEndpoint(`Model${i}`, { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, monitoring });
    },
  ],
  [
    'endpoints sharing one breaker in a plain stack',
    app => {
      const image = ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3');
      const stack = new Stack(app, 'Plain', { env });
      for (let i = 0; i < 2; i++) {
        new ResilientEndpoint(stack, `E${i}`, {
          model: { image },
          instanceType: SageMakerInstanceType.ML_M5_XLARGE,
          circuitBreaker: { shared: SharedCircuitBreaker.of(stack) },
          monitoring,
        });
      }
    },
  ],
  [
    'an endpoint with every option: VPC, shadow, linear deployment, 1-minute publishing',
    app => {
      const image = ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3');
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
        monitoring,
      });
    },
  ],
];

/** All shapes in `app`. */
export function buildTemplateShapes(app: App): void {
  for (const [, build] of TEMPLATE_SHAPES) build(app);
}
