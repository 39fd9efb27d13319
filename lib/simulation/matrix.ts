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
  /** @default ['footprint'] (the model under which the incidents happen) */
  readonly memoryModels?: ('profile' | 'footprint')[];
  /**
   * The container and data ways to run, as [guard, tenSecondData].
   * @default [[true, true]]: the guard on, 10-second data (as deployed)
   */
  readonly ways?: [boolean, boolean][];
  /** The pulse for a factor. @default pulseTrace(offPeakQps, factor): 30 min off-peak, 5 min ramp, 30 min held */
  readonly trace?: (factor: number) => Trace;
  /** Assumptions applied to every run (the CLI's sweep flags). */
  readonly assumptions?: Partial<SimAssumptions>;
  readonly onRun?: (row: MatrixRow, done: number, total: number) => void;
}

/**
 * The layers' evidence: each example, with its breaker as deployed and autoscaling, through the pulse
 * (default 17× and 25× of 40 QPS) for each seed, on the footprint model (incident A's calibration, under
 * which the examples do run out of memory), with the guard and 10-second data by default (`ways` adds
 * without the guard, or without 10-second datapoints; `memoryModels` the measured curve).
 */
export function guardMatrix(endpoints: Record<string, ResilientEndpoint>, opts: MatrixOptions = {}): MatrixRow[] {
  const seeds = opts.seeds ?? [1, 7, 42, 123];
  const factors = opts.factors ?? [17, 25];
  const models = opts.memoryModels ?? ['footprint'];
  const ways = opts.ways ?? [[true, true]];
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

/** The goal of the layers (issue 28), per run: no OOM, and refused by the guard or its backstop plus failed ≤ 1 % of arrivals, with the fallback serving. */
export const GOAL_REFUSED_OR_FAILED_PERCENT = 1;

/** Requests refused by the guard or its backstop, plus failed, as a percentage of arrivals. */
export function refusedOrFailedPercent(r: SimResult): number {
  return (100 * (r.rejectedByGuard + r.rejectedByBackstop + r.failed)) / Math.max(1, r.arrivals);
}

/** Whether a run meets the goal: 0 OOM events, refused (guard, backstop) + failed ≤ 1 %, and the fallback serving (when there is one). */
export function meetsGoal(r: SimResult, hasFallback: boolean): boolean {
  return r.oomEvents === 0 && refusedOrFailedPercent(r) <= GOAL_REFUSED_OR_FAILED_PERCENT && (!hasFallback || r.servedByFallback > 0);
}

/**
 * The goal table (`simulate --matrix`): one row per run, the goal's figures and whether it is met;
 * requests refused by design (longer than MAX_SEQ_LEN) and by the length tiers at level 2 apart.
 */
export function goalTable(rows: MatrixRow[], hasFallback: (example: string) => boolean): string {
  const pct = (n: number, d: number) => `${((100 * n) / Math.max(1, d)).toFixed(2)} %`;
  const lines = [
    '| example | pulse | seed | OOM events | failed | refused by the guard + backstop | (refused + failed) % | refused by design (> MAX_SEQ_LEN) | refused at level 2 | served by fallback | level first published | goal |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const r = row.result;
    lines.push(
      `| ${row.example} | ${row.factor}× | ${row.seed} | ${r.oomEvents} | ${r.failed} | ${r.rejectedByGuard + r.rejectedByBackstop} | ${refusedOrFailedPercent(r).toFixed(2)} % | ${pct(r.rejectedByDesign, r.arrivals)} | ${pct(r.rejectedAtLevel2, r.arrivals)} | ${pct(r.servedByFallback, r.arrivals)} | ${r.firstLevelS === undefined ? 'never' : `${(r.firstLevelS / 60).toFixed(1)} min`} | ${meetsGoal(r, hasFallback(row.example)) ? 'met' : '**not met**'} |`,
    );
  }
  const met = rows.filter(r => meetsGoal(r.result, hasFallback(r.example))).length;
  lines.push(
    '',
    `Goal (0 OOM events, refused by the guard or its backstop + failed ≤ ${GOAL_REFUSED_OR_FAILED_PERCENT} % of arrivals, the fallback serving): met in ${met} of ${rows.length} runs.`,
  );
  return lines.join('\n');
}
