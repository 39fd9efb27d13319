/**
 * The simulator for every jsii language (Python, Java, .NET) and for TypeScript alike: classes with
 * static methods and plain-data structs, exported from the root as the `simulation` namespace (a jsii
 * submodule: `from sagemaker_resilient_endpoint import simulation`). A whole run stays inside Node.js:
 * a trace is built from parameters or from a list of per-second rates, never from a callback, so a
 * Python program crosses the process boundary once per call, not once per simulated second.
 *
 * The full engine (`runSimulation`, custom variants, the per-10-second series) stays at the
 * `sagemaker-resilient-endpoint/simulation` entry point for TypeScript and JavaScript.
 */
import { Duration } from 'aws-cdk-lib';
import type { ResilientEndpoint } from '../resilient-endpoint';
import { calibrateIncidentA } from './calibration';
import { renderChart } from './chart';
import { SCENARIOS } from './engine';
import { compareScenarios, comparisonTable, ScenarioRow } from './index';
import { abusiveClientTrace, csvTrace, poissonTrace, pulseTrace, steadyTrace, Trace } from './traces';

/** A traffic trace: the mean arrival rate for each second. Build one with `Traces`. */
export class SimulationTrace {
  /** @internal */
  public static _of(trace: Trace): SimulationTrace {
    return new SimulationTrace(trace);
  }

  /** What the trace is, for reports. */
  public readonly name: string;
  /** Length in seconds. */
  public readonly seconds: number;
  /** Whether arrivals are Poisson around the rate (true) or exactly the rounded rate every second (false). */
  public readonly poisson: boolean;
  /** @internal */
  public readonly _trace: Trace;

  private constructor(trace: Trace) {
    this._trace = trace;
    this.name = trace.name;
    this.seconds = trace.seconds;
    this.poisson = trace.poisson;
  }

  /** The mean arrival rate (requests per second) at `second`. */
  public rateAt(second: number): number {
    return this._trace.rate(second);
  }
}

/** A pulse: off-peak, a linear ramp to `factor` × off-peak, a hold, a ramp back, off-peak again. */
export interface PulseTraceOptions {
  /** Off-peak rate, requests per second. */
  readonly offPeakQps: number;
  /**
   * Peak as a multiple of off-peak.
   * @default 17 (incident B)
   */
  readonly factor?: number;
  /**
   * Off-peak time before the ramp.
   * @default Duration.minutes(30)
   */
  readonly before?: Duration;
  /**
   * Each ramp (up and down).
   * @default Duration.minutes(5)
   */
  readonly ramp?: Duration;
  /**
   * Time at the peak.
   * @default Duration.minutes(30)
   */
  readonly hold?: Duration;
  /**
   * Off-peak time after the ramp down.
   * @default Duration.minutes(45)
   */
  readonly after?: Duration;
}

/** Normal users plus one abusive client (incident B). */
export interface AbusiveClientTraceOptions {
  /** Number of normal users. */
  readonly users: number;
  /** Each normal user's rate, requests per second. */
  readonly userQps: number;
  /**
   * The abusive client's rate as a multiple of a normal user's.
   * @default 150 (incident B)
   */
  readonly factor?: number;
  /**
   * Length of the trace.
   * @default Duration.hours(2)
   */
  readonly duration?: Duration;
  /**
   * When the abusive client starts.
   * @default Duration.minutes(30)
   */
  readonly startAt?: Duration;
}

/** Options of `Traces.fromValues`. */
export interface ValuesTraceOptions {
  /**
   * Poisson arrivals around each second's rate; false sends exactly the rounded rate.
   * @default true
   */
  readonly poisson?: boolean;
  /**
   * Name in reports.
   * @default 'replay of N seconds'
   */
  readonly name?: string;
}

/** Builds traffic traces for `Simulator`. */
export class Traces {
  /** A pulse (default: 17× for 30 minutes, incident B), Poisson arrivals. */
  public static pulse(options: PulseTraceOptions): SimulationTrace {
    const s = (d: Duration | undefined) => d?.toSeconds();
    check('Traces.pulse', [
      ['offPeakQps', options.offPeakQps, options.offPeakQps > 0, 'a rate > 0 requests per second'],
      ['factor', options.factor, options.factor === undefined || options.factor >= 1, 'a multiple >= 1'],
      ...(['before', 'ramp', 'hold', 'after'] as const).map(k => [k, s(options[k]), (s(options[k]) ?? 0) >= 0, 'a Duration >= 0'] as Row),
    ]);
    return SimulationTrace._of(
      pulseTrace(options.offPeakQps, options.factor, {
        before: s(options.before),
        ramp: s(options.ramp),
        hold: s(options.hold),
        after: s(options.after),
      }),
    );
  }

  /** Exactly `qps` requests every second. */
  public static steady(qps: number, duration: Duration): SimulationTrace {
    check('Traces.steady', constantRows(qps, duration));
    return SimulationTrace._of(steadyTrace(qps, duration.toSeconds()));
  }

  /** Poisson arrivals around a constant mean rate. */
  public static poisson(qps: number, duration: Duration): SimulationTrace {
    check('Traces.poisson', constantRows(qps, duration));
    return SimulationTrace._of(poissonTrace(qps, duration.toSeconds()));
  }

  /** Normal users plus one abusive client (default: 150× a normal user, incident B). */
  public static abusiveClient(options: AbusiveClientTraceOptions): SimulationTrace {
    const seconds = options.duration?.toSeconds();
    const startAt = options.startAt?.toSeconds();
    check('Traces.abusiveClient', [
      ['users', options.users, Number.isInteger(options.users) && options.users >= 1, 'a whole number >= 1'],
      ['userQps', options.userQps, options.userQps >= 0, 'a rate >= 0 requests per second'],
      ['factor', options.factor, options.factor === undefined || options.factor >= 1, 'a multiple >= 1'],
      ['duration', seconds, seconds === undefined || seconds >= 1, 'a Duration of at least 1 second'],
      ['startAt', startAt, startAt === undefined || (startAt >= 0 && startAt < (seconds ?? Infinity)), 'a Duration >= 0 and shorter than the trace'],
    ]);
    // Unset options take the engine's defaults (150×, 2 hours, starting at 30 minutes).
    return SimulationTrace._of(abusiveClientTrace(options.users, options.userQps, options.factor, seconds, startAt));
  }

  /**
   * A trace from data: `qpsPerSecond[i]` is the mean rate in second i (e.g. a day of production
   * traffic read from CloudWatch). One call carries the whole series.
   */
  public static fromValues(qpsPerSecond: number[], options: ValuesTraceOptions = {}): SimulationTrace {
    const bad = qpsPerSecond.findIndex(v => !(Number.isFinite(v) && v >= 0));
    if (qpsPerSecond.length === 0 || bad >= 0) {
      throw new Error(
        `qpsPerSecond: got ${qpsPerSecond.length === 0 ? 'no values' : `${qpsPerSecond[bad]} at index ${bad}`}; ` +
          'allowed: one finite rate >= 0 per second, at least one. Fix: pass the per-second request rates.',
      );
    }
    const values = [...qpsPerSecond];
    return SimulationTrace._of({
      name: options.name ?? `replay of ${values.length} seconds`,
      seconds: values.length,
      poisson: options.poisson ?? true,
      rate: t => values[Math.min(values.length - 1, Math.max(0, Math.floor(t)))],
    });
  }

  /** A trace from a CSV file: one QPS value per line, or `second,qps` (a header line is skipped). */
  public static fromCsv(file: string): SimulationTrace {
    return SimulationTrace._of(csvTrace(file));
  }

  private constructor() {}
}

/** Timing assumptions of a simulation that AWS does not document precisely; sweep them to see what they change. */
export interface SimulationAssumptions {
  /**
   * Time from a scale-out decision to the new instances serving.
   * @default - 380 s on GPU instances, 180 s on CPU instances
   */
  readonly provisioning?: Duration;
  /**
   * Delay before a 1-minute datapoint is visible to alarms and to the breaker.
   * @default Duration.seconds(90)
   */
  readonly metricDelay?: Duration;
  /**
   * Time for a weight change to take effect.
   * @default Duration.seconds(30)
   */
  readonly weightApply?: Duration;
  /**
   * Time for a worker to restart after an OOM.
   * @default Duration.seconds(60)
   */
  readonly restart?: Duration;
  /**
   * Delay before a 10-second datapoint is visible (UNVERIFIED: CloudWatch stores sub-minute points only for
   * metrics published with StorageResolution 1, CloudWatch API reference `MetricStat`; `doctor` measures it).
   * @default Duration.seconds(20)
   */
  readonly metricDelay10s?: Duration;
  /**
   * From a datapoint being visible to its alarm changing state (10-s alarms are evaluated every 10 s).
   * @default Duration.seconds(10)
   */
  readonly alarmEvaluation?: Duration;
  /**
   * How often the container reads the published level (the runtime helper: every 10 s ± 20 %).
   * @default Duration.seconds(10)
   */
  readonly levelPoll?: Duration;
  /**
   * Alarm state change or endpoint event to the breaker's function running.
   * @default Duration.seconds(1)
   */
  readonly eventToFunction?: Duration;
  /**
   * Whether CloudWatch keeps the endpoint's 10-second datapoints (UNVERIFIED: CloudWatch API reference
   * `MetricStat`; `doctor` reads what your account stores).
   * False: the breaker works on 1-minute data.
   * @default true
   */
  readonly tenSecondData?: boolean;
  /**
   * How a request's memory is modelled.
   * @default - SimulationMemoryModel.PROFILE when the model has a memory profile, else FOOTPRINT
   */
  readonly memoryModel?: SimulationMemoryModel;
  /**
   * Whether the container admits requests with the runtime helper's MemoryGuard (and its backstop).
   * @default true
   */
  readonly guard?: boolean;
  /**
   * From the end of a 10-s interval to the container guard's metrics of it being readable by the breaker
   * (UNVERIFIED: no AWS figure for high-resolution custom metrics).
   * @default Duration.seconds(20)
   */
  readonly guardMetricDelay?: Duration;
}

/** How the simulator models a request's memory. */
export enum SimulationMemoryModel {
  /** The model's measured curve (`memoryProfile`), one request per worker at a time. */
  PROFILE = 'profile',
  /** The stated footprint split into weights and activations of padded batches (incident A's calibration). */
  FOOTPRINT = 'footprint',
}

/** Options of `Simulator.compare`. */
export interface SimulationOptions {
  /**
   * Random seed: the same seed gives the same result.
   * @default 42
   */
  readonly seed?: number;
  /**
   * Timing assumptions.
   * @default - the engine's defaults (sources in docs/simulator.md)
   */
  readonly assumptions?: SimulationAssumptions;
}

/** What one scenario did with the trace. */
export interface ScenarioOutcome {
  /** The scenario (see `Simulator.SCENARIO_*`). */
  readonly scenario: string;
  /** Requests that arrived. */
  readonly arrivals: number;
  /** Requests served (by either variant). */
  readonly served: number;
  /** Requests served by the fallback variant. */
  readonly servedByFallback: number;
  /** Requests failed: lost to an OOM, 503 with the queue full, or no instance up. */
  readonly failed: number;
  /** Of `failed`, those lost to an OOM. */
  readonly failedByOom: number;
  /** `failed` as a percentage of `arrivals`. */
  readonly failedPercent: number;
  /** Requests rejected on purpose (4XX): too long for the length tiers, or refused by the memory guard. */
  readonly rejected: number;
  /** Of `rejected`, refused by the container's memory guard (its estimate did not fit the worker's budget). */
  readonly rejectedByGuard: number;
  /** Of `rejected`, stopped by the guard's backstop (the request outgrew its estimate): one 413, not an OOM. */
  readonly rejectedByBackstop: number;
  /** Requests the guard truncated to what fitted (at a degrade level of 1 or more). */
  readonly truncatedByGuard: number;
  /** Of `rejected`, refused by design: longer than the container's MAX_SEQ_LEN, at every level. */
  readonly rejectedByDesign: number;
  /** Of `rejected`, refused by the length tiers at level 2 (longer than DEGRADED_MAX_SEQ_LEN). */
  readonly rejectedAtLevel2: number;
  /** Of `rejectedByDesign`, refused by the fallback's shorter cap although the primary would have taken them. */
  readonly rejectedByFallback: number;
  /** Of `failed`, requests that waited in the queue past SageMaker's 60-s limit. */
  readonly failedByTimeout: number;
  /** Of the guard's and its backstop's refusals, those made while the container held less than half its budget. */
  readonly refusedBelowHalfBudget: number;
  /** Every change of the published degrade level, with what moved it. */
  readonly levelChanges: LevelChange[];
  /** Seconds the breaker spent in each state (CLOSED, DEGRADED, OPEN, RECOVERING). */
  readonly stateSeconds: { [state: string]: number };
  /**
   * Second at which the breaker was last CLOSED again after being away.
   * @default - it never left CLOSED, or was not back by the end
   */
  readonly lastClosedSeconds?: number;
  /** Worker out-of-memory events. */
  readonly oomEvents: number;
  /**
   * Seconds from memory first crossing the breaker's threshold to the degrade level being published.
   * @default - never published
   */
  readonly timeToDegradeSeconds?: number;
  /**
   * Seconds from that crossing to traffic weights first taking effect.
   * @default - weights never moved
   */
  readonly timeToWeightsSeconds?: number;
  /**
   * Second of the trace at which the breaker first published a level of 1 or more, whatever triggered it.
   * @default - never published
   */
  readonly firstLevelSeconds?: number;
  /** Seconds with a degrade level applied by the container. */
  readonly timeDegradedSeconds: number;
  /** Seconds the endpoint spent `Updating`. */
  readonly updatingSeconds: number;
  /** Weight changes SageMaker refused because the endpoint was `Updating`. */
  readonly weightChangesDeferred: number;
  /** Instance-minutes used (cost). */
  readonly instanceMinutes: number;
  /** Highest memory use of the primary variant, percent. */
  readonly maxPrimaryMemoryPercent: number;
  /**
   * Second of the first OOM.
   * @default - no OOM
   */
  readonly firstOomSecond?: number;
}

/** A change of the degrade level the breaker published, and what moved it. */
export interface LevelChange {
  /** Second of the trace. */
  readonly second: number;
  /** The level published (0 normal, 1 degraded, 2 critical). */
  readonly level: number;
  /** The breaker's state then. */
  readonly state: string;
  /** The breaker's first reason (memory, the guard's pressure or refusals, the error rate, a recovery step). */
  readonly why: string;
}

/** A comparison of scenarios on one trace: the figures, a Markdown table and an SVG chart. */
export interface SimulationReport {
  /** One entry per scenario, in the order run. */
  readonly outcomes: ScenarioOutcome[];
  /** The comparison as a Markdown table. */
  readonly table: string;
  /** QPS, memory, instances, `Updating` and breaker state over time, as an SVG document. */
  readonly chartSvg: string;
}

/** Incident A re-run through the engine, next to what was observed (`Simulator.calibrateIncidentA`). */
export interface IncidentCalibration {
  /** Simulated median GPU memory before the launch, the instances' Average over each 10 s (a dashboard's reading), percent (observed: 25). */
  readonly baselineGpuMemoryPercent: number;
  /** The same window as the hottest instance's 10-s Maximum (what the breaker judges), percent. */
  readonly baselineGpuMemoryMaxPercent: number;
  /** Simulated highest 1-minute GPU memory before the first OOM, percent (observed: 98). */
  readonly peakGpuMemoryPercent: number;
  /** Simulated median latency before the launch, ms (observed: 120). */
  readonly baselineLatencyMs: number;
  /** Simulated worst p99 latency, ms (observed: 1,800). */
  readonly peakLatencyMs: number;
  /**
   * Minute of the first OOM with 4 instances.
   * @default - no OOM
   */
  readonly firstOomMinuteWith4?: number;
  /**
   * Minute of the first OOM with 6 instances (the manual scale-out).
   * @default - no OOM
   */
  readonly firstOomMinuteWith6?: number;
  /** OOM events with 4 instances. */
  readonly oomEventsWith4: number;
  /** OOM events with 6 instances. */
  readonly oomEventsWith6: number;
}

/**
 * Runs a `ResilientEndpoint` as configured (hardware, tuned workers, memory footprint, autoscaling,
 * breaker) against a trace, the breaker deciding with its real policy function.
 */
export class Simulator {
  /** Fixed capacity, no autoscaling, no breaker. */
  public static readonly SCENARIO_STATIC: string = SCENARIOS.STATIC;
  /** Autoscaling on QPS per instance alone. */
  public static readonly SCENARIO_AUTOSCALING: string = SCENARIOS.AUTOSCALING;
  /** Autoscaling plus the earlier design: weights only, on 1-minute data. */
  public static readonly SCENARIO_WEIGHTS_ONLY: string = SCENARIOS.WEIGHTS_ONLY;
  /** Autoscaling plus the breaker as deployed: degrade level, weights and capacity. */
  public static readonly SCENARIO_BREAKER: string = SCENARIOS.BREAKER;

  /**
   * Runs the trace through the endpoint four ways with one seed: static capacity, autoscaling, the
   * weights-only breaker and the breaker as deployed (the last two only when the endpoint has a breaker).
   */
  public static compare(trace: SimulationTrace, endpoint: ResilientEndpoint, options: SimulationOptions = {}): SimulationReport {
    const a = options.assumptions ?? {};
    const rows = compareScenarios(trace._trace, endpoint, {
      seed: options.seed,
      assumptions: {
        provisioningS: a.provisioning?.toSeconds(),
        metricDelayS: a.metricDelay?.toSeconds(),
        weightApplyS: a.weightApply?.toSeconds(),
        restartS: a.restart?.toSeconds(),
        metricDelay10S: a.metricDelay10s?.toSeconds(),
        alarmEvaluationS: a.alarmEvaluation?.toSeconds(),
        levelPollS: a.levelPoll?.toSeconds(),
        eventToLambdaS: a.eventToFunction?.toSeconds(),
        tenSecondData: a.tenSecondData,
        memoryModel: a.memoryModel,
        guard: a.guard,
        guardMetricDelayS: a.guardMetricDelay?.toSeconds(),
      },
    });
    return { outcomes: rows.map(outcomeOf), table: comparisonTable(rows), chartSvg: renderChart(rows, `${endpoint.node.path}: ${trace.name}`) };
  }

  /**
   * Incident A as it was (4 × ml.g4dn.xlarge, one worker per GPU, no input caps), with 4 and 6 instances.
   * @param seed random seed; default 42 (the figures in docs/simulator.md)
   */
  public static calibrateIncidentA(seed?: number): IncidentCalibration {
    const r = calibrateIncidentA(seed);
    return {
      baselineGpuMemoryPercent: r.baselineGpuMemoryPercent,
      baselineGpuMemoryMaxPercent: r.baselineGpuMemoryMaxPercent,
      peakGpuMemoryPercent: r.peakGpuMemoryPercent,
      baselineLatencyMs: r.baselineLatencyMs,
      peakLatencyMs: r.peakLatencyMs,
      firstOomMinuteWith4: r.firstOomMinute4,
      firstOomMinuteWith6: r.firstOomMinute6,
      oomEventsWith4: r.oomEvents4,
      oomEventsWith6: r.oomEvents6,
    };
  }

  private constructor() {}
}

function outcomeOf({ scenario, result: r }: ScenarioRow): ScenarioOutcome {
  return {
    scenario,
    arrivals: r.arrivals,
    served: r.served,
    servedByFallback: r.servedByFallback,
    failed: r.failed,
    failedByOom: r.failedByOom,
    failedPercent: Math.round((10000 * r.failed) / Math.max(1, r.arrivals)) / 100,
    rejected: r.rejected,
    rejectedByGuard: r.rejectedByGuard,
    rejectedByBackstop: r.rejectedByBackstop,
    truncatedByGuard: r.truncatedByGuard,
    rejectedByDesign: r.rejectedByDesign,
    rejectedAtLevel2: r.rejectedAtLevel2,
    rejectedByFallback: r.rejectedByFallback,
    failedByTimeout: r.failedByTimeout,
    refusedBelowHalfBudget: r.refusedBelowHalfBudget,
    levelChanges: r.levelChanges.map(c => ({ second: c.t, level: c.level, state: c.state, why: c.why })),
    stateSeconds: { ...r.stateSeconds },
    lastClosedSeconds: r.lastClosedS,
    oomEvents: r.oomEvents,
    timeToDegradeSeconds: r.timeToDegradeS,
    timeToWeightsSeconds: r.timeToWeightsS,
    firstLevelSeconds: r.firstLevelS,
    timeDegradedSeconds: r.timeDegradedS,
    updatingSeconds: r.updatingS,
    weightChangesDeferred: r.weightChangesDeferred,
    instanceMinutes: r.instanceMinutes,
    maxPrimaryMemoryPercent: r.maxPrimaryMemoryPercent,
    firstOomSecond: r.firstOomS,
  };
}

/** [option, value given, whether it is allowed, what is allowed]. */
type Row = [string, number | undefined, boolean, string];

const constantRows = (qps: number, duration: Duration): Row[] => [
  ['qps', qps, qps >= 0, 'a rate >= 0 requests per second'],
  ['duration', duration.toSeconds(), duration.toSeconds() >= 1, 'a Duration of at least 1 second'],
];

/** Throws one error naming every bad option, its value and what is allowed (NaN fails every check). */
function check(call: string, rows: Row[]): void {
  const bad = rows.filter(([, , ok]) => !ok).map(([name, value, , allowed]) => `${name}: got ${value}; allowed: ${allowed}`);
  if (bad.length) throw new Error(`${call}: ${bad.join('; ')}. Fix: pass values in those ranges.`);
}
