// `npm run mutation [-- --group <name>…] [--list] [--js|--python]`: Stryker over the modules whose bugs
// reach users, one group at a time, each group's mutants run against that group's own suites (the
// suites that state what the module promises). One Stryker run over everything would run every
// template suite for every mutant (jest's findRelatedTests follows lib/index.ts to all of them): hours
// on 2 cores. Per group it is minutes. Each group gets its own config (stryker.config.json with the
// group's `mutate` and `testMatch`, written to stryker.<group>.tmp.json), its own incremental file
// (reports/stryker-<group>-incremental.json: a rerun after a small change tests only what changed)
// and its own report (reports/mutation/<group>.json). Then the score per file over every report, and
// the runtime helper's own mutation run (scripts/mutate-python.py). Not part of `npm test`.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** Which suites must kill a module's mutants. A module's own suite first; the cross-module suites where they hold its promises. */
export const GROUPS = [
  { name: 'breaker-policy', mutate: ['lib/breaker/policy.ts'], suites: ['breaker-policy.guard', 'breaker-policy', 'breaker-policy.edges'] },
  {
    name: 'breaker-function',
    mutate: ['lambda/circuit-breaker/**/*.ts'],
    suites: [
      'circuit-breaker-handler',
      'circuit-breaker-handler.fleet',
      'circuit-breaker-io',
      'circuit-breaker-state-store',
      'circuit-breaker-triggers',
      'breaker-contract',
    ],
  },
  {
    name: 'breaker-construct',
    mutate: ['lib/breaker/circuit-breaker.ts', 'lib/breaker/shared-circuit-breaker.ts', 'lib/breaker/wiring.ts', 'lib/breaker/contract.ts'],
    suites: ['breaker-wiring', 'breaker-contract', 'circuit-breaker', 'fleet-wiring', 'real-account', 'bad-input'],
  },
  { name: 'auto-scaling', mutate: ['lib/auto-scaling.ts'], suites: ['auto-scaling'] },
  { name: 'deployment', mutate: ['lib/deployment.ts'], suites: ['deployment'] },
  { name: 'model-server', mutate: ['lib/model-server.ts'], suites: ['model-server'] },
  {
    name: 'prop-checks',
    // (instance-types.ts: only its name checks, isInstanceSize and nearestCatalogType; the rest is the catalog's data.)
    mutate: [
      'lib/private/prop-checks.ts',
      'lib/private/unit-props.ts',
      'lib/validation.ts',
      'lib/private/suggest.ts',
      'lib/instance-types.ts:269-291',
    ],
    suites: ['prop-checks'],
  },
  { name: 'cli', mutate: ['bin/cli.ts', 'bin/args.ts'], suites: ['cli'] },
  { name: 'checks', mutate: ['lib/checks/**/*.ts'], suites: ['checks', 'checks-facts', 'checks-rules'] },
  { name: 'monitoring', mutate: ['lib/monitoring/**/*.ts'], suites: ['monitoring'] },
  { name: 'fleet', mutate: ['lib/fleet.ts'], suites: ['fleet-wiring', 'fleet'] },
  { name: 'capacity-plan', mutate: ['lib/capacity-plan.ts'], suites: ['capacity-plan'] },
  { name: 'memory-profile', mutate: ['lib/memory-profile.ts'], suites: ['memory-profile'] },
  { name: 'model-artifacts', mutate: ['lib/model-artifacts.ts', 'lib/validation.ts'], suites: ['model-artifacts', 'monitoring'] },
  {
    name: 'ops-cli',
    mutate: ['bin/ops/*.ts', '!bin/ops/drift-check.ts', '!bin/ops/doctor-drift.ts'],
    suites: ['ops-doctor', 'ops-drill', 'ops-network'],
  },
  // doctor's live checks alone (issue 39): the ops-cli group holds them too, at several times the cost.
  { name: 'doctor-live', mutate: ['bin/ops/doctor-live.ts'], suites: ['ops-doctor'] },
  // The per-Region resource types: judged against the validator, live (test/region-resource-types.test.ts).
  { name: 'region-types', mutate: ['lib/region-resource-types.ts'], suites: ['region-resource-types'] },
  {
    name: 'drift',
    mutate: [
      'lib/drift/statistics.ts',
      'lib/drift/baseline.ts',
      'lib/drift/capture.ts',
      'lambda/drift/**/*.ts',
      'bin/ops/drift-check.ts',
      'bin/ops/doctor-drift.ts',
    ],
    suites: ['drift-statistics', 'drift-function', 'drift-baselines', 'ops-doctor-drift'],
  },
  {
    name: 'drift-construct',
    // (drift-like-with-like, 20 seeds through the function, is the end-to-end proof: ~40 s a run, too slow per mutant.)
    mutate: ['lib/drift/drift-monitor.ts', 'lib/drift/model-monitor.ts', 'lib/drift/features.ts'],
    suites: ['drift-monitor', 'drift-baselines'],
  },
  // The container's memory environment (budgets, guardBudgetPercent, the CPU-profile-on-GPU warning): the
  // lines of lib/private/models.ts that compute it, against the suite that synthesizes it.
  // The simulator's unit mapping (a variant's caps in its own unit moved onto the footprint workload), against its own fast suite.
  // The simulator's per-second helpers (a selection for the P99, a backward scan, the slots' tournament tree).
  { name: 'sim-scan', mutate: ['lib/simulation/scan.ts'], suites: ['simulation-scan'] },
  // A profile's latency by size (MemoryProfile.meanLatencyMs, the simulator's service times).
  { name: 'latency-curve', mutate: ['lib/memory-profile.ts:180-206'], suites: ['memory-profile', 'auto-scaling'] },
  // CSV rows counted without parsing a cell, in text or in a base64 body's bytes.
  { name: 'drift-csv', mutate: ['lib/drift/capture.ts:60-136'], suites: ['drift-function'] },
  {
    name: 'sim-units',
    mutate: ['lib/simulation/units.ts', 'lib/simulation/index.ts:42-54'],
    suites: ['simulation-units'],
  },
  // ContainerImage.fromDlc: the repository → serving stack and Region → account mapping (lines of
  // lib/model-artifacts.ts: modelServerOfRepository, DlcImage, imageAccount) and the account tables of
  // lib/image-registries.ts, against the suite that compares every entry with the SageMaker Python SDK's
  // catalog (the Regions lists below line 100 are checked by the same comparison; left out as ~550 more
  // mutants of one kind), then the construct-level suite.
  {
    name: 'image-table',
    mutate: ['lib/model-artifacts.ts:84-181', 'lib/image-registries.ts:14-100'],
    suites: ['image-registries', 'model-artifacts'],
  },
  // The example stacks' deployed settings, against the suite that states them on their templates.
  { name: 'examples', mutate: ['lib/examples/recommender-stack.ts', 'lib/examples/clustering-stack.ts'], suites: ['examples'] },
  {
    name: 'container-budget',
    mutate: ['lib/private/models.ts:74-90', 'lib/private/models.ts:140-165', 'lib/private/models.ts:195-270'],
    suites: ['memory-profile'],
  },
];

const USAGE = `usage: npm run mutation [-- --group NAME]... [--list] [--js | --python] [--concurrency N]
  --group NAME     one group (repeat for more; default: every group, then the Python run — hours on 2 cores)
  --list           the groups, their modules and suites, without running anything
  --js, --python   only Stryker's groups, or only the runtime helper's run (scripts/mutate-python.py)
  --concurrency N  Stryker's test runners (1 on a shared machine)
exit codes: 0 every run finished, 1 a run failed, 2 a usage error`;
let values;
try {
  ({ values } = parseArgs({
    options: {
      group: { type: 'string', multiple: true, default: [] },
      list: { type: 'boolean' },
      js: { type: 'boolean' },
      python: { type: 'boolean' },
      concurrency: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  }));
} catch (e) {
  console.error(`${e.message}\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const only = values.python ? 'python' : values.js ? 'js' : 'both';
const chosen = values.group;
if (values.list) {
  for (const g of GROUPS) console.log(`${g.name.padEnd(18)} ${g.mutate.join(', ')}  ←  ${g.suites.join(', ')}`);
  process.exit(0);
}
const unknown = chosen.filter(n => !GROUPS.some(g => g.name === n));
if (unknown.length) {
  console.error(`no mutation group ${unknown.join(', ')}; the groups: ${GROUPS.map(g => g.name).join(', ')}`);
  process.exit(2);
}

/** stryker.config.json with a group's modules and suites. */
function groupConfig(g) {
  const c = JSON.parse(readFileSync('stryker.config.json', 'utf8'));
  delete c._comment;
  c.mutate = g.mutate;
  c.jest.config.testMatch = g.suites.map(s => `**/test/${s}.test.ts`);
  c.jest.config.testPathIgnorePatterns = ['/node_modules/'];
  c.jest.config.testSequencer = '<rootDir>/scripts/jest-suite-order.cjs'; // the suites in the order listed
  c.incrementalFile = `reports/stryker-${g.name}-incremental.json`;
  c.tempDirName = `.stryker-tmp-${g.name}`;
  c.jsonReporter = { fileName: `reports/mutation/${g.name}.json` };
  if (values.concurrency !== undefined) c.concurrency = Number(values.concurrency); // e.g. 1 on a shared machine
  return c;
}

let code = 0;
if (only !== 'python') {
  for (const g of GROUPS.filter(x => !chosen.length || chosen.includes(x.name))) {
    const file = `stryker.${g.name}.tmp.json`;
    writeFileSync(file, JSON.stringify(groupConfig(g), null, 2));
    console.log(`\n== ${g.name}: ${g.mutate.join(', ')} against ${g.suites.join(', ')}`);
    const r = spawnSync('npx', ['stryker', 'run', file], { stdio: 'inherit' });
    code ||= r.status ?? 1;
  }
  console.log(
    '\nmutation score per file (killed + timed out) / (killed + timed out + survived + no coverage), from the latest report of each group:',
  );
  for (const g of GROUPS) {
    const report = `reports/mutation/${g.name}.json`;
    if (!existsSync(report)) {
      console.log(`  (not run yet: ${g.name})`);
      continue;
    }
    for (const [file, f] of Object.entries(JSON.parse(readFileSync(report, 'utf8')).files).sort((a, b) => a[0].localeCompare(b[0]))) {
      const by = s => f.mutants.filter(m => m.status === s).length;
      const killed = by('Killed') + by('Timeout');
      const survived = by('Survived') + by('NoCoverage');
      const score = killed + survived ? (100 * killed) / (killed + survived) : 100;
      console.log(`  ${score.toFixed(1).padStart(5)} %  ${String(killed).padStart(4)} killed  ${String(survived).padStart(4)} survived  ${file}`);
    }
  }
}
if (only !== 'js') {
  const r = spawnSync('python3', ['scripts/mutate-python.py'], { stdio: 'inherit' });
  code ||= r.status ?? 1;
}
process.exit(code);
