/**
 * What the breaker reads from CloudWatch: one batched GetMetricData per endpoint (or per fleet), the
 * per-GPU Metrics Insights query, and the pure parsing of the results into the policy's readings.
 */
import { GetMetricDataCommand, MetricDataQuery, MetricDataResult } from '@aws-sdk/client-cloudwatch';
import { perGpuQuery } from '../../lib/breaker/contract';
import { MemoryPoint, Readings } from '../../lib/breaker/policy';
import { Clients, HandlerSettings } from './settings';
import { log } from './telemetry';

/** What one evaluation reads from CloudWatch, parsed. */
export type MetricReadings = Readings;

/** The GetMetricData range for an endpoint: memory at its period, the error window on minute boundaries. */
export function metricWindow(s: HandlerSettings, now: number) {
  const P = s.metricPeriodSeconds;
  const align = P >= 60 ? 60_000 : P * 1000;
  const end = Math.floor(now / align) * align;
  const start = Math.floor((end - Math.max(15 * 60, s.errorWindowSeconds) * 1000) / 60_000) * 60_000;
  return { start, end };
}

/**
 * The queries for one endpoint, their ids prefixed (so a fleet's endpoints share one call). Memory
 * at the endpoint's publishing period, and at 60 s in case finer data is not stored (the newest
 * usable series wins); the 5XX rate as the sum of the 1-minute buckets inside the error window
 * [end − window, end): exactly the window the error-rate alarm judges. (One bucket of the window's
 * length would not do: GetMetricData aligns buckets to StartTime, so the newest bucket of a longer
 * range covers only part of the window.)
 */
export function metricQueries(s: HandlerSettings, prefix: string): MetricDataQuery[] {
  const dims = (variant: string) => [
    { Name: 'EndpointName', Value: s.endpointName },
    { Name: 'VariantName', Value: variant },
  ];
  const q = (id: string, Namespace: string, MetricName: string, Stat: string, Period: number): MetricDataQuery => ({
    Id: prefix + id,
    MetricStat: { Metric: { Namespace, MetricName, Dimensions: dims(s.primaryVariant) }, Period, Stat },
  });
  const P = s.metricPeriodSeconds;
  return [
    q('mem', '/aws/sagemaker/Endpoints', 'MemoryUtilization', 'Maximum', P),
    ...(s.gpuCount > 0 ? [q('gpu', '/aws/sagemaker/Endpoints', 'GPUMemoryUtilization', 'Maximum', P)] : []),
    ...(P < 60 ? [q('mem60', '/aws/sagemaker/Endpoints', 'MemoryUtilization', 'Maximum', 60)] : []),
    ...(P < 60 && s.gpuCount > 0 ? [q('gpu60', '/aws/sagemaker/Endpoints', 'GPUMemoryUtilization', 'Maximum', 60)] : []),
    q('err', 'AWS/SageMaker', 'Invocation5XXErrors', 'Sum', 60),
    q('inv', 'AWS/SageMaker', 'Invocations', 'Sum', 60),
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
  // by the GPU count (the mean GPU), and the per-GPU maximum when enhanced metrics publish it (Metrics
  // Insights: 1-minute points, merged at their minute's timestamp).
  const merge = (host: MemoryPoint[], gpuSum: MemoryPoint[]): MemoryPoint[] => {
    const byTime = new Map<number, number>();
    const bump = (t: number, v: number) => byTime.set(t, Math.max(byTime.get(t) ?? 0, v));
    for (const p of host) bump(p.t, p.v);
    for (const p of gpuSum) bump(p.t, p.v / Math.max(1, s.gpuCount));
    for (const p of perGpu) bump(p.t, p.v);
    return [...byTime.entries()].sort((a, b) => a[0] - b[0]).map(([t, v]) => ({ t, v }));
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
  // SageMaker emits Invocation5XXErrors (0 or 1) with every request, so no error data with requests means none.
  const errors = windowSum('err') ?? (invocations !== undefined ? 0 : undefined);
  return { memory, minuteMemory: fine ? minute : undefined, maxSpacingSeconds: Math.max(60, s.metricPeriodSeconds), errors, invocations };
}

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
