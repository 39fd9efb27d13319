/**
 * The drift statistics, pure and in one place: what the drift function computes on the captured
 * requests, what the baseline builder stores, and what the tests check against closed forms.
 *
 * - **Wasserstein-1** between two one-dimensional distributions is ∫|F₁(x) − F₂(x)| dx (equivalently
 *   ∫₀¹ |F₁⁻¹(u) − F₂⁻¹(u)| du): the mass that must move times how far. It is in the feature's own unit,
 *   so it is divided by a scale of the **baseline** (its standard deviation by default): a normalised
 *   distance of 0.15 means "the distribution moved by the equivalent of 0.15 baseline standard
 *   deviations" — for a pure shift of the mean, a shift of 0.15 σ. That is the reading of incident B's
 *   "Wasserstein 0.15" (a distance with no unit is meaningless; the normalised form is what drift tools
 *   report as "Wasserstein distance (normed)").
 * - **KL divergence** D(P‖Q) = Σ pᵢ ln(pᵢ / qᵢ), in nats, of the current window P against the baseline
 *   Q, on the baseline's bins (numeric features: its quantile bins; categorical: its categories plus one
 *   "other" bin). Every bin gets `smoothing` pseudo-counts on both sides (additive smoothing: an empty bin
 *   would make the divergence infinite).
 */

/** How the Wasserstein distance is made unit-less. */
export enum DriftNormalisation {
  /** Divide by the baseline's standard deviation (0.15 = a shift of 0.15 σ). */
  STANDARD_DEVIATION = 'std',
  /**
   * Divide by the baseline's interquartile range / 1.349 (equal to σ for a normal distribution, and
   * robust to the 2–5 % outliers incident B saw in its own baseline).
   */
  INTERQUARTILE_RANGE = 'iqr',
  /** No normalisation: the distance in the feature's own unit. */
  NONE = 'none',
}

/** IQR of a standard normal distribution: 2 × Φ⁻¹(0.75). */
export const NORMAL_IQR = 1.3489795003921634;

/** Ascending copy of finite values. */
export function sortedFinite(values: readonly number[]): number[] {
  return values.filter(v => Number.isFinite(v)).sort((a, b) => a - b);
}

/**
 * Wasserstein-1 between two empirical distributions (every value weighs 1/n of its sample), exact:
 * ∫|F_a − F_b| dx swept over the merged sorted values. Samples of different sizes are fine. NaN when
 * either is empty.
 */
export function wasserstein1(a: readonly number[], b: readonly number[]): number {
  const x = sortedFinite(a);
  const y = sortedFinite(b);
  if (!x.length || !y.length) return NaN;
  let i = 0;
  let j = 0;
  let total = 0;
  let prev = Math.min(x[0], y[0]);
  while (i < x.length || j < y.length) {
    const next = j >= y.length || (i < x.length && x[i] <= y[j]) ? x[i] : y[j];
    total += Math.abs(i / x.length - j / y.length) * (next - prev);
    prev = next;
    while (i < x.length && x[i] === next) i++;
    while (j < y.length && y[j] === next) j++;
  }
  return total;
}

/** Mean and (population) standard deviation of finite values. */
export function meanStd(values: readonly number[]): { mean: number; std: number } {
  const v = values.filter(Number.isFinite);
  if (!v.length) return { mean: NaN, std: NaN };
  const mean = v.reduce((s, x) => s + x, 0) / v.length;
  const variance = v.reduce((s, x) => s + (x - mean) ** 2, 0) / v.length;
  return { mean, std: Math.sqrt(variance) };
}

/** The q-quantile (0 ≤ q ≤ 1) of ascending values, linearly interpolated between order statistics. */
export function quantile(sorted: readonly number[], q: number): number {
  if (!sorted.length) return NaN;
  const pos = Math.min(1, Math.max(0, q)) * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/**
 * The scale a Wasserstein distance is divided by, from the baseline: its standard deviation, or its
 * IQR / 1.349, or 1. A baseline with no spread (a constant feature) cannot normalise: NaN.
 */
export function baselineScale(sortedBaseline: readonly number[], how: DriftNormalisation, std?: number): number {
  if (how === DriftNormalisation.NONE) return 1;
  const s =
    how === DriftNormalisation.INTERQUARTILE_RANGE
      ? (quantile(sortedBaseline, 0.75) - quantile(sortedBaseline, 0.25)) / NORMAL_IQR
      : (std ?? meanStd(sortedBaseline).std);
  return s > 0 ? s : NaN;
}

/** Wasserstein-1 divided by the baseline's scale (see {@link DriftNormalisation}). */
export function normalisedWasserstein(
  current: readonly number[],
  baseline: readonly number[],
  how: DriftNormalisation = DriftNormalisation.STANDARD_DEVIATION,
  baselineStd?: number,
): number {
  return wasserstein1(current, baseline) / baselineScale(sortedFinite(baseline), how, baselineStd);
}

/**
 * Interior bin edges at the baseline's quantiles 1/bins … (bins−1)/bins, duplicates removed (a
 * feature with repeated values has fewer distinct edges): bins = edges + 1, the first and last open.
 */
export function quantileEdges(sortedBaseline: readonly number[], bins: number): number[] {
  const edges: number[] = [];
  for (let k = 1; k < bins; k++) {
    const e = quantile(sortedBaseline, k / bins);
    if (Number.isFinite(e) && (edges.length === 0 || e > edges[edges.length - 1])) edges.push(e);
  }
  return edges;
}

/** Counts per bin: bin k holds edges[k−1] < x ≤ edges[k] (bin 0: x ≤ edges[0]; the last: x > the last edge). */
export function histogram(values: readonly number[], edges: readonly number[]): number[] {
  const counts = new Array<number>(edges.length + 1).fill(0);
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    let lo = 0;
    let hi = edges.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (v <= edges[mid]) hi = mid;
      else lo = mid + 1;
    }
    counts[lo]++;
  }
  return counts;
}

/**
 * KL divergence D(P‖Q) in nats between two histograms on the same bins, each count raised by
 * `smoothing` (additive smoothing, so an empty bin has a small, not zero, probability). NaN when the
 * bins differ in number or a side has nothing.
 */
export function klDivergence(current: readonly number[], baseline: readonly number[], smoothing = 0.5): number {
  if (current.length !== baseline.length || !current.length) return NaN;
  const n = current.reduce((s, c) => s + c, 0);
  const m = baseline.reduce((s, c) => s + c, 0);
  if (n <= 0 || m <= 0) return NaN;
  const k = current.length;
  let d = 0;
  for (let i = 0; i < k; i++) {
    const p = (current[i] + smoothing) / (n + k * smoothing);
    const q = (baseline[i] + smoothing) / (m + k * smoothing);
    if (p > 0) d += p * Math.log(p / q); // 0 · ln 0 = 0 (its limit)
  }
  return Math.max(0, d);
}

/**
 * KL divergence of categorical counts: the baseline's categories, and one "other" bin for everything
 * the baseline never saw (so a new category weighs in instead of vanishing).
 */
export function categoricalKl(current: Record<string, number>, baseline: Record<string, number>, smoothing = 0.5): number {
  const keys = Object.keys(baseline);
  const other = (counts: Record<string, number>) => Object.entries(counts).reduce((s, [key, c]) => (key in baseline ? s : s + c), 0);
  return klDivergence([...keys.map(key => current[key] ?? 0), other(current)], [...keys.map(key => baseline[key]), other(baseline)], smoothing);
}

/**
 * Total variation between two categorical distributions (½ Σ |pᵢ − qᵢ|, 0–1): the largest share of
 * traffic that changed category — incident B's cluster-share comparison (clusters as categories).
 */
export function shareShift(current: Record<string, number>, baseline: Record<string, number>): number {
  const n = Object.values(current).reduce((s, c) => s + c, 0);
  const m = Object.values(baseline).reduce((s, c) => s + c, 0);
  if (n <= 0 || m <= 0) return NaN;
  const keys = new Set([...Object.keys(current), ...Object.keys(baseline)]);
  let d = 0;
  for (const key of keys) d += Math.abs((current[key] ?? 0) / n - (baseline[key] ?? 0) / m);
  return d / 2;
}

/**
 * A uniform random sample of at most `capacity` values from a stream of unknown length (Vitter's
 * algorithm R): memory stays bounded whatever the window's volume, and every value seen has the same
 * chance capacity/seen to be kept. `random` is injectable for deterministic tests.
 */
export class Reservoir {
  /** Values kept. */
  public readonly values: number[] = [];
  /** Values offered. */
  public seen = 0;
  constructor(
    public readonly capacity: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** Offers one value (non-finite values are ignored). */
  public add(v: number): void {
    if (!Number.isFinite(v)) return;
    this.seen++;
    if (this.values.length < this.capacity) {
      this.values.push(v);
      return;
    }
    const slot = Math.floor(this.random() * this.seen);
    if (slot < this.capacity) this.values[slot] = v;
  }
}
