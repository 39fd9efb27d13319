// When the build can skip a step: the bundles and the example models are rebuilt only when their inputs
// changed (a stamp of the inputs' and outputs' content hashes, dist/.build-stamps.json), the library's
// JavaScript only when a source is newer than what tsc wrote for it. Used by scripts/build.mjs (which
// `npm run bundle`, `synth`, `build`, `prepare` and `prepack` run) and test/build.test.ts.
const { createHash } = require('node:crypto');
const { existsSync, readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } = require('node:fs');
const { dirname, join, relative } = require('node:path');

/** What each cached step reads and writes, relative to the repository's root. */
const STEPS = {
  bundles: {
    what: 'the breaker Lambda and operator CLI bundles (esbuild)',
    // esbuild follows the handler and the CLI into lib/breaker; the lock file pins esbuild and the SDK.
    inputs: ['lambda', 'lib', 'bin/ops', 'scripts/bundle-lambda.mjs', 'package-lock.json', 'tsconfig.json'],
    outputs: ['dist/lambda-bundles', 'dist/cli-bundles'],
  },
  models: {
    what: "the example models' model.tar.gz (scripts/build-models.py)",
    inputs: ['examples/models', 'runtime/python/resilient_endpoint_runtime', 'scripts/build-models.py'],
    outputs: ['dist/models'],
  },
};

const SKIP = new Set(['node_modules', '__pycache__', '.DS_Store']);
const STAMPS = join('dist', '.build-stamps.json');

/** Every file under `paths` (files or folders), relative to `root`, sorted; missing paths are left out. */
function files(root, paths) {
  const out = [];
  const walk = p => {
    const abs = join(root, p);
    if (!existsSync(abs)) return;
    if (statSync(abs).isDirectory()) {
      for (const name of readdirSync(abs)) if (!SKIP.has(name) && !name.endsWith('.pyc')) walk(join(p, name));
    } else out.push(p);
  };
  for (const p of paths) walk(p);
  return out.sort();
}

/** One hash over the files' paths and contents; an empty set hashes to 'none'. */
function digest(root, paths) {
  const list = files(root, paths);
  if (!list.length) return 'none';
  const h = createHash('sha256');
  for (const f of list)
    h.update(`${f}\0`)
      .update(
        createHash('sha256')
          .update(readFileSync(join(root, f)))
          .digest('hex'),
      )
      .update('\n');
  return h.digest('hex');
}

function readStamps(root) {
  try {
    return JSON.parse(readFileSync(join(root, STAMPS), 'utf8'));
  } catch {
    return {};
  }
}

/** Whether `step` can be skipped: { fresh, reason } — fresh when the stamp matches the inputs and the outputs as they are now. */
function freshness(root, step) {
  const spec = STEPS[step];
  const stamp = readStamps(root)[step];
  if (!stamp) return { fresh: false, reason: 'never built here' };
  if (stamp.inputs !== digest(root, spec.inputs)) return { fresh: false, reason: `an input changed (${spec.inputs.join(', ')})` };
  const outputs = digest(root, spec.outputs);
  if (outputs === 'none' || stamp.outputs !== outputs)
    return { fresh: false, reason: `an output is missing or changed (${spec.outputs.join(', ')})` };
  return { fresh: true, reason: `inputs unchanged since ${stamp.at}` };
}

/** Records that `step` just built its outputs from its current inputs. */
function record(root, step, now = new Date()) {
  const spec = STEPS[step];
  const stamps = readStamps(root);
  stamps[step] = { inputs: digest(root, spec.inputs), outputs: digest(root, spec.outputs), at: now.toISOString() };
  mkdirSync(dirname(join(root, STAMPS)), { recursive: true });
  writeFileSync(join(root, STAMPS), `${JSON.stringify(stamps, null, 2)}\n`);
}

/**
 * Whether tsc must run: { fresh, reason } — stale when a source (lib/, bin/, lambda/, bench/: what
 * tsconfig.build.json includes) has no JavaScript in dist/ or is newer than it, when a tsconfig is newer
 * than the oldest output, or when the package's entry points are missing.
 */
function compileFreshness(root) {
  const sources = files(root, ['lib', 'bin', 'lambda', 'bench']).filter(f => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  let oldest = Infinity;
  for (const src of sources) {
    const out = join(root, 'dist', src.replace(/\.ts$/, '.js'));
    if (!existsSync(out)) return { fresh: false, reason: `no ${relative(root, out)}` };
    const t = statSync(out).mtimeMs;
    if (statSync(join(root, src)).mtimeMs > t) return { fresh: false, reason: `${src} changed` };
    oldest = Math.min(oldest, t);
  }
  for (const config of ['tsconfig.json', 'tsconfig.build.json'])
    if (existsSync(join(root, config)) && statSync(join(root, config)).mtimeMs > oldest) return { fresh: false, reason: `${config} changed` };
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  for (const entry of [pkg.main, pkg.types, ...Object.values(pkg.bin ?? {})].filter(Boolean))
    if (!existsSync(join(root, entry))) return { fresh: false, reason: `no ${entry}` };
  return { fresh: true, reason: `dist/ is newer than its ${sources.length} sources` };
}

module.exports = { STEPS, STAMPS, digest, files, freshness, record, compileFreshness };
