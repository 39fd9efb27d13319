/**
 * The memory circuit breaker's decision logic: ONE pure function, used by the Lambda handler,
 * the tests and the simulator. No I/O, no clock, no randomness: everything comes in as input.
 *
 *   CLOSED ──memory ≥ degradeAt──▶ DEGRADED ──memory ≥ critical or 5XX ≥ 5 %──▶ OPEN
 *     ▲                               │  ▲                                        │
 *     │                 cool for dwell│  │hot again                 cool for dwell│
 *     └──── last step ◀── RECOVERING ◀┘  └────────── RECOVERING ◀─────────────────┘
 *
 * Escalation (towards OPEN) is immediate. Every de-escalation — the first recovery step and each
 * step after it — needs memory below the recovery level for the whole recovery dwell (hysteresis:
 * degrade at 80, recover below 70), judged on the datapoints' own timestamps (CloudWatch may store
 * 1-minute data behind a 10-second query), and the endpoint InService; the first step also waits the
 * minimum dwell. So the breaker never flaps. Recovery is a probe: memory that climbs again during
 * RECOVERING, or within the probation after CLOSED, re-escalates it and counts a failed probe; after
 * `maxFailedProbes` of them in a row the wait before the next probe doubles each time (up to
 * `maxProbeWaitSeconds`), so at steady traffic the endpoint is neither stuck degraded for good nor
 * released every few minutes; a probe that failed at a higher request rate than now does not count
 * towards that wait (traffic that fell to 75 % or less of it is a new situation). Without fresh data it
 * holds its state.
 *
 * The container guard's memory refusals are a signal, not proof of an incident: one request too large for
 * what is left of the budget is answered with a 413 and the endpoint is otherwise well. Refusals escalate
 * when they are a rate (`guardRefusalRate` of the requests in the guard's window) or recur (in
 * `guardRefusalIntervals` of its 10-s intervals) while memory or the guard's pressure confirms the container
 * is full (at or above the recovery level). Refusals by design — too long for MAX_SEQ_LEN, over the degraded
 * cap at level 2 — are not memory refusals: the container counts them as deliberate 4XX only.
 *
 * Enforcement, in the order the handler applies it (each step works whatever the previous one's
 * effect on the endpoint; see `Decision`):
 *  1. the degrade level — the container applies it on its next requests, whatever the endpoint's
 *     status (SageMaker refuses weight changes while the endpoint is `Updating`, which it is during
 *     every autoscaling change and blue/green deployment);
 *  2. weights — only when the endpoint is `InService`, and never more traffic to the fallback than its
 *     instances in service can take (capacity-proportional share), so a shift cannot overload it;
 *  3. capacity — through Application Auto Scaling's own settings, never instance counts: while not
 *     CLOSED the primary's dynamic scale-in is suspended (a primary whose traffic drops must not shrink
 *     to its minimum), and so is its scheduled scaling when it has scheduled actions (a scheduled lower
 *     maximum would scale it in all the same), and the fallback's minimum is raised to what the target
 *     share needs. All of it is restored when the breaker is CLOSED again.
 *     These calls go to Application Auto Scaling, which is not refused while the endpoint is Updating,
 *     and they come after the weight call so the scale-out they start does not lock out the weights.
 */

/** Breaker states. */
export type BreakerStateName = 'CLOSED' | 'DEGRADED' | 'OPEN' | 'RECOVERING';

/** Numeric code of each state, for the CloudWatch state metric. */
export const STATE_CODE: Record<BreakerStateName, number> = { CLOSED: 0, DEGRADED: 1, OPEN: 2, RECOVERING: 3 };

/** Degrade level the model container reads: 0 normal, 1 degraded (secondary features off), 2 critical. */
export const LEVEL: Record<BreakerStateName, number> = { CLOSED: 0, DEGRADED: 1, OPEN: 2, RECOVERING: 1 };

/** Thresholds and timings. */
export interface BreakerConfig {
  /** Enter DEGRADED when the hottest instance's memory (host or GPU, normalised) is ≥ this (%). */
  readonly degradeAtPercent: number;
  /** Enter OPEN when memory is ≥ this (%). */
  readonly criticalAtPercent: number;
  /** Memory must stay below this (%) for `recoveryDwellSeconds` before recovering. */
  readonly recoverBelowPercent: number;
  /** Enter OPEN when the 5XX rate over the error window is ≥ this fraction (0–1). */
  readonly errorRateOpen: number;
  /** Fewer invocations than this in the error window: the error rate is not judged. */
  readonly minInvocations: number;
  /** Minimum time in a state before any de-escalation (s). */
  readonly minDwellSeconds: number;
  /** How long memory must stay below `recoverBelowPercent` (s). */
  readonly recoveryDwellSeconds: number;
  /** Time between recovery steps (s). */
  readonly recoveryStepSeconds: number;
  /** Number of steps from the degraded share back to 0. */
  readonly recoverySteps: number;
  /** Share of traffic (0–1) sent to the fallback in DEGRADED. OPEN sends all of it. */
  readonly degradedFallbackShare: number;
  /** Memory data older than this (s) counts as missing. */
  readonly staleAfterSeconds: number;
  /**
   * Failed probes (re-escalations during RECOVERING or within the probation after CLOSED) that are
   * retried after the normal minimum dwell; each one after that doubles the wait before the next probe.
   */
  readonly maxFailedProbes: number;
  /** The longest wait before a probe (s): probing never stops, so the endpoint is never degraded for good. */
  readonly maxProbeWaitSeconds: number;
  /** After CLOSED, memory that reaches the degrade level within this time (s) counts as a failed probe. */
  readonly probationSeconds: number;
  /**
   * The container guard's signals (its pressure, its memory refusals) escalate when they are at most
   * this old (s): refusals in that time, or the newest pressure at the degrade or critical level. (The
   * recovery dwell then needs the guard quiet too: no refusal, and pressure below the recovery level.)
   */
  readonly guardSignalSeconds: number;
  /**
   * The guard's pressure counts when it lasts this long (s): each 10-s point is the interval's maximum at
   * an admission, so a single padded batch reads as a peak; refusals need no such wait.
   */
  readonly guardPressureSustainSeconds: number;
  /**
   * The guard's memory refusals escalate at this share (0–1) of the requests in `guardSignalSeconds`
   * (the request rate from the newest `Invocations` minutes), whatever memory reads: the layers' goal is at
   * most 1 % refused or failed.
   */
  readonly guardRefusalRate: number;
  /**
   * Below that rate, refusals escalate when they fall in at least this many of the guard's 10-s intervals in
   * `guardSignalSeconds` while memory or the guard's pressure is at or above `recoverBelowPercent` (the
   * container is full: a refusal there is the blunt layer acting first). One refusal is not an incident.
   */
  readonly guardRefusalIntervals: number;
  /** Whether a fallback variant exists (otherwise only the degrade level is published). */
  readonly hasFallback: boolean;
}

/** Incident-proven defaults. */
export const DEFAULT_CONFIG: BreakerConfig = {
  degradeAtPercent: 80,
  criticalAtPercent: 95,
  recoverBelowPercent: 70,
  errorRateOpen: 0.05,
  minInvocations: 20,
  minDwellSeconds: 300,
  recoveryDwellSeconds: 300,
  recoveryStepSeconds: 120,
  recoverySteps: 3,
  degradedFallbackShare: 0.5,
  staleAfterSeconds: 300,
  maxFailedProbes: 3,
  maxProbeWaitSeconds: 3600,
  probationSeconds: 600,
  guardSignalSeconds: 120,
  guardPressureSustainSeconds: 30,
  guardRefusalRate: 0.01,
  guardRefusalIntervals: 2,
  hasFallback: true,
};

/** What the breaker remembers between evaluations (stored in the SSM parameter). */
export interface BreakerState {
  readonly state: BreakerStateName;
  /** When the state (or recovery step) last changed, epoch ms. */
  readonly since: number;
  /** Share of traffic on the fallback that this state wants (0–1). */
  readonly share: number;
  /** RECOVERING only: the share recovery started from, and the step reached. */
  readonly entryShare: number;
  readonly step: number;
  /**
   * Probes that failed in a row (re-escalations from RECOVERING, or soon after CLOSED); 0 when absent.
   * Kept through CLOSED until the probation has passed.
   */
  readonly failedProbes?: number;
  /** CLOSED only: when recovery reached CLOSED (epoch ms), for the probation. */
  readonly recoveredAt?: number;
  /**
   * The request rate (per second) when the newest probe failed, when known: once traffic is at 75 % of it or
   * less, the failed probes no longer lengthen the wait (the load that failed them has gone).
   */
  readonly failedAtRate?: number;
  /**
   * Requests per second per primary instance in service when the breaker last escalated (left CLOSED, or
   * re-escalated), when known: the load the level became necessary at. Recovery waits while each instance
   * carries more than 4/3 of both this and its autoscaling target (see {@link PROBE_LOAD_LIMIT}).
   */
  readonly escalatedAtLoad?: number;
  /** A game day in progress (`sagemaker-resilient-endpoint drill`): the state is held at least at `drill.to` until it expires. */
  readonly drill?: DrillOverride;
}

/**
 * A drill's override, written into the state item by `sagemaker-resilient-endpoint drill`: until
 * `until` the breaker is at least in state `to` (a real escalation beyond it still happens); from then
 * on the override is dropped and the normal evaluation takes over, recovering with its usual hysteresis.
 */
export interface DrillOverride {
  readonly to: 'DEGRADED' | 'OPEN';
  /** Epoch ms at which the override expires (the drill sets it to now when it ends or is interrupted). */
  readonly until: number;
  /** The drill's id, for the decision log. */
  readonly id: string;
}

const RANK: Record<BreakerStateName, number> = { CLOSED: 0, RECOVERING: 1, DEGRADED: 2, OPEN: 3 };

/** One memory datapoint: epoch ms and the normalised max of host and GPU memory (%). */
export interface MemoryPoint {
  readonly t: number;
  readonly v: number;
}

/** Fresh readings of the primary variant. */
export interface Readings {
  /**
   * Memory points (hottest instance, hottest GPU: the max of host %, GPU % per device), oldest first.
   * Their spacing is taken from their timestamps, never from the query's period: a 10-second query
   * over 1-minute data returns points one minute apart (real-account.md item 23).
   */
  readonly memory: MemoryPoint[];
  /**
   * The coarsest spacing the memory data can have (s): the endpoint's publishing period, at least 60
   * (CloudWatch stores data published every 10–60 s at no coarser than one minute).
   * @default 60
   */
  readonly maxSpacingSeconds?: number;
  /**
   * The same memory as 1-minute maxima (CloudWatch's `Maximum` per minute), when `memory` is finer: a
   * point missing from the fine series (a hole that could hide a hot one) is covered by its minute's
   * maximum, so lost 10-s points cannot hold the breaker degraded for good.
   * @default - none (`memory` is the only series)
   */
  readonly minuteMemory?: MemoryPoint[];
  /**
   * Errors in the error window that the container did not choose: dead and hung workers, timeouts,
   * broken connections and 5XX — `InvocationModelErrors` minus the container's deliberate 4XX
   * (`DeliberateClientErrors`), clamped at 0 (undefined = no data).
   */
  readonly errors?: number;
  /**
   * The container guard's pressure (`GuardPressure`, % of the container's memory budget, the maximum of
   * each 10-s interval over the variant's instances), oldest first: what the guard has admitted and
   * not yet seen released, so it leads the memory metrics (lib/breaker/contract.ts GUARD_METRICS).
   * @default - none (a container without the guard)
   */
  readonly guardPressure?: MemoryPoint[];
  /**
   * Requests the guard refused for memory (`GuardMemoryRefusals`, the sum of each 10-s interval over
   * the variant's instances), oldest first. A refusal is a signal, not a success.
   * @default - none
   */
  readonly guardRefusals?: MemoryPoint[];
  /** Invocations in the error window (undefined = no data). */
  readonly invocations?: number;
  /**
   * `Invocations` per minute (Sum, 1-minute points), oldest first: the request rate the guard's refusals are
   * judged against, and the rate a failed probe is remembered with.
   * @default - none (refusals are then judged by their recurrence and what memory confirms)
   */
  readonly invocationsPerMinute?: MemoryPoint[];
  /**
   * `Invocations` per minute of every variant together (primary and fallback), oldest first: the endpoint's
   * traffic, which a weight shift does not change, for remembering the rate a probe failed at.
   * @default - `invocationsPerMinute`
   */
  readonly endpointInvocationsPerMinute?: MemoryPoint[];
}

/** What DescribeEndpoint said (undefined when unknown). */
export interface EndpointView {
  readonly status: string;
  /** Variant name → desired weight. */
  readonly weights: Record<string, number>;
  /** Variant name → instances in service (`CurrentInstanceCount`); unknown when absent. */
  readonly instances?: Record<string, number>;
}

/** The bounds of a variant's scalable target and the QPS one instance carries (from the construct). */
export interface VariantCapacity {
  readonly min: number;
  readonly max: number;
  readonly qpsPerInstance: number;
  /**
   * Scheduled actions change the variant's bounds: a scheduled lower maximum scales a primary in whatever
   * its dynamic scale-in's suspension says, so the breaker suspends scheduled scaling too while not CLOSED.
   * @default false
   */
  readonly scheduled?: boolean;
}

/** Variant names the weights apply to, and their autoscaling (when the construct scales them). */
export interface Variants {
  readonly primary: string;
  readonly fallback?: string;
  readonly primaryCapacity?: VariantCapacity;
  readonly fallbackCapacity?: VariantCapacity;
}

/** Application Auto Scaling settings the breaker wants now (absolute values, reconciled each evaluation). */
export interface CapacityPlan {
  /** Suspend the primary's dynamic scale-in (true while not CLOSED). */
  readonly suspendPrimaryScaleIn: boolean;
  /**
   * Suspend the primary's scheduled scaling (true while not CLOSED), when it has scheduled actions: Application
   * Auto Scaling "does not initiate the scaling actions that are scheduled to run during the suspension period.
   * When you resume scheduled scaling, Application Auto Scaling only evaluates scheduled actions whose execution
   * time has not yet passed" (user guide, application-auto-scaling-suspend-resume-scaling). Absent: not held.
   */
  readonly suspendPrimaryScheduled?: boolean;
  /** The fallback's minimum capacity (its configured minimum when CLOSED), when it is autoscaled. */
  readonly fallbackMinCapacity?: number;
}

/** The decision of one evaluation. */
export interface Decision {
  readonly next: BreakerState;
  /** Degrade level to publish. */
  readonly level: number;
  /** True when `next` differs from the previous state (publish it). */
  readonly changed: boolean;
  /** Weights to set now, or undefined (no write). */
  readonly setWeights?: Record<string, number>;
  /** The fallback share the weights carry now (≤ `next.share`: capped by the fallback's instances in service). */
  readonly effectiveShare: number;
  /** Autoscaling settings that follow the state. */
  readonly capacity: CapacityPlan;
  /** Why. */
  readonly reasons: string[];
}

/** The state before the breaker ever ran. */
export function initialState(now: number): BreakerState {
  return { state: 'CLOSED', since: now, share: 0, entryShare: 0, step: 0 };
}

const EPS = 1e-6;

/**
 * Whether memory stayed below `below` (%) for the last `dwellSeconds` up to the newest point. Each point
 * is a bucket covering one spacing from its timestamp (CloudWatch's `Maximum` over [t, t + period)),
 * so the buckets must cover the dwell, none may be missing (a gap over 1.5 spacings could hide a hot
 * bucket), and all must be below. The spacing is the smallest gap between the points' own timestamps
 * (never the query's period: a 10-second query over 1-minute data returns points a minute apart),
 * and at most `maxSpacingSeconds` (data is never stored coarser than it is published), so sparse data
 * cannot pass for coarse data.
 */
export function coolFor(points: MemoryPoint[], below: number, dwellSeconds: number, maxSpacingSeconds = 60): boolean {
  return whyNotCool(points, below, dwellSeconds, maxSpacingSeconds) === undefined;
}

/**
 * Why memory has not been below `below` for the dwell ({@link coolFor}'s test, as words for the decision log),
 * or undefined when it has: too few points, data that does not reach back over the dwell, a gap that could
 * hide a hot bucket, or the highest point in the dwell and how long before the newest it was.
 */
export function whyNotCool(points: MemoryPoint[], below: number, dwellSeconds: number, maxSpacingSeconds = 60): string | undefined {
  if (points.length < 2) return `${points.length ? 'one memory point' : 'no fresh memory data'}: ${dwellSeconds} s below ${below} % cannot be shown`;
  let spacing = maxSpacingSeconds * 1000;
  for (let i = 1; i < points.length; i++) {
    const gap = points[i].t - points[i - 1].t;
    if (gap > 0 && gap < spacing) spacing = gap;
  }
  const end = points[points.length - 1].t + spacing;
  const from = end - dwellSeconds * 1000;
  const window = points.filter(p => p.t >= from - spacing / 2);
  if (!window.length || window[0].t > from + spacing / 2) {
    return `memory data reaches back ${Math.round((end - (window[0]?.t ?? end)) / 1000)} s, not the ${dwellSeconds} s below ${below} % recovery needs`;
  }
  for (let i = 1; i < window.length; i++) {
    const gap = window[i].t - window[i - 1].t;
    if (gap > 1.5 * spacing)
      return `a gap of ${Math.round(gap / 1000)} s in the memory data within the last ${dwellSeconds} s (it could hide a hot point)`;
  }
  const hot = window.filter(p => !(p.v < below));
  if (!hot.length) return undefined;
  const top = hot.reduce((a, p) => (p.v >= a.v ? p : a));
  const last = hot[hot.length - 1];
  return `memory ${+top.v.toFixed(1)} % ≥ ${below} % within the last ${dwellSeconds} s (the newest such point ${Math.round((window[window.length - 1].t - last.t) / 1000)} s before the newest point)`;
}

/** The points of a series at most `seconds` old at `now`. */
function recent(points: MemoryPoint[] | undefined, seconds: number, now: number): MemoryPoint[] {
  return (points ?? []).filter(p => Number.isFinite(p.v) && now - p.t <= seconds * 1000);
}

/**
 * The guard's pressure held for `seconds`: for each point, the lowest value of the points from `seconds`
 * before it up to it, or 0 when the run of points reaching back to it is shorter than that (points further
 * apart than 1.5 × `spacingSeconds` break a run: a hole is not pressure). Its pressure is the maximum of
 * each 10-s interval, taken at each admission, so one padded batch reads as a peak; what the breaker acts
 * on is pressure that lasts.
 */
export function sustained(points: MemoryPoint[], seconds: number, spacingSeconds = 10): MemoryPoint[] {
  return points.map((p, i) => {
    let low = p.v;
    let j = i;
    while (j > 0 && p.t - points[j - 1].t <= seconds * 1000 && points[j].t - points[j - 1].t <= 1.5 * spacingSeconds * 1000) {
      j--;
      low = Math.min(low, points[j].v);
    }
    return { t: p.t, v: p.t - points[j].t >= seconds * 1000 ? low : 0 };
  });
}

/**
 * The request rate (per second) of the newest `Invocations` minutes (at most five of them, the newest at most
 * `staleAfterSeconds` old) of the primary variant, or with `endpoint` of every variant; undefined without such data.
 */
export function requestRate(readings: Readings, config: BreakerConfig, now: number, endpoint = false): number | undefined {
  const series = endpoint ? (readings.endpointInvocationsPerMinute ?? readings.invocationsPerMinute) : readings.invocationsPerMinute;
  const minutes = (series ?? []).filter(p => Number.isFinite(p.v) && p.v >= 0);
  const newest = minutes.at(-1);
  if (!newest || now - newest.t > config.staleAfterSeconds * 1000) return undefined;
  const last = minutes.slice(-5);
  return last.reduce((n, p) => n + p.v, 0) / (60 * last.length);
}

/**
 * The endpoint's traffic (requests/s) a weight shift must be sized for: the newest minute of every variant's
 * `Invocations`, projected over two more minutes by its growth since the minute before (CloudWatch's 1-minute
 * data is 1–2 minutes late, and weights cannot change again while the endpoint is Updating), never below the
 * newest. Undefined without fresh data.
 */
export function trafficRate(readings: Readings, config: BreakerConfig, now: number): number | undefined {
  const minutes = (readings.endpointInvocationsPerMinute ?? readings.invocationsPerMinute ?? []).filter(p => Number.isFinite(p.v) && p.v >= 0);
  const newest = minutes.at(-1);
  if (!newest || now - newest.t > config.staleAfterSeconds * 1000) return undefined;
  const before = minutes.at(-2);
  const growth = before && newest.t - before.t === 60_000 ? Math.max(0, newest.v - before.v) : 0;
  return (newest.v + 2 * growth) / 60;
}

/** The guard's memory refusals in the last `seconds`: their count, the 10-s intervals they fell in, their share of the requests. */
export interface RefusalStats {
  readonly count: number;
  readonly intervals: number;
  /** Refusals ÷ requests in the window (undefined: no request rate known). */
  readonly share?: number;
  /** The highest pressure point in the window (%), undefined without pressure data. */
  readonly peakPressure?: number;
}

export function refusalStats(readings: Readings, config: BreakerConfig, seconds: number, now: number): RefusalStats {
  const refused = recent(readings.guardRefusals, seconds, now).filter(p => p.v > 0);
  const count = refused.reduce((n, p) => n + p.v, 0);
  const rate = requestRate(readings, config, now);
  const pressure = recent(readings.guardPressure, seconds, now);
  return {
    count,
    intervals: refused.length,
    share: rate !== undefined && rate > 0 ? count / (rate * seconds) : undefined,
    peakPressure: pressure.length ? Math.max(...pressure.map(p => p.v)) : undefined,
  };
}

/**
 * Whether refusals are an incident (pure): at least `guardRefusalRate` of the requests, or in at least
 * `guardRefusalIntervals` intervals while memory (`memory`, the newest point) or the guard's pressure (its
 * highest point in the window) is at or above the recovery level. `why` names the case for the decision log.
 */
export function refusalsHot(r: RefusalStats, memory: number | undefined, config: BreakerConfig): { hot: boolean; why: string } {
  if (r.count <= 0) return { hot: false, why: '' };
  const share = r.share !== undefined ? ` (${+(100 * r.share).toFixed(2)} % of requests)` : '';
  const what = `${r.count} memory refusals by the container guard in ${r.intervals} of its 10-s intervals${share}`;
  if (r.share !== undefined && r.share >= config.guardRefusalRate) {
    return { hot: true, why: `${what} ≥ ${100 * config.guardRefusalRate} %` };
  }
  const line = config.recoverBelowPercent;
  const confirm =
    memory !== undefined && memory >= line
      ? `memory ${+memory.toFixed(1)} %`
      : r.peakPressure !== undefined && r.peakPressure >= line
        ? `guard pressure ${+r.peakPressure.toFixed(1)} %`
        : undefined;
  if (r.intervals >= config.guardRefusalIntervals && confirm) return { hot: true, why: `${what} with ${confirm} ≥ ${line} %` };
  return { hot: false, why: what };
}

/**
 * The container guard's escalation (pure): its memory refusals in the last `guardSignalSeconds` when they
 * are an incident ({@link refusalsHot}: a rate, or recurring while memory confirms), and its newest pressure
 * within that time, held for `guardPressureSustainSeconds`, judged like memory (≥ degrade: DEGRADED,
 * ≥ critical: OPEN). `why` says which, for the decision log.
 */
export function guardSignals(
  readings: Readings,
  config: BreakerConfig,
  now: number,
  memory?: number,
): { hot: boolean; critical: boolean; why: string } {
  const held = sustained(
    recent(readings.guardPressure, config.guardSignalSeconds + config.guardPressureSustainSeconds, now),
    config.guardPressureSustainSeconds,
  );
  const newest = held.at(-1);
  const pressure = newest && now - newest.t <= config.guardSignalSeconds * 1000 ? newest.v : undefined;
  const refusals = refusalsHot(refusalStats(readings, config, config.guardSignalSeconds, now), memory, config);
  const pressing = pressure !== undefined && pressure >= config.degradeAtPercent;
  const parts = [
    ...(refusals.hot ? [refusals.why] : []),
    ...(pressing ? [`guard pressure ${+pressure.toFixed(1)} % for ${config.guardPressureSustainSeconds} s`] : []),
  ];
  return {
    hot: refusals.hot || pressing,
    critical: pressure !== undefined && pressure >= config.criticalAtPercent,
    why: parts.join(', '),
  };
}

/**
 * What of the container guard holds recovery back over the recovery dwell (pure): its pressure held at or
 * above the recovery level for `guardPressureSustainSeconds`, or refusals that are an incident (memory is
 * judged by the dwell itself). Empty when quiet. Silence counts as quiet (a container without the guard
 * publishes nothing), and refusals below the rate that do not recur with a full container do not hold it:
 * so the guard can hold recovery back but never hold the breaker degraded for good.
 */
export function guardHolds(readings: Readings, config: BreakerConfig, now: number): string[] {
  const dwell = config.recoveryDwellSeconds + config.guardSignalSeconds;
  const held = sustained(recent(readings.guardPressure, dwell, now), config.guardPressureSustainSeconds);
  const top = held.length ? Math.max(...held.map(p => p.v)) : 0;
  const refusals = refusalsHot(refusalStats(readings, config, dwell, now), undefined, config);
  return [
    ...(top >= config.recoverBelowPercent
      ? [
          `guard pressure held at ${+top.toFixed(1)} % ≥ ${config.recoverBelowPercent} % for ${config.guardPressureSustainSeconds} s in the last ${dwell} s`,
        ]
      : []),
    ...(refusals.hot ? [`${refusals.why} in the last ${dwell} s`] : []),
  ];
}

/** Whether the container guard was quiet for the recovery dwell ({@link guardHolds} names nothing). */
export function guardQuiet(readings: Readings, config: BreakerConfig, now: number): boolean {
  return guardHolds(readings, config, now).length === 0;
}

/** The wait before the first recovery step (s): the minimum dwell, doubled per failed probe past the allowance. */
export function probeWaitSeconds(failedProbes: number, config: BreakerConfig): number {
  const over = Math.max(0, failedProbes - config.maxFailedProbes);
  return Math.min(config.maxProbeWaitSeconds, config.minDwellSeconds * 2 ** over);
}

/** Traffic at or below this share of the rate at the newest failed probe is a new situation: the failed probes no longer lengthen the wait. */
export const PROBE_RATE_RESET = 0.75;

/**
 * Recovery from DEGRADED or OPEN waits while each primary instance in service carries more than this multiple
 * of both the load the breaker escalated at and the autoscaling target (requests/s per instance): memory measured
 * under the level says little about memory without it, and lifting it at a load the fleet is not sized for finds
 * what the level was hiding (simulated: a probe at 25× lifted level 1 from 50 % to 88 % memory in 10 s). Only
 * for an endpoint without a fallback (with one, recovery hands traffic back in steps, and the primary needs it to
 * scale out) whose primary autoscales on requests per instance (its target says what the fleet is sized for); and
 * for at most `maxProbeWaitSeconds` at each step, so that a fleet overloaded for good is still probed.
 */
export const PROBE_LOAD_LIMIT = 4 / 3;

/** The pure decision function. */
export function decide(
  prev: BreakerState,
  readings: Readings,
  endpoint: EndpointView | undefined,
  variants: Variants,
  config: BreakerConfig,
  now: number,
): Decision {
  const reasons: string[] = [];
  // Staleness judges the newest point only: CloudWatch delivers 1-minute data 1–2 minutes late, so the
  // older points of a recovery window are always older than the staleness limit.
  const valid = readings.memory.filter(p => Number.isFinite(p.v));
  const newest = valid[valid.length - 1];
  const fresh = newest && now - newest.t <= config.staleAfterSeconds * 1000 ? valid : [];
  const latest = fresh.length ? fresh[fresh.length - 1].v : undefined;
  // The container guard's signals (the lower layer reports what it absorbs): its pressure and refusals.
  const guard = guardSignals(readings, config, now, latest);
  // The endpoint's request rate (every variant): what a failed probe is remembered with.
  const rate = requestRate(readings, config, now, true);
  const errRate =
    readings.invocations !== undefined && readings.errors !== undefined && readings.invocations >= config.minInvocations
      ? readings.errors / readings.invocations
      : undefined;
  const elapsed = (now - prev.since) / 1000;
  const failed = prev.failedProbes ?? 0;
  // The load on each primary instance in service (the endpoint's traffic: what the primary carries once the level lifts).
  const inService = endpoint?.instances?.[variants.primary];
  const traffic = trafficRate(readings, config, now);
  const load = traffic !== undefined && inService !== undefined && inService > 0 ? traffic / inService : undefined;

  let next: BreakerState = prev;
  if (latest === undefined && !guard.hot) {
    reasons.push('no fresh memory data: holding state (never degrade or restore on silence)');
  } else {
    const memoryCritical = latest !== undefined && latest >= config.criticalAtPercent;
    const critical = memoryCritical || guard.critical;
    const erroring = errRate !== undefined && errRate >= config.errorRateOpen;
    const memoryHot = latest !== undefined && latest >= config.degradeAtPercent;
    const hot = memoryHot || guard.hot;
    // Hysteresis: below the recovery level for the whole dwell, anchored at the newest point (data arrives
    // late), on the fine series or, where it has holes, on the 1-minute maxima.
    const minute = (readings.minuteMemory ?? []).filter(p => Number.isFinite(p.v));
    const minuteFresh = minute.length > 0 && now - minute[minute.length - 1].t <= config.staleAfterSeconds * 1000;
    const fineWhy = whyNotCool(fresh, config.recoverBelowPercent, config.recoveryDwellSeconds, readings.maxSpacingSeconds);
    const minuteWhy = minuteFresh
      ? whyNotCool(minute, config.recoverBelowPercent, config.recoveryDwellSeconds, readings.maxSpacingSeconds)
      : 'no minute data';
    // What holds recovery back, each signal named (memory, the guard's pressure, its refusals): empty when cool.
    const holds = [...(fineWhy !== undefined && minuteWhy !== undefined ? [fineWhy] : []), ...guardHolds(readings, config, now)];
    const cool = holds.length === 0;
    // A re-escalation during recovery, or soon after it closed, is a failed probe.
    const probing =
      prev.state === 'RECOVERING' ||
      (prev.state === 'CLOSED' && prev.recoveredAt !== undefined && now - prev.recoveredAt < config.probationSeconds * 1000);
    const failedProbes = probing ? failed + 1 : prev.state === 'CLOSED' ? 0 : failed;
    // The rate a failed probe failed at (kept while no newer probe fails).
    const failedAt = probing ? rate : prev.state === 'CLOSED' ? undefined : prev.failedAtRate;
    const escalatedAt = load ?? prev.escalatedAtLoad;
    const memo = (): Partial<BreakerState> => ({
      failedProbes,
      ...(failedAt !== undefined ? { failedAtRate: failedAt } : {}),
      ...(escalatedAt !== undefined ? { escalatedAtLoad: escalatedAt } : {}),
    });
    const kept = (): Partial<BreakerState> => ({
      failedProbes: failed,
      ...(prev.failedAtRate !== undefined ? { failedAtRate: prev.failedAtRate } : {}),
      ...(prev.escalatedAtLoad !== undefined ? { escalatedAtLoad: prev.escalatedAtLoad } : {}),
    });
    const open = (): BreakerState => ({ state: 'OPEN', since: now, share: 1, entryShare: 1, step: 0, ...memo() });
    const degraded = (): BreakerState => ({
      state: 'DEGRADED',
      since: now,
      share: config.degradedFallbackShare,
      entryShare: config.degradedFallbackShare,
      step: 0,
      ...memo(),
    });
    const recoveringFrom = (entry: number, step: number): BreakerState => {
      if (step >= config.recoverySteps) {
        const { escalatedAtLoad: _load, ...closed } = {
          state: 'CLOSED' as const,
          since: now,
          share: 0,
          entryShare: 0,
          step: 0,
          ...kept(),
          recoveredAt: now,
        };
        return closed;
      }
      return { state: 'RECOVERING', since: now, share: entry * (1 - step / config.recoverySteps), entryShare: entry, step, ...kept() };
    };
    const fmt = (x: number | undefined) => (x === undefined ? 'no data' : `${+x.toFixed(1)} %`);
    const probe = probing && failedProbes > 0 ? ` (failed probe ${failedProbes})` : '';
    // One line an operator reads after an hour of degradation: the state held and every signal holding it.
    const holding = (why: string) => `holding ${prev.state}${prev.state === 'RECOVERING' ? ` at step ${prev.step}` : ''}: ${why}`;
    // A probe at a load the fleet is not sized for, and well above the one that escalated, finds what the level hides.
    // Bounded like the probes' back-off (an hour a step): a fleet overloaded for good is still probed, so it always ends.
    // Only without a fallback: there the level is the only lever and lifting it is all at once, while the primary
    // carries all the traffic (so its autoscaling keeps up). With a fallback, recovery hands traffic back in steps,
    // and the primary needs that traffic to scale out (target tracking on requests per instance).
    const busier = () =>
      !(config.hasFallback && variants.fallback) &&
      elapsed < config.maxProbeWaitSeconds &&
      load !== undefined &&
      prev.escalatedAtLoad !== undefined &&
      variants.primaryCapacity !== undefined &&
      load > PROBE_LOAD_LIMIT * Math.max(prev.escalatedAtLoad, variants.primaryCapacity.qpsPerInstance);
    const perInstance = (x: number) => `${+x.toFixed(1)} requests/s`;
    const tooBusy = () => {
      const sized = variants.primaryCapacity!.qpsPerInstance;
      return holding(
        `${perInstance(load!)} an instance in service is more than ${+(100 * PROBE_LOAD_LIMIT).toFixed(1)} % of both the ${perInstance(prev.escalatedAtLoad!)} it escalated at and the ${sized} requests/s an instance is scaled for — recovery when it is ${perInstance(PROBE_LOAD_LIMIT * Math.max(prev.escalatedAtLoad!, sized))} or less (memory under the level says little about memory without it)`,
      );
    };
    const notCool = () =>
      holding(`${holds.join('; ')} — recovery needs ${config.recoveryDwellSeconds} s below ${config.recoverBelowPercent} % with the guard quiet`);

    if ((critical || erroring) && prev.state !== 'OPEN') {
      next = open();
      reasons.push(
        (memoryCritical
          ? `memory ${fmt(latest)} ≥ critical ${config.criticalAtPercent} %: OPEN`
          : critical
            ? `${guard.why} ≥ critical ${config.criticalAtPercent} %: OPEN`
            : `error rate ${fmt(100 * errRate!)} (dead or hung workers, 5XX) ≥ ${100 * config.errorRateOpen} %: OPEN`) + probe,
      );
    } else if (hot && (prev.state === 'CLOSED' || prev.state === 'RECOVERING')) {
      next = degraded();
      reasons.push(`${memoryHot ? `memory ${fmt(latest)} ≥ ${config.degradeAtPercent} %` : guard.why}: DEGRADED${probe}`);
    } else if (prev.state !== 'CLOSED' && endpoint && endpoint.status !== 'InService') {
      // De-escalation waits while capacity is still changing: memory measured under the degraded
      // mode says little about memory after it, and a scale-out in flight means load outgrew the fleet.
      reasons.push(holding(`the endpoint is ${endpoint.status} (capacity is changing): recovery waits until it is InService`));
    } else if (prev.state === 'DEGRADED' || prev.state === 'OPEN') {
      // The failed probes lengthen the wait unless the traffic that failed them has gone.
      const calmer = rate !== undefined && prev.failedAtRate !== undefined && rate <= PROBE_RATE_RESET * prev.failedAtRate;
      const backoff = probeWaitSeconds(failed, config);
      const wait = calmer ? config.minDwellSeconds : backoff;
      const perSecond = (x: number) => `${+x.toFixed(1)} requests/s`;
      if (prev.state === 'OPEN' && (critical || erroring)) {
        reasons.push(
          holding(
            memoryCritical
              ? `memory ${fmt(latest)} ≥ critical ${config.criticalAtPercent} %`
              : critical
                ? `${guard.why} ≥ critical ${config.criticalAtPercent} %`
                : `error rate ${fmt(100 * errRate!)} (dead or hung workers, 5XX) ≥ ${100 * config.errorRateOpen} %`,
          ),
        );
      } else if (elapsed < wait) {
        reasons.push(
          holding(
            wait > config.minDwellSeconds
              ? `${Math.round(elapsed)} s of the ${wait} s wait after ${failed} failed probes (traffic ${rate === undefined ? 'unknown' : perSecond(rate)}; the last probe failed at ${prev.failedAtRate === undefined ? 'an unknown rate' : perSecond(prev.failedAtRate)})`
              : `${Math.round(elapsed)} s of the minimum dwell ${config.minDwellSeconds} s${calmer && backoff > wait ? ` (traffic ${perSecond(rate!)} ≤ ${100 * PROBE_RATE_RESET} % of the ${perSecond(prev.failedAtRate!)} the last probe failed at: no back-off)` : ''}`,
          ),
        );
      } else if (!cool) {
        reasons.push(notCool());
      } else if (busier()) {
        reasons.push(tooBusy());
      } else {
        next = recoveringFrom(prev.share, 1);
        reasons.push(`memory below ${config.recoverBelowPercent} % for ${config.recoveryDwellSeconds} s: recovery step 1/${config.recoverySteps}`);
      }
    } else if (prev.state === 'RECOVERING') {
      if (elapsed < config.recoveryStepSeconds) {
        reasons.push(
          holding(
            `${Math.round(elapsed)} s of the ${config.recoveryStepSeconds} s between recovery steps (step ${prev.step}/${config.recoverySteps})`,
          ),
        );
      } else if (!cool) {
        reasons.push(notCool());
      } else if (busier()) {
        reasons.push(tooBusy());
      } else {
        next = recoveringFrom(prev.entryShare, prev.step + 1);
        reasons.push(next.state === 'CLOSED' ? 'last recovery step: CLOSED' : `recovery step ${next.step}/${config.recoverySteps}`);
      }
    } else {
      // Refusals that are not an incident are named, so the log explains a 413 with the endpoint CLOSED.
      const quietRefusals = refusalStats(readings, config, config.guardSignalSeconds, now);
      reasons.push(
        `memory ${fmt(latest)} < ${config.degradeAtPercent} %: CLOSED${quietRefusals.count > 0 ? ` (${refusalsHot(quietRefusals, latest, config).why}: not an incident)` : ''}`,
      );
      // Past the probation the failed probes are forgotten.
      if (prev.recoveredAt !== undefined && now - prev.recoveredAt >= config.probationSeconds * 1000) {
        next = { state: 'CLOSED', since: prev.since, share: 0, entryShare: 0, step: 0 };
      }
    }
  }

  // A drill holds the state at least at its target until it expires; then it is dropped and the
  // evaluation above is the breaker's own (from the drill's state: recovery with the usual hysteresis).
  const drill = prev.drill;
  if (drill && now < drill.until) {
    const until = new Date(drill.until).toISOString();
    if (RANK[next.state] < RANK[drill.to]) {
      const share = drill.to === 'OPEN' ? 1 : config.degradedFallbackShare;
      next =
        prev.state === drill.to
          ? { ...prev, drill }
          : { state: drill.to, since: now, share, entryShare: share, step: 0, failedProbes: prev.failedProbes, drill };
      reasons.splice(0, reasons.length, `drill ${drill.id}: held at ${drill.to} until ${until}`);
    } else {
      next = { ...next, drill };
      reasons.push(`drill ${drill.id} in progress until ${until}`);
    }
  } else if (drill) {
    next = withoutDrill(next);
    reasons.push(`drill ${drill.id} ended: the breaker's own evaluation takes over`);
  }

  // Weights follow the state, capped by what the fallback's instances in service can carry; reconcile
  // with what the endpoint has (idempotent, self-healing).
  let setWeights: Record<string, number> | undefined;
  const effectiveShare = capShare(next.share, endpoint, variants, traffic);
  if (effectiveShare < next.share - EPS && config.hasFallback && variants.fallback) {
    reasons.push(`fallback share held at ${round(effectiveShare)} of ${round(next.share)} until its instances are in service`);
  }
  if (config.hasFallback && variants.fallback) {
    const want = { [variants.primary]: round(1 - effectiveShare), [variants.fallback]: round(effectiveShare) };
    if (!endpoint) {
      reasons.push('endpoint state unknown: weights not changed');
    } else {
      const differs = Object.entries(want).some(([k, w]) => Math.abs((endpoint.weights[k] ?? NaN) - w) > EPS || endpoint.weights[k] === undefined);
      if (differs) {
        if (endpoint.status === 'InService') {
          setWeights = want;
          reasons.push(`weights → ${variants.primary} ${want[variants.primary]}, ${variants.fallback} ${want[variants.fallback]}`);
        } else {
          reasons.push(`endpoint is ${endpoint.status}, not InService: weights deferred to the next evaluation`);
        }
      }
    }
  }

  const changed =
    next.state !== prev.state ||
    next.step !== prev.step ||
    Math.abs(next.share - prev.share) > EPS ||
    (next.failedProbes ?? 0) !== failed ||
    next.recoveredAt !== prev.recoveredAt ||
    next.failedAtRate !== prev.failedAtRate ||
    next.escalatedAtLoad !== prev.escalatedAtLoad ||
    next.drill?.until !== prev.drill?.until;
  const capacity = capacityPlan(next, endpoint, variants, config, traffic);
  return { next, level: LEVEL[next.state], changed, setWeights, effectiveShare, capacity, reasons };
}

/**
 * The fallback share the weights may carry: the target share, but no more than the fallback's
 * instances in service can take at their per-instance QPS, relative to the endpoint's traffic (so a shift
 * never sends the fallback more than it can serve). The traffic is the endpoint's measured request rate
 * (every variant's `Invocations`, projected by its growth: {@link trafficRate}) when known — in a surge it is far
 * above what the primary's fleet is scaled for — and at least what the primary's fleet carries at its target. Rounded down to 5 % steps, so weights change only
 * when instance counts (or the traffic, by a step) do. Without capacity information the target share is used.
 */
function capShare(target: number, endpoint: EndpointView | undefined, v: Variants, rate?: number): number {
  if (target <= 0 || !v.fallback || !v.primaryCapacity || !v.fallbackCapacity || !endpoint?.instances) return target;
  const fb = endpoint.instances[v.fallback];
  const pr = endpoint.instances[v.primary];
  if (fb === undefined || pr === undefined) return target;
  // The endpoint's traffic: measured, or what the primary's fleet is scaled for (target tracking keeps it
  // near instances × QPS per instance, at most); the fallback can take its instances × its QPS per instance of it.
  const total = Math.max(rate ?? 0, pr * v.primaryCapacity.qpsPerInstance);
  const cap = total > 0 ? (fb * v.fallbackCapacity.qpsPerInstance) / total : 1;
  return Math.min(target, Math.floor((cap + EPS) * 20) / 20);
}

/**
 * Autoscaling settings that follow the state: suspend the primary's scale-in while not CLOSED, and
 * raise the fallback's minimum to the instances its target share needs (the primary's traffic at
 * that share, at the fallback's per-instance QPS), within its bounds.
 */
function capacityPlan(next: BreakerState, endpoint: EndpointView | undefined, v: Variants, config: BreakerConfig, rate?: number): CapacityPlan {
  const suspendPrimaryScaleIn = next.state !== 'CLOSED';
  const primary = { suspendPrimaryScaleIn, ...(v.primaryCapacity?.scheduled ? { suspendPrimaryScheduled: suspendPrimaryScaleIn } : {}) };
  const fc = v.fallbackCapacity;
  if (!fc || !v.fallback || !config.hasFallback) return primary;
  if (next.share <= 0) return { ...primary, fallbackMinCapacity: fc.min };
  const primaryNow = endpoint?.instances?.[v.primary] ?? v.primaryCapacity?.min ?? 1;
  const primaryQps = Math.max(rate ?? 0, primaryNow * (v.primaryCapacity?.qpsPerInstance ?? fc.qpsPerInstance));
  // Traffic the fallback must carry: share × total, where the total is what the primary carried before the shift.
  const need = Math.ceil((next.share * primaryQps) / Math.max(1e-9, fc.qpsPerInstance) - EPS);
  return { ...primary, fallbackMinCapacity: Math.min(fc.max, Math.max(fc.min, need)) };
}

function withoutDrill(s: BreakerState): BreakerState {
  const { drill: _drill, ...rest } = s;
  return rest;
}

function round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

/** Parses a stored state; undefined when it is missing or malformed (the caller then rewrites it). */
export function tryParseState(raw: string | undefined): BreakerState | undefined {
  if (!raw) return undefined;
  try {
    const o = JSON.parse(raw);
    if (
      o &&
      ['CLOSED', 'DEGRADED', 'OPEN', 'RECOVERING'].includes(o.state) &&
      Number.isFinite(o.since) &&
      Number.isFinite(o.share) &&
      o.share >= 0 &&
      o.share <= 1
    ) {
      return {
        state: o.state,
        since: o.since,
        share: o.share,
        entryShare: Number.isFinite(o.entryShare) ? o.entryShare : o.share,
        step: Number.isFinite(o.step) ? o.step : 0,
        ...(Number.isInteger(o.failedProbes) && o.failedProbes > 0 ? { failedProbes: o.failedProbes } : {}),
        ...(Number.isFinite(o.recoveredAt) ? { recoveredAt: o.recoveredAt } : {}),
        ...(Number.isFinite(o.failedAtRate) && o.failedAtRate >= 0 ? { failedAtRate: o.failedAtRate } : {}),
        ...(Number.isFinite(o.escalatedAtLoad) && o.escalatedAtLoad >= 0 ? { escalatedAtLoad: o.escalatedAtLoad } : {}),
        ...(o.drill && ['DEGRADED', 'OPEN'].includes(o.drill.to) && Number.isFinite(o.drill.until)
          ? { drill: { to: o.drill.to, until: o.drill.until, id: String(o.drill.id ?? 'drill') } }
          : {}),
      };
    }
  } catch {
    // fall through
  }
  return undefined;
}

/** Parses a stored state, falling back to CLOSED on anything malformed. */
export function parseState(raw: string | undefined, now: number): BreakerState {
  return tryParseState(raw) ?? initialState(now);
}

/** The JSON stored in the parameter: the container reads `level`. */
export function serializeState(s: BreakerState, reasons: string[]): string {
  return JSON.stringify({
    level: LEVEL[s.state],
    state: s.state,
    since: s.since,
    share: s.share,
    entryShare: s.entryShare,
    step: s.step,
    failedProbes: s.failedProbes,
    recoveredAt: s.recoveredAt,
    failedAtRate: s.failedAtRate,
    escalatedAtLoad: s.escalatedAtLoad,
    drill: s.drill,
    reasons: reasons.slice(0, 3),
  });
}
