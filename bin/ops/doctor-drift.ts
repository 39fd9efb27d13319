/**
 * `doctor`'s drift checks beyond the runs (bin/ops/drift-check.ts), kept apart from doctor.ts (one line
 * there calls them):
 *
 * - `drift-baseline`: each feature's baseline — where it came from (a baseline file, the memory profile,
 *   learned from the capture, or none) and how old it is — from the run status the drift function writes
 *   beside the learned baselines (`drift-baselines/<endpoint>/status.json` in the capture bucket). A
 *   feature with none is a WARN (drift not measured), and so is a learned baseline made long after the
 *   endpoint's config: it was re-learned, so an earlier one was deleted and slow drift since is absorbed.
 * - `model-monitor-metrics`: the `feature_baseline_drift_*` metrics CloudWatch holds for the endpoint's
 *   Model Monitor schedules, with the namespace and dimensions they carry, against what the violation
 *   alarms watch. AWS's pages spell the namespace three ways (lib/drift/model-monitor.ts); this says which
 *   one the account really has.
 */
import { DescribeAlarmsCommand, ListMetricsCommand, ListMetricsCommandOutput, Metric, MetricAlarm } from '@aws-sdk/client-cloudwatch';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { DescribeEndpointCommandOutput, DescribeEndpointConfigCommandOutput, ListMonitoringSchedulesCommand } from '@aws-sdk/client-sagemaker';
import { DriftRunStatus, driftStatusKey } from '../../lib/drift/contract';
import { errorName, fixFor, isAccessDenied, isThrottling, OpsClients } from './aws';
import { DriftCheck } from './drift-check';

const DAY = 86_400_000;
/** A learned baseline comes from the first window after a model change: a week's run at the latest, plus slack. */
export const RELEARNED_AFTER_DAYS = 9;
/** The metric name prefix of Model Monitor's per-feature drift. */
export const BASELINE_DRIFT_PREFIX = 'feature_baseline_drift_';

/**
 * Both checks; each reports its own AWS error (no permission: SKIP with the permission named; throttled:
 * WARN). Model Monitor is optional: without a schedule on the endpoint its check adds no row.
 */
export async function driftDoctor(
  c: OpsClients,
  endpointName: string,
  ep: DescribeEndpointCommandOutput,
  cfg: DescribeEndpointConfigCommandOutput | undefined,
  now: number,
): Promise<DriftCheck[]> {
  const checks = [
    await guarded('drift-baseline', 's3:GetObject on the capture bucket’s drift-baselines/<endpoint>/status.json (and kms:Decrypt on its key)', () =>
      driftBaseline(c, endpointName, ep, cfg, now),
    ),
    await guarded('model-monitor-metrics', 'sagemaker:ListMonitoringSchedules, cloudwatch:ListMetrics and cloudwatch:DescribeAlarms', () =>
      modelMonitorMetrics(c, endpointName),
    ),
  ];
  return checks.filter((x): x is DriftCheck => x !== undefined);
}

async function guarded(id: string, permission: string, f: () => Promise<DriftCheck | undefined>): Promise<DriftCheck | undefined> {
  try {
    return await f();
  } catch (e) {
    if (isAccessDenied(e)) return { id, result: 'SKIP', saw: `not allowed: ${errorName(e)}`, fix: `allow ${permission}` };
    if (isThrottling(e)) return { id, result: 'WARN', saw: `throttled: ${errorName(e)}`, fix: 'run doctor again in a minute' };
    return { id, result: 'WARN', saw: `${errorName(e)}: ${String((e as Error)?.message ?? '').slice(0, 200)}`, fix: fixFor(e) };
  }
}

/** `s3://bucket/prefix` → bucket. */
function bucketOf(uri: string | undefined): string | undefined {
  return /^s3:\/\/([^/]+)/.exec(uri ?? '')?.[1];
}

const days = (ms: number) => Math.floor(ms / DAY);

/** The baseline of every feature, from the last run's status. */
export async function driftBaseline(
  c: OpsClients,
  endpointName: string,
  ep: DescribeEndpointCommandOutput,
  cfg: DescribeEndpointConfigCommandOutput | undefined,
  now: number,
): Promise<DriftCheck> {
  const id = 'drift-baseline';
  const bucket = bucketOf(ep.DataCaptureConfig?.DestinationS3Uri ?? cfg?.DataCaptureConfig?.DestinationS3Uri);
  if (!bucket) return { id, result: 'SKIP', saw: 'data capture off: no drift baselines' };
  const key = driftStatusKey(endpointName);
  let status: DriftRunStatus;
  try {
    const r = await c.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    status = JSON.parse(await r.Body!.transformToString()) as DriftRunStatus;
  } catch (e) {
    if (errorName(e) === 'NoSuchKey')
      return {
        id,
        result: 'SKIP',
        saw: `no drift run status at s3://${bucket}/${key} (drift off, not run yet, or deployed with a library version before it was written)`,
      };
    throw e;
  }
  const features = Object.entries(status.features ?? {});
  const age = (at: string | undefined) => (at ? `${days(now - Date.parse(at))} days old (${at.slice(0, 10)})` : 'age unknown');
  const described = features.map(([name, b]) => {
    if (b.source === 'none') return `${name}: none`;
    if (b.source === 'memory-profile') return `${name}: the memory profile (${b.from})`;
    return `${name}: ${b.source === 'file' ? 'file' : 'learned'} ${b.from}, ${b.learnedNow ? 'learned in that run' : age(b.createdAt)}`;
  });
  const saw = `last run ${status.distance} at ${status.at} over ${status.records} records: ${described.join('; ')}`;
  const none = features.filter(([, b]) => b.source === 'none').map(([n]) => n);
  if (none.length)
    return {
      id,
      result: 'WARN',
      saw,
      fix: `${none.join(', ')} had no baseline, so drift was not measured for ${none.length === 1 ? 'it' : 'them'}: give a baseline file (drift.baseline), or wait for a window with traffic to be learned from`,
    };
  // A learned baseline is made in the first runs after a model change; one made long after the endpoint's
  // config (a new model is a new config) was re-learned: an earlier one was deleted.
  const since = cfg?.CreationTime?.getTime();
  const relearned = features.filter(
    ([, b]) => b.source === 'learned' && b.createdAt && since !== undefined && Date.parse(b.createdAt) - since > RELEARNED_AFTER_DAYS * DAY,
  );
  if (relearned.length)
    return {
      id,
      result: 'WARN',
      saw: `${saw}; the endpoint config dates from ${new Date(since!).toISOString().slice(0, 10)}`,
      fix:
        `the learned baseline of ${relearned.map(([n]) => n).join(', ')} was made more than ${RELEARNED_AFTER_DAYS} days after the endpoint's config: an earlier one was deleted and re-learned from later traffic, which absorbs slow drift. ` +
        'Check the capture bucket’s lifecycle rules reach only the capture prefix (not drift-baselines/), or give a baseline file (drift.baseline)',
    };
  return { id, result: 'PASS', saw };
}

/** Every metric ListMetrics returns for a filter, over its pages. */
async function listed(c: OpsClients, input: { Dimensions: { Name: string; Value: string }[] }): Promise<Metric[]> {
  const out: Metric[] = [];
  let token: string | undefined;
  for (let page = 0; page < 20; page++) {
    const r: ListMetricsCommandOutput = await c.cloudwatch.send(new ListMetricsCommand({ ...input, NextToken: token }));
    out.push(...(r.Metrics ?? []));
    token = r.NextToken;
    if (!token) break;
  }
  return out;
}

/** A metric's namespace and dimension names, e.g. `aws/sagemaker/Endpoints/data-metrics {Endpoint, MonitoringSchedule}`. */
function spelling(namespace: string | undefined, dimensions: { Name?: string }[] | undefined): string {
  return `${namespace} {${(dimensions ?? [])
    .map(d => d.Name)
    .sort()
    .join(', ')}}`;
}

/** What an alarm reads: its metric, or each metric of its math. */
function alarmSpellings(a: MetricAlarm): string[] {
  if (a.MetricName) return [spelling(a.Namespace, a.Dimensions)];
  return (a.Metrics ?? []).filter(m => m.MetricStat?.Metric).map(m => spelling(m.MetricStat!.Metric!.Namespace, m.MetricStat!.Metric!.Dimensions));
}

/** The `feature_baseline_drift_*` metrics of the endpoint's Model Monitor schedules, and whether the alarms read them. */
export async function modelMonitorMetrics(c: OpsClients, endpointName: string): Promise<DriftCheck | undefined> {
  const id = 'model-monitor-metrics';
  const schedules = (await c.sagemaker.send(new ListMonitoringSchedulesCommand({ EndpointName: endpointName })))?.MonitoringScheduleSummaries ?? [];
  if (!schedules.length) return undefined; // Model Monitor off: nothing to say
  const names = schedules.map(s => s.MonitoringScheduleName!).filter(Boolean);
  // Every dimension AWS's pages name for the endpoint and the schedule, in every namespace (ListMetrics
  // without a namespace): the metrics are found whichever spelling the analyzer publishes with.
  const filters = [
    ...['Endpoint', 'EndpointName'].map(Name => ({ Name, Value: endpointName })),
    ...names.flatMap(value => ['MonitoringSchedule', 'ScheduleName'].map(Name => ({ Name, Value: value }))),
  ];
  const found = new Map<string, { spelling: string; features: Set<string> }>();
  for (const f of filters) {
    for (const m of await listed(c, { Dimensions: [f] })) {
      if (!m.MetricName?.startsWith(BASELINE_DRIFT_PREFIX)) continue;
      const key = spelling(m.Namespace, m.Dimensions);
      if (!found.has(key)) found.set(key, { spelling: key, features: new Set() });
      found.get(key)!.features.add(m.MetricName.slice(BASELINE_DRIFT_PREFIX.length));
    }
  }
  const alarms =
    (await c.cloudwatch.send(new DescribeAlarmsCommand({ AlarmNamePrefix: `${endpointName}-drift-modelmonitor-`, AlarmTypes: ['MetricAlarm'] })))
      .MetricAlarms ?? [];
  const watched = new Set(alarms.flatMap(alarmSpellings));
  const last = schedules.map(s => `${s.MonitoringScheduleName} (${s.MonitoringScheduleStatus ?? '?'})`).join(', ');
  if (!found.size) {
    return {
      id,
      result: 'WARN',
      saw: `no ${BASELINE_DRIFT_PREFIX}* metric for ${endpointName} or its schedules ${last} in any namespace`,
      fix: 'if the schedule has completed a run, check its job has publish_cloudwatch_metrics Enabled and its role cloudwatch:PutMetricData (the processing job’s log names a denial); a schedule that has not run yet publishes nothing',
    };
  }
  const list = [...found.values()].map(v => `${v.spelling}: ${[...v.features].sort().join(', ')}`).join('; ');
  if (!alarms.length) return { id, result: 'PASS', saw: `found ${list}; no violation alarm on them` };
  const unseen = [...found.values()].filter(v => !watched.has(v.spelling));
  if (unseen.length === found.size)
    return {
      id,
      result: 'FAIL',
      saw: `found ${list}; the violation alarms read ${[...watched].join(', ')}`,
      fix: `the alarms never see these metrics: pin the spelling the account has with drift.modelMonitor.metric (namespace ${unseen[0].spelling.split(' {')[0]}, its two dimensions)`,
    };
  return { id, result: 'PASS', saw: `found ${list}; the violation alarms read it` };
}
