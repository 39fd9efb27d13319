/**
 * `sagemaker-resilient-endpoint doctor`: read-only checks of a deployed ResilientEndpoint in the account,
 * for what unit tests cannot see (real-account.md items 23–35): whether the 10-second data the breaker
 * relies on exists, whether the per-GPU series carry the dimension set its query uses, whether anyone
 * is told when an alarm fires, whether the breaker runs. Each check says what it saw and the fix.
 */
import { DescribeScalableTargetsCommand, ListTagsForResourceCommand } from '@aws-sdk/client-application-auto-scaling';
import { DescribeAlarmsCommand, GetMetricDataCommand, ListMetricsCommand, MetricAlarm } from '@aws-sdk/client-cloudwatch';
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
import { BREAKER_TAG } from '../../lib/breaker/contract';
import { tryParseState } from '../../lib/breaker/policy';
import { errorName, isAccessDenied, isThrottling, OpsClients } from './aws';
import { findBreaker, FoundBreaker } from './discover';

export type CheckResult = 'PASS' | 'WARN' | 'FAIL' | 'SKIP';

export interface Check {
  readonly id: string;
  readonly result: CheckResult;
  /** What the check saw. */
  readonly saw: string;
  /** What to do about a WARN or FAIL. */
  readonly fix?: string;
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

/** Runs a check; an AWS error becomes a WARN (throttled, or another error) or a SKIP (no permission), never a crash. */
async function attempt(id: string, f: () => Promise<Check | Check[]>): Promise<Check[]> {
  try {
    const r = await f();
    return Array.isArray(r) ? r : [r];
  } catch (e) {
    if (isThrottling(e))
      return [warn(id, `could not check: AWS throttled the call (${errorName(e)}) after the SDK's retries`, 'run doctor again in a minute')];
    if (isAccessDenied(e)) return [skip(id, `no permission: ${(e as Error).message}`)];
    return [warn(id, `could not check: ${errorName(e)}: ${(e as Error).message}`, 'see the error; run doctor again')];
  }
}

/** Points' spacing in seconds: the smallest gap between their timestamps (undefined with fewer than 2). */
export function spacingSeconds(timestamps: Date[]): number | undefined {
  const t = timestamps.map(d => d.getTime()).sort((a, b) => a - b);
  let best: number | undefined;
  for (let i = 1; i < t.length; i++) if (t[i] > t[i - 1] && (best === undefined || t[i] - t[i - 1] < best)) best = t[i] - t[i - 1];
  return best === undefined ? undefined : best / 1000;
}

export async function doctor(c: OpsClients, endpointName: string, now: number = Date.now()): Promise<DoctorReport> {
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
      const m = cfg.MetricsConfig;
      const period = m?.MetricPublishFrequencyInSeconds;
      const want = s?.metricPeriodSeconds;
      const saw = m
        ? `MetricsConfig: enhanced metrics ${m.EnableEnhancedMetrics ? 'on' : 'off'}, every ${period ?? 60} s`
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
      const dc = cfg?.DataCaptureConfig;
      if (!cfg) return skip('data-capture', 'endpoint config not read');
      if (!dc || dc.EnableCapture === false) return warn('data-capture', 'data capture off', 'enable dataCapture (on at 1 % by default)');
      return pass('data-capture', `${dc.InitialSamplingPercentage} % of requests to ${dc.DestinationS3Uri}`);
    })),
  );

  checks.push(...(await attempt('ten-second-data', () => tenSecondData(c, endpointName, variant, cfg, now))));
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
  checks.push(...(await attempt('capture-objects', () => captureObjects(c, endpointName, variant, cfg, now))));
  checks.push(...(await attempt('parameter-store-throughput', () => ssmThroughput(c, ep!))));
  return report(endpointName, now, checks);
}

function report(endpointName: string, now: number, checks: Check[]): DoctorReport {
  return { endpointName, checkedAt: new Date(now).toISOString(), checks, ok: !checks.some(x => x.result === 'FAIL') };
}

async function metricData(
  c: OpsClients,
  queries: { id: string; metric: string; dims: Record<string, string>; ns?: string; stat?: string }[],
  period: number,
  from: number,
  to: number,
) {
  const out = await c.cloudwatch.send(
    new GetMetricDataCommand({
      StartTime: new Date(from),
      EndTime: new Date(to),
      MetricDataQueries: queries.map(q => ({
        Id: q.id,
        MetricStat: {
          Metric: { Namespace: q.ns ?? NS, MetricName: q.metric, Dimensions: Object.entries(q.dims).map(([Name, Value]) => ({ Name, Value })) },
          Period: period,
          Stat: q.stat ?? 'Maximum',
        },
      })),
    }),
  );
  return Object.fromEntries((out.MetricDataResults ?? []).map(r => [r.Id!, { t: r.Timestamps ?? [], v: r.Values ?? [] }]));
}

async function tenSecondData(
  c: OpsClients,
  endpointName: string,
  variant: string | undefined,
  cfg: DescribeEndpointConfigCommandOutput | undefined,
  now: number,
): Promise<Check> {
  const id = 'ten-second-data';
  if (!variant) return skip(id, 'no variant');
  const period = cfg?.MetricsConfig?.MetricPublishFrequencyInSeconds;
  if (period === undefined || period >= 60) return skip(id, `the endpoint publishes every ${period ?? 60} s: nothing finer to look for`);
  const gpu = (cfg?.ProductionVariants ?? []).some(v => /^ml\.(g|p|inf|trn)/.test(v.InstanceType ?? ''));
  const dims = { EndpointName: endpointName, VariantName: variant };
  const r = await metricData(
    c,
    [{ id: 'mem', metric: 'MemoryUtilization', dims }, ...(gpu ? [{ id: 'gpu', metric: 'GPUMemoryUtilization', dims }] : [])],
    10,
    now - 15 * 60_000,
    now,
  );
  const seen = Object.entries(r).map(([k, x]) => [k, x.t.length, spacingSeconds(x.t)] as const);
  const text = seen
    .map(([k, n, sp]) => `${k === 'mem' ? 'MemoryUtilization' : 'GPUMemoryUtilization'}: ${n} points${sp ? `, ${sp} s apart` : ''}`)
    .join('; ');
  if (seen.every(([, n]) => n === 0))
    return warn(
      id,
      `no datapoints in the last 15 minutes (${text || 'nothing returned'})`,
      'send traffic or wait for instances in service, then run doctor again',
    );
  if (seen.some(([, , sp]) => sp !== undefined && sp >= 60))
    return warn(
      id,
      `a 10-second query returned points a minute apart (${text}): CloudWatch keeps this endpoint's data at 1 minute`,
      'nothing to change: the breaker reads the spacing from the timestamps and works on 1-minute data; it detects in 1–2 minutes instead of ~40 s (docs/breaker.md, "Seen within seconds")',
    );
  if (seen.some(([, , sp]) => sp !== undefined && sp <= 10)) return pass(id, text);
  return warn(id, `too few points to tell the spacing (${text})`, 'run doctor again with traffic');
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

async function alarms(c: OpsClients, endpointName: string, now: number): Promise<Check[]> {
  const metric: MetricAlarm[] = [];
  let composite = 0;
  let token: string | undefined;
  do {
    const page = await c.cloudwatch.send(
      new DescribeAlarmsCommand({ AlarmNamePrefix: `${endpointName}-`, AlarmTypes: ['MetricAlarm', 'CompositeAlarm'], NextToken: token }),
    );
    metric.push(...(page.MetricAlarms ?? []));
    composite += (page.CompositeAlarms ?? []).length;
    token = page.NextToken;
  } while (token);
  if (metric.length === 0) return [fail('alarms', `no alarm named ${endpointName}-…`, 'deploy the stack with monitoring (on by default)')];
  const checks: Check[] = [];
  const stuck = metric.filter(
    a => a.StateValue === 'INSUFFICIENT_DATA' && a.StateUpdatedTimestamp && now - a.StateUpdatedTimestamp.getTime() > windowSeconds(a) * 1000,
  );
  const firing = metric.filter(a => a.StateValue === 'ALARM').map(a => a.AlarmName);
  checks.push(
    stuck.length
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
  const topics = [
    ...new Set(metric.flatMap(a => [...(a.AlarmActions ?? []), ...(a.OKActions ?? [])]).filter(x => x.startsWith('arn:') && x.includes(':sns:'))),
  ];
  if (topics.length === 0) {
    checks.push(fail('alarm-subscribers', 'no alarm notifies an SNS topic', 'set monitoring.notify (emails or subscriptions), or an alarmTopic'));
    return checks;
  }
  for (const topic of topics) {
    const subs: string[] = [];
    let next: string | undefined;
    do {
      const page = await c.sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topic, NextToken: next }));
      subs.push(...(page.Subscriptions ?? []).map(x => x.SubscriptionArn ?? ''));
      next = page.NextToken;
    } while (next);
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
  cfg: DescribeEndpointConfigCommandOutput | undefined,
  now: number,
): Promise<Check> {
  const id = 'capture-objects';
  const dc = cfg?.DataCaptureConfig;
  if (!dc || dc.EnableCapture === false || !dc.DestinationS3Uri || !variant) return skip(id, 'data capture off');
  const r = await metricData(
    c,
    [{ id: 'inv', ns: 'AWS/SageMaker', metric: 'Invocations', dims: { EndpointName: endpointName, VariantName: variant }, stat: 'Sum' }],
    3600,
    now - 3600_000,
    now,
  );
  const invocations = (r.inv?.v ?? []).reduce((x, y) => x + y, 0);
  const expected = (invocations * (dc.InitialSamplingPercentage ?? 0)) / 100;
  if (expected < 1)
    return skip(id, `${invocations} invocations in the last hour × ${dc.InitialSamplingPercentage} %: too few to expect a captured request`);
  // SageMaker writes s3://<destination>/<endpoint>/<variant>/yyyy/mm/dd/hh/<file>.jsonl (developer guide, model-monitor-data-capture).
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(dc.DestinationS3Uri);
  if (!m) return warn(id, `destination ${dc.DestinationS3Uri} is not an s3:// URI`, 'fix dataCapture.destination');
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
