import { Size } from 'aws-cdk-lib';
import { SageMakerInstanceType } from './instance-types';
import { MEMORY_BUDGET_SHARE, tuneModelServer, wholeBytes } from './model-server';
import { checkUnitProps, UNIT_PROPS } from './private/unit-props';
import { PropErrors } from './validation';

/** Inputs of the capacity planner. */
export interface CapacityPlanProps {
  /** Median (p50) latency of one request, in milliseconds. */
  readonly p50LatencyMs: number;
  /** Peak requests per second the endpoint must serve. */
  readonly peakQps: number;
  /**
   * Safety factor on the computed need (incident B: 1.2–1.5).
   * @default 1.3
   */
  readonly safetyFactor?: number;
  /**
   * Host memory of one model copy at peak.
   * @default - not considered
   */
  readonly modelMemory?: Size;
  /**
   * GPU memory of one model copy at peak (implies a GPU).
   * @default - not considered
   */
  readonly gpuMemory?: Size;
  /**
   * The model needs a GPU.
   * @default - true when gpuMemory is given
   */
  readonly requiresGpu?: boolean;
  /**
   * Fewest instances (more than one spreads over Availability Zones).
   * @default 2
   */
  readonly minInstances?: number;
  /**
   * Smallest instance to consider, in vCPUs: the OS, the model-server frontend and the capture agent
   * need room beside the workers (incident B's 2-vCPU instance had none).
   * @default 4
   */
  readonly minVcpusPerInstance?: number;
  /**
   * Instance types to consider.
   * @default - the catalog's non-burstable types (GPU types only when a GPU is required)
   */
  readonly candidates?: SageMakerInstanceType[];
}

const GIB = 1024 ** 3;

/**
 * Sizing rule from incident B, done right: parallel slots needed = p50 latency (ms) × peak QPS / 1000
 * × safety factor (13 for 50 ms × 200 QPS × 1.3). A slot is a vCPU on CPU instances and a model copy
 * on GPU instances. Memory: workers × model footprint must stay under 80 % of the instance's memory.
 * Among the types that fit, the plan takes the fewest total slots, then the smaller instance (finer
 * scaling, more Availability Zones): incident B's case gives 4 × ml.m5.xlarge, not one 4-vCPU instance.
 */
export class CapacityPlan {
  /** Computes a plan; throws a clear error when no candidate fits. */
  public static compute(props: CapacityPlanProps): CapacityPlan {
    return new CapacityPlan(props);
  }

  public readonly instanceType: SageMakerInstanceType;
  public readonly instanceCount: number;
  public readonly workersPerInstance: number;
  /** Parallel slots needed (vCPUs, or model copies on GPU). */
  public readonly slotsNeeded: number;
  /**
   * Share of the instance's host memory left free by the model copies at full worker count (%), when
   * `modelMemory` is given; undefined when the plan does not know the model's host memory.
   */
  public readonly memoryHeadroomPercent?: number;
  /**
   * Share of each GPU's memory left free by the model copies on it at full worker count (%), on a GPU
   * plan with `gpuMemory` given; undefined otherwise.
   */
  public readonly gpuMemoryHeadroomPercent?: number;
  /** The arithmetic, line by line. */
  public readonly arithmetic: string[];

  private constructor(props: CapacityPlanProps) {
    // modelMemory: 2.1 from JavaScript (a number, not a Size): an error naming it, not a TypeError.
    const units = new PropErrors();
    const p = checkUnitProps(units, props, UNIT_PROPS.CapacityPlanProps);
    const errors: string[] = units.all;
    if (!(p.p50LatencyMs > 0)) errors.push(`p50LatencyMs: got ${p.p50LatencyMs}; allowed: > 0`);
    if (!(p.peakQps > 0)) errors.push(`peakQps: got ${p.peakQps}; allowed: > 0`);
    const safety = p.safetyFactor ?? 1.3;
    if (!(safety >= 1 && safety <= 3)) errors.push(`safetyFactor: got ${safety}; allowed: 1–3 (incident B used 1.2–1.5)`);
    const minInstances = p.minInstances ?? 2;
    if (!(Number.isInteger(minInstances) && minInstances >= 1)) errors.push(`minInstances: got ${minInstances}; allowed: an integer ≥ 1`);
    if (errors.length) throw new Error(`CapacityPlan: ${errors.join('; ')}`);

    const gpu = p.requiresGpu ?? p.gpuMemory !== undefined;
    const exact = ((p.p50LatencyMs * p.peakQps) / 1000) * safety;
    this.slotsNeeded = Math.ceil(exact - 1e-9);
    const hostBytes = p.modelMemory && wholeBytes(p.modelMemory);
    const gpuBytes = p.gpuMemory && wholeBytes(p.gpuMemory);
    const minVcpus = p.minVcpusPerInstance ?? 4;
    const candidates = (p.candidates ?? SageMakerInstanceType.all()).filter(
      t => !t.isBurstable && !t.specUnknown && (gpu ? t.isGpu : !t.isGpu) && t.spec.vCpus >= minVcpus,
    );

    if (!candidates.length) {
      const offered = p.candidates
        ? p.candidates.map(t => t.name).join(', ') || 'an empty list'
        : `the catalog's ${SageMakerInstanceType.all().length} types`;
      throw new Error(
        `CapacityPlan: no candidate type qualifies: the plan needs ${gpu ? 'a GPU type' : 'a type without a GPU'} that is not burstable, has a known spec and at least ${minVcpus} vCPUs (minVcpusPerInstance); the candidates were ${offered}. Pass such a type in 'candidates', or lower minVcpusPerInstance.`,
      );
    }

    type Option = { t: SageMakerInstanceType; count: number; workers: number; slots: number; headroom?: number; gpuHeadroom?: number; vcpus: number };
    const options: Option[] = [];
    for (const t of candidates) {
      if (hostBytes && hostBytes > MEMORY_BUDGET_SHARE * t.spec.memoryGiB * GIB) continue;
      if (gpu && gpuBytes && gpuBytes > MEMORY_BUDGET_SHARE * t.spec.gpuMemoryGiB * GIB) continue;
      const workers = tuneModelServer(t, { host: p.modelMemory, gpu: p.gpuMemory }).workers;
      // A slot serves one request at a time: a vCPU that has a worker (CPU), or a model copy (GPU).
      const perInstance = gpu ? workers : Math.min(t.spec.vCpus, workers);
      const count = Math.max(minInstances, Math.ceil(this.slotsNeeded / perInstance));
      // Headroom only where the memory is known: the host's with modelMemory, each GPU's with gpuMemory.
      const headroom = hostBytes ? Math.round(100 * (1 - (workers * hostBytes) / (t.spec.memoryGiB * GIB))) : undefined;
      const gpuHeadroom =
        gpu && gpuBytes ? Math.round(100 * (1 - (Math.ceil(workers / t.spec.gpuCount) * gpuBytes) / (t.spec.gpuMemoryGiB * GIB))) : undefined;
      options.push({ t, count, workers, slots: count * perInstance, headroom, gpuHeadroom, vcpus: count * t.spec.vCpus });
    }
    if (!options.length) {
      const largest = [...candidates].sort((a, b) => (gpu ? b.spec.gpuMemoryGiB - a.spec.gpuMemoryGiB : b.spec.memoryGiB - a.spec.memoryGiB))[0];
      const need = gpu && gpuBytes ? `${(gpuBytes / GIB).toFixed(1)} GiB of GPU memory` : `${((hostBytes ?? 0) / GIB).toFixed(1)} GiB of memory`;
      throw new Error(
        `CapacityPlan: no instance type fits one model copy needing ${need} within 80 % of memory; the largest tried was ${largest.name} (${gpu ? `${largest.spec.gpuMemoryGiB} GiB per GPU` : `${largest.spec.memoryGiB} GiB`}). Shrink the model, cap the input length, or pass a larger type in 'candidates'.`,
      );
    }
    // Cheapest first by total vCPUs (on-demand prices grow with vCPUs within these families), then
    // by memory, then the smaller instance (finer scaling steps, more Availability Zones).
    options.sort((a, b) => a.vcpus - b.vcpus || a.count * a.t.spec.memoryGiB - b.count * b.t.spec.memoryGiB || a.t.spec.vCpus - b.t.spec.vCpus);
    const best = options[0];
    this.instanceType = best.t;
    this.instanceCount = best.count;
    this.workersPerInstance = best.workers;
    this.memoryHeadroomPercent = best.headroom;
    this.gpuMemoryHeadroomPercent = best.gpuHeadroom;
    const unit = gpu ? 'model copies' : 'vCPUs';
    const perGpu = gpu ? Math.ceil(best.workers / best.t.spec.gpuCount) : 0;
    this.arithmetic = [
      `parallel ${unit} needed = ${p.p50LatencyMs} ms × ${p.peakQps} QPS / 1000 × ${safety} = ${+exact.toFixed(2)} → ${this.slotsNeeded}`,
      `${best.t.name}: ${gpu ? `${best.workers} model copies` : `${Math.min(best.t.spec.vCpus, best.workers)} busy vCPUs`} per instance → ${best.count} instance(s) (at least ${minInstances}) = ${best.slots} ${unit}`,
      `workers per instance = ${best.workers}${hostBytes ? `; memory ${best.workers} × ${(hostBytes / GIB).toFixed(2)} GiB of ${best.t.spec.memoryGiB} GiB → ${best.headroom} % headroom` : ''}`,
      ...(gpu && gpuBytes
        ? [
            `GPU memory ${perGpu} cop${perGpu === 1 ? 'y' : 'ies'} per GPU × ${(gpuBytes / GIB).toFixed(2)} GiB of ${best.t.spec.gpuMemoryGiB} GiB → ${best.gpuHeadroom} % headroom`,
          ]
        : []),
    ];
  }

  /** A plain-text table of the plan. */
  public toTable(): string {
    const rows: [string, string][] = [
      ['instance type', this.instanceType.name],
      ['instance count', String(this.instanceCount)],
      ['workers per instance', String(this.workersPerInstance)],
      [
        'host memory headroom',
        this.memoryHeadroomPercent !== undefined
          ? `${this.memoryHeadroomPercent} %`
          : "not known: the model's host memory was not given (modelMemory, --model-gib)",
      ],
    ];
    if (this.instanceType.isGpu) {
      rows.push([
        'GPU memory headroom',
        this.gpuMemoryHeadroomPercent !== undefined
          ? `${this.gpuMemoryHeadroomPercent} %`
          : "not known: the model's GPU memory was not given (gpuMemory, --gpu-gib)",
      ]);
    }
    const w = Math.max(...rows.map(r => r[0].length));
    return [...rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`), '', ...this.arithmetic].join('\n');
  }
}
