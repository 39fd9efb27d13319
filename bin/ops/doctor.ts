/**
 * `sagemaker-resilient-endpoint doctor`: read-only checks of a deployed ResilientEndpoint in the account,
 * for what unit tests cannot see (real-account.md items 23–35): whether the 10-second data the breaker
 * relies on exists, whether the per-GPU series carry the dimension set its query uses, whether anyone
 * is told when an alarm fires, whether the breaker runs. Each check says what it saw and the fix.
 */
import { DescribeScalableTargetsCommand, ListTagsForResourceCommand } from '@aws-sdk/client-application-auto-scaling';
import { CompositeAlarm, DescribeAlarmsCommand, GetMetricDataCommand, ListMetricsCommand, MetricAlarm } from '@aws-sdk/client-cloudwatch';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DescribeRuleCommand, ListRuleNamesByTargetCommand } from '@aws-sdk/client-eventbridge';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import {
  DescribeEndpointCommand,
  DescribeEndpointCommandOutput,
  DescribeEndpointConfigCommand,
  DescribeEndpointConfigCommandOutput,
} from '@aws-sdk/client-sagemaker';
import { ListSubscriptionsByTopicCommand } from '@aws-sdk/client-sns';
import { GetParameterCommand, GetServiceSettingCommand } from '@aws-sdk/client-ssm';
import { publishedFrom } from '../../lambda/circuit-breaker/state-store';
import { BREAKER_TAG, DEFAULT_APPLICATION_NAMESPACE, GUARD_METRIC_PERIOD_SECONDS, GUARD_METRICS } from '../../lib/breaker/contract';
import { tryParseState } from '../../lib/breaker/policy';
import { errorName, fixFor, isAccessDenied, isThrottling, OpsClients, withAbort } from './aws';
import { liveChecks, livePublishing, liveVariants, metricFamily } from './doctor-live';
import { driftRuns } from './drift-check';
import { driftDoctor } from './doctor-drift';
import { findBreaker, FoundBreaker } from './discover';

export type CheckResult = 'PASS' | 'WARN' | 'FAIL' | 'SKIP';

export interface Check {
  readonly id: string;
  readonly result: CheckResult;
  /** What the check saw. */
  readonly saw: string;
  /** What to do about a WARN or FAIL. */
  readonly fix?: string;
  /** Figures the check measured, per metric (the stored-data checks: resolution and delay in seconds). */
  readonly measured?: Record<string, { readonly resolutionS?: 10 | 60 | 'none'; readonly delayS?: number }>;
}

export interface DoctorReport {
  readonly endpointName: string;
  readonly checkedAt: string;
  readonly checks: Check[];
  /** No check FAILed (the exit code is 0). */
  readonly ok: boolean;
}

const NS = '/aws/sagemaker/Endpoints';
/** The per-GPU series' dimensions, as the breaker's Metrics Insights query names them (contract.ts perGpuQuery). */
export const PER_GPU_DIMENSIONS = ['AcceleratorId', 'EndpointName', 'InstanceId', 'VariantName'];
/** Parameter Store's default throughput per account and Region (Systems Manager parameter-store-throughput). */
const SSM_DEFAULT_TPS = 40;

const pass = (id: string, saw: string): Check => ({ id, result: 'PASS', saw });
const warn = (id: string, saw: string, fix: string): Check => ({ id, result: 'WARN', saw, fix });
const fail = (id: string, saw: string, fix: string): Check => ({ id, result: 'FAIL', saw, fix });
const skip = (id: string, saw: string): Check => ({ id, result: 'SKIP', saw });

/** How long a whole doctor run may take, whatever the network does: 60 s. */
export const DOCTOR_DEADLINE_MS = 60_000;

/** Runs a check; an AWS error becomes a WARN (throttled, or another error) or a SKIP (no permission), never a crash. */
async function run(id: string, f: () => Promise<Check | Check[]>): Promise<Check[]> {
  try {
    const r = await f();
    return Array.isArray(r) ? r : [r];
  } catch (e) {
    if (isThrottling(e)) return [warn(id, `could not check: AWS throttled the call (${errorName(e)}) after the SDK's retries`, fixFor(e))];
    if (isAccessDenied(e)) return [skip(id, `no permission: ${(e as Error).message}`)];
    return [warn(id, `could not check: ${errorName(e)}: ${(e as Error).message}`, fixFor(e))];
  }
}

/**
 * The checks of one run within a time bound: a check still running when the bound is reached FAILs
 * (named, with what to do), its calls are aborted, and the checks after it are not run.
 */
class Bounded {
  private readonly started = Date.now();
  private readonly abort = new AbortController();
  /** The check that was running when the bound was reached. */
  public timedOut?: string;
  public readonly clients: OpsClients;

  constructor(
    c: OpsClients,
    private readonly deadlineMs: number,
  ) {
    this.clients = withAbort(c, this.abort.signal);
  }

  public async attempt(id: string, f: () => Promise<Check | Check[]>): Promise<Check[]> {
    const bound = `${Math.round(this.deadlineMs / 1000)} s`;
    if (this.timedOut) return [skip(id, `not run: doctor's ${bound} bound was reached during ${this.timedOut}`)];
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<undefined>(resolve => {
      timer = setTimeout(() => resolve(undefined), Math.max(0, this.deadlineMs - (Date.now() - this.started)));
    });
    try {
      const r = await Promise.race([run(id, f), expired]);
      if (r) return r;
      this.timedOut = id;
      this.abort.abort();
      return [
        fail(
          id,
          `timed out: no answer from AWS within doctor's ${bound} bound (every call has a 10 s limit and 3 tries)`,
          'check the network, a proxy (HTTPS_PROXY) or the VPC endpoint to the service, and --region; then run doctor again',
        ),
      ];
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Points' spacing in seconds: the smallest gap between their timestamps (undefined with fewer than 2). */
export function spacingSeconds(timestamps: Date[]): number | undefined {
  const t = timestamps.map(d => d.getTime()).sort((a, b) => a - b);
  let best: number | undefined;
  for (let i = 1; i < t.length; i++) if (t[i] > t[i - 1] && (best === undefined || t[i] - t[i - 1] < best)) best = t[i] - t[i - 1];
  return best === undefined ? undefined : best / 1000;
}

export interface DoctorOptions {
  /** The whole run's time bound, ms. @default DOCTOR_DEADLINE_MS (60 s) */
  readonly deadlineMs?: number;
}

export async function doctor(clients: OpsClients, endpointName: string, now: number = Date.now(), o: DoctorOptions = {}): Promise<DoctorReport> {
  const bounded = new Bounded(clients, o.deadlineMs ?? DOCTOR_DEADLINE_MS);
  const c = bounded.clients;
  const attempt = (id: string, f: () => Promise<Check | Check[]>) => bounded.attempt(id, f);
  const checks: Check[] = [];
  let ep: DescribeEndpointCommandOutput | undefined;
  checks.push(
    ...(await attempt('endpoint', async () => {
      try {
        ep = await c.sagemaker.send(new DescribeEndpointCommand({ EndpointName: endpointName }));
      } catch (e) {
        if (errorName(e) === 'ValidationException')
          return fail('endpoint', `no endpoint named ${endpointName} in this Region`, 'check --endpoint and --region');
        throw e;
      }
      const status = ep.EndpointStatus ?? 'Unknown';
      if (status === 'InService') return pass('endpoint', `InService, config ${ep.EndpointConfigName}`);
      if (['Updating', 'Creating', 'SystemUpdating', 'RollingBack'].includes(status))
        return warn('endpoint', status, 'wait for InService and run doctor again');
      return fail('endpoint', `${status}${ep.FailureReason ? `: ${ep.FailureReason}` : ''}`, 'see the failure reason in the SageMaker console');
    })),
  );
  // Without the endpoint nothing else can be checked: a check that could not even run is a failure.
  if (!ep)
    return report(
      endpointName,
      now,
      checks.map(x => (x.result === 'FAIL' ? x : { ...x, result: 'FAIL' as const })),
    );
  const primary = ep.ProductionVariants?.[0]?.VariantName;

  let cfg: DescribeEndpointConfigCommandOutput | undefined;
  let breaker: FoundBreaker | undefined;
  checks.push(
    ...(await attempt('breaker-function', async () => {
      breaker = await findBreaker(c, endpointName);
      return breaker
        ? pass('breaker-function', `${breaker.functionName}${breaker.shared ? ' (shared by a fleet)' : ''}`)
        : warn(
            'breaker-function',
            'no function in this Region serves this endpoint',
            'deploy it with circuitBreaker enabled (the default), or ignore for an endpoint without one',
          );
    })),
  );
  const s = breaker?.settings;
  const variant = s?.primaryVariant ?? primary;

  checks.push(
    ...(await attempt('metrics-config', async () => {
      cfg = await c.sagemaker.send(new DescribeEndpointConfigCommand({ EndpointConfigName: ep!.EndpointConfigName }));
      // What the live endpoint does (DescribeEndpoint's MetricsConfig) over what its config says (item 46).
      const m = ep!.MetricsConfig ?? cfg.MetricsConfig;
      const from = ep!.MetricsConfig ? 'live endpoint' : 'endpoint config';
      const period = m?.MetricPublishFrequencyInSeconds;
      const want = s?.metricPeriodSeconds;
      const saw = m
        ? `MetricsConfig (${from}): enhanced metrics ${m.EnableEnhancedMetrics ? 'on' : 'off'}, every ${period ?? 60} s`
        : 'no MetricsConfig (1-minute publishing)';
      if (want !== undefined && (period ?? 60) !== want)
        return warn(
          'metrics-config',
          `${saw}; the breaker expects ${want} s`,
          'redeploy the stack: the live endpoint config is not the one the construct wrote',
        );
      if (s?.perGpuMetrics && !m?.EnableEnhancedMetrics)
        return warn('metrics-config', `${saw}; the breaker expects per-GPU data`, 'redeploy the stack');
      return pass('metrics-config', saw);
    })),
  );

  checks.push(
    ...(await attempt('data-capture', async () => {
      const dc = capture(ep!, cfg);
      if (!dc)
        return cfg
          ? warn('data-capture', 'data capture off', 'enable dataCapture (on at 1 % by default)')
          : skip('data-capture', 'endpoint config not read');
      if (!dc.live)
        return pass(
          'data-capture',
          `${dc.percent} % of requests to ${dc.destination} (endpoint config; the endpoint did not report its live capture)`,
        );
      // DescribeEndpoint's CaptureStatus: "whether data capture is currently functional" (item 46).
      if (dc.live.status === 'Stopped')
        return fail(
          'data-capture',
          `configured (${dc.percent} % to ${dc.destination}) but CaptureStatus is Stopped: no request is captured`,
          "check the endpoint role's s3:PutObject on the destination bucket and kms:GenerateDataKey on its key, then update the endpoint (redeploy) to start capture again",
        );
      return pass('data-capture', `${dc.live.status ?? 'capturing'}: ${dc.percent} % of requests to ${dc.destination} (live endpoint)`);
    })),
  );

  checks.push(...(await attempt('ten-second-data', () => tenSecondData(c, endpointName, variant, ep!, cfg, now))));
  const namespace = s?.applicationNamespace ?? DEFAULT_APPLICATION_NAMESPACE;
  checks.push(...(await attempt('guard-metrics', () => guardMetrics(c, endpointName, variant, namespace, !!s, now))));
  checks.push(...(await attempt('series', () => series(c, endpointName, variant, s?.gpuCount ?? 0, s?.perGpuMetrics ?? false))));
  checks.push(...(await attempt('alarms', () => alarms(c, endpointName, now))));

  if (breaker && s) {
    const b = breaker;
    checks.push(...(await attempt('breaker-runs', () => breakerRuns(c, b.functionName, now))));
    checks.push(...(await attempt('breaker-rules', () => breakerRules(c, b.functionArn))));
    let state: ReturnType<typeof tryParseState>;
    checks.push(
      ...(await attempt('breaker-state', async () => {
        const out = await c.dynamodb.send(
          new GetItemCommand({ TableName: s.tableName, Key: { pk: { S: s.stateKey ?? 'breaker' } }, ConsistentRead: true }),
        );
        if (!out.Item)
          return warn(
            'breaker-state',
            `no state item in ${s.tableName} yet`,
            'the first evaluation writes it (within a minute of deploying); if it never appears, see breaker-runs',
          );
        state = tryParseState(out.Item.state?.S);
        if (!state)
          return fail(
            'breaker-state',
            `the state item in ${s.tableName} does not parse`,
            'the next evaluation rewrites it; if it persists, see the function logs',
          );
        const since = new Date(state.since).toISOString();
        if (state.drill && state.drill.until > now)
          return warn(
            'breaker-state',
            `${state.state} since ${since}: drill ${state.drill.id} holds it until ${new Date(state.drill.until).toISOString()}`,
            'end the drill (it expires on its own)',
          );
        return pass('breaker-state', `${state.state} since ${since}, fallback share ${state.share}`);
      })),
    );
    checks.push(
      ...(await attempt('level-parameter', async () => {
        const v = (await c.ssm.send(new GetParameterCommand({ Name: s.parameterName }))).Parameter?.Value;
        const p = publishedFrom(v);
        if (!p || ![0, 1, 2].includes(p.level as number))
          return fail(
            'level-parameter',
            `${s.parameterName} holds no valid level: ${String(v).slice(0, 80)}`,
            'the next evaluation re-publishes it; if not, see breaker-runs',
          );
        if (state && p.state !== state.state)
          return warn(
            'level-parameter',
            `level ${p.level} (${p.state}) but the state item says ${state.state}`,
            'the next evaluation re-publishes it within a minute',
          );
        return pass('level-parameter', `level ${p.level} (${p.state}) in ${s.parameterName}`);
      })),
    );
    checks.push(
      ...(await attempt('weights', async () => {
        const fb = s.fallbackVariant;
        if (!fb) return skip('weights', 'no fallback variant: only the level acts');
        if (!state) return skip('weights', 'state not read');
        const w = ep!.ProductionVariants?.find(v => v.VariantName === fb)?.CurrentWeight ?? 0;
        const total = (ep!.ProductionVariants ?? []).reduce((x, v) => x + (v.CurrentWeight ?? 0), 0) || 1;
        const share = w / total;
        if (ep!.EndpointStatus !== 'InService') return skip('weights', `endpoint ${ep!.EndpointStatus}: weights move when it is InService`);
        if (state.state === 'CLOSED' && share > 0.01)
          return warn(
            'weights',
            `CLOSED but ${fb} has ${(100 * share).toFixed(0)} % of the traffic`,
            'the next evaluation reconciles the weights; if not, see breaker-runs',
          );
        if (state.state !== 'CLOSED' && share <= 0)
          return warn('weights', `${state.state} but ${fb} has no traffic`, 'weights follow once the fallback has instances in service');
        return pass('weights', `${fb} at ${(100 * share).toFixed(0)} % of the traffic, as the ${state.state} state wants`);
      })),
    );
    checks.push(...(await attempt('scalable-targets', () => scalableTargets(c, endpointName, s))));
  }
  checks.push(...(await attempt('capture-objects', () => captureObjects(c, endpointName, variant, capture(ep!, cfg), now))));
  checks.push(...(await attempt('parameter-store-throughput', () => ssmThroughput(c, ep!))));
  checks.push(...(await attempt('drift-runs', () => driftRuns(c, endpointName, now)))); // bin/ops/drift-check.ts
  checks.push(...(await liveChecks(c, ep!, cfg, now, attempt))); // bin/ops/doctor-live.ts
  checks.push(...(await attempt('drift-baseline', () => driftDoctor(c, endpointName, ep!, cfg, now)))); // bin/ops/doctor-drift.ts
  return report(endpointName, now, checks);
}

/** Data capture as the live endpoint reports it (DescribeEndpoint), else as its config says; undefined when off. */
interface Capture {
  readonly percent: number;
  readonly destination?: string;
  /** What DescribeEndpoint says: CaptureStatus (Started, Stopped). */
  readonly live?: { readonly status?: string };
}
function capture(ep: DescribeEndpointCommandOutput, cfg: DescribeEndpointConfigCommandOutput | undefined): Capture | undefined {
  const live = ep.DataCaptureConfig;
  if (live) {
    if (live.EnableCapture === false) return undefined;
    return {
      percent: live.CurrentSamplingPercentage ?? cfg?.DataCaptureConfig?.InitialSamplingPercentage ?? 0,
      destination: live.DestinationS3Uri ?? cfg?.DataCaptureConfig?.DestinationS3Uri,
      live: { status: live.CaptureStatus },
    };
  }
  const dc = cfg?.DataCaptureConfig;
  if (!dc || dc.EnableCapture === false) return undefined;
  return { percent: dc.InitialSamplingPercentage ?? 0, destination: dc.DestinationS3Uri };
}

function report(endpointName: string, now: number, checks: Check[]): DoctorReport {
  return { endpointName, checkedAt: new Date(now).toISOString(), checks, ok: !checks.some(x => x.result === 'FAIL') };
}

/** One query's points, merged over GetMetricData's pages, and its last StatusCode. */
interface Series {
  readonly t: Date[];
  readonly v: number[];
  readonly status?: string;
}

/** Pages of one GetMetricData request read at most (a 15-minute window at 10 s is 90 points a query: one page). */
const MAX_PAGES = 10;

/**
 * GetMetricData over every page: CloudWatch answers `PartialData` with a `NextToken` when a request has more
 * points than one answer carries, and the next page continues each query's series (CloudWatch API reference,
 * MetricDataResult StatusCode: "PartialData means that an incomplete set of data points were returned. You can
 * use the NextToken value that was returned and repeat your request to get more data points"). Timestamps come
 * newest first unless ScanBy says otherwise (GetMetricData ScanBy: TimestampDescending by default); nothing
 * here depends on the order. Every page is one call through the run's clients, so the run's bound holds.
 */
async function metricData(
  c: OpsClients,
  queries: { id: string; metric: string; dims: Record<string, string>; ns?: string; stat?: string; period?: number }[],
  period: number,
  from: number,
  to: number,
): Promise<Record<string, Series>> {
  const out: Record<string, { t: Date[]; v: number[]; status?: string }> = {};
  let token: string | undefined;
  let pages = 0;
  do {
    const page = await c.cloudwatch.send(
      new GetMetricDataCommand({
        StartTime: new Date(from),
        EndTime: new Date(to),
        NextToken: token,
        MetricDataQueries: queries.map(q => ({
          Id: q.id,
          MetricStat: {
            Metric: { Namespace: q.ns ?? NS, MetricName: q.metric, Dimensions: Object.entries(q.dims).map(([Name, Value]) => ({ Name, Value })) },
            Period: q.period ?? period,
            Stat: q.stat ?? 'Maximum',
          },
        })),
      }),
    );
    for (const r of page.MetricDataResults ?? []) {
      const x = (out[r.Id!] ??= { t: [], v: [] });
      x.t.push(...(r.Timestamps ?? []));
      x.v.push(...(r.Values ?? []));
      x.status = r.StatusCode;
    }
    token = page.NextToken;
  } while (token && ++pages < MAX_PAGES);
  return out;
}

/**
 * What the simulator assumes about how late data is readable, and the flag that changes it
 * (lib/simulation/engine.ts DEFAULT_ASSUMPTIONS, bin/simulate.ts; kept equal by test/ops-doctor.test.ts,
 * not imported: the ops bundle stays free of the simulator).
 */
export const SIMULATOR_DELAYS = {
  /** The container guard's 10-s metrics (`guardMetricDelayS`, UNVERIFIED). */
  guard: { flag: '--guard-metric-delay', seconds: 20, noTenSecond: '--no-guard-ten-second-data' },
  /** SageMaker's 10-s utilization data (`metricDelay10S`, UNVERIFIED). */
  sageMaker: { flag: '--metric-delay-10s', seconds: 20, noTenSecond: '--no-ten-second-data' },
  /** 1-minute data (`metricDelayS`: 60–120 s, scaling-dynamics §2). */
  minute: { flag: '--metric-delay', seconds: 90 },
} as const;

/** A newest point older than this (seconds past its interval's end) means the publisher stopped, not that CloudWatch is late. */
export const STALE_AFTER_S = { tenSecond: 120, minute: 300 } as const;

/** How far back the stored-resolution checks look: well within the 3 hours CloudWatch keeps sub-minute points. */
const STORED_WINDOW_MS = 15 * 60_000;

/** What CloudWatch stores for one metric, from the same window queried at 10 s and at 60 s. */
export interface Stored {
  readonly metric: string;
  /** Points the 10-s query returned. */
  readonly points: number;
  /** Points the 60-s query returned. */
  readonly minutePoints: number;
  /** The 10-s query's spacing (seconds), from its timestamps. */
  readonly spacingS?: number;
  /** 10 or 60: the resolution CloudWatch keeps; 'none': no point at all; undefined: too few points to tell. */
  readonly resolutionS?: 10 | 60 | 'none';
  /**
   * Seconds from the end of the newest point's interval to now. One reading: the delay is at most this,
   * and at least this less one period (the next interval may have ended an instant ago).
   */
  readonly delayS?: number;
  /** CloudWatch's StatusCode when it was not Complete (PartialData after the pages read, InternalError, Forbidden). */
  readonly status?: string;
}

/**
 * Reads what is stored from a 10-s and a 60-s query of the same series. CloudWatch keeps points finer than a
 * minute only for custom metrics published with StorageResolution 1 ("Data points with a period of less than
 * 60 seconds are available for 3 hours. These data points are high-resolution metrics and are available only
 * for custom metrics that have been defined with a StorageResolution of 1": GetMetricData / GetMetricStatistics
 * API reference; MetricStat Period: "For metrics with regular resolution, a period can be as short as one
 * minute (60 seconds) and must be a multiple of 60"). The reference does not say what a 10-s query of
 * 1-minute data returns: points a minute apart (real-account.md item 23) or nothing. Both read as 1-minute
 * data here: the spacing comes from the timestamps, and a 10-s query with no point where the 60-s one has
 * some is 1-minute data too.
 */
export function readStored(metric: string, ten: Series | undefined, minute: Series | undefined, now: number): Stored {
  const t10 = ten?.t ?? [];
  const t60 = minute?.t ?? [];
  const spacingS = spacingSeconds(t10);
  const status = [ten?.status, minute?.status].find(x => x !== undefined && x !== 'Complete');
  const newest = (ts: Date[]) => Math.max(...ts.map(d => d.getTime()));
  const delay = (end: number) => Math.max(0, Math.round((now - end) / 1000));
  const base = { metric, points: t10.length, minutePoints: t60.length, spacingS, ...(status ? { status } : {}) };
  if (t10.length === 0 && t60.length === 0) return { ...base, resolutionS: 'none' };
  if (spacingS !== undefined && spacingS <= 10) return { ...base, resolutionS: 10, delayS: delay(newest(t10) + 10_000) };
  if ((spacingS !== undefined && spacingS >= 60) || (t10.length === 0 && t60.length > 1))
    return { ...base, resolutionS: 60, delayS: delay(newest([...t10, ...t60]) + 60_000) };
  // One point, or an odd spacing: the resolution is not known; the delay, as if 10-s data, is still a figure.
  return { ...base, delayS: t10.length ? delay(newest(t10) + 10_000) : delay(newest(t60) + 60_000) };
}

/** '90 points, 10 s apart, newest 20 s late' (or what the series lacks). */
function figures(x: Stored): string {
  const parts = [`${x.points} points${x.spacingS ? `, ${x.spacingS} s apart` : ''}`];
  if (x.points === 0 && x.minutePoints > 0) parts.push(`a 1-minute query: ${x.minutePoints} points`);
  if (x.delayS !== undefined) parts.push(`newest ${x.delayS} s late`);
  if (x.status) parts.push(`CloudWatch answered ${x.status}`);
  return parts.join(', ');
}

/** The worst of several checks' results (FAIL > WARN > SKIP > PASS). */
const RANK: Record<CheckResult, number> = { PASS: 0, SKIP: 1, WARN: 2, FAIL: 3 };

/** One metric's verdict: what was seen of it, what that means (shared by metrics that agree), the fix. */
interface Verdict {
  readonly result: CheckResult;
  readonly metric: string;
  /** Its figures (points, spacing, delay). */
  readonly seen: string;
  readonly means: string;
  readonly fix?: string;
}

/**
 * The verdict on one metric's stored resolution and delay. `sim` names the simulator's assumption and flags
 * for this data; `minuteMeaning` says what 1-minute data means for the breaker.
 */
function storedVerdict(x: Stored, sim: { flag: string; seconds: number; noTenSecond: string }, minuteMeaning: string): Verdict {
  const seen = figures(x);
  const metric = x.metric;
  const d = x.delayS;
  // Only where other metrics of the check have points (all none is its own verdict): those judge.
  if (x.resolutionS === 'none') return { result: 'PASS', metric, seen, means: 'none in the last 15 minutes (the other metrics judge)' };
  if (x.resolutionS === 10) {
    if (d! > STALE_AFTER_S.tenSecond)
      return {
        result: 'WARN',
        metric,
        seen,
        means: '10-s data, but nothing newer for that long: publishing stopped',
        fix: 'see whether the instances are in service and the container runs, then run doctor again',
      };
    if (d! >= sim.seconds + 10)
      return {
        result: 'WARN',
        metric,
        seen,
        means: `10-s data, later than the simulator's ${sim.flag} ${sim.seconds} s assumes (one reading: the delay is at most the figure, at least 10 s less)`,
        fix: `simulate with ${sim.flag} ${d} to see what the delay costs; run doctor again to confirm it`,
      };
    return { result: 'PASS', metric, seen, means: `10-s data, within the simulator's ${sim.flag} ${sim.seconds} s (one reading)` };
  }
  if (x.resolutionS === 60) {
    const how =
      x.points > 0 ? 'a 10-second query returned points a minute apart' : 'a 10-second query returned nothing, a 1-minute query returned points';
    return {
      result: 'WARN',
      metric,
      seen,
      means: `${how}: CloudWatch keeps this data at 1 minute${d! > STALE_AFTER_S.minute ? ', and nothing newer for that long: publishing stopped' : ''}`,
      fix: `${minuteMeaning}; the simulator models it with ${sim.noTenSecond} (and ${SIMULATOR_DELAYS.minute.flag}, ${SIMULATOR_DELAYS.minute.seconds} s by default)`,
    };
  }
  return { result: 'WARN', metric, seen, means: 'too few points to tell the spacing', fix: 'run doctor again with traffic' };
}

async function tenSecondData(
  c: OpsClients,
  endpointName: string,
  variant: string | undefined,
  ep: DescribeEndpointCommandOutput,
  cfg: DescribeEndpointConfigCommandOutput | undefined,
  now: number,
): Promise<Check> {
  const id = 'ten-second-data';
  if (!variant) return skip(id, 'no variant');
  // What the live endpoint does, not what its config says (bin/ops/doctor-live.ts).
  const { seconds: period, from } = livePublishing(ep, cfg);
  if (period >= 60)
    return skip(
      id,
      `the endpoint publishes every ${period} s: nothing finer to look for (the breaker works on 1-minute data: the simulator's ${SIMULATOR_DELAYS.sageMaker.noTenSecond}; as the ${from === 'default' ? "endpoint's config, without MetricsConfig, leaves it" : `${from} says`})`,
    );
  // GPU types publish GPUMemoryUtilization; Neuron (inf, trn) and CPU types do not.
  const gpu = liveVariants(ep, cfg).some(v => v.instanceTypes.some(t => metricFamily(t) === 'gpu'));
  const dims = { EndpointName: endpointName, VariantName: variant };
  const metrics = [['mem', 'MemoryUtilization'], ...(gpu ? [['gpu', 'GPUMemoryUtilization']] : [])];
  const r = await metricData(
    c,
    metrics.flatMap(([k, metric]) => [
      { id: k, metric, dims, period: 10 },
      { id: `${k}60`, metric, dims, period: 60 },
    ]),
    10,
    now - STORED_WINDOW_MS,
    now,
  );
  const stored = metrics.map(([k, metric]) => readStored(metric, r[k], r[`${k}60`], now));
  if (stored.every(x => x.resolutionS === 'none'))
    return warn(
      id,
      `no datapoints in the last 15 minutes (${stored.map(x => `${x.metric}: ${figures(x)}`).join('; ')})`,
      'send traffic or wait for instances in service, then run doctor again',
    );
  const verdicts = stored.map(x =>
    storedVerdict(
      x,
      SIMULATOR_DELAYS.sageMaker,
      'nothing to change: the breaker reads the spacing from the timestamps and works on 1-minute data; it detects in 1–2 minutes instead of ~40 s (docs/breaker.md, "Seen within seconds")',
    ),
  );
  return worst(id, verdicts, stored);
}

/**
 * One check from several metrics' verdicts: the worst result and its fix; what was seen grouped by what it
 * means, metrics with the same figures named together ('GuardPressure, GuardMemoryRefusals: 88 points, …').
 */
function worst(id: string, verdicts: Verdict[], stored: Stored[]): Check {
  const w = verdicts.reduce((a, b) => (RANK[b.result] > RANK[a.result] ? b : a));
  const saw = [...new Set(verdicts.map(v => v.means))]
    .map(m => {
      const same = verdicts.filter(v => v.means === m);
      const seen = [...new Set(same.map(v => v.seen))].map(
        f =>
          `${same
            .filter(v => v.seen === f)
            .map(v => v.metric)
            .join(', ')}: ${f}`,
      );
      return `${seen.join('; ')}: ${m}`;
    })
    .join('; ');
  const measured = Object.fromEntries(stored.map(x => [x.metric, { resolutionS: x.resolutionS, delayS: x.delayS }]));
  return { id, result: w.result, saw, ...(w.fix ? { fix: w.fix } : {}), measured };
}

/**
 * What CloudWatch stores of the container guard's metrics (lib/breaker/contract.ts GUARD_METRICS): published
 * every 10 s with StorageResolution 1 in the application namespace, dimensions exactly EndpointName and
 * VariantName, so CloudWatch should keep them at 10 s for 3 hours. Whether it does in this account, and how
 * late they are readable, are the simulator's `--no-guard-ten-second-data` and `--guard-metric-delay`
 * assumptions (UNVERIFIED): this check measures them.
 */
async function guardMetrics(
  c: OpsClients,
  endpointName: string,
  variant: string | undefined,
  namespace: string,
  fromBreaker: boolean,
  now: number,
): Promise<Check> {
  const id = 'guard-metrics';
  if (!variant) return skip(id, 'no variant');
  const dims = { EndpointName: endpointName, VariantName: variant };
  const metrics: [string, string, string][] = [
    ['gp', GUARD_METRICS.PRESSURE, 'Maximum'],
    ['gr', GUARD_METRICS.MEMORY_REFUSALS, 'Sum'],
    ['dce', GUARD_METRICS.DELIBERATE_4XX, 'Sum'],
  ];
  const r = await metricData(
    c,
    metrics.flatMap(([k, metric, stat]) => [
      { id: k, metric, dims, ns: namespace, stat, period: GUARD_METRIC_PERIOD_SECONDS },
      { id: `${k}60`, metric, dims, ns: namespace, stat, period: 60 },
    ]),
    GUARD_METRIC_PERIOD_SECONDS,
    now - STORED_WINDOW_MS,
    now,
  );
  const stored = metrics.map(([k, metric]) => readStored(metric, r[k], r[`${k}60`], now));
  const where = `${namespace} {EndpointName=${endpointName}, VariantName=${variant}}`;
  const reader = fromBreaker ? 'the breaker reads' : 'doctor looked in (no breaker found: the default)';
  if (stored.every(x => x.resolutionS === 'none')) return { ...(await noGuardMetrics(c, id, endpointName, where, namespace, reader)), measured: {} };
  const verdicts = stored.map(x =>
    storedVerdict(
      x,
      SIMULATOR_DELAYS.guard,
      "the breaker's guard path works on 1-minute data (it degrades on the guard's pressure a minute or two later); check that the container publishes with StorageResolution 1 (runtime helper GuardMetricsPublisher)",
    ),
  );
  const check = worst(id, verdicts, stored);
  return { ...check, saw: `${where}: ${check.saw}` };
}

/** The container publishes no guard metric here: where it does publish them, if anywhere, says why. */
async function noGuardMetrics(c: OpsClients, id: string, endpointName: string, where: string, namespace: string, reader: string): Promise<Check> {
  const found: { ns: string; dims: string }[] = [];
  let token: string | undefined;
  do {
    // No Namespace: every namespace; the filter matches series that have this dimension among others. ListMetrics
    // "doesn't return information about metrics if those metrics haven't reported data in the past two weeks",
    // and a new metric may take up to 15 minutes to appear (CloudWatch API reference, ListMetrics).
    const page = await c.cloudwatch.send(
      new ListMetricsCommand({ MetricName: GUARD_METRICS.PRESSURE, Dimensions: [{ Name: 'EndpointName', Value: endpointName }], NextToken: token }),
    );
    for (const m of page.Metrics ?? []) found.push({ ns: m.Namespace ?? '', dims: (m.Dimensions ?? []).map(d => `${d.Name}=${d.Value}`).join(', ') });
    token = page.NextToken;
  } while (token);
  const saw = `no ${[GUARD_METRICS.PRESSURE, GUARD_METRICS.MEMORY_REFUSALS, GUARD_METRICS.DELIBERATE_4XX].join(', ')} point in ${where} in the last 15 minutes: the container publishes nothing the breaker reads`;
  const elsewhere = [...new Set(found.filter(f => f.ns !== namespace).map(f => f.ns))];
  if (elsewhere.length)
    return warn(
      id,
      `${saw}; ${GUARD_METRICS.PRESSURE} of this endpoint exists in ${elsewhere.join(', ')}`,
      `namespace mismatch: the container publishes in ${elsewhere.join(', ')} (RESILIENT_ENDPOINT_METRICS_NAMESPACE) and ${reader} ${namespace}: deploy both from the same stack (monitoring.applicationNamespace)`,
    );
  if (found.length)
    return warn(
      id,
      `${saw}; the series exists (${found.map(f => `{${f.dims}}`).join(', ')}: data in the last two weeks), so publishing stopped`,
      `see the endpoint's log group /aws/sagemaker/Endpoints/${endpointName} for "publishing the guard's metrics failed" (it names the error), and that instances are in service`,
    );
  return warn(
    id,
    saw,
    `likely: no network route to CloudWatch (a VPC without a NAT or a monitoring VPC endpoint), no cloudwatch:PutMetricData for ${namespace} on the endpoint role, a namespace mismatch (a series new in the last 15 minutes may not be listed yet), or no guard running (none before the model code creates it, e.g. no traffic yet where it is created on the first request; "memory guard off" in the log when the container budget or the memory curve is missing). The endpoint's log group /aws/sagemaker/Endpoints/${endpointName} says "publishing the guard's metrics failed (<error>)" when it tried`,
  );
}

async function series(c: OpsClients, endpointName: string, variant: string | undefined, gpus: number, perGpu: boolean): Promise<Check[]> {
  const list = async (metric: string) => {
    const out: { Name?: string; Value?: string }[][] = [];
    let token: string | undefined;
    do {
      const page = await c.cloudwatch.send(
        new ListMetricsCommand({ Namespace: NS, MetricName: metric, Dimensions: [{ Name: 'EndpointName', Value: endpointName }], NextToken: token }),
      );
      for (const m of page.Metrics ?? []) out.push(m.Dimensions ?? []);
      token = page.NextToken;
    } while (token);
    return out;
  };
  const names = (d: { Name?: string }[]) => d.map(x => x.Name!).sort();
  const checks: Check[] = [];
  const mem = await list('MemoryUtilization');
  const variantLevel = mem.some(d => names(d).join() === 'EndpointName,VariantName' && d.some(x => x.Name === 'VariantName' && x.Value === variant));
  checks.push(
    variantLevel
      ? pass('variant-series', `MemoryUtilization {EndpointName, VariantName=${variant}} exists (what the alarms and the breaker read)`)
      : mem.length === 0
        ? warn(
            'variant-series',
            'no MemoryUtilization series for this endpoint yet',
            'wait for instances in service (series appear with the first datapoint)',
          )
        : fail(
            'variant-series',
            `MemoryUtilization exists only as ${[...new Set(mem.map(d => `{${names(d).join(', ')}}`))].join(', ')}, not per variant`,
            'the memory alarms and the breaker read {EndpointName, VariantName}: report this; meanwhile the alarms cannot fire',
          ),
  );
  if (gpus > 0 && perGpu) {
    const gpu = await list('GPUMemoryUtilization');
    const sets = [...new Set(gpu.map(d => names(d).join(', ')))];
    const exact = sets.includes(PER_GPU_DIMENSIONS.join(', '));
    checks.push(
      exact
        ? pass('per-gpu-series', `GPUMemoryUtilization {${PER_GPU_DIMENSIONS.join(', ')}} exists (the breaker's per-GPU query)`)
        : warn(
            'per-gpu-series',
            gpu.length
              ? `GPUMemoryUtilization dimension sets: ${sets.map(x => `{${x}}`).join(', ')}; none is {${PER_GPU_DIMENSIONS.join(', ')}}`
              : 'no GPUMemoryUtilization series yet',
            'the per-GPU query finds nothing and the breaker judges the mean GPU (sum ÷ GPUs) — it still works, but a single hot GPU is seen later; report the dimension set you see',
          ),
    );
  }
  return checks;
}

function windowSeconds(a: MetricAlarm): number {
  const period = a.Period ?? Math.max(60, ...(a.Metrics ?? []).map(m => m.MetricStat?.Period ?? m.Period ?? 60));
  return period * (a.EvaluationPeriods ?? 1);
}

/** Why DescribeAlarms may return no composite alarm though one exists (real-account.md item 45). */
export const COMPOSITE_PERMISSION =
  'CloudWatch returns composite alarms only to callers allowed cloudwatch:DescribeAlarms on "*": a policy limited to alarm ARNs sees none';

async function alarms(c: OpsClients, endpointName: string, now: number): Promise<Check[]> {
  const metric: MetricAlarm[] = [];
  const composites: CompositeAlarm[] = [];
  let token: string | undefined;
  do {
    const page = await c.cloudwatch.send(
      new DescribeAlarmsCommand({ AlarmNamePrefix: `${endpointName}-`, AlarmTypes: ['MetricAlarm', 'CompositeAlarm'], NextToken: token }),
    );
    metric.push(...(page.MetricAlarms ?? []));
    composites.push(...(page.CompositeAlarms ?? []));
    token = page.NextToken;
  } while (token);
  const composite = composites.length;
  if (metric.length === 0) return [fail('alarms', `no alarm named ${endpointName}-…`, 'deploy the stack with monitoring (on by default)')];
  const checks: Check[] = [];
  const stuck = metric.filter(
    a => a.StateValue === 'INSUFFICIENT_DATA' && a.StateUpdatedTimestamp && now - a.StateUpdatedTimestamp.getTime() > windowSeconds(a) * 1000,
  );
  const firing = metric.filter(a => a.StateValue === 'ALARM').map(a => a.AlarmName);
  checks.push(
    composite === 0
      ? warn(
          'alarms',
          `${metric.length} metric alarms and no composite alarm named ${endpointName}-…${stuck.length ? `; ${stuck.length} in INSUFFICIENT_DATA past their evaluation window: ${stuck.map(a => a.AlarmName).join(', ')}` : ''}`,
          `the default monitoring has one (${endpointName}-unhealthy) and it is the alarm that pages: ${COMPOSITE_PERMISSION}; allow it, or redeploy with monitoring`,
        )
      : stuck.length
        ? warn(
            'alarms',
            `${metric.length} metric + ${composite} composite alarms; ${stuck.length} in INSUFFICIENT_DATA past their evaluation window: ${stuck.map(a => a.AlarmName).join(', ')}`,
            'their metric has no data: check the series (variant-series, per-gpu-series) and that the container publishes its stage metrics',
          )
        : pass(
            'alarms',
            `${metric.length} metric + ${composite} composite alarms${firing.length ? `; in ALARM: ${firing.join(', ')}` : ', none stuck without data'}`,
          ),
  );
  // Who is paged: in the default monitoring only the composite alarm carries the topic (item 46).
  const topics = [
    ...new Set(
      [...metric, ...composites]
        .flatMap(a => [...(a.AlarmActions ?? []), ...(a.OKActions ?? [])])
        .filter(x => x.startsWith('arn:') && x.includes(':sns:')),
    ),
  ];
  if (topics.length === 0) {
    checks.push(
      fail(
        'alarm-subscribers',
        `no alarm notifies an SNS topic (${metric.length} metric, ${composite} composite alarms read)`,
        composite === 0
          ? `${COMPOSITE_PERMISSION}: allow it and run doctor again; otherwise set monitoring.notify (emails or subscriptions), or an alarmTopic`
          : 'set monitoring.notify (emails or subscriptions), or an alarmTopic',
      ),
    );
    return checks;
  }
  for (const topic of topics) {
    const subs: string[] = [];
    let next: string | undefined;
    try {
      do {
        const page = await c.sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topic, NextToken: next }));
        subs.push(...(page.Subscriptions ?? []).map(x => x.SubscriptionArn ?? ''));
        next = page.NextToken;
      } while (next);
    } catch (e) {
      // The alarms were read: only who is paged is unknown. SNS denies with AuthorizationErrorException (item 45).
      if (isAccessDenied(e)) checks.push(skip('alarm-subscribers', `no permission: ${(e as Error).message}`));
      else checks.push(warn('alarm-subscribers', `could not check: ${errorName(e)}: ${(e as Error).message}`, fixFor(e)));
      continue;
    }
    const confirmed = subs.filter(x => x.startsWith('arn:'));
    const pending = subs.filter(x => x === 'PendingConfirmation').length;
    checks.push(
      confirmed.length
        ? pass(
            'alarm-subscribers',
            `${topic.split(':').pop()}: ${confirmed.length} confirmed subscription(s)${pending ? `, ${pending} pending` : ''}`,
          )
        : fail(
            'alarm-subscribers',
            `${topic.split(':').pop()}: ${pending ? `${pending} subscription(s), none confirmed` : 'no subscription'}: an alarm reaches no one`,
            pending
              ? 'confirm the subscription (SNS sent each address a confirmation e-mail)'
              : 'set monitoring.notify, or subscribe someone to the topic',
          ),
    );
  }
  return checks;
}

async function breakerRuns(c: OpsClients, functionName: string, now: number): Promise<Check> {
  const dims = { FunctionName: functionName };
  const r = await metricData(
    c,
    [
      { id: 'inv', ns: 'AWS/Lambda', metric: 'Invocations', dims, stat: 'Sum' },
      { id: 'err', ns: 'AWS/Lambda', metric: 'Errors', dims, stat: 'Sum' },
    ],
    60,
    now - 10 * 60_000,
    now,
  );
  const sum = (k: string) => (r[k]?.v ?? []).reduce((x, y) => x + y, 0);
  const inv = sum('inv');
  const err = sum('err');
  if (inv === 0)
    return fail(
      'breaker-runs',
      'no invocation in the last 10 minutes (it runs every minute)',
      'check that its schedule rule is enabled (breaker-rules) and the function logs',
    );
  if (err > 0)
    return warn(
      'breaker-runs',
      `${inv} invocations, ${err} errors in the last 10 minutes`,
      "see the function's log group; failed events go to its dead-letter queue",
    );
  return pass('breaker-runs', `${inv} invocations, no errors in the last 10 minutes`);
}

async function breakerRules(c: OpsClients, functionArn: string): Promise<Check> {
  const names: string[] = [];
  let token: string | undefined;
  do {
    const page = await c.events.send(new ListRuleNamesByTargetCommand({ TargetArn: functionArn, NextToken: token }));
    names.push(...(page.RuleNames ?? []));
    token = page.NextToken;
  } while (token);
  if (names.length === 0) return fail('breaker-rules', 'no EventBridge rule targets the function', 'redeploy the stack');
  const states = await Promise.all(names.map(async n => [n, (await c.events.send(new DescribeRuleCommand({ Name: n }))).State] as const));
  const off = states.filter(([, st]) => st !== 'ENABLED');
  return off.length
    ? fail('breaker-rules', `disabled: ${off.map(([n, st]) => `${n} (${st})`).join(', ')}`, 'enable them (aws events enable-rule --name …)')
    : pass('breaker-rules', `${names.length} rules enabled (schedule, alarms, endpoint events)`);
}

async function scalableTargets(c: OpsClients, endpointName: string, s: NonNullable<FoundBreaker['settings']>): Promise<Check[]> {
  const wanted = [
    [s.primaryVariant, s.primaryCapacity],
    [s.fallbackVariant, s.fallbackCapacity],
  ].filter((x): x is [string, { min: number; max: number; qpsPerInstance: number }] => !!x[0] && !!x[1]);
  if (wanted.length === 0) return [skip('scalable-targets', 'the breaker holds no capacity (no autoscaling)')];
  const out = await c.autoscaling.send(
    new DescribeScalableTargetsCommand({ ServiceNamespace: 'sagemaker', ResourceIds: wanted.map(([v]) => `endpoint/${endpointName}/variant/${v}`) }),
  );
  const checks: Check[] = [];
  for (const [v, cap] of wanted) {
    const t = (out.ScalableTargets ?? []).find(x => x.ResourceId === `endpoint/${endpointName}/variant/${v}`);
    if (!t) {
      checks.push(fail('scalable-targets', `${v}: no scalable target`, 'redeploy the stack (autoScaling)'));
      continue;
    }
    const bounds = `${v}: ${t.MinCapacity}–${t.MaxCapacity}`;
    let tagged: boolean | undefined;
    if (t.ScalableTargetARN) {
      const tags = await c.autoscaling.send(new ListTagsForResourceCommand({ ResourceARN: t.ScalableTargetARN }));
      tagged = Object.keys(tags.Tags ?? {}).includes(BREAKER_TAG);
    }
    if (t.MaxCapacity !== cap.max || t.MinCapacity! < cap.min)
      checks.push(
        warn(
          'scalable-targets',
          `${bounds}, the breaker expects ${cap.min}–${cap.max}`,
          'redeploy, or see whether someone changed the target by hand',
        ),
      );
    else if (tagged === false)
      checks.push(
        warn(
          'scalable-targets',
          `${bounds}, without the ${BREAKER_TAG} tag`,
          'the breaker is granted RegisterScalableTarget by that tag: redeploy (or circuitBreaker.tagScalableTargets: false)',
        ),
      );
    else checks.push(pass('scalable-targets', `${bounds}${tagged ? ', tagged for the breaker' : ''}`));
  }
  return checks;
}

async function captureObjects(
  c: OpsClients,
  endpointName: string,
  variant: string | undefined,
  dc: Capture | undefined,
  now: number,
): Promise<Check> {
  const id = 'capture-objects';
  if (!dc || !dc.destination || !variant) return skip(id, 'data capture off');
  if (dc.live?.status === 'Stopped') return skip(id, 'data capture stopped (see data-capture)');
  const r = await metricData(
    c,
    [{ id: 'inv', ns: 'AWS/SageMaker', metric: 'Invocations', dims: { EndpointName: endpointName, VariantName: variant }, stat: 'Sum' }],
    3600,
    now - 3600_000,
    now,
  );
  const invocations = (r.inv?.v ?? []).reduce((x, y) => x + y, 0);
  const expected = (invocations * dc.percent) / 100;
  if (expected < 1) return skip(id, `${invocations} invocations in the last hour × ${dc.percent} %: too few to expect a captured request`);
  // SageMaker writes s3://<destination>/<endpoint>/<variant>/yyyy/mm/dd/hh/<file>.jsonl (developer guide, model-monitor-data-capture).
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(dc.destination);
  if (!m) return warn(id, `destination ${dc.destination} is not an s3:// URI`, 'fix dataCapture.destination');
  const prefix = (m[2] ? `${m[2].replace(/\/$/, '')}/` : '') + `${endpointName}/${variant}/`;
  for (const h of [0, 1]) {
    const d = new Date(now - h * 3600_000);
    const p = `${prefix}${d.getUTCFullYear()}/${String(d.getUTCMonth() + 1).padStart(2, '0')}/${String(d.getUTCDate()).padStart(2, '0')}/${String(d.getUTCHours()).padStart(2, '0')}/`;
    const out = await c.s3.send(new ListObjectsV2Command({ Bucket: m[1], Prefix: p, MaxKeys: 5 }));
    if ((out.KeyCount ?? out.Contents?.length ?? 0) > 0) return pass(id, `captured requests under s3://${m[1]}/${p}`);
  }
  return warn(
    id,
    `${invocations} invocations in the last hour (~${Math.round(expected)} to capture) but nothing under s3://${m[1]}/${prefix}…`,
    "check the endpoint role's s3:PutObject on the bucket and its KMS key",
  );
}

async function ssmThroughput(c: OpsClients, ep: DescribeEndpointCommandOutput): Promise<Check> {
  const instances = (ep.ProductionVariants ?? []).reduce((x, v) => x + (v.CurrentInstanceCount ?? 0), 0);
  const rate = 0.1 * instances; // one reader per instance, every 10 s (runtime helper)
  const out = await c.ssm.send(new GetServiceSettingCommand({ SettingId: '/ssm/parameter-store/high-throughput-enabled' }));
  const high = out.ServiceSetting?.SettingValue === 'true';
  const saw = `this endpoint's containers: ~${rate.toFixed(1)} GetParameter/s (${instances} instances × 0.1); higher throughput ${high ? 'on (up to 3,000 TPS)' : `off (${SSM_DEFAULT_TPS} TPS per account and Region, shared)`}`;
  if (!high && rate > SSM_DEFAULT_TPS / 4)
    return warn(
      'parameter-store-throughput',
      saw,
      'turn on the higher-throughput setting (aws ssm update-service-setting --setting-id /ssm/parameter-store/high-throughput-enabled --setting-value true)',
    );
  return pass('parameter-store-throughput', `${saw}; add your other endpoints' and applications' calls`);
}

/** The report as a table: check, result, what it saw, the fix. */
export function formatReport(r: DoctorReport): string {
  const rows = r.checks.map(x => `| ${x.id} | ${x.result} | ${x.saw.replace(/\|/g, '\\|')} | ${(x.fix ?? '').replace(/\|/g, '\\|')} |`);
  const count = (k: CheckResult) => r.checks.filter(x => x.result === k).length;
  return [
    `doctor: ${r.endpointName} at ${r.checkedAt}`,
    '',
    '| check | result | saw | fix |',
    '|---|---|---|---|',
    ...rows,
    '',
    `${count('PASS')} PASS, ${count('WARN')} WARN, ${count('FAIL')} FAIL, ${count('SKIP')} SKIP: ${r.ok ? 'nothing failed' : 'FAILED'}`,
  ].join('\n');
}
