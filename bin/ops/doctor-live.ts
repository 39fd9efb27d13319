/**
 * `doctor`'s checks of what is live, and of what no public AWS text settles (issue 39): each reads the
 * endpoint as it runs (DescribeEndpoint, not the config it was created from), says what it found and what
 * that means for the library's alarms and breaker.
 *
 * - Which utilisation metrics an instance family publishes: SageMaker's endpoint instance metrics are
 *   CPUUtilization, MemoryUtilization, DiskUtilization, and for GPUs GPUUtilization and GPUMemoryUtilization
 *   ("the percentage of GPU memory used by the containers on an instance … multiplied by the number of
 *   GPUs": developer guide, monitoring-cloudwatch). It lists nothing for the Neuron devices of Inferentia
 *   and Trainium instances (ml.inf*, ml.trn*): no GPU metric, no device-memory metric.
 * - Whether `FILL` over a series with no point at all in the range yields points (the error signal's
 *   fallback to every 4XX where the container publishes no `DeliberateClientErrors` relies on it).
 * - Which rollback alarms the live endpoint's deployment uses, and which are metric-math or Metrics
 *   Insights alarms (whether SageMaker's auto-rollback honours those is not documented: its examples are
 *   single-metric alarms, developer guide deployment-guardrails-configuration).
 * - Whether GPUMemoryUtilization stays up when traffic stops (memory a framework's caching allocator keeps,
 *   e.g. PyTorch's, is memory the device has handed out).
 */
import { DescribeAlarmsCommand, GetMetricDataCommand, ListMetricsCommand, MetricAlarm, MetricDataQuery } from '@aws-sdk/client-cloudwatch';
import { DescribeEndpointCommandOutput, DescribeEndpointConfigCommandOutput } from '@aws-sdk/client-sagemaker';
import { GUARD_METRICS } from '../../lib/breaker/contract';
import { OpsClients } from './aws';

/** A check's result, as doctor.ts reports it (its `Check`, restated here so that the modules import one way only). */
export interface Check {
  readonly id: string;
  readonly result: 'PASS' | 'WARN' | 'FAIL' | 'SKIP';
  readonly saw: string;
  readonly fix?: string;
}

/** What an instance family publishes to /aws/sagemaker/Endpoints. */
export type MetricFamily = 'gpu' | 'neuron' | 'cpu';

/** GPU (g*, p*), Neuron (inf*, trn*: Inferentia and Trainium) or CPU, from an `ml.` instance type. */
export function metricFamily(instanceType: string): MetricFamily {
  const family = /^ml\.([a-z]+)\d/.exec(instanceType)?.[1] ?? '';
  if (family === 'inf' || family === 'trn') return 'neuron';
  if (family === 'g' || family === 'p') return 'gpu';
  return 'cpu';
}

/** The utilisation metrics SageMaker documents for an instance family (developer guide, monitoring-cloudwatch). */
export const FAMILY_METRICS: Readonly<Record<MetricFamily, readonly string[]>> = {
  cpu: ['CPUUtilization', 'MemoryUtilization', 'DiskUtilization'],
  gpu: ['CPUUtilization', 'MemoryUtilization', 'DiskUtilization', 'GPUUtilization', 'GPUMemoryUtilization'],
  neuron: ['CPUUtilization', 'MemoryUtilization', 'DiskUtilization'],
};

/** A variant as it runs: its instance types (the live endpoint's instance pools, else the config it runs). */
export interface LiveVariant {
  readonly variantName: string;
  readonly instanceTypes: string[];
  /** Where the types come from. */
  readonly from: 'live endpoint' | 'endpoint config';
}

/** The live endpoint's production variants with their instance types. */
export function liveVariants(ep: DescribeEndpointCommandOutput, cfg: DescribeEndpointConfigCommandOutput | undefined): LiveVariant[] {
  return (ep.ProductionVariants ?? []).map(v => {
    const pools = (v.InstancePools ?? []).map(p => p.InstanceType).filter((t): t is NonNullable<typeof t> => !!t);
    if (pools.length) return { variantName: v.VariantName!, instanceTypes: [...new Set(pools)], from: 'live endpoint' as const };
    const configured = cfg?.ProductionVariants?.find(c => c.VariantName === v.VariantName)?.InstanceType;
    return { variantName: v.VariantName!, instanceTypes: configured ? [configured] : [], from: 'endpoint config' as const };
  });
}

/** The publishing period in force: the live endpoint's MetricsConfig, else its config's, else SageMaker's 60 s. */
export function livePublishing(
  ep: DescribeEndpointCommandOutput,
  cfg: DescribeEndpointConfigCommandOutput | undefined,
): { seconds: number; from: 'live endpoint' | 'endpoint config' | 'default' } {
  const live = ep.MetricsConfig?.MetricPublishFrequencyInSeconds;
  if (live !== undefined) return { seconds: live, from: 'live endpoint' };
  const configured = cfg?.MetricsConfig?.MetricPublishFrequencyInSeconds;
  return configured !== undefined ? { seconds: configured, from: 'endpoint config' } : { seconds: 60, from: 'default' };
}

const NS = '/aws/sagemaker/Endpoints';
const pass = (id: string, saw: string): Check => ({ id, result: 'PASS', saw });
const warn = (id: string, saw: string, fix: string): Check => ({ id, result: 'WARN', saw, fix });
const skip = (id: string, saw: string): Check => ({ id, result: 'SKIP', saw });

/** The checks of this module, in order; `attempt` runs each within doctor's bound (an AWS error → WARN or SKIP). */
export async function liveChecks(
  c: OpsClients,
  ep: DescribeEndpointCommandOutput,
  cfg: DescribeEndpointConfigCommandOutput | undefined,
  now: number,
  attempt: (id: string, f: () => Promise<Check | Check[]>) => Promise<Check[]>,
): Promise<Check[]> {
  const name = ep.EndpointName!;
  const variants = liveVariants(ep, cfg);
  return [
    ...(await attempt('utilisation-metrics', () => utilisationMetrics(c, name, variants))),
    ...(await attempt('fill-empty-series', () => fillEmptySeries(c, name, now))),
    ...(await attempt('rollback-alarms', () => rollbackAlarms(c, ep))),
    ...(await attempt('gpu-memory-held', () => gpuMemoryHeld(c, name, variants, now))),
  ];
}

/** Per live variant: its family, the metrics SageMaker documents for it, the series that exist, and what they mean. */
export async function utilisationMetrics(c: OpsClients, endpointName: string, variants: LiveVariant[]): Promise<Check[]> {
  const id = 'utilisation-metrics';
  const checks: Check[] = [];
  for (const v of variants) {
    const types = v.instanceTypes.length ? v.instanceTypes.join(', ') : 'unknown type';
    const families = [...new Set(v.instanceTypes.map(metricFamily))];
    const family: MetricFamily = families.includes('gpu') ? 'gpu' : families.includes('neuron') ? 'neuron' : 'cpu';
    // The series of this variant, for the metrics that tell the families apart (host memory is every family's).
    const found = new Set<string>();
    for (const metric of ['MemoryUtilization', 'GPUMemoryUtilization', 'GPUUtilization']) {
      let token: string | undefined;
      do {
        const page = await c.cloudwatch.send(
          new ListMetricsCommand({
            Namespace: NS,
            MetricName: metric,
            Dimensions: [
              { Name: 'EndpointName', Value: endpointName },
              { Name: 'VariantName', Value: v.variantName },
            ],
            NextToken: token,
          }),
        );
        const mine = (page?.Metrics ?? []).some(m => (m.Dimensions ?? []).some(d => d.Name === 'VariantName' && d.Value === v.variantName));
        if (mine) found.add(metric);
        token = page?.NextToken;
      } while (token);
    }
    const expected = FAMILY_METRICS[family];
    const extra = [...found].filter(m => m.startsWith('GPU') && !expected.includes(m));
    const head = `${v.variantName} (${types}, ${family === 'gpu' ? 'GPU' : family === 'neuron' ? 'Neuron: Inferentia/Trainium' : 'CPU'}, from the ${v.from})`;
    const saw = `${head}: ${found.size ? [...found].sort().join(', ') : 'no series yet'}`;
    if (!found.size) {
      checks.push(warn(id, saw, 'wait for instances in service (series appear with the first datapoint), then run doctor again'));
      continue;
    }
    if (extra.length) {
      checks.push(
        warn(
          id,
          `${saw}: ${extra.join(', ')} on a ${family === 'neuron' ? 'Neuron' : 'CPU'} type, which SageMaker documents only for GPUs`,
          'report this: the library creates no GPU alarm and the breaker reads no GPU memory for this type',
        ),
      );
      continue;
    }
    if (family === 'gpu' && !found.has('GPUMemoryUtilization')) {
      checks.push(
        warn(
          id,
          `${saw}: no GPUMemoryUtilization on a GPU type`,
          "the GPU-memory alarms and the breaker's GPU trigger have no data (they judge host memory only until it appears): see that the instances are in service and the container uses the GPU",
        ),
      );
      continue;
    }
    const means =
      family === 'neuron'
        ? "SageMaker publishes no device-memory metric for Neuron devices (monitoring-cloudwatch lists GPU metrics only for GPUs): the alarms and the breaker judge host memory only, and device memory is guarded by the container alone (the runtime helper's guard); a variant given `gpus` in its InstanceSpec would get GPU alarms that never have data"
        : family === 'gpu'
          ? "GPU memory is summed over the instance's GPUs (0–100 × GPUs): the alarms and the breaker divide by the GPU count"
          : 'host memory and CPU: what the alarms and the breaker read';
    checks.push(pass(id, `${saw}: ${means}`));
  }
  return checks.length ? checks : [skip(id, 'no production variant')];
}

/** A namespace nothing publishes to: FILL's answer over a series there (no point at all) is the question. */
export const PROBE_NAMESPACE = 'ResilientEndpoint/DoctorProbe';

/**
 * Whether `FILL(m, -1)` over a series with no point at all in the range gives points (every period filled) or
 * nothing, asked of CloudWatch over a series that cannot exist; and whether the live alarms whose
 * expression relies on it (the error-rate alarms with `FILL(…DeliberateClientErrors…)`) return values now.
 */
export async function fillEmptySeries(c: OpsClients, endpointName: string, now: number): Promise<Check> {
  const id = 'fill-empty-series';
  const end = Math.floor(now / 60_000) * 60_000;
  const start = end - 30 * 60_000;
  const probe = await c.cloudwatch.send(
    new GetMetricDataCommand({
      StartTime: new Date(start),
      EndTime: new Date(end),
      MetricDataQueries: [
        {
          Id: 'liveNone',
          ReturnData: false,
          MetricStat: {
            Metric: {
              Namespace: PROBE_NAMESPACE,
              MetricName: GUARD_METRICS.DELIBERATE_4XX,
              Dimensions: [{ Name: 'EndpointName', Value: endpointName }],
            },
            Period: 60,
            Stat: 'Sum',
          },
        },
        { Id: 'liveFilled', Expression: 'FILL(liveNone, -1)', Period: 60, ReturnData: true },
      ],
    }),
  );
  const filled = probe.MetricDataResults?.find(r => r.Id === 'liveFilled')?.Values ?? [];
  // The live alarms that lean on it: this endpoint's alarms whose expression FILLs DeliberateClientErrors.
  const alarms: MetricAlarm[] = [];
  let token: string | undefined;
  do {
    const page = await c.cloudwatch.send(
      new DescribeAlarmsCommand({ AlarmNamePrefix: `${endpointName}-`, AlarmTypes: ['MetricAlarm'], NextToken: token }),
    );
    alarms.push(...(page.MetricAlarms ?? []));
    token = page.NextToken;
  } while (token);
  const leaning = alarms.filter(a => (a.Metrics ?? []).some(m => /FILL\(/.test(m.Expression ?? '')));
  const live: string[] = [];
  for (const a of leaning) {
    // The alarm's own queries (metrics first: GetMetricData takes them in any order).
    const queries = [...((a.Metrics ?? []) as MetricDataQuery[])].sort((x, y) => Number(!!x.Expression) - Number(!!y.Expression));
    const out = await c.cloudwatch.send(new GetMetricDataCommand({ StartTime: new Date(start), EndTime: new Date(end), MetricDataQueries: queries }));
    const returned = queries.find(q => q.ReturnData !== false && q.Expression)?.Id;
    const n = out.MetricDataResults?.find(r => r.Id === returned)?.Values?.length ?? 0;
    live.push(`${a.AlarmName}: ${n} values in the last 30 minutes`);
  }
  const alarmsSaw = leaning.length ? `; ${live.join('; ')}` : '; no alarm of this endpoint uses FILL';
  if (filled.length) {
    return pass(
      id,
      `FILL(m, -1) over a series with no point in 30 minutes gave ${filled.length} points (${[...new Set(filled)].join(', ')}): an absent DeliberateClientErrors series reads as -1, ` +
        `so the error signal falls back to every 4XX where the container publishes none (IF(FILL(dce, -1) >= 0, FILL(dce, 0), Invocation4XXErrors)), as designed${alarmsSaw}`,
    );
  }
  return warn(
    id,
    `FILL(m, -1) over a series with no point in 30 minutes gave nothing${alarmsSaw}`,
    'where the container publishes no DeliberateClientErrors, the error-rate expression IF(FILL(dce, -1) >= 0, …, Invocation4XXErrors) has no value to fall back on: ' +
      'the ModelErrorRate alarm (a rollback alarm) and the breaker error alarm may then see no data (their values above), while the breaker function, which sums the series itself, still counts dead workers. ' +
      'Keep the container publishing DeliberateClientErrors (the runtime helper does, with the guard on), and report this',
  );
}

/** The live endpoint's rollback alarms, by kind; a missing one, or none that reads a single metric, is a WARN. */
export async function rollbackAlarms(c: OpsClients, ep: DescribeEndpointCommandOutput): Promise<Check> {
  const id = 'rollback-alarms';
  const names = (ep.LastDeploymentConfig?.AutoRollbackConfiguration?.Alarms ?? []).map(a => a.AlarmName!).filter(Boolean);
  if (!names.length) return skip(id, 'the live endpoint has no auto-rollback alarms (no deployment guardrails: RE-DeploymentGuardrails)');
  const out = await c.cloudwatch.send(new DescribeAlarmsCommand({ AlarmNames: names, AlarmTypes: ['MetricAlarm', 'CompositeAlarm'] }));
  const found = new Map((out.MetricAlarms ?? []).map(a => [a.AlarmName!, a]));
  const composite = new Set((out.CompositeAlarms ?? []).map(a => a.AlarmName!));
  const kind = (n: string) => {
    if (composite.has(n)) return 'composite';
    const a = found.get(n);
    if (!a) return 'missing';
    const exprs = (a.Metrics ?? []).filter(m => m.Expression);
    if (exprs.some(m => /^\s*SELECT\s/i.test(m.Expression!))) return 'Metrics Insights';
    return exprs.length ? 'metric math' : 'single metric';
  };
  const kinds = names.map(n => [n, kind(n)] as const);
  const saw = kinds.map(([n, k]) => `${n} (${k})`).join(', ');
  const missing = kinds.filter(([, k]) => k === 'missing').map(([n]) => n);
  if (missing.length)
    return warn(
      id,
      `rollback alarms of the live endpoint: ${saw}`,
      `no alarm named ${missing.join(', ')}: it can never trip a rollback; redeploy the stack (deployment.autoRollbackAlarms names alarms that exist)`,
    );
  const notSingle = kinds.filter(([, k]) => k !== 'single metric').map(([n]) => n);
  const means =
    'SageMaker rolls back when "any alarms are tripped" (AutoRollbackConfig) and reads them with DescribeAlarms; its examples are single-metric alarms, and whether it honours metric-math and Metrics Insights alarms is not documented';
  if (notSingle.length === kinds.length)
    return warn(
      id,
      `rollback alarms of the live endpoint: ${saw}: none reads a single metric`,
      `${means}: if it does not, nothing rolls a bad deployment back; add a single-metric alarm (the host-memory or latency alarm) to deployment.autoRollbackAlarms`,
    );
  return pass(
    id,
    `rollback alarms of the live endpoint: ${saw}. ${means}: if it does not, ${notSingle.length ? notSingle.join(', ') : 'none of them'} would not roll back, and the single-metric ones still would`,
  );
}

/** How many quiet minutes (no invocation) after traffic doctor needs to judge GPU memory at rest. */
export const QUIET_MINUTES = 10;

/**
 * Whether GPUMemoryUtilization falls when traffic stops, from the last 3 hours at 1 minute: the GPU memory
 * of the busy minutes before a stretch of at least {@link QUIET_MINUTES} minutes with no invocation, against
 * its lowest value in that stretch.
 */
export async function gpuMemoryHeld(c: OpsClients, endpointName: string, variants: LiveVariant[], now: number): Promise<Check[]> {
  const id = 'gpu-memory-held';
  const gpu = variants.filter(v => v.instanceTypes.some(t => metricFamily(t) === 'gpu'));
  if (!gpu.length) return [skip(id, 'no GPU variant')];
  const end = Math.floor(now / 60_000) * 60_000;
  const start = end - 3 * 3_600_000;
  const checks: Check[] = [];
  for (const v of gpu) {
    const dims = [
      { Name: 'EndpointName', Value: endpointName },
      { Name: 'VariantName', Value: v.variantName },
    ];
    const out = await c.cloudwatch.send(
      new GetMetricDataCommand({
        StartTime: new Date(start),
        EndTime: new Date(end),
        ScanBy: 'TimestampAscending',
        MetricDataQueries: [
          {
            Id: 'liveInv',
            MetricStat: { Metric: { Namespace: 'AWS/SageMaker', MetricName: 'Invocations', Dimensions: dims }, Period: 60, Stat: 'Sum' },
          },
          {
            Id: 'liveGpu',
            MetricStat: { Metric: { Namespace: NS, MetricName: 'GPUMemoryUtilization', Dimensions: dims }, Period: 60, Stat: 'Maximum' },
          },
        ],
      }),
    );
    const series = (k: string) => {
      const r = out.MetricDataResults?.find(x => x.Id === k);
      return new Map((r?.Timestamps ?? []).map((t, i) => [new Date(t).getTime(), r!.Values![i]]));
    };
    const mem = series('liveGpu');
    const inv = series('liveInv');
    const minutes = [...mem.keys()].sort((a, b) => a - b);
    // The last stretch of quiet minutes (no invocation) that follows a busy one.
    let best: { busy: number[]; quiet: number[] } | undefined;
    let i = 0;
    while (i < minutes.length) {
      if ((inv.get(minutes[i]) ?? 0) > 0) {
        i++;
        continue;
      }
      let j = i;
      while (j < minutes.length && (inv.get(minutes[j]) ?? 0) === 0) j++;
      const quiet = minutes.slice(i, j);
      const busy = minutes.slice(Math.max(0, i - 15), i).filter(t => (inv.get(t) ?? 0) > 0);
      if (quiet.length >= QUIET_MINUTES && busy.length) best = { busy, quiet };
      i = j;
    }
    const head = `${v.variantName}`;
    if (!best) {
      checks.push(
        skip(id, `${head}: no stretch of ${QUIET_MINUTES} minutes without invocations after traffic in the last 3 hours: nothing to compare`),
      );
      continue;
    }
    const peak = Math.max(...best.busy.map(t => mem.get(t)!));
    const rest = Math.min(...best.quiet.map(t => mem.get(t)!));
    const saw = `${head}: GPUMemoryUtilization ${peak.toFixed(1)} in the busy minutes, at least ${rest.toFixed(1)} through the ${best.quiet.length} quiet minutes after them`;
    if (rest >= peak - 2)
      checks.push(
        warn(
          id,
          `${saw}: GPU memory stays taken when the traffic stops`,
          "memory a framework's caching allocator keeps (PyTorch's memory_reserved) is memory the device has handed out, and GPUMemoryUtilization counts it: the GPU-memory alarms stay where the peak left them, and the breaker's recovery (below 70 % for 5 minutes) waits for it. " +
            'Release it after a peak (torch.cuda.empty_cache(): the runtime helper calls it only after a request ran out of memory), or bound it (PYTORCH_CUDA_ALLOC_CONF), and read the guard pressure, which counts what the model holds',
        ),
      );
    else checks.push(pass(id, `${saw}: it falls with the traffic (what the allocator keeps is released, or not counted)`));
  }
  return checks;
}
