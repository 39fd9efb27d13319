/**
 * Hardware of one SageMaker hosting instance type, as the tuning, the alarms,
 * the circuit breaker and the capacity planner need it.
 *
 * Values come from the EC2 instance-type documentation (ml.* types share the
 * EC2 hardware); see `../shared/reference/sagemaker-facts.md` §6a.
 */
export interface InstanceSpec {
  /** Number of vCPUs. `CPUUtilization` on this type ranges 0 – 100 × vCpus %. */
  readonly vCpus: number;
  /** Host memory in GiB. */
  readonly memoryGiB: number;
  /**
   * Number of GPUs. `GPUUtilization` and `GPUMemoryUtilization` range 0 – 100 × gpuCount %.
   * @default 0
   */
  readonly gpuCount?: number;
  /**
   * Memory of one GPU, in GiB.
   * @default 0
   */
  readonly gpuMemoryGiB?: number;
  /**
   * Local NVMe instance storage in GB (0 = EBS only). SageMaker rejects `VolumeSizeInGB` on types with
   * local NVMe, and an endpoint-config `KmsKeyId` does not encrypt that storage.
   * @default 0
   */
  readonly localNvmeGB?: number;
  /**
   * Burstable (T2/T3) type: CPU credits run out under sustained load, and
   * Application Auto Scaling cannot register it.
   * @default false
   */
  readonly burstable?: boolean;
}

/** An instance's hardware with every field filled (what `SageMakerInstanceType.spec` holds). */
export interface InstanceHardware {
  /** Number of vCPUs. */
  readonly vCpus: number;
  /** Host memory in GiB. */
  readonly memoryGiB: number;
  /** Number of GPUs (0 for CPU types). */
  readonly gpuCount: number;
  /** Memory of one GPU in GiB (0 for CPU types). */
  readonly gpuMemoryGiB: number;
  /** Local NVMe instance storage in GB (0 = EBS only). */
  readonly localNvmeGB: number;
  /** Burstable (T2/T3) type. */
  readonly burstable: boolean;
}

// Declared before the class: the static catalog fields register themselves here.
const CATALOG = new Map<string, SageMakerInstanceType>();

/** An instance type with its name and hardware. */
export class SageMakerInstanceType {
  // --- General purpose (EBS only) ---
  public static readonly ML_M5_LARGE = SageMakerInstanceType.catalog('ml.m5.large', { vCpus: 2, memoryGiB: 8 });
  public static readonly ML_M5_XLARGE = SageMakerInstanceType.catalog('ml.m5.xlarge', { vCpus: 4, memoryGiB: 16 });
  public static readonly ML_M5_2XLARGE = SageMakerInstanceType.catalog('ml.m5.2xlarge', { vCpus: 8, memoryGiB: 32 });
  public static readonly ML_M5_4XLARGE = SageMakerInstanceType.catalog('ml.m5.4xlarge', { vCpus: 16, memoryGiB: 64 });
  public static readonly ML_M5_12XLARGE = SageMakerInstanceType.catalog('ml.m5.12xlarge', { vCpus: 48, memoryGiB: 192 });
  public static readonly ML_M5_24XLARGE = SageMakerInstanceType.catalog('ml.m5.24xlarge', { vCpus: 96, memoryGiB: 384 });

  // --- Compute optimised ---
  public static readonly ML_C5_LARGE = SageMakerInstanceType.catalog('ml.c5.large', { vCpus: 2, memoryGiB: 4 });
  public static readonly ML_C5_XLARGE = SageMakerInstanceType.catalog('ml.c5.xlarge', { vCpus: 4, memoryGiB: 8 });
  public static readonly ML_C5_2XLARGE = SageMakerInstanceType.catalog('ml.c5.2xlarge', { vCpus: 8, memoryGiB: 16 });
  public static readonly ML_C5_4XLARGE = SageMakerInstanceType.catalog('ml.c5.4xlarge', { vCpus: 16, memoryGiB: 32 });
  public static readonly ML_C5_9XLARGE = SageMakerInstanceType.catalog('ml.c5.9xlarge', { vCpus: 36, memoryGiB: 72 });
  public static readonly ML_C5_18XLARGE = SageMakerInstanceType.catalog('ml.c5.18xlarge', { vCpus: 72, memoryGiB: 144 });

  // --- Memory optimised ---
  public static readonly ML_R5_LARGE = SageMakerInstanceType.catalog('ml.r5.large', { vCpus: 2, memoryGiB: 16 });
  public static readonly ML_R5_XLARGE = SageMakerInstanceType.catalog('ml.r5.xlarge', { vCpus: 4, memoryGiB: 32 });
  public static readonly ML_R5_2XLARGE = SageMakerInstanceType.catalog('ml.r5.2xlarge', { vCpus: 8, memoryGiB: 64 });
  public static readonly ML_R5_4XLARGE = SageMakerInstanceType.catalog('ml.r5.4xlarge', { vCpus: 16, memoryGiB: 128 });
  public static readonly ML_R5_12XLARGE = SageMakerInstanceType.catalog('ml.r5.12xlarge', { vCpus: 48, memoryGiB: 384 });
  public static readonly ML_R5_24XLARGE = SageMakerInstanceType.catalog('ml.r5.24xlarge', { vCpus: 96, memoryGiB: 768 });

  // --- GPU: g4dn (NVIDIA T4, 16 GiB each, local NVMe) ---
  public static readonly ML_G4DN_XLARGE = SageMakerInstanceType.catalog('ml.g4dn.xlarge', {
    vCpus: 4,
    memoryGiB: 16,
    gpuCount: 1,
    gpuMemoryGiB: 16,
    localNvmeGB: 125,
  });
  public static readonly ML_G4DN_2XLARGE = SageMakerInstanceType.catalog('ml.g4dn.2xlarge', {
    vCpus: 8,
    memoryGiB: 32,
    gpuCount: 1,
    gpuMemoryGiB: 16,
    localNvmeGB: 225,
  });
  public static readonly ML_G4DN_4XLARGE = SageMakerInstanceType.catalog('ml.g4dn.4xlarge', {
    vCpus: 16,
    memoryGiB: 64,
    gpuCount: 1,
    gpuMemoryGiB: 16,
    localNvmeGB: 225,
  });
  public static readonly ML_G4DN_8XLARGE = SageMakerInstanceType.catalog('ml.g4dn.8xlarge', {
    vCpus: 32,
    memoryGiB: 128,
    gpuCount: 1,
    gpuMemoryGiB: 16,
    localNvmeGB: 900,
  });
  public static readonly ML_G4DN_12XLARGE = SageMakerInstanceType.catalog('ml.g4dn.12xlarge', {
    vCpus: 48,
    memoryGiB: 192,
    gpuCount: 4,
    gpuMemoryGiB: 16,
    localNvmeGB: 900,
  });
  public static readonly ML_G4DN_16XLARGE = SageMakerInstanceType.catalog('ml.g4dn.16xlarge', {
    vCpus: 64,
    memoryGiB: 256,
    gpuCount: 1,
    gpuMemoryGiB: 16,
    localNvmeGB: 900,
  });

  // --- GPU: g5 (NVIDIA A10G, 24 GB each, local NVMe). NVMe sizes of 16/24/48xlarge are unverified, but all g5 have NVMe. ---
  public static readonly ML_G5_XLARGE = SageMakerInstanceType.catalog('ml.g5.xlarge', {
    vCpus: 4,
    memoryGiB: 16,
    gpuCount: 1,
    gpuMemoryGiB: 24,
    localNvmeGB: 250,
  });
  public static readonly ML_G5_2XLARGE = SageMakerInstanceType.catalog('ml.g5.2xlarge', {
    vCpus: 8,
    memoryGiB: 32,
    gpuCount: 1,
    gpuMemoryGiB: 24,
    localNvmeGB: 450,
  });
  public static readonly ML_G5_4XLARGE = SageMakerInstanceType.catalog('ml.g5.4xlarge', {
    vCpus: 16,
    memoryGiB: 64,
    gpuCount: 1,
    gpuMemoryGiB: 24,
    localNvmeGB: 600,
  });
  public static readonly ML_G5_8XLARGE = SageMakerInstanceType.catalog('ml.g5.8xlarge', {
    vCpus: 32,
    memoryGiB: 128,
    gpuCount: 1,
    gpuMemoryGiB: 24,
    localNvmeGB: 900,
  });
  public static readonly ML_G5_12XLARGE = SageMakerInstanceType.catalog('ml.g5.12xlarge', {
    vCpus: 48,
    memoryGiB: 192,
    gpuCount: 4,
    gpuMemoryGiB: 24,
    localNvmeGB: 3800,
  });
  public static readonly ML_G5_16XLARGE = SageMakerInstanceType.catalog('ml.g5.16xlarge', {
    vCpus: 64,
    memoryGiB: 256,
    gpuCount: 1,
    gpuMemoryGiB: 24,
    localNvmeGB: 1900,
  });
  public static readonly ML_G5_24XLARGE = SageMakerInstanceType.catalog('ml.g5.24xlarge', {
    vCpus: 96,
    memoryGiB: 384,
    gpuCount: 4,
    gpuMemoryGiB: 24,
    localNvmeGB: 3800,
  });
  public static readonly ML_G5_48XLARGE = SageMakerInstanceType.catalog('ml.g5.48xlarge', {
    vCpus: 192,
    memoryGiB: 768,
    gpuCount: 8,
    gpuMemoryGiB: 24,
    localNvmeGB: 7600,
  });

  // --- Burstable (demo grade: incident B) ---
  public static readonly ML_T2_MEDIUM = SageMakerInstanceType.catalog('ml.t2.medium', { vCpus: 2, memoryGiB: 4, burstable: true });
  public static readonly ML_T2_LARGE = SageMakerInstanceType.catalog('ml.t2.large', { vCpus: 2, memoryGiB: 8, burstable: true });
  public static readonly ML_T2_XLARGE = SageMakerInstanceType.catalog('ml.t2.xlarge', { vCpus: 4, memoryGiB: 16, burstable: true });
  public static readonly ML_T2_2XLARGE = SageMakerInstanceType.catalog('ml.t2.2xlarge', { vCpus: 8, memoryGiB: 32, burstable: true });

  /** Every instance type of the built-in catalog, smallest first within a family. */
  public static all(): SageMakerInstanceType[] {
    return [...CATALOG.values()];
  }

  /**
   * An instance type by name. Catalog types get their hardware automatically;
   * for any other `ml.*` type pass its `spec`, or spec-dependent tuning
   * (workers, GPU normalisation, NVMe rules) is switched off with a warning.
   */
  public static of(name: string, spec?: InstanceSpec): SageMakerInstanceType {
    const known = CATALOG.get(name);
    if (known && !spec) return known;
    return new SageMakerInstanceType(name, spec ?? inferSpecFromName(name), spec === undefined && !known);
  }

  private static catalog(name: string, spec: InstanceSpec): SageMakerInstanceType {
    const t = new SageMakerInstanceType(name, spec, false);
    CATALOG.set(name, t);
    return t;
  }

  /** Normalised hardware (every optional field filled). */
  public readonly spec: InstanceHardware;

  private constructor(
    /** The instance type name, e.g. `ml.g4dn.xlarge`. */
    public readonly name: string,
    spec: InstanceSpec,
    /** True when the hardware is unknown (a bare name outside the catalog). */
    public readonly specUnknown: boolean,
  ) {
    this.spec = {
      vCpus: spec.vCpus,
      memoryGiB: spec.memoryGiB,
      gpuCount: spec.gpuCount ?? 0,
      gpuMemoryGiB: spec.gpuMemoryGiB ?? 0,
      localNvmeGB: spec.localNvmeGB ?? 0,
      burstable: spec.burstable ?? false,
    };
  }

  /** True when the type has at least one GPU. */
  public get isGpu(): boolean {
    return this.spec.gpuCount > 0;
  }

  /** Total GPU memory of the instance in GiB. */
  public get totalGpuMemoryGiB(): number {
    return this.spec.gpuCount * this.spec.gpuMemoryGiB;
  }

  /**
   * True when the type has local NVMe storage. For types outside the catalog
   * the name decides: g4dn/g5/g6/p4d/trn1 and any `*d` family (m5d, c6id …)
   * have instance storage, as SageMaker's own SDK assumes.
   */
  public get hasLocalNvme(): boolean {
    return this.spec.localNvmeGB > 0 || nameImpliesNvme(this.name);
  }

  /** True for T2/T3 types (by spec or by name). */
  public get isBurstable(): boolean {
    return this.spec.burstable || /^ml\.t\d/.test(this.name);
  }

  public toString(): string {
    return this.name;
  }
}

/** The instance family of an `ml.*` type name (`ml.g4dn.xlarge` → `g4dn`). */
export function instanceFamily(name: string): string {
  const parts = name.split('.');
  return parts.length >= 3 ? parts[1] : '';
}

function nameImpliesNvme(name: string): boolean {
  const family = instanceFamily(name);
  // (inf2 has EBS storage only: no local NVMe.)
  if (/^(g4dn|g5|g6|g6e|p4d|p4de|p5|trn1)$/.test(family)) return true;
  // m5d, c5d, r5d, c6id, m6id … : a 'd' after the generation digit
  return /^[a-z]+\d+[a-z]*d$/.test(family);
}

function inferSpecFromName(_name: string): InstanceSpec {
  // Unknown hardware: all zeros keeps tuning switched off; validation warns.
  return { vCpus: 0, memoryGiB: 0 };
}
