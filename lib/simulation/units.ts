/**
 * Request sizes in a variant's own unit. The footprint memory model draws every request from one workload
 * (incident A's events, 5–3,000, on a power law); a variant whose memory profile states its sizes in another
 * unit or range (the clustering example counts rows, 100–200,000) has its length caps moved onto that workload
 * at the same quantile, so each cap cuts the same share of requests it cuts in the variant's own traffic.
 */
/** A bounded power law of request sizes (the profiler's `powerlaw:LO:HI[:ALPHA]`). */
export interface SizeDistribution {
  readonly min: number;
  readonly max: number;
  readonly alpha: number;
}

/**
 * A length cap moved from one size distribution to another at the same quantile (rounded): a cap of 20,000
 * rows of 100–200,000, above 99.55 % of those requests, is about 812 events of 5–3,000. At or above the
 * source's top it is the target's top; at or below its bottom, the target's bottom.
 * Bounded Pareto: F(x) = (1 − (L/x)^α) / (1 − (L/H)^α).
 */
export function translateCap(cap: number, from: SizeDistribution, to: SizeDistribution): number {
  if (cap >= from.max) return to.max;
  if (cap <= from.min) return to.min;
  const q = (1 - Math.pow(from.min / cap, from.alpha)) / (1 - Math.pow(from.min / from.max, from.alpha));
  return Math.round(to.min / Math.pow(1 - q * (1 - Math.pow(to.min / to.max, to.alpha)), 1 / to.alpha));
}

/** What `inWorkloadUnits` reads of a variant (the simulator's `SimVariant` has it). */
export interface CappedVariant {
  readonly maxSeqLen: number;
  readonly degradedMaxSeqLen: number;
  readonly profile?: { readonly sizeMin?: number; readonly sizeMax?: number; readonly sizeAlpha?: number };
}

/**
 * The variant with its caps (`MAX_SEQ_LEN`, `DEGRADED_MAX_SEQ_LEN`) in the units of `workload`: moved by
 * `translateCap` when its profile states another size distribution (ALPHA 1 when the profile gives none),
 * as it is otherwise (no profile, or the workload's own distribution).
 */
export function inWorkloadUnits<V extends CappedVariant>(v: V, workload: SizeDistribution): V {
  const p = v.profile;
  if (p?.sizeMin === undefined || p.sizeMax === undefined) return v;
  const own = { min: p.sizeMin, max: p.sizeMax, alpha: p.sizeAlpha ?? 1 };
  if (own.min === workload.min && own.max === workload.max && own.alpha === workload.alpha) return v;
  return { ...v, maxSeqLen: translateCap(v.maxSeqLen, own, workload), degradedMaxSeqLen: translateCap(v.degradedMaxSeqLen, own, workload) };
}
