/**
 * Benchmarks (printed figures, never timed tests): the circuit breaker's bundle size, module load
 * (cold start) time, policy decisions per second and AWS calls per evaluation; and, when present,
 * the simulator's speed.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { performance } from 'perf_hooks';
import { DEFAULT_CONFIG, decide, initialState, MemoryPoint } from '../lib/breaker/policy';
import { App, Stack } from 'aws-cdk-lib';
import { ContainerImage, ResilientEndpointFleet, SageMakerInstanceType } from '../lib';
import { dailyTrace, runSimulation, simVariantsFrom } from '../lib/simulation';
import { parseFlags, UsageError } from '../bin/args';
import { exampleEndpoint } from '../bin/simulate';
import { breakerSettings } from '../test/breaker-settings';
import { benchDrift } from './drift';

const root = path.join(__dirname, '..', '..');
const bundle = path.join(root, 'dist', 'lambda-bundles', 'circuit-breaker', 'index.js');

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

export function benchBreaker(): Record<string, string> {
  const size = fs.statSync(bundle).size;
  // Cold start: a fresh node process requires the bundle, which holds the SDK clients it uses (run from
  // the OS's temporary folder with no NODE_PATH, so nothing can come from this repository's node_modules).
  const loads: number[] = [];
  const script = `const t=process.hrtime.bigint();require(${JSON.stringify(bundle)});console.log(Number(process.hrtime.bigint()-t)/1e6)`;
  const { NODE_PATH: _ignored, ...env } = process.env;
  for (let i = 0; i < 7; i++) {
    loads.push(Number(execFileSync(process.execPath, ['-e', script], { cwd: os.tmpdir(), env }).toString().trim()));
  }
  // Decisions per second over a realistic 15-point window.
  const points: MemoryPoint[] = Array.from({ length: 15 }, (_, i) => ({ t: i * 60_000, v: 60 + (i % 7) * 4 }));
  let state = initialState(0);
  const n = 200_000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const now = 15 * 60_000 + (i % 60) * 1000;
    const d = decide(
      state,
      { memory: points, errors: i % 50, invocations: 1000 },
      { status: 'InService', weights: { P: 1 - state.share, F: state.share } },
      { primary: 'P', fallback: 'F' },
      DEFAULT_CONFIG,
      now,
    );
    state = d.next;
  }
  const secs = (performance.now() - t0) / 1000;
  return {
    // The SDK clients it uses are in the bundle (scripts/bundle-lambda.mjs); the target catches an import
    // that tree-shaking cannot trim (a client's aggregated class, e.g. `SageMaker`, brings every command).
    'breaker bundle size': `${(size / 1024).toFixed(1)} KB (target ≤ 512 KB; the AWS SDK v3 clients it uses included)`,
    'breaker module load (cold start, median of 7)': `${median(loads).toFixed(1)} ms (target ≤ 150 ms)`,
    'policy decisions per second': `${Math.round(n / secs).toLocaleString('en-US')}`,
  };
}

/** Counts the AWS calls of one steady evaluation and one transition, against in-memory fakes of the services. */
export async function benchCalls(): Promise<Record<string, string>> {
  const { mockClient } = await import('aws-sdk-client-mock');
  const { ApplicationAutoScalingClient, RegisterScalableTargetCommand } = await import('@aws-sdk/client-application-auto-scaling');
  const { CloudWatchClient, GetMetricDataCommand } = await import('@aws-sdk/client-cloudwatch');
  const { DynamoDBClient, GetItemCommand, PutItemCommand } = await import('@aws-sdk/client-dynamodb');
  const { DescribeEndpointCommand, SageMakerClient, UpdateEndpointWeightsAndCapacitiesCommand } = await import('@aws-sdk/client-sagemaker');
  const { GetParameterCommand, PutParameterCommand, SSMClient } = await import('@aws-sdk/client-ssm');
  const { createClients } = await import('../lambda/circuit-breaker/settings');
  const { evaluate } = await import('../lambda/circuit-breaker/evaluate');
  const now = Date.UTC(2026, 10, 29, 12, 0, 30);
  let item: any;
  let parameter: string | undefined;
  let memory = 40;
  mockClient(DynamoDBClient)
    .on(GetItemCommand)
    .callsFake(() => ({ Item: item }))
    .on(PutItemCommand)
    .callsFake(i => {
      item = i.Item;
      return {};
    });
  mockClient(SSMClient)
    .on(GetParameterCommand)
    .callsFake(() => ({ Parameter: { Value: parameter } }))
    .on(PutParameterCommand)
    .callsFake(i => {
      parameter = i.Value;
      return {};
    });
  mockClient(CloudWatchClient)
    .on(GetMetricDataCommand)
    .callsFake(() => ({
      MetricDataResults: [
        { Id: 'mem', Timestamps: [new Date(now - 70_000)], Values: [memory] },
        { Id: 'inv', Timestamps: [new Date(now - 90_000)], Values: [6000] },
      ],
    }));
  mockClient(SageMakerClient)
    .on(DescribeEndpointCommand)
    .resolves({
      EndpointStatus: 'InService',
      ProductionVariants: [
        { VariantName: 'P', DesiredWeight: 1, CurrentInstanceCount: 2 },
        { VariantName: 'F', DesiredWeight: 0, CurrentInstanceCount: 2 },
      ],
    })
    .on(UpdateEndpointWeightsAndCapacitiesCommand)
    .resolves({});
  mockClient(ApplicationAutoScalingClient).on(RegisterScalableTargetCommand).resolves({});
  const clients = createClients(1); // aws-sdk-client-mock answers every client of a mocked class
  const settings = breakerSettings('e', {
    primaryVariant: 'P',
    fallbackVariant: 'F',
    parameterName: 'p',
    tableName: 't',
    primaryCapacity: { min: 2, max: 4, qpsPerInstance: 150 },
    fallbackCapacity: { min: 2, max: 4, qpsPerInstance: 150 },
  });
  const log = console.log;
  console.log = () => undefined;
  const schedule = { source: 'aws.events', 'detail-type': 'Scheduled Event' };
  try {
    await evaluate(schedule, settings, clients, now); // first run writes the initial state
    const steady = await evaluate(schedule, settings, clients, now);
    memory = 90;
    const transition = await evaluate(schedule, settings, clients, now);
    const list = (calls: string[]) => calls.map(c => c.split(':')[1]).join(', ');
    return {
      'AWS calls per steady evaluation': `${steady.calls.length} reads (${list(steady.calls)}) (target ≤ 4)`,
      'AWS calls on a transition (CLOSED → DEGRADED)': `${transition.calls.length} (${list(transition.calls)})`,
    };
  } finally {
    console.log = log;
  }
}

/** The container guard's overhead per request (bench/guard.py: median of 3 × 20,000 admits, CPU time). */
export function benchGuard(): Record<string, string> {
  const script = path.join(root, 'bench', 'guard.py');
  const out = execFileSync('python3', [script], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString();
  type Run = { perRequestUs: number; python: string };
  const r = JSON.parse(out.trim().split('\n').at(-1)!) as Run & { gevent: Run | string };
  const g = r.gevent;
  return {
    [`memory guard overhead per request (Python ${r.python}, median of 3 × 20,000)`]: `${r.perRequestUs.toFixed(1)} µs CPU (target < 1 ms)`,
    [typeof g === 'string'
      ? 'memory guard overhead per request under gevent'
      : `memory guard overhead per request under gevent (Python ${g.python}, a greenlet each, median of 3 × 20,000)`]:
      typeof g === 'string' ? g : `${g.perRequestUs.toFixed(1)} µs CPU (target < 1 ms)`,
  };
}

export function benchSimulator(): Record<string, string> {
  const endpoint = exampleEndpoint('recommender');
  const { primary, fallback } = simVariantsFrom(endpoint);
  const trace = dailyTrace(60, 3);
  const t0 = performance.now();
  const r = runSimulation(trace, { primary, fallback, autoscaling: true, breaker: endpoint.circuitBreaker!.config, metricPeriodS: 10, seed: 1 });
  const secs = (performance.now() - t0) / 1000;
  return {
    'simulator: 24 h at 1 s resolution (recommender, autoscaling + breaker)': `${secs.toFixed(2)} s wall for ${r.arrivals.toLocaleString('en-US')} requests (target < 10 s)`,
    'simulator speed': `${Math.round(trace.seconds / secs).toLocaleString('en-US')} simulated seconds per wall second`,
  };
}

/** Counts the AWS calls of one steady scheduled evaluation of a shared breaker serving n endpoints. */
export async function benchFleetCalls(): Promise<Record<string, string>> {
  const { mockClient } = await import('aws-sdk-client-mock');
  const { CloudWatchClient, GetMetricDataCommand } = await import('@aws-sdk/client-cloudwatch');
  const { BatchGetItemCommand, DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const { GetParametersCommand, SSMClient } = await import('@aws-sdk/client-ssm');
  const { createClients } = await import('../lambda/circuit-breaker/settings');
  const { evaluateFleet } = await import('../lambda/circuit-breaker/fleet');
  const { serializeState } = await import('../lib/breaker/policy');
  const now = Date.UTC(2026, 10, 29, 12, 0, 30);
  const out: Record<string, string> = {};
  const log = console.log;
  console.log = () => undefined;
  try {
    for (const n of [1, 10, 30]) {
      const names = Array.from({ length: n }, (_, i) => `ep-${i}`);
      const closed = JSON.stringify({ state: 'CLOSED', since: 0, share: 0, entryShare: 0, step: 0 });
      mockClient(SSMClient)
        .on(GetParametersCommand)
        .callsFake(i => ({
          Parameters: i.Names.map((Name: string) => ({
            Name,
            Value: Name.startsWith('/cfg/')
              ? JSON.stringify({
                  ...breakerSettings(Name.slice(5), {
                    primaryVariant: 'P',
                    fallbackVariant: undefined,
                    parameterName: `/level/${Name.slice(5)}`,
                    metricPeriodSeconds: 10,
                  }),
                  tableName: undefined, // the shared function's environment names the table
                })
              : serializeState(JSON.parse(closed), []),
          })),
        }));
      mockClient(DynamoDBClient)
        .on(BatchGetItemCommand)
        .callsFake(i => ({ Responses: { T: i.RequestItems.T.Keys.map((k: any) => ({ pk: k.pk, version: { N: '1' }, state: { S: closed } })) } }));
      mockClient(CloudWatchClient)
        .on(GetMetricDataCommand)
        .callsFake(i => ({
          MetricDataResults: i.MetricDataQueries.filter((q: any) => q.Id.endsWith('_mem')).map((q: any) => ({
            Id: q.Id,
            Timestamps: [new Date(now - 30_000)],
            Values: [40],
          })),
        }));
      const clients = createClients(1); // aws-sdk-client-mock answers every client of a mocked class
      const r = await evaluateFleet(
        { source: 'aws.events', 'detail-type': 'Scheduled Event' },
        { tableName: 'T', configParameters: names.map(x => `/cfg/${x}`) },
        clients,
        now,
      );
      const counts: Record<string, number> = {};
      for (const c of r.calls) counts[c.split(':')[1]] = (counts[c.split(':')[1]] ?? 0) + 1;
      out[`shared breaker, steady evaluation of ${n} endpoint(s)`] = `${r.calls.length} AWS calls (${Object.entries(counts)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ')}); one function per endpoint would make ${4 * n}`;
    }
  } finally {
    console.log = log;
  }
  return out;
}

/** Synthesizes a fleet of n ml.m5.xlarge endpoints (one nested stack each): wall time and parent-stack resources. */
function synthFleet(n: number): { ms: number; parent: number } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Fleet', { env: { account: '123456789012', region: 'us-east-1' } });
  const fleet = new ResilientEndpointFleet(stack, 'Models');
  const t0 = performance.now();
  for (let i = 0; i < n; i++)
    fleet.addEndpoint(`Model${i}`, {
      model: { image: ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3') },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    });
  const assembly = app.synth();
  return { ms: performance.now() - t0, parent: Object.keys(assembly.getStackByName('Fleet').template.Resources).length };
}

/** Synthesis time of fleets of 1, 10 and 30 endpoints (after one warm-up run that loads the modules). */
export function benchFleet(): Record<string, string> {
  synthFleet(1);
  const out: Record<string, string> = {};
  for (const n of [1, 10, 30]) {
    const { ms, parent } = synthFleet(n);
    out[`fleet synth: ${n} × ml.m5.xlarge`] =
      `${(ms / 1000).toFixed(2)} s (${(ms / n).toFixed(0)} ms per endpoint); parent stack ${parent} resources`;
  }
  return out;
}

const USAGE = `usage: npm run bench [-- --help]   (after a build: node dist/bench/run.js)
  Prints the benchmark figures (never timed tests): the breaker bundle's size and cold start, policy
  decisions per second, AWS calls per evaluation (one endpoint and a fleet), the memory guard's cost,
  the simulator's speed, fleet synthesis time, and the drift function's cold start and a day's run.
  Takes a few minutes; no AWS access.
  -h, --help   this help
exit codes: 0 done, 2 a usage error`;

/**
 * The runner's arguments: `--help` prints the usage without running anything; anything else is a usage
 * error naming it. Returns the exit code when the runner should stop, undefined to run.
 */
export function benchArgs(argv: string[]): number | undefined {
  try {
    if (parseFlags('bench', argv, { help: { type: 'boolean', short: 'h' } }).help) {
      console.log(USAGE);
      return 0;
    }
    return undefined;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`${e.message}\n\n${USAGE}`);
    return 2;
  }
}

async function main(): Promise<void> {
  const rows: Record<string, string> = {
    ...benchBreaker(),
    ...(await benchCalls()),
    ...benchGuard(),
    ...benchSimulator(),
    ...benchFleet(),
    ...(await benchFleetCalls()),
    ...benchDrift(),
  };
  const width = Math.max(...Object.keys(rows).map(k => k.length));
  console.log('benchmark'.padEnd(width), ' result');
  for (const [k, v] of Object.entries(rows)) console.log(k.padEnd(width), ' ' + v);
}

if (require.main === module) {
  const code = benchArgs(process.argv.slice(2));
  if (code === undefined) void main();
  else process.exitCode = code;
}
