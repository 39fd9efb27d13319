// The drift statistics against distributions whose distances are known in closed form (not re-derived
// with the code under test): shifted normals, normals of different spread, a mixture with outliers,
// categorical shares. Samples are "perfect" samples — the distribution's quantiles at (i + 0.5) / n —
// so the only error is the quantile grid's, bounded in each assertion's tolerance.
import { categoricalBaseline, numericBaseline, powerLawQuantile, requestSizeBaseline } from '../lib/drift/baseline';
import {
  baselineScale,
  categoricalKl,
  DriftNormalisation,
  histogram,
  klDivergence,
  meanStd,
  normalisedWasserstein,
  quantile,
  quantileEdges,
  Reservoir,
  shareShift,
  sortedFinite,
  wasserstein1,
} from '../lib/drift/statistics';

/** Φ⁻¹ (Acklam's rational approximation, relative error < 1.2e-9), written here, not in the library. */
function probit(p: number): number {
  const a = [-39.69683028665376, 220.9460984245205, -275.928510446969, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - lo) return -probit(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
  );
}
/** n values of N(mu, sigma²) at its quantiles (i + 0.5) / n. */
const normal = (mu: number, sigma: number, n = 20000) => Array.from({ length: n }, (_, i) => mu + sigma * probit((i + 0.5) / n));

describe('Wasserstein-1 against closed forms', () => {
  test('shifted normals: W1 = |μ1 − μ2|', () => {
    expect(wasserstein1(normal(0, 1), normal(0.3, 1))).toBeCloseTo(0.3, 6);
    expect(wasserstein1(normal(5, 2), normal(3, 2))).toBeCloseTo(2, 6);
  });

  test('normals of different spread: W1 = |σ1 − σ2| · √(2/π)', () => {
    // The monotone coupling moves z to 2z: E|2Z − Z| = E|Z| = √(2/π) = 0.79788…; the grid loses ~2φ(4.06) ≈ 2e-4 of tail.
    expect(wasserstein1(normal(0, 1), normal(0, 2))).toBeCloseTo(0.7979, 3);
    expect(wasserstein1(normal(1, 3), normal(1, 1.5))).toBeCloseTo(1.5 * 0.79788, 2);
  });

  test('samples of different sizes', () => {
    expect(wasserstein1(normal(0, 1, 1000), normal(0.5, 1, 3000))).toBeCloseTo(0.5, 2);
  });

  test('a mixture with 5 % outliers at c: W1 = 0.05 · E|X − c| (≈ 0.5 for c = 10, N(0, 1))', () => {
    // F_mix − F = 0.05 (1{x ≥ 10} − F), so ∫|F_mix − F| = 0.05 · W1(N(0,1), δ10) = 0.05 · E|X − 10| = 0.05 · 10.
    const mix = [...normal(0, 1, 19000), ...Array(1000).fill(10)];
    expect(wasserstein1(mix, normal(0, 1))).toBeCloseTo(0.5, 2);
  });

  test('ties and small samples: exact', () => {
    expect(wasserstein1([0, 0, 1], [0, 1, 1])).toBeCloseTo(1 / 3, 12);
    expect(wasserstein1([1, 2, 3], [1, 2, 3])).toBe(0);
    expect(wasserstein1([0], [4])).toBe(4);
    expect(wasserstein1([4, 0], [0, 4])).toBe(0); // order does not matter
    expect(wasserstein1([], [1])).toBeNaN();
    expect(wasserstein1([1, NaN, Infinity], [1])).toBe(0); // non-finite values ignored
  });
});

describe('normalisation: 0.15 means a shift of 0.15 baseline standard deviations', () => {
  test.each([1, 50, 0.01])('σ = %p: a 0.15 σ shift reads 0.15', sigma => {
    expect(normalisedWasserstein(normal(0.15 * sigma, sigma), normal(0, sigma))).toBeCloseTo(0.15, 3);
  });

  test('IQR normalisation: equal to σ on a normal baseline, robust to its outliers', () => {
    const base = normal(0, 2);
    expect(baselineScale(sortedFinite(base), DriftNormalisation.INTERQUARTILE_RANGE)).toBeCloseTo(2, 2);
    // Incident B's baseline with 5 % outliers far out: σ is inflated, the IQR is not.
    const dirty = [...normal(0, 1, 19000), ...Array(1000).fill(100)];
    const current = dirty.map(x => x + 0.3);
    expect(normalisedWasserstein(current, dirty, DriftNormalisation.INTERQUARTILE_RANGE)).toBeCloseTo(0.3, 1);
    expect(normalisedWasserstein(current, dirty, DriftNormalisation.STANDARD_DEVIATION)).toBeLessThan(0.02);
    expect(normalisedWasserstein(current, dirty, DriftNormalisation.NONE)).toBeCloseTo(0.3, 6);
  });

  test('a given baseline σ is used; a constant baseline cannot normalise', () => {
    expect(normalisedWasserstein([1.5], [1], DriftNormalisation.STANDARD_DEVIATION, 2)).toBe(0.25);
    expect(normalisedWasserstein([2], [1, 1, 1])).toBeNaN();
    expect(baselineScale([1, 1], DriftNormalisation.INTERQUARTILE_RANGE)).toBeNaN();
  });
});

describe('KL divergence', () => {
  // Closed forms: KL(N(μ1,σ1²) ‖ N(μ2,σ2²)) = ln(σ2/σ1) + (σ1² + (μ1−μ2)²)/(2σ2²) − 1/2.
  const closed = (m1: number, s1: number, m2: number, s2: number) => Math.log(s2 / s1) + (s1 ** 2 + (m1 - m2) ** 2) / (2 * s2 ** 2) - 0.5;

  test('binned KL of shifted normals approaches (μ1 − μ2)²/2 from below as bins get finer', () => {
    const base = normal(0, 1, 100000);
    const cur = normal(0.5, 1, 100000);
    const kl = (bins: number) => {
      const edges = quantileEdges(base, bins);
      return klDivergence(histogram(cur, edges), histogram(base, edges), 0);
    };
    expect(closed(0.5, 1, 0, 1)).toBeCloseTo(0.125, 12);
    // Binning can only lose information (data-processing inequality): below the continuous 0.125.
    expect(kl(10)).toBeLessThan(0.125);
    expect(kl(10)).toBeGreaterThan(0.1);
    expect(kl(200)).toBeCloseTo(0.125, 2);
  });

  test('binned KL of normals with different σ', () => {
    const base = normal(0, 1, 100000);
    const cur = normal(0, 1.5, 100000);
    const edges = quantileEdges(base, 200);
    const d = klDivergence(histogram(cur, edges), histogram(base, edges), 0);
    const exact = closed(0, 1.5, 0, 1); // = ln(1/1.5) + 2.25/2 − 0.5 = 0.21953
    expect(exact).toBeCloseTo(0.2195, 4);
    expect(d).toBeLessThan(exact);
    // The wider current spills into the two open tail bins, whose inside shape binning cannot see: 86 % of it.
    expect(d).toBeGreaterThan(0.85 * exact);
  });

  test('additive smoothing: an empty bin gives a finite divergence (hand-computed)', () => {
    // p = (10.5/11, 0.5/11), q = (0.5, 0.5): 0.95455·ln(1.90909) + 0.04545·ln(0.09091) = 0.50824
    expect(klDivergence([10, 0], [5, 5], 0.5)).toBeCloseTo(0.50824, 4);
    expect(klDivergence([10, 0], [5, 5], 0)).toBeCloseTo(Math.log(2), 12);
    expect(klDivergence([5, 5], [5, 5])).toBe(0);
    expect(klDivergence([1, 2], [1, 2, 3])).toBeNaN();
    expect(klDivergence([0, 0], [1, 1])).toBeNaN();
  });

  test('categorical KL, and categories the baseline never saw', () => {
    // 0.75 ln(0.75/0.5) + 0.25 ln(0.25/0.5) = 0.130812
    expect(categoricalKl({ a: 75, b: 25 }, { a: 50, b: 50 }, 0)).toBeCloseTo(0.130812, 5);
    expect(categoricalKl({ a: 50, c: 50 }, { a: 50, b: 50 })).toBeGreaterThan(1);
    expect(categoricalKl({ a: 50, b: 50 }, { a: 50, b: 50 })).toBe(0);
  });
});

describe('cluster shares (total variation)', () => {
  test('known shifts', () => {
    expect(shareShift({ 0: 60, 1: 40 }, { 0: 50, 1: 50 })).toBeCloseTo(0.1, 12);
    expect(shareShift({ 0: 50, 1: 50 }, { 0: 500, 1: 500 })).toBe(0); // shares, not counts
    expect(shareShift({ 2: 10 }, { 0: 1, 1: 1 })).toBe(1); // all traffic in a cluster never seen
    expect(shareShift({}, { 0: 1 })).toBeNaN();
  });
});

describe('building blocks', () => {
  test('quantiles, edges and bins', () => {
    const s = [1, 2, 3, 4, 5];
    expect(quantile(s, 0.5)).toBe(3);
    expect(quantile(s, 0.25)).toBe(2);
    expect(quantile(s, 0.1)).toBeCloseTo(1.4, 12);
    expect(quantile(s, 1)).toBe(5);
    expect(quantile([], 0.5)).toBeNaN();
    expect(quantileEdges([1, 1, 1, 2], 4)).toEqual([1, 1.25]); // repeated values: fewer edges
    expect(histogram([0, 1, 1.5, 2, 3, NaN], [1, 2])).toEqual([2, 2, 1]); // x ≤ 1 | 1 < x ≤ 2 | x > 2
    expect(meanStd([2, 4, 4, 4, 5, 5, 7, 9])).toEqual({ mean: 5, std: 2 });
  });

  test('the reservoir keeps at most its capacity, a uniform sample', () => {
    let seed = 42;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const r = new Reservoir(1000, rnd);
    for (let i = 1; i <= 100000; i++) r.add(i);
    r.add(NaN);
    expect(r.values).toHaveLength(1000);
    expect(r.seen).toBe(100000);
    // A uniform sample of 1..100000 has mean 50000 (sd of the mean ≈ 28868/√1000 ≈ 913): within 3 sd.
    expect(Math.abs(meanStd(r.values).mean - 50000)).toBeLessThan(2800);
    // The late values are kept too (a sample that stopped at the first 1000 would fail).
    expect(Math.max(...r.values)).toBeGreaterThan(90000);
  });
});

describe('baselines', () => {
  test('a numeric baseline keeps the distribution as equally likely quantiles', () => {
    const b = numericBaseline(normal(10, 2))!;
    expect(b.quantiles).toHaveLength(200);
    expect(b.mean).toBeCloseTo(10, 6);
    expect(b.std).toBeCloseTo(2, 2);
    expect(b.counts).toHaveLength(b.edges.length + 1);
    expect(b.counts.reduce((a, c) => a + c, 0)).toBe(20000);
    // Its quantiles stand for the full sample: a 0.15 σ shift still reads 0.15.
    expect(normalisedWasserstein(normal(10.3, 2), b.quantiles, DriftNormalisation.STANDARD_DEVIATION, b.std)).toBeCloseTo(0.15, 2);
    expect(numericBaseline([NaN])).toBeUndefined();
    expect(categoricalBaseline([1, 1, 2])).toEqual({ kind: 'categorical', count: 3, categories: { 1: 2, 2: 1 } });
  });

  test("the memory profile's power law: exact quantiles of the profiler's bounded Pareto", () => {
    const q = powerLawQuantile('powerlaw:5:3000')!;
    // α = 1: F(x) = (1 − 5/x) / (1 − 5/3000); the median solves F = 0.5: x = 1/(0.5/5 + 0.5/3000) = 9.983
    expect(q(0)).toBeCloseTo(5, 9);
    expect(q(1)).toBeCloseTo(3000, 6);
    expect(q(0.5)).toBeCloseTo(9.983, 3);
    expect(powerLawQuantile('powerlaw:5:3000:2')!(0.5)).toBeCloseTo(Math.sqrt(1 / (0.5 / 25 + 0.5 / 9e6)), 6);
    expect(powerLawQuantile('requests.jsonl')).toBeUndefined();
    expect(powerLawQuantile('powerlaw:10:5')).toBeUndefined();
    const b = requestSizeBaseline({ distribution: 'powerlaw:5:3000', p50: { size: 11 }, p99: { size: 444 }, p999: { size: 2801 }, points: [] })!;
    expect(quantile(b.quantiles, 0.5)).toBeCloseTo(9.98, 0);
    // Incident A's mobile clients sent 15 % more: every size × 1.15 moves the distribution by 0.15 × its mean,
    // i.e. 0.15 · mean / σ in σ units (small for a heavy tail, whose σ is large: the KL bins see it better).
    const scaled = b.quantiles.map(x => 1.15 * x);
    expect(normalisedWasserstein(scaled, b.quantiles, DriftNormalisation.STANDARD_DEVIATION, b.std)).toBeCloseTo((0.15 * b.mean) / b.std, 2);
  });

  test('a profile of recorded requests: its percentiles joined linearly', () => {
    const b = requestSizeBaseline({
      distribution: 'requests.jsonl',
      p50: { size: 100 },
      p99: { size: 1000 },
      p999: { size: 2000 },
      points: [{ size: 10 }, { size: 3000 }],
    })!;
    expect(quantile(b.quantiles, 0.25)).toBeCloseTo(55, 0); // halfway from 10 (u = 0) to 100 (u = 0.5)
    expect(requestSizeBaseline({ distribution: 'x', p50: { size: 0 }, p99: { size: 0 }, p999: { size: 0 }, points: [] })).toBeUndefined();
  });
});
