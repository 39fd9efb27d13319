/**
 * The drift baseline: what "normal" looks like for each feature, as a small JSON document (a few KB
 * per feature whatever the training set's size), written once per model version by whoever knows the
 * normal traffic — the training data, the memory profiler's request distribution, or the first window
 * of the capture — and read by the drift function. Pure.
 */
import { histogram, meanStd, quantile, quantileEdges, sortedFinite } from './statistics';

/** The baseline document's format version. */
export const BASELINE_FORMAT = 1;
/** How many equally spaced quantiles a numeric feature's baseline keeps (its distribution for Wasserstein). */
export const BASELINE_QUANTILES = 200;
/** How many quantile bins a numeric feature's KL divergence uses (deciles). */
export const KL_BINS = 10;

/** A numeric feature's baseline. */
export interface NumericBaseline {
  readonly kind: 'numeric';
  /** Values the baseline was built from. */
  readonly count: number;
  readonly mean: number;
  /** Population standard deviation of the values (the Wasserstein normalisation). */
  readonly std: number;
  /** The values at probabilities (i + 0.5) / n, i = 0 … n−1: the distribution, as n equally likely points. */
  readonly quantiles: number[];
  /** KL bins: the interior edges (the baseline's deciles). */
  readonly edges: number[];
  /** KL bins: the baseline's counts per bin (edges.length + 1). */
  readonly counts: number[];
}

/** A categorical feature's baseline (e.g. the cluster a request was assigned to). */
export interface CategoricalBaseline {
  readonly kind: 'categorical';
  readonly count: number;
  /** Count per category. */
  readonly categories: Record<string, number>;
}

export type FeatureBaseline = NumericBaseline | CategoricalBaseline;

/** The baseline document. */
export interface DriftBaselineDocument {
  readonly format: number;
  /** The model version it describes (the drift function's key: a hash of the model data URI), or 'any'. */
  readonly modelVersion: string;
  /** Where it came from (a file, the memory profile, the capture window …). */
  readonly source: string;
  readonly createdAt: string;
  readonly features: Record<string, FeatureBaseline>;
}

/** A numeric baseline from raw values. Undefined when there is no finite value. */
export function numericBaseline(values: readonly number[], points = BASELINE_QUANTILES, bins = KL_BINS): NumericBaseline | undefined {
  const sorted = sortedFinite(values);
  if (!sorted.length) return undefined;
  const { mean, std } = meanStd(sorted);
  const edges = quantileEdges(sorted, bins);
  const n = Math.min(points, sorted.length);
  return {
    kind: 'numeric',
    count: sorted.length,
    mean,
    std,
    quantiles: Array.from({ length: n }, (_, i) => quantile(sorted, (i + 0.5) / n)),
    edges,
    counts: histogram(sorted, edges),
  };
}

/** A categorical baseline from raw values (each stringified). */
export function categoricalBaseline(values: readonly unknown[]): CategoricalBaseline | undefined {
  if (!values.length) return undefined;
  const categories: Record<string, number> = {};
  for (const v of values) categories[String(v)] = (categories[String(v)] ?? 0) + 1;
  return { kind: 'categorical', count: values.length, categories };
}

/**
 * The quantile function of the profiler's request distribution `powerlaw:LO:HI[:ALPHA]` (a bounded
 * Pareto on [LO, HI] with exponent ALPHA, default 1: the runtime helper's `bounded_pareto`, which the
 * profiler drew its requests from). Undefined for any other description.
 */
export function powerLawQuantile(distribution: string): ((u: number) => number) | undefined {
  const m = /^powerlaw:([0-9.eE+]+):([0-9.eE+]+)(?::([0-9.eE+]+))?$/.exec(distribution.trim());
  if (!m) return undefined;
  const lo = Number(m[1]);
  const hi = Number(m[2]);
  const alpha = m[3] === undefined ? 1 : Number(m[3]);
  if (!(lo > 0 && hi > lo && alpha > 0)) return undefined;
  const la = lo ** alpha;
  const ha = hi ** alpha;
  return u => (-(u * ha - u * la - ha) / (ha * la)) ** (-1 / alpha);
}

/** What the request-size baseline needs from a memory profile (`MemoryProfile` has it). */
export interface ProfiledSizes {
  /** e.g. 'powerlaw:5:3000'. */
  readonly distribution: string;
  readonly p50: { readonly size: number };
  readonly p99: { readonly size: number };
  readonly p999: { readonly size: number };
  /** The sizes the profiler measured (smallest and largest bound the distribution). */
  readonly points: readonly { readonly size: number }[];
}

/**
 * The request-size baseline from the memory profile: the distribution the memory was measured on.
 * A `powerlaw:` description gives its exact quantiles; a profile of recorded requests gives only its
 * P50 / P99 / P99.9 and its smallest and largest measured sizes, joined linearly.
 */
export function requestSizeBaseline(profile: ProfiledSizes, points = BASELINE_QUANTILES): NumericBaseline | undefined {
  const exact = powerLawQuantile(profile.distribution);
  let q: (u: number) => number;
  if (exact) {
    q = exact;
  } else {
    const sizes = profile.points.map(p => p.size).filter(Number.isFinite);
    if (!sizes.length || !(profile.p50.size > 0)) return undefined;
    const knots: [number, number][] = [
      [0, Math.min(...sizes, profile.p50.size)],
      [0.5, profile.p50.size],
      [0.99, profile.p99.size],
      [0.999, profile.p999.size],
      [1, Math.max(...sizes, profile.p999.size)],
    ];
    q = u => {
      const k = knots.findIndex(([p]) => p >= u);
      if (k <= 0) return knots[0][1];
      const [p0, x0] = knots[k - 1];
      const [p1, x1] = knots[k];
      return x0 + ((x1 - x0) * (u - p0)) / (p1 - p0);
    };
  }
  // A dense sample of the distribution (probabilities (i + 0.5) / 4000): its mean, spread and bins, in
  // whole sizes ≥ 1 as the profiler drew them (`max(1, round(s))`) and as requests carry them.
  const dense = Array.from({ length: 4000 }, (_, i) => Math.max(1, Math.round(q((i + 0.5) / 4000))));
  return numericBaseline(dense, points);
}

/** Problems of a parsed baseline document (empty: usable). */
export function baselineProblems(doc: unknown): string[] {
  const d = doc as Partial<DriftBaselineDocument> | undefined;
  if (!d || typeof d !== 'object') return ['not a JSON object'];
  const out: string[] = [];
  if (d.format !== BASELINE_FORMAT) out.push(`format ${String(d.format)} is not ${BASELINE_FORMAT}`);
  if (!d.features || typeof d.features !== 'object') return [...out, 'no features'];
  for (const [name, f] of Object.entries(d.features)) {
    if (f?.kind === 'numeric') {
      if (!Array.isArray(f.quantiles) || !f.quantiles.length || !f.quantiles.every(Number.isFinite))
        out.push(`${name}: quantiles must be finite numbers`);
      if (!Array.isArray(f.edges) || !Array.isArray(f.counts) || f.counts.length !== f.edges.length + 1)
        out.push(`${name}: counts must have one more entry than edges`);
    } else if (f?.kind === 'categorical') {
      if (!f.categories || typeof f.categories !== 'object' || !Object.keys(f.categories).length) out.push(`${name}: no categories`);
    } else {
      out.push(`${name}: kind must be 'numeric' or 'categorical'`);
    }
  }
  return out;
}
