#!/usr/bin/env node
import * as fs from 'fs';
import * as path from 'path';
import { Size } from 'aws-cdk-lib';
import { CapacityPlan } from '../lib/capacity-plan';
import { closest } from '../lib/private/suggest';
import { FlagSpec, numberFlag, packageVersion, parseFlags, UsageError } from './args';
import { main as simulate } from './simulate';

const NAME = 'sagemaker-resilient-endpoint';
const COMMANDS = ['plan', 'simulate', 'doctor', 'drill'];

const USAGE = `usage: ${NAME} <command> [options]

commands:
  plan       the instance type and count for a latency and a peak QPS (no AWS access)
  simulate   the traffic and memory simulator (no AWS access)
  doctor     read-only checks of a deployed endpoint (your AWS credentials)
  drill      a game day against a deployed endpoint (your AWS credentials)

  ${NAME} <command> --help   a command's options

options:
  -h, --help      this help
  -v, --version   the package's version

time bound and exit codes: each command's --help (plan, simulate: no AWS access; doctor: 60 s by default;
drill: --hold + --watch-back + 2 min)

exit codes: 0 done, 1 the command failed, 2 a usage error`;

const PLAN_USAGE = `usage: ${NAME} plan --latency MS --qps QPS [--safety 1.3] [--model-gib GIB] [--gpu-gib GIB] [--gpu] [--min-instances 2]
  Sizes an endpoint by incident B's rule: parallel slots = p50 latency × peak QPS / 1000 × safety factor,
  a slot being a vCPU (CPU) or a model copy (GPU); workers × the model's memory stay under 80 % of memory.
  --latency MS          median (p50) latency of one request, in milliseconds (required)
  --qps QPS             peak requests per second (required)
  --safety F            safety factor on the need, 1 to 3 (default 1.3; incident B: 1.2–1.5)
  --model-gib GIB       host memory of one model copy at peak, in GiB
  --gpu-gib GIB         GPU memory of one model copy at peak, in GiB (implies --gpu)
  --gpu                 the model needs a GPU
  --min-instances N     the fewest instances (default 2: more than one spreads over Availability Zones)
  -h, --help            this help
  Time bound: ends at once (arithmetic on the instance catalog; no AWS access, no network).
  exit codes: 0 planned, 1 no instance type fits (the reason is printed), 2 a usage error`;

const PLAN_FLAGS: FlagSpec = {
  latency: { type: 'string' },
  qps: { type: 'string' },
  safety: { type: 'string' },
  'model-gib': { type: 'string' },
  'gpu-gib': { type: 'string' },
  gpu: { type: 'boolean' },
  'min-instances': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

/**
 * The operator commands: the pre-built bundle (with the AWS SDK inside) in an installed package, the
 * source in this repository.
 */
function ops(): typeof import('./ops') {
  const bundle = path.join(__dirname, '..', 'cli-bundles', 'ops.js');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand: plan and simulate need no AWS SDK
  return fs.existsSync(bundle) ? require(bundle) : require('./ops');
}

/** `-h` anywhere in a command's arguments asks for its help, as `--help` does. */
const helpAsked = (args: string[]) => args.includes('-h') || args.includes('--help');

/** Runs the CLI with `argv` (the arguments after the script); returns the exit code (a promise for doctor and drill). */
export function main(argv: string[]): number | Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === 'simulate') return simulate(rest);
  if (cmd === 'doctor') return ops().doctorMain(helpAsked(rest) ? ['--help'] : rest);
  if (cmd === 'drill') return ops().drillMain(helpAsked(rest) ? ['--help'] : rest);
  if (cmd === 'plan') return plan(rest);
  if (cmd === undefined || cmd === '-h' || cmd === '--help' || cmd === 'help') {
    (cmd === undefined ? console.error : console.log)(USAGE);
    return cmd === undefined ? 2 : 0;
  }
  if (cmd === '-v' || cmd === '--version') {
    console.log(packageVersion());
    return 0;
  }
  // A misspelt command or option: the one probably meant.
  const option = cmd.startsWith('-');
  const known = option ? closest(cmd.replace(/^-+/, ''), ['help', 'version']) : closest(cmd, COMMANDS);
  const near = known && (option ? `--${known}` : known);
  console.error(`${NAME}: unknown ${option ? 'option' : 'command'} '${cmd}'${near ? ` (did you mean ${near}?)` : ''}\n\n${USAGE}`);
  return 2;
}

/** `plan`: the capacity plan on stdout. */
function plan(argv: string[]): number {
  try {
    const o = parseFlags('plan', argv, PLAN_FLAGS);
    if (o.help) {
      console.log(PLAN_USAGE);
      return 0;
    }
    const errors: string[] = [];
    const latency = numberFlag(errors, o, 'latency', { min: 0, above: true, unit: 'milliseconds' });
    const qps = numberFlag(errors, o, 'qps', { min: 0, above: true, unit: 'requests per second' });
    const safety = numberFlag(errors, o, 'safety', { min: 1, max: 3 });
    const modelGib = numberFlag(errors, o, 'model-gib', { min: 0, above: true, unit: 'GiB' });
    const gpuGib = numberFlag(errors, o, 'gpu-gib', { min: 0, above: true, unit: 'GiB' });
    const minInstances = numberFlag(errors, o, 'min-instances', { min: 1, integer: true });
    for (const flag of ['latency', 'qps']) if (o[flag] === undefined) errors.push(`--${flag} is required`);
    if (errors.length) throw new UsageError(`plan: ${errors.join('; ')}`);
    const p = CapacityPlan.compute({
      p50LatencyMs: latency!,
      peakQps: qps!,
      safetyFactor: safety,
      modelMemory: modelGib !== undefined ? Size.mebibytes(Math.round(modelGib * 1024)) : undefined,
      gpuMemory: gpuGib !== undefined ? Size.mebibytes(Math.round(gpuGib * 1024)) : undefined,
      requiresGpu: o.gpu === true ? true : undefined,
      minInstances,
    });
    console.log(p.toTable());
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`${e.message}\n\n${PLAN_USAGE}`);
      return 2;
    }
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
