import * as fs from 'fs';

// The simulator reads latency by size once per request: latencyCurve's Math functions through module bindings
// (under jest's vm context each global lookup goes through the context's interceptor, several times slower). Not a
// binding named Math: Stryker's instrumentation reads the global Math before a module-level one would exist.
const { exp, log, max, min } = Math;

/** Bytes a request needs beyond the worker's baseline: `a + b × size + c × size²` (the profiler's fit). */
export interface ProfiledCurve {
  /** Constant term, bytes. */
  readonly a: number;
  /** Bytes per unit of size. */
  readonly b: number;
  /** Bytes per unit of size squared (attention, pairwise work). */
  readonly c: number;
}

/** One measured size point: the peak memory a request of that size added, and its latency. */
export interface ProfiledPoint {
  /** The request's size. */
  readonly size: number;
  /** Peak memory it added, bytes. */
  readonly peakBytes: number;
  /** Its latency (median of the repeats), milliseconds. */
  readonly latencyMs: number;
}

/** One percentile of the profiled request distribution. */
export interface ProfiledPercentile {
  /** The request's size (sequence length, rows). */
  readonly size: number;
  /** The memory it adds to a worker, bytes (from the curve). */
  readonly bytes: number;
}

/**
 * A model's memory measured on its real inference code by the runtime helper's profiler
 * (`python3 -m resilient_endpoint_runtime.profile … --out memory-profile.json`): the worker's baseline
 * with the model loaded, the curve of the memory a request adds by its size, and the P50 / P99 / P99.9
 * requests of the profiled distribution. Given to a model (`model.memoryProfile`), it sets the model's
 * footprint (baseline + the P99.9 request), the worker count through it, the memory guard's curve in
 * the container (`RESILIENT_ENDPOINT_MEMORY_CURVE`) and the largest size a worker can admit; a readiness
 * rule (`RE-ProfiledMemory`) fails `cdk synth` when the P99.9 request cannot fit a worker's budget.
 */
export class MemoryProfile {
  /**
   * Reads a `memory-profile.json` at synthesis. A file that is missing or not a profile is a synth error on
   * the endpoint that uses it (reported with every other error), not an exception.
   */
  public static fromFile(path: string): MemoryProfile {
    try {
      return MemoryProfile.fromJson(fs.readFileSync(path, 'utf8'), path);
    } catch (e) {
      return new MemoryProfile(undefined, `${path}: ${(e as Error).message}`);
    }
  }

  /**
   * A profile from the JSON text the profiler writes.
   * @param json the profile's JSON text
   * @param source where it came from, for messages; default 'the profile'
   */
  public static fromJson(json: string, source: string = 'the profile'): MemoryProfile {
    let o: any;
    try {
      o = JSON.parse(json);
    } catch (e) {
      return new MemoryProfile(undefined, `${source}: not JSON (${(e as Error).message})`);
    }
    const num = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x >= 0;
    const ok =
      o &&
      num(o.baselineBytes) &&
      o.curve &&
      ['a', 'b', 'c'].every(k => num(o.curve[k])) &&
      o.percentiles &&
      ['p50', 'p99', 'p999'].every(k => num(o.percentiles[k]?.size) && num(o.percentiles[k]?.bytes));
    return ok
      ? new MemoryProfile(o)
      : new MemoryProfile(undefined, `${source}: not a memory profile (baselineBytes, curve {a, b, c}, percentiles p50/p99/p999 {size, bytes})`);
  }

  /** What a request's size counts (e.g. 'events', 'rows', 'bytes'). */
  public readonly sizeUnit: string;
  /**
   * How a request's size is read from its JSON body, as the inference code counts it: a drift selector
   * (e.g. `$.events.length()`, `$.instances.length()`), or `bytes()` for the body's size. The drift monitor
   * measures captured requests with it, so that they are compared with the profiled distribution in the
   * same unit. From the profile's `sizeSelector` field.
   * @default - 'bytes()' when `sizeUnit` is 'bytes', otherwise none: the drift monitor cannot measure requests in the profile's unit
   */
  public readonly sizeSelector?: string;
  /**
   * The same for CSV bodies (rows of cells), e.g. `$.length()` for the number of rows. From the profile's
   * `csvSizeSelector` field.
   * @default - CSV bodies are not measured
   */
  public readonly csvSizeSelector?: string;
  /** Where it was measured: 'cpu' (the worker's RSS) or 'cuda' (the CUDA allocator). */
  public readonly device: string;
  /** A worker's memory with the model loaded and warm, bytes. */
  public readonly baselineBytes: number;
  /** The memory a request adds, by its size. */
  public readonly curve: ProfiledCurve;
  /** The median request of the profiled distribution. */
  public readonly p50: ProfiledPercentile;
  /** The 99th-percentile request. */
  public readonly p99: ProfiledPercentile;
  /** The 99.9th-percentile request (the long tail that took incident A down). */
  public readonly p999: ProfiledPercentile;
  /** The measured size points (those that ran). */
  public readonly points: ProfiledPoint[];
  /** The request distribution profiled, as given to the profiler (e.g. 'powerlaw:5:3000'). */
  public readonly distribution: string;
  /** Why the profile could not be read (reported as a synth error where it is used), or undefined. */
  public readonly problem?: string;

  private constructor(o: any, problem?: string) {
    this.problem = problem;
    this.sizeUnit = o?.sizeUnit ?? 'size';
    const selector = (k: string) => (typeof o?.[k] === 'string' && o[k].trim() ? String(o[k]).trim() : undefined);
    this.sizeSelector = selector('sizeSelector') ?? (this.sizeUnit === 'bytes' ? 'bytes()' : undefined);
    this.csvSizeSelector = selector('csvSizeSelector');
    this.device = o?.device === 'cuda' ? 'cuda' : 'cpu';
    this.baselineBytes = o?.baselineBytes ?? 0;
    this.curve = { a: o?.curve?.a ?? 0, b: o?.curve?.b ?? 0, c: o?.curve?.c ?? 0 };
    const pct = (k: string): ProfiledPercentile => ({ size: o?.percentiles?.[k]?.size ?? 0, bytes: o?.percentiles?.[k]?.bytes ?? 0 });
    this.p50 = pct('p50');
    this.p99 = pct('p99');
    this.p999 = pct('p999');
    this.points = (Array.isArray(o?.points) ? o.points : [])
      .filter((p: any) => typeof p?.size === 'number' && typeof p?.peakBytes === 'number' && typeof p?.latencyMs === 'number')
      .map((p: any) => ({ size: p.size, peakBytes: p.peakBytes, latencyMs: p.latencyMs }));
    this.distribution = typeof o?.distribution === 'string' ? o.distribution : '';
  }

  /** The memory a request of this size adds to a worker, bytes. */
  public estimateBytes(size: number): number {
    const { a, b, c } = this.curve;
    return a + b * size + c * size * size;
  }

  /**
   * The mean latency of a request of the profiled distribution, milliseconds: the measured latency by size
   * (interpolated on a log-log scale between the points, held beyond them), averaged over the distribution
   * (`powerlaw:LO:HI[:ALPHA]`). What one busy slot (a vCPU, a model copy) spends per request on average, so
   * it sets how many requests a second an instance serves — the mean, not the median: with a long tail the
   * few large requests take much of the time. Undefined without two measured points or a power-law
   * distribution.
   */
  public meanLatencyMs(): number | undefined {
    const bounds = /^powerlaw:([\d.]+):([\d.]+)(?::([\d.]+))?$/.exec(this.distribution);
    if (!bounds || this.points.length < 2) return undefined;
    const [lo, hi, alpha] = [Number(bounds[1]), Number(bounds[2]), Number(bounds[3] ?? 1)];
    if (!(lo > 0 && hi > lo && alpha > 0)) return undefined;
    // E[latency] = ∫₀¹ latency(F⁻¹(u)) du, the midpoint rule on 4,000 quantiles of the bounded Pareto.
    const n = 4000;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += latencyAt(this.points, boundedParetoQuantile((i + 0.5) / n, lo, hi, alpha));
    return sum / n;
  }

  /** The largest whole size whose request fits in `bytes` above the baseline (0 when none does). */
  public largestSizeWithin(bytes: number): number {
    const { a, b, c } = this.curve;
    const room = bytes - a;
    if (room < 0) return 0;
    if (c > 0) return Math.max(0, Math.floor((-b + Math.sqrt(b * b + 4 * c * room)) / (2 * c) + 1e-9));
    if (b > 0) return Math.floor(room / b);
    return Number.MAX_SAFE_INTEGER;
  }
}

/**
 * A bounded Pareto (power law) quantile: the size below which a share `u` of requests on [lo, hi] with
 * exponent `alpha` fall (the inverse of its distribution function).
 */
export function boundedParetoQuantile(u: number, lo: number, hi: number, alpha: number): number {
  const la = Math.pow(lo, alpha);
  const ha = Math.pow(hi, alpha);
  return Math.pow(-(u * ha - u * la - ha) / (ha * la), -1 / alpha);
}

/**
 * The latency of a request of `size` from measured (size, latency ms) points sorted by size: interpolated on a
 * log-log scale between the two points around it, held at the first and last beyond them.
 */
export function latencyAt(points: readonly { size: number; latencyMs: number }[], size: number): number {
  return latencyCurve(points)(size);
}

/**
 * `latencyAt` over fixed points, with their logarithms taken once: the simulator reads it for every request
 * it starts. The same arithmetic, so the same values.
 */
export function latencyCurve(points: readonly { size: number; latencyMs: number }[]): (size: number) => number {
  const sizes = points.map(p => p.size);
  const logSizes = sizes.map(x => log(x));
  const logLatencies = points.map(p => log(max(1e-3, p.latencyMs)));
  const last = points.length - 1;
  return size => {
    const x = max(sizes[0], min(sizes[last], size));
    let k = 1;
    while (k < last && sizes[k] < x) k++;
    const f = sizes[k] > sizes[k - 1] ? (log(x) - logSizes[k - 1]) / (logSizes[k] - logSizes[k - 1]) : 0;
    const l0 = logLatencies[k - 1];
    return exp(l0 + f * (logLatencies[k] - l0));
  };
}
