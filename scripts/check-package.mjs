// Proves the library is usable as a package, as a user gets it: packs it from a copy of the source tree
// in the state the README's set-up leaves (`npm ci && npm run synth`: the bundles and example models
// built) plus the library `npm test`'s compile step built, so `npm pack` itself (prepack) runs
// `build.mjs compile bundle` and finds all three current (when dist/ is not current, or tsconfig.build.json
// would emit differently from tsconfig.json, the copy gets no dist/lib and prepack compiles it, as it did
// always before); follows every link of the README and of the pages it reaches in the unpacked tarball;
// checks that the tarball's main, types, bin and exports exist and that it carries no install-time script;
// installs it into a plain-JavaScript CDK app outside the source tree (no TypeScript, esbuild or Docker
// there), synthesizes an endpoint with it and runs its CLI. Then pastes the README's TypeScript quick start,
// as written, into an app shaped as `cdk init app --language typescript` writes it (its tsconfig with
// NodeNext, its cdk.json with the recommended feature flags, `npx tsc && node bin/my-app.js`) and runs
// `cdk synth --strict Recommender`: no warning, and stdout is the template.
//
// Why prepack's compile can be skipped here: the compile step's `tsc -p tsconfig.json` emits the same
// dist/lib, dist/bin, dist/lambda and dist/bench as prepack's `tsc -p tsconfig.build.json` (same emit
// options, checked below; the two differ in `types` and in leaving out test/). That prepack compiles is
// test/build.test.ts's (prepack is `build.mjs compile bundle`; compile is stale without dist/), and that
// tsconfig.build.json type-checks (types: node only) is scripts/check-jsii.mjs's: jsii compiles with its
// options and includes (at the peer floor).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { consumerApp } from './consumer-app.mjs';
import { checkLinks } from './doc-links.mjs';

const root = process.cwd();
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'consumer-'));
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
try {
  // The source tree as a fresh clone has it, after `npm ci && npm run synth`: tracked and new files, the
  // dependencies, and what those two commands built (bundles, example models, their stamps) — no dist/lib.
  const src = join(work, 'clone');
  const tracked = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], root)
    .split('\0')
    .filter(f => f && existsSync(join(root, f)));
  for (const f of tracked) cpSync(join(root, f), join(src, f), { recursive: true });
  for (const built of ['dist/lambda-bundles', 'dist/cli-bundles', 'dist/models', 'dist/.build-stamps.json'])
    if (existsSync(join(root, built))) cpSync(join(root, built), join(src, built), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(src, 'node_modules'), 'dir');
  if (existsSync(join(src, 'dist', 'lib'))) throw new Error('the copy should not hold dist/lib');
  // What prepack's tsc would write: the JavaScript and declarations of each source it compiles, taken from
  // the compile step's dist/ (copied after the sources, so newer than them), nothing else of dist/.
  const { freshness } = createRequire(import.meta.url)('./build-stamp.cjs');
  const reuse = compiledLibrary(root);
  if (reuse.outputs) for (const f of reuse.outputs) cpSync(join(root, f), join(src, f));
  const packed = spawnSync('npm', ['pack', '--pack-destination', work], { cwd: src, encoding: 'utf8' });
  if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.stdout}\n${packed.stderr}`);
  const tarball = packed.stdout.trim().split('\n').pop();
  // prepack ran build.mjs's compile: it found the copied library current, or (without it) compiled.
  if (!(reuse.outputs ? /build: compile: skipped/ : /build: compile: done/).test(packed.stderr))
    throw new Error(`npm pack did not run build.mjs compile as expected (${reuse.why}):\n${packed.stderr}`);
  // The bundles the set-up built are not built again by npm pack (when they were current here).
  if (freshness(root, 'bundles').fresh && !/build: bundles: skipped/.test(packed.stderr))
    throw new Error(`npm pack rebuilt bundles that were current:\n${packed.stderr}`);

  // The tarball unpacked as npm would install it, beside nothing but its peers (symlinks to the
  // versions this repo tests): any file the package needs but does not ship, or any undeclared
  // dependency, fails to load here. (No `npm install`: copying aws-cdk-lib from the cache took 5 s.)
  const installed = join(work, 'node_modules', pkg.name);
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['xzf', join(work, tarball), '-C', installed, '--strip-components=1']);
  const shipped = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  const entries = [
    ['main', shipped.main],
    ['types', shipped.types],
    ...Object.entries(shipped.bin ?? {}).map(([k, v]) => [`bin ${k}`, v]),
    ...Object.entries(shipped.exports ?? {}).flatMap(([k, v]) =>
      typeof v === 'string' ? [[`exports ${k}`, v]] : Object.entries(v).map(([c, f]) => [`exports ${k} ${c}`, f]),
    ),
  ];
  const absent = entries.filter(([, f]) => !f || !existsSync(join(installed, f)));
  if (absent.length || entries.length < 4) throw new Error(`the tarball lacks ${absent.map(([k, f]) => `${k} (${f})`).join(', ')}`);
  if (!readFileSync(join(installed, shipped.bin[pkg.name]), 'utf8').startsWith('#!/usr/bin/env node')) throw new Error('the bin has no #! line');
  // Consumers run none of our scripts: npm runs preinstall, install and postinstall (and node-gyp for a
  // binding.gyp) when it installs a package from a registry or a tarball, and npm 11 lists a tarball's
  // prepare among the install scripts to approve (`npm install x.tgz`: "install scripts not yet covered by
  // allowScripts … (prepare: …)"); prepack it runs only when packing.
  const installTime = Object.keys(shipped.scripts ?? {}).filter(s => ['preinstall', 'install', 'postinstall', 'prepare'].includes(s));
  if (installTime.length || existsSync(join(installed, 'binding.gyp')))
    throw new Error(`the package would run ${installTime.join(', ') || 'node-gyp'} on install`);
  if (Object.keys(shipped.dependencies ?? {}).length)
    throw new Error(`runtime dependencies need an install step here: ${Object.keys(shipped.dependencies)}`);
  // The code bundled from other packages ships with their notices (their licenses ask for it).
  for (const notices of ['dist/lambda-bundles/circuit-breaker/THIRD-PARTY-NOTICES.txt', 'dist/cli-bundles/THIRD-PARTY-NOTICES.txt']) {
    if (!existsSync(join(installed, notices))) throw new Error(`the package lacks ${notices}`);
  }
  // Docs that travel: every link of the README, and of each page it reaches, resolves inside the
  // installed package (file and heading); no page cites a file that is not in the repository.
  const docs = checkLinks(installed);
  if (docs.problems.length || docs.visited.length < 15)
    throw new Error(`the installed package's docs (${docs.visited.length} pages reached):\n${docs.problems.join('\n')}`);
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

  // The README's quick start: the first ```ts block after "## Quick start", pasted as bin/my-app.ts into
  // an app shaped as `cdk init app --language typescript` writes it (aws-cdk-cli's init template
  // app/typescript: its tsconfig.json with module and moduleResolution NodeNext, strict; its cdk.json
  // running `npx tsc && node bin/my-app.js`, with the recommended feature flags of this aws-cdk-lib, as
  // `cdk init` writes them; notices and telemetry off, as this check runs offline).
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'));
  const snippet = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!snippet) throw new Error('README has no ```ts block under "## Quick start"');
  const app = join(work, 'my-app');
  const modules = join(app, 'node_modules');
  mkdirSync(join(modules, '.bin'), { recursive: true });
  mkdirSync(join(modules, '@types'), { recursive: true });
  symlinkSync(installed, join(modules, pkg.name), 'dir');
  for (const dep of [...Object.keys(shipped.peerDependencies), 'typescript', '@types/node', '@types/jest'])
    symlinkSync(join(root, 'node_modules', dep), join(modules, dep), 'dir');
  symlinkSync(join('..', 'typescript', 'bin', 'tsc'), join(modules, '.bin', 'tsc'));
  const tsconfig = {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['es2022'],
      declaration: true,
      strict: true,
      noImplicitAny: true,
      strictNullChecks: true,
      noImplicitThis: true,
      alwaysStrict: true,
      noUnusedLocals: false,
      noUnusedParameters: false,
      noImplicitReturns: true,
      noFallthroughCasesInSwitch: false,
      inlineSourceMap: true,
      inlineSources: true,
      experimentalDecorators: true,
      strictPropertyInitialization: false,
      skipLibCheck: true,
      typeRoots: ['./node_modules/@types'],
      noEmitOnError: true,
      types: ['jest', 'node'],
    },
    exclude: ['node_modules', 'cdk.out'],
  };
  const flags = JSON.parse(
    readFileSync(createRequire(import.meta.url).resolve('aws-cdk-lib/recommended-feature-flags.json', { paths: [root] }), 'utf8'),
  );
  const cdkJson = {
    app: 'npx tsc && node bin/my-app.js',
    watch: {
      include: ['**'],
      exclude: ['README.md', 'cdk*.json', '**/*.d.ts', '**/*.js', 'tsconfig.json', 'package*.json', 'yarn.lock', 'node_modules', 'test'],
    },
    notices: false,
    context: { ...flags, 'cli-telemetry': false },
  };
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  writeFileSync(join(app, 'cdk.json'), JSON.stringify(cdkJson, null, 2));
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'my-app', version: '0.1.0', bin: { 'my-app': 'bin/my-app.js' }, scripts: { build: 'tsc', cdk: 'cdk' } }, null, 2),
  );
  mkdirSync(join(app, 'bin'));
  writeFileSync(join(app, 'bin', 'my-app.ts'), snippet);
  // `cdk synth --strict Recommender`, as a CI pipeline runs it with `> template.yaml`: any warning fails
  // it (--strict), and stdout must be the template and nothing else (no library or example code may
  // print to stdout during synthesis). The quick start has this one stack.
  const synth = spawnSync(process.execPath, [join(root, 'node_modules', 'aws-cdk', 'bin', 'cdk'), 'synth', '--strict', 'Recommender'], {
    cwd: app,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${join(modules, '.bin')}:${dirname(process.execPath)}:${process.env.PATH}` },
  });
  if (synth.status !== 0) throw new Error(`cdk synth --strict of the quick start failed (exit ${synth.status}):\n${synth.stdout}\n${synth.stderr}`);
  if (!existsSync(join(app, 'bin', 'my-app.js'))) throw new Error('the app did not compile bin/my-app.ts (npx tsc)');
  const stdout = synth.stdout;
  const { parse } = await import('yaml');
  const parsed = parse(stdout);
  const types = Object.values(parsed?.Resources ?? {}).map(r => r.Type);
  if (!types.includes('AWS::SageMaker::Endpoint'))
    throw new Error(`cdk synth Recommender > template.yaml is not the template:\n${stdout.slice(0, 500)}`);
  console.log(
    `package check: ${tarball} packed from a fresh clone's state (${reuse.why}; ${entries.length} entry points present; no install-time script); ` +
      `every link of the README and the ${docs.visited.length} pages it reaches resolves in the installed package; ` +
      `the README quick start, in a cdk init TypeScript app (NodeNext, ${Object.keys(flags).length} feature flags), synthesizes with cdk synth --strict (no warnings); ` +
      `cdk synth Recommender's stdout parses as its template (${types.length} resources)`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}

/**
 * The compile step's outputs prepack's `tsc -p tsconfig.build.json` would write, when they are current and
 * that tsc would emit the same: { outputs, why }; otherwise { why } alone (prepack then compiles).
 */
function compiledLibrary(dir) {
  const { compileFreshness, files: listFiles } = createRequire(import.meta.url)('./build-stamp.cjs');
  const state = compileFreshness(dir);
  if (!state.fresh) return { why: `prepack compiled the library: dist/ was not current (${state.reason})` };
  const ts = createRequire(join(dir, 'package.json'))('typescript');
  const options = config => {
    const read = ts.getParsedCommandLineOfConfigFile(join(dir, config), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
    if (!read || read.errors.length) return undefined;
    const o = { ...read.options };
    for (const k of ['types', 'configFilePath']) delete o[k];
    for (const k of ['sourceMap', 'declarationMap', 'inlineSourceMap', 'inlineSources']) o[k] = Boolean(o[k]);
    return JSON.stringify(
      Object.keys(o)
        .sort()
        .map(k => [k, o[k]]),
    );
  };
  const build = options('tsconfig.build.json');
  if (!build || build !== options('tsconfig.json'))
    return { why: 'prepack compiled the library: tsconfig.build.json emits differently from tsconfig.json' };
  const outputs = listFiles(dir, ['lib', 'bin', 'lambda', 'bench'])
    .filter(f => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .flatMap(f => ['.js', '.d.ts'].map(ext => join('dist', f.replace(/\.ts$/, ext))));
  const absent = outputs.find(f => !existsSync(join(dir, f)));
  if (absent) return { why: `prepack compiled the library: no ${absent}` };
  return { outputs, why: `prepack found the library npm test's compile step built current (${outputs.length} files)` };
}
