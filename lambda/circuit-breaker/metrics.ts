/**
 * What the breaker reads from CloudWatch: one batched GetMetricData per endpoint (or per fleet), the
 * per-GPU Metrics Insights query, and the pure parsing of the results into the policy's readings.
 */
import { GetMetricDataCommand, MetricDataQuery, MetricDataResult } from '@aws-sdk/client-cloudwatch';
import { MemoryPoint, Readings } from '../../lib/breaker/policy';
import { Clients, HandlerSettings } from './settings';
import { log } from './telemetry';

/** What one evaluation reads from CloudWatch, parsed (readings plus the newest minute's traffic). */
export type MetricReadings = Readings & { newestMinuteInvocations?: number };

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
    q('err', 'AWS/SageMaker', 'Invocation5XXErrors', 'Sum', 60),
    q('inv', 'AWS/SageMaker', 'Invocations', 'Sum', 60),
    // The fallback's share of the endpoint's traffic, for the load per primary instance.
    ...(s.fallbackVariant ? [q('finv', 'AWS/SageMaker', 'Invocations', 'Sum', 60, s.fallbackVariant)] : []),
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
        MetricDataQueries: [{ Id: 'gpudev', Expression: perGpuQuery(s.endpointName, s.primaryVariant), Period: s.metricPeriodSeconds }],
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
  // The finest series that has data: 10-s data when it is stored, else 1-minute data.
  const fine = series('mem').length > 0;
  const period = fine ? s.metricPeriodSeconds : 60;
  const host = fine ? series('mem') : series('mem60');
  const gpuSum = fine ? series('gpu') : series('gpu60');
  // Memory judged on the hottest instance and its hottest GPU: host %, the summed GPU metric divided
  // by the GPU count (the mean GPU), and the per-GPU maximum when enhanced metrics publish it.
  const byTime = new Map<number, number>();
  const bump = (t: number, v: number) => byTime.set(t, Math.max(byTime.get(t) ?? 0, v));
  for (const p of host) bump(p.t, p.v);
  for (const p of gpuSum) bump(p.t, p.v / Math.max(1, s.gpuCount));
  if (fine) for (const p of perGpu) bump(p.t, p.v);
  const memory = [...byTime.entries()].sort((a, b) => a[0] - b[0]).map(([t, v]) => ({ t, v }));
  const windowSum = (id: string): number | undefined => {
    const pts = series(id).filter(p => p.t >= windowStart && p.t < minuteEnd);
    return pts.length ? pts.reduce((a, p) => a + p.v, 0) : undefined;
  };
  const invocations = windowSum('inv');
  // SageMaker emits Invocation5XXErrors (0 or 1) with every request, so no error data with requests means none.
  const errors = windowSum('err') ?? (invocations !== undefined ? 0 : undefined);
  // The newest complete minute of the endpoint's traffic (primary + fallback).
  const newest = series('inv')
    .filter(p => p.t < minuteEnd)
    .at(-1);
  const fallbackSameMinute = newest ? (series('finv').find(p => p.t === newest.t)?.v ?? 0) : 0;
  return { memory, periodSeconds: period, errors, invocations, newestMinuteInvocations: newest ? newest.v + fallbackSameMinute : undefined };
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

/**
 * CloudWatch Metrics Insights query for the hottest GPU of any instance of a variant: enhanced
 * metrics publish `GPUMemoryUtilization` per GPU with the `AcceleratorId` (and `InstanceId`)
 * dimension (SageMaker developer guide, monitoring-cloudwatch-enhanced-metrics). The dimension set
 * is inferred from that page: if it differs, the query returns nothing and the mean GPU (summed
 * metric ÷ GPUs) still counts — being wrong makes the breaker no worse than without it.
 */
export function perGpuQuery(endpointName: string, variantName: string): string {
  const quote = (x: string) => x.replace(/'/g, "''");
  return `SELECT MAX(GPUMemoryUtilization) FROM SCHEMA("/aws/sagemaker/Endpoints", AcceleratorId, EndpointName, InstanceId, VariantName) WHERE EndpointName = '${quote(endpointName)}' AND VariantName = '${quote(variantName)}'`;
}
