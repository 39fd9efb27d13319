// The consumer app both package checks run: a plain-JavaScript CDK app that synthesizes one guarded
// `ml.m5.xlarge` endpoint with the installed package, then runs the caller's checks on
// `assembly`, `template` and `types` (the template's resource types).
export function consumerApp(pkgName, stackName, checks) {
  return `
const { App, Stack } = require('aws-cdk-lib');
const { ContainerImage, ResilientEndpoint, SageMakerInstanceType } = require('${pkgName}');
const app = new App({ outdir: 'cdk.out' });
const stack = new Stack(app, '${stackName}');
new ResilientEndpoint(stack, 'Endpoint', {
  model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/model:1') },
  instanceType: SageMakerInstanceType.ML_M5_XLARGE,
});
const assembly = app.synth();
const template = assembly.getStackByName('${stackName}').template;
const types = Object.values(template.Resources).map(r => r.Type);
${checks}`;
}
