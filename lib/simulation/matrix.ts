import { ResilientEndpoint } from '../resilient-endpoint';
import { CURRENT_BREAKER, runSimulation, SimAssumptions, SimResult } from './engine';
import { simVariantsFrom } from './index';
import { pulseTrace, Trace } from './traces';

/** One run of the guard matrix: an example, a memory model, a pulse, a seed, the guard and the 10-s path on or off. */
export interface MatrixRow {
  readonly example: string;
  readonly memoryModel: 'profile' | 'footprint';
  readonly factor: number;
  readonly seed: number;
  readonly guard: boolean;
  readonly tenSecondData: boolean;
  readonly result: SimResult;
}

/** What the matrix runs; every field has the default docs/simulator.md quotes. */
export interface MatrixOptions {
  /** @default [1, 7, 42, 123] */
  readonly seeds?: number[];
  /** Pulse heights over the off-peak rate. @default [17, 25] */
  readonly factors?: number[];
  /** @default 40 */
  readonly offPeakQps?: number;
  /** @default ['profile', 'footprint'] */
  readonly memoryModels?: ('profile' | 'footprint')[];
  /** The pulse for a factor. @default pulseTrace(offPeakQps, factor): 30 min off-peak, 5 min ramp, 30 min held */
  readonly trace?: (factor: number) => Trace;
  /** Assumptions applied to every run (the CLI's sweep flags). */
  readonly assumptions?: Partial<SimAssumptions>;
  readonly onRun?: (row: MatrixRow, done: number, total: number) => void;
}

/**
 * The container guard's evidence: each example, with its breaker as deployed and autoscaling, through the
 * pulse (default 17× and 25× of 40 QPS) for each seed, three ways — with the guard, without it, and with
 * the guard but no 10-second datapoints (the breaker on 1-minute data) — on the measured memory curve
 * (memory-profile.json) and on the footprint model (incident A's calibration, under which the examples do
 * run out of memory).
 */
export function guardMatrix(endpoints: Record<string, ResilientEndpoint>, opts: MatrixOptions = {}): MatrixRow[] {
  const seeds = opts.seeds ?? [1, 7, 42, 123];
  const factors = opts.factors ?? [17, 25];
  const models = opts.memoryModels ?? ['profile', 'footprint'];
  const ways: [boolean, boolean][] = [
    [true, true],
    [false, true],
    [true, false],
  ];
  const total = Object.keys(endpoints).length * models.length * factors.length * seeds.length * ways.length;
  const rows: MatrixRow[] = [];
  for (const [example, endpoint] of Object.entries(endpoints)) {
    const { primary, fallback } = simVariantsFrom(endpoint);
    const breaker = endpoint.circuitBreaker?.config;
    const period = endpoint.metricPublishFrequency.toSeconds() < 60 ? 10 : 60;
    for (const memoryModel of models) {
      for (const factor of factors) {
        const trace = opts.trace?.(factor) ?? pulseTrace(opts.offPeakQps ?? 40, factor);
        for (const seed of seeds) {
          for (const [guard, tenSecondData] of ways) {
            const result = runSimulation(trace, {
              primary,
              fallback,
              autoscaling: true,
              breaker,
              breakerMode: CURRENT_BREAKER,
              metricPeriodS: period,
              seed,
              assumptions: { ...opts.assumptions, memoryModel, guard, tenSecondData },
            });
            const row = { example, memoryModel, factor, seed, guard, tenSecondData, result };
            rows.push(row);
            opts.onRun?.(row, rows.length, total);
          }
        }
      }
    }
  }
  return rows;
}

/** The matrix as a Markdown table: one row per run, and a summary line per example, model and way. */
export function matrixTable(rows: MatrixRow[]): string {
  const pct = (n: number, d: number) => `${((100 * n) / Math.max(1, d)).toFixed(2)} %`;
  const way = (r: MatrixRow) => `${r.guard ? 'guard' : 'no guard'}${r.tenSecondData ? '' : ', 1-min data only'}`;
  const lines = [
    '| example | memory model | pulse | seed | container | OOM events | failed % | rejected by the guard % | backstop 413s | truncated | level published after | max memory |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const x = r.result;
    lines.push(
      `| ${r.example} | ${r.memoryModel} | ${r.factor}× | ${r.seed} | ${way(r)} | ${x.oomEvents} | ${pct(x.failed, x.arrivals)} | ${pct(x.rejectedByGuard, x.arrivals)} | ${x.rejectedByBackstop} | ${x.truncatedByGuard} | ${x.timeToDegradeS === undefined ? '—' : `${x.timeToDegradeS} s`} | ${x.maxPrimaryMemoryPercent} % |`,
    );
  }
  return lines.join('\n');
}

/** Per example, memory model and way: OOM events over all seeds and pulses (the figure docs/simulator.md quotes). */
export function matrixSummary(rows: MatrixRow[]): string {
  const groups = new Map<string, MatrixRow[]>();
  for (const r of rows) {
    const k = `${r.example} | ${r.memoryModel} | ${r.guard ? 'guard' : 'no guard'}${r.tenSecondData ? '' : ', 1-min data only'}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  const lines = [
    '| example | memory model | container | runs | runs with an OOM | OOM events (total) | failed % (worst run) | refused by the guard % (worst run) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const [k, g] of groups) {
    const worst = (f: (x: SimResult) => number) => (100 * Math.max(...g.map(r => f(r.result) / Math.max(1, r.result.arrivals)))).toFixed(2);
    const ooms = g.reduce((s, r) => s + r.result.oomEvents, 0);
    lines.push(
      `| ${k} | ${g.length} | ${g.filter(r => r.result.oomEvents > 0).length} | ${ooms} | ${worst(x => x.failed)} % | ${worst(x => x.rejectedByGuard + x.rejectedByBackstop)} % |`,
    );
  }
  return lines.join('\n');
}
