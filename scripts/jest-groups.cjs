// Suites `npm test` and `npm run test:quick` run together, each group in one test file and so in one jest
// module registry: aws-cdk-lib, the library and the JIT's warm code load once per group instead of once per
// suite. For the unit and template suites that is half their CPU (26 s against 51 s for 728 tests, on this
// 2-core machine). Each suite runs inside its own `describe` (test/*.group.ts), so its hooks apply to its
// tests only. A suite joins a group only if nothing in it reaches beyond itself: no aws-sdk-client-mock
// (it patches a client class for every suite of the registry), no jest.mock, no fake timers, no writes to
// process.env (test/test-runner.test.ts checks). Every other suite runs alone, as before. `npx jest
// test/<suite>` still runs one suite by itself (the default config in package.json does not group).
/** Group name → its suites (file names under test/). */
const GROUPS = {
  // The quick lane's: unit and template suites.
  units: [
    'auto-scaling.test.ts',
    'bad-input.test.ts',
    'breaker-contract.test.ts',
    'breaker-cost-docs.test.ts',
    'breaker-policy.edges.test.ts',
    'breaker-policy.guard.test.ts',
    'breaker-policy.test.ts',
    'breaker-wiring.test.ts',
    'build.test.ts',
    'capacity-plan.test.ts',
    'checks-facts.test.ts',
    'checks-rules.test.ts',
    'checks.test.ts',
    'circuit-breaker-triggers.test.ts',
    'circuit-breaker.test.ts',
    'deployment.test.ts',
    'docs.test.ts',
    'drift-monitor.test.ts',
    'drift-statistics.test.ts',
    'image-registries.test.ts',
    'import-cycles.test.ts',
    'instance-types.test.ts',
    'jsdoc-contract.test.ts',
    'memory-profile.test.ts',
    'model-artifacts.test.ts',
    'model-server.test.ts',
    'monitoring.test.ts',
    'prop-checks.test.ts',
    'public-api.test.ts',
    'real-account.test.ts',
    'region-resource-types.test.ts',
    'resilient-endpoint.test.ts',
    'simulation-scan.test.ts',
    'synth-noise.test.ts',
    'test-runner.test.ts',
  ],
  // `npm test` only (the quick lane skips these suites: scripts/test.mjs QUICK_SKIPS).
  slow: ['fleet.test.ts', 'simulation-api.test.ts', 'simulation-units.test.ts'],
};

/** The group file of each group (test/<name>.group.ts). */
const groupFile = name => `${name}.group.ts`;

module.exports = { GROUPS, groupFile };
