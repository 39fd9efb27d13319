// CloudFormation's own schema validation (aws-cdk-lib's built-in cfn-validate plugin) on every shape of
// stack the library ships, with errors and warnings failing synthesis. The other suites turn the
// plugin off for speed (test/jest-setup.ts); this one turns it back on.
import { App, CfnResource, Stack } from 'aws-cdk-lib';
import { TEMPLATE_SHAPES } from './template-shapes';
import { appContext } from './util';

const env = { account: '123456789012', region: 'us-east-1' };
const shapes = TEMPLATE_SHAPES;

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
