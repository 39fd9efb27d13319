#!/usr/bin/env node
import * as fs from 'fs';
import * as path from 'path';
import { App } from 'aws-cdk-lib';
import { ClusteringStack } from '../lib/examples/clustering-stack';
import { RecommenderStack } from '../lib/examples/recommender-stack';
import { ResilientEndpoint } from '../lib/resilient-endpoint';
import {
  abusiveClientTrace,
  compareScenarios,
  comparisonTable,
  csvTrace,
  poissonTrace,
  pulseTrace,
  renderChart,
  levelChangeList,
  resultRecord,
  SCENARIOS,
  SimAssumptions,
  steadyTrace,
  Trace,
} from '../lib/simulation';
import { dayTable, DEFAULT_WORKLOADS, goalTable, guardMatrix, matrixSummary, matrixTable, normalDayMatrix } from '../lib/simulation/matrix';
import { FlagSpec, numberFlag, parseFlags, UsageError } from './args';

const USAGE = `usage: sagemaker-resilient-endpoint simulate (or npm run simulate --)
  --matrix [--seeds 1,7,42,123] [--factors 17,25] [--examples recommender,clustering] [--qps 40] [--ways all] [--no-days] [--out DIR]
      the layers' goals, each example on its own workload (the clustering example also on incident A's, labelled):
      through 17x and 25x pulses of 40 QPS for each seed (0 OOM, refused + failed <= 1 %, CLOSED again within
      15 minutes of the traffic's return), and a normal day with no incident - steady at its off-peak, steady at its
      nominal peak, a daily curve between them (degraded <= 90 s, nothing refused by the guard); guard on, default
      delays (--ways all adds: without the guard, and without 10-second data). About 20 minutes (--no-days: 4).
  --example recommender|clustering --trace pulse|steady|poisson|abusive|csv [--csv FILE] [--qps OFF_PEAK_QPS] [--seed N] [--out DIR]
      the four scenarios on one trace, on the example's own workload (--memory-model footprint|profile to choose);
      the as-deployed run's level changes are listed with what moved each
  assumptions, all sweepable (seconds unless said; defaults and sources in the simulator docs):
    [--provisioning S] [--metric-delay S] [--metric-delay-10s S] [--guard-metric-delay S] [--alarm-eval S] [--event-delay S]
    [--level-poll S] [--weight-delay S] [--restart S] [--estimate-error SD]
    [--memory-model profile|footprint] [--no-guard] [--no-ten-second-data] [--no-guard-ten-second-data]
  -h, --help   this help
time bound: no AWS access; it ends when the simulated time does: one --example run in about 10 s of CPU, --matrix in
  about 20 minutes, 4 with --no-days (--ways all: three times the pulses), a --csv trace in proportion to its length
exit codes: 0 done, 1 the simulation failed, 2 a usage error`;

/** Flags that take no value. */
const SWITCHES = ['matrix', 'no-days', 'no-guard', 'no-ten-second-data', 'no-guard-ten-second-data', 'help'];
/** Flags that take a value. */
const VALUES = ['seeds', 'factors', 'examples', 'out', 'example', 'trace', 'csv', 'qps', 'seed', 'memory-model', 'ways'];
/** The simulator's assumptions a flag sets (seconds, unless said). */
const SECONDS: Record<string, keyof SimAssumptions> = {
  provisioning: 'provisioningS',
  'metric-delay': 'metricDelayS',
  'metric-delay-10s': 'metricDelay10S',
  'guard-metric-delay': 'guardMetricDelayS',
  'alarm-eval': 'alarmEvaluationS',
  'event-delay': 'eventToLambdaS',
  'level-poll': 'levelPollS',
  'weight-delay': 'weightApplyS',
  restart: 'restartS',
  'estimate-error': 'estimateErrorSd',
};
const FLAGS: FlagSpec = Object.fromEntries([
  ...SWITCHES.map(k => [k, { type: 'boolean' as const, ...(k === 'help' ? { short: 'h' } : {}) }]),
  ...[...VALUES, ...Object.keys(SECONDS)].map(k => [k, { type: 'string' as const }]),
]);

/** The flags as given (switches as 'true'); unknown flags, stray arguments and malformed numbers are UsageErrors naming the flag. */
function parse(argv: string[]): Record<string, string> {
  const values = parseFlags('simulate', argv, FLAGS);
  const errors: string[] = [];
  numberFlag(errors, values, 'qps', { min: 0, above: true, unit: 'requests per second' });
  numberFlag(errors, values, 'seed', { min: 0, integer: true });
  for (const flag of ['seeds', 'factors']) {
    const v = values[flag];
    if (typeof v === 'string' && !v.split(',').every(x => Number(x) > 0 && /^[\d.]+$/.test(x))) {
      errors.push(`--${flag}: got '${v}'; allowed: comma-separated numbers > 0`);
    }
  }
  const o = Object.fromEntries(Object.entries(values).flatMap(([k, v]) => (v === undefined || v === false ? [] : [[k, String(v)]])));
  try {
    assumptionsFrom(o); // (before any example is built)
  } catch (e) {
    errors.push((e as Error).message);
  }
  if (errors.length) throw new UsageError(`simulate: ${errors.join('; ')}`);
  return o;
}

/** The assumptions the flags set (undefined: the engine's default); bad values are one clear error. */
export function assumptionsFrom(o: Record<string, string>): Partial<SimAssumptions> {
  const bad: string[] = [];
  const seconds = Object.fromEntries(Object.entries(SECONDS).map(([flag, key]) => [key, numberFlag(bad, o, flag, { min: 0 })]));
  const model = o['memory-model'];
  if (model !== undefined && model !== 'profile' && model !== 'footprint') bad.push(`--memory-model: got '${model}'; allowed: profile or footprint`);
  if (bad.length) throw new UsageError(bad.join('; '));
  return {
    ...seconds,
    memoryModel: model as 'profile' | 'footprint' | undefined,
    guard: o['no-guard'] ? false : undefined,
    tenSecondData: o['no-ten-second-data'] ? false : undefined,
    guardTenSecondData: o['no-guard-ten-second-data'] ? false : undefined,
  };
}

const list = (v: string | undefined, fallback: number[]) => (v === undefined ? fallback : v.split(',').map(Number));

function runMatrix(o: Record<string, string>): number {
  const started = Date.now();
  const names = (o.examples ?? 'recommender,clustering').split(',');
  const endpoints = Object.fromEntries(names.map(n => [n, exampleEndpoint(n)]));
  const seeds = list(o.seeds, [1, 7, 42, 123]);
  const factors = list(o.factors, [17, 25]);
  if ([...seeds, ...factors].some(x => !Number.isFinite(x) || x <= 0)) throw new Error('--seeds and --factors: comma-separated numbers > 0');
  if (o.ways !== undefined && o.ways !== 'all') throw new UsageError(`--ways: got '${o.ways}'; allowed: all`);
  const assumptions = assumptionsFrom(o);
  const rows = guardMatrix(endpoints, {
    seeds,
    factors,
    offPeakQps: o.qps === undefined ? undefined : Number(o.qps),
    memoryModels: assumptions.memoryModel ? [assumptions.memoryModel] : undefined,
    ways:
      o.ways === 'all'
        ? [
            [true, true],
            [false, true],
            [true, false],
          ]
        : [[assumptions.guard ?? true, assumptions.tenSecondData ?? true]],
    assumptions: { ...assumptions, memoryModel: undefined, guard: undefined, tenSecondData: undefined },
    onRun: (r, done, total) => process.stderr.write(`\r${done}/${total} ${r.example} ${r.memoryModel} ${r.factor}x seed ${r.seed}`.padEnd(60)),
  });
  process.stderr.write('\n');
  const days = o['no-days']
    ? []
    : normalDayMatrix(endpoints, {
        seeds,
        workloads: DEFAULT_WORKLOADS,
        assumptions: { ...assumptions, memoryModel: undefined },
        onRun: (r, done, total) => process.stderr.write(`\r${done}/${total} ${r.example} ${r.day} seed ${r.seed}`.padEnd(60)),
      });
  if (days.length) process.stderr.write('\n');
  const out = o.out ?? 'sim-out';
  const goal = goalTable(
    rows.filter(r => r.guard && r.tenSecondData),
    ex => endpoints[ex].fallbackVariant !== undefined,
  );
  const summary = matrixSummary(rows);
  const table = matrixTable(rows);
  const day = days.length ? `\n\n## A normal day\n\n${dayTable(days)}` : '';
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'matrix.md'), `# The layers' goal\n\n${goal}${day}\n\n## Every run\n\n${summary}\n\n${table}\n`);
  fs.writeFileSync(
    path.join(out, 'matrix.json'),
    JSON.stringify(
      [...rows, ...days].map(({ result: { series: _s, ...r }, ...k }) => ({ ...k, ...r })),
      null,
      2,
    ),
  );
  console.log(`${goal}${day}\n\n${summary}\n\nwrote ${out}/matrix.md, ${out}/matrix.json in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return 0;
}

export function exampleEndpoint(name: string): ResilientEndpoint {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  if (name === 'recommender') return new RecommenderStack(app, 'Recommender').endpoint;
  if (name === 'clustering') return new ClusteringStack(app, 'Clustering').endpoint;
  throw new UsageError(`unknown example '${name}' (recommender or clustering)`);
}

export function traceFrom(o: Record<string, string>): Trace {
  const qps = Number(o.qps ?? 40);
  switch (o.trace ?? 'pulse') {
    case 'pulse':
      return pulseTrace(qps, 17);
    case 'steady':
      return steadyTrace(qps, 7200);
    case 'poisson':
      return poissonTrace(qps, 7200);
    case 'abusive':
      return abusiveClientTrace(200, qps / 200, 150);
    case 'csv':
      if (!o.csv) throw new UsageError('--trace csv needs --csv FILE (one QPS value per second)');
      return csvTrace(o.csv);
    default:
      throw new UsageError(`--trace: got '${o.trace}'; allowed: pulse, steady, poisson, abusive or csv`);
  }
}

function definedOnly<T extends object>(x: T): Partial<T> {
  return Object.fromEntries(Object.entries(x).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Runs the CLI with `argv` (the arguments after the script); returns the exit code. */
export function main(argv: string[]): number {
  let o: Record<string, string>;
  try {
    o = parse(argv);
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  // No arguments, or --help: the usage (the matrix takes minutes and writes files: only when asked).
  if ('help' in o || argv.length === 0) {
    console.log(USAGE);
    return 0;
  }
  try {
    if (o.matrix) return runMatrix(o);
    if (o.example === undefined && o.trace === undefined) throw new UsageError('give --matrix, or --example and --trace');
    const example = o.example ?? 'recommender';
    const endpoint = exampleEndpoint(example);
    const trace = traceFrom(o);
    const out = o.out ?? 'sim-out';
    const started = Date.now();
    // Each example on its own workload by default (the recommender: the footprint model on its own 5–3,000-event
    // distribution, its profile being a CPU one; the clustering model: its measured profile, in rows);
    // --memory-model footprint runs the clustering example on incident A's workload, a borrowed stress test.
    const own = DEFAULT_WORKLOADS[example]?.own ?? 'footprint';
    const assumptions = { memoryModel: own, ...definedOnly(assumptionsFrom(o)) };
    const workload = assumptions.memoryModel === own ? `its own workload (${own} model)` : `a borrowed workload (${assumptions.memoryModel} model)`;
    const rows = compareScenarios(trace, endpoint, {
      seed: Number(o.seed ?? 42),
      assumptions,
      onProgress: (s, f) =>
        process.stderr.write(
          `\r${s.padEnd(22)} ${Math.round(100 * f)
            .toString()
            .padStart(3)} %`,
        ),
    });
    process.stderr.write('\n');
    const deployed = rows.find(r => r.scenario === SCENARIOS.BREAKER);
    const changes = deployed ? `\n\nWhat moved the level (${SCENARIOS.BREAKER}):\n\n${levelChangeList(deployed.result)}` : '';
    const table = comparisonTable(rows) + changes;
    const title = `${example}: ${trace.name}, seed ${o.seed ?? 42}, on ${workload}`;
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, 'table.md'), `# ${title}\n\n${table}\n`);
    fs.writeFileSync(path.join(out, 'chart.svg'), renderChart(rows, title));
    fs.writeFileSync(path.join(out, 'results.json'), JSON.stringify(rows.map(resultRecord), null, 2));
    console.log(
      `# ${title}\n\n${table}\n\nwrote ${out}/table.md, ${out}/chart.svg, ${out}/results.json in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return 0;
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return e instanceof UsageError ? 2 : 1;
  }
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
