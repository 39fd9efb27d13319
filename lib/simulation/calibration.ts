/**
 * Calibration against what really happened: incident A as it was (../shared/context/incidents.md) —
 * 4 × ml.g4dn.xlarge (one T4, 16 GiB), the model server's default of one worker per GPU, no input
 * caps (sequence lengths on a power law from 5 to 3,000 events), mobile clients' payloads ~15 %
 * larger, no autoscaling and no breaker — run through the same engine as every other scenario, and
 * compared with the post-mortem's observed figures. Where the model did not match, its workload
 * assumptions were changed (they are all here), never the observed figures.
 */
import { SageMakerInstanceType } from '../instance-types';
import { runSimulation, SimAssumptions, SimResult, SimVariant } from './engine';
import { pulseTrace, Trace } from './traces';

/** The post-mortem's figures. */
export const INCIDENT_A_OBSERVED = {
  baselineGpuMemoryPercent: 25,
  peakGpuMemoryPercent: 98,
  baselineLatencyMs: 120,
  peakLatencyMs: 1800,
  instances: 4,
  instancesAfterManualScaleOut: 6,
} as const;

/**
 * The workload assumptions that reproduce incident A (each is an assumption, not a measurement):
 * weights ~2.8 GiB of the 4 GiB the load test saw (71 %), the rest activations of a 32-request batch at 512
 * events (load tests ran batches of 16/32/64 "under 4 GiB"); 40 % of requests from mobile clients; service
 * time 100 ms + 480 ms per 512 events. Fitted with the arrivals every other run uses (spread over each second),
 * at each of the matrix's seeds (1, 7, 42, 123), to {@link CALIBRATION_TOLERANCES}; with them all at the second's
 * first instant, as an earlier fit had them, the peak latency reads far too low and the memory too high.
 */
export const INCIDENT_A_ASSUMPTIONS: Partial<SimAssumptions> = {
  batchPerWorker: 32,
  weightsShare: 0.71,
  mobileShare: 0.4,
  mobileFactor: 1.15,
  serviceBaseS: 0.1,
  servicePer512S: 0.48,
};

/**
 * How close the calibration must come to the post-mortem's figures, at every matrix seed: GPU memory before the
 * launch within 5 points (the dashboard's reading: the instances' Average over each 10 s — the breaker's
 * Maximum of the hottest instance reads higher, and is reported beside it); the worst minute before the first
 * crash at 90 % or more and below 100 % (the observed 98 % was the last reading before the crash); latency before
 * the launch within 20 ms; the worst minute's P99 at the peak within 400 ms; and 6 instances crashing later than 4.
 */
export const CALIBRATION_TOLERANCES = { baselineMemoryPoints: 5, peakMemoryAtLeast: 90, baselineLatencyMs: 20, peakLatencyMs: 400 } as const;

/** The launch-day trace: off-peak, a 30-minute ramp to 6× (the launch), held for an hour. */
export function launchDayTrace(offPeakQps = 100): Trace {
  return {
    ...pulseTrace(offPeakQps, 6, { before: 1200, ramp: 1800, hold: 3600, after: 600 }),
    name: `launch day: ${offPeakQps} QPS → 6× over 30 min`,
  };
}

/** Incident A's variant as deployed then. */
export function incidentAVariant(instances: number): SimVariant {
  const t = SageMakerInstanceType.ML_G4DN_XLARGE;
  return {
    name: 'AllTraffic',
    spec: t.spec,
    workers: 1,
    footprintBytes: 4 * 1024 ** 3,
    maxSeqLen: 3000,
    degradedMaxSeqLen: 3000,
    initialCount: instances,
  };
}

/** What the model says, next to what was observed. */
export interface CalibrationReport {
  readonly baselineGpuMemoryPercent: number;
  /** The same window's memory as the hottest instance's 10-s Maximum (what the breaker judges), for comparison. */
  readonly baselineGpuMemoryMaxPercent: number;
  readonly peakGpuMemoryPercent: number;
  readonly baselineLatencyMs: number;
  readonly peakLatencyMs: number;
  readonly firstOomMinute4?: number;
  readonly firstOomMinute6?: number;
  readonly oomEvents4: number;
  readonly oomEvents6: number;
  readonly failedPercent4: number;
  readonly failedPercent6: number;
}

/** Runs incident A with 4 instances and with 6 (the manual scale-out), same trace and seed. */
export function calibrateIncidentA(
  seed = 42,
  trace: Trace = launchDayTrace(),
  assumptions: Partial<SimAssumptions> = INCIDENT_A_ASSUMPTIONS,
): CalibrationReport {
  const run = (n: number): SimResult => runSimulation(trace, { primary: incidentAVariant(n), autoscaling: false, seed, assumptions });
  const four = run(INCIDENT_A_OBSERVED.instances);
  const six = run(INCIDENT_A_OBSERVED.instancesAfterManualScaleOut);
  const baseline = four.series.filter(s => s.t >= 300 && s.t < 1200);
  const beforeCrash = four.series.filter(s => s.t < (four.firstOomS ?? Infinity));
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? 0;
  // CloudWatch's 1-minute Maximum before the first OOM (an OOM frees the memory: the observed 98 %
  // is the last reading before the crash); latency as the worst minute's P99 of requests served.
  const minuteMax = (pick: (s: SimResult['series'][number]) => number) => {
    let best = 0;
    for (let i = 0; i + 6 <= beforeCrash.length; i += 6) best = Math.max(best, Math.max(...beforeCrash.slice(i, i + 6).map(pick)));
    return best;
  };
  const peakLatency = Math.max(...four.series.filter(s => s.t < trace.seconds).map(s => s.latencyP99Ms));
  const pct = (r: SimResult) => Math.round((10000 * r.failed) / Math.max(1, r.arrivals)) / 100;
  return {
    baselineGpuMemoryPercent: Math.round(median(baseline.map(s => s.memAvgP))),
    baselineGpuMemoryMaxPercent: Math.round(median(baseline.map(s => s.memP))),
    peakGpuMemoryPercent: Math.round(10 * minuteMax(s => (s.memP < 100 ? s.memP : 0))) / 10,
    baselineLatencyMs: Math.round(median(baseline.map(s => s.latencyMs))),
    peakLatencyMs: Math.round(peakLatency),
    firstOomMinute4: four.firstOomS === undefined ? undefined : Math.round(four.firstOomS / 6) / 10,
    firstOomMinute6: six.firstOomS === undefined ? undefined : Math.round(six.firstOomS / 6) / 10,
    oomEvents4: four.oomEvents,
    oomEvents6: six.oomEvents,
    failedPercent4: pct(four),
    failedPercent6: pct(six),
  };
}
