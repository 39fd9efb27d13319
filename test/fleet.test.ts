import { App, NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { CFN_RESOURCE_LIMIT, ContainerImage, ResilientEndpoint, ResilientEndpointFleet, SageMakerInstanceType } from '../lib';
import { synthError } from './util';

const image = ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3');
const props = { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE };
const newApp = () => new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const env = { account: '123456789012', region: 'us-east-1' };

test('12 endpoints in one stack: a clear synth error before CloudFormation\'s TooManyResourcesInStack', () => {
  const app = newApp();
  const stack = new Stack(app, 'Crowded', { env });
  for (let i = 0; i < 12; i++) new ResilientEndpoint(stack, `E${i}`, props);
  const msg = synthError(app);
  expect(msg).toMatch(/\[Crowded\] stack Crowded: got \d+ CloudFormation resources; allowed: at most 500 per stack/);
  expect(msg).toMatch(/Crowded\/E0: 4\d, /); // each endpoint's own count
  expect(msg).toMatch(/Fix: put the endpoints in a ResilientEndpointFleet .* or split them across stacks/);
  expect(msg.match(/allowed: at most 500 per stack/g)).toHaveLength(1); // once per stack, not per endpoint
});

describe('30 fully guarded ml.m5.xlarge endpoints in one stack, as a fleet', () => {
  const app = newApp();
  const stack = new Stack(app, 'Fleet', { env });
  const fleet = new ResilientEndpointFleet(stack, 'Models');
  for (let i = 0; i < 30; i++) fleet.addEndpoint(`Model${i}`, props);
  const parent = Template.fromStack(stack).toJSON();

  test('the parent stays far under the limit: one nested stack per endpoint', () => {
    const types = Object.values(parent.Resources).map((r: any) => r.Type);
    expect(types.filter(t => t === 'AWS::CloudFormation::Stack')).toHaveLength(30);
    expect(types.length).toBeLessThan(CFN_RESOURCE_LIMIT);
    expect(fleet.endpoints).toHaveLength(30);
  });

  test('each nested stack holds one complete guarded endpoint, under the limit', () => {
    const nested = Template.fromStack(fleet.endpoints[7].node.scope as NestedStack);
    nested.resourceCountIs('AWS::SageMaker::Endpoint', 1);
    nested.resourceCountIs('AWS::Lambda::Function', 1);
    expect(Object.keys(nested.toJSON().Resources).length).toBeLessThan(CFN_RESOURCE_LIMIT);
    expect(new Set(fleet.endpoints.map(e => e.endpointName)).size).toBe(30); // distinct generated names
  });
});
