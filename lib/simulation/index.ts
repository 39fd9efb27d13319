import { ResilientEndpoint, VariantInfo } from '../resilient-endpoint';
import { DEFAULT_ASSUMPTIONS, runSimulation, SimAssumptions, SimConfig, SimResult, SimVariant } from './engine';
import { Trace } from './traces';

export * from './engine';
export * from './traces';
export * from './chart';

/**
 * The simulated variants of a synthesized-to-be `ResilientEndpoint`: instance hardware from the
 * catalog, workers from the tuning, footprint and sequence caps from the model, autoscaling and
 * breaker settings from the construct. A user simulates exactly what they deploy.
 */
export function simVariantsFrom(endpoint: ResilientEndpoint): { primary: SimVariant; fallback?: SimVariant } {
  const of = (v: VariantInfo): SimVariant => {
    const fp = v.model.memoryFootprint;
    const gpu = v.instanceType.isGpu;
    const footprintBytes = (gpu ? fp?.gpu?.toBytes() : fp?.host?.toBytes())
      ?? (gpu ? 0.25 * v.instanceType.spec.gpuMemoryGiB : 0.8 * v.instanceType.spec.memoryGiB / Math.max(1, v.tuning.workers)) * 1024 ** 3;
    const env = v.model.environment ?? {};
    const scaling = endpoint.autoScaling[v.variantName];
    return {
      name: v.variantName,
      spec: v.instanceType.spec,
      workers: v.tuning.workers,
      footprintBytes,
      maxSeqLen: Number(env.MAX_SEQ_LEN ?? DEFAULT_ASSUMPTIONS.seqMax),
      degradedMaxSeqLen: Number(env.DEGRADED_MAX_SEQ_LEN ?? Math.min(512, Number(env.MAX_SEQ_LEN ?? 512))),
      initialCount: v.instanceCount,
      scaling: scaling ? {
        min: scaling.capacity.min, max: scaling.capacity.max, qpsPerInstance: scaling.qpsPerInstance,
        scaleOutCooldownS: scaling.scaleOutCooldown.toSeconds(), scaleInCooldownS: scaling.scaleInCooldown.toSeconds(),
      } : undefined,
    };
  };
  return { primary: of(endpoint.primaryVariant), fallback: endpoint.fallbackVariant ? of(endpoint.fallbackVariant) : undefined };
}

/** One row of the comparison table. */
export interface ScenarioRow {
  readonly scenario: string;
  readonly result: SimResult;
}

/**
 * Runs the same trace (same seed) three ways: static capacity, autoscaling alone, and
 * autoscaling + circuit breaker (with the fallback variant when the endpoint has one).
 */
export function compareScenarios(trace: Trace, endpoint: ResilientEndpoint, opts: { seed?: number; assumptions?: Partial<SimAssumptions>; onProgress?: (scenario: string, f: number) => void } = {}): ScenarioRow[] {
  const { primary, fallback } = simVariantsFrom(endpoint);
  const seed = opts.seed ?? 42;
  const breaker = endpoint.circuitBreaker?.config;
  const scenarios: [string, Omit<SimConfig, 'seed'>][] = [
    ['static capacity', { primary: { ...primary, scaling: undefined }, autoscaling: false }],
    ['autoscaling', { primary, autoscaling: true }],
    ['autoscaling + breaker', { primary, fallback, autoscaling: true, breaker }],
  ];
  return scenarios
    .filter(([name]) => name !== 'autoscaling + breaker' || breaker)
    .map(([scenario, c]) => ({
      scenario,
      result: runSimulation(trace, { ...c, seed, assumptions: opts.assumptions, onProgress: f => opts.onProgress?.(scenario, f) }),
    }));
}

/** The comparison as a Markdown table. */
export function comparisonTable(rows: ScenarioRow[]): string {
  const fmt = (s?: number) => (s === undefined ? '—' : s >= 120 ? `${(s / 60).toFixed(1)} min` : `${s} s`);
  const lines = [
    '| scenario | requests | OOM events | failed (of which OOM) | failed % | rejected by design | served by fallback | threshold → degraded | time degraded | max memory | instance-minutes |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const { scenario, result: r } of rows) {
    lines.push(`| ${scenario} | ${r.arrivals} | ${r.oomEvents} | ${r.failed} (${r.failedByOom}) | ${(100 * r.failed / Math.max(1, r.arrivals)).toFixed(2)} % | ${r.rejected} | ${r.servedByFallback} | ${fmt(r.timeToDegradeS)} | ${fmt(r.timeDegradedS)} | ${r.maxPrimaryMemoryPercent} % | ${r.instanceMinutes} |`);
  }
  return lines.join('\n');
}
