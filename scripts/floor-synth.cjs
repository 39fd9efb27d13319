// `node scripts/floor-synth.cjs OUTDIR [MODULES]`: synthesizes every shape of stack the library ships
// (dist/test/template-shapes.js, built by `tsc`) into OUTDIR with cdk.json's context, plus a few apps
// the library must reject or warn about, whose messages it writes to OUTDIR/messages.json. With
// MODULES (a node_modules directory), `aws-cdk-lib` and `constructs` are loaded from there instead,
// for the library's compiled code as well: scripts/check-floor.mjs runs this once at the peer floor
// and once at the developed version and compares what the two wrote.
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');

const [outdir, modules] = process.argv.slice(2);
if (modules) {
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    const peer = request === 'constructs' || request === 'aws-cdk-lib' || request.startsWith('aws-cdk-lib/');
    return resolve.call(this, peer ? path.join(modules, request) : request, ...rest);
  };
}
process.env.CDK_VALIDATION = 'false';
const root = path.join(__dirname, '..');
const { App, Stack } = require('aws-cdk-lib');
const { buildTemplateShapes } = require(path.join(root, 'dist', 'test', 'template-shapes.js'));
const { ContainerImage, ResilientEndpoint, ResilientEndpointFleet, SageMakerInstanceType } = require(path.join(root, 'dist', 'lib'));

const context = { ...JSON.parse(fs.readFileSync(path.join(root, 'cdk.json'), 'utf8')).context, 'aws:cdk:bundling-stacks': [] };
const app = new App({ outdir, context });
buildTemplateShapes(app);
app.synth();

// Apps the library must refuse at synth (prop checks, fleet limits) or warn about: their messages.
const env = { account: '123456789012', region: 'us-east-1' };
const image = ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3');
const model = { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE };
const refused = {
  'bad props': stack => new ResilientEndpoint(stack, 'E', { ...model, instanceCount: 0, endpointName: 'bad_name' }),
  'a fleet of 80 CPU endpoints': stack => {
    const fleet = new ResilientEndpointFleet(stack, 'Models');
    for (let i = 0; i < 80; i++) fleet.addEndpoint(`E${i}`, model);
  },
  'no one is paged': stack => new ResilientEndpoint(stack, 'E', model),
};
const { Annotations, Match } = require('aws-cdk-lib/assertions');
const messages = {};
for (const [name, build] of Object.entries(refused)) {
  // Without cdk.json's feature flags, as the unit tests build them (minimizePolicies changes how
  // many managed policies a fleet's grants need).
  const one = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(one, 'Test', { env });
  build(stack);
  try {
    const found = Annotations.fromStack(stack);
    messages[name] = [...found.findWarning('*', Match.anyValue()), ...found.findError('*', Match.anyValue())]
      .map(m => `${m.entry.type} ${m.id}: ${m.entry.data}`)
      .sort();
  } catch (e) {
    messages[name] = [`refused: ${e.message}`];
  }
}
fs.writeFileSync(path.join(outdir, 'messages.json'), JSON.stringify(messages, null, 2));
