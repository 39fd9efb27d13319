import { MemoryProfile } from '../memory-profile';
import { BYTES_SELECTOR, CaptureSide } from './capture';

/** How a feature's values are compared. */
export enum DriftFeatureKind {
  /** Numbers: Wasserstein-1 (weekly) and KL on the baseline's decile bins (daily). */
  NUMERIC = 'numeric',
  /** Labels (e.g. the cluster a request was assigned to): share shift (weekly) and KL on the categories (daily). */
  CATEGORICAL = 'categorical',
}

/** One feature read from every captured request (or response). */
export interface DriftFeature {
  /** The feature's name: the metrics' `Feature` dimension and the baseline's key (letters, digits, `_`, `-`, `.`). */
  readonly name: string;
  /**
   * Where the values are in a JSON body: a JSONPath-like selector — `$`, `.name`, `['name']`, `[n]`,
   * `[*]`, and a last `.length()` (the number of items). E.g. `$.instances[*][0]`, `$.events.length()`.
   * `bytes()` reads the body's size in bytes.
   */
  readonly selector: string;
  /**
   * The selector for CSV bodies, which are read as rows of cells (e.g. `$[*][0]`: the first column).
   * @default - CSV bodies give this feature no value
   */
  readonly csvSelector?: string;
  /**
   * Numeric or categorical.
   * @default DriftFeatureKind.NUMERIC
   */
  readonly kind?: DriftFeatureKind;
  /**
   * The request or the response.
   * @default CaptureSide.INPUT
   */
  readonly side?: CaptureSide;
  /**
   * A request-size feature (sequence length, rows, bytes): on the log scale (`logScale`), and compared with
   * the memory profile's request distribution when the baseline file does not have it **and** its `unit` is
   * the profile's `sizeUnit` (like with like); otherwise with a learned baseline.
   * @default false
   */
  readonly requestSize?: boolean;
  /**
   * What the values count, e.g. 'events', 'rows', 'bytes': a `requestSize` feature is compared with the
   * memory profile only when this is the profile's `sizeUnit`. A request-size feature without a unit, or
   * in another unit than the profile's, is compared with a learned baseline, and synthesis warns naming
   * both units.
   * @default - 'bytes' for the `bytes()` selector; otherwise none
   */
  readonly unit?: string;
  /**
   * Compare log(1 + x) for Wasserstein: for heavy-tailed values, whose standard deviation is the tail's,
   * a 15 % growth of every value then reads ≈ 0.14 instead of ≈ 0.06.
   * @default - the value of `requestSize`
   */
  readonly logScale?: boolean;
}

/** Feature sets for common payloads, and the examples'. */
export class DriftFeatures {
  /**
   * The request body's size in bytes: works for any payload (incident A: clients sending 15 % more). In
   * bytes, so compared with a memory profile only when the profile's sizes are bytes, otherwise with a
   * baseline learned from the first window (or the baseline file).
   */
  public static requestBytes(): DriftFeature {
    return { name: 'RequestBytes', selector: BYTES_SELECTOR, requestSize: true, unit: 'bytes' };
  }

  /**
   * The request size as the memory profile measured it (its `sizeSelector`, in its `sizeUnit`): compared
   * with the profiled distribution, like with like. Empty when the profile does not record how its sizes are
   * read from a request (a profile written before it did, or one with a problem).
   * @param profile the model's memory profile
   */
  public static profiledRequestSize(profile: MemoryProfile): DriftFeature[] {
    if (profile.problem || !profile.sizeSelector) return [];
    if (profile.sizeSelector === BYTES_SELECTOR) return [DriftFeatures.requestBytes()];
    return [
      {
        name: 'RequestSize',
        selector: profile.sizeSelector,
        csvSelector: profile.csvSizeSelector,
        requestSize: true,
        unit: profile.sizeUnit,
      },
    ];
  }

  /**
   * The features of `drift: {}`: the request size as the memory profile measured it (when the profile
   * records how) and the request bytes, each with a baseline in its own unit (the profile's distribution,
   * a learned one for the bytes).
   * @param profile the model's memory profile, if any
   */
  public static defaults(profile?: MemoryProfile): DriftFeature[] {
    const sized = profile ? DriftFeatures.profiledRequestSize(profile) : [];
    return sized.some(f => f.selector === BYTES_SELECTOR) ? sized : [...sized, DriftFeatures.requestBytes()];
  }

  /**
   * The recommender example (`{"events": [ids], "profile": [20 numbers]}`): the behaviour sequence's
   * length (the size the memory profile measured), and the profile's values pooled.
   */
  public static recommenderExample(): DriftFeature[] {
    return [
      { name: 'SequenceLength', selector: '$.events.length()', requestSize: true, unit: 'events' },
      { name: 'Profile', selector: '$.profile[*]' },
      DriftFeatures.requestBytes(),
    ];
  }

  /**
   * The clustering example (`{"instances": [[x, y], …]}` or CSV rows `x,y`; answers `{"clusters": […]}`):
   * x, y, the rows per request (the size the memory profile measured), and the clusters' shares
   * (incident B's cluster-stability check).
   */
  public static clusteringExample(): DriftFeature[] {
    return [
      { name: 'x', selector: '$.instances[*][0]', csvSelector: '$[*][0]' },
      { name: 'y', selector: '$.instances[*][1]', csvSelector: '$[*][1]' },
      { name: 'Rows', selector: '$.instances.length()', csvSelector: '$.length()', requestSize: true, unit: 'rows' },
      { name: 'Cluster', selector: '$.clusters[*]', kind: DriftFeatureKind.CATEGORICAL, side: CaptureSide.OUTPUT },
    ];
  }
}
