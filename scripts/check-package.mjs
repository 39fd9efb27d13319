// Proves the library is usable as a package: `npm pack`, install the tarball into a separate
// plain-JavaScript CDK app outside the source tree (no TypeScript, esbuild or Docker there),
// synthesize an endpoint with it and check the result.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = process.cwd();
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'consumer-'));
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
try {
  const tarball = run('npm', ['pack', '--silent', '--pack-destination', work], root).trim().split('\n').pop();
  writeFileSync(join(work, 'package.json'), JSON.stringify({
    name: 'consumer-app', private: true,
    dependencies: {
      [pkg.name]: `file:./${tarball}`,
      'aws-cdk-lib': pkg.devDependencies['aws-cdk-lib'],
      constructs: pkg.devDependencies.constructs,
    },
  }));
  run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent'], work);
  for (const forbidden of ['typescript', 'esbuild', 'ts-node', 'tsx']) {
    if (existsSync(join(work, 'node_modules', forbidden))) throw new Error(`consumer needed ${forbidden}`);
  }
  writeFileSync(join(work, 'app.js'), `
const { App, Stack } = require('aws-cdk-lib');
const { ResilientEndpoint, SageMakerInstanceType, ContainerImage } = require('${pkg.name}');
const app = new App({ outdir: 'cdk.out' });
const stack = new Stack(app, 'Consumer');
new ResilientEndpoint(stack, 'Endpoint', {
  model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/model:1') },
  instanceType: SageMakerInstanceType.ML_M5_XLARGE,
});
const assembly = app.synth();
const template = assembly.getStackByName('Consumer').template;
const types = Object.values(template.Resources).map(r => r.Type);
for (const t of ['AWS::SageMaker::Model', 'AWS::SageMaker::EndpointConfig', 'AWS::SageMaker::Endpoint']) {
  if (!types.includes(t)) throw new Error('missing ' + t);
}
const model = Object.values(template.Resources).find(r => r.Type === 'AWS::SageMaker::Model');
const workers = model.Properties.PrimaryContainer.Environment.SAGEMAKER_MODEL_SERVER_WORKERS;
if (workers !== '6') throw new Error('expected 6 workers, got ' + workers);
console.log('consumer app synthesized ' + types.length + ' resources (' + [...new Set(types)].length + ' types), workers=' + workers);
`);
  process.stdout.write(`package check: ${tarball}: ` + run('node', ['app.js'], work));
} finally {
  rmSync(work, { recursive: true, force: true });
}
