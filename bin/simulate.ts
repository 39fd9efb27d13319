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

const USAGE = `usage: sagemaker-resilient-endpoint simulate (or npm run simulate --) --example recommender|clustering --trace pulse|steady|poisson|abusive|csv [--csv FILE] [--qps OFF_PEAK_QPS] [--seed N] [--out DIR]
  timing assumptions (seconds): [--provisioning S] [--metric-delay S] [--weight-delay S] [--restart S]`;

function parse(argv: string[]): Record<string, string> {
  const o: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith('--')) {
      o[argv[i].slice(2)] = argv[i + 1] ?? '';
      i++;
    }
  }
  return o;
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

/** Runs the CLI with `argv` (the arguments after the script); returns the exit code. */
export function main(argv: string[]): number {
  const o = parse(argv);
  if ('help' in o) {
    console.log(USAGE);
    return 0;
  }
  try {
    const example = o.example ?? 'recommender';
    const endpoint = exampleEndpoint(example);
    const trace = traceFrom(o);
    const out = o.out ?? 'sim-out';
    const started = Date.now();
    const num = (k: string) => (o[k] === undefined ? undefined : Number(o[k]));
    const assumptions: Partial<SimAssumptions> = {
      provisioningS: num('provisioning'),
      metricDelayS: num('metric-delay'),
      weightApplyS: num('weight-delay'),
      restartS: num('restart'),
    };
    for (const [k, v] of Object.entries(assumptions)) {
      if (v !== undefined && !(Number.isFinite(v) && (v as number) >= 0)) throw new Error(`${k}: got ${v}; allowed: seconds >= 0`);
    }
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
