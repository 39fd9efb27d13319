// What a synth prints that the user did not ask for (issue 40): every synth of the README's quick start
// printed `INFO deployment: a variant has 1 instance …` with a source path (the documented default of
// deployment.trafficShift for its 1-instance fallback), and an endpoint named by a token warned about
// `the alarm topic of ${Token[TOKEN.15]}`.
import { CfnParameter, Size } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { ContainerImage, ResilientEndpoint, SageMakerInstanceType } from '../lib';
import { newStack } from './util';

const image = ContainerImage.fromImageUri(
  '763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-inference:2.3.0-gpu-py311-cu121-ubuntu20.04-sagemaker',
);

test("the quick start's endpoint (a 1-instance fallback): no info line on synth; the deployment still shifts all at once", () => {
  const { stack } = newStack();
  const endpoint = new ResilientEndpoint(stack, 'Recommender', {
    model: { image, memoryFootprint: { gpu: Size.gibibytes(4), host: Size.gibibytes(3) } },
    instanceType: SageMakerInstanceType.ML_G4DN_XLARGE,
    instanceCount: 2,
    autoScaling: { capacity: { min: 2, max: 4 } },
    fallback: { instanceCount: 1 },
    monitoring: { notify: { emails: ['oncall@example.com'] } },
  });
  const a = Annotations.fromStack(stack);
  expect(a.findInfo('*', Match.anyValue())).toEqual([]);
  expect(endpoint.cfnEndpoint.deploymentConfig).toMatchObject({
    blueGreenUpdatePolicy: { trafficRoutingConfiguration: { type: 'ALL_AT_ONCE' } },
  });
});

test('an endpoint named by a token: the unsubscribed-topic warning names its construct path, not ${Token[…]}', () => {
  const { stack } = newStack();
  const name = new CfnParameter(stack, 'EndpointName', { type: 'String' }).valueAsString;
  new ResilientEndpoint(stack, 'Named', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, endpointName: name });
  const texts = Annotations.fromStack(stack)
    .findWarning('*', Match.anyValue())
    .map(w => String(w.entry.data));
  const topic = texts.find(t => /has no subscription/.test(t));
  expect(topic).toMatch(/^the alarm topic of the endpoint at Test\/Named \(its name is known at deploy\) has no subscription/);
  expect(texts.filter(t => /\$\{Token\[/.test(t))).toEqual([]);
});
