/**
 * A discrete-time (1 s) model of a SageMaker endpoint under traffic: per-instance memory from
 * in-flight requests, OOM restarts, CloudWatch's 1-minute metrics with publication delay,
 * target-tracking autoscaling, weights across primary and fallback, and the circuit breaker's
 * REAL policy (`decide()` from lambda/circuit-breaker/policy.ts — never a copy).
 * Timings and their sources: ../shared/reference/scaling-dynamics.md; unverified ones are parameters.
 */
import { BreakerConfig, BreakerState, decide, initialState, MemoryPoint, STATE_CODE } from '../../lambda/circuit-breaker/policy';
import { InstanceSpec } from '../instance-types';
import { Rng, Trace } from './traces';

const GIB = 1024 ** 3;

/** One variant as deployed (from the construct) plus its workload shape. */
export interface SimVariant {
  readonly name: string;
  readonly spec: Required<InstanceSpec>;
  /** Model-server workers per instance (from the tuning). */
  readonly workers: number;
  /** Model copy footprint at peak (bytes): GPU on GPU types, else host. */
  readonly footprintBytes: number;
  /** Sequence cap at degrade level 0 (container's MAX_SEQ_LEN). */
  readonly maxSeqLen: number;
  /** Sequence cap at level ≥ 1. */
  readonly degradedMaxSeqLen: number;
  readonly initialCount: number;
  /** Autoscaling (undefined = fixed capacity). */
  readonly scaling?: { min: number; max: number; qpsPerInstance: number; scaleOutCooldownS: number; scaleInCooldownS: number };
}

/** What the model cannot know from the construct: the workload and AWS timings (all with defaults). */
export interface SimAssumptions {
  /** Requests each worker batches together (concurrent requests per worker). @default 8 */
  readonly batchPerWorker: number;
  /** Share of a model copy's footprint that is weights (the rest is activations of a full batch at 512 tokens). @default 0.4 */
  readonly weightsShare: number;
  /** Share of one request's 512-token activation memory that does not depend on length (buffers). @default 0.25 */
  readonly fixedActivationShare: number;
  /** Activation memory grows with (length/512)^exponent (attention: 2). @default 2 */
  readonly activationExponent: number;
  /** Sequence-length power law: lengths 5–3000 with this exponent (incident A). @default 1.0 */
  readonly seqAlpha: number;
  readonly seqMin: number;
  readonly seqMax: number;
  /** Service time = base + per512 × length/512 seconds. @default 0.05 / 0.25 */
  readonly serviceBaseS: number;
  readonly servicePer512S: number;
  /** Model-server queue per instance before 503 (MMS/TorchServe default 100). */
  readonly queueLimit: number;
  /** Runtime overhead on the device (CUDA context etc.), bytes. @default 0.5 GiB */
  readonly runtimeBytes: number;
  /** Seconds from OOM to the restarted instance serving again (incident B: within 30 s; unverified). @default 60 */
  readonly restartS: number;
  /** New instance to InService (scaling-dynamics: g4dn.xlarge P50 381 s; CPU unverified). @default 380 GPU / 180 CPU */
  readonly provisioningS?: number;
  /** CloudWatch 1-minute datapoint availability delay (60–120 s). @default 90 */
  readonly metricDelayS: number;
  /** Weight update to effect (unverified: swept 0–60 s). @default 30 */
  readonly weightApplyS: number;
  /** Container polls the degrade level every N seconds. @default 5 */
  readonly levelPollS: number;
}

export const DEFAULT_ASSUMPTIONS: SimAssumptions = {
  batchPerWorker: 8, weightsShare: 0.4, fixedActivationShare: 0.25, activationExponent: 2,
  seqAlpha: 1.0, seqMin: 5, seqMax: 3000, serviceBaseS: 0.05, servicePer512S: 0.25,
  queueLimit: 100, runtimeBytes: 0.5 * GIB, restartS: 60, metricDelayS: 90, weightApplyS: 30, levelPollS: 5,
};

/** One scenario's configuration. */
export interface SimConfig {
  readonly primary: SimVariant;
  readonly fallback?: SimVariant;
  /** Breaker configuration, or undefined for no breaker. */
  readonly breaker?: BreakerConfig;
  /** Use the variants' autoscaling. */
  readonly autoscaling: boolean;
  readonly assumptions?: Partial<SimAssumptions>;
  readonly seed: number;
  /** Called with progress 0–1 about every 5 %. */
  readonly onProgress?: (fraction: number) => void;
}

/** Outcome of one run. */
export interface SimResult {
  readonly arrivals: number;
  readonly served: number;
  readonly servedByFallback: number;
  /** Failed: OOM (in-flight and queued lost), 503 (queue full), no instance up. */
  readonly failed: number;
  readonly failedByOom: number;
  /** Rejected on purpose at degrade level 2 (too long). */
  readonly rejected: number;
  readonly inFlightAtEnd: number;
  readonly oomEvents: number;
  /** Seconds from the first time the primary's memory crossed the breaker threshold to the container degrading (undefined: never). */
  readonly timeToDegradeS?: number;
  /** Seconds with degrade level ≥ 1. */
  readonly timeDegradedS: number;
  readonly instanceMinutes: number;
  readonly maxPrimaryMemoryPercent: number;
  /** Every 10 s: time, QPS, hottest memory % over the last 10 s (primary, fallback), instances (primary, fallback), breaker state code. */
  readonly series: { t: number; qps: number; memP: number; memF: number; instP: number; instF: number; state: number }[];
}

interface Req { start: number; finish: number; mem: number }
interface Instance {
  readyAt: number; downUntil: number;
  slots: number[];
  active: Req[];
  queue: { len: number }[];
}
interface VariantState {
  v: SimVariant;
  instances: Instance[];
  desired: number;
  lastScaleOut: number; lastScaleIn: number;
  // current minute accumulators
  minuteMax: number; windowMax: number; minuteInv: number; min5xx: number; minuteInstSec: number;
  published: { t: number; availableAt: number; mem: number; inv: number; e5: number; ipi: number }[];
}

/** Runs one scenario over a trace. */
export function runSimulation(trace: Trace, cfg: SimConfig): SimResult {
  const a: SimAssumptions = { ...DEFAULT_ASSUMPTIONS, ...cfg.assumptions };
  const rng = new Rng(cfg.seed);
  const provisioning = (v: SimVariant) => a.provisioningS ?? (v.spec.gpuCount > 0 ? 380 : 180);
  const deviceBytes = (v: SimVariant) => (v.spec.gpuCount > 0 ? v.spec.gpuCount * v.spec.gpuMemoryGiB : v.spec.memoryGiB) * GIB;
  const weightsBytes = (v: SimVariant) => v.footprintBytes * a.weightsShare;
  const act512 = (v: SimVariant) => (v.footprintBytes * (1 - a.weightsShare)) / a.batchPerWorker;
  const newInstance = (v: SimVariant, readyAt: number): Instance => ({
    readyAt, downUntil: -1, slots: new Array(v.workers * a.batchPerWorker).fill(0), active: [], queue: [],
  });
  const mkState = (v: SimVariant): VariantState => ({
    v, instances: Array.from({ length: v.initialCount }, () => newInstance(v, 0)), desired: v.initialCount,
    lastScaleOut: -1e9, lastScaleIn: -1e9, minuteMax: 0, windowMax: 0, minuteInv: 0, min5xx: 0, minuteInstSec: 0, published: [],
  });
  const P = mkState(cfg.primary);
  const F = cfg.fallback ? mkState(cfg.fallback) : undefined;
  const variants = F ? [P, F] : [P];

  let breaker: BreakerState = initialState(0);
  let weights = { p: 1, f: 0 };
  let pendingWeights: { at: number; w: { p: number; f: number } } | undefined;
  let level = 0;
  let pendingLevel: { at: number; level: number } | undefined;

  let arrivals = 0, served = 0, servedF = 0, failed = 0, failedOom = 0, rejected = 0, ooms = 0;
  let firstCross: number | undefined;
  let firstDegrade: number | undefined;
  let degradedS = 0;
  let instanceSeconds = 0;
  let maxMemP = 0;
  const series: SimResult['series'] = [];
  let lastReport = 0;

  const up = (i: Instance, t: number) => i.readyAt <= t && i.downUntil <= t;
  const serviceTime = (len: number) => a.serviceBaseS + a.servicePer512S * len / 512;

  const total = trace.seconds + 600; // drain for 10 minutes after the trace
  for (let t = 0; t < total; t++) {
    // --- control-plane effects that land now ---
    if (pendingWeights && pendingWeights.at <= t) { weights = pendingWeights.w; pendingWeights = undefined; }
    if (pendingLevel && pendingLevel.at <= t) { level = pendingLevel.level; pendingLevel = undefined; }
    if (level >= 1) degradedS++;

    // --- arrivals ---
    const lambda = t < trace.seconds ? trace.rate(t) : 0;
    const n = trace.poisson ? rng.poisson(lambda) : Math.round(lambda);
    arrivals += n;
    for (let k = 0; k < n; k++) {
      const seq = rng.boundedPareto(a.seqMin, a.seqMax, a.seqAlpha);
      const toFallback = F && rng.next() * (weights.p + weights.f) < weights.f;
      const vs = toFallback ? F! : P;
      vs.minuteInv++;
      const cap = level >= 1 ? vs.v.degradedMaxSeqLen : vs.v.maxSeqLen;
      if (level >= 2 && seq > vs.v.degradedMaxSeqLen) { rejected++; continue; }
      const len = Math.min(seq, cap);
      let best: Instance | undefined;
      for (const i of vs.instances) {
        if (up(i, t) && (!best || i.active.length + i.queue.length < best.active.length + best.queue.length)) best = i;
      }
      if (!best) { failed++; vs.min5xx++; continue; }
      best.queue.push({ len });
    }

    // --- instances: start, complete, memory, OOM ---
    for (const vs of variants) {
      const w = weightsBytes(vs.v) * vs.v.workers + a.runtimeBytes;
      const a512 = act512(vs.v);
      const dev = deviceBytes(vs.v);
      let hottest = 0;
      for (const inst of vs.instances) {
        instanceSeconds++;
        vs.minuteInstSec += up(inst, t) ? 1 : 0;
        if (!up(inst, t)) continue;
        // start queued requests in free slots during this second
        let qi = 0;
        while (qi < inst.queue.length) {
          let s = 0;
          for (let j = 1; j < inst.slots.length; j++) if (inst.slots[j] < inst.slots[s]) s = j;
          if (inst.slots[s] >= t + 1) break;
          const { len } = inst.queue[qi++];
          const start = Math.max(inst.slots[s], t);
          const finish = start + serviceTime(len);
          inst.slots[s] = finish;
          const mem = a512 * (a.fixedActivationShare + (1 - a.fixedActivationShare) * Math.pow(len / 512, a.activationExponent));
          inst.active.push({ start, finish, mem });
        }
        if (qi) inst.queue.splice(0, qi);
        // What cannot start this second waits in the model server's queue; beyond its limit: 503.
        if (inst.queue.length > a.queueLimit) {
          const excess = inst.queue.length - a.queueLimit;
          inst.queue.splice(a.queueLimit);
          failed += excess; vs.min5xx += excess;
        }
        // peak memory this second, sampled at four instants: the requests in flight at each
        let bytes = w;
        for (const tau of [t + 0.25, t + 0.5, t + 0.75, t + 0.999]) {
          let b = w;
          for (const r of inst.active) if (r.start <= tau && r.finish > tau) b += r.mem;
          if (b > bytes) bytes = b;
        }
        const pct = (100 * bytes) / dev;
        if (pct >= 100) {
          ooms++;
          const lost = inst.active.length + inst.queue.length;
          failed += lost; failedOom += lost; vs.min5xx += lost;
          inst.active = []; inst.queue = []; inst.slots.fill(0);
          inst.downUntil = t + a.restartS;
          hottest = 100;
          continue;
        }
        hottest = Math.max(hottest, pct);
        const before = inst.active.length;
        inst.active = inst.active.filter(r => r.finish > t + 1);
        const done = before - inst.active.length;
        served += done;
        if (vs === F) servedF += done;
      }
      vs.minuteMax = Math.max(vs.minuteMax, hottest);
      vs.windowMax = Math.max(vs.windowMax, hottest);
      if (vs === P) {
        maxMemP = Math.max(maxMemP, hottest);
        if (firstCross === undefined && cfg.breaker && hottest >= cfg.breaker.degradeAtPercent) firstCross = t;
        if (firstCross === undefined && !cfg.breaker && hottest >= 80) firstCross = t;
      }
    }
    if (firstDegrade === undefined && level >= 1) firstDegrade = t;

    // --- minute boundary: CloudWatch datapoints, published after the delay ---
    if (t % 60 === 59) {
      for (const vs of variants) {
        const inst = Math.max(1, vs.minuteInstSec / 60);
        vs.published.push({ t: t - 59, availableAt: t + a.metricDelayS, mem: vs.minuteMax, inv: vs.minuteInv, e5: vs.min5xx, ipi: vs.minuteInv / inst });
        if (vs.published.length > 30) vs.published.shift();
        vs.minuteMax = 0; vs.minuteInv = 0; vs.min5xx = 0; vs.minuteInstSec = 0;
      }
    }

    // --- once a minute, when the newest datapoint lands: autoscaling and the breaker ---
    if (t % 60 === (59 + a.metricDelayS) % 60 && t >= a.metricDelayS) {
      const updating = pendingWeights !== undefined;
      if (cfg.autoscaling && !updating) for (const vs of variants) autoscale(vs, t);
      if (cfg.breaker) {
        const pts = P.published.filter(p => p.availableAt <= t);
        const memory: MemoryPoint[] = pts.slice(-15).map(p => ({ t: p.t * 1000, v: p.mem }));
        const last10 = pts.slice(-10);
        const d = decide(breaker, {
          memory,
          errors: last10.reduce((s, p) => s + p.e5, 0),
          invocations: last10.reduce((s, p) => s + p.inv, 0),
        }, { status: updating ? 'Updating' : 'InService', weights: { P: weights.p, F: weights.f } },
        { primary: 'P', fallback: F ? 'F' : undefined }, cfg.breaker, t * 1000);
        if (d.setWeights) pendingWeights = { at: t + a.weightApplyS, w: { p: d.setWeights.P, f: d.setWeights.F } };
        if (d.level !== (pendingLevel?.level ?? level)) pendingLevel = { at: t + a.levelPollS, level: d.level };
        breaker = d.next;
      }
    }

    if (t % 10 === 0) {
      series.push({
        t, qps: lambda, memP: P.windowMax, memF: F ? F.windowMax : 0,
        instP: P.instances.filter(i => up(i, t)).length, instF: F ? F.instances.filter(i => up(i, t)).length : 0,
        state: STATE_CODE[breaker.state],
      });
      for (const vs of variants) vs.windowMax = 0;
    }
    if (cfg.onProgress && t - lastReport >= total / 20) { lastReport = t; cfg.onProgress(t / total); }
  }

  function autoscale(vs: VariantState, t: number): void {
    const sc = vs.v.scaling;
    if (!sc) return;
    const pts = vs.published.filter(p => p.availableAt <= t);
    const target = sc.qpsPerInstance * 60;
    const current = vs.desired;
    const last3 = pts.slice(-3);
    // Target tracking: scale out after 3 of 3 datapoints above target, proportionally (scaling-dynamics §1a).
    if (last3.length === 3 && last3.every(p => p.ipi > target) && t - vs.lastScaleOut >= sc.scaleOutCooldownS) {
      const want = Math.min(sc.max, Math.ceil(current * last3[2].ipi / target));
      if (want > current) {
        for (let k = current; k < want; k++) vs.instances.push(newInstance(vs.v, t + provisioning(vs.v)));
        vs.desired = want;
        vs.lastScaleOut = t;
        return;
      }
    }
    // Scale in after 15 of 15 datapoints below 0.9 × target.
    const last15 = pts.slice(-15);
    if (last15.length === 15 && last15.every(p => p.ipi < 0.9 * target) && t - vs.lastScaleIn >= sc.scaleInCooldownS && t - vs.lastScaleOut >= sc.scaleInCooldownS) {
      const want = Math.max(sc.min, Math.ceil(current * last15[14].ipi / target), 1);
      if (want < current) {
        // Drain: requests on removed instances finish (SIGTERM, 30 s grace) and count as served.
        for (const i of vs.instances.splice(want)) {
          served += i.active.length + i.queue.length;
          if (vs === F) servedF += i.active.length + i.queue.length;
        }
        vs.desired = want;
        vs.lastScaleIn = t;
      }
    }
  }

  const inFlightAtEnd = variants.reduce((s, vs) => s + vs.instances.reduce((x, i) => x + i.active.length + i.queue.length, 0), 0);
  return {
    arrivals, served, servedByFallback: servedF, failed, failedByOom: failedOom, rejected, inFlightAtEnd, oomEvents: ooms,
    timeToDegradeS: firstCross !== undefined && firstDegrade !== undefined && firstDegrade >= firstCross ? firstDegrade - firstCross : undefined,
    timeDegradedS: degradedS, instanceMinutes: Math.round(instanceSeconds / 60), maxPrimaryMemoryPercent: Math.round(maxMemP), series,
  };
}
