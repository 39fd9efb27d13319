// The simulator's facade for every jsii language (lib/simulation/api.ts): traces from data and from
// parameters, and a comparison whose figures are exactly the engine's.
import { Duration } from 'aws-cdk-lib';
import { simulation } from '../lib';
import { compareScenarios, pulseTrace } from '../lib/simulation';
import { exampleEndpoint } from '../bin/simulate';

const { Simulator, Traces } = simulation;

describe('Traces', () => {
  test('fromValues: one rate per second, the last one held, Poisson unless asked otherwise', () => {
    const t = Traces.fromValues([10, 20, 30]);
    expect([t.seconds, t.rateAt(0), t.rateAt(1.5), t.rateAt(2), t.rateAt(99), t.poisson, t.name]).toEqual([
      3,
      10,
      20,
      30,
      30,
      true,
      'replay of 3 seconds',
    ]);
    expect(Traces.fromValues([5], { poisson: false, name: 'flat' })).toMatchObject({ poisson: false, name: 'flat', seconds: 1 });
  });

  test("fromValues copies its input: changing the caller's array later changes nothing", () => {
    const values = [1, 2];
    const t = Traces.fromValues(values);
    values[0] = 100;
    expect(t.rateAt(0)).toBe(1);
  });

  test.each([
    [[], /qpsPerSecond: got no values; allowed: one finite rate >= 0 per second, at least one\. Fix: /],
    [[1, -2], /qpsPerSecond: got -2 at index 1; allowed: /],
    [[1, NaN], /qpsPerSecond: got NaN at index 1; allowed: /],
  ])('fromValues(%j) is a clear error', (values, message) => {
    expect(() => Traces.fromValues(values)).toThrow(message);
  });

  test("pulse with Durations is the engine's pulse in seconds", () => {
    const t = Traces.pulse({
      offPeakQps: 40,
      factor: 10,
      before: Duration.minutes(1),
      ramp: Duration.minutes(2),
      hold: Duration.minutes(3),
      after: Duration.minutes(4),
    });
    const engine = pulseTrace(40, 10, { before: 60, ramp: 120, hold: 180, after: 240 });
    expect(t.seconds).toBe(engine.seconds);
    for (const s of [0, 59, 60, 120, 180, 300, 400, 599]) expect(t.rateAt(s)).toBe(engine.rate(s));
    expect(Traces.pulse({ offPeakQps: 40 }).seconds).toBe(1800 + 2 * 300 + 1800 + 2700); // the documented defaults
  });

  test('steady, poisson and abusiveClient', () => {
    expect(Traces.steady(7, Duration.minutes(2))).toMatchObject({ seconds: 120, poisson: false });
    expect(Traces.steady(7, Duration.minutes(2)).rateAt(60)).toBe(7);
    expect(Traces.poisson(7, Duration.seconds(30))).toMatchObject({ seconds: 30, poisson: true });
    const abusive = Traces.abusiveClient({ users: 100, userQps: 0.5, startAt: Duration.minutes(1), duration: Duration.minutes(5) });
    expect([abusive.seconds, abusive.rateAt(59), abusive.rateAt(60)]).toEqual([300, 50, 50 + 75]);
  });
});

describe('Simulator.compare', () => {
  const endpoint = exampleEndpoint('clustering');
  // 2 minutes off-peak, a 1-minute ramp to 10×, 3 minutes at the peak, back: short, yet it scales and degrades.
  const rates = Array.from({ length: 480 }, (_, s) => (s < 120 ? 60 : s < 180 ? 60 + (540 * (s - 120)) / 60 : s < 360 ? 600 : 60));
  const assumptions = { metricDelay: Duration.seconds(30), provisioning: Duration.seconds(120) };
  const report = Simulator.compare(Traces.fromValues(rates), endpoint, { seed: 3, assumptions });
  const engine = compareScenarios(Traces.fromValues(rates)._trace, endpoint, { seed: 3, assumptions: { metricDelayS: 30, provisioningS: 120 } });

  test('the same figures as the engine, scenario by scenario (assumptions passed in seconds)', () => {
    expect(report.outcomes.map(o => o.scenario)).toEqual([
      Simulator.SCENARIO_STATIC,
      Simulator.SCENARIO_AUTOSCALING,
      Simulator.SCENARIO_WEIGHTS_ONLY,
      Simulator.SCENARIO_BREAKER,
    ]);
    // Every engine figure is carried (the per-10-second series and the in-flight count aside), under
    // the facade's name: seconds spelled out (`timeToDegradeS` → `timeToDegradeSeconds`).
    const facadeName = (k: string) => (k === 'firstOomS' ? 'firstOomSecond' : k.replace(/S$/, 'Seconds'));
    report.outcomes.forEach((o, i) => {
      const { series: _series, inFlightAtEnd: _inFlight, ...r } = engine[i].result;
      const expected: Record<string, unknown> = Object.fromEntries(Object.entries(r).map(([k, v]) => [facadeName(k), v]));
      // The level changes as structs (the second spelled out).
      expected.levelChanges = r.levelChanges.map(c => ({ second: c.t, level: c.level, state: c.state, why: c.why }));
      expect(o).toEqual({ scenario: engine[i].scenario, failedPercent: Math.round((10000 * r.failed) / r.arrivals) / 100, ...expected });
    });
    expect(report.outcomes[0].arrivals).toBeGreaterThan(0.9 * rates.reduce((x, y) => x + y, 0)); // Poisson around the given rates
  });

  test('a Markdown table with a row per scenario and an SVG chart', () => {
    // The scenarios before the library run the incidents' containers (no guard); the breaker as deployed has it.
    report.outcomes.forEach((o, i) => expect(report.table).toContain(`| ${o.scenario} | ${i < 3 ? 'off' : 'on'} | ${o.arrivals} |`));
    expect(report.chartSvg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
  });

  test('the namespace holds the facade only; the engine stays at the /simulation entry point', () => {
    expect(Object.keys(simulation).sort()).toEqual(['SimulationMemoryModel', 'SimulationTrace', 'Simulator', 'Traces']);
  });
});

describe('Traces: bad options are one clear error naming each option, its value and what is allowed', () => {
  test.each<[string, () => unknown, RegExp]>([
    [
      'pulse without traffic',
      () => Traces.pulse({ offPeakQps: 0 }),
      /^Traces\.pulse: offPeakQps: got 0; allowed: a rate > 0 requests per second\. Fix: /,
    ],
    [
      'pulse with several bad options',
      () => Traces.pulse({ offPeakQps: NaN, factor: 0.5 }),
      /^Traces\.pulse: offPeakQps: got NaN; allowed: .+; factor: got 0\.5; allowed: a multiple >= 1\. Fix: /,
    ],
    ['steady at a negative rate', () => Traces.steady(-1, Duration.minutes(1)), /^Traces\.steady: qps: got -1; allowed: a rate >= 0/],
    [
      'poisson for no time',
      () => Traces.poisson(5, Duration.seconds(0)),
      /^Traces\.poisson: duration: got 0; allowed: a Duration of at least 1 second/,
    ],
    [
      'abusive client with 2.5 users',
      () => Traces.abusiveClient({ users: 2.5, userQps: 1 }),
      /^Traces\.abusiveClient: users: got 2\.5; allowed: a whole number >= 1/,
    ],
    [
      'abusive client starting after the end',
      () => Traces.abusiveClient({ users: 10, userQps: 1, duration: Duration.minutes(5), startAt: Duration.minutes(10) }),
      /startAt: got 600; allowed: a Duration >= 0 and shorter than the trace/,
    ],
  ])('%s', (_name, call, message) => {
    expect(call).toThrow(message);
  });
});
