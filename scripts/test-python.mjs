// `npm run test:python`: the runtime helper's suite with python3 (standard library and botocore only),
// then both suites with an interpreter that has the frameworks AWS's images serve with (torch and
// scikit-learn: Debian's python3-torch and python3-sklearn, README "Set-up"). Without one, the
// framework tests are skipped and this says so in its last line, which `npm test` prints.
import { spawnSync } from 'node:child_process';

const INSTALL = 'sudo apt-get install -y python3-torch python3-sklearn python3-numpy python3-boto3';
// Whether an interpreter has them, found on its path, and their installed versions, without importing them: importing
// torch and scikit-learn cost each step ~2.4 s of CPU here, and the suites import them anyway. The suites run with the
// framework interpreter get REQUIRE_FRAMEWORKS=1, so that one that is found but does not import fails them (never a skip).
const PROBE = `import importlib.util, importlib.metadata as m, sys
missing = [n for n in ('torch', 'sklearn', 'numpy', 'botocore') if importlib.util.find_spec(n) is None]
sys.exit('missing: ' + ', '.join(missing)) if missing else print(m.version('torch'), m.version('scikit-learn'))`;
const probe = py => spawnSync(py, ['-c', PROBE], { encoding: 'utf8' });
const candidates = [process.env.FRAMEWORK_PYTHON, '/usr/bin/python3', 'python3'].filter(Boolean);
// The first interpreter that has them, and what it printed.
let versions = '';
const framework = candidates.find(py => {
  const r = probe(py);
  versions = r.stdout.trim();
  return r.status === 0;
});

// One thread per process for the frameworks' numerical pools (OpenMP for torch, OpenBLAS for numpy and scikit-learn)
// unless the caller set them: each pool starts a thread per core that spins while it waits for work. Measured here
// (2 cores, quiet, CPU seconds): models 52.9 against 56.0, the runtime helper's suites 13.8 against 18.9 (medians;
// the runs vary by ±10 %). The suites check memory, refusals and time bounds, never throughput; the workers the
// stacks' tests start already ran with OMP_NUM_THREADS=1.
const ONE_THREAD = { OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1', MKL_NUM_THREADS: '1' };

function suite(py, dir) {
  const r = spawnSync(py, ['-m', 'unittest', 'discover', '-s', dir, '-t', dir], {
    stdio: 'inherit',
    env: { ...ONE_THREAD, ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...(py === framework ? { REQUIRE_FRAMEWORKS: '1' } : {}) },
  });
  if (r.status !== 0) {
    console.error(`✗ ${dir} with ${py} failed`);
    process.exit(r.status ?? 1);
  }
}

// `runtime`: the helper's suite (reads only runtime/python); `models`: the example models' suites, which
// unpack dist/models/*/model.tar.gz (built by `npm run bundle`). Without an argument, both. `guard-budget`:
// scripts/guard-budget.py with the framework interpreter (`npm run guard:budget -- --help`).
const part = process.argv[2];
if (part === 'guard-budget') {
  if (!framework) {
    console.error(skippedMessage());
    process.exit(1);
  }
  const r = spawnSync(framework, ['scripts/guard-budget.py', ...process.argv.slice(3)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
if (part && !['runtime', 'models'].includes(part)) {
  console.error(`usage: node scripts/test-python.mjs [runtime|models|guard-budget]  (got ${part})`);
  process.exit(2);
}
function skippedMessage() {
  return `SKIPPED: the framework tests (real torch and scikit-learn) — no interpreter has them (tried ${candidates.join(', ')}). Install: ${INSTALL}`;
}
const skipped = skippedMessage;
const withFrameworks = () => `${framework} (torch ${versions.replace(' ', ', scikit-learn ')})`;

/** The interpreter a command runs (its real path), so that one interpreter is not tested twice under two names. */
const real = py => spawnSync(py, ['-c', 'import os, sys; print(os.path.realpath(sys.executable))'], { encoding: 'utf8' }).stdout.trim();

if (part !== 'models') {
  // python3 by its real path: where python3 is a pyenv shim, each start through it costs ~0.1 s of CPU.
  const python3 = real('python3') || 'python3';
  suite(python3, 'runtime/python');
  // With the frameworks too, when they are in another interpreter (on Debian, python3 is /usr/bin/python3: once).
  if (framework && real(framework) !== python3) suite(framework, 'runtime/python');
  if (part)
    console.log(framework ? `runtime helper tested with python3 and with ${withFrameworks()}` : `runtime helper tested with python3; ${skipped()}`);
}
if (part !== 'runtime') {
  suite(framework ?? 'python3', 'examples/models');
  console.log(framework ? `framework tests ran with ${withFrameworks()}` : skipped());
}
