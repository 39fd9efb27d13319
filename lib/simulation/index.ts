import { ResilientEndpoint } from '../resilient-endpoint';
import { ModelServer, wholeBytes } from '../model-server';
import { Stack } from 'aws-cdk-lib';
import { CONTAINER_BUDGET_DEFAULT_PERCENT, CONTAINER_BUDGET_ENV, GUARD_METRICS } from '../breaker/contract';
import { VariantInfo } from '../resilient-endpoint-props';
import {
  CURRENT_BREAKER,
  DEFAULT_ASSUMPTIONS,
  runSimulation,
  SCENARIOS,
  SimAssumptions,
  SimConfig,
  ScenarioRow,
  SimResult,
  SimVariant,
  WEIGHTS_ONLY_BREAKER,
} from './engine';
import { Trace } from './traces';

export * from './engine';
export * from './traces';
export * from './chart';
export * from './causes';
import { LEVEL_CAUSE_NAMES, levelCause } from './causes';
export * from './calibration';
export * from './units';

/**
 * The simulated variants of a synthesized-to-be `ResilientEndpoint`: instance hardware from the
 * catalog, workers from the tuning, footprint and sequence caps from the model, autoscaling and
 * breaker settings from the construct. A user simulates exactly what they deploy.
 */
export function simVariantsFrom(endpoint: ResilientEndpoint): { primary: SimVariant; fallback?: SimVariant } {
  const of = (v: VariantInfo): SimVariant => {
    const fp = v.model.memoryFootprint;
    const gpu = v.instanceType.isGpu;
    const stated = gpu ? fp?.gpu : fp?.host;
    const footprintBytes = stated
      ? wholeBytes(stated)
      : (gpu ? 0.25 * v.instanceType.spec.gpuMemoryGiB : (0.8 * v.instanceType.spec.memoryGiB) / Math.max(1, v.tuning.workers)) * 1024 ** 3;
    const env = v.model.environment ?? {};
    const scaling = endpoint.autoScaling[v.variantName];
    const p = v.model.memoryProfile;
    const budget = containerBudget(endpoint, v);
    const bounds = /^powerlaw:([\d.]+):([\d.]+)(?::([\d.]+))?/.exec(p?.distribution ?? '');
    return {
      name: v.variantName,
      profile:
        p && !p.problem
          ? {
              baselineBytes: p.baselineBytes,
              curve: p.curve,
              latency: p.points.map(x => [x.size, x.latencyMs] as [number, number]),
              sizeMin: bounds ? Number(bounds[1]) : undefined,
              sizeMax: bounds ? Number(bounds[2]) : undefined,
              sizeAlpha: bounds?.[3] !== undefined ? Number(bounds[3]) : undefined,
            }
          : undefined,
      guardBudgetBytes: budget,
      spec: v.instanceType.spec,
      workers: v.tuning.workers,
      footprintBytes,
      maxSeqLen: Number(env.MAX_SEQ_LEN ?? DEFAULT_ASSUMPTIONS.seqMax),
      degradedMaxSeqLen: Number(env.DEGRADED_MAX_SEQ_LEN ?? Math.min(512, Number(env.MAX_SEQ_LEN ?? 512))),
      initialCount: v.instanceCount,
      queueLimit: serverQueue(v),
      scaling: scaling
        ? {
            min: scaling.capacity.min,
            max: scaling.capacity.max,
            qpsPerInstance: scaling.qpsPerInstance,
            scaleOutCooldownS: scaling.scaleOutCooldown.toSeconds(),
            scaleInCooldownS: scaling.scaleInCooldown.toSeconds(),
            // The memory policy as synthesized: its metric, its target on it, whether it scales in.
            memoryTargetPercent:
              scaling.memoryTracking && scaling.memoryTracking.metricName === 'GPUMemoryUtilization'
                ? scaling.memoryTracking.targetValue / Math.max(1, v.instanceType.spec.gpuCount)
                : scaling.memoryTracking?.targetValue,
            memoryScaleIn: scaling.memoryTracking?.scaleIn,
            memoryMetric: scaling.memoryTracking
              ? scaling.memoryTracking.metricName === GUARD_METRICS.IN_FLIGHT
                ? 'inFlight'
                : 'memory'
              : undefined,
          }
        : undefined,
    };
  };
  return { primary: of(endpoint.primaryVariant), fallback: endpoint.fallbackVariant ? of(endpoint.fallbackVariant) : undefined };
}

/** gunicorn's default listen backlog (its `backlog` setting), the queue of the images that serve with gunicorn. */
export const GUNICORN_BACKLOG = 2048;

/**
 * How many requests an instance of the variant holds waiting: the job queue TorchServe and MMS read
 * (`TS_JOB_QUEUE_SIZE` / `MMS_JOB_QUEUE_SIZE`, default 100), gunicorn's backlog for the scikit-learn and
 * XGBoost images; undefined for a custom server (the simulator's default then).
 */
export function serverQueue(v: VariantInfo): number | undefined {
  const env = { ...v.tuning.environment, ...(v.model.environment ?? {}) };
  switch (v.tuning.server) {
    case ModelServer.TORCHSERVE:
      return Number(env.TS_JOB_QUEUE_SIZE) || 100;
    case ModelServer.SAGEMAKER_INFERENCE_TOOLKIT:
      return Number(env.MMS_JOB_QUEUE_SIZE) || 100;
    case ModelServer.SCIKIT_LEARN:
    case ModelServer.XGBOOST:
      return GUNICORN_BACKLOG;
    default:
      return undefined;
  }
}

/** The construct id of each variant's model under the endpoint (lib/resilient-endpoint.ts createModels). */
const MODEL_IDS = ['Model', 'FallbackModel', 'ShadowModel'];

/**
 * The container's memory budget as the simulator's pool of an instance (bytes): what the synthesized model
 * gives the container (CONTAINER_BUDGET_ENV: host bytes, or bytes per GPU × the GPUs), else the contract's
 * default, CONTAINER_BUDGET_DEFAULT_PERCENT of the instance's memory (of each GPU's). Undefined for an
 * instance type the catalog does not know (no budget, no guard).
 */
export function containerBudget(endpoint: ResilientEndpoint, v: VariantInfo): number | undefined {
  const t = v.instanceType;
  if (t.specUnknown) return undefined;
  const gpu = t.spec.gpuCount > 0 && t.spec.gpuMemoryGiB > 0;
  const index = [endpoint.primaryVariant, endpoint.fallbackVariant, endpoint.shadowVariant].indexOf(v);
  const model = endpoint.node.tryFindChild(MODEL_IDS[index] ?? '');
  const env = model ? (Stack.of(endpoint).resolve((model as any).primaryContainer)?.environment ?? {}) : {};
  const stated = Number(env[gpu ? CONTAINER_BUDGET_ENV.GPU : CONTAINER_BUDGET_ENV.HOST]);
  const perDevice =
    Number.isFinite(stated) && stated > 0
      ? stated
      : (CONTAINER_BUDGET_DEFAULT_PERCENT / 100) * (gpu ? t.spec.gpuMemoryGiB : t.spec.memoryGiB) * 1024 ** 3;
  return Math.floor(perDevice * (gpu ? t.spec.gpuCount : 1));
}

/**
 * Runs the same trace (same seed) four ways: static capacity; autoscaling alone; autoscaling with
 * the earlier weights-only breaker on 1-minute data — these three with the incidents' containers (no
 * memory guard); and autoscaling with the breaker as deployed (degrade level, weights and capacity, on
 * 10-second data) and the container's guard (unless `assumptions.guard` is false). The endpoint is
 * `Updating` during every scale-out, scale-in and weight change in all of them, as SageMaker does.
 */
export function compareScenarios(
  trace: Trace,
  endpoint: ResilientEndpoint,
  opts: { seed?: number; assumptions?: Partial<SimAssumptions>; onProgress?: (scenario: string, f: number) => void } = {},
): ScenarioRow[] {
  const { primary, fallback } = simVariantsFrom(endpoint);
  const seed = opts.seed ?? 42;
  const breaker = endpoint.circuitBreaker?.config;
  const period = endpoint.metricPublishFrequency.toSeconds() < 60 ? 10 : 60;
  const unguarded = { guard: false };
  const scenarios: [string, Omit<SimConfig, 'seed'>, Partial<SimAssumptions>][] = [
    [SCENARIOS.STATIC, { primary: { ...primary, scaling: undefined }, autoscaling: false }, unguarded],
    [SCENARIOS.AUTOSCALING, { primary, autoscaling: true }, unguarded],
    ...(breaker
      ? ([
          [
            SCENARIOS.WEIGHTS_ONLY,
            { primary, fallback, autoscaling: true, breaker, breakerMode: WEIGHTS_ONLY_BREAKER, metricPeriodS: 60 },
            unguarded,
          ],
          [SCENARIOS.BREAKER, { primary, fallback, autoscaling: true, breaker, breakerMode: CURRENT_BREAKER, metricPeriodS: period }, {}],
        ] as [string, Omit<SimConfig, 'seed'>, Partial<SimAssumptions>][])
      : []),
  ];
  return scenarios.map(([scenario, c, container]) => {
    const assumptions = { ...opts.assumptions, ...container };
    return {
      scenario,
      guard: assumptions.guard !== false && primary.guardBudgetBytes !== undefined,
      result: runSimulation(trace, { ...c, seed, assumptions, onProgress: f => opts.onProgress?.(scenario, f) }),
    };
  });
}

/** The comparison as a Markdown table. */
export function comparisonTable(rows: ScenarioRow[]): string {
  const fmt = (s?: number) => (s === undefined ? '—' : s >= 120 ? `${(s / 60).toFixed(1)} min` : `${s} s`);
  const lines = [
    '| scenario | container guard | requests | OOM events | failed (of which OOM) | failed % | refused by the guard + backstop | refused by design (> MAX_SEQ_LEN) | served by fallback | 80 % → level published | 80 % → weights applied | what first moved the level, when | time degraded | endpoint Updating | max memory | instance-minutes |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const { scenario, guard, result: r } of rows) {
    const first = r.levelChanges.find(c => c.level > 0);
    lines.push(
      `| ${scenario} | ${guard ? 'on' : 'off'} | ${r.arrivals} | ${r.oomEvents} | ${r.failed} (${r.failedByOom}) | ${((100 * r.failed) / Math.max(1, r.arrivals)).toFixed(2)} % | ${r.rejectedByGuard + r.rejectedByBackstop} | ${r.rejectedByDesign} | ${r.servedByFallback} | ${fmt(r.timeToDegradeS)} | ${fmt(r.timeToWeightsS)} | ${first ? `${LEVEL_CAUSE_NAMES[levelCause(first.why)]}, ${fmt(first.t)} into the trace` : '—'} | ${fmt(r.timeDegradedS)} | ${fmt(r.updatingS)} | ${r.maxPrimaryMemoryPercent} % | ${r.instanceMinutes} |`,
    );
  }
  return lines.join('\n');
}

/** The level changes of a run as Markdown lines: when, to which level and state, and why (the breaker's own words). */
export function levelChangeList(r: SimResult): string {
  if (!r.levelChanges.length) return 'The breaker never published a level.';
  return r.levelChanges
    .map(c => `- ${(c.t / 60).toFixed(1)} min: level ${c.level} (${c.state}), moved by ${LEVEL_CAUSE_NAMES[levelCause(c.why)]}: ${c.why}`)
    .join('\n');
}

/** The fields of one scenario in `results.json` (the series is left out). */
export function resultRecord(row: ScenarioRow): Record<string, unknown> {
  const { series: _series, ...rest } = row.result;
  return { scenario: row.scenario, ...rest };
}
