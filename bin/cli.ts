#!/usr/bin/env node
import * as fs from 'fs';
import * as path from 'path';
import { Size } from 'aws-cdk-lib';
import { CapacityPlan } from '../lib/capacity-plan';
import { main as simulate } from './simulate';

const USAGE = `usage: sagemaker-resilient-endpoint doctor --endpoint NAME [--region R] [--json] (checks a deployed endpoint; --help)
       sagemaker-resilient-endpoint drill --endpoint NAME --to DEGRADED|OPEN [--hold 5m] [--dry-run] (a game day; --help)
       sagemaker-resilient-endpoint simulate --help (the traffic/memory simulator)
       sagemaker-resilient-endpoint plan --latency <p50 ms> --qps <peak QPS> [--safety 1.3] [--model-gib <host GiB per copy>] [--gpu-gib <GPU GiB per copy>] [--gpu] [--min-instances 2]`;

/**
 * The operator commands: the pre-built bundle (with the AWS SDK inside) in an installed package, the
 * source in this repository.
 */
function ops(): typeof import('./ops') {
  const bundle = path.join(__dirname, '..', 'cli-bundles', 'ops.js');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand: plan and simulate need no AWS SDK
  return fs.existsSync(bundle) ? require(bundle) : require('./ops');
}

/** Runs the CLI with `argv` (the arguments after the script); returns the exit code (a promise for doctor and drill). */
export function main(argv: string[]): number | Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === 'simulate') return simulate(rest);
  if (cmd === 'doctor') return ops().doctorMain(rest);
  if (cmd === 'drill') return ops().drillMain(rest);
  if (cmd !== 'plan') {
    console.error(USAGE);
    return 2;
  }
  const opts: Record<string, string | boolean> = {};
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (!a.startsWith('--')) continue;
    const next = rest[i + 1];
    if (next === undefined || next.startsWith('--')) opts[a.slice(2)] = true;
    else {
      opts[a.slice(2)] = next;
      i++;
    }
  }
  const num = (k: string) => (opts[k] === undefined ? undefined : Number(opts[k]));
  if (num('latency') === undefined || num('qps') === undefined) {
    console.error(USAGE);
    return 2;
  }
  try {
    const plan = CapacityPlan.compute({
      p50LatencyMs: num('latency')!,
      peakQps: num('qps')!,
      safetyFactor: num('safety'),
      modelMemory: num('model-gib') !== undefined ? Size.mebibytes(Math.round(num('model-gib')! * 1024)) : undefined,
      gpuMemory: num('gpu-gib') !== undefined ? Size.mebibytes(Math.round(num('gpu-gib')! * 1024)) : undefined,
      requiresGpu: opts.gpu === true ? true : undefined,
      minInstances: num('min-instances'),
    });
    console.log(plan.toTable());
    return 0;
  } catch (e) {
    console.error((e as Error).message);
    return 1;
  }
}

if (require.main === module) {
  Promise.resolve(main(process.argv.slice(2))).then(
    code => {
      process.exitCode = code;
    },
    e => {
      console.error(`${(e as Error).name}: ${(e as Error).message}`);
      process.exitCode = 1;
    },
  );
}
