/**
 * `doctor`'s drift check: did the drift function run and publish in its last window? Every run publishes
 * `DriftRecords` (0 included), so a missing point means the run did not happen or failed before
 * publishing. Kept apart from doctor.ts (one line there calls it).
 */
import { GetMetricDataCommand, ListMetricsCommand } from '@aws-sdk/client-cloudwatch';
import { DRIFT_METRICS, DRIFT_NAMESPACE } from '../../lib/drift/contract';
import { OpsClients } from './aws';

/** A doctor check, as doctor.ts reports it. */
export interface DriftCheck {
  readonly id: string;
  readonly result: 'PASS' | 'WARN' | 'FAIL' | 'SKIP';
  readonly saw: string;
  readonly fix?: string;
}

const HOUR = 3_600_000;
/** How far back each run's point is looked for: its schedule's period plus a few hours of slack (runs start at 03:00 UTC). */
export const DRIFT_RUN_WINDOWS = { kl: 26 * HOUR, wasserstein: (7 * 24 + 2) * HOUR } as const;

/** The drift runs of an endpoint: SKIP without drift metrics, FAIL when a run is missing, WARN when it read nothing. */
export async function driftRuns(c: OpsClients, endpointName: string, now: number): Promise<DriftCheck[]> {
  const listed = await c.cloudwatch.send(
    new ListMetricsCommand({
      Namespace: DRIFT_NAMESPACE,
      MetricName: DRIFT_METRICS.RECORDS,
      Dimensions: [{ Name: 'EndpointName', Value: endpointName }],
    }),
  );
  if (!(listed?.Metrics ?? []).length) {
    return [
      {
        id: 'drift-runs',
        result: 'SKIP',
        saw: 'no drift metrics for this endpoint in the last two weeks (drift off, or deployed less than a day ago)',
      },
    ];
  }
  const out = await c.cloudwatch.send(
    new GetMetricDataCommand({
      StartTime: new Date(now - DRIFT_RUN_WINDOWS.wasserstein),
      EndTime: new Date(now),
      MetricDataQueries: (['kl', 'wasserstein'] as const).map(d => ({
        Id: d,
        MetricStat: {
          Metric: {
            Namespace: DRIFT_NAMESPACE,
            MetricName: DRIFT_METRICS.RECORDS,
            Dimensions: [
              { Name: 'EndpointName', Value: endpointName },
              { Name: 'Distance', Value: d },
            ],
          },
          Period: 3600,
          Stat: 'Sum',
        },
      })),
    }),
  );
  const results = new Map((out.MetricDataResults ?? []).map(r => [r.Id, r]));
  return (['kl', 'wasserstein'] as const).map(d => {
    const r = results.get(d);
    const since = now - DRIFT_RUN_WINDOWS[d];
    const points = (r?.Timestamps ?? []).map((t, i) => ({ t: t.getTime(), v: r!.Values?.[i] ?? 0 })).filter(p => p.t >= since);
    const what = d === 'kl' ? 'the daily KL run' : 'the weekly Wasserstein run';
    const hours = Math.round(DRIFT_RUN_WINDOWS[d] / HOUR);
    if (!points.length)
      return {
        id: `drift-runs-${d}`,
        result: 'FAIL' as const,
        saw: `${what} published nothing in the last ${hours} hours`,
        fix: "see the drift function's log group and its dead-letter queue; check its schedule rule is enabled",
      };
    const records = points.reduce((s, p) => s + p.v, 0);
    if (records === 0)
      return {
        id: `drift-runs-${d}`,
        result: 'WARN' as const,
        saw: `${what} ran but read no captured request in the last ${hours} hours`,
        fix: 'check that data capture is on (DescribeEndpoint DataCaptureConfig.CaptureStatus) and traffic reaches the endpoint',
      };
    return { id: `drift-runs-${d}`, result: 'PASS' as const, saw: `${what} read ${records} captured records in the last ${hours} hours` };
  });
}
