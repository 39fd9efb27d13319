import * as fs from 'fs';

// Hot loops read Math through a module binding: under jest's vm context each global lookup goes
// through the context's interceptor, which made the simulator 4-9x slower in tests than in node.
const Math = globalThis.Math;

/** Seeded PRNG (mulberry32): reproducible simulations. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  /** Uniform in [0, 1). */
  public next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Poisson-distributed count with mean `lambda` (Knuth below 30, normal approximation above). */
  public poisson(lambda: number): number {
    if (lambda <= 0) return 0;
    if (lambda > 30) {
      const u1 = Math.max(this.next(), 1e-12);
      const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * this.next());
      return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * z));
    }
    const l = Math.exp(-lambda);
    let k = 0;
    let p = 1;
    do {
      k++;
      p *= this.next();
    } while (p > l);
    return k - 1;
  }
  /** Bounded Pareto (power law) on [lo, hi] with exponent alpha. */
  public boundedPareto(lo: number, hi: number, alpha: number): number {
    const u = this.next();
    const la = Math.pow(lo, alpha);
    const ha = Math.pow(hi, alpha);
    return Math.pow(-(u * ha - u * la - ha) / (ha * la), -1 / alpha);
  }
}

/** A traffic trace: arrival rate per second (requests/s), and whether arrivals are Poisson. */
export interface Trace {
  readonly name: string;
  /** Length in seconds. */
  readonly seconds: number;
  /** Mean arrival rate at second t. */
  rate(t: number): number;
  /** Poisson arrivals (true) or exactly round(rate) per second (false). */
  readonly poisson: boolean;
  /** Share of requests from one abusive client (informational, for the report). */
  readonly abusiveShare?: number;
}

/** Constant rate, exactly that many requests every second. */
export function steadyTrace(qps: number, seconds: number): Trace {
  return { name: `steady ${qps} QPS`, seconds, rate: () => qps, poisson: false };
}

/** Constant mean rate with Poisson arrivals. */
export function poissonTrace(qps: number, seconds: number): Trace {
  return { name: `Poisson ${qps} QPS`, seconds, rate: () => qps, poisson: true };
}

/**
 * Off-peak rate, then a pulse to `factor` × off-peak (incident B: 17×) with 5-minute ramps,
 * then off-peak again. Poisson arrivals.
 */
export function pulseTrace(offPeakQps: number, factor = 17, opts: { before?: number; hold?: number; after?: number; ramp?: number } = {}): Trace {
  const before = opts.before ?? 1800;
  const ramp = opts.ramp ?? 300;
  const hold = opts.hold ?? 1800;
  const after = opts.after ?? 2700;
  const seconds = before + 2 * ramp + hold + after;
  const peak = offPeakQps * factor;
  const rate = (t: number) => {
    if (t < before) return offPeakQps;
    if (t < before + ramp) return offPeakQps + ((peak - offPeakQps) * (t - before)) / ramp;
    if (t < before + ramp + hold) return peak;
    if (t < before + 2 * ramp + hold) return peak - ((peak - offPeakQps) * (t - before - ramp - hold)) / ramp;
    return offPeakQps;
  };
  return { name: `pulse ${factor}× of ${offPeakQps} QPS`, seconds, rate, poisson: true };
}

/** Normal users at `userQps` each plus one abusive client sending `factor` × a normal user's rate (incident B: 150×). */
export function abusiveClientTrace(users: number, userQps: number, factor = 150, seconds = 7200, startAt = 1800): Trace {
  const normal = users * userQps;
  const abusive = userQps * factor;
  return {
    name: `${users} users + one abusive client at ${factor}×`,
    seconds,
    poisson: true,
    rate: t => normal + (t >= startAt ? abusive : 0),
    abusiveShare: abusive / (normal + abusive),
  };
}

/** A day with a daily curve (trough at 04:00, peak at 20:00), for the speed benchmark. */
export function dailyTrace(meanQps: number, peakFactor = 3): Trace {
  const seconds = 86400;
  return {
    name: `daily mean ${meanQps} QPS`,
    seconds,
    poisson: true,
    rate: t => meanQps * (1 + ((peakFactor - 1) / (peakFactor + 1)) * Math.sin(2 * Math.PI * (t / 86400 - 0.5 + 4 / 24 + 0.25))),
  };
}

/** Replays a CSV of per-second QPS (one number per line, or `second,qps`; a header line is skipped). */
export function csvTrace(file: string): Trace {
  const values = fs
    .readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .map(l => l.trim())
    .filter(Boolean)
    .map(l => Number(l.split(',').pop()))
    .filter(v => Number.isFinite(v));
  if (!values.length) throw new Error(`${file}: no per-second QPS values found (expected one number per line, or 'second,qps')`);
  if (values.some(v => v < 0)) throw new Error(`${file}: negative QPS values`);
  return { name: `replay of ${file}`, seconds: values.length, poisson: true, rate: t => values[Math.min(values.length - 1, Math.floor(t))] };
}
