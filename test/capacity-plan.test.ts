// The capacity planner (lib/capacity-plan.ts).
import { Size } from 'aws-cdk-lib';
import { main } from '../bin/cli';
import { CapacityPlan, CapacityPlanProps, SageMakerInstanceType } from '../lib';

describe('capacity planner', () => {
  test('incident B: 50 ms × 200 QPS × 1.3 = 13 vCPU → 4 × ml.m5.xlarge, not one 4-vCPU instance', () => {
    const plan = CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 200, modelMemory: Size.mebibytes(2150) });
    expect(plan.slotsNeeded).toBe(13);
    expect(plan.instanceType.name).toBe('ml.m5.xlarge');
    expect(plan.instanceCount).toBe(4);
    expect(plan.workersPerInstance).toBe(6);
    expect(plan.instanceCount * Math.min(plan.instanceType.spec.vCpus, plan.workersPerInstance)).toBeGreaterThanOrEqual(13);
    expect(plan.arithmetic[0]).toBe('parallel vCPUs needed = 50 ms × 200 QPS / 1000 × 1.3 = 13 → 13');
  });

  test('GPU model: copies per T4/A10G, at least 2 instances', () => {
    const plan = CapacityPlan.compute({ p50LatencyMs: 120, peakQps: 100, gpuMemory: Size.gibibytes(4) });
    expect(plan.instanceType.isGpu).toBe(true);
    expect(plan.instanceCount).toBeGreaterThanOrEqual(2);
    expect(plan.instanceCount * plan.workersPerInstance).toBeGreaterThanOrEqual(16);
  });

  test('a model larger than any instance is a clear error naming the largest type tried', () => {
    expect(() => CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 10, gpuMemory: Size.gibibytes(30) })).toThrow(
      /no instance type fits one model copy needing 30\.0 GiB of GPU memory.*largest tried was ml\.g5\.\w+ \(24 GiB per GPU\)/,
    );
    expect(() => CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 10, modelMemory: Size.gibibytes(900) })).toThrow(
      /largest tried was ml\.r5\.24xlarge \(768 GiB\)/,
    );
    expect(() => CapacityPlan.compute({ p50LatencyMs: 0, peakQps: -1 })).toThrow(/p50LatencyMs: got 0.*peakQps: got -1/);
  });

  test('from the terminal: the plan on stdout, exit 0; a missing option prints the usage, exit 2', () => {
    const out = jest.spyOn(console, 'log').mockImplementation(() => {});
    const err = jest.spyOn(console, 'error').mockImplementation(() => {});
    try {
      expect(main(['plan', '--latency', '50', '--qps', '200', '--model-gib', '2.1'])).toBe(0);
      const printed = out.mock.calls.map(c => String(c[0])).join('\n');
      expect(printed).toMatch(/instance type\s+ml\.m5\.xlarge/);
      expect(printed).toMatch(/instance count\s+4/);
      expect(main(['plan', '--qps', '200'])).toBe(2);
      expect(String(err.mock.calls[0][0])).toMatch(/^plan: --latency is required\n\nusage: sagemaker-resilient-endpoint plan --latency/);
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
  });
});

/** 10 ms × 100 QPS × 1.3 = 1.3 → 2 slots: small enough that the minimum instance count and the type decide. */
const twoSlots = (o: Partial<CapacityPlanProps> = {}) => CapacityPlan.compute({ p50LatencyMs: 10, peakQps: 100, ...o });

// Expected values worked by hand from the catalog (lib/instance-types.ts) and the tuning rule
// (workers = ⌊vCPUs × 1.5⌋, capped to ⌊80 % of memory / footprint⌋; on GPU ⌊80 % of a GPU / footprint⌋
// copies per GPU), not by calling the planner's own helpers.
describe('capacity planner: the choice among the types that fit', () => {
  test('GPU: 120 ms × 100 QPS × 1.3 = 15.6 → 16 copies; 4 GiB fits 4 per A10G (24 GiB) and 3 per T4 (16 GiB): 4 × ml.g5.xlarge (16 vCPUs) beats 6 × ml.g4dn.xlarge (24)', () => {
    const plan = CapacityPlan.compute({ p50LatencyMs: 120, peakQps: 100, gpuMemory: Size.gibibytes(4) });
    expect([plan.instanceType.name, plan.instanceCount, plan.workersPerInstance, plan.slotsNeeded]).toEqual(['ml.g5.xlarge', 4, 4, 16]);
    // Issue 40: the host memory is not known (no modelMemory), so no host headroom (it used to say 100 %);
    // the GPU's is: 4 copies × 4 GiB of the A10G's 24 GiB leave 1 − 16/24 = 33 %.
    expect(plan.memoryHeadroomPercent).toBeUndefined();
    expect(plan.gpuMemoryHeadroomPercent).toBe(33);
    expect(plan.arithmetic).toEqual([
      'parallel model copies needed = 120 ms × 100 QPS / 1000 × 1.3 = 15.6 → 16',
      'ml.g5.xlarge: 4 model copies per instance → 4 instance(s) (at least 2) = 16 model copies',
      'workers per instance = 4',
      'GPU memory 4 copies per GPU × 4.00 GiB of 24 GiB → 33 % headroom',
    ]);
    expect(plan.toTable().split('\n').slice(3, 5)).toEqual([
      "host memory headroom  not known: the model's host memory was not given (modelMemory, --model-gib)",
      'GPU memory headroom   33 %',
    ]);
  });

  test('headroom only where the memory is known: none on a CPU plan without modelMemory; on a multi-GPU type, per GPU', () => {
    const cpu = twoSlots();
    expect(cpu.memoryHeadroomPercent).toBeUndefined();
    expect(cpu.gpuMemoryHeadroomPercent).toBeUndefined();
    expect(cpu.toTable()).toMatch(/^host memory headroom {2}not known: the model's host memory was not given \(modelMemory, --model-gib\)$/m);
    expect(cpu.toTable()).not.toMatch(/GPU memory headroom|\d+ %/);
    // ml.g4dn.12xlarge: 4 T4s of 16 GiB, 48 vCPUs, 192 GiB. 5 GiB copies: ⌊0.8 × 16 / 5⌋ = 2 per GPU → 8 workers;
    // per GPU 2 × 5 = 10 of 16 GiB → 38 % free (37.5 rounded); host 8 × 3 GiB = 24 of 192 GiB → 88 % free (87.5).
    const multi = CapacityPlan.compute({
      p50LatencyMs: 100,
      peakQps: 100,
      gpuMemory: Size.gibibytes(5),
      modelMemory: Size.gibibytes(3),
      candidates: [SageMakerInstanceType.ML_G4DN_12XLARGE],
    });
    expect([multi.workersPerInstance, multi.gpuMemoryHeadroomPercent, multi.memoryHeadroomPercent]).toEqual([8, 38, 88]);
    const noGpuMemory = CapacityPlan.compute({ p50LatencyMs: 100, peakQps: 100, requiresGpu: true, modelMemory: Size.gibibytes(3) });
    expect(noGpuMemory.gpuMemoryHeadroomPercent).toBeUndefined();
    expect(noGpuMemory.toTable()).toMatch(/^GPU memory headroom {3}not known: the model's GPU memory was not given \(gpuMemory, --gpu-gib\)$/m);
  });

  test("incident B's plan in full: 6 workers × 2.10 GiB of 16 GiB leaves 21 % headroom; the table lists it", () => {
    const plan = CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 200, modelMemory: Size.mebibytes(2150) });
    expect(plan.memoryHeadroomPercent).toBe(21); // 1 − 6 × 2150 MiB / 16384 MiB = 21.3 %
    expect(plan.arithmetic.slice(1)).toEqual([
      'ml.m5.xlarge: 4 busy vCPUs per instance → 4 instance(s) (at least 2) = 16 vCPUs',
      'workers per instance = 6; memory 6 × 2.10 GiB of 16 GiB → 21 % headroom',
    ]);
    expect(plan.toTable().split('\n')).toEqual([
      'instance type         ml.m5.xlarge',
      'instance count        4',
      'workers per instance  6',
      'host memory headroom  21 %',
      '',
      ...plan.arithmetic,
    ]);
  });

  test('ties on vCPUs go to less memory, then to the smaller instance: 2 slots → 2 × ml.c5.xlarge (16 GiB), not ml.m5.xlarge (32) or one larger type', () => {
    // 10 ms × 100 QPS × 1.3 = 1.3 → 2; every 4-vCPU type needs its minimum of 2 instances (8 vCPUs).
    const plan = twoSlots();
    expect([plan.instanceType.name, plan.instanceCount, plan.slotsNeeded]).toEqual(['ml.c5.xlarge', 2, 2]);
    // m5.xlarge and m5.2xlarge tie on 16 vCPUs and 64 GiB for incident B: the smaller instance wins.
    const b = CapacityPlan.compute({
      p50LatencyMs: 50,
      peakQps: 200,
      modelMemory: Size.mebibytes(2150),
      candidates: [SageMakerInstanceType.ML_M5_2XLARGE, SageMakerInstanceType.ML_M5_XLARGE],
    });
    expect([b.instanceType.name, b.instanceCount]).toEqual(['ml.m5.xlarge', 4]);
  });

  test('the smallest instance is 4 vCPUs unless minVcpusPerInstance says otherwise; burstable types are never chosen', () => {
    expect(twoSlots({ minVcpusPerInstance: 2 }).instanceType.name).toBe('ml.c5.large');
    expect(twoSlots({ minVcpusPerInstance: 8 }).instanceType.name).toBe('ml.c5.2xlarge');
    // ml.t2.xlarge has the spec of ml.m5.xlarge and comes first: it is still skipped (incident B's lesson).
    const plan = twoSlots({ candidates: [SageMakerInstanceType.ML_T2_XLARGE, SageMakerInstanceType.ML_M5_XLARGE] });
    expect(plan.instanceType.name).toBe('ml.m5.xlarge');
    expect(() => twoSlots({ candidates: [SageMakerInstanceType.ML_T2_XLARGE] })).toThrow(
      "CapacityPlan: no candidate type qualifies: the plan needs a type without a GPU that is not burstable, has a known spec and at least 4 vCPUs (minVcpusPerInstance); the candidates were ml.t2.xlarge. Pass such a type in 'candidates', or lower minVcpusPerInstance.",
    );
  });

  test('minInstances raises the count; candidates limit the types', () => {
    const plan = twoSlots({ minInstances: 3, candidates: [SageMakerInstanceType.ML_R5_XLARGE] });
    expect([plan.instanceType.name, plan.instanceCount]).toEqual(['ml.r5.xlarge', 3]);
    expect(plan.arithmetic[1]).toBe('ml.r5.xlarge: 4 busy vCPUs per instance → 3 instance(s) (at least 3) = 12 vCPUs');
    expect(twoSlots({ minInstances: 1 }).instanceCount).toBe(1);
  });

  test("a model that does not fit 80 % of a type's memory rules the type out (7 GiB: not ml.c5.xlarge's 8 GiB)", () => {
    const plan = twoSlots({ modelMemory: Size.gibibytes(7) });
    expect([plan.instanceType.name, plan.workersPerInstance, plan.memoryHeadroomPercent]).toEqual(['ml.m5.xlarge', 1, 56]); // 1 − 7/16
  });

  test("a copy that does not fit 80 % of one GPU rules the type out (18 GiB: not a T4's 16 GiB, one per A10G)", () => {
    const plan = twoSlots({ gpuMemory: Size.gibibytes(18) });
    expect([plan.instanceType.name, plan.workersPerInstance, plan.instanceCount]).toEqual(['ml.g5.xlarge', 1, 2]);
  });

  test('requiresGpu picks GPU types without a GPU footprint, and false keeps a GPU footprint on CPU types', () => {
    const gpu = twoSlots({ requiresGpu: true });
    expect([gpu.instanceType.name, gpu.workersPerInstance]).toEqual(['ml.g4dn.xlarge', 1]); // one worker per GPU
    expect(gpu.arithmetic[0]).toMatch(/^parallel model copies needed/);
    const cpu = twoSlots({ requiresGpu: false, gpuMemory: Size.gibibytes(4) });
    expect(cpu.instanceType.isGpu).toBe(false);
    expect(cpu.arithmetic[0]).toMatch(/^parallel vCPUs needed/);
  });

  test('a need that is whole in decimal stays whole: 100 ms × 500 QPS × 1.1 = 55 slots (floating point gives 55.00000000000001)', () => {
    expect(CapacityPlan.compute({ p50LatencyMs: 100, peakQps: 500, safetyFactor: 1.1 }).slotsNeeded).toBe(55);
    expect(CapacityPlan.compute({ p50LatencyMs: 100, peakQps: 500, safetyFactor: 1.2 }).slotsNeeded).toBe(60);
    expect(CapacityPlan.compute({ p50LatencyMs: 101, peakQps: 500, safetyFactor: 1.1 }).slotsNeeded).toBe(56); // 55.55
  });

  test('bad inputs are named together with what is allowed; the edges of the allowed ranges pass', () => {
    expect(() => CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 200, safetyFactor: 0.9, minInstances: 0 })).toThrow(
      'CapacityPlan: safetyFactor: got 0.9; allowed: 1–3 (incident B used 1.2–1.5); minInstances: got 0; allowed: an integer ≥ 1',
    );
    expect(() => CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 200, safetyFactor: 3.1 })).toThrow(/safetyFactor: got 3\.1/);
    expect(() => CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 200, minInstances: 1.5 })).toThrow(/minInstances: got 1\.5/);
    expect(() => CapacityPlan.compute({ p50LatencyMs: Number.NaN, peakQps: 200 })).toThrow(/p50LatencyMs: got NaN; allowed: > 0/);
    expect(CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 200, safetyFactor: 1 }).slotsNeeded).toBe(10);
    expect(CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 200, safetyFactor: 3 }).slotsNeeded).toBe(30);
  });
});

test('no candidate that qualifies is its own error, naming what qualifies and what was offered (it read "the largest tried was none (undefined GiB per GPU)")', () => {
  expect(() => twoSlots({ requiresGpu: true, candidates: [SageMakerInstanceType.ML_M5_XLARGE] })).toThrow(
    /^CapacityPlan: no candidate type qualifies: the plan needs a GPU type that is not burstable, has a known spec and at least 4 vCPUs \(minVcpusPerInstance\); the candidates were ml\.m5\.xlarge\./,
  );
  expect(() => twoSlots({ candidates: [] })).toThrow(/the candidates were an empty list\./);
  expect(() => twoSlots({ minVcpusPerInstance: 500 })).toThrow(
    /at least 500 vCPUs \(minVcpusPerInstance\); the candidates were the catalog's \d+ types\. /,
  );
});

test('exactly 80 % of memory still fits (a type of 10 GiB, a model of 8 GiB; a GPU of 10 GiB, a copy of 8 GiB); the message states the need', () => {
  const host = SageMakerInstanceType.of('ml.m5.custom', { vCpus: 4, memoryGiB: 10 });
  const h = twoSlots({ modelMemory: Size.gibibytes(8), candidates: [host] });
  expect([h.instanceType.name, h.workersPerInstance, h.memoryHeadroomPercent]).toEqual(['ml.m5.custom', 1, 20]);
  const gpu = SageMakerInstanceType.of('ml.g5.custom', { vCpus: 4, memoryGiB: 16, gpuCount: 1, gpuMemoryGiB: 10 });
  expect(twoSlots({ gpuMemory: Size.gibibytes(8), candidates: [gpu] }).workersPerInstance).toBe(1);
  expect(() => twoSlots({ modelMemory: Size.mebibytes(8 * 1024 + 1), candidates: [host] })).toThrow(
    'CapacityPlan: no instance type fits one model copy needing 8.0 GiB of memory within 80 % of memory; the largest tried was ml.m5.custom (10 GiB).',
  );
  expect(() => CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 10, modelMemory: Size.gibibytes(900) })).toThrow(
    /needing 900\.0 GiB of memory within 80 %/,
  );
  expect(() => CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 0 })).toThrow('CapacityPlan: peakQps: got 0; allowed: > 0');
});
