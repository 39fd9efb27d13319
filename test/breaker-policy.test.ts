import fc from 'fast-check';
import { BreakerState, DEFAULT_CONFIG, decide, EndpointView, initialState, MemoryPoint, parseState, serializeState } from '../lib/breaker/policy';

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
    const shares = history.filter(h => h.changed).map(h => +h.share.toFixed(3));
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

describe('breaker policy: properties over random metric sequences', () => {
  const memArb = fc.array(fc.option(fc.double({ min: 0, max: 110, noNaN: true }), { nil: undefined }), { minLength: 1, maxLength: 120 });
  const errArb = fc.array(fc.option(fc.integer({ min: 0, max: 200 }), { nil: undefined }), { minLength: 120, maxLength: 120 });

  test('weights always valid and never all zero', () => {
    fc.assert(
      fc.property(memArb, errArb, (mem, errs) => {
        let state = initialState(0);
        let weights: Record<string, number> = { Primary: 1, Fallback: 0 };
        const points: MemoryPoint[] = [];
        mem.forEach((v, i) => {
          const now = (i + 1) * MIN;
          if (v !== undefined) points.push({ t: now, v });
          const e = errs[i];
          const d = decide(
            state,
            { memory: points.slice(-15), errors: e, invocations: e === undefined ? undefined : 1000 },
            inService(weights.Primary, weights.Fallback),
            V,
            DEFAULT_CONFIG,
            now,
          );
          if (d.setWeights) {
            const w = Object.values(d.setWeights);
            expect(w.every(x => x >= 0 && x <= 1)).toBe(true);
            expect(w.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
            weights = d.setWeights;
          }
          state = d.next;
        });
      }),
      { numRuns: 300 },
    );
  });

  test('no de-escalation sooner than the dwell / step time after the previous change', () => {
    const rank = { CLOSED: 0, RECOVERING: 1, DEGRADED: 2, OPEN: 3 } as const;
    fc.assert(
      fc.property(memArb, mem => {
        const { history } = run(mem);
        let lastChange = 0;
        let prev = 'CLOSED';
        for (const h of history) {
          if (h.changed) {
            const down = rank[h.state as keyof typeof rank] < rank[prev as keyof typeof rank] || (h.state === 'RECOVERING' && prev === 'RECOVERING');
            if (down)
              expect(h.t - lastChange).toBeGreaterThanOrEqual(Math.min(DEFAULT_CONFIG.minDwellSeconds, DEFAULT_CONFIG.recoveryStepSeconds) * 1000);
            lastChange = h.t;
            prev = h.state;
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  test('restoration (entering RECOVERING) only after sustained recovery below 70 %', () => {
    fc.assert(
      fc.property(memArb, mem => {
        const { history } = run(mem);
        history.forEach((h, i) => {
          if (h.changed && h.state === 'RECOVERING' && (i === 0 || history[i - 1].state !== 'RECOVERING')) {
            const lastFive = mem.slice(Math.max(0, i - 4), i + 1);
            expect(lastFive.filter(v => v !== undefined).length).toBeGreaterThanOrEqual(5);
            expect(lastFive.every(v => v === undefined || v < 70)).toBe(true);
          }
        });
      }),
      { numRuns: 300 },
    );
  });

  test('never acts on missing data', () => {
    fc.assert(
      fc.property(memArb, mem => {
        const { history } = run(mem);
        history.forEach((h, i) => {
          const fresh = mem.slice(Math.max(0, i - 4), i + 1).some(v => v !== undefined);
          if (!fresh) expect(h.changed).toBe(false);
        });
      }),
      { numRuns: 300 },
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

  test('10-second data: recovery needs the dwell in 10-s points (30 for 5 minutes), not 5 points', () => {
    const prev: BreakerState = { state: 'DEGRADED', since: 0, share: 0.5, entryShare: 0.5, step: 0 };
    const now = 20 * MIN;
    const pts = (n: number) => Array.from({ length: n }, (_, i) => ({ t: now - 15_000 - (n - 1 - i) * 10_000, v: 50 }));
    const five = decide(prev, { memory: pts(5), periodSeconds: 10 }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now);
    expect(five.next.state).toBe('DEGRADED');
    const thirty = decide(prev, { memory: pts(30), periodSeconds: 10 }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now);
    expect(thirty.next.state).toBe('RECOVERING');
  });
});

describe('de-escalation waits for settled capacity and for the load to fall', () => {
  const degradedAt = (load?: number): BreakerState => ({ state: 'DEGRADED', since: 0, share: 0.5, entryShare: 0.5, step: 0, entryLoad: load });
  const coolFor = (now: number) => Array.from({ length: 6 }, (_, i) => ({ t: now - 30_000 - (5 - i) * MIN, v: 50 }));
  const now = 30 * MIN;

  test('no step back while the endpoint is Updating (a scale-out in flight means load outgrew the fleet)', () => {
    const d = decide(
      degradedAt(),
      { memory: coolFor(now) },
      { status: 'Updating', weights: { Primary: 0.5, Fallback: 0.5 } },
      V,
      DEFAULT_CONFIG,
      now,
    );
    expect(d.next.state).toBe('DEGRADED');
    expect(d.reasons.join()).toMatch(/Updating: holding DEGRADED until capacity settles/);
    const ok = decide(degradedAt(), { memory: coolFor(now) }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now);
    expect(ok.next.state).toBe('RECOVERING');
  });

  test('escalation is never held by Updating', () => {
    const d = decide(
      degradedAt(),
      { memory: [{ t: now - 30_000, v: 97 }] },
      { status: 'Updating', weights: { Primary: 0.5, Fallback: 0.5 } },
      V,
      DEFAULT_CONFIG,
      now,
    );
    expect(d.next.state).toBe('OPEN');
  });

  test('cool memory under the caps is not enough: the load per instance must be ≤ 90 % of where it degraded', () => {
    const high = decide(degradedAt(170), { memory: coolFor(now), loadPerInstance: 160 }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now);
    expect(high.next.state).toBe('DEGRADED');
    expect(high.reasons.join()).toMatch(/load 160 req\/s per instance > 90 % of the 170/);
    const low = decide(degradedAt(170), { memory: coolFor(now), loadPerInstance: 150 }, inService(0.5, 0.5), V, DEFAULT_CONFIG, now);
    expect(low.next.state).toBe('RECOVERING');
    expect(low.next.entryLoad).toBe(170); // kept until CLOSED
  });

  test('the entry load is recorded when trouble begins and survives the stored JSON', () => {
    const d = decide(initialState(0), { memory: [{ t: now - 30_000, v: 85 }], loadPerInstance: 123 }, inService(1, 0), V, DEFAULT_CONFIG, now);
    expect(d.next).toMatchObject({ state: 'DEGRADED', entryLoad: 123 });
    expect(parseState(serializeState(d.next, []), 0)).toMatchObject({ entryLoad: 123 });
  });
});
