// `npm test`: every check, in two lanes that run side by side (tsc, jest in band and the package
// checks are each single-threaded, so two lanes keep both cores of a CI runner busy). A step starts
// when its lane reaches it and the steps it needs have finished; each step's output is printed when
// it ends, with its time, so the log reads in order. The first failure stops everything and prints
// that step's output. `npm test -- --serial` runs the same steps one after another.
import { spawn } from 'node:child_process';

const steps = {
  compile: {
    cmd: 'npx tsc -p tsconfig.json --incremental --tsBuildInfoFile dist/tsconfig.tsbuildinfo',
    why: 'type-check and build lib, lambda, bin, bench and tests into dist/',
  },
  bundle: { cmd: 'npm run bundle --silent', needs: ['compile'], why: 'Lambda bundle and example model archives' },
  jest: { cmd: 'npx jest --silent', needs: ['bundle'], why: 'unit, template and simulator tests' },
  python: { cmd: 'node scripts/test-python.mjs runtime', why: 'runtime helper, with and without the frameworks' },
  // The example models' suites unpack the archives `bundle` builds.
  models: { cmd: 'node scripts/test-python.mjs models', needs: ['bundle'], why: 'example inference code on real torch and scikit-learn' },
  package: {
    cmd: 'node scripts/check-package.mjs',
    needs: ['bundle'],
    why: 'npm pack from a fresh clone state; the tarball in a JavaScript app and a cdk init TypeScript app (README quick start)',
  },
  lint: { cmd: 'npm run lint --silent', why: 'eslint and prettier' },
  floor: { cmd: 'node scripts/check-floor.mjs', needs: ['bundle'], why: 'type-check and templates at the lowest peer versions' },
  jsii: { cmd: 'node scripts/check-jsii.mjs', needs: ['bundle'], why: 'jsii assembly, Python bindings, README Python quick start, API.md current' },
};
const lanes = [
  ['compile', 'bundle', 'jest'],
  ['lint', 'python', 'models', 'floor', 'jsii', 'package'],
];

const serial = process.argv.includes('--serial');
const started = Date.now();
const secs = ms => `${(ms / 1000).toFixed(1)} s`;
const children = new Set();
let failed = false;

function run(name) {
  const step = steps[name];
  const begin = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(step.cmd, { shell: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } });
    children.add(child);
    let out = '';
    child.stdout.on('data', d => {
      out += d;
    });
    child.stderr.on('data', d => {
      out += d;
    });
    child.on('close', code => {
      children.delete(child);
      if (failed) return reject(new Error(`${name} stopped`));
      if (code !== 0) {
        process.stdout.write(`${out}\n✗ ${name} (${step.cmd}) failed with exit code ${code} after ${secs(Date.now() - begin)}\n`);
        return reject(new Error(name));
      }
      const tail = out.trim()
        ? `${out
            .trim()
            .split('\n')
            .slice(-3)
            .map(l => `    ${l}`)
            .join('\n')}\n`
        : '';
      process.stdout.write(`✓ ${name.padEnd(8)} ${secs(Date.now() - begin).padStart(7)}  ${step.why}\n${tail}`);
      resolve();
    });
  });
}

// One promise per step, settled when it ends; a step first waits for the steps it needs.
const settle = {};
const finished = Object.fromEntries(
  Object.keys(steps).map(n => [
    n,
    new Promise((resolve, reject) => {
      settle[n] = { resolve, reject };
    }),
  ]),
);
Object.values(finished).forEach(p => p.catch(() => {}));
async function lane(names) {
  for (const name of names) {
    try {
      await Promise.all((steps[name].needs ?? []).map(d => finished[d]));
      await run(name);
      settle[name].resolve();
    } catch (e) {
      settle[name].reject(e);
      throw e;
    }
  }
}

try {
  await Promise.all(serial ? [lane(lanes.flat())] : lanes.map(lane));
  console.log(`\nall checks passed in ${secs(Date.now() - started)}${serial ? ' (serial)' : ` (${lanes.length} lanes)`}`);
} catch {
  failed = true;
  for (const c of children) c.kill('SIGTERM');
  process.exitCode = 1;
}
