// The capacity planner (lib/capacity-plan.ts).
import { Size } from 'aws-cdk-lib';
import { main } from '../bin/cli';
import { CapacityPlan } from '../lib';

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
      expect(String(err.mock.calls[0][0])).toMatch(/^usage: sagemaker-resilient-endpoint [\s\S]*sagemaker-resilient-endpoint plan --latency/);
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
  });
});
