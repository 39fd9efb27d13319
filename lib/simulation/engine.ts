/**
 * A discrete-time (1 s) model of a SageMaker endpoint under traffic: per-instance memory from
 * in-flight requests, OOM restarts, CloudWatch metrics at the endpoint's publishing period (10 s
 * or 60 s) with publication delay, target-tracking autoscaling, the endpoint's `Updating` status
 * (during every scale-out, scale-in and weight change, when SageMaker refuses further updates and
 * Application Auto Scaling waits), weights across primary and fallback, and the circuit breaker's
 * REAL policy (`decide()` from lib/breaker/policy.ts — never a copy).
 * Timings and their sources: ../shared/reference/scaling-dynamics.md; unverified ones are parameters.
 */
import { BreakerConfig, BreakerState, decide, initialState, MemoryPoint, STATE_CODE, VariantCapacity } from '../breaker/policy';
import { InstanceHardware } from '../instance-types';
import { latencyCurve } from '../memory-profile';
import { Rng, Trace } from './traces';
import { kthSmallest, lastWhere, MinTree, SlotClock } from './scan';
import { inWorkloadUnits } from './units';

// Hot loops read Math through a module binding: under jest's vm context each global lookup goes
// through the context's interceptor, which made the simulator 4-9x slower in tests than in node.
const Math = globalThis.Math;
/** Infinity through a module binding too (the backstop's limit when none applies is read once per request start). */
const UNLIMITED = Infinity;

const GIB = 1024 ** 3;
/** The CPU backstop's slack above what a worker may take (runtime helper guard.py BACKSTOP_SLACK). */
const BACKSTOP_SLACK_BYTES = 64 * 1024 ** 2;
/** How often the instance's ledger samples its workers' resident memory (runtime helper: four times a second). */
const LEDGER_SAMPLE_S = 0.25;

/** One variant as deployed (from the construct) plus its workload shape. */
export interface SimVariant {
  readonly name: string;
  readonly spec: InstanceHardware;
  /** Model-server workers per instance (from the tuning). */
  readonly workers: number;
  /** Model copy footprint at peak (bytes): GPU on GPU types, else host. */
  readonly footprintBytes: number;
  /** Longest sequence the container accepts (its MAX_SEQ_LEN); longer requests are rejected with a 4XX (incident A: > 1024). */
  readonly maxSeqLen: number;
  /** At level ≥ 1 longer sequences are truncated to this (DEGRADED_MAX_SEQ_LEN); at level 2 longer ones are rejected. */
  readonly degradedMaxSeqLen: number;
  readonly initialCount: number;
  /**
   * Requests one instance holds waiting for a worker before its server refuses more (a 503): TorchServe's and
   * MMS's job queue (`jobQueueSize`, default 100), or gunicorn's listen backlog (2048 by default, gunicorn's
   * `backlog` setting; the scikit-learn and XGBoost images run gunicorn with no `--backlog`: aws/sagemaker-containers
   * `_server.py`). Undefined: `SimAssumptions.queueLimit`.
   */
  readonly queueLimit?: number;
  /**
   * The model's memory as the profiler measured it on its inference code (memory-profile.json): each
   * worker's baseline, the bytes a request adds by its size, and latency by size. Used when
   * `SimAssumptions.memoryModel` is 'profile'.
   */
  readonly profile?: SimProfile;
  /**
   * The container's memory budget (bytes): the guard's hard edge for all the workers of an instance together
   * (lib/breaker/contract.ts CONTAINER_BUDGET_ENV: the value the construct writes into the container, else
   * CONTAINER_BUDGET_DEFAULT_PERCENT of the instance's memory; on GPU types per GPU, × the GPUs here, where
   * an instance's GPUs are one pool). Undefined: the container has no guard (incident A's), whatever
   * `SimAssumptions.guard` says.
   */
  readonly guardBudgetBytes?: number;
  /** Autoscaling (undefined = fixed capacity). */
  readonly scaling?: {
    min: number;
    max: number;
    qpsPerInstance: number;
    scaleOutCooldownS: number;
    scaleInCooldownS: number;
    /** A second target-tracking policy on the instances' average memory, % (autoScaling.memoryTargetPercent; undefined = none). */
    memoryTargetPercent?: number;
    /**
     * Whether that memory policy may scale in (a veto on the QPS target's scale-in: AAS scales in only when every
     * policy with scale-in enabled agrees). The construct disables it on SageMaker's memory. @default false
     */
    memoryScaleIn?: boolean;
    /**
     * What the memory policy tracks: 'memory' (SageMaker's, the instances' average) or 'inFlight' (the guard's
     * in-flight memory, `GuardInFlightPercent`: the estimates of the requests in flight, of the container's budget).
     * @default 'memory'
     */
    memoryMetric?: 'memory' | 'inFlight';
  };
}

/** A measured memory profile, as the simulator uses it. */
export interface SimProfile {
  readonly baselineBytes: number;
  readonly curve: { a: number; b: number; c: number };
  /** (size, latency ms) points, sorted by size; service time is interpolated on them. */
  readonly latency: [number, number][];
  /** The profile's request-size distribution, in the variant's own unit (`powerlaw:LO:HI[:ALPHA]`, ALPHA 1 when not given). */
  readonly sizeMin?: number;
  readonly sizeMax?: number;
  readonly sizeAlpha?: number;
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
  /** Share of requests from mobile clients, whose payloads are larger (incident A: ~15 %). @default 0 */
  readonly mobileShare: number;
  /** Size factor of a mobile request's payload and activations. @default 1.15 */
  readonly mobileFactor: number;
  /** Service time = base + per512 × length/512 seconds. @default 0.05 / 0.25 */
  readonly serviceBaseS: number;
  readonly servicePer512S: number;
  /**
   * Requests a worker runs together form one batch padded to its longest sequence (how dynamic
   * batching feeds a Transformer): the batch's activations are its size × those of its longest
   * request. Off: each request's own length counts. @default true
   */
  readonly paddedBatches: boolean;
  /** Model-server queue per instance before 503 (MMS/TorchServe default 100), for a variant that does not state its own. */
  readonly queueLimit: number;
  /**
   * A real-time request not answered within this many seconds fails (SageMaker: a container must respond to
   * requests within 60 seconds; developer guide `your-algorithms-inference-code`): one that has waited this long
   * in the queue is failed when a worker reaches it. @default 60
   */
  readonly invocationTimeoutS: number;
  /** Runtime overhead on the device (CUDA context etc.), bytes. @default 0.5 GiB */
  readonly runtimeBytes: number;
  /** Seconds from OOM to the restarted instance serving again (incident B: within 30 s; unverified). @default 60 */
  readonly restartS: number;
  /** New instance to InService (scaling-dynamics: g4dn.xlarge P50 381 s; CPU unverified). @default 380 GPU / 180 CPU */
  readonly provisioningS?: number;
  /** Endpoint `Updating` while instances are removed (SIGTERM, 30 s grace, then bookkeeping; unverified). @default 90 */
  readonly scaleInUpdateS: number;
  /** CloudWatch availability delay of 1-minute datapoints (60–120 s). @default 90 */
  readonly metricDelayS: number;
  /** Availability delay of 10-second datapoints (unverified: no AWS figure). @default 20 */
  readonly metricDelay10S: number;
  /** Weight update: the endpoint is `Updating` this long, then the new weights take effect (unverified: swept 0–60 s). @default 30 */
  readonly weightApplyS: number;
  /**
   * The container reads the level every N seconds: the runtime helper's one reader per instance, every
   * 10 s ± 20 % (runtime/python/resilient_endpoint_runtime/degrade.py). @default 10
   */
  readonly levelPollS: number;
  /** Alarm state change or endpoint event → EventBridge → the function running (P99 0.4 s, rounded up; scaling-dynamics §2). @default 1 */
  readonly eventToLambdaS: number;
  /**
   * From a datapoint's availability to its alarm changing state: "If the alarm period is 10 seconds or 30
   * seconds, the alarm is evaluated every 10 seconds" (CloudWatch user guide via re:Post); for 1-minute
   * alarms evaluation is per minute. Unverified beyond that. @default 10
   */
  readonly alarmEvaluationS: number;
  /**
   * Whether CloudWatch keeps 10-second datapoints when the endpoint publishes every 10 s. UNVERIFIED
   * (real-account.md item 23): with false the 10-s path is absent — points a minute apart, delivered like
   * 1-minute data — and the breaker works on 1-minute data. @default true
   */
  readonly tenSecondData: boolean;
  /**
   * How a request's memory is modelled: 'profile' — the variant's measured curve (memory-profile.json),
   * one request per worker (TorchServe's default batch size 1, gunicorn's sync workers); 'footprint' — the
   * stated footprint split into weights and activations of padded batches (the incident A calibration's
   * model). @default 'profile' when the variant has a profile, else 'footprint'
   */
  readonly memoryModel?: 'profile' | 'footprint';
  /**
   * The container's memory guard (runtime helper MemoryGuard): each request admitted against the worker's
   * budget with the curve's estimate — truncated at a level ≥ 1, refused otherwise — and the hard backstop
   * (RLIMIT_DATA / the CUDA fraction) turning a request that outgrows its estimate into one 413 instead
   * of an OOM (measured with torch 1.13: runtime/python/tests/test_guard.py). @default true
   */
  readonly guard: boolean;
  /** How wrong the guard's estimate is: a request's real memory is its estimate × (1 + N(0, this)). UNVERIFIED. @default 0.1 */
  readonly estimateErrorSd: number;
  /**
   * The guard's curve against the model's real memory: 1 when the profile is right, 1/50 for a curve 50 times too
   * small (a profile measured on other code or another device). What a model that can fail as the product can must
   * show: a guard that admits too much lets workers outgrow the budget together, and only a per-process backstop
   * stands in the way. @default 1
   */
  readonly estimateScale: number;
  /**
   * Whether SageMaker's `GPUMemoryUtilization` counts what PyTorch's caching allocator keeps reserved (released
   * memory stays reserved at each worker's peak until `torch.cuda.empty_cache()`): then the GPU metric holds every
   * worker's peak, however little runs now. UNVERIFIED (no AWS text says which memory NVML reports there; nvidia-smi
   * counts reserved memory). @default false
   */
  readonly allocatorRetainsPeak: boolean;
  /**
   * From the end of a 10-s interval to the container's guard metrics of it (`GuardPressure`,
   * `GuardMemoryRefusals`) being readable: the publisher sends each interval's statistic set at its end
   * (runtime helper GuardMetricsPublisher, lib/breaker/contract.ts GUARD_METRIC_PERIOD_SECONDS), then
   * CloudWatch's ingestion. UNVERIFIED: no AWS figure for how late high-resolution custom data is readable;
   * the same default as SageMaker's 10-s data (real-account.md item 23). @default 20
   */
  readonly guardMetricDelayS: number;
  /**
   * Whether CloudWatch keeps the guard's metrics at 10 s (they are published with StorageResolution 1).
   * UNVERIFIED whether it does for this namespace in every account: with false they arrive as 1-minute
   * points, `metricDelayS` late, like SageMaker's 1-minute data. @default true
   */
  readonly guardTenSecondData: boolean;
  /**
   * The guard's local level: the container's own pressure (its workers' memory and the estimates it has
   * admitted, of its budget) at or above this share applies level 1 at once, the container's degraded mode
   * (runtime helper MemoryGuard degrade_at 0.80; level 2 at critical_at 0.95). @default 0.8
   */
  readonly guardLocalDegradeAt: number;
  readonly guardLocalCriticalAt: number;
  /**
   * A second's arrivals are spread evenly over it (a Poisson process's arrivals are uniform within any
   * interval); false starts them all at the second's first instant, a burst every second that fills every
   * batch at once — the model incident A's calibration was made with (INCIDENT_A_ASSUMPTIONS keeps it until
   * it is recalibrated). @default true
   */
  readonly spreadArrivals: boolean;
}

export const DEFAULT_ASSUMPTIONS: SimAssumptions = {
  batchPerWorker: 8,
  weightsShare: 0.4,
  fixedActivationShare: 0.25,
  activationExponent: 2,
  seqAlpha: 1.0,
  seqMin: 5,
  seqMax: 3000,
  mobileShare: 0,
  mobileFactor: 1.15,
  serviceBaseS: 0.05,
  servicePer512S: 0.25,
  paddedBatches: true,
  queueLimit: 100,
  invocationTimeoutS: 60,
  runtimeBytes: 0.5 * GIB,
  restartS: 60,
  scaleInUpdateS: 90,
  metricDelayS: 90,
  metricDelay10S: 20,
  weightApplyS: 30,
  levelPollS: 10,
  eventToLambdaS: 1,
  alarmEvaluationS: 10,
  tenSecondData: true,
  guard: true,
  estimateErrorSd: 0.1,
  estimateScale: 1,
  allocatorRetainsPeak: false,
  guardMetricDelayS: 20,
  guardTenSecondData: true,
  guardLocalDegradeAt: 0.8,
  guardLocalCriticalAt: 0.95,
  spreadArrivals: true,
};

/** How the breaker acts (the design under test). */
export interface BreakerMode {
  /** The container applies the degrade level (sequence caps) on its next requests. */
  readonly applyLevel: boolean;
  /** Capacity follows the state: primary scale-in suspended, fallback minimum raised, share capped by fallback instances. */
  readonly capacityActions: boolean;
  /** SageMaker's endpoint state-change events trigger an evaluation (weights refused while Updating land at once). */
  readonly stateChangeEvents: boolean;
}

/** The breaker as this library deploys it. */
export const CURRENT_BREAKER: BreakerMode = { applyLevel: true, capacityActions: true, stateChangeEvents: true };
/** The earlier design: weights only, on the schedule and 1-minute alarms. */
export const WEIGHTS_ONLY_BREAKER: BreakerMode = { applyLevel: false, capacityActions: false, stateChangeEvents: false };

/** Scenario names, in table order. */
export const SCENARIOS = {
  STATIC: 'static capacity',
  AUTOSCALING: 'autoscaling',
  WEIGHTS_ONLY: 'autoscaling + weights-only breaker (60 s)',
  BREAKER: 'autoscaling + breaker (level, weights, capacity; 10 s)',
} as const;

/** One scenario's configuration. */
export interface SimConfig {
  readonly primary: SimVariant;
  readonly fallback?: SimVariant;
  /** Breaker configuration, or undefined for no breaker. */
  readonly breaker?: BreakerConfig;
  /** @default CURRENT_BREAKER */
  readonly breakerMode?: BreakerMode;
  /** The endpoint's metric publishing period: 10 or 60 s. @default 60 */
  readonly metricPeriodS?: number;
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
  /** Rejected on purpose (4XX): too long for the tiers, or refused by the memory guard. */
  readonly rejected: number;
  /** Of those, refused by the memory guard (its estimate did not fit), and by its backstop (the request outgrew it). */
  readonly rejectedByGuard: number;
  readonly rejectedByBackstop: number;
  /** Of `rejected`, refused by design: longer than the container's MAX_SEQ_LEN, at every level. */
  readonly rejectedByDesign: number;
  /**
   * Of `rejectedByDesign`, refused by the fallback's own cap although the primary would have taken them (the
   * breaker sent them to a variant with a shorter MAX_SEQ_LEN): refused, not by design, for the layers' goal.
   */
  readonly rejectedByFallback: number;
  /** Of `failed`, requests that waited in the queue past the invocation timeout (60 s). */
  readonly failedByTimeout: number;
  /** Of `rejectedByGuard` + `rejectedByBackstop`, the requests refused while the container held less than half its budget. */
  readonly refusedBelowHalfBudget: number;
  /**
   * Every change of the published degrade level, with the breaker's first reason (what moved it: memory, the
   * guard's pressure or refusals, the error rate, a recovery step).
   */
  readonly levelChanges: { readonly t: number; readonly level: number; readonly state: string; readonly why: string }[];
  /** Seconds the breaker spent in each state (CLOSED, DEGRADED, OPEN, RECOVERING) over the run, drain included. */
  readonly stateSeconds: Record<string, number>;
  /** Second at which the breaker was last CLOSED again after being away (undefined: never left, or never back). */
  readonly lastClosedS?: number;
  /** Of `rejected`, refused by the length tiers at level 2 (longer than DEGRADED_MAX_SEQ_LEN; the breaker's level or the container's own). */
  readonly rejectedAtLevel2: number;
  /** Requests the guard truncated to what fitted (at a level ≥ 1). */
  readonly truncatedByGuard: number;
  readonly inFlightAtEnd: number;
  readonly oomEvents: number;
  /** Seconds from the first time the primary's memory crossed the breaker threshold to the degrade level being published (undefined: never). */
  readonly timeToDegradeS?: number;
  /** Seconds from that first crossing to traffic weights first taking effect (undefined: never). */
  readonly timeToWeightsS?: number;
  /** Second of the trace at which the breaker first published a level ≥ 1 (undefined: never), whatever triggered it. */
  readonly firstLevelS?: number;
  /** Seconds with degrade level ≥ 1 applied by the container. */
  readonly timeDegradedS: number;
  /** Seconds the endpoint spent `Updating`. */
  readonly updatingS: number;
  /** Weight changes SageMaker refused because the endpoint was Updating (the breaker saw a non-InService status). */
  readonly weightChangesDeferred: number;
  readonly instanceMinutes: number;
  readonly maxPrimaryMemoryPercent: number;
  /** Second of the first OOM (undefined: none). */
  readonly firstOomS?: number;
  /** Every 10 s: time, QPS, hottest memory % over the last 10 s (primary, fallback), instances (primary, fallback), breaker state code, mean latency (ms) of requests finished, level, Updating. */
  readonly series: {
    t: number;
    qps: number;
    memP: number;
    /** The primary's memory averaged over its instances and the 10 s (what a dashboard's Average shows). */
    memAvgP: number;
    memF: number;
    instP: number;
    instF: number;
    state: number;
    latencyMs: number;
    latencyP99Ms: number;
    level: number;
    updating: number;
    /** Requests refused by the guard or its backstop so far (cumulative). */
    refused: number;
  }[];
}

interface Req {
  arrive: number;
  start: number;
  finish: number;
  mem: number;
  worker: number;
  /** What the guard reserved for it (its estimate), profile model. */
  est: number;
}
interface Instance {
  readyAt: number;
  downUntil: number;
  slots: SlotClock;
  /**
   * The request last started in each slot. Slots run their requests one after another and each start
   * takes the earliest-free slot, so of a worker's requests only these can still be in flight when a
   * new one starts: the guard's scan reads them instead of every request of the second.
   */
  lastInSlot: (Req | undefined)[];
  active: Req[];
  queue: { len: number; arrive: number; scale: number }[];
  /** Per worker: the most its requests held at once since it started (what a caching allocator keeps reserved). */
  retained: number[];
}
/** Starts `req` in slot `s` of `inst`: the slot is busy until it finishes, and it is the slot's latest request. */
function occupy(inst: Instance, s: number, req: Req): void {
  inst.slots.set(s, req.finish);
  inst.lastInSlot[s] = req;
  inst.active.push(req);
}
interface Published {
  t: number;
  availableAt: number;
  mem: number;
}
interface MinutePoint {
  t: number;
  availableAt: number;
  inv: number;
  e5: number;
  ipi: number;
  /** The minute's memory, averaged over the instances in service and their seconds (the policy's Average statistic). */
  memAvg: number;
  /** The minute's in-flight memory the guard admitted (% of the container's budget), averaged likewise. */
  inflightAvg: number;
}
interface VariantState {
  v: SimVariant;
  instances: Instance[];
  desired: number;
  lastScaleOut: number;
  lastScaleIn: number;
  /** Set by the breaker's capacity actions. */
  scaleInSuspended: boolean;
  minOverride?: number;
  // accumulators
  periodMax: number;
  windowMax: number;
  /** This 10-s window's memory summed over the instances' seconds in service, and their count (its Average). */
  windowSum: number;
  windowCount: number;
  minuteInv: number;
  min5xx: number;
  minuteInstSec: number;
  minuteMemSum: number;
  minuteInflightSum: number;
  memPoints: Published[];
  minutes: MinutePoint[];
  /** The container guard's metrics: this interval's highest pressure (%) and its memory refusals, and what was published. */
  guardPressureMax: number;
  guardRefusals: number;
  guardPoints: GuardPoint[];
}
interface GuardPoint {
  t: number;
  availableAt: number;
  pressure: number;
  refusals: number;
}

/** Runs one scenario over a trace. */
export function runSimulation(trace: Trace, cfg: SimConfig): SimResult {
  // An assumption given as undefined keeps its default (callers pass optional settings through as they are).
  const given = Object.fromEntries(Object.entries(cfg.assumptions ?? {}).filter(([, v]) => v !== undefined));
  const a: SimAssumptions = { ...DEFAULT_ASSUMPTIONS, ...given };
  const mode = cfg.breakerMode ?? CURRENT_BREAKER;
  const period = cfg.metricPeriodS ?? 60;
  // Without 10-second datapoints (item 23) a 10-s endpoint's memory arrives as 1-minute data.
  const dataPeriod = period < 60 && !a.tenSecondData ? 60 : period;
  const memDelay = dataPeriod < 60 ? a.metricDelay10S : a.metricDelayS;
  const rng = new Rng(cfg.seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  const provisioning = (v: SimVariant) => a.provisioningS ?? (v.spec.gpuCount > 0 ? 380 : 180);
  const deviceBytes = (v: SimVariant) => (v.spec.gpuCount > 0 ? v.spec.gpuCount * v.spec.gpuMemoryGiB : v.spec.memoryGiB) * GIB;
  const profileOf = (v: SimVariant) => ((a.memoryModel ?? (v.profile ? 'profile' : 'footprint')) === 'profile' ? v.profile : undefined);
  const weightsBytes = (v: SimVariant) => v.footprintBytes * a.weightsShare;
  const act512 = (v: SimVariant) => (v.footprintBytes * (1 - a.weightsShare)) / a.batchPerWorker;
  /** Requests a worker runs at once: one with a measured profile (batch size 1), else the batch. */
  const perWorker = (v: SimVariant) => (profileOf(v) ? 1 : a.batchPerWorker);
  /**
   * Requests an instance runs at once: a worker's batch each (footprint model), or one per worker with a
   * measured profile — on a CPU type at most one per vCPU, since CPU-bound workers beyond the vCPUs only share
   * them (the capacity planner's busy vCPUs: lib/capacity-plan.ts).
   */
  const slotsOf = (v: SimVariant) =>
    profileOf(v) && v.spec.gpuCount === 0 ? Math.max(1, Math.min(v.workers, v.spec.vCpus)) : v.workers * perWorker(v);
  const newInstance = (v: SimVariant, readyAt: number): Instance => ({
    readyAt,
    downUntil: -1,
    slots: new SlotClock(slotsOf(v)),
    lastInSlot: new Array(slotsOf(v)).fill(undefined),
    retained: new Array(v.workers).fill(0),
    active: [],
    queue: [],
  });
  const mkState = (v: SimVariant): VariantState => ({
    v,
    instances: Array.from({ length: v.initialCount }, () => newInstance(v, 0)),
    desired: v.initialCount,
    lastScaleOut: -1e9,
    lastScaleIn: -1e9,
    scaleInSuspended: false,
    periodMax: 0,
    windowMax: 0,
    windowSum: 0,
    windowCount: 0,
    minuteInv: 0,
    min5xx: 0,
    minuteInstSec: 0,
    minuteMemSum: 0,
    minuteInflightSum: 0,
    memPoints: [],
    minutes: [],
    guardPressureMax: 0,
    guardRefusals: 0,
    guardPoints: [],
  });
  // The footprint model draws sizes from its own distribution (seqMin–seqMax events): a variant whose profile
  // states sizes in another unit or range has its caps moved to the same quantile of it (units.ts).
  const stress = { min: a.seqMin, max: a.seqMax, alpha: a.seqAlpha };
  const own = (v: SimVariant) => (profileOf(v) ? v : inWorkloadUnits(v, stress));
  const P = mkState(own(cfg.primary));
  const F = cfg.fallback ? mkState(own(cfg.fallback)) : undefined;
  const variants = F ? [P, F] : [P];

  // --- the endpoint's control plane ---
  let updatingUntil = -1; // Updating while t < updatingUntil
  let updatingS = 0;
  let deferred = 0;
  const isUpdating = (t: number) => t < updatingUntil;
  let breaker: BreakerState = initialState(0);
  let weights = { p: 1, f: 0 };
  let pendingWeights: { at: number; w: { p: number; f: number } } | undefined;
  let level = 0;
  let pendingLevel: { at: number; level: number } | undefined;
  const evaluations = new Set<number>(); // seconds at which the breaker function runs
  let alarmHigh = false;
  let guardPressureAlarm = false;
  let guardRefusalAlarm = false;

  let arrivals = 0,
    served = 0,
    servedF = 0,
    failed = 0,
    failedOom = 0,
    rejected = 0,
    rejectedByGuard = 0,
    rejectedByBackstop = 0,
    rejectedByDesign = 0,
    rejectedAtLevel2 = 0,
    truncatedByGuard = 0,
    rejectedByFallback = 0,
    failedByTimeout = 0,
    refusedBelowHalf = 0,
    ooms = 0;
  const levelChanges: SimResult['levelChanges'] = [];
  const stateSeconds: Record<string, number> = { CLOSED: 0, DEGRADED: 0, OPEN: 0, RECOVERING: 0 };
  let lastClosed: number | undefined;
  let publishedLevel = 0;
  let firstCross: number | undefined;
  let firstPublish: number | undefined;
  let firstWeights: number | undefined;
  let firstOom: number | undefined;
  let degradedS = 0;
  let instanceSeconds = 0;
  let maxMemP = 0;
  let latSum = 0,
    latN = 0;
  let lats: number[] = [];
  const series: SimResult['series'] = [];
  let lastReport = 0;

  const up = (i: Instance, t: number) => i.readyAt <= t && i.downUntil <= t;
  const loadOf = (i: Instance) => i.active.length + i.queue.length;
  const loadsP = new MinTree();
  const loadsF = new MinTree();
  const inService = (vs: VariantState, t: number) => vs.instances.filter(i => up(i, t)).length;
  const formulaTime = (len: number) => a.serviceBaseS + (a.servicePer512S * len) / 512;
  /** Service time: the profile's measured latency by size (log-log interpolation, as MemoryProfile.meanLatencyMs reads it), else the formula. */
  const latencyCurves = new Map<SimVariant, (size: number) => number>();
  const serviceTime = (v: SimVariant, len: number) => {
    const pts = profileOf(v)?.latency;
    if (!pts || pts.length < 2) return formulaTime(len);
    let curve = latencyCurves.get(v);
    if (!curve) latencyCurves.set(v, (curve = latencyCurve(pts.map(([size, latencyMs]) => ({ size, latencyMs })))));
    return curve(len) / 1000;
  };
  /** The memory a request of this length (× the mobile factor) adds: the profile's curve, or the footprint's activations. */
  const requestBytes = (v: SimVariant, len: number, scale: number) => {
    const p = profileOf(v);
    if (p) {
      const n = len * scale;
      return p.curve.a + p.curve.b * n + p.curve.c * n * n;
    }
    return scale * act512(v) * (a.fixedActivationShare + (1 - a.fixedActivationShare) * Math.pow(len / 512, a.activationExponent));
  };
  /** A worker's memory besides its requests: the profiled baseline, or the footprint's weights. */
  const workerBase = (v: SimVariant) => profileOf(v)?.baselineBytes ?? weightsBytes(v);

  const total = trace.seconds + 600; // drain for 10 minutes after the trace
  for (let t = 0; t < total; t++) {
    // --- control-plane effects that land now ---
    if (pendingWeights && pendingWeights.at <= t) {
      weights = pendingWeights.w;
      pendingWeights = undefined;
      if (firstWeights === undefined && weights.f > 0) firstWeights = t;
    }
    if (pendingLevel && pendingLevel.at <= t) {
      level = pendingLevel.level;
      pendingLevel = undefined;
    }
    if (level >= 1) degradedS++;
    stateSeconds[breaker.state]++;
    const wasUpdating = isUpdating(t - 1);
    if (isUpdating(t)) updatingS++;
    else if (wasUpdating && cfg.breaker && mode.stateChangeEvents) evaluations.add(t + a.eventToLambdaS); // "SageMaker Endpoint State Change": InService

    // --- arrivals ---
    const lambda = t < trace.seconds ? trace.rate(t) : 0;
    const n = trace.poisson ? rng.poisson(lambda) : Math.round(lambda);
    arrivals += n;
    // Each variant's instances in service this second (arrivals change queues, never who is up), in order.
    const upP = n > 0 ? P.instances.filter(i => up(i, t)) : [];
    const upF = n > 0 && F ? F.instances.filter(i => up(i, t)) : [];
    // Their loads (requests running and queued), the least kept at hand as arrivals join queues.
    if (n > 0) {
      loadsP.load(upP.map(loadOf));
      loadsF.load(upF.map(loadOf));
    }
    for (let k = 0; k < n; k++) {
      const pr = profileOf(P.v);
      const seq = rng.boundedPareto(pr?.sizeMin ?? a.seqMin, pr?.sizeMax ?? a.seqMax, pr?.sizeAlpha ?? a.seqAlpha);
      const scale = a.mobileShare > 0 && rng.next() < a.mobileShare ? a.mobileFactor : 1;
      const toFallback = F && rng.next() * (weights.p + weights.f) < weights.f;
      const vs = toFallback ? F! : P;
      vs.minuteInv++;
      // The container's length tiers: over MAX_SEQ_LEN rejected (4XX) at every level; truncated to
      // DEGRADED_MAX_SEQ_LEN at level 1; over it rejected at level 2.
      if (seq > vs.v.maxSeqLen) {
        rejected++;
        rejectedByDesign++;
        if (vs === F && seq <= P.v.maxSeqLen) rejectedByFallback++;
        continue;
      }
      if (level >= 2 && seq > vs.v.degradedMaxSeqLen) {
        rejected++;
        rejectedAtLevel2++;
        continue;
      }
      const len = level >= 1 ? Math.min(seq, vs.v.degradedMaxSeqLen) : seq;
      // The least busy instance in service (the first of them on a tie).
      const loads = vs === P ? loadsP : loadsF;
      const b = loads.least;
      if (b < 0) {
        failed++;
        vs.min5xx++;
        continue;
      }
      const best = (vs === P ? upP : upF)[b];
      loads.set(b, loads.at(b) + 1);
      // Arrivals spread over the second (a Poisson process's arrivals are uniform within it), not all at its start:
      // a burst at one instant would fill every batch at once and read as memory no worker sees.
      best.queue.push({ len, arrive: a.spreadArrivals ? t + k / n : t, scale });
    }

    // --- instances: start, complete, memory, OOM ---
    for (const vs of variants) {
      const profiled = profileOf(vs.v) !== undefined;
      // Memory besides the requests: each worker's baseline (a profile) or weights, and (footprint model
      // on a GPU) the device runtime; a measured baseline already holds the process's runtime.
      const w = workerBase(vs.v) * vs.v.workers + (profiled ? 0 : a.runtimeBytes);
      const dev = deviceBytes(vs.v);
      const budget = vs.v.guardBudgetBytes;
      const guarded = a.guard && budget !== undefined;
      const summed = profiled || !a.paddedBatches;
      const slotsPerWorker = perWorker(vs.v);
      const kn = new Array<number>(vs.v.workers).fill(0);
      const kSumEst = new Array<number>(vs.v.workers).fill(0);
      const kMaxEst = new Array<number>(vs.v.workers).fill(0);
      const kSumMem = new Array<number>(vs.v.workers).fill(0);
      const kMaxMem = new Array<number>(vs.v.workers).fill(0);
      // The real memory of a worker's requests as the ledger has seen it: its resident memory, sampled four times a
      // second by the instance's leader, so a request that started in the last 0.25 s is not in it yet.
      const kSumSeen = new Array<number>(vs.v.workers).fill(0);
      const kMaxSeen = new Array<number>(vs.v.workers).fill(0);
      // Per worker, at each of the second's four instants: its requests in flight, the largest, their sum.
      const peakN = new Array<number>(vs.v.workers);
      const peakTop = new Array<number>(vs.v.workers);
      const peakSum = new Array<number>(vs.v.workers);
      /** Worker k's requests in flight at `at` (their estimates and real memory), into the caches above. */
      const holding = (inst: Instance, k: number, at: number) => {
        kn[k] = kSumEst[k] = kMaxEst[k] = kSumMem[k] = kMaxMem[k] = kSumSeen[k] = kMaxSeen[k] = 0;
        for (let j = k * slotsPerWorker; j < (k + 1) * slotsPerWorker; j++) {
          const r = inst.lastInSlot[j];
          if (r === undefined || r.finish <= at) continue;
          kn[k]++;
          kSumEst[k] += r.est;
          kSumMem[k] += r.mem;
          if (r.est > kMaxEst[k]) kMaxEst[k] = r.est;
          if (r.mem > kMaxMem[k]) kMaxMem[k] = r.mem;
          if (r.start <= at - LEDGER_SAMPLE_S) {
            kSumSeen[k] += r.mem;
            if (r.mem > kMaxSeen[k]) kMaxSeen[k] = r.mem;
          }
        }
      };
      let hottest = 0;
      for (const inst of vs.instances) {
        instanceSeconds++;
        vs.minuteInstSec += up(inst, t) ? 1 : 0;
        if (!up(inst, t)) continue;
        // What each worker holds (its requests in flight at the start of this second: their estimates and real
        // memory), for the guard's one container budget; updated as requests start (a request finishing during
        // the second still counts until the next: the ledger sees a release a little late, never early).
        if (guarded && inst.queue.length) for (let k = 0; k < vs.v.workers; k++) holding(inst, k, t);
        // start queued requests in free slots during this second
        let qi = 0;
        while (qi < inst.queue.length) {
          const s = inst.slots.earliest;
          if (inst.slots.at(s) >= t + 1) break;
          let { len } = inst.queue[qi];
          const { arrive, scale } = inst.queue[qi++];
          const start = Math.max(inst.slots.at(s), arrive, t);
          if (start - arrive > a.invocationTimeoutS) {
            // The client's 60 s are over before a worker reached it: SageMaker answers with an error.
            failed++;
            failedByTimeout++;
            vs.min5xx++;
            continue;
          }
          const worker = Math.floor(s / slotsPerWorker);
          // The container's memory guard: one budget for the whole container (every worker's requests in
          // flight, their estimates), the guard at its hard edge (runtime helper MemoryGuard with the ledger).
          let mem = requestBytes(vs.v, len, scale);
          if (guarded) {
            const error = 1 + a.estimateErrorSd * gauss();
            const est = (l: number) => Math.max(0, requestBytes(vs.v, l, scale) * error * a.estimateScale);
            // What the container holds while the request would start: the other workers' batches, and this worker's.
            holding(inst, worker, start);
            // What the ledger holds for the other workers: each one's resident memory (its requests' real memory once
            // sampled) or its admitted estimates, whichever is more (runtime helper ledger: residents + reservations);
            // their memory since the last sample no check sees, and no per-process backstop either.
            let otherEst = 0;
            for (let k = 0; k < kn.length; k++) {
              if (k === worker) continue;
              otherEst += summed ? Math.max(kSumEst[k], kSumSeen[k]) : kn[k] * Math.max(kMaxEst[k], kMaxSeen[k]);
            }
            const n = kn[worker];
            const sumEst = kSumEst[worker];
            const maxEst = kMaxEst[worker];
            const sumMem = kSumMem[worker];
            const maxMem = kMaxMem[worker];
            // Padded batches (footprint model): a worker's batch costs its size × its longest request.
            const load = (e: number) => otherEst + (summed ? sumEst + e : (n + 1) * Math.max(e, maxEst));
            const room = budget! - w;
            // The local level: the higher of the published one and the container's pressure (its workers' memory
            // and the estimates it holds, of its budget), applied with the length tiers.
            const share = (w + otherEst + (summed ? sumEst : n * maxEst)) / budget!;
            const local = Math.max(level, share >= a.guardLocalCriticalAt ? 2 : share >= a.guardLocalDegradeAt ? 1 : 0);
            if (vs.guardPressureMax < 100 * share) vs.guardPressureMax = 100 * share;
            if (local > level && local >= 2 && len > vs.v.degradedMaxSeqLen) {
              // The length tier at the container's own level 2: refused by design (reason 'degraded'), counted as a
              // deliberate 4XX, not as a memory refusal (runtime helper count_answer); its pressure is what it reports.
              rejected++;
              rejectedAtLevel2++;
              continue;
            }
            if (local > level && local >= 1) len = Math.min(len, vs.v.degradedMaxSeqLen);
            let estimate = est(len);
            if (load(estimate) > room) {
              // At a level >= 1 the longest prefix that fits (binary search on the length), else a 413.
              let lo = 0;
              let hi = local >= 1 ? len : 0;
              while (lo < hi) {
                const mid = Math.ceil((lo + hi) / 2);
                if (load(est(mid)) <= room) lo = mid;
                else hi = mid - 1;
              }
              if (lo < 1) {
                rejected++;
                rejectedByGuard++;
                if (share < 0.5) refusedBelowHalf++;
                vs.guardRefusals++;
                vs.guardPressureMax = Math.max(vs.guardPressureMax, (100 * (w + load(0))) / budget!);
                continue;
              }
              len = lo;
              truncatedByGuard++;
              estimate = est(len);
            }
            mem = requestBytes(vs.v, len, scale);
            vs.guardPressureMax = Math.max(vs.guardPressureMax, (100 * (w + load(estimate))) / budget!);
            // The backstop, per process as the product's is (runtime helper MemoryGuard.limit_process): it sees this
            // worker's own memory only, never the other workers' — so workers that outgrow their estimates together
            // can still exhaust the instance (an OOM), as in a container.
            //  - CPU: RLIMIT_DATA, armed only while the worker runs one request, at what it holds now plus what it
            //    has reserved plus what the container has left after this admission, plus 64 MiB of slack;
            //  - GPU: the CUDA allocator's per-process fraction at the container's budget of its GPU.
            const own = summed ? sumMem + mem : (n + 1) * Math.max(mem, maxMem);
            const gpu = vs.v.spec.gpuCount > 0;
            const limit = gpu
              ? budget! / vs.v.spec.gpuCount - workerBase(vs.v)
              : n === 0
                ? estimate + Math.max(0, room - load(estimate)) + BACKSTOP_SLACK_BYTES
                : UNLIMITED;
            if (own > limit) {
              rejected++;
              rejectedByBackstop++;
              if (share < 0.5) refusedBelowHalf++;
              vs.guardRefusals++;
              continue;
            }
            occupy(inst, s, { arrive, start, finish: start + serviceTime(vs.v, len * scale), mem, worker, est: estimate });
            holding(inst, worker, start);
            continue;
          }
          occupy(inst, s, { arrive, start, finish: start + serviceTime(vs.v, len * scale), mem, worker, est: mem });
        }
        if (qi) inst.queue.splice(0, qi);
        // What cannot start this second waits in the model server's queue; beyond its limit: 503.
        const queueLimit = vs.v.queueLimit ?? a.queueLimit;
        if (inst.queue.length > queueLimit) {
          const excess = inst.queue.length - queueLimit;
          inst.queue.splice(queueLimit);
          failed += excess;
          vs.min5xx += excess;
        }
        // peak memory this second, sampled at four instants: the requests in flight at each
        const retains = a.allocatorRetainsPeak && vs.v.spec.gpuCount > 0;
        let bytes = w;
        for (const tau of [t + 0.25, t + 0.5, t + 0.75, t + 0.999]) {
          let b = w;
          if ((a.paddedBatches && !profiled) || retains) {
            // per worker: batch size × the activations of its longest request (or their sum, unpadded)
            const n = peakN.fill(0);
            const top = peakTop.fill(0);
            const sum = peakSum.fill(0);
            for (const r of inst.active) {
              if (r.start <= tau && r.finish > tau) {
                n[r.worker]++;
                sum[r.worker] += r.mem;
                if (r.mem > top[r.worker]) top[r.worker] = r.mem;
              }
            }
            for (let k = 0; k < n.length; k++) {
              const held = a.paddedBatches && !profiled ? n[k] * top[k] : sum[k];
              b += held;
              if (held > inst.retained[k]) inst.retained[k] = held;
            }
          } else {
            for (const r of inst.active) if (r.start <= tau && r.finish > tau) b += r.mem;
          }
          if (b > bytes) bytes = b;
        }
        // What the GPU metric reads when the caching allocator's reserved memory counts (released memory is kept
        // at each worker's peak until empty_cache): the workers' retained peaks, however little runs now.
        const metricBytes = retains ? Math.min(dev, Math.max(bytes, w + inst.retained.reduce((x, y) => x + y, 0))) : bytes;
        const pct = (100 * bytes) / dev;
        if (pct >= 100) {
          ooms++;
          if (firstOom === undefined) firstOom = t;
          const lost = inst.active.length + inst.queue.length;
          failed += lost;
          failedOom += lost;
          vs.min5xx += lost;
          inst.active = [];
          inst.queue = [];
          inst.slots.reset();
          inst.lastInSlot.fill(undefined);
          inst.retained.fill(0);
          inst.downUntil = t + a.restartS;
          hottest = 100;
          continue;
        }
        const reading = (100 * metricBytes) / dev;
        hottest = Math.max(hottest, reading);
        vs.minuteMemSum += reading;
        vs.windowSum += reading;
        vs.windowCount++;
        if (budget !== undefined) {
          let inflight = 0;
          for (const r of inst.active) if (r.start <= t + 1 && r.finish > t) inflight += r.est;
          vs.minuteInflightSum += (100 * inflight) / budget;
        }
        const before = inst.active.length;
        const stay: Req[] = [];
        for (const r of inst.active) {
          if (r.finish > t + 1) stay.push(r);
          else {
            latSum += r.finish - r.arrive;
            latN++;
            lats.push(r.finish - r.arrive);
          }
        }
        inst.active = stay;
        const done = before - inst.active.length;
        served += done;
        if (vs === F) servedF += done;
      }
      vs.periodMax = Math.max(vs.periodMax, hottest);
      vs.windowMax = Math.max(vs.windowMax, hottest);
      if (vs === P) {
        maxMemP = Math.max(maxMemP, hottest);
        if (firstCross === undefined && hottest >= (cfg.breaker?.degradeAtPercent ?? 80)) firstCross = t;
      }
    }

    // --- metric publishing: memory at the endpoint's period, invocations per minute ---
    if (t % dataPeriod === dataPeriod - 1) {
      for (const vs of variants) {
        vs.memPoints.push({ t: t - dataPeriod + 1, availableAt: t + memDelay, mem: vs.periodMax });
        if (vs.memPoints.length > 200) vs.memPoints.shift();
        vs.periodMax = 0;
      }
    }
    // The container guard's metrics (only a container with the guard publishes them): every 10 s, or as
    // 1-minute points where CloudWatch keeps no finer data (guardTenSecondData, unverified).
    const guardPeriod = a.guardTenSecondData ? 10 : 60;
    if (t % guardPeriod === guardPeriod - 1 && a.guard) {
      for (const vs of variants) {
        if (vs.v.guardBudgetBytes === undefined) continue;
        const delay = a.guardTenSecondData ? a.guardMetricDelayS : a.metricDelayS;
        vs.guardPoints.push({ t: t - guardPeriod + 1, availableAt: t + delay, pressure: vs.guardPressureMax, refusals: vs.guardRefusals });
        if (vs.guardPoints.length > 200) vs.guardPoints.shift();
        vs.guardPressureMax = 0;
        vs.guardRefusals = 0;
      }
    }
    if (t % 60 === 59) {
      for (const vs of variants) {
        const inst = Math.max(1, vs.minuteInstSec / 60);
        vs.minutes.push({
          t: t - 59,
          availableAt: t + a.metricDelayS,
          inv: vs.minuteInv,
          e5: vs.min5xx,
          ipi: vs.minuteInv / inst,
          memAvg: vs.minuteMemSum / Math.max(1, vs.minuteInstSec),
          inflightAvg: vs.minuteInflightSum / Math.max(1, vs.minuteInstSec),
        });
        if (vs.minutes.length > 30) vs.minutes.shift();
        vs.minuteInv = 0;
        vs.min5xx = 0;
        vs.minuteInstSec = 0;
        vs.minuteMemSum = 0;
        vs.minuteInflightSum = 0;
      }
    }

    // --- Application Auto Scaling: when the newest 1-minute datapoint lands; blocked while Updating ---
    if (cfg.autoscaling && t % 60 === (59 + a.metricDelayS) % 60 && t >= a.metricDelayS) {
      for (const vs of variants) if (!isUpdating(t)) autoscale(vs, t);
    }
    // A raised minimum is applied as soon as the endpoint accepts an update.
    if (cfg.autoscaling)
      for (const vs of variants) if (vs.minOverride !== undefined && vs.desired < vs.minOverride && !isUpdating(t)) scaleTo(vs, vs.minOverride, t);

    // --- the breaker: alarm (one period at the threshold), endpoint events, and the 1-minute schedule ---
    if (cfg.breaker) {
      const newest = lastWhere(P.memPoints, p => p.availableAt + a.alarmEvaluationS <= t);
      const high = newest !== undefined && newest.mem >= cfg.breaker.degradeAtPercent;
      if (high && !alarmHigh) evaluations.add(t + a.eventToLambdaS); // OK → ALARM
      alarmHigh = high;
      // The guard's two trigger alarms (10-s, high resolution): its pressure at the degrade level, any refusal.
      const g = lastWhere(P.guardPoints, p => p.availableAt + a.alarmEvaluationS <= t);
      const pressing = g !== undefined && g.pressure >= cfg.breaker.degradeAtPercent;
      const refusing = g !== undefined && g.refusals >= 1;
      if ((pressing && !guardPressureAlarm) || (refusing && !guardRefusalAlarm)) evaluations.add(t + a.eventToLambdaS);
      guardPressureAlarm = pressing;
      guardRefusalAlarm = refusing;
      if (t % 60 === 30) evaluations.add(t);
      if (evaluations.has(t)) {
        evaluations.delete(t);
        evaluate(t);
      }
    }

    if (t % 10 === 0) {
      series.push({
        t,
        qps: lambda,
        memP: P.windowMax,
        memAvgP: P.windowCount ? P.windowSum / P.windowCount : 0,
        memF: F ? F.windowMax : 0,
        instP: inService(P, t),
        instF: F ? inService(F, t) : 0,
        state: STATE_CODE[breaker.state],
        latencyMs: latN ? Math.round((1000 * latSum) / latN) : 0,
        latencyP99Ms: lats.length
          ? Math.round(1000 * kthSmallest(Float64Array.from(lats), Math.min(lats.length - 1, Math.floor(0.99 * lats.length))))
          : 0,
        level,
        updating: isUpdating(t) ? 1 : 0,
        refused: rejectedByGuard + rejectedByBackstop,
      });
      for (const vs of variants) {
        vs.windowMax = 0;
        vs.windowSum = 0;
        vs.windowCount = 0;
      }
      latSum = 0;
      latN = 0;
      lats = [];
    }
    if (cfg.onProgress && t - lastReport >= total / 20) {
      lastReport = t;
      cfg.onProgress(t / total);
    }
  }

  function evaluate(t: number): void {
    const pts = P.memPoints.filter(p => p.availableAt <= t);
    const memory: MemoryPoint[] = pts.slice(-Math.ceil(900 / dataPeriod)).map(p => ({ t: p.t * 1000, v: p.mem }));
    const last10 = P.minutes.filter(p => p.availableAt <= t).slice(-10);
    // Requests per minute, as the function reads Invocations: the primary's, and the endpoint's (every variant).
    const fallbackMinutes = new Map((F?.minutes ?? []).filter(p => p.availableAt <= t).map(p => [p.t, p.inv]));
    const guardSeen = P.guardPoints.filter(p => p.availableAt <= t).slice(-90);
    const capacity = (vs: VariantState): VariantCapacity | undefined =>
      mode.capacityActions && cfg.autoscaling && vs.v.scaling
        ? { min: vs.v.scaling.min, max: vs.v.scaling.max, qpsPerInstance: vs.v.scaling.qpsPerInstance }
        : undefined;
    const status = isUpdating(t) ? 'Updating' : 'InService';
    const d = decide(
      breaker,
      {
        memory,
        maxSpacingSeconds: Math.max(60, period),
        errors: last10.reduce((s, p) => s + p.e5, 0),
        invocations: last10.reduce((s, p) => s + p.inv, 0),
        invocationsPerMinute: last10.map(p => ({ t: p.t * 1000, v: p.inv })),
        endpointInvocationsPerMinute: last10.map(p => ({ t: p.t * 1000, v: p.inv + (fallbackMinutes.get(p.t) ?? 0) })),
        guardPressure: guardSeen.length ? guardSeen.map(p => ({ t: p.t * 1000, v: p.pressure })) : undefined,
        guardRefusals: guardSeen.length ? guardSeen.map(p => ({ t: p.t * 1000, v: p.refusals })) : undefined,
      },
      {
        status,
        weights: { P: pendingWeights?.w.p ?? weights.p, F: pendingWeights?.w.f ?? weights.f },
        instances: { P: inService(P, t), F: F ? inService(F, t) : 0 },
      },
      { primary: 'P', fallback: F ? 'F' : undefined, primaryCapacity: capacity(P), fallbackCapacity: F ? capacity(F) : undefined },
      cfg.breaker!,
      t * 1000,
    );
    // 1. the degrade level (published now; the container reads it within its poll interval)
    if (firstPublish === undefined && d.level >= 1) firstPublish = t;
    if (d.level !== publishedLevel) {
      levelChanges.push({ t, level: d.level, state: d.next.state, why: d.reasons[0] ?? '' });
      publishedLevel = d.level;
    }
    if (d.next.state === 'CLOSED' && breaker.state !== 'CLOSED') lastClosed = t;
    if (mode.applyLevel && d.level !== (pendingLevel?.level ?? level)) pendingLevel = { at: t + a.levelPollS, level: d.level };
    // 2. weights: an update SageMaker accepts only when InService
    if (d.setWeights) {
      pendingWeights = { at: t + a.weightApplyS, w: { p: d.setWeights.P, f: d.setWeights.F } };
      updatingUntil = Math.max(updatingUntil, t + a.weightApplyS);
    } else if (status !== 'InService' && F && Math.abs(d.effectiveShare - (pendingWeights?.w.f ?? weights.f)) > 1e-6) {
      deferred++;
    }
    // 3. capacity through the scaler's settings
    if (mode.capacityActions) {
      P.scaleInSuspended = d.capacity.suspendPrimaryScaleIn;
      if (F) F.minOverride = d.capacity.fallbackMinCapacity;
    }
    breaker = d.next;
  }

  function scaleTo(vs: VariantState, want: number, t: number): void {
    const current = vs.desired;
    if (want > current) {
      for (let k = current; k < want; k++) vs.instances.push(newInstance(vs.v, t + provisioning(vs.v)));
      vs.lastScaleOut = t;
      updatingUntil = Math.max(updatingUntil, t + provisioning(vs.v));
    } else if (want < current) {
      // Drain: requests on removed instances finish (SIGTERM, 30 s grace) and count as served.
      for (const i of vs.instances.splice(want)) {
        served += i.active.length + i.queue.length;
        if (vs === F) servedF += i.active.length + i.queue.length;
      }
      vs.lastScaleIn = t;
      updatingUntil = Math.max(updatingUntil, t + a.scaleInUpdateS);
    }
    vs.desired = want;
  }

  function autoscale(vs: VariantState, t: number): void {
    const sc = vs.v.scaling;
    if (!sc) return;
    const min = Math.max(sc.min, vs.minOverride ?? 0);
    const pts = vs.minutes.filter(p => p.availableAt <= t);
    const target = sc.qpsPerInstance * 60;
    const current = vs.desired;
    // Each target-tracking policy on its metric: QPS per instance, and memory when memoryTargetPercent is set.
    const policies: { metric: (p: MinutePoint) => number; target: number; scaleIn: boolean }[] = [{ metric: p => p.ipi, target, scaleIn: true }];
    if (sc.memoryTargetPercent !== undefined) {
      const inFlight = sc.memoryMetric === 'inFlight';
      policies.push({ metric: p => (inFlight ? p.inflightAvg : p.memAvg), target: sc.memoryTargetPercent, scaleIn: sc.memoryScaleIn ?? false });
    }
    // Scale out after 3 of 3 datapoints above target, proportionally (scaling-dynamics §1a); with several
    // policies, when any asks, to the largest capacity asked (AAS user guide, multiple target-tracking policies).
    const last3 = pts.slice(-3);
    if (last3.length === 3 && t - vs.lastScaleOut >= sc.scaleOutCooldownS) {
      let want = current;
      for (const pol of policies)
        if (last3.every(p => pol.metric(p) > pol.target)) want = Math.max(want, Math.ceil((current * pol.metric(last3[2])) / pol.target));
      want = Math.min(sc.max, want);
      if (want > current) {
        scaleTo(vs, want, t);
        return;
      }
    }
    // Scale in after 15 of 15 datapoints below 0.9 × target — of every policy with scale-in enabled (scale in only
    // when all of those agree), to the largest capacity any of them asks — unless the breaker suspended it.
    const last15 = pts.slice(-15);
    const shrinking = policies.filter(pol => pol.scaleIn);
    if (
      !vs.scaleInSuspended &&
      last15.length === 15 &&
      shrinking.every(pol => last15.every(p => pol.metric(p) < 0.9 * pol.target)) &&
      t - vs.lastScaleIn >= sc.scaleInCooldownS &&
      t - vs.lastScaleOut >= sc.scaleInCooldownS
    ) {
      const want = Math.max(min, ...shrinking.map(pol => Math.ceil((current * pol.metric(last15[14])) / pol.target)), 1);
      if (want < current) scaleTo(vs, want, t);
    }
  }

  const inFlightAtEnd = variants.reduce((s, vs) => s + vs.instances.reduce((x, i) => x + i.active.length + i.queue.length, 0), 0);
  const since = (x?: number) => (firstCross !== undefined && x !== undefined && x >= firstCross ? x - firstCross : undefined);
  return {
    arrivals,
    served,
    servedByFallback: servedF,
    failed,
    failedByOom: failedOom,
    rejected,
    rejectedByGuard,
    rejectedByBackstop,
    rejectedByDesign,
    rejectedByFallback,
    failedByTimeout,
    refusedBelowHalfBudget: refusedBelowHalf,
    levelChanges,
    stateSeconds,
    lastClosedS: lastClosed,
    rejectedAtLevel2,
    truncatedByGuard,
    inFlightAtEnd,
    oomEvents: ooms,
    timeToDegradeS: since(firstPublish),
    firstLevelS: firstPublish,
    timeToWeightsS: since(firstWeights),
    timeDegradedS: degradedS,
    updatingS,
    weightChangesDeferred: deferred,
    instanceMinutes: Math.round(instanceSeconds / 60),
    maxPrimaryMemoryPercent: Math.round(maxMemP),
    firstOomS: firstOom,
    series,
  };
}

/** One row of the comparison table. */
export interface ScenarioRow {
  readonly scenario: string;
  /** Whether the container's memory guard ran in it. @default false */
  readonly guard?: boolean;
  readonly result: SimResult;
}
