import { CaptureSide } from './capture';

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
   * A request-size feature (sequence length, rows, bytes): compared with the memory profile's request
   * distribution when the baseline file does not have it, and on the log scale (`logScale`).
   * @default false
   */
  readonly requestSize?: boolean;
  /**
   * Compare log(1 + x) for Wasserstein: for heavy-tailed values, whose standard deviation is the tail's,
   * a 15 % growth of every value then reads ≈ 0.14 instead of ≈ 0.06.
   * @default - the value of `requestSize`
   */
  readonly logScale?: boolean;
}

/** Feature sets for common payloads, and the examples'. */
export class DriftFeatures {
  /** The request body's size in bytes: works for any payload (incident A: clients sending 15 % more). */
  public static requestBytes(): DriftFeature {
    return { name: 'RequestBytes', selector: 'bytes()', requestSize: true };
  }

  /**
   * The recommender example (`{"events": [ids], "profile": [20 numbers]}`): the behaviour sequence's
   * length (the size the memory profile measured), and the profile's values pooled.
   */
  public static recommenderExample(): DriftFeature[] {
    return [
      { name: 'SequenceLength', selector: '$.events.length()', requestSize: true },
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
      { name: 'Rows', selector: '$.instances.length()', csvSelector: '$.length()', requestSize: true },
      { name: 'Cluster', selector: '$.clusters[*]', kind: DriftFeatureKind.CATEGORICAL, side: CaptureSide.OUTPUT },
    ];
  }
}
