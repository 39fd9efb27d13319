/**
 * What the breaker reads from CloudWatch: one batched GetMetricData per endpoint (or per fleet), the
 * per-GPU Metrics Insights query, and the pure parsing of the results into the policy's readings.
 */
import { GetMetricDataCommand, MetricDataQuery, MetricDataResult } from '@aws-sdk/client-cloudwatch';
import { GUARD_METRIC_PERIOD_SECONDS, GUARD_METRICS, perGpuQuery } from '../../lib/breaker/contract';
import { MemoryPoint, Readings } from '../../lib/breaker/policy';
import { Clients, DEFAULT_APPLICATION_NAMESPACE, HandlerSettings } from './settings';
import { log } from './telemetry';

/** What one evaluation reads from CloudWatch, parsed. */
export type MetricReadings = Readings;

/**
 * The GetMetricData range for an endpoint: from a minute boundary (the error window's whole minutes)
 * to the last 10-s boundary, whatever the endpoint's period: the container's guard metrics come every
 * 10 s, and a range ending on the minute would hide up to a minute of the refusals that triggered the
 * evaluation. (A 1-minute datapoint carries its minute's start as timestamp, so an end inside a minute
 * loses none of them.)
 */
export function metricWindow(s: HandlerSettings, now: number) {
  const align = GUARD_METRIC_PERIOD_SECONDS * 1000;
  const end = Math.floor(now / align) * align;
  const start = Math.floor((end - Math.max(15 * 60, s.errorWindowSeconds) * 1000) / 60_000) * 60_000;
  return { start, end };
}

/**
 * The queries for one endpoint, their ids prefixed (so a fleet's endpoints share one call). Memory
 * at the endpoint's publishing period, and at 60 s in case finer data is not stored (the newest
 * usable series wins); the errors as sums of the 1-minute buckets inside the error window
 * [end − window, end): exactly the window the error-rate alarm judges. (One bucket of the window's
 * length would not do: GetMetricData aligns buckets to StartTime, so the newest bucket of a longer
 * range covers only part of the window.) The errors are `InvocationModelErrors` (every answer that
 * was not a 2XX: 4XX, 5XX, socket errors, malformed responses, timeouts) less the 4XX the container
 * chose (`DeliberateClientErrors`; where it publishes none, `Invocation4XXErrors`): a worker killed
 * for memory reaches the client as a 5XX, a 4XX (TorchServe's 507 or 413) or a broken connection, and
 * only the container knows which 4XX it meant (real-account.md items 38, 48). And the container guard's
 * pressure and memory refusals, at their 10 s (lib/breaker/contract.ts GUARD_METRICS).
 */
export function metricQueries(s: HandlerSettings, prefix: string): MetricDataQuery[] {
  const dims = (variant: string) => [
    { Name: 'EndpointName', Value: s.endpointName },
    { Name: 'VariantName', Value: variant },
  ];
  const app = s.applicationNamespace ?? DEFAULT_APPLICATION_NAMESPACE;
  const G = GUARD_METRIC_PERIOD_SECONDS;
  const q = (id: string, Namespace: string, MetricName: string, Stat: string, Period: number, variant = s.primaryVariant): MetricDataQuery => ({
    Id: prefix + id,
    MetricStat: { Metric: { Namespace, MetricName, Dimensions: dims(variant) }, Period, Stat },
  });
  const P = s.metricPeriodSeconds;
  return [
    q('mem', '/aws/sagemaker/Endpoints', 'MemoryUtilization', 'Maximum', P),
    ...(s.gpuCount > 0 ? [q('gpu', '/aws/sagemaker/Endpoints', 'GPUMemoryUtilization', 'Maximum', P)] : []),
    ...(P < 60 ? [q('mem60', '/aws/sagemaker/Endpoints', 'MemoryUtilization', 'Maximum', 60)] : []),
    ...(P < 60 && s.gpuCount > 0 ? [q('gpu60', '/aws/sagemaker/Endpoints', 'GPUMemoryUtilization', 'Maximum', 60)] : []),
    q('merr', 'AWS/SageMaker', 'InvocationModelErrors', 'Sum', 60),
    q('e4', 'AWS/SageMaker', 'Invocation4XXErrors', 'Sum', 60),
    q('dce', app, GUARD_METRICS.DELIBERATE_4XX, 'Sum', 60),
    q('inv', 'AWS/SageMaker', 'Invocations', 'Sum', 60),
    // The fallback's requests too: the endpoint's traffic, which a weight shift does not change (a failed probe is remembered with it).
    ...(s.fallbackVariant ? [q('invf', 'AWS/SageMaker', 'Invocations', 'Sum', 60, s.fallbackVariant)] : []),
    q('gp', app, GUARD_METRICS.PRESSURE, 'Maximum', G),
    q('gr', app, GUARD_METRICS.MEMORY_REFUSALS, 'Sum', G),
  ];
}

/**
 * The hottest single GPU of any instance (enhanced metrics' AcceleratorId dimension), in a call of
 * its own: a Metrics Insights query that CloudWatch rejected must not cost the breaker its other data.
 */
export async function perGpuSeries(s: HandlerSettings, c: Clients, now: number, calls: string[]): Promise<MemoryPoint[]> {
  if (!(s.perGpuMetrics && s.gpuCount > 1)) return [];
  const { start, end } = metricWindow(s, now);
  calls.push('cloudwatch:GetMetricData');
  try {
    const g = await c.cloudwatch.send(
      new GetMetricDataCommand({
        // Metrics Insights aggregates at one minute whatever the period asked (real-account.md item 24).
        MetricDataQueries: [{ Id: 'gpudev', Expression: perGpuQuery(s.endpointName, s.primaryVariant), Period: 60 }],
        StartTime: new Date(start),
        EndTime: new Date(end),
        ScanBy: 'TimestampAscending',
      }),
    );
    return points(g.MetricDataResults?.[0]);
  } catch (e: any) {
    log({ level: 'warn', endpoint: s.endpointName, message: `per-GPU query failed (${e?.name}): judging the mean GPU only` });
    return [];
  }
}

function points(r: MetricDataResult | undefined): MemoryPoint[] {
  return (r?.Timestamps ?? []).map((t, i) => ({ t: new Date(t).getTime(), v: r!.Values![i] })).filter(p => Number.isFinite(p.v));
}

/** Pure: one endpoint's readings from GetMetricData results (ids with `prefix`). */
export function parseReadings(s: HandlerSettings, results: MetricDataResult[], prefix: string, perGpu: MemoryPoint[], now: number): MetricReadings {
  const series = (id: string) => points(results.find(x => x.Id === prefix + id));
  const minuteEnd = Math.floor(now / 60_000) * 60_000;
  const windowStart = minuteEnd - s.errorWindowSeconds * 1000;
  // Memory judged on the hottest instance and its hottest GPU: host %, the summed GPU metric divided
  // by the GPU count (the mean GPU), and the per-GPU maximum when enhanced metrics publish it.
  const merge = (host: MemoryPoint[], gpuSum: MemoryPoint[]): MemoryPoint[] => {
    const byTime = new Map<number, number>();
    const bump = (t: number, v: number) => byTime.set(t, Math.max(byTime.get(t) ?? 0, v));
    for (const p of host) bump(p.t, p.v);
    for (const p of gpuSum) bump(p.t, p.v / Math.max(1, s.gpuCount));
    return withHottestGpu(
      [...byTime.entries()].sort((a, b) => a[0] - b[0]).map(([t, v]) => ({ t, v })),
      perGpu,
    );
  };
  // The series at the publishing period when it has data, else the 1-minute one. (Its points may still be a
  // minute apart, if CloudWatch keeps only 1-minute data: the policy takes the spacing from the timestamps.)
  // Below 60 s the 1-minute maxima come too: they cover a point lost from the fine series.
  const fine = series('mem').length > 0;
  const minute = s.metricPeriodSeconds < 60 ? merge(series('mem60'), series('gpu60')) : undefined;
  const memory = fine ? merge(series('mem'), series('gpu')) : (minute ?? []);
  const windowSum = (id: string): number | undefined => {
    const pts = series(id).filter(p => p.t >= windowStart && p.t < minuteEnd);
    return pts.length ? pts.reduce((a, p) => a + p.v, 0) : undefined;
  };
  const invocations = windowSum('inv');
  // What the container did not choose: model errors less its deliberate 4XX (where it publishes none,
  // less every 4XX), clamped at 0. SageMaker emits InvocationModelErrors (0 or 1) with every request, so
  // no error data with requests means none.
  const modelErrors = windowSum('merr');
  const chosen = windowSum('dce') ?? windowSum('e4') ?? 0;
  const errors = modelErrors !== undefined ? Math.max(0, modelErrors - chosen) : invocations !== undefined ? 0 : undefined;
  const guard = (id: string) => {
    const pts = series(id);
    return pts.length ? pts : undefined;
  };
  // Requests per minute: the primary's (what its guard's refusals are a share of) and the endpoint's (every variant).
  const perMinute = series('inv');
  const byMinute = new Map<number, number>();
  for (const p of [...perMinute, ...series('invf')]) byMinute.set(p.t, (byMinute.get(p.t) ?? 0) + p.v);
  return {
    memory,
    minuteMemory: fine ? minute : undefined,
    invocationsPerMinute: perMinute.length ? perMinute : undefined,
    endpointInvocationsPerMinute: byMinute.size ? [...byMinute.entries()].sort((a, b) => a[0] - b[0]).map(([t, v]) => ({ t, v })) : undefined,
    maxSpacingSeconds: Math.max(60, s.metricPeriodSeconds),
    errors,
    invocations,
    guardPressure: guard('gp'),
    guardRefusals: guard('gr'),
  };
}

/**
 * The hottest GPU weighs on every point of its minute (real-account.md item 39): the per-GPU series
 * (Metrics Insights) has one point a minute, at the minute's start, while memory may come every 10 s.
 * Each memory point takes the maximum of its own minute's per-GPU point or, until that arrives (1-minute
 * data is 1–2 minutes later than 10-s data), of the newest earlier one still within
 * {@link HOTTEST_GPU_CARRY_SECONDS} of it: so the evaluation sees the hot GPU whatever second of the
 * minute it runs at, and a per-GPU point never lasts beyond its successor. Per-GPU points newer than
 * every memory point (or with no memory data at all) are points of their own.
 */
export function withHottestGpu(memory: MemoryPoint[], perGpu: MemoryPoint[]): MemoryPoint[] {
  if (!perGpu.length) return memory;
  const gpu = [...perGpu].sort((a, b) => a.t - b.t);
  let k = -1;
  const out = memory.map(p => {
    while (k + 1 < gpu.length && gpu[k + 1].t <= p.t) k++;
    const g = k >= 0 && p.t - gpu[k].t < HOTTEST_GPU_CARRY_SECONDS * 1000 ? gpu[k].v : -Infinity;
    return { t: p.t, v: Math.max(p.v, g) };
  });
  const newest = out.length ? out[out.length - 1].t : -Infinity;
  return [...out, ...gpu.filter(g => g.t > newest)];
}

/**
 * How long a per-GPU minute maximum weighs on the memory points after its minute's start (s): its own
 * minute and the two after it, the time 1-minute data can arrive later than 10-s data (60–120 s:
 * scaling-dynamics.md §2), unless a newer per-GPU point replaces it.
 */
export const HOTTEST_GPU_CARRY_SECONDS = 180;

export async function readMetrics(s: HandlerSettings, c: Clients, now: number, calls: string[]): Promise<MetricReadings> {
  const { start, end } = metricWindow(s, now);
  calls.push('cloudwatch:GetMetricData');
  const out = await c.cloudwatch.send(
    new GetMetricDataCommand({
      MetricDataQueries: metricQueries(s, ''),
      StartTime: new Date(start),
      EndTime: new Date(end),
      ScanBy: 'TimestampAscending',
    }),
  );
  return parseReadings(s, out.MetricDataResults ?? [], '', await perGpuSeries(s, c, now, calls), now);
}
