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
} as const;

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
  /** Compare with the memory profile's request distribution (`sizeProfile`) when no baseline file has it. */
  readonly requestSize?: boolean;
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
  /** Where baselines learned from a first window are kept: `<key prefix>/<model hash>.json` in the capture bucket. */
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
