import * as fs from 'fs';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as os from 'os';
import * as path from 'path';
import * as simulation from '../lib/simulation';
import { assumptionsFrom, exampleEndpoint, main } from '../bin/simulate';
import {
  backToClosed,
  dayTable,
  GOAL_BACK_TO_CLOSED_S,
  goalTable,
  guardMatrix,
  matrixSummary,
  matrixTable,
  meetsDayGoal,
  meetsGoal,
  normalDayMatrix,
  pulseReturnS,
  refusedOrFailedPercent,
} from '../lib/simulation/matrix';
import { Simulator } from '../lib/simulation/api';
import { ContainerImage, ResilientEndpoint, SageMakerInstanceType } from '../lib';
import { containerBudget } from '../lib/simulation';

const {
  abusiveClientTrace,
  compareScenarios,
  csvTrace,
  CURRENT_BREAKER,
  INCIDENT_A_OBSERVED,
  poissonTrace,
  pulseTrace,
  renderChart,
  runSimulation,
  SCENARIOS,
  simVariantsFrom,
  steadyTrace,
  Rng,
} = simulation;

/** A short 17× pulse (25 minutes) that still exercises every mechanism: ramp, hold, recovery. */
const shortPulse = () => pulseTrace(40, 17, { before: 300, ramp: 300, hold: 600, after: 300 });

/**
 * The breaker's dynamics alone: the footprint memory model (incident A's calibration: weights plus padded
 * batches' activations), under which the examples do run out of memory, and no container guard.
 */
const BREAKER_ALONE = { memoryModel: 'footprint' as const, guard: false };

describe('simulator', () => {
  const recommender = exampleEndpoint('recommender');
  const { primary, fallback } = simVariantsFrom(recommender);
  const breaker = recommender.circuitBreaker!.config;
  let rows: simulation.ScenarioRow[];
  let by: Record<string, simulation.SimResult>;
  beforeAll(() => {
    rows = compareScenarios(shortPulse(), recommender, { seed: 7, assumptions: BREAKER_ALONE });
    by = Object.fromEntries(rows.map(r => [r.scenario, r.result]));
  });

  test('parameters come from the construct: catalog hardware, tuned workers, footprint, length tiers, scaling', () => {
    expect(primary).toMatchObject({ workers: 3, maxSeqLen: 1024, degradedMaxSeqLen: 512, initialCount: 2 });
    expect(primary.spec).toMatchObject({ gpuMemoryGiB: 16, vCpus: 8 });
    expect(primary.footprintBytes).toBe(4 * 1024 ** 3);
    expect(primary.scaling).toEqual({ min: 2, max: 6, qpsPerInstance: 50, scaleOutCooldownS: 90, scaleInCooldownS: 300 });
    // TorchServe's job queue (100) for the PyTorch image; gunicorn's backlog for the scikit-learn one.
    expect(primary.queueLimit).toBe(100);
    expect(simVariantsFrom(exampleEndpoint('clustering')).primary.queueLimit).toBe(2048);
    expect(fallback).toMatchObject({ name: 'Fallback', maxSeqLen: 256, initialCount: 1 });
    expect(rows.map(r => r.scenario)).toEqual([SCENARIOS.STATIC, SCENARIOS.AUTOSCALING, SCENARIOS.WEIGHTS_ONLY, SCENARIOS.BREAKER]);
  });

  test('conservation: every request is served, failed, rejected or still in flight', () => {
    for (const { result: r } of rows) {
      expect(r.served + r.failed + r.rejected + r.inFlightAtEnd).toBe(r.arrivals);
      expect(r.failedByOom).toBeLessThanOrEqual(r.failed);
    }
    const abusive = runSimulation(abusiveClientTrace(200, 0.2, 150, 1200, 300), { primary, fallback, autoscaling: true, breaker, seed: 3 });
    expect(abusive.served + abusive.failed + abusive.rejected + abusive.inFlightAtEnd).toBe(abusive.arrivals);
  });

  test('determinism: the same seed gives the same result, another seed a different one', () => {
    const cfg = { primary, fallback, autoscaling: true, breaker };
    const a = runSimulation(poissonTrace(60, 900), { ...cfg, seed: 11 });
    const b = runSimulation(poissonTrace(60, 900), { ...cfg, seed: 11 });
    const c = runSimulation(poissonTrace(60, 900), { ...cfg, seed: 12 });
    expect(b).toEqual(a);
    expect(c.arrivals).not.toBe(a.arrivals);
  });

  test('the endpoint is Updating during scale-outs and weight changes, and SageMaker refuses weights then', () => {
    expect(by[SCENARIOS.STATIC].updatingS).toBe(0);
    expect(by[SCENARIOS.AUTOSCALING].updatingS).toBeGreaterThanOrEqual(379); // at least one GPU scale-out (380 s, its first second counted as InService)
    // The breakers met an Updating endpoint when they wanted to move weights.
    expect(by[SCENARIOS.WEIGHTS_ONLY].weightChangesDeferred + by[SCENARIOS.BREAKER].weightChangesDeferred).toBeGreaterThan(0);
    const series = by[SCENARIOS.AUTOSCALING].series;
    expect(series.some(s => s.updating === 1)).toBe(true);
    expect(series.some(s => s.updating === 0)).toBe(true);
  });

  test('the breaker as deployed beats the weights-only design under Updating: fewer OOMs and failures, faster to act', () => {
    const now = by[SCENARIOS.BREAKER];
    const old = by[SCENARIOS.WEIGHTS_ONLY];
    const scalingOnly = by[SCENARIOS.AUTOSCALING];
    expect(now.oomEvents).toBeLessThan(scalingOnly.oomEvents);
    expect(now.oomEvents).toBeLessThanOrEqual(old.oomEvents);
    expect(now.failed).toBeLessThan(old.failed);
    // Within one 10-s period plus the assumed delays: the point's availability, the alarm's evaluation, the event.
    const d = simulation.DEFAULT_ASSUMPTIONS;
    expect(now.timeToDegradeS!).toBeLessThanOrEqual(10 + d.metricDelay10S + d.alarmEvaluationS + d.eventToLambdaS);
    expect(now.timeToDegradeS!).toBeLessThan(old.timeToDegradeS!);
    expect(now.timeToWeightsS!).toBeLessThan(old.timeToWeightsS!);
    expect(old.timeDegradedS).toBe(0); // its container never applied a level
    expect(now.timeDegradedS).toBeGreaterThan(0);
  });

  test('the degrade level protects without any weight shift (no fallback variant)', () => {
    // The recommender's primary alone: only the level (length tiers in the container) can act.
    const trace = shortPulse();
    const base = { primary, autoscaling: true, seed: 5, assumptions: BREAKER_ALONE };
    const scalingOnly = runSimulation(trace, base);
    const withBreaker = runSimulation(trace, { ...base, breaker, metricPeriodS: 10 });
    expect(scalingOnly.oomEvents).toBeGreaterThan(0);
    expect(withBreaker.servedByFallback).toBe(0);
    expect(withBreaker.timeDegradedS).toBeGreaterThan(0);
    expect(withBreaker.oomEvents).toBeLessThan(scalingOnly.oomEvents);
  });

  test('10-second publishing degrades sooner than 1-minute publishing', () => {
    // The breaker as deployed (beforeAll, seed 7) publishes every 10 s; the same run on 1-minute data:
    const ten = by[SCENARIOS.BREAKER];
    const sixty = runSimulation(shortPulse(), {
      primary,
      fallback,
      autoscaling: true,
      breaker,
      breakerMode: CURRENT_BREAKER,
      seed: 7,
      metricPeriodS: 60,
      assumptions: BREAKER_ALONE,
    });
    expect(ten.timeToDegradeS!).toBeLessThan(sixty.timeToDegradeS!);
  });

  test.each([0, 60])('the breaker still cuts OOM events when weight changes take %i s (unverified timing, swept)', weightApplyS => {
    // Against autoscaling alone on the same trace and seed (beforeAll): no breaker, so no weight change to time.
    const scalingOnly = by[SCENARIOS.AUTOSCALING];
    const withBreaker = runSimulation(shortPulse(), {
      primary,
      fallback,
      autoscaling: true,
      breaker,
      metricPeriodS: 10,
      seed: 7,
      assumptions: { ...BREAKER_ALONE, weightApplyS },
    });
    expect(withBreaker.oomEvents).toBeLessThan(scalingOnly.oomEvents);
  });

  test('weights-only mode never applies a level', () => {
    const r = by[SCENARIOS.WEIGHTS_ONLY];
    expect(r.series.every(s => s.level === 0)).toBe(true);
    expect(by[SCENARIOS.BREAKER].series.some(s => s.level > 0)).toBe(true); // the same trace does degrade the current breaker
  });

  test('a memory target on SageMaker memory that does not fall pins the fleet at its maximum; on the guard’s in-flight memory it scales in with the load (autoScaling.memoryTargetPercent)', () => {
    // PyTorch's caching allocator keeps each worker's peak reserved (allocatorRetainsPeak): after a 10× pulse the GPU
    // metric stays high however many instances there are. 2 copies (static ~56 %, under the 70 % target).
    const trace = pulseTrace(40, 10, { before: 300, ramp: 300, hold: 600, after: 3000 });
    const run = (scaling: Partial<NonNullable<simulation.SimVariant['scaling']>>) =>
      runSimulation(trace, {
        primary: { ...primary, workers: 2, scaling: { ...primary.scaling!, ...scaling } },
        autoscaling: true,
        seed: 1,
        metricPeriodS: 10,
        assumptions: { memoryModel: 'footprint', allocatorRetainsPeak: true },
      });
    const last30min = (r: simulation.SimResult) => r.series.filter(p => p.t >= trace.seconds - 1800).map(p => p.instP);
    // The old policy (scale-in enabled on GPU memory): the pulse scales it to the maximum and it never comes back.
    const pinned = run({ memoryTargetPercent: 70, memoryScaleIn: true, memoryMetric: 'memory' });
    expect(Math.min(...last30min(pinned))).toBe(6);
    // The construct's policy on a guarded model: the guard's in-flight memory, which falls with the load.
    const inFlight = run({ memoryTargetPercent: 40, memoryScaleIn: true, memoryMetric: 'inFlight' });
    expect(Math.max(...inFlight.series.map(p => p.instP))).toBe(6); // it did scale out for the pulse
    expect(Math.max(...last30min(inFlight))).toBe(2);
    expect(inFlight.instanceMinutes).toBeLessThan(pinned.instanceMinutes);
    // Without the guard the construct disables the memory policy's scale-in: the QPS target releases capacity (the
    // memory policy may add it again while memory stays up: the warning GpuMemoryTargetWithoutGuard says so).
    const noVeto = run({ memoryTargetPercent: 70, memoryScaleIn: false, memoryMetric: 'memory' });
    expect(Math.min(...last30min(noVeto))).toBeLessThan(6);
  });

  test('a steady load well under capacity has no OOM and no failure', () => {
    const r = runSimulation(steadyTrace(100, 900), { primary: { ...primary, maxSeqLen: 512 }, autoscaling: true, seed: 1 });
    expect(r.oomEvents).toBe(0);
    expect(r.failed).toBe(0);
    expect(r.arrivals).toBe(100 * 900);
  });

  test('Rng: uniform in [0,1), Poisson mean, power-law lengths within bounds', () => {
    const rng = new Rng(5);
    let sum = 0;
    for (let i = 0; i < 20000; i++) sum += rng.poisson(4);
    expect(sum / 20000).toBeGreaterThan(3.9);
    expect(sum / 20000).toBeLessThan(4.1);
    const lengths = Array.from({ length: 10000 }, () => rng.boundedPareto(5, 3000, 1));
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(5);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(3000);
    expect(lengths.filter(l => l <= 50).length).toBeGreaterThan(lengths.filter(l => l > 500).length); // heavy head, long tail
  });

  test('CSV replay and chart rendering', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'trace-')), 't.csv');
    fs.writeFileSync(file, 'second,qps\n0,10\n1,20\n2,30\n');
    const t = csvTrace(file);
    expect([t.seconds, t.rate(0), t.rate(2), t.rate(99)]).toEqual([3, 10, 30, 30]);
    fs.writeFileSync(file, 'nothing here\n');
    expect(() => csvTrace(file)).toThrow(/no per-second QPS values/);
    const svg = renderChart(rows, 'pulse');
    expect(svg.startsWith('<svg')).toBe(true);
    // QPS once, memory / instances / Updating per scenario, the breaker state once.
    expect((svg.match(/<polyline/g) ?? []).length).toBe(1 + 3 * rows.length + 1);
  });

  test("CLI writes the table, the chart and results.json with every scenario's figures", () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'sim-'));
    const csv = path.join(out, 'ten-minutes.csv'); // 10 minutes at 50 QPS: every scenario runs, quickly
    fs.writeFileSync(csv, `qps\n${'50\n'.repeat(600)}`);
    const log = jest.spyOn(console, 'log').mockImplementation(() => {});
    const progress = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    let code: number;
    let stdout: string;
    try {
      code = main(['--example', 'clustering', '--trace', 'csv', '--csv', csv, '--out', out]);
      stdout = log.mock.calls.map(c => String(c[0])).join('\n');
    } finally {
      log.mockRestore();
      progress.mockRestore();
    }
    expect(code).toBe(0);
    expect(stdout).toContain(`| ${SCENARIOS.BREAKER} |`);
    expect(fs.readFileSync(path.join(out, 'chart.svg'), 'utf8')).toMatch(/^<svg/);
    const results = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'));
    expect(results.map((r: any) => r.scenario)).toEqual([SCENARIOS.STATIC, SCENARIOS.AUTOSCALING, SCENARIOS.WEIGHTS_ONLY, SCENARIOS.BREAKER]);
    for (const r of results) {
      for (const k of ['oomEvents', 'failed', 'arrivals', 'updatingS', 'instanceMinutes']) expect(typeof r[k]).toBe('number');
      expect(r.series).toBeUndefined();
    }
  });
});

describe('calibration: incident A as it was (through the facade every language uses), at every seed of the matrix', () => {
  const T = simulation.CALIBRATION_TOLERANCES;
  const reports = [1, 7, 42, 123].map(seed => [seed, Simulator.calibrateIncidentA(seed)] as const);

  test.each(reports)('seed %i: the observed baseline and peak GPU memory and latency, within the stated tolerances', (_seed, report) => {
    expect(Math.abs(report.baselineGpuMemoryPercent - INCIDENT_A_OBSERVED.baselineGpuMemoryPercent)).toBeLessThanOrEqual(T.baselineMemoryPoints);
    expect(report.peakGpuMemoryPercent).toBeGreaterThanOrEqual(T.peakMemoryAtLeast);
    expect(report.peakGpuMemoryPercent).toBeLessThan(100);
    expect(Math.abs(report.baselineLatencyMs - INCIDENT_A_OBSERVED.baselineLatencyMs)).toBeLessThanOrEqual(T.baselineLatencyMs);
    expect(Math.abs(report.peakLatencyMs - INCIDENT_A_OBSERVED.peakLatencyMs)).toBeLessThanOrEqual(T.peakLatencyMs);
  });

  test.each(reports)('seed %i: adding 2 instances only delays the crash', (_seed, report) => {
    expect(report.firstOomMinuteWith4).toBeGreaterThan(0);
    expect(report.firstOomMinuteWith6!).toBeGreaterThan(report.firstOomMinuteWith4!);
    expect(report.oomEventsWith6).toBeGreaterThan(0);
  });

  test('the fit is made with the arrivals every other run uses (spread over each second)', () => {
    expect(simulation.INCIDENT_A_ASSUMPTIONS.spreadArrivals ?? simulation.DEFAULT_ASSUMPTIONS.spreadArrivals).toBe(true);
  });
});

describe('the container side in the simulator: measured memory and the memory guard', () => {
  const recommender = exampleEndpoint('recommender');
  const { primary, fallback } = simVariantsFrom(recommender);
  const breaker = recommender.circuitBreaker!.config;
  const onFootprint = (assumptions: Partial<simulation.SimAssumptions>, withBreaker = true, seed = 7) =>
    runSimulation(shortPulse(), {
      primary,
      fallback,
      autoscaling: true,
      breaker: withBreaker ? breaker : undefined,
      metricPeriodS: 10,
      seed,
      assumptions: { memoryModel: 'footprint', ...assumptions },
    });

  test("a variant carries its model's measured profile and the container's budget: the construct's, else 90 % of the instance's memory", () => {
    const file = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'examples', 'models', 'recommender', 'memory-profile.json'), 'utf8'));
    expect(primary.profile).toMatchObject({ baselineBytes: file.baselineBytes, sizeMin: 5, sizeMax: 3000 });
    expect(primary.profile!.latency).toEqual(file.points.map((p: any) => [p.size, p.latencyMs]));
    // What the template gives the container (RESILIENT_ENDPOINT_CONTAINER_GPU_MEMORY_BYTES) when it does, else the contract's 90 % of the T4's 16 GiB.
    const env = Object.values(Template.fromStack(Stack.of(recommender)).findResources('AWS::SageMaker::Model')).map(
      (m: any) => m.Properties.PrimaryContainer.Environment.RESILIENT_ENDPOINT_CONTAINER_GPU_MEMORY_BYTES,
    );
    const stated = env.find(x => x !== undefined);
    expect(primary.guardBudgetBytes).toBe(stated !== undefined ? Number(stated) : Math.floor(0.9 * 16 * 1024 ** 3));
    // A budget written into the model's environment wins over the default (a 4-GPU type: per GPU × 4 GPUs).
    const e = new ResilientEndpoint(new Stack(), 'E', {
      model: {
        image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1'),
        environment: { RESILIENT_ENDPOINT_CONTAINER_GPU_MEMORY_BYTES: String(10 * 1024 ** 3) },
      },
      instanceType: SageMakerInstanceType.ML_G4DN_12XLARGE,
    });
    expect(containerBudget(e, e.primaryVariant)).toBe(40 * 1024 ** 3);
    const cpu = new ResilientEndpoint(new Stack(), 'C', {
      model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    });
    expect(containerBudget(cpu, cpu.primaryVariant)).toBe(Math.floor(0.9 * 16 * 1024 ** 3));
  });

  test('with the guard a request that does not fit is refused (4XX), never an OOM; without it the same pulse OOMs', () => {
    // Autoscaling alone (no breaker), so that only the container's guard is between a request and an OOM.
    const off = onFootprint({ guard: false }, false);
    const on = onFootprint({ guard: true }, false);
    expect(off.oomEvents).toBeGreaterThan(0);
    expect(on.oomEvents).toBe(0);
    expect(on.failedByOom).toBe(0);
    expect(on.rejectedByGuard).toBeGreaterThan(0);
    expect(on.rejectedByGuard + on.rejectedByBackstop).toBeLessThanOrEqual(on.rejected);
    expect(on.served + on.failed + on.rejected + on.inFlightAtEnd).toBe(on.arrivals);
    expect(on.maxPrimaryMemoryPercent).toBeLessThan(100);
  });

  test('the layers compose: the guard reports its pressure and refusals, the breaker hears them and moves traffic to the fallback', () => {
    const heard = onFootprint({ guard: true });
    // The same container, but its metrics never reach the breaker (as before issue 28).
    const deaf = onFootprint({ guard: true, guardMetricDelayS: 1e6 });
    expect(heard.oomEvents).toBe(0);
    expect(heard.servedByFallback).toBeGreaterThan(deaf.servedByFallback);
    expect(heard.rejectedByGuard + heard.rejectedByBackstop).toBeLessThan(deaf.rejectedByGuard + deaf.rejectedByBackstop);
    expect(refusedOrFailedPercent(heard)).toBeLessThanOrEqual(1);
  });

  test('the backstop is per process, as the product’s: on the GPU (the CUDA fraction at the container’s budget) it lets workers that outgrow their estimates together run the instance out of memory', () => {
    expect(onFootprint({ estimateErrorSd: 0 })).toMatchObject({ oomEvents: 0, rejectedByBackstop: 0 });
    // A curve 50 times too small (a profile of other code): the guard admits what does not fit, and no
    // container-wide check exists to stop it.
    expect(onFootprint({ estimateScale: 1 / 50 }, false).oomEvents).toBeGreaterThan(0);
  });

  test('on the CPU the backstop (RLIMIT_DATA per worker, armed while the worker runs one request) catches requests that outgrow their estimate plus what the container has left', () => {
    const clustering = simVariantsFrom(exampleEndpoint('clustering')).primary;
    const run = (estimateErrorSd: number, batchPerWorker: number) =>
      runSimulation(shortPulse(), {
        primary: clustering,
        autoscaling: true,
        metricPeriodS: 10,
        seed: 7,
        assumptions: { memoryModel: 'footprint', estimateErrorSd, batchPerWorker },
      });
    // One request per worker: armed for each.
    const alone = run(0.3, 1);
    expect(alone.rejectedByBackstop).toBeGreaterThan(0);
    expect(run(0, 1).rejectedByBackstop).toBe(0);
    // Batches of 8 a worker: rarely one request alone, so rarely armed — estimates 30 % off then reach the instance.
    const batched = run(0.3, 8);
    expect(batched.rejectedByBackstop).toBeLessThan(alone.rejectedByBackstop);
    expect(batched.oomEvents).toBeGreaterThan(0);
  });

  test('a container without a budget (no guard in it) is not protected, whatever the assumption says', () => {
    const bare = { ...primary, guardBudgetBytes: undefined };
    const cfg = { primary: bare, autoscaling: true, seed: 7 };
    const a = runSimulation(shortPulse(), { ...cfg, assumptions: { memoryModel: 'footprint', guard: true } });
    const b = runSimulation(shortPulse(), { ...cfg, assumptions: { memoryModel: 'footprint', guard: false } });
    expect(a.oomEvents).toBeGreaterThan(0);
    expect(a.oomEvents).toBe(b.oomEvents);
    expect(a.rejectedByGuard).toBe(0);
  });

  test('without 10-second datapoints (item 23 unverified) the breaker acts later, on 1-minute data', () => {
    const ten = onFootprint({ guard: false });
    const minute = onFootprint({ guard: false, tenSecondData: false });
    expect(minute.timeToDegradeS!).toBeGreaterThan(ten.timeToDegradeS!);
  });

  test('alarm evaluation delays the level by as much as it is swept', () => {
    // (Seed 42: with seed 7 the 1-minute schedule runs before the alarm path in every sweep.)
    const prompt = onFootprint({ guard: false, alarmEvaluationS: 0 }, true, 42);
    const slow = onFootprint({ guard: false, alarmEvaluationS: 30 }, true, 42);
    expect(slow.timeToDegradeS! - prompt.timeToDegradeS!).toBeGreaterThanOrEqual(20);
  });

  test("on the examples' measured curves a worker never comes near its budget: no OOM with or without the guard", () => {
    const measured = runSimulation(shortPulse(), {
      primary,
      fallback,
      autoscaling: true,
      breaker,
      metricPeriodS: 10,
      seed: 7,
      assumptions: { guard: false },
    });
    expect(measured.oomEvents).toBe(0);
    expect(measured.maxPrimaryMemoryPercent).toBeLessThan(20);
  });
});

describe('the guard matrix and the sweep flags', () => {
  test('three ways per seed and pulse; the summary counts runs with an OOM', () => {
    const rows = guardMatrix(
      { recommender: exampleEndpoint('recommender') },
      {
        seeds: [7],
        factors: [17],
        ways: [
          [true, true],
          [false, true],
          [true, false],
        ],
        trace: f => pulseTrace(40, f, { before: 300, ramp: 300, hold: 600, after: 300 }),
      },
    );
    expect(rows.map(r => [r.guard, r.tenSecondData])).toEqual([
      [true, true],
      [false, true],
      [true, false],
    ]);
    const [guarded, bare, minute] = rows.map(r => r.result);
    expect(guarded.oomEvents).toBe(0);
    expect(minute.oomEvents).toBe(0);
    expect(bare.rejectedByGuard).toBe(0);
    const summary = matrixSummary(rows);
    const pct = (n: number, d: number) => ((100 * n) / d).toFixed(2);
    expect(summary).toContain(
      `| recommender | footprint | guard | 1 | 0 | 0 | ${pct(guarded.failed, guarded.arrivals)} % | ${pct(guarded.rejectedByGuard + guarded.rejectedByBackstop, guarded.arrivals)} % |`,
    );
    expect(summary).toContain(`| recommender | footprint | no guard | 1 | ${bare.oomEvents > 0 ? 1 : 0} | ${bare.oomEvents} |`);
    expect(matrixTable(rows).split('\n')).toHaveLength(2 + 3);
    // The goal table: one row per run and the count of runs that meet it.
    const goal = goalTable([rows[0]], () => true);
    expect(goal).toContain(
      `| recommender | footprint (its own) | 17× | 7 | 0 | ${guarded.failed} | ${guarded.rejectedByGuard + guarded.rejectedByBackstop} | ${guarded.rejectedByFallback} | ${refusedOrFailedPercent(guarded).toFixed(2)} % |`,
    );
    expect(goal).toMatch(new RegExp(`met in ${meetsGoal(guarded, true) ? 1 : 0} of 1 runs`));
  });

  test('the goal: no OOM, refused (guard, backstop) + failed ≤ 1 % of arrivals, the fallback serving', () => {
    const ok = {
      oomEvents: 0,
      rejectedByGuard: 50,
      rejectedByBackstop: 30,
      rejectedByFallback: 10,
      failed: 10,
      arrivals: 10_000,
      servedByFallback: 1,
    } as simulation.SimResult;
    expect(refusedOrFailedPercent(ok)).toBe(1);
    expect(meetsGoal(ok, true)).toBe(true);
    expect(meetsGoal({ ...ok, failed: 11 }, true)).toBe(false);
    expect(meetsGoal({ ...ok, oomEvents: 1 }, true)).toBe(false);
    expect(meetsGoal({ ...ok, servedByFallback: 0 }, true)).toBe(false);
    expect(meetsGoal({ ...ok, servedByFallback: 0 }, false)).toBe(true);
    expect(
      goalTable(
        [
          {
            example: 'x',
            workload: 'own',
            memoryModel: 'footprint',
            factor: 17,
            seed: 1,
            guard: true,
            tenSecondData: true,
            result: { ...ok, oomEvents: 2 } as any,
          },
        ],
        () => true,
      ),
    ).toMatch(/\*\*not met\*\*[\s\S]*met in 0 of 1 runs/);
  });

  test('every delay is a flag; bad values are one error naming each', () => {
    expect(
      assumptionsFrom({
        'metric-delay-10s': '30',
        'alarm-eval': '0',
        'level-poll': '5',
        'event-delay': '2',
        'no-guard': 'true',
        'no-ten-second-data': 'true',
        'memory-model': 'footprint',
      }),
    ).toMatchObject({
      metricDelay10S: 30,
      alarmEvaluationS: 0,
      levelPollS: 5,
      eventToLambdaS: 2,
      guard: false,
      tenSecondData: false,
      memoryModel: 'footprint',
    });
    expect(assumptionsFrom({})).toMatchObject({ guard: undefined, tenSecondData: undefined, memoryModel: undefined });
    expect(() => assumptionsFrom({ 'alarm-eval': '-1', 'memory-model': 'guess' })).toThrow(
      /--alarm-eval: got '-1'; allowed: a number >= 0; --memory-model: got 'guess'; allowed: profile or footprint/,
    );
    const err = jest.spyOn(console, 'error').mockImplementation(() => {});
    try {
      expect(main(['stray'])).toBe(2);
      expect(main(['--matrix', '--seeds', '0'])).toBe(2);
      expect(main(['--qps', '3'])).toBe(2); // neither --matrix nor an example and a trace
      expect(err.mock.calls.map(c => String(c[0])).join('\n')).toMatch(
        /unexpected argument 'stray'[\s\S]*--seeds: got '0'[\s\S]*give --matrix, or --example and --trace/,
      );
    } finally {
      err.mockRestore();
    }
    // No arguments: the usage, in no time (the matrix runs only when asked).
    const log = jest.spyOn(console, 'log').mockImplementation(() => {});
    try {
      expect(main([])).toBe(0);
      expect(String(log.mock.calls[0][0])).toMatch(/^usage: sagemaker-resilient-endpoint simulate[\s\S]*--matrix/);
    } finally {
      log.mockRestore();
    }
  });
});

describe('a normal day and the way back (issue 36): the protection does not fire when nothing is wrong, and lets go after', () => {
  // Half an hour here (CPU in the test run); `simulate --matrix` runs whole days.
  const hour = 1800;

  test('each example at its nominal peak for half an hour, on its own workload, settled as autoscaling holds it: never degraded, nothing refused by the guard, nothing failed', () => {
    const rows = normalDayMatrix(
      { recommender: exampleEndpoint('recommender'), clustering: exampleEndpoint('clustering') },
      { seeds: [7], seconds: hour, days: ['steady peak'] },
    );
    expect(rows.map(r => [r.example, r.day, r.qps])).toEqual([
      ['recommender', 'steady peak', '300'],
      ['clustering', 'steady peak', '200'],
    ]);
    for (const { result: r } of rows) {
      expect(r.arrivals).toBeGreaterThan(0.95 * 200 * hour);
      expect(r).toMatchObject({ timeDegradedS: 0, rejectedByGuard: 0, rejectedByBackstop: 0, failed: 0, oomEvents: 0 });
      expect(r.stateSeconds.CLOSED).toBe(hour + 600);
      expect(meetsDayGoal(r)).toBe(true);
    }
    // The recommender as it was (150 QPS an instance, up to 4): the same half hour is degraded for much of it.
    const { primary, fallback } = simVariantsFrom(exampleEndpoint('recommender'));
    const before = runSimulation(poissonTrace(300, hour), {
      primary: { ...primary, initialCount: 2, scaling: { ...primary.scaling!, qpsPerInstance: 150, max: 4 } },
      fallback,
      autoscaling: true,
      breaker: exampleEndpoint('recommender').circuitBreaker!.config,
      metricPeriodS: 10,
      seed: 7,
      assumptions: { memoryModel: 'footprint' },
    });
    expect(before.timeDegradedS).toBeGreaterThan(hour / 4);
    expect(meetsDayGoal(before)).toBe(false);
  });

  test('after a 17× pulse the breaker is CLOSED again within 15 minutes of the traffic’s return, and the table says when', () => {
    const trace = pulseTrace(40, 17, { before: 300, ramp: 300, hold: 600, after: 1500 });
    expect(pulseReturnS(trace)).toBe(1500);
    const [row] = guardMatrix({ recommender: exampleEndpoint('recommender') }, { seeds: [7], factors: [17], trace: () => trace });
    expect(row.result.levelChanges.length).toBeGreaterThan(0); // the pulse did move the breaker
    expect(row.backToClosedS).toBeDefined();
    expect(row.backToClosedS!).toBeLessThanOrEqual(GOAL_BACK_TO_CLOSED_S);
    expect(goalTable([row], () => true)).toContain(`| ${(row.backToClosedS! / 60).toFixed(1)} min | met |`);
  });

  test('backToClosed: the first CLOSED after the return that holds for the probation (or to the end); a later escalation on normal traffic does not count; never CLOSED, no time', () => {
    const series = (states: number[]) => ({ series: states.map((state, i) => ({ t: i * 10, state })) }) as unknown as simulation.SimResult;
    expect(backToClosed(series([0, 1, 1, 3, 0, 0]), 20)).toBe(20);
    expect(backToClosed(series([0, 1, 0, 0, 0, 0]), 50)).toBe(0);
    expect(backToClosed(series([1, 1, 0, 0, 0, 0, 1, 1]), 0, 40)).toBe(20); // CLOSED 40 s, then a new escalation
    expect(backToClosed(series([1, 0, 1, 1, 0, 0, 0, 0, 0]), 0, 40)).toBe(40); // a failed probe 10 s after CLOSED
    expect(backToClosed(series([0, 0, 1, 1]), 0)).toBeUndefined();
    expect(backToClosed(series([]), 0)).toBeUndefined();
  });

  test('the normal-day goal: ≤ 90 s degraded, nothing refused by the guard, no OOM; the table names what first moved the level', () => {
    const ok = { oomEvents: 0, timeDegradedS: 90, rejectedByGuard: 0, rejectedByBackstop: 0 } as simulation.SimResult;
    expect(meetsDayGoal(ok)).toBe(true);
    expect(meetsDayGoal({ ...ok, timeDegradedS: 91 })).toBe(false);
    expect(meetsDayGoal({ ...ok, rejectedByGuard: 1 })).toBe(false);
    expect(meetsDayGoal({ ...ok, rejectedByBackstop: 1 })).toBe(false);
    expect(meetsDayGoal({ ...ok, oomEvents: 1 })).toBe(false);
    const r = {
      ...ok,
      failed: 3,
      stateSeconds: { CLOSED: 100, DEGRADED: 60, OPEN: 0, RECOVERING: 30 },
      levelChanges: [{ t: 7200, level: 1, state: 'DEGRADED', why: 'memory 81 % ≥ 80 %: DEGRADED' }],
    } as unknown as simulation.SimResult;
    const table = dayTable([{ example: 'x', day: 'diurnal', qps: '40–200', seed: 1, result: r }]);
    expect(table).toContain('| x | diurnal | 40–200 | 1 | 90 s | 90 s | 0 | 3 | 0 | 1 | 2.00 h: memory 81 % ≥ 80 %: DEGRADED | met |');
    expect(table).toMatch(/met in 1 of 1 runs/);
  });
});
