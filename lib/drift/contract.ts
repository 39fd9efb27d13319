/**
 * The interface between the drift construct and the drift function: the configuration the construct
 * writes into the function's environment, the scheduled event's input, and the metrics the function
 * publishes (that the alarms, the dashboard and `doctor` read). Types and constants only.
 */

/** The metrics' namespace. */
export const DRIFT_NAMESPACE = 'ResilientEndpoint/Drift';

/** The function's environment variable holding its configuration (JSON). */
export const DRIFT_CONFIG_ENV = 'RESILIENT_ENDPOINT_DRIFT_CONFIG';

/** Metric names. Dimensions: `EndpointName` and `Feature` for the distances; `EndpointName` and `Distance` for `DriftRecords`. */
export const DRIFT_METRICS = {
  /** Normalised Wasserstein-1 of a numeric feature (weekly). */
  WASSERSTEIN: 'WassersteinDistance',
  /** KL divergence, nats, of a feature's bins or categories (daily). */
  KL: 'KLDivergence',
  /** Total-variation distance of a categorical feature's shares (0–1): incident B's cluster-share comparison (weekly). */
  SHARE_SHIFT: 'ShareShift',
  /** Capture records read by a run: published on every run, 0 included (doctor reads it: the job ran). */
  RECORDS: 'DriftRecords',
  /**
   * Features a run could not compare because they had no baseline (none in the file, none from the memory
   * profile, none learned yet): published on every run beside `DriftRecords`, 0 included, so a run that
   * measured nothing says so instead of publishing silence.
   */
  BASELINE_MISSING: 'DriftBaselineMissing',
} as const;

/**
 * Where learned baselines live in the capture bucket: `drift-baselines/<endpoint>/<model hash>.json`, beside
 * (not below) the capture prefix, so the capture's expiry rule, filtered to the capture prefix, never
 * deletes them. Each run also writes `drift-baselines/<endpoint>/status.json`: where every feature's
 * baseline came from and when it was made (what `doctor` reports).
 */
export const LEARNED_BASELINES_ROOT = 'drift-baselines';

/** The key prefix of an endpoint's learned baselines. */
export function learnedBaselinePrefix(endpointName: string): string {
  return `${LEARNED_BASELINES_ROOT}/${endpointName}`;
}

/** The key of an endpoint's last run status (beside its learned baselines). */
export function driftStatusKey(endpointName: string): string {
  return `${learnedBaselinePrefix(endpointName)}/status.json`;
}

/** Where a feature's baseline came from, in a run's status. */
export interface BaselineStatus {
  /** 'file' (a baseline document), 'memory-profile', 'learned' (this model's first window) or 'none'. */
  readonly source: 'file' | 'memory-profile' | 'learned' | 'none';
  /** The document's `s3://` URI, or the profiled distribution. */
  readonly from?: string;
  /** When the baseline document was made (its `createdAt`); none for the memory profile's. */
  readonly createdAt?: string;
  /** Learned in this run (so not compared in it). */
  readonly learnedNow?: boolean;
}

/** What the last run wrote to `driftStatusKey`. */
export interface DriftRunStatus {
  readonly format: 1;
  readonly endpointName: string;
  readonly modelVersion: string;
  readonly distance: DistanceKind;
  readonly at: string;
  readonly records: number;
  readonly features: Record<string, BaselineStatus>;
}

/** Which distance a scheduled run computes. */
export type DistanceKind = 'wasserstein' | 'kl';

/** The scheduled event's input (the EventBridge rule's constant input). */
export interface DriftRunInput {
  readonly distance: DistanceKind;
  /** Hours of capture read, ending at the run's start hour. */
  readonly windowHours: number;
}

/** One feature as the function reads it. */
export interface FeatureConfig {
  readonly name: string;
  /** A selector (lib/drift/capture.ts `parseSelector`), or `bytes()`. */
  readonly selector: string;
  /** The selector for CSV bodies (rows of cells, e.g. `$[*][0]`); none: CSV bodies give this feature nothing. */
  readonly csvSelector?: string;
  readonly kind: 'numeric' | 'categorical';
  readonly side: 'input' | 'output';
  /**
   * Compare log(1 + x) instead of x for Wasserstein (KL's quantile bins are the same either way): for
   * heavy-tailed sizes, whose standard deviation is dominated by the tail, a 15 % growth then reads ≈ 0.14.
   */
  readonly logScale?: boolean;
  /**
   * Compare with the memory profile's request distribution (`sizeProfile`) when no baseline file has it: set
   * only when the feature is in the profile's unit (like with like).
   */
  readonly profileBaseline?: boolean;
}

/** The function's configuration. */
export interface DriftFunctionConfig {
  readonly endpointName: string;
  readonly bucket: string;
  /** The capture prefix (the endpoint config's DestinationS3Uri key), no slashes at the ends. */
  readonly prefix: string;
  /** Variants to read; empty: every variant folder found under the endpoint's. */
  readonly variants: string[];
  readonly features: FeatureConfig[];
  /** The model version (e.g. the model data URI): the learned baseline's key is its hash. */
  readonly modelVersion: string;
  /** A baseline document in S3 (`s3://bucket/key`), or empty. */
  readonly baselineUri: string;
  /**
   * Where baselines learned from a first window are kept: `<key prefix>/<model hash>.json` in the capture
   * bucket (`learnedBaselinePrefix`), outside the capture prefix; the run status beside them.
   */
  readonly learnedPrefix: string;
  /** Learn a baseline from the first window for features without one. */
  readonly learn: boolean;
  /** The memory profile's request distribution, for `requestSize` features. */
  readonly sizeProfile?: {
    readonly distribution: string;
    readonly p50: number;
    readonly p99: number;
    readonly p999: number;
    readonly min: number;
    readonly max: number;
  };
  readonly normalisation: 'std' | 'iqr' | 'none';
  /** KL's additive smoothing, pseudo-counts per bin. */
  readonly smoothing: number;
  /** Values kept per feature (reservoir sample): the function's memory bound. */
  readonly sampleSize: number;
  /** Objects read per run at most (the rest is skipped and logged). */
  readonly maxObjects: number;
}
