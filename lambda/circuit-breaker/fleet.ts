/**
 * Fleet mode: one function for every endpoint of a stack. Each endpoint's settings are an SSM
 * parameter the construct writes (the function's environment lists their names); its state is its
 * own item in the shared table. Reads are batched across endpoints; each endpoint is then decided
 * and acted on separately, so one endpoint's failure or Updating status never holds up another's.
 */
import { MetricDataResult, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { BatchGetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetParametersCommand } from '@aws-sdk/client-ssm';
import { BREAKER_ALARM_MARK } from '../../lib/breaker/contract';
import { evaluate, EvaluationResult, isTrigger, Prefetched } from './evaluate';
import { metricQueries, metricWindow, parseReadings, perGpuSeries } from './metrics';
import { Clients, FleetSettings, HandlerSettings, settingsFromParameter } from './settings';
import { itemFrom, keyOf, publishedFrom, StoredItem } from './state-store';
import { log, summarize } from './telemetry';

/** What a fleet evaluation did, per endpoint. */
export interface FleetResult {
  readonly outcome: 'evaluated' | 'ignored';
  /** Endpoint name → its result. */
  readonly endpoints: Record<string, EvaluationResult>;
  /** Every AWS call of the invocation (batched reads included). */
  readonly calls: string[];
}

const chunks = <T>(xs: T[], n: number): T[][] => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

/** The endpoints an event is about: the alarm's or the endpoint event's one, or all on the schedule. */
function targetsOf(event: any, all: HandlerSettings[]): HandlerSettings[] {
  if (event.source === 'aws.sagemaker') return all.filter(s => s.endpointName === event.detail.EndpointName);
  if (event.source === 'aws.cloudwatch') {
    // Breaker alarms are named <endpoint>-<variant>-breaker-<metric> (breakerAlarmName): the longest matching endpoint name.
    const name = String(event.detail.alarmName);
    const match = all
      .filter(s => name.startsWith(`${s.endpointName}-`) && name.includes(BREAKER_ALARM_MARK))
      .sort((a, b) => b.endpointName.length - a.endpointName.length)[0];
    return match ? [match] : [];
  }
  return all;
}

export async function evaluateFleet(event: unknown, f: FleetSettings, c: Clients, now: number = Date.now()): Promise<FleetResult> {
  const calls: string[] = [];
  if (!isTrigger(event)) {
    log({ outcome: 'ignored', reasons: ['not a schedule, alarm or endpoint state-change event'], event: summarize(event) });
    return { outcome: 'ignored', endpoints: {}, calls };
  }
  // 1. The endpoints' settings (GetParameters takes 10 names a call).
  const all: HandlerSettings[] = [];
  for (const names of chunks(f.configParameters, 10)) {
    calls.push('ssm:GetParameters');
    const out = await c.ssm.send(new GetParametersCommand({ Names: names }));
    for (const p of out.Parameters ?? []) all.push(settingsFromParameter(p.Value!, f.tableName));
  }
  const targets = targetsOf(event, all);
  // 2. Their states (BatchGetItem: 100 keys a call, consistent reads) and published levels (10 a call).
  const items = new Map<string, StoredItem>();
  for (const group of chunks(targets, 100)) {
    calls.push('dynamodb:BatchGetItem');
    const out = await c.dynamodb.send(new BatchGetItemCommand({ RequestItems: { [f.tableName]: { Keys: group.map(keyOf), ConsistentRead: true } } }));
    for (const it of out.Responses?.[f.tableName] ?? []) items.set(String(it.pk?.S), itemFrom(it));
  }
  const published = new Map<string, { level?: number; state?: string } | undefined>();
  for (const group of chunks(targets, 10)) {
    calls.push('ssm:GetParameters');
    const out = await c.ssm.send(new GetParametersCommand({ Names: group.map(t => t.parameterName) }));
    for (const p of out.Parameters ?? []) published.set(p.Name!, publishedFrom(p.Value));
  }
  // 3. Their metrics: one GetMetricData for up to 500 queries, per publishing period.
  const results: MetricDataResult[] = [];
  const byPeriod = new Map<number, HandlerSettings[]>();
  targets.forEach(t => byPeriod.set(t.metricPeriodSeconds, [...(byPeriod.get(t.metricPeriodSeconds) ?? []), t]));
  for (const group of byPeriod.values()) {
    const queries = group.flatMap(t => metricQueries(t, `e${targets.indexOf(t)}_`));
    const windows = group.map(t => metricWindow(t, now));
    const start = Math.min(...windows.map(w => w.start));
    const end = Math.min(...windows.map(w => w.end));
    for (const batch of chunks(queries, 500)) {
      calls.push('cloudwatch:GetMetricData');
      const out = await c.cloudwatch.send(
        new GetMetricDataCommand({ MetricDataQueries: batch, StartTime: new Date(start), EndTime: new Date(end), ScanBy: 'TimestampAscending' }),
      );
      results.push(...(out.MetricDataResults ?? []));
    }
  }
  // 4. Each endpoint on its own: a failure or an Updating endpoint never holds up the others.
  const settled = await Promise.allSettled(
    targets.map(async (t, i) => {
      const perGpu = await perGpuSeries(t, c, now, calls);
      const pre: Prefetched = {
        item: items.get(t.endpointName) ?? { version: 0 },
        published: published.get(t.parameterName),
        readings: parseReadings(t, results, `e${i}_`, perGpu, now),
      };
      return evaluate(event, t, c, now, pre);
    }),
  );
  const endpoints: Record<string, EvaluationResult> = {};
  settled.forEach((r, i) => {
    const name = targets[i].endpointName;
    endpoints[name] =
      r.status === 'fulfilled'
        ? r.value
        : { outcome: 'failed', reasons: [`${(r.reason as Error)?.name}: ${(r.reason as Error)?.message}`], calls: [] };
    calls.push(...(r.status === 'fulfilled' ? r.value.calls : []));
  });
  log({
    component: 'circuit-breaker-fleet',
    endpoints: Object.fromEntries(Object.entries(endpoints).map(([k, v]) => [k, `${v.outcome}${v.state ? ` ${v.state}` : ''}`])),
    calls: calls.length,
  });
  return { outcome: 'evaluated', endpoints, calls };
}
