import { IReadinessRule, RuleLevel } from '../rule';

/**
 * The smallest budget the container's guard supports, per worker: the profile's baseline (the model loaded
 * and warm: the profiler measures it after a first request, so thread pools and BLAS buffers are in it)
 * plus the P99.9 request the caps admit. Below the baseline alone a worker cannot run its first inference.
 */
export const ProfiledMemory: IReadinessRule = {
  id: 'RE-ProfiledMemory',
  level: RuleLevel.ERROR,
  what: "The profiled P99.9 request fits a worker's memory budget, with the model loaded",
  why: 'Incident A was load-tested at length 100; the long tail of a power law (5–3000) took the GPU to 98 %. A request that cannot fit any worker is an OOM waiting for its turn.',
  fix: 'Lower MAX_SEQ_LEN (the profile says what fits), use fewer workers (modelServer.workers), or a larger instance type.',
  check: e =>
    e.variants.flatMap(v => {
      const raw = v.environment.RESILIENT_ENDPOINT_PROFILE_P999;
      const baseline = Number(v.environment.RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES);
      const gpu = v.environment.RESILIENT_ENDPOINT_PROFILE_DEVICE === 'cuda';
      const budget = Number(gpu ? v.environment.RESILIENT_ENDPOINT_WORKER_GPU_MEMORY_BYTES : v.environment.RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES);
      if (!raw || !Number.isFinite(baseline) || !(budget > 0)) return [];
      let p999: { size: number; bytes: number };
      try {
        p999 = JSON.parse(raw);
      } catch {
        return [];
      }
      const mib = (b: number) => `${Math.round(b / 2 ** 20)} MiB`;
      const kind = gpu ? 'GPU ' : '';
      if (baseline > budget)
        return [
          `${v.variantName}: the loaded model and its first inference (thread pools, BLAS buffers: the profile's warm baseline) need ${mib(baseline)}, ` +
            `more than a worker's ${kind}budget of ${mib(budget)}: no worker could answer its first request`,
        ];
      return baseline + p999.bytes > budget
        ? [
            `${v.variantName}: the profiled P99.9 request (size ${p999.size}) needs ${mib(p999.bytes)} on top of the loaded model's ${mib(baseline)}, ` +
              `more than a worker's ${kind}budget of ${mib(budget)}`,
          ]
        : [];
    }),
};
