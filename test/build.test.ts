/**
 * The first run builds once and says what it does: `npm run synth` builds the bundles and the example
 * models, `npm pack` (prepack) and later runs skip them, because each step is skipped when its inputs
 * are unchanged (scripts/build-stamp.cjs); prepack compiles the library when dist/ is older than its
 * sources. Checked here on a small tree in a temporary folder, shaped like the repository.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the build's own CommonJS helper, as scripts/build.mjs loads it
const stamp = require('../scripts/build-stamp.cjs') as {
  STEPS: Record<string, { inputs: string[]; outputs: string[] }>;
  freshness(root: string, step: string): { fresh: boolean; reason: string };
  record(root: string, step: string, now?: Date): void;
  compileFreshness(root: string): { fresh: boolean; reason: string };
};

const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
let root: string;
const write = (f: string, text: string, mtime?: number) => {
  fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
  fs.writeFileSync(path.join(root, f), text);
  if (mtime !== undefined) fs.utimesSync(path.join(root, f), mtime, mtime);
};

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'build-stamp-'));
  write('lambda/circuit-breaker/handler.ts', 'export const handler = 1;');
  write('lib/breaker/policy.ts', 'export const decide = 1;');
  write('bin/ops/index.ts', 'export {};');
  write('package-lock.json', '{}');
  write('dist/lambda-bundles/circuit-breaker/index.js', 'bundle');
  write('dist/cli-bundles/ops.js', 'cli');
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

test('a step never built here is built; once recorded, it is skipped while its inputs and outputs stay as they were', () => {
  expect(stamp.freshness(root, 'bundles')).toEqual({ fresh: false, reason: 'never built here' });
  stamp.record(root, 'bundles', new Date('2026-12-02T06:00:00Z'));
  expect(stamp.freshness(root, 'bundles')).toEqual({ fresh: true, reason: 'inputs unchanged since 2026-12-02T06:00:00.000Z' });
  // __pycache__ and node_modules are not inputs
  write('lib/breaker/__pycache__/x.pyc', 'noise');
  write('lib/node_modules/x/index.js', 'noise');
  expect(stamp.freshness(root, 'bundles').fresh).toBe(true);
});

test.each([
  ['a source the bundle reads changes', () => write('lib/breaker/policy.ts', 'export const decide = 2;'), /an input changed/],
  ['a new source appears', () => write('lambda/circuit-breaker/extra.ts', 'x'), /an input changed/],
  ['the lock file changes (esbuild or the SDK)', () => write('package-lock.json', '{"v":2}'), /an input changed/],
  ['an output is deleted', () => fs.rmSync(path.join(root, 'dist/cli-bundles/ops.js')), /an output is missing or changed/],
  ['an output is edited', () => write('dist/lambda-bundles/circuit-breaker/index.js', 'patched'), /an output is missing or changed/],
  ['every output is gone', () => fs.rmSync(path.join(root, 'dist'), { recursive: true }), /never built here|output/],
])('the bundles are rebuilt when %s', (_, change, reason) => {
  stamp.record(root, 'bundles');
  change();
  const state = stamp.freshness(root, 'bundles');
  expect(state.fresh).toBe(false);
  expect(state.reason).toMatch(reason);
});

test('the steps do not share a stamp: recording the bundles leaves the models to build', () => {
  stamp.record(root, 'bundles');
  expect(stamp.freshness(root, 'models')).toEqual({ fresh: false, reason: 'never built here' });
  expect(stamp.STEPS.models.inputs).toContain('runtime/python/resilient_endpoint_runtime');
});

test('compile: stale without dist/, with a source newer than its JavaScript, or without an entry point; fresh otherwise', () => {
  write('package.json', JSON.stringify({ main: 'dist/lib/index.js', types: 'dist/lib/index.d.ts', bin: { x: 'dist/bin/cli.js' } }));
  write('lib/index.ts', 'export {};', 1000);
  write('bin/cli.ts', '', 1000);
  for (const f of ['lambda/circuit-breaker/handler.ts', 'lib/breaker/policy.ts', 'bin/ops/index.ts']) fs.utimesSync(path.join(root, f), 1000, 1000);
  expect(stamp.compileFreshness(root)).toEqual({ fresh: false, reason: 'no dist/bin/cli.js' });
  for (const f of ['lib/index', 'bin/cli', 'lambda/circuit-breaker/handler', 'lib/breaker/policy', 'bin/ops/index']) write(`dist/${f}.js`, '', 2000);
  expect(stamp.compileFreshness(root)).toEqual({ fresh: false, reason: 'no dist/lib/index.d.ts' });
  write('dist/lib/index.d.ts', '', 2000);
  expect(stamp.compileFreshness(root)).toEqual({ fresh: true, reason: 'dist/ is newer than its 5 sources' });
  write('lib/breaker/policy.ts', 'export const decide = 3;', 3000);
  expect(stamp.compileFreshness(root)).toEqual({ fresh: false, reason: 'lib/breaker/policy.ts changed' });
  write('dist/lib/breaker/policy.js', '', 3000);
  write('tsconfig.build.json', '{}', 2500);
  expect(stamp.compileFreshness(root)).toEqual({ fresh: false, reason: 'tsconfig.build.json changed' });
});

test('the scripts: synth builds the bundles once through the stamp, pack reuses them and compiles; no install-time script', () => {
  const s = pkg.scripts as Record<string, string>;
  // synth is `cdk synth` alone: cdk.json's app builds the bundles (through the stamp) before the app runs,
  // so CI's `npm ci && npm run synth` from a clean clone is the bare `npx cdk synth` a CDK user types.
  expect(s.synth).toBe('node scripts/build.mjs synth');
  expect(JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'cdk.json'), 'utf8')).app).toBe('node scripts/build.mjs bundle && npx tsx bin/app.ts');
  expect(s.prepack).toBe('node scripts/build.mjs compile bundle');
  expect(s.bundle).toBe('node scripts/build.mjs bundle');
  // Nothing builds the bundles around the stamp (the first run built them twice: prepare, then synth's own bundle).
  const direct = Object.entries(s).filter(([, cmd]) => /bundle-lambda\.mjs|build-models\.py/.test(cmd));
  expect(direct).toEqual([]);
  // npm runs these when a consumer installs the package from a registry or a tarball (npm 11 asks the
  // consumer to approve a tarball's prepare as an install script); prepack runs only when packing.
  expect(Object.keys(s).filter(k => ['preinstall', 'install', 'postinstall', 'prepare'].includes(k))).toEqual([]);
});
