/**
 * The policy at its edges: each test pins one boundary or guard docs/breaker.md states (a threshold is "at
 * or above", data exactly as old as the staleness limit is fresh, the probation, what counts as a
 * change worth writing, the fallback's capacity cap, a stored state that is not ours). Written from the
 * bugs a mutation run (npm run mutation) showed that no other test noticed.
 */
import {
  BreakerState,
  coolFor,
  DEFAULT_CONFIG,
  decide,
  EndpointView,
  guardQuiet,
  MemoryPoint,
  tryParseState,
  whyNotCool,
} from '../lib/breaker/policy';

const V = { primary: 'Primary', fallback: 'Fallback' };
const MIN = 60_000;
const NOW = 60 * MIN;
const inService = (p: number, f: number, instances?: Record<string, number>): EndpointView => ({
  status: 'InService',
  weights: { Primary: p, Fallback: f },
  ...(instances ? { instances } : {}),
});
const closed: BreakerState = { state: 'CLOSED', since: 0, share: 0, entryShare: 0, step: 0 };
const degraded: BreakerState = { state: 'DEGRADED', since: 0, share: 0.5, entryShare: 0.5, step: 0 };
const open: BreakerState = { state: 'OPEN', since: NOW - 10 * MIN, share: 1, entryShare: 1, step: 0 };
/** One-minute points ending 90 s before NOW (CloudWatch's delay), oldest first. */
const minutes = (values: number[], end = NOW - 90_000): MemoryPoint[] => values.map((v, i) => ({ t: end - (values.length - 1 - i) * MIN, v }));
const at = (v: number): MemoryPoint[] => minutes([v]);
const cool = minutes([40, 40, 40, 40, 40, 40]);

describe('coolFor: the hysteresis window', () => {
  const tenSeconds = (n: number, v = 40) => Array.from({ length: n }, (_, i) => ({ t: i * 10_000, v }));

  test('one point is never enough; two one-minute buckets cover a one-minute dwell', () => {
    expect(coolFor([{ t: 0, v: 10 }], 70, 60)).toBe(false);
    expect(coolFor([{ t: 0, v: 10 }], 70, 0)).toBe(false);
    expect(
      coolFor(
        [
          { t: 0, v: 10 },
          { t: MIN, v: 10 },
        ],
        70,
        60,
      ),
    ).toBe(true);
  });

  test('a hot point just before the dwell does not count; one inside it does', () => {
    const pts = tenSeconds(40);
    // The dwell of 300 s ends one bucket after the newest point: it starts at the 11th point (index 10).
    pts[9] = { ...pts[9], v: 90 };
    expect(coolFor(pts, 70, 300)).toBe(true);
    pts[10] = { ...pts[10], v: 90 };
    expect(coolFor(pts, 70, 300)).toBe(false);
  });

  test('a point missing right before the newest is a hole, whatever the last gap is', () => {
    const pts = tenSeconds(40).filter((_, i) => i !== 38);
    expect(coolFor(pts, 70, 300)).toBe(false);
  });

  test('a repeated timestamp does not shrink the spacing to zero', () => {
    const pts = tenSeconds(40);
    pts.splice(20, 0, { ...pts[20] });
    expect(coolFor(pts, 70, 300)).toBe(true);
  });

  test('memory exactly at the recovery level is not below it', () => {
    expect(coolFor(tenSeconds(40, 70), 70, 300)).toBe(false);
    expect(coolFor(tenSeconds(40, 69.9), 70, 300)).toBe(true);
  });

  // whyNotCool's words are the decision log's: each case, with its figures.
  const T = 1_000_000;
  const perMinute = (values: number[]) => values.map((v, i) => ({ t: T + i * MIN, v }));

  test('whyNotCool: no point, one point', () => {
    expect(whyNotCool([], 70, 300)).toBe('no fresh memory data: 300 s below 70 % cannot be shown');
    expect(whyNotCool([{ t: T, v: 10 }], 70, 300)).toBe('one memory point: 300 s below 70 % cannot be shown');
  });

  test('whyNotCool: data that does not reach back over the dwell says how far it does (3 one-minute buckets: 180 s)', () => {
    expect(whyNotCool(perMinute([40, 40, 40]), 70, 300)).toBe('memory data reaches back 180 s, not the 300 s below 70 % recovery needs');
  });

  test('whyNotCool: the highest point in the dwell, and how long before the newest the last hot one was', () => {
    // Six one-minute buckets; the dwell covers the last five: 72, 75, 71, 50, 50.
    expect(whyNotCool(perMinute([50, 72, 75, 71, 50, 50]), 70, 300)).toBe(
      'memory 75 % ≥ 70 % within the last 300 s (the newest such point 120 s before the newest point)',
    );
    expect(coolFor(perMinute([50, 72, 75, 71, 50, 50]), 70, 300)).toBe(false);
  });

  test('guardQuiet: silence is quiet; pressure held at 75 % is not', () => {
    const now = 30 * MIN;
    expect(guardQuiet({ memory: [] }, DEFAULT_CONFIG, now)).toBe(true);
    const pressure = Array.from({ length: 90 }, (_, i) => ({ t: now - 20_000 - (89 - i) * 10_000, v: 75 }));
    expect(guardQuiet({ memory: [], guardPressure: pressure }, DEFAULT_CONFIG, now)).toBe(false);
  });
});

describe('thresholds are "at or above", and data exactly at the staleness limit is fresh', () => {
  test('memory exactly at 95 % opens; exactly at 80 % degrades', () => {
    expect(decide(closed, { memory: at(95) }, inService(1, 0), V, DEFAULT_CONFIG, NOW).next.state).toBe('OPEN');
    expect(decide(closed, { memory: at(80) }, inService(1, 0), V, DEFAULT_CONFIG, NOW).next.state).toBe('DEGRADED');
  });

  test('a 5XX rate exactly at 5 % with exactly the minimum invocations opens; one invocation fewer is not judged', () => {
    const with20 = decide(closed, { memory: at(40), errors: 1, invocations: 20 }, inService(1, 0), V, DEFAULT_CONFIG, NOW);
    expect(with20.next.state).toBe('OPEN');
    const with19 = decide(closed, { memory: at(40), errors: 19, invocations: 19 }, inService(1, 0), V, DEFAULT_CONFIG, NOW);
    expect(with19.next.state).toBe('CLOSED');
  });

  test('errors without an invocation count are not judged', () => {
    expect(decide(closed, { memory: at(40), errors: 50 }, inService(1, 0), V, DEFAULT_CONFIG, NOW).next.state).toBe('CLOSED');
  });

  test('the newest point exactly 5 minutes old still counts; a millisecond older, it does not', () => {
    const five = [{ t: NOW - 300_000, v: 90 }];
    expect(decide(closed, { memory: five }, inService(1, 0), V, DEFAULT_CONFIG, NOW).next.state).toBe('DEGRADED');
    expect(decide(closed, { memory: five }, inService(1, 0), V, DEFAULT_CONFIG, NOW + 1).next.state).toBe('CLOSED');
  });

  test('a point without a value (NaN) is skipped: the breaker judges the newest real one', () => {
    const memory = [...at(90), { t: NOW - 30_000, v: NaN }];
    expect(decide(closed, { memory }, inService(1, 0), V, DEFAULT_CONFIG, NOW).next.state).toBe('DEGRADED');
  });

  test('a stale 1-minute series cannot stand in for holes in the fine one', () => {
    const fine = [{ t: NOW - 20_000, v: 40 }]; // one fresh point: not enough for the dwell
    const oldMinutes = minutes([40, 40, 40, 40, 40, 40], NOW - 301_000);
    expect(decide(degraded, { memory: fine, minuteMemory: oldMinutes }, inService(0.5, 0.5), V, DEFAULT_CONFIG, NOW).next.state).toBe('DEGRADED');
    const freshMinutes = minutes([40, 40, 40, 40, 40, 40]);
    expect(decide(degraded, { memory: fine, minuteMemory: freshMinutes }, inService(0.5, 0.5), V, DEFAULT_CONFIG, NOW).next.state).toBe('RECOVERING');
    // Its newest point exactly 5 minutes old is still fresh.
    const fiveMinutes = minutes([40, 40, 40, 40, 40, 40], NOW - 300_000);
    expect(decide(degraded, { memory: fine, minuteMemory: fiveMinutes }, inService(0.5, 0.5), V, DEFAULT_CONFIG, NOW).next.state).toBe('RECOVERING');
  });
});

describe('what is stored: only a real change is written', () => {
  test('OPEN and still critical: nothing changes, not even the time it opened (the dwell counts from entry)', () => {
    const d = decide(open, { memory: at(97) }, inService(0, 1), V, DEFAULT_CONFIG, NOW);
    expect(d.next).toEqual(open);
    expect(d.changed).toBe(false);
    expect(d.reasons[0]).toBe('holding OPEN: memory 97 % ≥ critical 95 %');
  });

  test('OPEN, errors still high at normal memory: held', () => {
    const d = decide(open, { memory: cool, errors: 100, invocations: 1000 }, inService(0, 1), V, DEFAULT_CONFIG, NOW);
    expect(d.next.state).toBe('OPEN');
    expect(d.changed).toBe(false);
    expect(d.reasons[0]).toBe('holding OPEN: error rate 10 % (dead or hung workers, 5XX) ≥ 5 %');
  });

  test("OPEN and the guard's pressure still critical at cool memory: held, and the log names the pressure", () => {
    // 96 % pressure every 10 s for the last 15 minutes, memory 40 %.
    const pressure: MemoryPoint[] = Array.from({ length: 90 }, (_, i) => ({ t: NOW - 20_000 - (89 - i) * 10_000, v: 96 }));
    const d = decide(open, { memory: cool, guardPressure: pressure }, inService(0, 1), V, DEFAULT_CONFIG, NOW);
    expect(d.next).toEqual(open);
    expect(d.reasons[0]).toBe('holding OPEN: guard pressure 96 % for 30 s ≥ critical 95 %');
  });

  test('the first recovery step names the level and the dwell it waited for', () => {
    const d = decide(open, { memory: cool }, inService(0, 1), V, DEFAULT_CONFIG, NOW);
    expect(d.next.state).toBe('RECOVERING');
    expect(d.reasons[0]).toBe('memory below 70 % for 300 s: recovery step 1/3');
  });

  test('DEGRADED that escalates to OPEN keeps its failed-probe count; CLOSED past probation forgets it', () => {
    const d = decide({ ...degraded, failedProbes: 2 }, { memory: at(96) }, inService(0.5, 0.5), V, DEFAULT_CONFIG, NOW);
    expect(d.next).toMatchObject({ state: 'OPEN', failedProbes: 2 });
    // Not a probe (DEGRADED is not recovering): the reason names no failed probe.
    expect(d.reasons[0]).toBe('memory 96 % ≥ critical 95 %: OPEN');
    const longAgo = { ...closed, failedProbes: 2, recoveredAt: NOW - 11 * MIN };
    const hot = decide(longAgo, { memory: at(85) }, inService(1, 0), V, DEFAULT_CONFIG, NOW);
    expect(hot.next).toMatchObject({ state: 'DEGRADED', failedProbes: 0 });
    expect(hot.reasons[0]).not.toMatch(/failed probe/);
  });

  test('hot within the probation after CLOSED is a failed probe; exactly at its end it is not', () => {
    const recent = { ...closed, failedProbes: 1, recoveredAt: NOW - 9 * MIN };
    expect(decide(recent, { memory: at(85) }, inService(1, 0), V, DEFAULT_CONFIG, NOW).next).toMatchObject({ state: 'DEGRADED', failedProbes: 2 });
    const ended = { ...closed, failedProbes: 1, recoveredAt: NOW - 10 * MIN };
    expect(decide(ended, { memory: at(85) }, inService(1, 0), V, DEFAULT_CONFIG, NOW).next.failedProbes).toBe(0);
  });

  test('CLOSED and cool past the probation: the probe record is dropped and written once, the time CLOSED kept', () => {
    const past = { ...closed, since: NOW - 20 * MIN, failedProbes: 1, recoveredAt: NOW - 10 * MIN };
    const d = decide(past, { memory: cool }, inService(1, 0), V, DEFAULT_CONFIG, NOW);
    expect(d.next).toEqual({ state: 'CLOSED', since: NOW - 20 * MIN, share: 0, entryShare: 0, step: 0 });
    expect(d.changed).toBe(true);
    const within = { ...past, recoveredAt: NOW - 10 * MIN + 1 };
    const kept = decide(within, { memory: cool }, inService(1, 0), V, DEFAULT_CONFIG, NOW);
    expect(kept.next).toEqual(within);
    expect(kept.changed).toBe(false);
  });

  test('a recovery step is a change even when only the step moves (same share, no fallback)', () => {
    const recovering: BreakerState = { state: 'RECOVERING', since: NOW - 3 * MIN, share: 0, entryShare: 0, step: 1 };
    const d = decide(
      recovering,
      { memory: cool },
      { status: 'InService', weights: { Primary: 1 } },
      { primary: 'Primary' },
      { ...DEFAULT_CONFIG, hasFallback: false },
      NOW,
    );
    expect(d.next).toMatchObject({ state: 'RECOVERING', step: 2 });
    expect(d.changed).toBe(true);
  });

  test('a recovery step waits exactly the step time: 119 s hold, 120 s step', () => {
    const recovering = (ago: number): BreakerState => ({ state: 'RECOVERING', since: NOW - ago, share: 1 / 3, entryShare: 0.5, step: 1 });
    expect(decide(recovering(119_000), { memory: cool }, inService(2 / 3, 1 / 3), V, DEFAULT_CONFIG, NOW).next.step).toBe(1);
    expect(decide(recovering(120_000), { memory: cool }, inService(2 / 3, 1 / 3), V, DEFAULT_CONFIG, NOW).next.step).toBe(2);
  });

  test('the last step says CLOSED; the others name their step', () => {
    const at2: BreakerState = { state: 'RECOVERING', since: NOW - 3 * MIN, share: 1 / 6, entryShare: 0.5, step: 2 };
    expect(decide(at2, { memory: cool }, inService(5 / 6, 1 / 6), V, DEFAULT_CONFIG, NOW).reasons[0]).toBe('last recovery step: CLOSED');
    const at1 = { ...at2, step: 1, share: 1 / 3 };
    expect(decide(at1, { memory: cool }, inService(2 / 3, 1 / 3), V, DEFAULT_CONFIG, NOW).reasons[0]).toBe('recovery step 2/3');
  });

  test('weights already where they should be are not written again, within rounding', () => {
    expect(decide(degraded, { memory: at(75) }, inService(0.5, 0.5), V, DEFAULT_CONFIG, NOW).setWeights).toBeUndefined();
    expect(decide(degraded, { memory: at(75) }, inService(0.50000001, 0.49999999), V, DEFAULT_CONFIG, NOW).setWeights).toBeUndefined();
    expect(decide(degraded, { memory: at(75) }, inService(0.6, 0.5), V, DEFAULT_CONFIG, NOW).setWeights).toEqual({ Primary: 0.5, Fallback: 0.5 });
  });

  test('weights with a variant missing from the endpoint are written', () => {
    expect(decide(degraded, { memory: at(75) }, { status: 'InService', weights: { Primary: 0.5 } }, V, DEFAULT_CONFIG, NOW).setWeights).toEqual({
      Primary: 0.5,
      Fallback: 0.5,
    });
  });
});

describe("the fallback's capacity caps the share", () => {
  const capacities = {
    ...V,
    primaryCapacity: { min: 2, max: 4, qpsPerInstance: 100 },
    fallbackCapacity: { min: 1, max: 4, qpsPerInstance: 50 },
  };

  test('1 fallback instance of 50 QPS beside 2 primary ones of 100: 25 % of the traffic, said in the reasons', () => {
    const d = decide(closed, { memory: at(85) }, inService(1, 0, { Primary: 2, Fallback: 1 }), capacities, DEFAULT_CONFIG, NOW);
    expect(d.effectiveShare).toBe(0.25);
    expect(d.setWeights).toEqual({ Primary: 0.75, Fallback: 0.25 });
    expect(d.reasons.join(' ')).toMatch(/fallback share held at 0.25 of 0.5/);
  });

  test('enough fallback instances: the whole share, and no "held" reason', () => {
    const d = decide(closed, { memory: at(85) }, inService(1, 0, { Primary: 2, Fallback: 2 }), capacities, DEFAULT_CONFIG, NOW);
    expect(d.effectiveShare).toBe(0.5);
    expect(d.reasons.join(' ')).not.toMatch(/held at/);
  });

  test('without the instance counts of both variants the target share is used', () => {
    expect(decide(closed, { memory: at(85) }, inService(1, 0, { Primary: 2 }), capacities, DEFAULT_CONFIG, NOW).effectiveShare).toBe(0.5);
    expect(decide(closed, { memory: at(85) }, inService(1, 0, { Fallback: 1 }), capacities, DEFAULT_CONFIG, NOW).effectiveShare).toBe(0.5);
    const noPrimaryCapacity = { ...capacities, primaryCapacity: undefined };
    expect(
      decide(closed, { memory: at(85) }, inService(1, 0, { Primary: 2, Fallback: 1 }), noPrimaryCapacity, DEFAULT_CONFIG, NOW).effectiveShare,
    ).toBe(0.5);
  });

  test('no primary instance in service: the fallback may take its full share', () => {
    expect(decide(closed, { memory: at(85) }, inService(1, 0, { Primary: 0, Fallback: 1 }), capacities, DEFAULT_CONFIG, NOW).effectiveShare).toBe(
      0.5,
    );
  });

  test("the fallback's minimum follows the primary's instances in service, at the fallback's QPS per instance", () => {
    // 3 primary instances × 100 QPS × 50 % = 150 QPS on the fallback: 3 instances of 50.
    const d = decide(closed, { memory: at(85) }, inService(1, 0, { Primary: 3, Fallback: 1 }), capacities, DEFAULT_CONFIG, NOW);
    expect(d.capacity).toEqual({ suspendPrimaryScaleIn: true, fallbackMinCapacity: 3 });
    // Unknown instances: the primary's minimum (2 × 100 × 50 % = 100 QPS: 2 of 50).
    expect(decide(closed, { memory: at(85) }, undefined, capacities, DEFAULT_CONFIG, NOW).capacity.fallbackMinCapacity).toBe(2);
    // CLOSED: back to its configured minimum.
    expect(decide(closed, { memory: at(40) }, inService(1, 0), capacities, DEFAULT_CONFIG, NOW).capacity).toEqual({
      suspendPrimaryScaleIn: false,
      fallbackMinCapacity: 1,
    });
  });

  describe("a shift is sized against the endpoint's measured traffic, projected two minutes by its growth", () => {
    // 4 primary instances × 150 QPS (600 requests/s scaled for) and 3 fallback ones × 100 QPS, DEGRADED (half wanted).
    const scaled = {
      ...V,
      primaryCapacity: { min: 2, max: 8, qpsPerInstance: 150 },
      fallbackCapacity: { min: 1, max: 8, qpsPerInstance: 100 },
    };
    // Memory at 85 % a minute before the evaluation (it degrades).
    const shift = (readings: object, now = NOW) =>
      decide(closed, { memory: [{ t: now - MIN, v: 85 }], ...readings }, inService(1, 0, { Primary: 4, Fallback: 3 }), scaled, DEFAULT_CONFIG, now);
    // The endpoint's requests a minute (every variant), the newest minute 90 s before NOW.
    const endpoint = (perSecond: number[], end?: number) => ({
      endpointInvocationsPerMinute: minutes(
        perSecond.map(r => r * 60),
        end,
      ),
    });

    test('800 then 900 requests/s: 900 + 2 × 100 = 1,100 sized for, so 300 of 1,100 (27 %) → 25 %, and 6 fallback instances for half of it', () => {
      const d = shift(endpoint([700, 800, 900]));
      expect(d.effectiveShare).toBe(0.25);
      expect(d.setWeights).toEqual({ Primary: 0.75, Fallback: 0.25 });
      expect(d.capacity).toEqual({ suspendPrimaryScaleIn: true, fallbackMinCapacity: 6 });
    });

    test('falling traffic is not projected below its newest minute: 1,000 then 900 requests/s is 900 (33 % → 30 %, 5 instances)', () => {
      const d = shift(endpoint([1000, 900]));
      expect(d.effectiveShare).toBe(0.3);
      expect(d.capacity.fallbackMinCapacity).toBe(5);
    });

    test('no growth across a missing minute: 800 and 900 requests/s two minutes apart is 900', () => {
      const end = NOW - 90_000;
      const gap = {
        endpointInvocationsPerMinute: [
          { t: end - 2 * MIN, v: 800 * 60 },
          { t: end, v: 900 * 60 },
        ],
      };
      expect(shift(gap).effectiveShare).toBe(0.3);
      expect(shift(gap).capacity.fallbackMinCapacity).toBe(5);
    });

    test('below what the primary is scaled for, the fleet is the floor: 300 requests/s is sized as 600 (300 of 600: the whole half, 3 instances)', () => {
      const d = shift(endpoint([300, 300]));
      expect(d.effectiveShare).toBe(0.5);
      expect(d.capacity.fallbackMinCapacity).toBe(3);
    });

    test("the primary's minutes stand in for the endpoint's; a newest minute exactly 300 s old counts, a millisecond older it does not", () => {
      expect(shift({ invocationsPerMinute: minutes([900 * 60]) }).effectiveShare).toBe(0.3);
      // Newest minute 300 s old: still fresh.
      expect(shift(endpoint([900]), NOW - 90_000 + 300_000).effectiveShare).toBe(0.3);
      // 300.001 s old: sized for the primary's fleet (600 requests/s).
      expect(shift(endpoint([900]), NOW - 90_000 + 300_001).effectiveShare).toBe(0.5);
    });

    test('minutes without a number or below zero are not traffic', () => {
      const end = NOW - 90_000;
      const bad = {
        endpointInvocationsPerMinute: [
          { t: end - MIN, v: 900 * 60 },
          { t: end, v: NaN },
        ],
      };
      // The NaN minute is dropped: 900 requests/s, one minute, no growth.
      expect(shift(bad).effectiveShare).toBe(0.3);
      const negative = {
        endpointInvocationsPerMinute: [
          { t: end - MIN, v: 900 * 60 },
          { t: end, v: -1 },
        ],
      };
      expect(shift(negative).effectiveShare).toBe(0.3);
      // A minute with no requests is traffic (zero): the newest, so nothing above the fleet's 600.
      const zero = {
        endpointInvocationsPerMinute: [
          { t: end - MIN, v: 900 * 60 },
          { t: end, v: 0 },
        ],
      };
      expect(shift(zero).effectiveShare).toBe(0.5);
    });
  });

  test('no instance of either variant in service and no traffic known: the target share, not a division by zero', () => {
    const d = decide(closed, { memory: at(85) }, inService(1, 0, { Primary: 0, Fallback: 0 }), capacities, DEFAULT_CONFIG, NOW);
    expect(d.effectiveShare).toBe(0.5);
    expect(d.setWeights).toEqual({ Primary: 0.5, Fallback: 0.5 });
  });

  test("the fallback's minimum without the primary's instance count: from the primary's minimum, or one instance without a primary capacity", () => {
    // The endpoint read without instance counts: the primary's minimum (2 × 100 QPS × 50 % = 100 QPS: 2 of 50).
    expect(decide(closed, { memory: at(85) }, inService(1, 0), capacities, DEFAULT_CONFIG, NOW).capacity).toEqual({
      suspendPrimaryScaleIn: true,
      fallbackMinCapacity: 2,
    });
    // No primary capacity and no endpoint: one primary instance at the fallback's 50 QPS, half of it: 1 instance.
    const fallbackOnly = { ...V, fallbackCapacity: { min: 1, max: 4, qpsPerInstance: 50 } };
    expect(decide(closed, { memory: at(85) }, undefined, fallbackOnly, DEFAULT_CONFIG, NOW).capacity).toEqual({
      suspendPrimaryScaleIn: true,
      fallbackMinCapacity: 1,
    });
  });

  test('no fallback: only the scale-in hold', () => {
    const d = decide(
      closed,
      { memory: at(85) },
      { status: 'InService', weights: { Primary: 1 } },
      { primary: 'Primary' },
      { ...DEFAULT_CONFIG, hasFallback: false },
      NOW,
    );
    expect(d.capacity).toEqual({ suspendPrimaryScaleIn: true });
  });
});

describe('a stored state that is not ours parses as nothing', () => {
  test.each([
    ['empty', ''],
    ['null', 'null'],
    ['a number', '42'],
    ['an unknown state', '{"state":"HALF_OPEN","since":1,"share":0}'],
    ['no since', '{"state":"CLOSED","share":0}'],
    ['a share above 1', '{"state":"DEGRADED","since":1,"share":1.5}'],
    ['a negative share', '{"state":"DEGRADED","since":1,"share":-0.1}'],
    ['not JSON', '{state'],
  ])('%s', (_, raw) => {
    expect(tryParseState(raw)).toBeUndefined();
  });

  test('a valid state keeps what it has and defaults what it lacks', () => {
    expect(tryParseState('{"state":"DEGRADED","since":5,"share":0.5}')).toEqual({
      state: 'DEGRADED',
      since: 5,
      share: 0.5,
      entryShare: 0.5,
      step: 0,
    });
    expect(tryParseState('{"state":"CLOSED","since":5,"share":0,"failedProbes":0}')).toEqual({
      state: 'CLOSED',
      since: 5,
      share: 0,
      entryShare: 0,
      step: 0,
    });
    expect(tryParseState('{"state":"OPEN","since":5,"share":1,"drill":{"to":"HALF","until":9}}')).not.toHaveProperty('drill');
  });
});
