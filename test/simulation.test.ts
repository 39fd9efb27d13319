import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { execFileSync } from 'child_process';
import { simulation } from '../lib';
import { exampleEndpoint } from '../lib/simulation/cli';

const { abusiveClientTrace, compareScenarios, csvTrace, poissonTrace, pulseTrace, renderChart, runSimulation, simVariantsFrom, steadyTrace, Rng } = simulation;

describe('simulator', () => {
  const recommender = exampleEndpoint('recommender');
  const { primary, fallback } = simVariantsFrom(recommender);
  let pulseRows: simulation.ScenarioRow[];
  beforeAll(() => {
    pulseRows = compareScenarios(pulseTrace(40, 17), recommender, { seed: 7 });
  });

  test('parameters come from the construct: catalog hardware, tuned workers, footprint, scaling, breaker', () => {
    expect(primary).toMatchObject({ workers: 3, maxSeqLen: 3000, degradedMaxSeqLen: 512, initialCount: 2 });
    expect(primary.spec.gpuMemoryGiB).toBe(16);
    expect(primary.footprintBytes).toBe(4 * 1024 ** 3);
    expect(primary.scaling).toEqual({ min: 2, max: 4, qpsPerInstance: 150, scaleOutCooldownS: 90, scaleInCooldownS: 300 });
    expect(fallback).toMatchObject({ name: 'Fallback', maxSeqLen: 256, initialCount: 1 });
  });

  test('conservation: every request is served, failed, rejected or still in flight', () => {
    for (const { result: r } of pulseRows) {
      expect(r.served + r.failed + r.rejected + r.inFlightAtEnd).toBe(r.arrivals);
      expect(r.failedByOom).toBeLessThanOrEqual(r.failed);
    }
    const abusive = runSimulation(abusiveClientTrace(200, 0.2, 150, 1800, 600), { primary, fallback, autoscaling: true, breaker: recommender.circuitBreaker!.config, seed: 3 });
    expect(abusive.served + abusive.failed + abusive.rejected + abusive.inFlightAtEnd).toBe(abusive.arrivals);
  });

  test('determinism: the same seed gives the same result, another seed a different one', () => {
    const cfg = { primary, fallback, autoscaling: true, breaker: recommender.circuitBreaker!.config };
    const a = runSimulation(poissonTrace(60, 1800), { ...cfg, seed: 11 });
    const b = runSimulation(poissonTrace(60, 1800), { ...cfg, seed: 11 });
    const c = runSimulation(poissonTrace(60, 1800), { ...cfg, seed: 12 });
    expect(b).toEqual(a);
    expect(c.arrivals).not.toBe(a.arrivals);
  });

  test('qualitative result on the 17× pulse, computed: the breaker cuts OOM events and failed requests', () => {
    const by = Object.fromEntries(pulseRows.map(r => [r.scenario, r.result]));
    const withBreaker = by['autoscaling + breaker'];
    const scalingOnly = by.autoscaling;
    expect(withBreaker.oomEvents).toBeLessThan(scalingOnly.oomEvents);
    expect(withBreaker.failed).toBeLessThan(scalingOnly.failed);
    expect(withBreaker.timeToDegradeS).toBeDefined();
    expect(withBreaker.servedByFallback).toBeGreaterThan(0);
    expect(scalingOnly.servedByFallback).toBe(0);
  });

  test.each([0, 30, 60])('the breaker still cuts OOM events when weight changes take %i s to land (unverified timing, swept)', (weightApplyS) => {
    const trace = pulseTrace(40, 17, { before: 600, hold: 900, after: 900 });
    const base = { primary, seed: 5, assumptions: { weightApplyS } };
    const scalingOnly = runSimulation(trace, { ...base, autoscaling: true });
    const withBreaker = runSimulation(trace, { ...base, fallback, autoscaling: true, breaker: recommender.circuitBreaker!.config });
    expect(withBreaker.oomEvents).toBeLessThan(scalingOnly.oomEvents);
  });

  test('a steady load well under capacity with the cap in force has no OOM and no failure', () => {
    const safe = { ...primary, maxSeqLen: 512 };
    const r = runSimulation(steadyTrace(100, 1200), { primary: safe, autoscaling: true, seed: 1 });
    expect(r.oomEvents).toBe(0);
    expect(r.failed).toBe(0);
    expect(r.arrivals).toBe(100 * 1200);
  });

  test('Rng: uniform in [0,1), Poisson mean, power-law lengths within bounds', () => {
    const rng = new Rng(5);
    let sum = 0;
    for (let i = 0; i < 20000; i++) sum += rng.poisson(4);
    expect(sum / 20000).toBeGreaterThan(3.9);
    expect(sum / 20000).toBeLessThan(4.1);
    for (let i = 0; i < 10000; i++) {
      const l = rng.boundedPareto(5, 3000, 1);
      expect(l).toBeGreaterThanOrEqual(5);
      expect(l).toBeLessThanOrEqual(3000);
    }
  });

  test('CSV replay and chart rendering', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'trace-')), 't.csv');
    fs.writeFileSync(file, 'second,qps\n0,10\n1,20\n2,30\n');
    const t = csvTrace(file);
    expect([t.seconds, t.rate(0), t.rate(2), t.rate(99)]).toEqual([3, 10, 30, 30]);
    fs.writeFileSync(file, 'nothing here\n');
    expect(() => csvTrace(file)).toThrow(/no per-second QPS values/);
    const svg = renderChart(pulseRows, 'pulse');
    expect(svg.startsWith('<svg')).toBe(true);
    expect((svg.match(/<polyline/g) ?? []).length).toBe(1 + 3 + 3 + 1);
  });

  test('CLI writes the table and the chart', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'sim-'));
    const stdout = execFileSync(process.execPath, [require.resolve('tsx/cli'), path.join(__dirname, '..', 'lib', 'simulation', 'cli.ts'),
      '--example', 'clustering', '--trace', 'steady', '--qps', '50', '--out', out], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    expect(stdout).toMatch(/\| autoscaling \+ breaker \|/);
    expect(fs.readFileSync(path.join(out, 'chart.svg'), 'utf8')).toMatch(/^<svg/);
    expect(fs.existsSync(path.join(out, 'table.md'))).toBe(true);
  });
});
