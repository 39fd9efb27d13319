// The build, one line per step on stderr (stdout stays free for what a step itself prints):
//   node scripts/build.mjs [compile] [bundle] [synth] [--force]
// compile: tsc -p tsconfig.build.json into dist/ (the package's main, types and bin), unless dist/ is
//          newer than every source;
// bundle:  the breaker Lambda and operator CLI bundles, and the example models' archives, each unless
//          its inputs are unchanged since it was built (scripts/build-stamp.cjs);
// synth:   cdk synth --quiet --strict of the example app: cdk.json's app runs `build.mjs bundle` before
//          bin/app.ts, so a bare `npx cdk synth` after `npm ci` builds what the app needs too.
// `npm run synth` (synth alone) builds the bundles once, through cdk.json's app; `npm pack` (prepack) and
// later runs skip them while their inputs are unchanged. No `prepare`: npm 11 lists a tarball's `prepare` among the install scripts a
// consumer must approve, so the package carries none.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const { STEPS, freshness, record, compileFreshness } = createRequire(import.meta.url)('./build-stamp.cjs');
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const force = args.includes('--force');
const say = line => process.stderr.write(`build: ${line}\n`);
const secs = t0 => `${((Date.now() - t0) / 1000).toFixed(1)} s`;

/** Runs a command with the terminal's output; exits with its code when it fails. */
function run(cmd, cmdArgs) {
  const r = spawnSync(cmd, cmdArgs, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    say(`${cmd} ${cmdArgs.join(' ')} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

const unknown = args.filter(a => !['compile', 'bundle', 'synth', '--force'].includes(a));
if (unknown.length || !args.some(a => !a.startsWith('--'))) {
  process.stderr.write(
    `usage: node scripts/build.mjs [compile] [bundle] [synth] [--force]${unknown.length ? ` (unknown: ${unknown.join(' ')})` : ''}\n`,
  );
  process.exit(2);
}

if (args.includes('compile')) {
  const state = force ? { fresh: false, reason: '--force' } : compileFreshness(root);
  if (state.fresh) say(`compile: skipped, ${state.reason}`);
  else {
    const t0 = Date.now();
    say(`compile: lib/, bin/, lambda/ and bench/ to dist/ with tsc: ${state.reason} (15–60 s) …`);
    run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json']);
    say(`compile: done in ${secs(t0)}`);
  }
}

if (args.includes('bundle')) {
  const commands = {
    bundles: [process.execPath, [join(root, 'scripts', 'bundle-lambda.mjs')]],
    models: ['python3', [join(root, 'scripts', 'build-models.py')]],
  };
  for (const step of Object.keys(STEPS)) {
    const state = force ? { fresh: false, reason: '--force' } : freshness(root, step);
    if (state.fresh) {
      say(`${step}: skipped ${STEPS[step].what}: ${state.reason}`);
      continue;
    }
    const t0 = Date.now();
    say(`${step}: building ${STEPS[step].what}: ${state.reason} …`);
    run(...commands[step]);
    record(root, step);
    say(`${step}: done in ${secs(t0)}`);
  }
}

if (args.includes('synth')) {
  const t0 = Date.now();
  say(
    'synth: cdk synth --quiet --strict of the example app (cdk.json: the bundles, then bin/app.ts: ClusteringEndpoint, RecommenderEndpoint; 30–90 s, offline) …',
  );
  run(process.execPath, [join(root, 'node_modules', 'aws-cdk', 'bin', 'cdk'), 'synth', '--quiet', '--strict']);
  say(`synth: done in ${secs(t0)}: the templates are in cdk.out/`);
}
