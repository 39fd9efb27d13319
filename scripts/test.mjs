// `npm test`: every check, in two lanes that run side by side (tsc, jest in band and the package
// checks are each single-threaded, so two lanes keep both cores of a CI runner busy), by
// scripts/steps-runner.cjs: a line when each step starts and ends, and at least every 10 s a line naming
// what runs. `npm test -- --serial` runs the same steps one after another.
// `npm run test:quick` (`--quick`): the inner loop — the unit and template suites only, without the slow
// suites below, the framework (Python), floor, jsii and package steps. CI runs the full `npm test`.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { runSteps } = require('./steps-runner.cjs');
const { GROUPS } = require('./jest-groups.cjs');

/** Suites the quick lane leaves to `npm test`, each with what makes it slow. */
export const QUICK_SKIPS = {
  'simulation.test.ts': "the simulator's runs (pulses, matrix, calibration)",
  'simulation-units.test.ts': "the simulator's units on whole runs",
  'simulation-api.test.ts': "the simulator's facade on whole runs",
  'fleet.test.ts': 'fleets of 15, 60 and 80 endpoints at their stated limits',
  'cfn-validation.test.ts': "CloudFormation's schemas on every shape of stack",
  'lambda-bundle.test.ts': 'the shipped breaker bundle in Node.js 24 processes against dynalite',
  'ops-network.test.ts': 'doctor and drill against stalled local servers (real time-outs)',
  'integ.test.ts': 'the integration app',
  'drift-like-with-like.test.ts': "each example's drift function over 20 seeds of captures its own inference code wrote (Python)",
  'slow.group.ts': 'the fleet and simulator suites grouped in scripts/jest-groups.cjs',
};

// Both lanes run jest with scripts/jest-grouped.config.cjs: the unit and template suites together in one
// module registry (scripts/jest-groups.cjs says why and which).
const JEST = 'npx jest --silent --config scripts/jest-grouped.config.cjs';

// jest's --testPathIgnorePatterns replaces the config's list: the grouped suites are named again.
const quickJest = `${JEST} --testPathIgnorePatterns ${[...Object.keys(QUICK_SKIPS), ...Object.values(GROUPS).flat()]
  .map(f => `'/test/${f.replace(/\./g, '\\.')}$'`)
  .join(' ')}`;

const full = {
  compile: {
    cmd: 'npx tsc -p tsconfig.json --incremental --tsBuildInfoFile dist/tsconfig.tsbuildinfo',
    why: 'type-check and build lib, lambda, bin, bench and tests into dist/',
  },
  bundle: { cmd: 'npm run bundle --silent', needs: ['compile'], why: 'Lambda bundle and example model archives' },
  // Lambda's runtime for the bundle's end-to-end suite (never fails: where it cannot be installed, the suite says so).
  node24: { cmd: 'node scripts/node24.mjs', why: "Node.js 24 (Lambda's nodejs24.x) for the bundle's suite" },
  jest: { cmd: JEST, needs: ['bundle', 'node24'], why: 'unit, template and simulator tests' },
  python: { cmd: 'node scripts/test-python.mjs runtime', why: 'runtime helper, with and without the frameworks' },
  // The example models' suites unpack the archives `bundle` builds.
  models: { cmd: 'node scripts/test-python.mjs models', needs: ['bundle'], why: 'example inference code on real torch and scikit-learn' },
  package: {
    cmd: 'node scripts/check-package.mjs',
    needs: ['bundle'],
    why: 'npm pack from a fresh clone state; the tarball in a JavaScript app and a cdk init TypeScript app (README quick start, links)',
  },
  lint: { cmd: 'npm run lint --silent', why: 'eslint and prettier' },
  floor: {
    cmd: 'node scripts/check-floor.mjs',
    needs: ['bundle'],
    why: "templates at the lowest peer versions (their type-check is the jsii step's)",
  },
  jsii: {
    cmd: 'node scripts/check-jsii.mjs',
    needs: ['bundle'],
    why: "jsii assembly compiled at the peer floor (the floor's type-check), Python bindings, README Python quick start, API.md current",
  },
};

const quick = process.argv.includes('--quick');
const steps = quick
  ? {
      bundle: { cmd: 'npm run bundle --silent', why: 'Lambda bundle and example model archives (skipped while current)' },
      jest: { cmd: quickJest, needs: ['bundle'], why: `unit and template suites (not: ${Object.keys(QUICK_SKIPS).join(', ')})` },
    }
  : full;
const lanes = quick
  ? [['bundle', 'jest']]
  : [
      ['compile', 'bundle', 'jest'],
      ['node24', 'lint', 'python', 'models', 'floor', 'jsii', 'package'],
    ];

const ok = await runSteps({ steps, lanes, serial: process.argv.includes('--serial'), title: quick ? 'npm run test:quick' : 'npm test' });
if (quick && ok) console.log('the quick lane: CI runs every check (npm test)');
process.exitCode = ok ? 0 : 1;
