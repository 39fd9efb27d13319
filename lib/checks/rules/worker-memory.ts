import { IReadinessRule, RuleLevel } from '../rule';
import { SageMakerInstanceType } from '../../instance-types';
export const WorkerMemory: IReadinessRule = {
  id: 'RE-WorkerMemory',
  level: RuleLevel.ERROR,
  what: 'Workers × stated model footprint stays within 80 % of the instance memory',
  why: 'Each worker loads its own model copy; incident B: 10 concurrent copies took 4.8 GB.',
  fix: 'Lower modelServer.workers, or choose a larger instance (CapacityPlan).',
  check: e =>
    e.variants.flatMap(v => {
      const workers = Number(v.environment.SAGEMAKER_MODEL_SERVER_WORKERS);
      const host = Number(v.environment.RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES);
      const gpu = Number(v.environment.RESILIENT_ENDPOINT_GPU_FOOTPRINT_BYTES);
      const t = SageMakerInstanceType.of(v.instanceType);
      if (!workers || t.specUnknown) return [];
      const out: string[] = [];
      const gib = 1024 ** 3;
      if (host && workers * host > 0.8 * t.spec.memoryGiB * gib)
        out.push(`${v.variantName}: ${workers} workers × ${(host / gib).toFixed(1)} GiB > 80 % of ${t.spec.memoryGiB} GiB`);
      if (gpu && t.totalGpuMemoryGiB && workers * gpu > Math.max(t.spec.gpuCount * gpu, 0.8 * t.totalGpuMemoryGiB * gib)) {
        out.push(`${v.variantName}: ${workers} workers × ${(gpu / gib).toFixed(1)} GiB GPU > 80 % of ${t.totalGpuMemoryGiB} GiB`);
      }
      return out;
    }),
};
