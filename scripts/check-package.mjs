// Proves the library is usable as a package: `npm pack`, install the tarball into a separate
// plain-JavaScript CDK app outside the source tree (no TypeScript, esbuild or Docker there),
// synthesize an endpoint with it and check the result. Then runs the README's quick start, as
// written, through `cdk synth --strict` in that app: it must synthesize with no warning.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consumerApp } from './consumer-app.mjs';

const root = process.cwd();
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'consumer-'));
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
try {
  const tarball = run('npm', ['pack', '--silent', '--pack-destination', work], root).trim().split('\n').pop();
  // The tarball unpacked as npm would install it, beside nothing but its peers (symlinks to the
  // versions this repo tests): any file the package needs but does not ship, or any undeclared
  // dependency, fails to load here. (No `npm install`: copying aws-cdk-lib from the cache took 5 s.)
  const installed = join(work, 'node_modules', pkg.name);
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['xzf', join(work, tarball), '-C', installed, '--strip-components=1']);
  const shipped = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  if (Object.keys(shipped.dependencies ?? {}).length)
    throw new Error(`runtime dependencies need an install step here: ${Object.keys(shipped.dependencies)}`);
  // The code bundled from other packages ships with their notices (their licenses ask for it).
  for (const notices of ['dist/lambda-bundles/circuit-breaker/THIRD-PARTY-NOTICES.txt', 'dist/cli-bundles/THIRD-PARTY-NOTICES.txt']) {
    if (!existsSync(join(installed, notices))) throw new Error(`the package lacks ${notices}`);
  }
  for (const dep of Object.keys(shipped.peerDependencies)) symlinkSync(join(root, 'node_modules', dep), join(work, 'node_modules', dep), 'dir');
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'consumer-app', private: true }));
  for (const forbidden of ['typescript', 'esbuild', 'ts-node', 'tsx']) {
    if (existsSync(join(work, 'node_modules', forbidden))) throw new Error(`consumer needed ${forbidden}`);
  }
  writeFileSync(
    join(work, 'app.js'),
    consumerApp(
      pkg.name,
      'Consumer',
      `
for (const t of ['AWS::SageMaker::Model', 'AWS::SageMaker::EndpointConfig', 'AWS::SageMaker::Endpoint']) {
  if (!types.includes(t)) throw new Error('missing ' + t);
}
const model = Object.values(template.Resources).find(r => r.Type === 'AWS::SageMaker::Model');
const workers = model.Properties.PrimaryContainer.Environment.SAGEMAKER_MODEL_SERVER_WORKERS;
if (workers !== '6') throw new Error('expected 6 workers, got ' + workers);
const simulation = require('${pkg.name}/simulation');
if (typeof simulation.runSimulation !== 'function' || typeof simulation.calibrateIncidentA !== 'function') throw new Error('the simulation entry point is missing');
const facade = require('${pkg.name}').simulation;
if (Object.keys(facade).sort().join() !== 'SimulationMemoryModel,SimulationTrace,Simulator,Traces') throw new Error('the root simulation namespace should hold the facade only, got ' + Object.keys(facade));
const report = facade.Simulator.compare(facade.Traces.fromValues(Array(300).fill(50)), stack.node.findChild('Endpoint'));
if (report.outcomes.length !== 4 || !report.chartSvg.startsWith('<svg')) throw new Error('Simulator.compare returned ' + JSON.stringify(report.outcomes));
console.log('consumer app synthesized ' + types.length + ' resources (' + [...new Set(types)].length + ' types), workers=' + workers + '; simulation entry point loads; '
  + 'Simulator.compare ran ' + report.outcomes.length + ' scenarios on ' + report.outcomes[0].arrivals + ' requests');
`,
    ),
  );
  // aws-cdk-lib's CloudFormation schema check is off for this synthesis (test/cfn-validation.test.ts runs
  // it on every stack shape); it stays on for the quick start below, as a user would run it.
  process.stdout.write(
    `package check: ${tarball}: ` +
      execFileSync('node', ['app.js'], { cwd: work, encoding: 'utf8', env: { ...process.env, CDK_VALIDATION: 'false' } }),
  );

  // The shipped command-line tool, as `npx sagemaker-resilient-endpoint plan …` runs it.
  const cli = join(installed, shipped.bin[pkg.name]);
  const plan = execFileSync(process.execPath, [cli, 'plan', '--latency', '50', '--qps', '200', '--model-gib', '2.1'], {
    cwd: work,
    encoding: 'utf8',
  });
  if (!/instance count\s+4/.test(plan)) throw new Error(`the shipped CLI printed an unexpected plan:\n${plan}`);
  writeFileSync(join(work, 'trace.csv'), `qps\n${'30\n'.repeat(300)}`);
  const sim = execFileSync(process.execPath, [cli, 'simulate', '--example', 'clustering', '--trace', 'csv', '--csv', 'trace.csv', '--out', 'sim'], {
    cwd: work,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  if (!existsSync(join(work, 'sim', 'chart.svg')) || !sim.includes('| autoscaling + breaker'))
    throw new Error(`the shipped simulator printed:\n${sim}`);
  // doctor and drill carry the AWS SDK in their bundle: the consumer installed none. With no AWS to talk
  // to (a closed local port), doctor still runs and reports that it could not check.
  const help = execFileSync(process.execPath, [cli, 'drill', '--help'], { cwd: work, encoding: 'utf8' });
  if (!help.includes('--to DEGRADED|OPEN')) throw new Error(`drill --help printed:\n${help}`);
  const doc = spawnSync(process.execPath, [cli, 'doctor', '--endpoint', 'nowhere', '--json'], {
    cwd: work,
    encoding: 'utf8',
    env: { ...process.env, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y', AWS_ENDPOINT_URL: 'http://127.0.0.1:9' },
  });
  const report = JSON.parse(doc.stdout || '{}');
  if (doc.status !== 1 || report.endpointName !== 'nowhere' || !/could not check/.test(report.checks?.[0]?.saw ?? ''))
    throw new Error(`doctor exited ${doc.status} and printed:\n${doc.stdout}\n${doc.stderr}`);
  console.log(
    `package check: ${shipped.bin[pkg.name]} plans incident B as 4 × ml.m5.xlarge, simulates the shipped clustering example, and runs doctor and drill from their bundle`,
  );

  // The README's quick start: the first ```ts block after "## Quick start", compiled to JavaScript
  // here (the consumer has no TypeScript), then `cdk synth --strict` with the library's CLI.
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'));
  const snippet = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!snippet) throw new Error('README has no ```ts block under "## Quick start"');
  const { transformSync } = await import('esbuild');
  writeFileSync(join(work, 'quickstart.js'), transformSync(snippet, { loader: 'ts', format: 'cjs', platform: 'node' }).code);
  writeFileSync(join(work, 'cdk.json'), JSON.stringify({ app: 'node quickstart.js', notices: false, context: { 'cli-telemetry': false } }));
  // `cdk synth --strict Recommender`, as a CI pipeline runs it with `> template.yaml`: any warning fails
  // it (--strict), and stdout must be the template and nothing else (no library or example code may
  // print to stdout during synthesis). The quick start has this one stack.
  const stdout = execFileSync(process.execPath, [join(root, 'node_modules', 'aws-cdk', 'bin', 'cdk'), 'synth', '--strict', 'Recommender'], {
    cwd: work,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  const { parse } = await import('yaml');
  const parsed = parse(stdout);
  const types = Object.values(parsed?.Resources ?? {}).map(r => r.Type);
  if (!types.includes('AWS::SageMaker::Endpoint'))
    throw new Error(`cdk synth Recommender > template.yaml is not the template:\n${stdout.slice(0, 500)}`);
  console.log(
    `package check: the README quick start synthesizes with cdk synth --strict (no warnings); cdk synth Recommender's stdout parses as its template (${types.length} resources)`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
