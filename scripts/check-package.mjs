// Proves the library is usable as a package: `npm pack`, install the tarball into a separate
// plain-JavaScript CDK app outside the source tree (no TypeScript, esbuild or Docker there),
// synthesize an endpoint with it and check the result. Then runs the README's quick start, as
// written, through `cdk synth --strict` in that app: it must synthesize with no warning.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consumerApp } from './consumer-app.mjs';

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
  writeFileSync(join(work, 'app.js'), consumerApp(pkg.name, 'Consumer', `
for (const t of ['AWS::SageMaker::Model', 'AWS::SageMaker::EndpointConfig', 'AWS::SageMaker::Endpoint']) {
  if (!types.includes(t)) throw new Error('missing ' + t);
}
const model = Object.values(template.Resources).find(r => r.Type === 'AWS::SageMaker::Model');
const workers = model.Properties.PrimaryContainer.Environment.SAGEMAKER_MODEL_SERVER_WORKERS;
if (workers !== '6') throw new Error('expected 6 workers, got ' + workers);
const simulation = require('${pkg.name}/simulation');
if (typeof simulation.runSimulation !== 'function' || typeof simulation.calibrateIncidentA !== 'function') throw new Error('the simulation entry point is missing');
if ('simulation' in require('${pkg.name}')) throw new Error('the simulator leaked into the root export');
console.log('consumer app synthesized ' + types.length + ' resources (' + [...new Set(types)].length + ' types), workers=' + workers + '; simulation entry point loads');
`));
  process.stdout.write(`package check: ${tarball}: ` + run('node', ['app.js'], work));

  // The README's quick start: the first ```ts block after "## Quick start", compiled to JavaScript
  // here (the consumer has no TypeScript), then `cdk synth --strict` with the library's CLI.
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'));
  const snippet = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!snippet) throw new Error('README has no ```ts block under "## Quick start"');
  const { transformSync } = await import('esbuild');
  writeFileSync(join(work, 'quickstart.js'), transformSync(snippet, { loader: 'ts', format: 'cjs', platform: 'node' }).code);
  writeFileSync(join(work, 'cdk.json'), JSON.stringify({ app: 'node quickstart.js', notices: false, context: { 'cli-telemetry': false } }));
  execFileSync(process.execPath, [join(root, 'node_modules', 'aws-cdk', 'bin', 'cdk'), 'synth', '--strict', '--quiet'],
    { cwd: work, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  console.log('package check: the README quick start synthesizes with cdk synth --strict (no warnings)');
} finally {
  rmSync(work, { recursive: true, force: true });
}
