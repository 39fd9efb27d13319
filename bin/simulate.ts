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
  resultRecord,
  SimAssumptions,
  steadyTrace,
  Trace,
} from '../lib/simulation';
import { goalTable, guardMatrix, matrixSummary, matrixTable } from '../lib/simulation/matrix';

const USAGE = `usage: sagemaker-resilient-endpoint simulate (or npm run simulate --)
  --matrix [--seeds 1,7,42,123] [--factors 17,25] [--examples recommender,clustering] [--qps 40] [--ways all] [--out DIR]
      the layers' goal table: both examples through 17x and 25x pulses for each seed, footprint memory model,
      guard on, default delays (--ways all adds: without the guard, and without 10-second data)
  --example recommender|clustering --trace pulse|steady|poisson|abusive|csv [--csv FILE] [--qps OFF_PEAK_QPS] [--seed N] [--out DIR]
      the four scenarios on one trace (footprint memory model unless --memory-model profile)
  assumptions, all sweepable (seconds unless said; defaults and sources in the simulator docs):
    [--provisioning S] [--metric-delay S] [--metric-delay-10s S] [--guard-metric-delay S] [--alarm-eval S] [--event-delay S]
    [--level-poll S] [--weight-delay S] [--restart S] [--estimate-error SD]
    [--memory-model profile|footprint] [--no-guard] [--no-ten-second-data] [--no-guard-ten-second-data]`;

/** Flags that take no value. */
const SWITCHES = new Set(['matrix', 'no-guard', 'no-ten-second-data', 'no-guard-ten-second-data', 'help']);

function parse(argv: string[]): Record<string, string> {
  const o: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i].startsWith('--')) throw new Error(`unexpected argument '${argv[i]}'`);
    const k = argv[i].slice(2);
    if (SWITCHES.has(k)) {
      o[k] = 'true';
    } else {
      o[k] = argv[i + 1] ?? '';
      i++;
    }
  }
  return o;
}

/** The assumptions the flags set (undefined: the engine's default); bad values are one clear error. */
export function assumptionsFrom(o: Record<string, string>): Partial<SimAssumptions> {
  const num = (k: string) => (o[k] === undefined ? undefined : Number(o[k]));
  const seconds = {
    provisioningS: num('provisioning'),
    metricDelayS: num('metric-delay'),
    metricDelay10S: num('metric-delay-10s'),
    guardMetricDelayS: num('guard-metric-delay'),
    alarmEvaluationS: num('alarm-eval'),
    eventToLambdaS: num('event-delay'),
    levelPollS: num('level-poll'),
    weightApplyS: num('weight-delay'),
    restartS: num('restart'),
    estimateErrorSd: num('estimate-error'),
  };
  const bad = Object.entries(seconds)
    .filter(([, v]) => v !== undefined && !(Number.isFinite(v) && (v as number) >= 0))
    .map(([k, v]) => `${k}: got ${v}; allowed: a number >= 0`);
  const model = o['memory-model'];
  if (model !== undefined && model !== 'profile' && model !== 'footprint') bad.push(`--memory-model: got '${model}'; allowed: profile or footprint`);
  if (bad.length) throw new Error(bad.join('; '));
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
  if (o.ways !== undefined && o.ways !== 'all') throw new Error(`--ways: got '${o.ways}'; allowed: all`);
  const assumptions = assumptionsFrom(o);
  const rows = guardMatrix(endpoints, {
    seeds,
    factors,
    offPeakQps: o.qps === undefined ? undefined : Number(o.qps),
    memoryModels: [assumptions.memoryModel ?? 'footprint'],
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
  const out = o.out ?? 'sim-out';
  const goal = goalTable(
    rows.filter(r => r.guard && r.tenSecondData),
    ex => endpoints[ex].fallbackVariant !== undefined,
  );
  const summary = matrixSummary(rows);
  const table = matrixTable(rows);
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'matrix.md'), `# The layers' goal\n\n${goal}\n\n## Every run\n\n${summary}\n\n${table}\n`);
  fs.writeFileSync(
    path.join(out, 'matrix.json'),
    JSON.stringify(
      rows.map(({ result: { series: _s, ...r }, ...k }) => ({ ...k, ...r })),
      null,
      2,
    ),
  );
  console.log(`${goal}\n\n${summary}\n\nwrote ${out}/matrix.md, ${out}/matrix.json in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return 0;
}

export function exampleEndpoint(name: string): ResilientEndpoint {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  if (name === 'recommender') return new RecommenderStack(app, 'Recommender').endpoint;
  if (name === 'clustering') return new ClusteringStack(app, 'Clustering').endpoint;
  throw new Error(`unknown example '${name}' (recommender or clustering)`);
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
      if (!o.csv) throw new Error('--trace csv needs --csv FILE (one QPS value per second)');
      return csvTrace(o.csv);
    default:
      throw new Error(`unknown trace '${o.trace}'`);
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
    return 1;
  }
  // No arguments, or --help: the usage (the matrix takes minutes and writes files: only when asked).
  if ('help' in o || argv.length === 0) {
    console.log(USAGE);
    return 0;
  }
  try {
    if (o.matrix) return runMatrix(o);
    if (o.example === undefined && o.trace === undefined) throw new Error('give --matrix, or --example and --trace');
    const example = o.example ?? 'recommender';
    const endpoint = exampleEndpoint(example);
    const trace = traceFrom(o);
    const out = o.out ?? 'sim-out';
    const started = Date.now();
    // The footprint model by default: the one under which the unprotected scenarios fail as the incidents
    // did (the examples' measured curves are tiny); --memory-model profile for a measured profile.
    const assumptions = { memoryModel: 'footprint' as const, ...definedOnly(assumptionsFrom(o)) };
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
    const table = comparisonTable(rows);
    const title = `${example}: ${trace.name}, seed ${o.seed ?? 42}`;
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
    return 1;
  }
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
