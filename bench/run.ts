/**
 * Benchmarks (printed figures, never timed tests): the circuit breaker's bundle size, module load
 * (cold start) time, policy decisions per second and AWS calls per evaluation; and, when present,
 * the simulator's speed.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { performance } from 'perf_hooks';
import { DEFAULT_CONFIG, decide, initialState, MemoryPoint } from '../lambda/circuit-breaker/policy';
import { dailyTrace, runSimulation, simVariantsFrom } from '../lib/simulation';
import { exampleEndpoint } from '../lib/simulation/cli';

const root = path.join(__dirname, '..', '..');
const bundle = path.join(root, 'dist', 'lambda-bundles', 'circuit-breaker', 'index.js');

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

export function benchBreaker(): Record<string, string> {
  const size = fs.statSync(bundle).size;
  // Cold start: a fresh node process requires the bundle (with the AWS SDK it imports, as on Lambda).
  const loads: number[] = [];
  const script = `const t=process.hrtime.bigint();require(${JSON.stringify(bundle)});console.log(Number(process.hrtime.bigint()-t)/1e6)`;
  for (let i = 0; i < 7; i++) {
    loads.push(Number(execFileSync(process.execPath, ['-e', script], { cwd: root, env: { ...process.env, NODE_PATH: path.join(root, 'node_modules') } }).toString().trim()));
  }
  // Decisions per second over a realistic 15-point window.
  const points: MemoryPoint[] = Array.from({ length: 15 }, (_, i) => ({ t: i * 60_000, v: 60 + (i % 7) * 4 }));
  let state = initialState(0);
  const n = 200_000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const now = 15 * 60_000 + (i % 60) * 1000;
    const d = decide(state, { memory: points, errors: i % 50, invocations: 1000 }, { status: 'InService', weights: { P: 1 - state.share, F: state.share } }, { primary: 'P', fallback: 'F' }, DEFAULT_CONFIG, now);
    state = d.next;
  }
  const secs = (performance.now() - t0) / 1000;
  return {
    'breaker bundle size': `${(size / 1024).toFixed(1)} KB (target ≤ 250 KB; AWS SDK v3 provided by the Node.js 24 runtime)`,
    'breaker module load (cold start, median of 7)': `${median(loads).toFixed(1)} ms (target ≤ 150 ms)`,
    'policy decisions per second': `${Math.round(n / secs).toLocaleString('en-US')}`,
    'AWS calls per evaluation': '3 reads in steady state (GetParameter, GetMetricData, DescribeEndpoint); +2 writes on a transition (target ≤ 3 per steady evaluation)',
  };
}

export function benchSimulator(): Record<string, string> {
  const endpoint = exampleEndpoint('recommender');
  const { primary, fallback } = simVariantsFrom(endpoint);
  const trace = dailyTrace(60, 3);
  const t0 = performance.now();
  const r = runSimulation(trace, { primary, fallback, autoscaling: true, breaker: endpoint.circuitBreaker!.config, seed: 1 });
  const secs = (performance.now() - t0) / 1000;
  return {
    'simulator: 24 h at 1 s resolution (recommender, autoscaling + breaker)': `${secs.toFixed(2)} s wall for ${r.arrivals.toLocaleString('en-US')} requests (target < 10 s)`,
    'simulator speed': `${Math.round(trace.seconds / secs).toLocaleString('en-US')} simulated seconds per wall second`,
  };
}

function main(): void {
  const rows: Record<string, string> = { ...benchBreaker(), ...benchSimulator() };
  const width = Math.max(...Object.keys(rows).map(k => k.length));
  console.log('benchmark'.padEnd(width), ' result');
  for (const [k, v] of Object.entries(rows)) console.log(k.padEnd(width), ' ' + v);
}

main();
