import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Template } from 'aws-cdk-lib/assertions';
import { ContainerImage, MemoryProfile, ProductionReadinessChecks, ResilientEndpoint, RuleLevel, SageMakerInstanceType } from '../lib';
import { boundedParetoQuantile, latencyAt, latencyCurve } from '../lib/memory-profile';
import { newStack, synthError, warnings } from './util';

const MiB = 2 ** 20;
const image = ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1');
/** A profile as the runtime helper's profiler writes it (examples/models/recommender/memory-profile.json's shape). */
const profileJson = (o: Partial<{ baseline: number; c: number; p999: number }> = {}, fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    version: 1,
    sizeUnit: 'events',
    device: 'cpu',
    baselineBytes: o.baseline ?? 275 * MiB,
    curve: { a: 0, b: 3527, c: o.c ?? 16.02 },
    percentiles: { p50: { size: 11, bytes: 40000 }, p99: { size: 444, bytes: 4.7 * MiB }, p999: { size: o.p999 ?? 2801, bytes: 135 * MiB } },
    points: [],
    leak: null,
    ...fields,
  });
const file = (text: string) => {
  const p = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'profile-')), 'memory-profile.json');
  fs.writeFileSync(p, text);
  return p;
};
function endpoint(profile: MemoryProfile, environment: Record<string, string> = {}, instanceType = SageMakerInstanceType.ML_M5_XLARGE) {
  const { app, stack } = newStack();
  new ResilientEndpoint(stack, 'E', {
    model: { image, memoryProfile: profile, environment },
    instanceType,
    monitoring: { notify: { emails: ['a@example.com'] } },
  });
  return { app, stack };
}
const envOf = (stack: any) =>
  (Object.values(Template.fromStack(stack).findResources('AWS::SageMaker::Model'))[0] as any).Properties.PrimaryContainer.Environment as Record<
    string,
    string
  >;

test('the curve and its numbers: the estimate, and the largest size within a number of bytes', () => {
  const p = MemoryProfile.fromJson(profileJson());
  expect(p.estimateBytes(1000)).toBeCloseTo(3527 * 1000 + 16.02 * 1000 * 1000);
  const n = p.largestSizeWithin(100 * MiB);
  expect(p.estimateBytes(n)).toBeLessThanOrEqual(100 * MiB);
  expect(p.estimateBytes(n + 1)).toBeGreaterThan(100 * MiB);
  expect(p.p999).toEqual({ size: 2801, bytes: 135 * MiB });
});

test("the container gets its budget, each worker's share, the guard's curve and the largest size a worker admits; the footprint follows the profile", () => {
  // ml.m5.xlarge: 16 GiB; the footprint 275 MiB + the admitted P99.9 (MAX_SEQ_LEN 1024 caps it) → 6 workers (4 vCPU × 1.5).
  const { stack } = endpoint(MemoryProfile.fromFile(file(profileJson())), { MAX_SEQ_LEN: '1024' });
  const env = envOf(stack);
  // The guard's hard edge: 90 % of the instance for the whole container (lib/breaker/contract.ts), above the breaker's 80 %.
  expect(Number(env.RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES)).toBe(Math.floor(0.9 * 16 * 1024 ** 3));
  expect(env.RESILIENT_ENDPOINT_CONTAINER_BUDGET_PERCENT).toBe('90');
  expect(env.RESILIENT_ENDPOINT_CONTAINER_GPU_MEMORY_BYTES).toBeUndefined();
  expect(Number(env.RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES)).toBe(Math.floor(Math.floor(0.9 * 16 * 1024 ** 3) / 6));
  expect(JSON.parse(env.RESILIENT_ENDPOINT_MEMORY_CURVE)).toEqual({ a: 0, b: 3527, c: 16.02 });
  expect(JSON.parse(env.RESILIENT_ENDPOINT_PROFILE_P999)).toEqual({ size: 1024, bytes: Math.round(3527 * 1024 + 16.02 * 1024 * 1024) });
  const admissible = Number(env.RESILIENT_ENDPOINT_MAX_ADMISSIBLE_SIZE);
  const room = Math.floor(Math.floor(0.9 * 16 * 1024 ** 3) / 6) - 275 * MiB;
  expect(3527 * admissible + 16.02 * admissible ** 2).toBeLessThanOrEqual(room);
  expect(3527 * (admissible + 1) + 16.02 * (admissible + 1) ** 2).toBeGreaterThan(room);
  expect(Number(env.RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES)).toBe(275 * MiB + Math.round(3527 * 1024 + 16.02 * 1024 * 1024));
});

test('RE-ProfiledMemory fails cdk synth when the profiled P99.9 request cannot fit a worker, and passes when it can', () => {
  const findings = (stack: any) =>
    ProductionReadinessChecks.checkTemplate(Template.fromStack(stack).toJSON()).filter(f => f.ruleId === 'RE-ProfiledMemory');
  // A model of 3.5 GiB loaded on a 4 GiB ml.c5.large: one worker, whose budget is 3.6 GiB (90 %), and the P99.9 request needs 135 MiB more.
  const heavy = endpoint(MemoryProfile.fromJson(profileJson({ baseline: 3.5 * 1024 * MiB })), {}, SageMakerInstanceType.ML_C5_LARGE).stack;
  const [f] = findings(heavy);
  expect(f.level).toBe(RuleLevel.ERROR);
  expect(f.message).toMatch(
    /the profiled P99\.9 request \(size 2801\) needs \d+ MiB on top of the loaded model's 3584 MiB, more than a worker's budget of 3686 MiB/,
  );
  expect(findings(endpoint(MemoryProfile.fromJson(profileJson()), { MAX_SEQ_LEN: '1024' }).stack)).toEqual([]);
});

test('MAX_SEQ_LEN above what a worker can hold is a warning that names the size that fits', () => {
  // 400 bytes per event²: a 3000-event request needs 3.4 GiB, more than the one worker's 3.2 GiB budget on ml.c5.large.
  const { stack } = endpoint(MemoryProfile.fromJson(profileJson({ c: 400 })), { MAX_SEQ_LEN: '3000' }, SageMakerInstanceType.ML_C5_LARGE);
  expect(warnings(stack).join('\n')).toMatch(
    /Primary: MAX_SEQ_LEN 3000 admits requests a worker cannot hold: the profile says a worker's budget takes events up to \d+\. .*set MAX_SEQ_LEN to \d+ or less/,
  );
});

test('a missing or malformed profile is a synth error naming it, not an exception', () => {
  for (const [profile, why] of [
    [MemoryProfile.fromFile('/nonexistent/memory-profile.json'), /ENOENT/],
    [MemoryProfile.fromFile(file('{"curve": 1}')), /not a memory profile/],
    [MemoryProfile.fromJson('{nope'), /not JSON/],
  ] as const) {
    const { app } = endpoint(profile);
    expect(synthError(app)).toMatch(
      new RegExp(`\\[Test/E\\] model\\.memoryProfile: got .*${why.source}.*Fix: run python3 -m resilient_endpoint_runtime\\.profile`),
    );
  }
});

test('without a profile the budget is still written (the guard and the stage metrics judge the worker against it)', () => {
  const { stack } = newStack();
  new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_G4DN_2XLARGE });
  const env = envOf(stack);
  expect(Number(env.RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES)).toBe(Math.floor(0.9 * 32 * 1024 ** 3));
  expect(Number(env.RESILIENT_ENDPOINT_WORKER_GPU_MEMORY_BYTES)).toBe(Math.floor(0.9 * 16 * 1024 ** 3));
  expect(Number(env.RESILIENT_ENDPOINT_CONTAINER_GPU_MEMORY_BYTES)).toBe(Math.floor(0.9 * 16 * 1024 ** 3));
  expect(env.RESILIENT_ENDPOINT_MEMORY_CURVE).toBeUndefined();
});

describe('guardBudgetPercent: the container budget on a multi-GPU type, and a CPU profile driving a GPU variant', () => {
  let env: Record<string, string>;
  let warned: string;
  beforeAll(() => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', {
      // measured on the CPU (device 'cpu'), served on 4 T4 GPUs
      model: { image, memoryProfile: MemoryProfile.fromJson(profileJson()), guardBudgetPercent: 85 },
      modelServer: { workers: 8 },
      instanceType: SageMakerInstanceType.ML_G4DN_12XLARGE,
    });
    env = envOf(stack);
    warned = warnings(stack).join('\n');
  });

  test('85 % of the instance and of each GPU; each worker gets the share of the GPU it is on (8 workers on 4 GPUs: 2 each)', () => {
    expect(Number(env.RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES)).toBe(Math.floor(0.85 * 192 * 1024 ** 3));
    expect(Number(env.RESILIENT_ENDPOINT_CONTAINER_GPU_MEMORY_BYTES)).toBe(Math.floor(0.85 * 16 * 1024 ** 3));
    expect(env.RESILIENT_ENDPOINT_CONTAINER_BUDGET_PERCENT).toBe('85');
    expect(Number(env.RESILIENT_ENDPOINT_WORKER_GPU_MEMORY_BYTES)).toBe(Math.floor(Math.floor(0.85 * 16 * 1024 ** 3) / 2));
  });

  test('a CPU-measured profile driving a GPU variant is a warning that says to profile on a GPU', () => {
    expect(warned).toMatch(
      /Primary: model\.memoryProfile was measured on the CPU .* but ml\.g4dn\.12xlarge serves on its GPU: .*Profile on a GPU instance/,
    );
  });
});

test('guardBudgetPercent outside 50–99, or written as a fraction, is a synth error naming the prop (all at once)', () => {
  const { app, stack } = newStack();
  new ResilientEndpoint(stack, 'E', {
    model: { image, guardBudgetPercent: 0.9 },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    fallback: { model: { image, guardBudgetPercent: 120 }, instanceType: SageMakerInstanceType.ML_M5_LARGE },
    shadow: { model: { image, guardBudgetPercent: 85.5 }, instanceType: SageMakerInstanceType.ML_M5_LARGE },
  } as any);
  const error = synthError(app);
  expect(error).toMatch(
    /model\.guardBudgetPercent: got 0\.9; allowed: a whole percent from 50 to 99\. Fix: write 90 \(percent\), not the fraction 0\.9/,
  );
  expect(error).toMatch(/fallback\.model\.guardBudgetPercent: got 120; allowed: an integer from 50 to 99\. Fix: a whole percent/);
  expect(error).toMatch(/shadow\.model\.guardBudgetPercent: got 85\.5; allowed: an integer from 50 to 99/);
});

test("the examples' committed profiles are what the profiler writes, and their stacks pass the rule", () => {
  for (const name of ['recommender', 'clustering']) {
    const p = MemoryProfile.fromFile(path.join(__dirname, '..', 'examples', 'models', name, 'memory-profile.json'));
    expect(p.problem).toBeUndefined();
    expect(p.baselineBytes).toBeGreaterThan(100 * MiB); // a Python worker with torch or scikit-learn loaded
  }
  const rec = MemoryProfile.fromFile(path.join(__dirname, '..', 'examples', 'models', 'recommender', 'memory-profile.json'));
  expect(rec.curve.c).toBeGreaterThan(0); // attention: quadratic in the sequence length
});

describe('reading a profile: every field the profiler writes, and what is not a profile', () => {
  const full = (o: Record<string, unknown> = {}) =>
    profileJson(
      {},
      {
        device: 'cuda',
        baselineBytes: 1000,
        curve: { a: 1, b: 2, c: 3 },
        percentiles: { p50: { size: 10, bytes: 20 }, p99: { size: 30, bytes: 40 }, p999: { size: 50, bytes: 60 } },
        points: [
          { size: 8, peakBytes: 900, latencyMs: 4.5, repeats: 3 },
          { size: 'x', peakBytes: 1, latencyMs: 1 },
          { size: 16, peakBytes: 1800 },
          null,
          { size: 12, latencyMs: 3 },
          { size: 32, peakBytes: 3600, latencyMs: 9 },
        ],
        distribution: 'powerlaw:5:3000',
        ...o,
      },
    );

  test('the fields, as written', () => {
    const p = MemoryProfile.fromJson(full());
    expect(p.problem).toBeUndefined();
    expect([p.sizeUnit, p.device, p.baselineBytes, p.distribution]).toEqual(['events', 'cuda', 1000, 'powerlaw:5:3000']);
    expect(p.curve).toEqual({ a: 1, b: 2, c: 3 });
    expect([p.p50, p.p99, p.p999]).toEqual([
      { size: 10, bytes: 20 },
      { size: 30, bytes: 40 },
      { size: 50, bytes: 60 },
    ]);
    // Points that ran (size, peak and latency all numbers), with only those three fields.
    expect(p.points).toEqual([
      { size: 8, peakBytes: 900, latencyMs: 4.5 },
      { size: 32, peakBytes: 3600, latencyMs: 9 },
    ]);
  });

  test('what the profiler may leave out: the unit is "size", the device anything but cuda is "cpu", no points, no distribution', () => {
    const p = MemoryProfile.fromJson(full({ sizeUnit: undefined, device: 'gpu', points: 'none', distribution: 7 }));
    expect(p.problem).toBeUndefined();
    expect([p.sizeUnit, p.device, p.points, p.distribution]).toEqual(['size', 'cpu', [], '']);
    expect(MemoryProfile.fromJson(full({ device: undefined })).device).toBe('cpu');
    // Zeros are measurements (a model with no constant cost), not gaps.
    expect(MemoryProfile.fromJson(full({ baselineBytes: 0, curve: { a: 0, b: 0, c: 0 } })).problem).toBeUndefined();
  });

  test.each([
    ['no baseline', { baselineBytes: undefined }],
    ['a negative baseline', { baselineBytes: -1 }],
    ['a baseline as text', { baselineBytes: '1000' }],
    ['an infinite baseline (1e400 parses as Infinity)', { baselineBytes: 'INFINITY' }],
    ['no curve', { curve: undefined }],
    ['a curve without b', { curve: { a: 1, c: 3 } }],
    ['a negative c', { curve: { a: 1, b: 2, c: -3 } }],
    ['no percentiles', { percentiles: undefined }],
    ['no P99', { percentiles: { p50: { size: 10, bytes: 20 }, p999: { size: 50, bytes: 60 } } }],
    ['a P99.9 without bytes', { percentiles: { p50: { size: 10, bytes: 20 }, p99: { size: 30, bytes: 40 }, p999: { size: 50 } } }],
    ['a P50 size as text', { percentiles: { p50: { size: '10', bytes: 20 }, p99: { size: 30, bytes: 40 }, p999: { size: 50, bytes: 60 } } }],
  ])('%s is not a profile: the problem names the source and what a profile has, and nothing is taken from it', (_what, change) => {
    const text = full(change).replace('"INFINITY"', '1e400'); // JSON.stringify would write Infinity as null
    const p = MemoryProfile.fromJson(text, 'models/reco/memory-profile.json');
    expect(p.problem).toBe(
      'models/reco/memory-profile.json: not a memory profile (baselineBytes, curve {a, b, c}, percentiles p50/p99/p999 {size, bytes})',
    );
    expect([p.baselineBytes, p.curve, p.p999, p.points, p.sizeUnit]).toEqual([0, { a: 0, b: 0, c: 0 }, { size: 0, bytes: 0 }, [], 'size']);
  });

  test('JSON that is no object, and text that is no JSON; the default source; a file names its path', () => {
    expect(MemoryProfile.fromJson('null').problem).toBe(
      'the profile: not a memory profile (baselineBytes, curve {a, b, c}, percentiles p50/p99/p999 {size, bytes})',
    );
    expect(MemoryProfile.fromJson('{nope', 'x.json').problem).toMatch(/^x\.json: not JSON \(.+\)$/);
    expect(MemoryProfile.fromFile('/nonexistent/memory-profile.json').problem).toMatch(/^\/nonexistent\/memory-profile\.json: ENOENT/);
    const f = file('[]');
    expect(MemoryProfile.fromFile(f).problem).toBe(
      `${f}: not a memory profile (baselineBytes, curve {a, b, c}, percentiles p50/p99/p999 {size, bytes})`,
    );
  });
});

describe('the largest size within a budget, on each shape of curve', () => {
  const curve = (a: number, b: number, c: number) => MemoryProfile.fromJson(profileJson({}, { curve: { a, b, c } }));
  test('quadratic: 1 × n² within 100 bytes is 10; within 99, 9; a constant cost above the budget admits nothing', () => {
    expect(curve(0, 0, 1).largestSizeWithin(100)).toBe(10);
    expect(curve(0, 0, 1).largestSizeWithin(99)).toBe(9);
    expect(curve(500, 0, 1).largestSizeWithin(400)).toBe(0);
    expect(curve(0, 0, 1).estimateBytes(10)).toBe(100);
    expect(curve(5, 2, 1).estimateBytes(3)).toBe(5 + 6 + 9);
  });
  test('quadratic where floating point lands just under a whole size: 0.1 × 43² = 184.9 bytes admits 43 (the root computes 42.99999999999999)', () => {
    expect(curve(0, 0, 0.1).largestSizeWithin(184.9)).toBe(43);
    expect(curve(0, 0, 0.1).largestSizeWithin(184.8)).toBe(42);
  });
  test('linear: 500 + 1000 × n within 10,500 bytes is 10; within 10,499, 9; within 500, 0; within 499, 0', () => {
    const p = curve(500, 1000, 0);
    expect([10_500, 10_499, 500, 499].map(b => p.largestSizeWithin(b))).toEqual([10, 9, 0, 0]);
  });
  test('flat: a request that adds nothing has no size limit (MAX_SAFE_INTEGER), unless its constant is above the budget', () => {
    expect(curve(0, 0, 0).largestSizeWithin(1)).toBe(Number.MAX_SAFE_INTEGER);
    expect(curve(100, 0, 0).largestSizeWithin(100)).toBe(Number.MAX_SAFE_INTEGER);
    expect(curve(100, 0, 0).largestSizeWithin(99)).toBe(0);
  });
});

test('latency by size: log-log interpolation between the measured points, held beyond them, floored at 1 µs; latencyCurve is latencyAt', () => {
  const points = [
    { size: 10, latencyMs: 20 },
    { size: 100, latencyMs: 200 },
    { size: 1000, latencyMs: 0 }, // a point that measured nothing: 0.001 ms on the log scale
  ];
  const curve = latencyCurve(points);
  expect(curve(10)).toBeCloseTo(20, 9);
  expect(curve(100)).toBeCloseTo(200, 9);
  expect(curve(Math.sqrt(10 * 100))).toBeCloseTo(Math.sqrt(20 * 200), 9); // halfway on log size: halfway on log latency
  expect(curve(1)).toBeCloseTo(20, 9); // below the first point: held
  expect(curve(5000)).toBeCloseTo(0.001, 9); // beyond the last: held, at the floor
  expect(curve(Math.sqrt(100 * 1000))).toBeCloseTo(Math.sqrt(200 * 0.001), 9);
  // Two points of one size: the first one's latency, no division by zero.
  expect(
    latencyCurve([
      { size: 10, latencyMs: 7 },
      { size: 10, latencyMs: 9 },
    ])(10),
  ).toBe(7);
  for (const size of [1, 10, 31.6, 99, 100, 316, 1000, 1e6]) expect(latencyAt(points, size)).toBe(curve(size));
});

test("a bounded power law's quantile inverts its CDF F(x) = (1 − (lo/x)^α) / (1 − (lo/hi)^α), for α other than 1 too", () => {
  // By hand, lo 1, hi 100, α 2, u 0.5: 1/x² = 1 − 0.5 · (1 − 10⁻⁴) = 0.50005, x = 1/√0.50005 = 1.414143.
  expect(boundedParetoQuantile(0.5, 1, 100, 2)).toBeCloseTo(1.414143, 5);
  // α 1, the profiles' default: 1/x = 1 − 0.5 · 0.99 = 0.505, x = 1.980198.
  expect(boundedParetoQuantile(0.5, 1, 100, 1)).toBeCloseTo(1.980198, 5);
  // The bounds at u 0 and 1.
  expect(boundedParetoQuantile(0, 5, 3000, 2)).toBeCloseTo(5, 9);
  expect(boundedParetoQuantile(1, 5, 3000, 2)).toBeCloseTo(3000, 6);
});
