import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { buildIntegApp } from './integ/integ.clustering';

describe('integration test apps synthesize (deployed by a maintainer with an account: docs/operations.md)', () => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const { stack, assertionStack } = buildIntegApp(app);
  const assertions = Template.fromStack(assertionStack);

  test('the clustering example under test, and an assertions stack that calls it', () => {
    Template.fromStack(stack).resourceCountIs('AWS::SageMaker::Endpoint', 1);
    const calls = Object.values(assertions.toJSON().Resources as Record<string, { Type: string }>).map(r => r.Type);
    expect(calls.filter(t => t === 'Custom::DeployAssert@SdkCallSageMakerRuntimeinvokeEndpoint').length).toBeGreaterThanOrEqual(1);
    expect(calls).toEqual(
      expect.arrayContaining([
        'Custom::DeployAssert@SdkCallDynamoDBputItem',
        'Custom::DeployAssert@SdkCallSSMgetParameter',
        'Custom::DeployAssert@SdkCallLambdainvoke',
      ]),
    );
  });

  test("the examples' request (docs/examples.md) is asserted on the answer, and the drill's override is a state the breaker parses", () => {
    assertions.hasResourceProperties('Custom::DeployAssert@SdkCallSageMakerRuntimeinvokeEndpoint', {
      parameters: Match.objectLike({ Body: Match.stringLikeRegexp('instances') }),
      expected: Match.stringLikeRegexp('clusters'),
    });
    const puts = assertions.findResources('Custom::DeployAssert@SdkCallDynamoDBputItem');
    const states = Object.values(puts).map((r: any) => JSON.parse(JSON.parse(r.Properties.parameters.Item).state.S));
    expect(states.map(s => [s.state, s.drill.to, s.drill.until > Date.now()])).toEqual([
      ['CLOSED', 'DEGRADED', true],
      ['CLOSED', 'DEGRADED', false],
    ]);
  });
});
