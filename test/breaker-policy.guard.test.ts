// The container guard's signals in the policy (issue 28): its pressure and refusals escalate, hold recovery
// back, and count only when they last. A suite of its own: fast, so that mutation testing can run it per mutant.
import { BreakerState, DEFAULT_CONFIG, decide, EndpointView, initialState, MemoryPoint, sustained } from '../lib/breaker/policy';

const V = { primary: 'Primary', fallback: 'Fallback' };
const MIN = 60_000;
const inService = (p: number, f: number): EndpointView => ({ status: 'InService', weights: { Primary: p, Fallback: f } });

describe('the container guard reports what it absorbs: its pressure and refusals escalate, and hold recovery back', () => {
  const now = 30 * MIN;
  // Memory every 10 s for 15 minutes (what a 10-s endpoint's breaker reads), at 60 %: below every threshold.
  const memory: MemoryPoint[] = Array.from({ length: 90 }, (_, i) => ({ t: now - 20_000 - (89 - i) * 10_000, v: 60 }));
  const series = (last: number, v: number, before = 0): MemoryPoint[] =>
    Array.from({ length: 90 }, (_, i) => ({ t: now - 20_000 - (89 - i) * 10_000, v: i >= 90 - last ? v : before }));
  const at = (prev: BreakerState, g: { guardPressure?: MemoryPoint[]; guardRefusals?: MemoryPoint[] }, m: MemoryPoint[] = memory) =>
    decide(prev, { memory: m, maxSpacingSeconds: 60, ...g }, inService(1, 0), V, DEFAULT_CONFIG, now);
  const closed = initialState(0);

  test('one memory refusal in the last 2 minutes degrades though memory reads 60 %; an older one does not', () => {
    const d = at(closed, { guardRefusals: series(1, 1) });
    expect(d.next.state).toBe('DEGRADED');
    expect(d.reasons[0]).toBe('1 memory refusals by the container guard in 120 s: DEGRADED');
    // 3 minutes old: outside guardSignalSeconds (120 s).
    const old = Array.from({ length: 90 }, (_, i) => ({ t: now - 20_000 - (89 - i) * 10_000, v: i === 71 ? 5 : 0 }));
    expect(now - old[71].t).toBe(200_000);
    expect(at(closed, { guardRefusals: old }).next.state).toBe('CLOSED');
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

  test('the guard escalates even without fresh memory data (a refusal is evidence, silence is not)', () => {
    expect(at(closed, { guardRefusals: series(1, 2) }, []).next.state).toBe('DEGRADED');
    expect(at(closed, {}, []).reasons[0]).toMatch(/no fresh memory data: holding state/);
  });

  test('recovery needs the guard quiet for the dwell: a refusal or pressure ≥ 70 % in it holds DEGRADED; silence does not', () => {
    const degraded: BreakerState = { state: 'DEGRADED', since: now - 10 * MIN, share: 0.5, entryShare: 0.5, step: 0 };
    expect(at(degraded, {}).next.state).toBe('RECOVERING');
    expect(at(degraded, { guardPressure: series(90, 50), guardRefusals: series(90, 0) }).next.state).toBe('RECOVERING');
    // A refusal 4 minutes ago: inside the dwell (300 s), outside the escalation window.
    const refusal = series(90, 0).map((p, i) => (i === 66 ? { ...p, v: 1 } : p));
    const held = at(degraded, { guardRefusals: refusal });
    expect(held.next.state).toBe('DEGRADED');
    expect(held.reasons[0]).toMatch(/^memory 60 %: not below 70 % for 300 s: holding DEGRADED$/);
    expect(at(degraded, { guardPressure: series(20, 72, 50) }).next.state).toBe('DEGRADED');
    expect(at(degraded, { guardPressure: series(20, 69, 50) }).next.state).toBe('RECOVERING');
    // Peaks of 30 s at 99 % in the dwell (3 points) do not hold it back; 40 s (4 points) do.
    expect(at(degraded, { guardPressure: series(90, 50).map((p, i) => (i >= 70 && i < 73 ? { ...p, v: 99 } : p)) }).next.state).toBe('RECOVERING');
    expect(at(degraded, { guardPressure: series(90, 50).map((p, i) => (i >= 70 && i < 74 ? { ...p, v: 99 } : p)) }).next.state).toBe('DEGRADED');
  });

  // The edges of each guard line (mutation testing found them unpinned): the windows' ends are inclusive,
  // and the decision log names exactly the signals that decided.
  test('a refusal exactly 120 s old still counts; pressure whose newest point is exactly 120 s old still counts', () => {
    const refusal = series(90, 0).map((p, i) => (i === 79 ? { ...p, v: 1 } : p));
    expect(now - refusal[79].t).toBe(120_000);
    expect(at(closed, { guardRefusals: refusal }).next.state).toBe('DEGRADED');
    // 99 % for 15 minutes, the newest point 120 s old (its run of 30 s reaches back to 150 s, the edge of what is read).
    const late = series(90, 99).map(p => ({ ...p, t: p.t - 100_000 }));
    expect(now - late[89].t).toBe(120_000);
    expect(at(closed, { guardPressure: late }).next.state).toBe('OPEN');
  });

  test('the reasons name the signals that decided: pressure at exactly 80 %, refusals beside low pressure, both together', () => {
    expect(at(closed, { guardPressure: series(4, 80) }).reasons[0]).toBe('guard pressure 80 % for 30 s: DEGRADED');
    // Pressure at 50 % is not a reason: only the refusal is named.
    expect(at(closed, { guardRefusals: series(1, 1), guardPressure: series(90, 50) }).reasons[0]).toBe(
      '1 memory refusals by the container guard in 120 s: DEGRADED',
    );
    expect(at(closed, { guardRefusals: series(1, 2), guardPressure: series(90, 85) }).reasons[0]).toBe(
      '2 memory refusals by the container guard in 120 s, guard pressure 85 % for 30 s: DEGRADED',
    );
  });

  test('pressure held at exactly 70 % in the dwell holds recovery back (quiet is below 70 %)', () => {
    const degraded: BreakerState = { state: 'DEGRADED', since: now - 10 * MIN, share: 0.5, entryShare: 0.5, step: 0 };
    expect(at(degraded, { guardPressure: series(20, 70, 50) }).next.state).toBe('DEGRADED');
  });

  test('without memory data a refusal holds DEGRADED, and the log says memory has no data and why it holds', () => {
    const degraded: BreakerState = { state: 'DEGRADED', since: now - 10 * MIN, share: 0.5, entryShare: 0.5, step: 0 };
    const d = at(degraded, { guardRefusals: series(1, 1) }, []);
    expect(d.next.state).toBe('DEGRADED');
    expect(d.reasons[0]).toBe('memory no data (1 memory refusals by the container guard in 120 s): not below 70 % for 300 s: holding DEGRADED');
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
