import { ResilientEndpoint } from '../resilient-endpoint';
import { CURRENT_BREAKER, runSimulation, SimAssumptions, SimResult, SimVariant } from './engine';
import { simVariantsFrom } from './index';
import { dailyTrace, poissonTrace, pulseTrace, Trace } from './traces';

/**
 * An example's own workload and its traffic. Each example is judged on the workload its own profile describes
 * (its unit and distribution); a stress workload borrowed from the other incident is run beside it, labelled.
 */
export interface ExampleWorkload {
  /**
   * Its own memory model: 'profile' (its measured curve and latency, in its own unit), or 'footprint' where the
   * profile was measured on another device (the recommender's CPU profile says nothing of its GPU memory; the
   * footprint model draws from the same 5–3,000-event distribution).
   */
  readonly own: 'profile' | 'footprint';
  /** A stress workload borrowed from the other incident (run beside its own and labelled), if any. */
  readonly borrowed?: 'profile' | 'footprint';
  /** Requests a second at a normal day's trough. */
  readonly offPeakQps: number;
  /** Requests a second at a normal day's peak. */
  readonly nominalPeakQps: number;
}

/** One run of the guard matrix: an example, a memory model, a pulse, a seed, the guard and the 10-s path on or off. */
export interface MatrixRow {
  readonly example: string;
  /** 'own' for the example's own workload, 'borrowed' for the other incident's (a stress test). */
  readonly workload: 'own' | 'borrowed';
  readonly memoryModel: 'profile' | 'footprint';
  readonly factor: number;
  readonly seed: number;
  readonly guard: boolean;
  readonly tenSecondData: boolean;
  readonly result: SimResult;
  /**
   * Seconds from the traffic's return to normal (the end of the pulse's ramp down) until the breaker is CLOSED
   * and stays so for the probation (0: it was CLOSED then already), or undefined when that never happens.
   */
  readonly backToClosedS?: number;
}

/** What the matrix runs; every field has the default docs/simulator.md quotes. */
export interface MatrixOptions {
  /** @default [1, 7, 42, 123] */
  readonly seeds?: number[];
  /** Pulse heights over the off-peak rate. @default [17, 25] */
  readonly factors?: number[];
  /** @default 40 */
  readonly offPeakQps?: number;
  /**
   * Memory models to run every example on, overriding `workloads`.
   * @default - each example's own workload, and its borrowed one (labelled)
   */
  readonly memoryModels?: ('profile' | 'footprint')[];
  /** Each example's own workload and traffic. @default {@link DEFAULT_WORKLOADS} */
  readonly workloads?: Record<string, ExampleWorkload>;
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
  const ways = opts.ways ?? [[true, true]];
  const modelsOf = (example: string): ['own' | 'borrowed', 'profile' | 'footprint'][] => {
    if (opts.memoryModels) return opts.memoryModels.map(m => ['own', m]);
    const w = (opts.workloads ?? DEFAULT_WORKLOADS)[example] ?? { own: 'footprint' };
    return [['own', w.own], ...(w.borrowed ? [['borrowed', w.borrowed] as ['borrowed', 'profile' | 'footprint']] : [])];
  };
  const total = Object.keys(endpoints).reduce((n, e) => n + modelsOf(e).length, 0) * factors.length * seeds.length * ways.length;
  const rows: MatrixRow[] = [];
  for (const [example, endpoint] of Object.entries(endpoints)) {
    const { primary, fallback } = simVariantsFrom(endpoint);
    const breaker = endpoint.circuitBreaker?.config;
    const period = endpoint.metricPublishFrequency.toSeconds() < 60 ? 10 : 60;
    for (const [workload, memoryModel] of modelsOf(example)) {
      for (const factor of factors) {
        const offPeak = opts.offPeakQps ?? 40;
        const trace = opts.trace?.(factor) ?? pulseTrace(offPeak, factor);
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
            const row = {
              example,
              workload,
              memoryModel,
              factor,
              seed,
              guard,
              tenSecondData,
              result,
              backToClosedS: backToClosed(result, pulseReturnS(trace)),
            };
            rows.push(row);
            opts.onRun?.(row, rows.length, total);
          }
        }
      }
    }
  }
  return rows;
}

/** The second a pulse's traffic is back at its off-peak rate (the end of its ramp down), from the trace itself. */
export function pulseReturnS(trace: Trace): number {
  const base = trace.rate(0);
  let peakAt = 0;
  for (let t = 0; t < trace.seconds; t += 10) if (trace.rate(t) > trace.rate(peakAt)) peakAt = t;
  for (let t = peakAt; t < trace.seconds; t++) if (trace.rate(t) <= base) return t;
  return trace.seconds;
}

/**
 * Seconds from `returnS` until the breaker is CLOSED and stays so for `holdS` (the probation, within which a
 * re-escalation would count as a failed probe) or to the end of the run (0 when it already was at `returnS`),
 * from the run's 10-s series; undefined when that never happens. A later escalation on normal traffic is a
 * normal day's matter, not the pulse's way back.
 */
export function backToClosed(r: SimResult, returnS: number, holdS = 600): number | undefined {
  const s = r.series;
  let from = s.findIndex(p => p.t >= returnS);
  if (from < 0) return undefined;
  // The state at the return: the last point at or before it.
  if (from > 0 && s[from].t > returnS) from--;
  for (let i = from; i < s.length; i++) {
    if (s[i].state !== 0) continue;
    let j = i;
    while (j + 1 < s.length && s[j + 1].state === 0 && s[j + 1].t - s[i].t < holdS) j++;
    if (s[j].t - s[i].t >= holdS - 10 || j === s.length - 1) return Math.max(0, s[i].t - returnS);
    i = j;
  }
  return undefined;
}

/** The goal after a pulse: CLOSED again within 15 minutes of the traffic's return to normal. */
export const GOAL_BACK_TO_CLOSED_S = 900;

/** Each example's own workload and traffic (lib/examples: RECOMMENDER_TRAFFIC, CLUSTERING_TRAFFIC). */
export const DEFAULT_WORKLOADS: Record<string, ExampleWorkload> = {
  recommender: { own: 'footprint', offPeakQps: 100, nominalPeakQps: 300 },
  clustering: { own: 'profile', borrowed: 'footprint', offPeakQps: 40, nominalPeakQps: 200 },
};

/** One normal day of an example: a steady day at its off-peak or its nominal peak traffic, or a daily curve between them. */
export interface DayRow {
  readonly example: string;
  readonly day: 'steady off-peak' | 'steady peak' | 'diurnal';
  readonly qps: string;
  readonly seed: number;
  readonly result: SimResult;
}

/** The normal-day goal: time degraded ≤ 0.1 % of the day (90 s), no request refused by the guard, no OOM. */
export const GOAL_DEGRADED_DAY_S = 90;

/** Whether a normal day meets its goal. */
export function meetsDayGoal(r: SimResult): boolean {
  return r.oomEvents === 0 && r.timeDegradedS <= GOAL_DEGRADED_DAY_S && r.rejectedByGuard + r.rejectedByBackstop === 0;
}

/** What the normal-day runs take. */
export interface DayOptions {
  /** @default [1, 7, 42, 123] */
  readonly seeds?: number[];
  /** @default DEFAULT_WORKLOADS */
  readonly workloads?: Record<string, ExampleWorkload>;
  /** A day's length (s). @default 86400 */
  readonly seconds?: number;
  /** Which days. @default all three */
  readonly days?: DayRow['day'][];
  readonly assumptions?: Partial<SimAssumptions>;
  readonly onRun?: (row: DayRow, done: number, total: number) => void;
}

/**
 * A normal day for each example and seed, on its own workload, with no incident: a steady day at its off-peak
 * traffic, one at its nominal peak, and a daily curve from the one (04:00) to the other (20:00). Each starts with
 * the instances autoscaling settles at for its first second's traffic (the variant's QPS target, within its
 * bounds): a day, not a cold start.
 */
export function normalDayMatrix(endpoints: Record<string, ResilientEndpoint>, opts: DayOptions = {}): DayRow[] {
  const seeds = opts.seeds ?? [1, 7, 42, 123];
  const seconds = opts.seconds ?? 86400;
  const days = opts.days ?? ['steady off-peak', 'steady peak', 'diurnal'];
  const total = Object.keys(endpoints).length * days.length * seeds.length;
  const rows: DayRow[] = [];
  for (const [example, endpoint] of Object.entries(endpoints)) {
    const w = (opts.workloads ?? DEFAULT_WORKLOADS)[example] ?? { own: 'footprint', offPeakQps: 40, nominalPeakQps: 150 };
    const { primary, fallback } = simVariantsFrom(endpoint);
    const period = endpoint.metricPublishFrequency.toSeconds() < 60 ? 10 : 60;
    for (const day of days) {
      const trace =
        day === 'steady off-peak'
          ? poissonTrace(w.offPeakQps, seconds)
          : day === 'steady peak'
            ? poissonTrace(w.nominalPeakQps, seconds)
            : { ...dailyTrace((w.offPeakQps + w.nominalPeakQps) / 2, w.nominalPeakQps / w.offPeakQps), seconds: Math.min(seconds, 86400) };
      const qps = day === 'diurnal' ? `${w.offPeakQps}–${w.nominalPeakQps}` : String(day === 'steady peak' ? w.nominalPeakQps : w.offPeakQps);
      for (const seed of seeds) {
        const result = runSimulation(trace, {
          primary: settled(primary, trace.rate(0)),
          fallback,
          autoscaling: true,
          breaker: endpoint.circuitBreaker?.config,
          breakerMode: CURRENT_BREAKER,
          metricPeriodS: period,
          seed,
          assumptions: { ...opts.assumptions, memoryModel: w.own },
        });
        const row = { example, day, qps, seed, result };
        rows.push(row);
        opts.onRun?.(row, rows.length, total);
      }
    }
  }
  return rows;
}

/** The variant with the instance count target tracking holds at `qps` (within its bounds). */
function settled(v: SimVariant, qps: number): SimVariant {
  if (!v.scaling) return v;
  const n = Math.min(v.scaling.max, Math.max(v.scaling.min, Math.ceil(qps / v.scaling.qpsPerInstance)));
  return { ...v, initialCount: n };
}

/** The normal-day table: per run, the time degraded, what the guard refused, failures, and what first moved the level. */
export function dayTable(rows: DayRow[]): string {
  const lines = [
    '| example | day | QPS | seed | degraded (level ≥ 1) | not CLOSED | refused by the guard | failed | OOM | level changes | what first moved the level | goal |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const r = row.result;
    const away = r.stateSeconds.DEGRADED + r.stateSeconds.OPEN + r.stateSeconds.RECOVERING;
    const first = r.levelChanges[0];
    lines.push(
      `| ${row.example} | ${row.day} | ${row.qps} | ${row.seed} | ${r.timeDegradedS} s | ${away} s | ${r.rejectedByGuard + r.rejectedByBackstop} | ${r.failed} | ${r.oomEvents} | ${r.levelChanges.length} | ${first ? `${(first.t / 3600).toFixed(2)} h: ${first.why}` : '—'} | ${meetsDayGoal(r) ? 'met' : '**not met**'} |`,
    );
  }
  const met = rows.filter(r => meetsDayGoal(r.result)).length;
  lines.push(
    '',
    `Normal-day goal (time degraded ≤ ${GOAL_DEGRADED_DAY_S} s, nothing refused by the guard, 0 OOM): met in ${met} of ${rows.length} runs.`,
  );
  return lines.join('\n');
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

/**
 * Requests refused by the guard or its backstop, refused by the fallback's shorter cap although the primary
 * would have taken them, plus failed, as a percentage of arrivals.
 */
export function refusedOrFailedPercent(r: SimResult): number {
  return (100 * (r.rejectedByGuard + r.rejectedByBackstop + r.rejectedByFallback + r.failed)) / Math.max(1, r.arrivals);
}

/** Whether a run meets the goal: 0 OOM events, refused (guard, backstop, fallback's cap) + failed ≤ 1 %, and the fallback serving (when there is one). */
export function meetsGoal(r: SimResult, hasFallback: boolean): boolean {
  return r.oomEvents === 0 && refusedOrFailedPercent(r) <= GOAL_REFUSED_OR_FAILED_PERCENT && (!hasFallback || r.servedByFallback > 0);
}

/**
 * The goal table (`simulate --matrix`): one row per run, the goal's figures and whether it is met — during the
 * pulse (0 OOM, refused + failed ≤ 1 %, the fallback serving) and after it (CLOSED again within 15 minutes of
 * the traffic's return); requests refused by design (longer than MAX_SEQ_LEN) and by the length tiers at level 2
 * apart; the workload each ran on (its own, or one borrowed from the other incident as a stress test).
 */
export function goalTable(rows: MatrixRow[], hasFallback: (example: string) => boolean): string {
  const pct = (n: number, d: number) => `${((100 * n) / Math.max(1, d)).toFixed(2)} %`;
  const lines = [
    "| example | workload | pulse | seed | OOM events | failed | refused by the guard + backstop | refused by the fallback's cap | (refused + failed) % | refused by design (> MAX_SEQ_LEN) | refused at level 2 | served by fallback | level first published | back to CLOSED | goal |",
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const met = (row: MatrixRow) =>
    meetsGoal(row.result, hasFallback(row.example)) && row.backToClosedS !== undefined && row.backToClosedS <= GOAL_BACK_TO_CLOSED_S;
  for (const row of rows) {
    const r = row.result;
    const workload = row.workload === 'borrowed' ? `${row.memoryModel} (borrowed: the other incident's)` : `${row.memoryModel} (its own)`;
    const back = row.backToClosedS === undefined ? 'not by the end' : `${(row.backToClosedS / 60).toFixed(1)} min`;
    lines.push(
      `| ${row.example} | ${workload} | ${row.factor}× | ${row.seed} | ${r.oomEvents} | ${r.failed} | ${r.rejectedByGuard + r.rejectedByBackstop} | ${r.rejectedByFallback} | ${refusedOrFailedPercent(r).toFixed(2)} % | ${pct(r.rejectedByDesign - r.rejectedByFallback, r.arrivals)} | ${pct(r.rejectedAtLevel2, r.arrivals)} | ${pct(r.servedByFallback, r.arrivals)} | ${r.firstLevelS === undefined ? 'never' : `${(r.firstLevelS / 60).toFixed(1)} min`} | ${back} | ${met(row) ? 'met' : '**not met**'} |`,
    );
  }
  lines.push(
    '',
    `Goal (during the pulse: 0 OOM events, refused by the guard, its backstop or the fallback's cap + failed ≤ ${GOAL_REFUSED_OR_FAILED_PERCENT} % of arrivals, the fallback serving; after it: CLOSED again within ${GOAL_BACK_TO_CLOSED_S / 60} minutes of the traffic's return): met in ${rows.filter(met).length} of ${rows.length} runs.`,
  );
  return lines.join('\n');
}
