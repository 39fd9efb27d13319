import { IReadinessRule, RuleLevel } from '../rule';

/** The margin above the measured need: the guard's goals hold from 0.8 × the smallest budget up. */
const SMALLEST_BUDGET_MARGIN = 1.25;

/**
 * The smallest container budget the memory guard serves, for `workers` workers of a profiled model:
 * 1.25 × (workers × the profile's warm baseline + its P99.9 request as the caps admit it). Measured on the
 * serving stacks of AWS's images (TorchServe's Python worker with the PyTorch toolkit; nginx and gunicorn's
 * gevent worker for scikit-learn) by `npm run guard:budget` (scripts/guard-budget.py), which computes the same
 * figure from the same profile: from 0.8 × this budget up, with 1, 2 and 4 workers at concurrency 1–8, every run
 * had 0 OOM kills, refused + failed ≤ 1 % of the incident requests and answered a probe of 20 ordinary requests
 * after the load (docs/container.md, "The smallest budget").
 */
function smallestGuardBudget(workers: number, baselineBytes: number, p999Bytes: number): number {
  return Math.ceil(SMALLEST_BUDGET_MARGIN * (workers * baselineBytes + p999Bytes));
}

/**
 * The container's guard budget (`RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES`: `model.guardBudgetPercent` of the
 * instance's memory) against the smallest one the guard serves for the variant's workers (host memory; a profile
 * measured on a GPU is RE-ProfiledMemory's).
 */
export const GuardBudget: IReadinessRule = {
  id: 'RE-GuardBudget',
  level: RuleLevel.ERROR,
  what: "The container's guard budget is at least the smallest the guard serves for its workers (from the memory profile)",
  why: "Below it the workers' own memory fills the budget: the guard refuses requests a container of that size could answer (measured: up to half of them) and the OOM killer is one large request away.",
  fix: 'Use fewer workers (modelServer.workers), a larger instance type (the message names the memory that works), or a smaller model.guardBudgetPercent only with a larger instance.',
  check: e =>
    e.variants.flatMap(v => {
      const env = v.environment;
      if (env.RESILIENT_ENDPOINT_PROFILE_DEVICE === 'cuda') return [];
      const budget = Number(env.RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES);
      const baseline = Number(env.RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES);
      const workers = Number(env.SAGEMAKER_MODEL_SERVER_WORKERS);
      let p999: number;
      try {
        p999 = Number(JSON.parse(env.RESILIENT_ENDPOINT_PROFILE_P999 ?? '').bytes);
      } catch {
        return [];
      }
      if (!(budget > 0) || !(baseline > 0) || !(workers >= 1) || !Number.isFinite(p999)) return [];
      const smallest = smallestGuardBudget(workers, baseline, p999);
      if (budget >= smallest) return [];
      const percent = Number(env.RESILIENT_ENDPOINT_CONTAINER_BUDGET_PERCENT) || 90;
      const mib = (b: number) => `${Math.round(b / 2 ** 20)} MiB`;
      const instance = Math.ceil((smallest * 100) / percent / 2 ** 30);
      return [
        `${v.variantName}: the container's guard budget is ${mib(budget)}; ${workers} worker${workers === 1 ? '' : 's'} need at least ` +
          `${mib(smallest)} (1.25 × (${workers} × the profile's warm baseline of ${mib(baseline)} + its P99.9 request of ${mib(p999)})), ` +
          `an instance with ${instance} GiB of memory at ${percent} %`,
      ];
    }),
};
