import fc from 'fast-check';
import {
  BreakerState,
  DEFAULT_CONFIG,
  decide,
  EndpointView,
  initialState,
  MemoryPoint,
  parseState,
  probeWaitSeconds,
  serializeState,
} from '../lib/breaker/policy';

const V = { primary: 'Primary', fallback: 'Fallback' };
const MIN = 60_000;
const inService = (p: number, f: number): EndpointView => ({ status: 'InService', weights: { Primary: p, Fallback: f } });

/** Runs the policy minute by minute over a memory trace, applying weights as SageMaker would. */
function run(trace: (number | undefined)[], opts: { errors?: (i: number) => number; config?: Partial<typeof DEFAULT_CONFIG> } = {}) {
  const config = { ...DEFAULT_CONFIG, ...opts.config };
  let state: BreakerState = initialState(0);
  let weights = { Primary: 1, Fallback: 0 };
  const history: { t: number; state: string; share: number; level: number; changed: boolean }[] = [];
  const points: MemoryPoint[] = [];
  for (let i = 0; i < trace.length; i++) {
    const now = (i + 1) * MIN;
    if (trace[i] !== undefined) points.push({ t: now - 30_000, v: trace[i]! });
    const errs = opts.errors?.(i);
    const d = decide(
      state,
      { memory: points.slice(-15), errors: errs, invocations: errs === undefined ? undefined : 1000 },
      inService(weights.Primary, weights.Fallback),
      V,
      config,
      now,
    );
    if (d.setWeights) weights = d.setWeights as typeof weights;
    state = d.next;
    history.push({ t: now, state: state.state, share: state.share, level: d.level, changed: d.changed });
  }
  return { history, weights };
}

describe('breaker policy: incident traces', () => {
  test('incident A ramp (GPU memory 25 % → 98 % over 20 min) degrades at 80 % and opens at 95 %', () => {
    const ramp = Array.from({ length: 21 }, (_, i) => 25 + ((98 - 25) * i) / 20);
    const { history } = run(ramp);
    const firstDegraded = history.findIndex(h => h.state === 'DEGRADED');
    const firstOpen = history.findIndex(h => h.state === 'OPEN');
    expect(ramp[firstDegraded]).toBeGreaterThanOrEqual(80);
    expect(ramp[firstDegraded - 1]).toBeLessThan(80);
    expect(ramp[firstOpen]).toBeGreaterThanOrEqual(95);
    expect(history[firstDegraded].share).toBe(0.5);
    expect(history[firstOpen].share).toBe(1);
    expect(history[firstOpen].level).toBe(2);
  });

  test('incident B error burst (8 % 5XX over 10 min at normal memory) opens the breaker', () => {
    const { history } = run(Array(10).fill(50), { errors: i => (i >= 5 ? 80 : 0) });
    expect(history[4].state).toBe('CLOSED');
    expect(history[5].state).toBe('OPEN');
  });

  test('errors below the minimum invocation count are not judged', () => {
    const d = decide(initialState(0), { memory: [{ t: 0, v: 50 }], errors: 5, invocations: 10 }, inService(1, 0), V, DEFAULT_CONFIG, 1000);
    expect(d.next.state).toBe('CLOSED');
  });

  test('recovery: after the dwell, stepped back in 3 steps to CLOSED, weights follow', () => {
    const trace = [...Array(3).fill(85), ...Array(30).fill(50)];
    const { history, weights } = run(trace);
    const states = history.map(h => h.state);
    expect(states[0]).toBe('DEGRADED');
    const rec = states.indexOf('RECOVERING');
    expect(history[rec].t - history[0].t).toBeGreaterThanOrEqual(DEFAULT_CONFIG.minDwellSeconds * 1000);
    const shares = history.filter((h, i) => h.changed && h.share !== history[i - 1]?.share).map(h => +h.share.toFixed(3));
    expect(shares).toEqual([0.5, 0.333, 0.167, 0]);
    expect(states.at(-1)).toBe('CLOSED');
    expect(weights).toEqual({ Primary: 1, Fallback: 0 });
  });

  test('hot again during recovery goes back to DEGRADED immediately', () => {
    const trace = [85, ...Array(7).fill(50), 90];
    const { history } = run(trace);
    expect(history.at(-2)!.state).toBe('RECOVERING');
    expect(history.at(-1)!.state).toBe('DEGRADED');
  });

  test('missing data holds the state: never degrades or restores on silence', () => {
    const { history } = run([85, ...Array(20).fill(undefined)]);
    expect(history.every(h => h.state === 'DEGRADED')).toBe(true);
    const stale = decide({ ...initialState(0) }, { memory: [{ t: 0, v: 99 }] }, inService(1, 0), V, DEFAULT_CONFIG, 20 * MIN);
    expect(stale.next.state).toBe('CLOSED');
    expect(stale.reasons[0]).toMatch(/no fresh memory data/);
  });

  test('endpoint not InService: state moves, weights deferred, then applied when InService', () => {
    const updating: EndpointView = { status: 'Updating', weights: { Primary: 1, Fallback: 0 } };
    const d = decide(initialState(0), { memory: [{ t: 0, v: 85 }] }, updating, V, DEFAULT_CONFIG, 1000);
    expect(d.next.state).toBe('DEGRADED');
    expect(d.level).toBe(1);
    expect(d.setWeights).toBeUndefined();
    expect(d.reasons.join()).toMatch(/Updating, not InService/);
    const again = decide(d.next, { memory: [{ t: 60_000, v: 85 }] }, inService(1, 0), V, DEFAULT_CONFIG, 61_000);
    expect(again.setWeights).toEqual({ Primary: 0.5, Fallback: 0.5 });
    expect(again.changed).toBe(false);
  });

  test('idempotent: the same input twice changes nothing the second time', () => {
    const d1 = decide(initialState(0), { memory: [{ t: 0, v: 85 }] }, inService(1, 0), V, DEFAULT_CONFIG, 1000);
    const d2 = decide(d1.next, { memory: [{ t: 0, v: 85 }] }, inService(0.5, 0.5), V, DEFAULT_CONFIG, 1000);
    expect(d2.changed).toBe(false);
    expect(d2.setWeights).toBeUndefined();
  });

  test('without a fallback only the level changes', () => {
    const d = decide(
      initialState(0),
      { memory: [{ t: 0, v: 97 }] },
      inService(1, 0),
      { primary: 'Primary' },
      { ...DEFAULT_CONFIG, hasFallback: false },
      1000,
    );
    expect(d.level).toBe(2);
    expect(d.setWeights).toBeUndefined();
  });

  test('stored state round-trips; garbage parses as CLOSED', () => {
    const s: BreakerState = { state: 'RECOVERING', since: 5, share: 0.25, entryShare: 0.5, step: 1 };
    expect(parseState(serializeState(s, ['x']), 0)).toEqual(s);
    expect(JSON.parse(serializeState(s, [])).level).toBe(1);
    expect(parseState('{nope', 7).state).toBe('CLOSED');
    expect(parseState(JSON.stringify({ state: 'OPEN', since: 1, share: 3 }), 7).state).toBe('CLOSED');
  });
});

describe('breaker policy: the promises of docs/breaker.md, over traces shaped like the domain', () => {
  const cfg = DEFAULT_CONFIG;
  const rank = { CLOSED: 0, RECOVERING: 1, DEGRADED: 2, OPEN: 3 } as const;

  /** A memory trace: segments of a bounded random walk, ramps, spikes and plateaus (0–100 %). */
  const segment = fc.oneof(
    fc.record({ kind: fc.constant('walk' as const), minutes: fc.integer({ min: 1, max: 20 }), step: fc.double({ min: 0.2, max: 6, noNaN: true }) }),
    fc.record({ kind: fc.constant('ramp' as const), minutes: fc.integer({ min: 1, max: 15 }), to: fc.integer({ min: 0, max: 100 }) }),
    fc.record({ kind: fc.constant('spike' as const), height: fc.integer({ min: 70, max: 100 }), points: fc.integer({ min: 1, max: 3 }) }),
    fc.record({ kind: fc.constant('plateau' as const), minutes: fc.integer({ min: 1, max: 20 }), level: fc.integer({ min: 55, max: 97 }) }),
  );
  /** How CloudWatch delivers it: publishing period, what it stores (item 23: maybe only 1-minute data), delay, lost points. */
  const delivery = fc.record({
    publishS: fc.constantFrom(10, 60),
    storedS: fc.constantFrom(10, 60),
    delayS: fc.constantFrom(20, 90, 150),
    dropEvery: fc.constantFrom(0, 7, 13),
  });
  const fleet = fc.record({
    primary: fc.integer({ min: 1, max: 6 }),
    fallback: fc.integer({ min: 0, max: 4 }),
    primaryQps: fc.constantFrom(50, 150),
    fallbackQps: fc.constantFrom(50, 100, 150),
    updating: fc.array(fc.record({ at: fc.integer({ min: 0, max: 150 }), minutes: fc.integer({ min: 1, max: 8 }) }), { maxLength: 3 }),
  });
  const scenario = fc.record({
    start: fc.integer({ min: 10, max: 90 }),
    segments: fc.array(segment, { minLength: 1, maxLength: 10 }),
    delivery,
    fleet,
    seed: fc.integer(),
  });

  type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;
  type Step = {
    now: number;
    prev: BreakerState;
    next: BreakerState;
    visible: MemoryPoint[];
    minuteMemory: MemoryPoint[];
    d: ReturnType<typeof decide>;
    capShare: number;
  };

  /** Values every `spacing` seconds for the segments, then `tailMinutes` of cool memory (40 %). */
  function values(sc: Scenario, spacing: number, tailMinutes: number): number[] {
    let x = sc.seed;
    const rnd = () => ((x = (Math.imul(x ^ (x >>> 15), 2246822519) + 0x9e3779b9) | 0) >>> 0) / 2 ** 32;
    const per = 60 / spacing;
    const out: number[] = [];
    let v = sc.start;
    const clamp = (y: number) => Math.max(0, Math.min(100, y));
    for (const g of sc.segments) {
      if (g.kind === 'walk') for (let i = 0; i < g.minutes * per; i++) out.push((v = clamp(v + (2 * rnd() - 1) * g.step)));
      if (g.kind === 'ramp') for (let i = 1; i <= g.minutes * per; i++) out.push(clamp(v + ((g.to - v) * i) / (g.minutes * per)));
      if (g.kind === 'ramp') v = g.to;
      if (g.kind === 'spike') for (let i = 0; i < g.points; i++) out.push(g.height);
      if (g.kind === 'plateau') for (let i = 0; i < g.minutes * per; i++) out.push((v = g.level));
    }
    for (let i = 0; i < tailMinutes * per; i++) out.push(40);
    return out;
  }

  /**
   * Runs the real policy as the function runs it: on the 1-minute schedule (30 s past the minute) and 10 s
   * after a hot point becomes visible (the alarm), on the data CloudWatch has delivered by then; weights
   * apply when the endpoint is InService.
   */
  function simulate(sc: Scenario, tailMinutes = 0): Step[] {
    const { publishS, storedS, delayS, dropEvery } = sc.delivery;
    const spacing = Math.max(publishS, storedS);
    const data = values(sc, spacing, tailMinutes).map((v, i) => ({ t: (i + 1) * spacing * 1000, v }));
    const points = dropEvery ? data.filter((_, i) => i % dropEvery !== dropEvery - 1) : data;
    const f = sc.fleet;
    const variants = {
      ...V,
      primaryCapacity: { min: f.primary, max: 8, qpsPerInstance: f.primaryQps },
      fallbackCapacity: { min: Math.max(1, f.fallback), max: 8, qpsPerInstance: f.fallbackQps },
    };
    const end = data.at(-1)!.t + (delayS + 120) * 1000;
    const times = new Set<number>();
    for (let t = 30_000; t <= end; t += MIN) times.add(t);
    for (const p of points) if (p.v >= cfg.degradeAtPercent) times.add(p.t + (delayS + 10) * 1000);
    let state = initialState(0);
    let weights = { Primary: 1, Fallback: 0 };
    const steps: Step[] = [];
    for (const now of [...times].sort((x, y) => x - y)) {
      const visible = points.filter(p => p.t + delayS * 1000 <= now && p.t > now - 15 * MIN);
      const minute = now / MIN;
      const updating = f.updating.some(u => minute >= u.at && minute < u.at + u.minutes);
      const view: EndpointView = {
        status: updating ? 'Updating' : 'InService',
        weights,
        instances: { Primary: f.primary, Fallback: f.fallback },
      };
      // The 1-minute maxima of what was delivered (CloudWatch's Maximum per minute; a minute with no point is missing).
      const byMinute = new Map<number, number>();
      for (const p of visible) byMinute.set(Math.floor(p.t / MIN) * MIN, Math.max(byMinute.get(Math.floor(p.t / MIN) * MIN) ?? 0, p.v));
      const minuteMemory = [...byMinute].map(([t, v]) => ({ t, v }));
      const d = decide(state, { memory: visible, minuteMemory, maxSpacingSeconds: Math.max(60, publishS) }, view, variants, cfg, now);
      const capShare = Math.floor(((f.fallback * f.fallbackQps) / (f.primary * f.primaryQps) + 1e-6) * 20) / 20;
      steps.push({ now, prev: state, next: d.next, visible, minuteMemory, d, capShare });
      if (d.setWeights) weights = d.setWeights as typeof weights;
      state = d.next;
    }
    return steps;
  }

  const isDown = (s: Step) =>
    rank[s.next.state] < rank[s.prev.state] || (s.next.state === 'RECOVERING' && s.prev.state === 'RECOVERING' && s.next.step > s.prev.step);

  test('the generators reach the band that matters: 70–95 % memory, every state, and 1-minute data behind a 10-s period', () => {
    const seen = { band: 0, states: new Set<string>(), coarse: 0 };
    fc.assert(
      fc.property(scenario, sc => {
        const steps = simulate(sc);
        if (steps.some(s => s.visible.some(p => p.v >= 70 && p.v < 95))) seen.band++;
        steps.forEach(s => seen.states.add(s.next.state));
        if (sc.delivery.publishS === 10 && sc.delivery.storedS === 60) seen.coarse++;
      }),
      { numRuns: 150, seed: 7 },
    );
    expect(seen.band).toBeGreaterThan(75);
    expect([...seen.states].sort()).toEqual(['CLOSED', 'DEGRADED', 'OPEN', 'RECOVERING']);
    expect(seen.coarse).toBeGreaterThan(10);
  });

  test('never flaps faster than the dwell: a recovery step ≥ 2 min after the previous change, leaving DEGRADED/OPEN ≥ 5 min after entering', () => {
    fc.assert(
      fc.property(scenario, sc => {
        let lastChange = 0;
        for (const s of simulate(sc)) {
          if (s.next.since !== s.prev.since && isDown(s)) {
            const wait = s.prev.state === 'RECOVERING' ? cfg.recoveryStepSeconds : cfg.minDwellSeconds;
            expect(s.now - s.prev.since).toBeGreaterThanOrEqual(wait * 1000);
            expect(s.now - lastChange).toBeGreaterThanOrEqual(cfg.recoveryStepSeconds * 1000);
          }
          if (s.next.state !== s.prev.state || s.next.step !== s.prev.step) lastChange = s.now;
        }
      }),
      { numRuns: 200 },
    );
  });

  test('never recovers while memory was at or above 70 % within the dwell (on the data it had), nor across a hole in the data', () => {
    fc.assert(
      fc.property(scenario, sc => {
        const spacing = Math.max(sc.delivery.publishS, sc.delivery.storedS) * 1000;
        for (const s of simulate(sc).filter(isDown)) {
          // The last five minutes were below 70 % and covered without a hole: by the fine buckets, or by five
          // 1-minute maxima (each the maximum of every point of its minute).
          const newest = s.visible.at(-1)!;
          const recent = s.visible.filter(p => p.t + spacing > newest.t + spacing - cfg.recoveryDwellSeconds * 1000);
          const minutes = s.minuteMemory.filter(p => p.t + MIN > s.minuteMemory.at(-1)!.t + MIN - cfg.recoveryDwellSeconds * 1000);
          const fineCovered = recent.length >= (cfg.recoveryDwellSeconds * 1000) / spacing && recent.every(p => p.v < cfg.recoverBelowPercent);
          const minuteCovered = minutes.length >= cfg.recoveryDwellSeconds / 60 && minutes.every(p => p.v < cfg.recoverBelowPercent);
          expect(fineCovered || minuteCovered).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  test('never acts on stale data: with no point newer than 5 minutes the state does not move', () => {
    fc.assert(
      fc.property(scenario, sc => {
        for (const s of simulate(sc)) {
          const newest = s.visible.at(-1);
          if (!newest || s.now - newest.t > cfg.staleAfterSeconds * 1000) {
            expect(s.d.changed).toBe(false);
            expect(s.next).toBe(s.prev);
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  test("weights always sum to 1 and never give the fallback more than its instances in service carry, nor more than the state's share", () => {
    fc.assert(
      fc.property(scenario, sc => {
        for (const s of simulate(sc)) {
          if (!s.d.setWeights) continue;
          const { Primary, Fallback } = s.d.setWeights;
          expect(Math.abs(Primary + Fallback - 1)).toBeLessThan(1e-3);
          expect(Fallback).toBeGreaterThanOrEqual(0);
          expect(Fallback).toBeLessThanOrEqual(Math.min(s.capShare, s.next.share) + 1e-4);
        }
      }),
      { numRuns: 200 },
    );
  });

  test('it always ends: after 90 minutes of cool memory (40 %) on an InService endpoint the breaker is CLOSED, whatever came before', () => {
    fc.assert(
      fc.property(scenario, sc => {
        const steps = simulate({ ...sc, fleet: { ...sc.fleet, updating: [] } }, 90);
        expect(steps.at(-1)!.next.state).toBe('CLOSED');
      }),
      { numRuns: 150 },
    );
  });
});

test('recovers with CloudWatch-delayed data (newest point 2.5 minutes old)', () => {
  // Degraded 20 minutes ago; the last 5 datapoints (minute starts, newest 150 s old) are all cool.
  const now = 30 * MIN;
  const memory = [0, 1, 2, 3, 4].map(k => ({ t: now - 150_000 - (4 - k) * MIN, v: 40 }));
  const prev: BreakerState = { state: 'DEGRADED', since: now - 20 * MIN, share: 0.5, entryShare: 0.5, step: 0 };
  const d = decide(prev, { memory }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now);
  expect(d.next.state).toBe('RECOVERING');
});

describe('enforcement that does not wait for InService', () => {
  const capacity = {
    ...V,
    primaryCapacity: { min: 2, max: 8, qpsPerInstance: 150 },
    fallbackCapacity: { min: 1, max: 8, qpsPerInstance: 100 },
  };
  const view = (status: string, w: [number, number], inst: [number, number]): EndpointView => ({
    status,
    weights: { Primary: w[0], Fallback: w[1] },
    instances: { Primary: inst[0], Fallback: inst[1] },
  });
  const hot = { memory: [{ t: 9 * MIN, v: 88 }] };

  test('the level follows the state even when the endpoint is Updating; weights wait', () => {
    const d = decide(initialState(0), hot, view('Updating', [1, 0], [4, 1]), capacity, DEFAULT_CONFIG, 10 * MIN);
    expect(d.level).toBe(1);
    expect(d.setWeights).toBeUndefined();
    expect(d.capacity).toEqual({ suspendPrimaryScaleIn: true, fallbackMinCapacity: 3 }); // 50 % of 4 × 150 QPS at 100 QPS each
  });

  test('never more traffic to the fallback than its instances in service carry; the rest follows as it scales', () => {
    // 1 fallback instance × 100 QPS of the primary fleet's 4 × 150 = 600 QPS: 16.7 % → 15 % (5 % steps).
    const d1 = decide(initialState(0), hot, view('InService', [1, 0], [4, 1]), capacity, DEFAULT_CONFIG, 10 * MIN);
    expect(d1.effectiveShare).toBe(0.15);
    expect(d1.setWeights).toEqual({ Primary: 0.85, Fallback: 0.15 });
    expect(d1.next.share).toBe(0.5); // the state still wants half
    const d2 = decide(d1.next, hot, view('InService', [0.85, 0.15], [4, 3]), capacity, DEFAULT_CONFIG, 11 * MIN);
    expect(d2.setWeights).toEqual({ Primary: 0.5, Fallback: 0.5 });
  });

  test('a primary with scheduled actions has its scheduled scaling held too while not CLOSED (a scheduled lower maximum scales in all the same); one without has none', () => {
    const scheduled = { ...capacity, primaryCapacity: { ...capacity.primaryCapacity!, scheduled: true } };
    for (const [state, share] of [
      ['DEGRADED', 0.5],
      ['OPEN', 1],
      ['RECOVERING', 1 / 3],
    ] as const) {
      const prev: BreakerState = { state, since: 0, share, entryShare: share, step: state === 'RECOVERING' ? 1 : 0 };
      const d = decide(prev, { memory: [] }, view('InService', [1 - share, share], [4, 2]), scheduled, DEFAULT_CONFIG, MIN);
      expect(d.capacity).toMatchObject({ suspendPrimaryScaleIn: true, suspendPrimaryScheduled: true });
      expect(decide(prev, { memory: [] }, view('InService', [1 - share, share], [4, 2]), capacity, DEFAULT_CONFIG, MIN).capacity).not.toHaveProperty(
        'suspendPrimaryScheduled',
      );
    }
    const closed = decide(
      initialState(0),
      { memory: [{ t: 9 * MIN, v: 50 }] },
      view('InService', [1, 0], [4, 1]),
      scheduled,
      DEFAULT_CONFIG,
      10 * MIN,
    );
    expect(closed.capacity).toEqual({ suspendPrimaryScaleIn: false, suspendPrimaryScheduled: false, fallbackMinCapacity: 1 });
    // Without a fallback too.
    const alone = { primary: 'Primary', primaryCapacity: scheduled.primaryCapacity };
    expect(
      decide(initialState(0), hot, view('InService', [1, 0], [4, 0]), alone, { ...DEFAULT_CONFIG, hasFallback: false }, 10 * MIN).capacity,
    ).toEqual({
      suspendPrimaryScaleIn: true,
      suspendPrimaryScheduled: true,
    });
  });

  test('capacity follows the state: held while not CLOSED, released on CLOSED', () => {
    fc.assert(
      fc.property(fc.constantFrom('CLOSED', 'DEGRADED', 'OPEN', 'RECOVERING'), fc.integer({ min: 1, max: 8 }), (state, primaryNow) => {
        const share = state === 'CLOSED' ? 0 : state === 'OPEN' ? 1 : 0.5;
        const prev: BreakerState = { state: state as any, since: 0, share, entryShare: share, step: state === 'RECOVERING' ? 1 : 0 };
        const d = decide(prev, { memory: [] }, view('InService', [1 - share, share], [primaryNow, 1]), capacity, DEFAULT_CONFIG, MIN);
        expect(d.capacity.suspendPrimaryScaleIn).toBe(state !== 'CLOSED');
        const min = d.capacity.fallbackMinCapacity!;
        expect(min).toBeGreaterThanOrEqual(1);
        expect(min).toBeLessThanOrEqual(8);
        if (state === 'CLOSED') expect(min).toBe(1);
        else expect(min).toBe(Math.min(8, Math.max(1, Math.ceil((share * primaryNow * 150) / 100))));
      }),
    );
  });

  test('10-second data: recovery needs the whole dwell covered by 10-s points (30 for 5 minutes), not 5 points', () => {
    const prev: BreakerState = { state: 'DEGRADED', since: 0, share: 0.5, entryShare: 0.5, step: 0 };
    const now = 20 * MIN;
    const pts = (n: number) => Array.from({ length: n }, (_, i) => ({ t: now - 15_000 - (n - 1 - i) * 10_000, v: 50 }));
    expect(decide(prev, { memory: pts(5) }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now).next.state).toBe('DEGRADED');
    expect(decide(prev, { memory: pts(29) }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now).next.state).toBe('DEGRADED'); // 290 s
    expect(decide(prev, { memory: pts(30) }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now).next.state).toBe('RECOVERING'); // 30 buckets of 10 s
  });

  test('1-minute points (a 10-s query over 1-minute data): the spacing comes from the timestamps, so 5 one-minute buckets cover 5 minutes', () => {
    const prev: BreakerState = { state: 'DEGRADED', since: 0, share: 0.5, entryShare: 0.5, step: 0 };
    const now = 20 * MIN;
    const pts = (n: number, v = 30) => Array.from({ length: n }, (_, i) => ({ t: now - 90_000 - (n - 1 - i) * MIN, v }));
    expect(decide(prev, { memory: pts(5) }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now).next.state).toBe('RECOVERING');
    expect(decide(prev, { memory: pts(4) }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now).next.state).toBe('DEGRADED');
    // Points three minutes apart are missing data, not 3-minute data (1-minute publishing stores no coarser).
    const sparse = [0, 3, 6].map(k => ({ t: now - 90_000 - (6 - k) * MIN, v: 30 }));
    expect(decide(prev, { memory: sparse }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now).next.state).toBe('DEGRADED');
    // ...unless the endpoint publishes every 3 minutes or more (MetricsConfig 180 s): then they are its buckets.
    const every3 = [0, 3, 6, 9].map(k => ({ t: now - 200_000 - (9 - k) * MIN, v: 30 }));
    expect(decide(prev, { memory: every3, maxSpacingSeconds: 180 }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now).next.state).toBe('RECOVERING');
  });

  test('a missing point inside the dwell is not cool (it could have been hot)', () => {
    const prev: BreakerState = { state: 'DEGRADED', since: 0, share: 0.5, entryShare: 0.5, step: 0 };
    const now = 20 * MIN;
    const pts = Array.from({ length: 6 }, (_, i) => ({ t: now - 90_000 - (5 - i) * MIN, v: 30 })).filter((_, i) => i !== 3);
    const d = decide(prev, { memory: pts }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now);
    expect(d.next.state).toBe('DEGRADED');
    expect(d.reasons.join()).toMatch(
      /^holding DEGRADED: a gap of 120 s in the memory data within the last 300 s \(it could hide a hot point\) — recovery needs 300 s below 70 %/,
    );
  });
});

describe('de-escalation waits for settled capacity; recovery is a probe that ends', () => {
  const degraded = (since = 0, failedProbes?: number): BreakerState => ({
    state: 'DEGRADED',
    since,
    share: 0.5,
    entryShare: 0.5,
    step: 0,
    failedProbes,
  });
  const coolFor = (now: number, v = 50) => Array.from({ length: 6 }, (_, i) => ({ t: now - 30_000 - (5 - i) * MIN, v }));
  const now = 30 * MIN;

  test('no step back while the endpoint is Updating (a scale-out in flight means load outgrew the fleet)', () => {
    const d = decide(degraded(), { memory: coolFor(now) }, { status: 'Updating', weights: { Primary: 0.5, Fallback: 0.5 } }, V, DEFAULT_CONFIG, now);
    expect(d.next.state).toBe('DEGRADED');
    expect(d.reasons.join()).toMatch(/^holding DEGRADED: the endpoint is Updating \(capacity is changing\): recovery waits until it is InService/);
    const ok = decide(degraded(), { memory: coolFor(now) }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now);
    expect(ok.next.state).toBe('RECOVERING');
  });

  test('escalation is never held by Updating', () => {
    const d = decide(
      degraded(),
      { memory: [{ t: now - 30_000, v: 97 }] },
      { status: 'Updating', weights: { Primary: 0.5, Fallback: 0.5 } },
      V,
      DEFAULT_CONFIG,
      now,
    );
    expect(d.next.state).toBe('OPEN');
  });

  test('every recovery step needs memory below 70 % for the whole dwell, not only the newest point', () => {
    const rec: BreakerState = { state: 'RECOVERING', since: now - 3 * MIN, share: 1 / 3, entryShare: 0.5, step: 1 };
    // Newest point cool, one 3 minutes ago at 72 %: the step waits.
    const memory = coolFor(now).map((p, i) => (i === 2 ? { ...p, v: 72 } : p));
    const d = decide(rec, { memory }, inService(2 / 3, 1 / 3), V, DEFAULT_CONFIG, now);
    expect(d.next).toEqual(rec);
    expect(d.reasons.join()).toMatch(
      /^holding RECOVERING at step 1: memory 72 % ≥ 70 % within the last 300 s \(the newest such point 180 s before the newest point\) — recovery needs/,
    );
    expect(decide(rec, { memory: coolFor(now) }, inService(2 / 3, 1 / 3), V, DEFAULT_CONFIG, now).next.step).toBe(2);
  });

  test('memory in the 70–80 % band during RECOVERING: no step and no re-escalation, the step is held', () => {
    const rec: BreakerState = { state: 'RECOVERING', since: now - 10 * MIN, share: 1 / 3, entryShare: 0.5, step: 1 };
    for (const v of [70, 75, 79.9]) {
      const d = decide(rec, { memory: coolFor(now, v) }, inService(2 / 3, 1 / 3), V, DEFAULT_CONFIG, now);
      expect(d.next).toEqual(rec);
      expect(d.changed).toBe(false);
      expect(d.level).toBe(1);
    }
    expect(decide(rec, { memory: coolFor(now, 80) }, inService(2 / 3, 1 / 3), V, DEFAULT_CONFIG, now).next.state).toBe('DEGRADED');
  });

  test('a failed probe (hot again during RECOVERING, or within the probation after CLOSED) is counted and kept through recovery', () => {
    const rec: BreakerState = { state: 'RECOVERING', since: 0, share: 1 / 3, entryShare: 0.5, step: 1, failedProbes: 1 };
    const hot = decide(rec, { memory: [{ t: now - 30_000, v: 85 }] }, inService(2 / 3, 1 / 3), V, DEFAULT_CONFIG, now);
    expect(hot.next).toMatchObject({ state: 'DEGRADED', failedProbes: 2 });
    expect(hot.reasons.join()).toMatch(/failed probe 2/);
    const closed: BreakerState = {
      state: 'CLOSED',
      since: now - 5 * MIN,
      share: 0,
      entryShare: 0,
      step: 0,
      failedProbes: 2,
      recoveredAt: now - 5 * MIN,
    };
    expect(decide(closed, { memory: [{ t: now - 30_000, v: 85 }] }, inService(1, 0), V, DEFAULT_CONFIG, now).next).toMatchObject({ failedProbes: 3 });
    // Past the probation (10 minutes), the count is forgotten: a later degrade starts from 0.
    const later = decide(closed, { memory: [{ t: now + 20 * MIN - 30_000, v: 50 }] }, inService(1, 0), V, DEFAULT_CONFIG, now + 20 * MIN);
    expect(later.next.failedProbes).toBeUndefined();
    expect(
      decide(later.next, { memory: [{ t: now + 21 * MIN - 30_000, v: 85 }] }, inService(1, 0), V, DEFAULT_CONFIG, now + 21 * MIN).next.failedProbes,
    ).toBe(0);
    // A first degrade (never recovered before) is not a failed probe.
    expect(decide(initialState(0), { memory: [{ t: now - 30_000, v: 85 }] }, inService(1, 0), V, DEFAULT_CONFIG, now).next.failedProbes).toBe(0);
  });

  test('after 3 failed probes the wait before the next one doubles each time, up to an hour: it never stops probing', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 10].map(f => probeWaitSeconds(f, DEFAULT_CONFIG))).toEqual([300, 300, 300, 300, 600, 1200, 2400, 3600, 3600]);
    const d4 = (elapsedMin: number) =>
      decide(degraded(0, 4), { memory: coolFor(elapsedMin * MIN) }, inService(0.5, 0.5), V, DEFAULT_CONFIG, elapsedMin * MIN);
    expect(d4(9).next.state).toBe('DEGRADED');
    expect(d4(9).reasons.join()).toMatch(
      /^holding DEGRADED: 540 s of the 600 s wait after 4 failed probes \(traffic unknown; the last probe failed at an unknown rate\)/,
    );
    expect(d4(10).next).toMatchObject({ state: 'RECOVERING', failedProbes: 4 });
  });

  test('stored state round-trips with its failed probes and recovery time', () => {
    const s: BreakerState = { state: 'CLOSED', since: 5, share: 0, entryShare: 0, step: 0, failedProbes: 2, recoveredAt: 5 };
    expect(parseState(serializeState(s, []), 0)).toEqual(s);
  });
});

describe('a drill override (sagemaker-resilient-endpoint drill)', () => {
  const cool = (now: number): MemoryPoint[] => Array.from({ length: 15 }, (_, i) => ({ t: now - (15 - i) * MIN, v: 40 }));
  /** Minute by minute on cool memory and an InService endpoint, from `state`, applying weights. */
  function minutes(state: BreakerState, from: number, n: number) {
    let weights = { Primary: 1, Fallback: 0 };
    const out: { now: number; state: string; level: number; drill: boolean; reasons: string[] }[] = [];
    for (let i = 0; i < n; i++) {
      const now = from + i * MIN;
      const d = decide(state, { memory: cool(now) }, inService(weights.Primary, weights.Fallback), V, DEFAULT_CONFIG, now);
      if (d.setWeights) weights = d.setWeights as typeof weights;
      state = d.next;
      out.push({ now, state: state.state, level: d.level, drill: state.drill !== undefined, reasons: d.reasons });
    }
    return { out, weights, state };
  }
  const T0 = 100 * MIN;
  const drillOn = (to: 'DEGRADED' | 'OPEN', holdMinutes: number): BreakerState => ({
    ...initialState(0),
    drill: { to, until: T0 + holdMinutes * MIN, id: 'gameday-1' },
  });

  test('cool memory, CLOSED: the drill forces DEGRADED (level 1, half the traffic) and holds it until it expires', () => {
    const { out } = minutes(drillOn('DEGRADED', 20), T0, 20);
    expect(out.every(m => m.state === 'DEGRADED' && m.level === 1 && m.drill)).toBe(true);
    expect(out[0].reasons[0]).toMatch(/^drill gameday-1: held at DEGRADED until /);
  });

  test('OPEN sends everything to the fallback at level 2', () => {
    const d = decide(drillOn('OPEN', 5), { memory: cool(T0) }, inService(1, 0), V, DEFAULT_CONFIG, T0);
    expect(d.next.state).toBe('OPEN');
    expect(d.level).toBe(2);
    expect(d.setWeights).toEqual({ Primary: 0, Fallback: 1 });
    expect(d.changed).toBe(true);
  });

  test('at expiry the override is dropped and the normal evaluation recovers it with its hysteresis, back to CLOSED', () => {
    const { out } = minutes(drillOn('DEGRADED', 10), T0, 60);
    const ended = out.findIndex(m => !m.drill);
    expect(out[ended].now).toBe(T0 + 10 * MIN);
    expect(out[ended].reasons).toContain("drill gameday-1 ended: the breaker's own evaluation takes over");
    // Recovery is the breaker's own: stepped, never straight to CLOSED.
    const after = out.slice(ended).map(m => m.state);
    expect(after).toContain('RECOVERING');
    expect(after.at(-1)).toBe('CLOSED');
    expect(after.indexOf('RECOVERING')).toBeLessThan(after.indexOf('CLOSED'));
  });

  test('a real escalation beyond the drill still happens: critical memory during a DEGRADED drill opens', () => {
    const hot: MemoryPoint[] = [{ t: T0 - 30_000, v: 97 }];
    const d = decide(
      { ...drillOn('DEGRADED', 10), state: 'DEGRADED', share: 0.5, entryShare: 0.5 },
      { memory: hot },
      inService(0.5, 0.5),
      V,
      DEFAULT_CONFIG,
      T0,
    );
    expect(d.next.state).toBe('OPEN');
    expect(d.next.drill?.id).toBe('gameday-1');
  });

  test('holds even without fresh data (the drill is not a reading)', () => {
    const d = decide(drillOn('DEGRADED', 10), { memory: [] }, inService(1, 0), V, DEFAULT_CONFIG, T0);
    expect(d.next.state).toBe('DEGRADED');
  });

  test('the override round-trips through the stored state; an expired one is dropped with a change to write', () => {
    const s = drillOn('OPEN', 3);
    expect(parseState(serializeState(s, []), 0).drill).toEqual(s.drill);
    const d = decide(
      { ...s, state: 'OPEN', share: 1, entryShare: 1, since: T0 },
      { memory: cool(T0 + 3 * MIN) },
      inService(0, 1),
      V,
      DEFAULT_CONFIG,
      T0 + 3 * MIN,
    );
    expect(d.next.drill).toBeUndefined();
    expect(d.changed).toBe(true);
  });
});
