// The container guard's signals in the policy (issue 28): its pressure and refusals escalate, hold recovery
// back, and count only when they last. A suite of its own: fast, so that mutation testing can run it per mutant.
import {
  BreakerState,
  DEFAULT_CONFIG,
  decide,
  EndpointView,
  initialState,
  MemoryPoint,
  serializeState,
  sustained,
  tryParseState,
} from '../lib/breaker/policy';

const V = { primary: 'Primary', fallback: 'Fallback' };
const MIN = 60_000;
const inService = (p: number, f: number): EndpointView => ({ status: 'InService', weights: { Primary: p, Fallback: f } });

describe('the container guard reports what it absorbs: its pressure and refusals escalate, and hold recovery back', () => {
  const now = 30 * MIN;
  // Memory every 10 s for 15 minutes (what a 10-s endpoint's breaker reads), at 60 %: below every threshold.
  const memory: MemoryPoint[] = Array.from({ length: 90 }, (_, i) => ({ t: now - 20_000 - (89 - i) * 10_000, v: 60 }));
  const series = (last: number, v: number, before = 0): MemoryPoint[] =>
    Array.from({ length: 90 }, (_, i) => ({ t: now - 20_000 - (89 - i) * 10_000, v: i >= 90 - last ? v : before }));
  const at = (
    prev: BreakerState,
    g: { guardPressure?: MemoryPoint[]; guardRefusals?: MemoryPoint[]; invocationsPerMinute?: MemoryPoint[] },
    m: MemoryPoint[] = memory,
  ) => decide(prev, { memory: m, maxSpacingSeconds: 60, ...g }, inService(1, 0), V, DEFAULT_CONFIG, now);
  const closed = initialState(0);

  // 10 requests a second, as CloudWatch's 1-minute Invocations sums (600 a minute), for the last 10 minutes.
  const perMinute = (rps: number): MemoryPoint[] => Array.from({ length: 10 }, (_, i) => ({ t: now - 120_000 - (9 - i) * MIN, v: rps * 60 }));
  const at60 = (m: number): MemoryPoint[] => memory.map(p => ({ ...p, v: m }));

  test('one refusal is not an incident: refusals in one 10-s interval at 60 % memory and 50 % pressure leave it CLOSED, and the log says so', () => {
    const d = at(closed, { guardRefusals: series(1, 3), guardPressure: series(90, 50) });
    expect(d.next.state).toBe('CLOSED');
    expect(d.reasons[0]).toBe('memory 60 % < 80 %: CLOSED (3 memory refusals by the container guard in 1 of its 10-s intervals: not an incident)');
  });

  test('refusals that recur (2 intervals in 120 s) while memory or the guard confirms a full container (≥ 70 %) degrade; unconfirmed they do not', () => {
    const twice = series(90, 0).map((p, i) => (i === 85 || i === 88 ? { ...p, v: 1 } : p));
    expect(at(closed, { guardRefusals: twice }, at60(72)).reasons[0]).toBe(
      '2 memory refusals by the container guard in 2 of its 10-s intervals with memory 72 % ≥ 70 %: DEGRADED',
    );
    // The guard's own pressure confirms it (one interval at 75 % in the window), memory at 60 %.
    const peak = series(90, 50).map((p, i) => (i === 86 ? { ...p, v: 75 } : p));
    expect(at(closed, { guardRefusals: twice, guardPressure: peak }).reasons[0]).toBe(
      '2 memory refusals by the container guard in 2 of its 10-s intervals with guard pressure 75 % ≥ 70 %: DEGRADED',
    );
    // Nothing confirms it: memory 69.9 %, pressure 50 %.
    expect(at(closed, { guardRefusals: twice, guardPressure: series(90, 50) }, at60(69.9)).next.state).toBe('CLOSED');
    // Confirmed but in one interval only.
    expect(at(closed, { guardRefusals: series(1, 5) }, at60(75)).next.state).toBe('CLOSED');
    // An older pair (3 minutes ago) is outside the window.
    const old = series(90, 0).map((p, i) => (i === 70 || i === 71 ? { ...p, v: 1 } : p));
    expect(at(closed, { guardRefusals: old }, at60(75)).next.state).toBe('CLOSED');
  });

  test('refusals at 1 % of the requests degrade whatever memory reads; 0.9 % do not', () => {
    // 10 requests/s: 1,200 requests in 120 s; 12 refusals are 1 %.
    const twelve = series(90, 0).map((p, i) => (i === 89 ? { ...p, v: 12 } : p));
    const d = at(closed, { guardRefusals: twelve, invocationsPerMinute: perMinute(10) }, at60(40));
    expect(d.next.state).toBe('DEGRADED');
    expect(d.reasons[0]).toBe('12 memory refusals by the container guard in 1 of its 10-s intervals (1 % of requests) ≥ 1 %: DEGRADED');
    const eleven = series(90, 0).map((p, i) => (i === 89 ? { ...p, v: 11 } : p));
    expect(at(closed, { guardRefusals: eleven, invocationsPerMinute: perMinute(10) }, at60(40)).next.state).toBe('CLOSED');
    // The rate comes from fresh minutes only: the same refusals against invocation data 6 minutes old are not a rate.
    const stale = perMinute(10).map(p => ({ ...p, t: p.t - 4 * MIN }));
    expect(at(closed, { guardRefusals: twelve, invocationsPerMinute: stale }, at60(40)).next.state).toBe('CLOSED');
  });

  test('the guard escalates without fresh memory data when its refusals are a rate (evidence); recurrence alone needs memory to confirm it', () => {
    const twelve = series(90, 0).map((p, i) => (i === 89 ? { ...p, v: 12 } : p));
    expect(at(closed, { guardRefusals: twelve, invocationsPerMinute: perMinute(10) }, []).next.state).toBe('DEGRADED');
    expect(at(closed, { guardRefusals: series(2, 1) }, []).reasons[0]).toMatch(/no fresh memory data: holding state/);
    expect(at(closed, {}, []).reasons[0]).toMatch(/no fresh memory data: holding state/);
  });

  test('pressure is judged like memory once it lasts 30 s: ≥ 80 % degrades, ≥ 95 % opens, 79 % does not; a peak does not', () => {
    expect(at(closed, { guardPressure: series(4, 80) }).next.state).toBe('DEGRADED');
    expect(at(closed, { guardPressure: series(4, 79.9) }).next.state).toBe('CLOSED');
    const open = at(closed, { guardPressure: series(4, 95) });
    expect(open.next.state).toBe('OPEN');
    expect(open.reasons[0]).toBe('guard pressure 95 % for 30 s ≥ critical 95 %: OPEN');
    // 20 s at 99 % (a padded batch's peak) is not pressure that lasts.
    expect(at(closed, { guardPressure: series(3, 99, 50) }).next.state).toBe('CLOSED');
    expect(at(closed, { guardPressure: series(4, 99, 50) }).next.state).toBe('OPEN');
    // Only the newest run counts for escalation (an older high run that has passed does not).
    expect(at(closed, { guardPressure: series(90, 50).map((p, i) => (i >= 50 && i < 60 ? { ...p, v: 99 } : p)) }).next.state).toBe('CLOSED');
    // Stale pressure (the container stopped publishing 3 minutes ago) escalates nothing.
    expect(at(closed, { guardPressure: series(90, 99).map(p => ({ ...p, t: p.t - 160_000 })) }).next.state).toBe('CLOSED');
    expect(at(closed, { guardPressure: series(90, 99).map(p => ({ ...p, t: p.t - 90_000 })) }).next.state).toBe('OPEN');
  });

  test('recovery needs the guard quiet for the dwell: refusals at a rate or pressure ≥ 70 % in it hold DEGRADED, naming the signal; a stray refusal or silence does not', () => {
    const degraded: BreakerState = { state: 'DEGRADED', since: now - 10 * MIN, share: 0.5, entryShare: 0.5, step: 0 };
    expect(at(degraded, {}).next.state).toBe('RECOVERING');
    expect(at(degraded, { guardPressure: series(90, 50), guardRefusals: series(90, 0) }).next.state).toBe('RECOVERING');
    // One refusal 4 minutes ago (inside the dwell, outside the escalation window): not an incident, recovery goes on.
    const stray = series(90, 0).map((p, i) => (i === 66 ? { ...p, v: 1 } : p));
    expect(at(degraded, { guardRefusals: stray, invocationsPerMinute: perMinute(10) }).next.state).toBe('RECOVERING');
    // 50 refusals 4 minutes ago: 50 of 4,200 requests in the 420 s read (1.19 %), a rate.
    const burst = series(90, 0).map((p, i) => (i === 66 ? { ...p, v: 50 } : p));
    const held = at(degraded, { guardRefusals: burst, invocationsPerMinute: perMinute(10) });
    expect(held.next.state).toBe('DEGRADED');
    expect(held.reasons[0]).toBe(
      'holding DEGRADED: 50 memory refusals by the container guard in 1 of its 10-s intervals (1.19 % of requests) ≥ 1 % in the last 420 s — recovery needs 300 s below 70 % with the guard quiet',
    );
    const pressed = at(degraded, { guardPressure: series(20, 72, 50) });
    expect(pressed.next.state).toBe('DEGRADED');
    expect(pressed.reasons[0]).toBe(
      'holding DEGRADED: guard pressure held at 72 % ≥ 70 % for 30 s in the last 420 s — recovery needs 300 s below 70 % with the guard quiet',
    );
    expect(at(degraded, { guardPressure: series(20, 69, 50) }).next.state).toBe('RECOVERING');
    // Peaks of 30 s at 99 % in the dwell (3 points) do not hold it back; 40 s (4 points) do.
    expect(at(degraded, { guardPressure: series(90, 50).map((p, i) => (i >= 70 && i < 73 ? { ...p, v: 99 } : p)) }).next.state).toBe('RECOVERING');
    expect(at(degraded, { guardPressure: series(90, 50).map((p, i) => (i >= 70 && i < 74 ? { ...p, v: 99 } : p)) }).next.state).toBe('DEGRADED');
  });

  // The edges of each guard line (mutation testing found them unpinned): the windows' ends are inclusive,
  // and the decision log names exactly the signals that decided.
  test('refusals exactly 120 s old still count; pressure whose newest point is exactly 120 s old still counts', () => {
    const pair = series(90, 0).map((p, i) => (i === 79 || i === 85 ? { ...p, v: 1 } : p));
    expect(now - pair[79].t).toBe(120_000);
    expect(at(closed, { guardRefusals: pair }, at60(72)).next.state).toBe('DEGRADED');
    // One step older (130 s) and only one interval is left in the window.
    const older = series(90, 0).map((p, i) => (i === 78 || i === 85 ? { ...p, v: 1 } : p));
    expect(at(closed, { guardRefusals: older }, at60(72)).next.state).toBe('CLOSED');
    // 99 % for 15 minutes, the newest point 120 s old (its run of 30 s reaches back to 150 s, the edge of what is read).
    const late = series(90, 99).map(p => ({ ...p, t: p.t - 100_000 }));
    expect(now - late[89].t).toBe(120_000);
    expect(at(closed, { guardPressure: late }).next.state).toBe('OPEN');
  });

  test('the reasons name the signals that decided: pressure at exactly 80 %, refusals beside low pressure, both together', () => {
    expect(at(closed, { guardPressure: series(4, 80) }).reasons[0]).toBe('guard pressure 80 % for 30 s: DEGRADED');
    // Pressure at 50 % is not a reason: only the refusals (a rate) are named.
    const rate = series(90, 0).map((p, i) => (i === 89 ? { ...p, v: 24 } : p));
    expect(at(closed, { guardRefusals: rate, guardPressure: series(90, 50), invocationsPerMinute: perMinute(10) }).reasons[0]).toBe(
      '24 memory refusals by the container guard in 1 of its 10-s intervals (2 % of requests) ≥ 1 %: DEGRADED',
    );
    expect(at(closed, { guardRefusals: series(2, 1), guardPressure: series(90, 85) }).reasons[0]).toBe(
      '2 memory refusals by the container guard in 2 of its 10-s intervals with guard pressure 85 % ≥ 70 %, guard pressure 85 % for 30 s: DEGRADED',
    );
  });

  test('recurring refusals are confirmed by memory or pressure at exactly 70 % (at or above the recovery level)', () => {
    const twice = series(90, 0).map((p, i) => (i === 85 || i === 88 ? { ...p, v: 1 } : p));
    expect(at(closed, { guardRefusals: twice }, at60(70)).reasons[0]).toBe(
      '2 memory refusals by the container guard in 2 of its 10-s intervals with memory 70 % ≥ 70 %: DEGRADED',
    );
    const peak = series(90, 50).map((p, i) => (i === 86 ? { ...p, v: 70 } : p));
    expect(at(closed, { guardRefusals: twice, guardPressure: peak }).reasons[0]).toBe(
      '2 memory refusals by the container guard in 2 of its 10-s intervals with guard pressure 70 % ≥ 70 %: DEGRADED',
    );
  });

  test('the share is of the newest five minutes of requests (a minute with none counts), fresh up to exactly 300 s', () => {
    const twelve = series(90, 0).map((p, i) => (i === 89 ? { ...p, v: 12 } : p));
    // Seven minutes, the newest 120 s old: a surge of 1,000 requests/s 7 and 6 minutes back, then 15, 15, 15, 5 and 0
    // requests/s. The newest five: 3,000 requests in 300 s, 10 requests/s: 12 refusals in 120 s are 1 %.
    const seven = [60_000, 60_000, 900, 900, 900, 300, 0].map((v, i) => ({ t: now - 120_000 - (6 - i) * MIN, v }));
    expect(at(closed, { guardRefusals: twelve, invocationsPerMinute: seven }, at60(40)).reasons[0]).toBe(
      '12 memory refusals by the container guard in 1 of its 10-s intervals (1 % of requests) ≥ 1 %: DEGRADED',
    );
    // A minute without a number or below zero is no minute: the same share with one of each among them.
    const odd = [...seven.slice(0, 4), { t: seven[4].t - 20_000, v: NaN }, seven[4], { t: seven[5].t - 20_000, v: -1 }, ...seven.slice(5)];
    expect(at(closed, { guardRefusals: twelve, invocationsPerMinute: odd }, at60(40)).reasons[0]).toBe(
      '12 memory refusals by the container guard in 1 of its 10-s intervals (1 % of requests) ≥ 1 %: DEGRADED',
    );
    // The share is of the primary's requests (its guard refused them), not the endpoint's (every variant: 20 requests/s).
    const both = { invocationsPerMinute: perMinute(10), endpointInvocationsPerMinute: perMinute(20) };
    expect(at(closed, { guardRefusals: twelve, ...both }, at60(40)).reasons[0]).toBe(
      '12 memory refusals by the container guard in 1 of its 10-s intervals (1 % of requests) ≥ 1 %: DEGRADED',
    );
    // The newest minute exactly 300 s old is still a rate; 10 s older it is not.
    const aged = (by: number) => perMinute(10).map(p => ({ ...p, t: p.t - by }));
    expect(at(closed, { guardRefusals: twelve, invocationsPerMinute: aged(180_000) }, at60(40)).next.state).toBe('DEGRADED');
    expect(at(closed, { guardRefusals: twelve, invocationsPerMinute: aged(190_000) }, at60(40)).next.state).toBe('CLOSED');
  });

  test('minutes with no requests give no share: 12 refusals against 0 requests/s are not a rate (no division by zero)', () => {
    const twelve = series(90, 0).map((p, i) => (i === 89 ? { ...p, v: 12 } : p));
    const d = at(closed, { guardRefusals: twelve, invocationsPerMinute: perMinute(0) }, at60(40));
    expect(d.next.state).toBe('CLOSED');
    expect(d.reasons[0]).toBe('memory 40 % < 80 %: CLOSED (12 memory refusals by the container guard in 1 of its 10-s intervals: not an incident)');
  });

  test('pressure held at exactly 70 % in the dwell holds recovery back (quiet is below 70 %)', () => {
    const degraded: BreakerState = { state: 'DEGRADED', since: now - 10 * MIN, share: 0.5, entryShare: 0.5, step: 0 };
    expect(at(degraded, { guardPressure: series(20, 70, 50) }).next.state).toBe('DEGRADED');
  });

  test('without memory data DEGRADED holds, and the log says memory has no data', () => {
    const degraded: BreakerState = { state: 'DEGRADED', since: now - 10 * MIN, share: 0.5, entryShare: 0.5, step: 0 };
    const rate = series(90, 0).map((p, i) => (i === 89 ? { ...p, v: 60 } : p));
    const d = at(degraded, { guardRefusals: rate, invocationsPerMinute: perMinute(10) }, []);
    expect(d.next.state).toBe('DEGRADED');
    expect(d.reasons[0]).toBe(
      'holding DEGRADED: no fresh memory data: 300 s below 70 % cannot be shown; 60 memory refusals by the container guard in 1 of its 10-s intervals (1.43 % of requests) ≥ 1 % in the last 420 s — recovery needs 300 s below 70 % with the guard quiet',
    );
  });

  test("memory's and the error rate's own reasons, beside the guard's", () => {
    const one = (m: number): MemoryPoint[] => memory.map(p => ({ ...p, v: m }));
    expect(at(closed, {}, one(96)).reasons[0]).toBe('memory 96 % ≥ critical 95 %: OPEN');
    expect(at(closed, {}, one(85)).reasons[0]).toBe('memory 85 % ≥ 80 %: DEGRADED');
    const errors = (n: number, of: number) =>
      decide(closed, { memory, maxSpacingSeconds: 60, errors: n, invocations: of }, inService(1, 0), V, DEFAULT_CONFIG, now);
    expect(errors(10, 100).reasons[0]).toBe('error rate 10 % (dead or hung workers, 5XX) ≥ 5 %: OPEN');
    // 1 of 100 (1 %) is below the 5 % that opens.
    expect(errors(1, 100).next.state).toBe('CLOSED');
  });
});

describe('sustained: the pressure that lasts', () => {
  const at = (vs: number[], gapAfter?: number) =>
    vs.map((v, i) => ({ t: 1_000_000 + i * 10_000 + (gapAfter !== undefined && i > gapAfter ? 20_000 : 0), v }));
  test('each point: the lowest of the 30 s up to it (4 points 10 s apart), 0 until the run is 30 s long', () => {
    expect(sustained(at([90, 85, 99, 95, 97, 60, 99]), 30).map(p => p.v)).toEqual([0, 0, 0, 85, 85, 60, 60]);
    // A peak alone is not pressure that lasts; a long high run is.
    expect(sustained(at([50, 50, 50, 99]), 30).map(p => p.v)).toEqual([0, 0, 0, 50]);
    expect(sustained(at([81, 82, 83, 84, 85]), 30).map(p => p.v)).toEqual([0, 0, 0, 81, 82]);
  });

  test('a hole (over 15 s between points) breaks the run: after it the run starts again', () => {
    // 20 s missing after the third point (a gap of 30 s).
    expect(sustained(at([90, 90, 90, 90, 90, 90, 90], 2), 30).map(p => p.v)).toEqual([0, 0, 0, 0, 0, 0, 90]);
    // A gap of exactly 15 s (1.5 × the spacing) does not break it; 16 s does.
    const run = (ts: number[]) =>
      sustained(
        ts.map(x => ({ t: x * 1000, v: 90 })),
        30,
      ).map(p => p.v);
    expect(run([0, 15, 25, 30])).toEqual([0, 0, 0, 90]);
    expect(run([0, 16, 26, 30])).toEqual([0, 0, 0, 0]);
  });

  test('timestamps are kept; no points, no points', () => {
    expect(sustained(at([1, 2]), 30).map(p => p.t)).toEqual([1_000_000, 1_010_000]);
    expect(sustained([], 30)).toEqual([]);
  });
});

describe('protection that lets go: the breaker recovers from its own tiers, and probes again once the traffic that failed them is gone', () => {
  const MIN = 60_000;
  const V2 = { primary: 'Primary' };
  const single = { ...DEFAULT_CONFIG, hasFallback: false };
  /**
   * The readings a single-variant endpoint gives at `now`: memory 40 % every 10 s, guard pressure 30 %, 300
   * requests/s, and refusals in every 10-s interval at `share` of them (what an older container counts when its
   * level-2 tier refuses requests over DEGRADED_MAX_SEQ_LEN: 0.45 % above 20,000 rows in the clustering profile).
   */
  const readingsAt = (now: number, share: number) => {
    const tenS = Array.from({ length: 90 }, (_, i) => now - 20_000 - (89 - i) * 10_000);
    return {
      memory: tenS.map(t => ({ t, v: 40 })),
      maxSpacingSeconds: 60,
      guardPressure: tenS.map(t => ({ t, v: 30 })),
      guardRefusals: tenS.map(t => ({ t, v: Math.round(300 * 10 * share) })),
      invocationsPerMinute: Array.from({ length: 10 }, (_, i) => ({ t: now - 120_000 - (9 - i) * MIN, v: 300 * 60 })),
      invocations: 300 * 600,
      errors: 0,
    };
  };

  test('OPEN at 40 % memory with tier refusals at level 2 (0.45 % of 300 requests/s) is CLOSED again within the documented 540 s', () => {
    let state: BreakerState = { state: 'OPEN', since: 0, share: 1, entryShare: 1, step: 0 };
    let closedAt: number | undefined;
    // The breaker's schedule: one evaluation a minute, for 3 hours.
    for (let t = MIN; t <= 180 * MIN && closedAt === undefined; t += MIN) {
      const d = decide(state, readingsAt(t, 0.0045), { status: 'InService', weights: { Primary: 1 } }, V2, single, t);
      state = d.next;
      if (state.state === 'CLOSED') closedAt = t;
    }
    // The minimum dwell (300 s, memory cool for it), then the second and third recovery steps 120 s apart: 540 s.
    expect(closedAt).toBe(9 * MIN);
  });

  test('the same endpoint with the refusals at 1.2 % (a rate) stays OPEN, and says why in one line', () => {
    const open: BreakerState = { state: 'OPEN', since: 0, share: 1, entryShare: 1, step: 0 };
    const d = decide(open, readingsAt(60 * MIN, 0.012), { status: 'InService', weights: { Primary: 1 } }, V2, single, 60 * MIN);
    expect(d.next.state).toBe('OPEN');
    expect(d.reasons).toEqual([
      'holding OPEN: 1476 memory refusals by the container guard in 41 of its 10-s intervals (1.17 % of requests) ≥ 1 % in the last 420 s — recovery needs 300 s below 70 % with the guard quiet',
    ]);
  });

  const V = { primary: 'Primary', fallback: 'Fallback' };
  const cool = (now: number) => Array.from({ length: 90 }, (_, i) => ({ t: now - 20_000 - (89 - i) * 10_000, v: 50 }));
  const perMinute = (now: number, primary: number, fallback = 0) => ({
    invocationsPerMinute: Array.from({ length: 10 }, (_, i) => ({ t: now - 120_000 - (9 - i) * MIN, v: primary * 60 })),
    endpointInvocationsPerMinute: Array.from({ length: 10 }, (_, i) => ({ t: now - 120_000 - (9 - i) * MIN, v: (primary + fallback) * 60 })),
  });
  const inService = { status: 'InService', weights: { Primary: 0.5, Fallback: 0.5 } };

  test('a failed probe remembers the endpoint’s request rate (every variant), and the next DEGRADED keeps it', () => {
    const now = 100 * MIN;
    const recovering: BreakerState = { state: 'RECOVERING', since: now - 3 * MIN, share: 1 / 6, entryShare: 0.5, step: 2, failedProbes: 3 };
    const hot = cool(now).map(p => ({ ...p, v: 85 }));
    const d = decide(recovering, { memory: hot, maxSpacingSeconds: 60, ...perMinute(now, 500, 180) }, inService, V, DEFAULT_CONFIG, now);
    expect(d.next).toMatchObject({ state: 'DEGRADED', failedProbes: 4, failedAtRate: 680 });
    expect(d.reasons[0]).toBe('memory 85 % ≥ 80 %: DEGRADED (failed probe 4)');
  });

  test('after 5 failed probes (a 1,200-s wait) traffic at 75 % or less of the rate the last one failed at probes after the minimum dwell', () => {
    const now = 100 * MIN;
    const degraded: BreakerState = {
      state: 'DEGRADED',
      since: now - 6 * MIN,
      share: 0.5,
      entryShare: 0.5,
      step: 0,
      failedProbes: 5,
      failedAtRate: 680,
    };
    const at = (rps: number) =>
      decide(degraded, { memory: cool(now), maxSpacingSeconds: 60, ...perMinute(now, rps / 2, rps / 2) }, inService, V, DEFAULT_CONFIG, now);
    // 40 requests/s after a pulse of 680: a new situation.
    expect(at(40).next).toMatchObject({ state: 'RECOVERING', failedProbes: 5, failedAtRate: 680 });
    expect(at(510).next).toMatchObject({ state: 'RECOVERING' });
    // Still 511 requests/s (over 75 % of 680): the back-off holds, and the log says how long and why.
    const held = at(511);
    expect(held.next.state).toBe('DEGRADED');
    expect(held.reasons[0]).toBe(
      'holding DEGRADED: 360 s of the 1200 s wait after 5 failed probes (traffic 511 requests/s; the last probe failed at 680 requests/s)',
    );
    // The minimum dwell is still waited for (5 minutes since DEGRADED at 40 requests/s: not yet).
    const early = decide(
      { ...degraded, since: now - 4 * MIN },
      { memory: cool(now), maxSpacingSeconds: 60, ...perMinute(now, 20, 20) },
      inService,
      V,
      DEFAULT_CONFIG,
      now,
    );
    expect(early.next.state).toBe('DEGRADED');
    expect(early.reasons[0]).toBe(
      'holding DEGRADED: 240 s of the minimum dwell 300 s (traffic 40 requests/s ≤ 75 % of the 680 requests/s the last probe failed at: no back-off)',
    );
  });

  describe('without a fallback, recovery waits while each instance carries far more than when the level became necessary', () => {
    // The clustering example: no fallback, 7 to 24 instances scaled at 91 requests/s an instance.
    const solo = { primary: 'Primary', primaryCapacity: { min: 7, max: 24, qpsPerInstance: 91 } };
    const noFallback = { ...DEFAULT_CONFIG, hasFallback: false };
    const now = 100 * MIN;
    const view = (instances: number): EndpointView => ({ status: 'InService', weights: { Primary: 1 }, instances: { Primary: instances } });
    const degraded: BreakerState = { state: 'DEGRADED', since: now - 10 * MIN, share: 0, entryShare: 0, step: 0, escalatedAtLoad: 5.7 };
    const at = (prev: BreakerState, rps: number, instances: number, variants: typeof solo | typeof withFallback = solo, config = noFallback) =>
      decide(prev, { memory: cool(now), maxSpacingSeconds: 60, ...perMinute(now, rps) }, view(instances), variants, config, now);
    const withFallback = { ...solo, fallback: 'Fallback' };

    test('a 25× pulse on 7 instances (143 requests/s each): DEGRADED holds, and the log says what recovery waits for', () => {
      const d = at(degraded, 1000, 7);
      expect(d.next.state).toBe('DEGRADED');
      expect(d.reasons[0]).toBe(
        'holding DEGRADED: 142.9 requests/s an instance in service is more than 133.3 % of both the 5.7 requests/s it escalated at and the 91 requests/s an instance is scaled for — recovery when it is 121.3 requests/s or less (memory under the level says little about memory without it)',
      );
      // The last recovery step (the one that lifts the level) waits the same way.
      const recovering: BreakerState = { state: 'RECOVERING', since: now - 3 * MIN, share: 0, entryShare: 0, step: 2, escalatedAtLoad: 5.7 };
      expect(at(recovering, 1000, 7).next).toMatchObject({ state: 'RECOVERING', step: 2 });
    });

    test('once autoscaling has added instances (1,000 requests/s on 9: 111 each), or the traffic has gone, recovery starts', () => {
      expect(at(degraded, 1000, 9).next).toMatchObject({ state: 'RECOVERING', step: 1, escalatedAtLoad: 5.7 });
      expect(at(degraded, 40, 7).next.state).toBe('RECOVERING');
      // Just under 4/3 of the autoscaling target (121.33): recovery.
      expect(at(degraded, 121.3 * 7, 7).next.state).toBe('RECOVERING');
      const last: BreakerState = { state: 'RECOVERING', since: now - 3 * MIN, share: 0, entryShare: 0, step: 2, escalatedAtLoad: 5.7 };
      const closed = at(last, 40, 7).next;
      expect(closed.state).toBe('CLOSED');
      expect(closed).not.toHaveProperty('escalatedAtLoad');
    });

    test('at most an hour at a step (maxProbeWait): a fleet overloaded for good is still probed', () => {
      expect(at({ ...degraded, since: now - 59 * MIN }, 1000, 7).next.state).toBe('DEGRADED');
      expect(at({ ...degraded, since: now - 60 * MIN }, 1000, 7).next.state).toBe('RECOVERING');
    });

    test('with a fallback the steps hand traffic back gradually and the primary needs it to scale: no wait', () => {
      const shifted: BreakerState = { ...degraded, share: 0.5, entryShare: 0.5 };
      expect(at(shifted, 1000, 7, withFallback, DEFAULT_CONFIG).next.state).toBe('RECOVERING');
    });

    test('escalating records the load per instance in service; it is stored and read back', () => {
      const closed = initialState(0);
      const hot = cool(now).map(p => ({ ...p, v: 85 }));
      const d = decide(closed, { memory: hot, maxSpacingSeconds: 60, ...perMinute(now, 40) }, view(7), solo, noFallback, now);
      expect(d.next).toMatchObject({ state: 'DEGRADED' });
      expect(d.next.escalatedAtLoad).toBeCloseTo(40 / 7, 6);
      expect(d.changed).toBe(true);
      const s: BreakerState = { ...degraded };
      expect(tryParseState(serializeState(s, []))).toEqual(s);
      expect(tryParseState(JSON.stringify({ ...s, escalatedAtLoad: -1 }))).not.toHaveProperty('escalatedAtLoad');
    });
  });

  test('an escalation that is not a probe keeps the rate the last probe failed at; hot again past the probation starts afresh', () => {
    const now = 100 * MIN;
    const hot = cool(now).map(p => ({ ...p, v: 96 }));
    // DEGRADED → OPEN at 300 requests/s: not a probe, so the 680 the last probe failed at is kept (not today's 300).
    const degraded: BreakerState = {
      state: 'DEGRADED',
      since: now - 2 * MIN,
      share: 0.5,
      entryShare: 0.5,
      step: 0,
      failedProbes: 2,
      failedAtRate: 680,
    };
    const d = decide(degraded, { memory: hot, maxSpacingSeconds: 60, ...perMinute(now, 150, 150) }, inService, V, DEFAULT_CONFIG, now);
    expect(d.next).toEqual({ state: 'OPEN', since: now, share: 1, entryShare: 1, step: 0, failedProbes: 2, failedAtRate: 680 });
    // CLOSED 11 minutes (past the 10-minute probation) and hot: a new incident, neither the count nor the rate carried.
    const closed: BreakerState = {
      state: 'CLOSED',
      since: now - 11 * MIN,
      share: 0,
      entryShare: 0,
      step: 0,
      failedProbes: 2,
      failedAtRate: 680,
      recoveredAt: now - 11 * MIN,
    };
    const again = decide(closed, { memory: hot, maxSpacingSeconds: 60, ...perMinute(now, 150, 150) }, inService, V, DEFAULT_CONFIG, now);
    expect(again.next).toEqual({ state: 'OPEN', since: now, share: 1, entryShare: 1, step: 0, failedProbes: 0 });
    expect(again.next).not.toHaveProperty('failedAtRate');
  });

  test('within the minimum dwell the log speaks of skipping a back-off only when there was one to skip', () => {
    const now = 100 * MIN;
    // 1 failed probe (within the 3 allowed: no back-off), the traffic calmer than the 680 it failed at.
    const degraded: BreakerState = {
      state: 'DEGRADED',
      since: now - 4 * MIN,
      share: 0.5,
      entryShare: 0.5,
      step: 0,
      failedProbes: 1,
      failedAtRate: 680,
    };
    const d = decide(degraded, { memory: cool(now), maxSpacingSeconds: 60, ...perMinute(now, 20, 20) }, inService, V, DEFAULT_CONFIG, now);
    expect(d.reasons[0]).toBe('holding DEGRADED: 240 s of the minimum dwell 300 s');
  });

  test('the remembered rate is stored and read back; a CLOSED past its probation forgets it', () => {
    const s: BreakerState = { state: 'DEGRADED', since: 5, share: 0.5, entryShare: 0.5, step: 0, failedProbes: 4, failedAtRate: 680 };
    expect(tryParseState(serializeState(s, []))).toEqual(s);
    expect(tryParseState(JSON.stringify({ ...s, failedAtRate: -1 }))).not.toHaveProperty('failedAtRate');
    const now = 100 * MIN;
    const closed: BreakerState = {
      state: 'CLOSED',
      since: 0,
      share: 0,
      entryShare: 0,
      step: 0,
      failedProbes: 4,
      failedAtRate: 680,
      recoveredAt: now - 11 * MIN,
    };
    expect(decide(closed, { memory: cool(now), maxSpacingSeconds: 60 }, inService, V, DEFAULT_CONFIG, now).next).toEqual({
      state: 'CLOSED',
      since: 0,
      share: 0,
      entryShare: 0,
      step: 0,
    });
  });
});
