/**
 * Circuit-breaker Lambda: thin AWS I/O around the pure policy in ./policy.ts.
 * Per evaluation: GetParameter + one batched GetMetricData + DescribeEndpoint (3 reads);
 * UpdateEndpointWeightsAndCapacities and PutParameter only when something must change.
 * The state metric goes out as an Embedded Metric Format log line (no API call).
 */
import { CloudWatchClient, GetMetricDataCommand, MetricDataQuery } from '@aws-sdk/client-cloudwatch';
import { DescribeEndpointCommand, SageMakerClient, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { BreakerConfig, DEFAULT_CONFIG, decide, EndpointView, initialState, MemoryPoint, Readings, serializeState, STATE_CODE, tryParseState } from './policy';

/** Settings from the environment (set by the CircuitBreaker construct). */
export interface HandlerSettings {
  readonly endpointName: string;
  readonly primaryVariant: string;
  readonly fallbackVariant?: string;
  readonly parameterName: string;
  readonly gpuCount: number;
  readonly errorWindowSeconds: number;
  readonly dryRun: boolean;
  readonly metricNamespace: string;
  readonly config: BreakerConfig;
}

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): HandlerSettings {
  const fallback = env.FALLBACK_VARIANT || undefined;
  return {
    endpointName: required(env, 'ENDPOINT_NAME'),
    primaryVariant: required(env, 'PRIMARY_VARIANT'),
    fallbackVariant: fallback,
    parameterName: required(env, 'PARAMETER_NAME'),
    gpuCount: Number(env.GPU_COUNT ?? '0') || 0,
    errorWindowSeconds: Number(env.ERROR_WINDOW_SECONDS ?? '600') || 600,
    dryRun: env.DRY_RUN === 'true',
    metricNamespace: env.METRIC_NAMESPACE ?? 'ResilientEndpoint/CircuitBreaker',
    config: { ...DEFAULT_CONFIG, ...(env.BREAKER_CONFIG ? JSON.parse(env.BREAKER_CONFIG) : {}), hasFallback: !!fallback },
  };
}

function required(env: NodeJS.ProcessEnv, key: string): string {
  const v = env[key];
  if (!v) throw new Error(`missing environment variable ${key}`);
  return v;
}

/** AWS clients (injectable for tests). The SDK's standard retry mode handles throttling. */
export interface Clients {
  readonly sagemaker: SageMakerClient;
  readonly cloudwatch: CloudWatchClient;
  readonly ssm: SSMClient;
}

let defaultClients: Clients | undefined;
function clients(): Clients {
  defaultClients ??= {
    sagemaker: new SageMakerClient({ maxAttempts: 4 }),
    cloudwatch: new CloudWatchClient({ maxAttempts: 4 }),
    ssm: new SSMClient({ maxAttempts: 4 }),
  };
  return defaultClients;
}

/** Result of one invocation (also logged). */
export interface EvaluationResult {
  readonly outcome: 'evaluated' | 'ignored' | 'failed';
  readonly state?: string;
  readonly level?: number;
  readonly reasons: string[];
  readonly calls: string[];
}

/** True for the two event shapes the breaker is triggered by. */
export function isTrigger(event: any): boolean {
  if (!event || typeof event !== 'object') return false;
  if (event.source === 'aws.events' && event['detail-type'] === 'Scheduled Event') return true;
  return event.source === 'aws.cloudwatch' && event['detail-type'] === 'CloudWatch Alarm State Change'
    && typeof event.detail?.alarmName === 'string';
}

export async function evaluate(event: unknown, s: HandlerSettings, c: Clients, now: number = Date.now()): Promise<EvaluationResult> {
  const calls: string[] = [];
  if (!isTrigger(event)) {
    const r: EvaluationResult = { outcome: 'ignored', reasons: ['not a schedule or alarm state-change event'], calls };
    log({ ...r, event: summarize(event) });
    return r;
  }
  try {
    calls.push('ssm:GetParameter');
    let raw: string | undefined;
    try {
      raw = (await c.ssm.send(new GetParameterCommand({ Name: s.parameterName }))).Parameter?.Value;
    } catch (e: any) {
      if (e?.name !== 'ParameterNotFound') throw e;
    }
    // A missing or malformed stored state is replaced by a valid one in this evaluation.
    const stored = tryParseState(raw);
    const prev = stored ?? initialState(now);

    calls.push('cloudwatch:GetMetricData');
    const readings = await readMetrics(s, c, now);

    calls.push('sagemaker:DescribeEndpoint');
    const d = await c.sagemaker.send(new DescribeEndpointCommand({ EndpointName: s.endpointName }));
    const endpoint: EndpointView = {
      status: d.EndpointStatus ?? 'Unknown',
      weights: Object.fromEntries((d.ProductionVariants ?? []).map(v => [v.VariantName!, v.DesiredWeight ?? v.CurrentWeight ?? 0])),
    };

    const decision = decide(prev, readings, endpoint, { primary: s.primaryVariant, fallback: s.fallbackVariant }, s.config, now);
    const reasons = [...decision.reasons];
    if (s.dryRun) {
      reasons.push('dry run: nothing changed');
    } else {
      if (decision.setWeights) {
        calls.push('sagemaker:UpdateEndpointWeightsAndCapacities');
        try {
          await c.sagemaker.send(new UpdateEndpointWeightsAndCapacitiesCommand({
            EndpointName: s.endpointName,
            // Weights only: Application Auto Scaling owns the instance counts.
            DesiredWeightsAndCapacities: Object.entries(decision.setWeights).map(([VariantName, DesiredWeight]) => ({ VariantName, DesiredWeight })),
          }));
        } catch (e: any) {
          if (e?.name === 'ValidationException' && /in-progress/i.test(String(e.message))) {
            reasons.push('endpoint update in progress (ValidationException): weights retried on the next evaluation');
          } else {
            throw e;
          }
        }
      }
      if (decision.changed || !stored) {
        if (!stored) reasons.push(raw === undefined ? 'no stored state: writing it' : 'stored state did not parse: rewritten');
        calls.push('ssm:PutParameter');
        await c.ssm.send(new PutParameterCommand({ Name: s.parameterName, Value: serializeState(decision.next, reasons), Overwrite: true, Type: 'String' }));
      }
    }
    const result: EvaluationResult = { outcome: 'evaluated', state: decision.next.state, level: decision.level, reasons, calls };
    const latest = readings.memory.at(-1)?.v;
    log({ ...result, endpoint: s.endpointName, previous: prev.state, memory: latest, errors: readings.errors, invocations: readings.invocations, status: endpoint.status });
    emitMetric(s, decision.next.state, decision.next.share);
    return result;
  } catch (e: any) {
    // AWS errors (after the SDK's retries): give up cleanly, the next schedule tick tries again.
    if (e?.$metadata) {
      const r: EvaluationResult = { outcome: 'failed', reasons: [`${e.name}: ${e.message}`], calls };
      log({ ...r, level: 'error' });
      return r;
    }
    throw e; // a bug: let Lambda retry, then the dead-letter queue keeps the event
  }
}

async function readMetrics(s: HandlerSettings, c: Clients, now: number): Promise<Readings> {
  const dims = [{ Name: 'EndpointName', Value: s.endpointName }, { Name: 'VariantName', Value: s.primaryVariant }];
  const q = (Id: string, Namespace: string, MetricName: string, Stat: string, Period: number): MetricDataQuery =>
    ({ Id, MetricStat: { Metric: { Namespace, MetricName, Dimensions: dims }, Period, Stat } });
  // Everything at 1-minute resolution. The 5XX rate is the sum of the 1-minute buckets inside the
  // error window [end − window, end): exactly the window the error-rate alarm judges. (One bucket of
  // the window's length would not do: GetMetricData aligns buckets to StartTime, so the newest
  // bucket of a longer range covers only part of the window.)
  const queries = [
    q('mem', '/aws/sagemaker/Endpoints', 'MemoryUtilization', 'Maximum', 60),
    ...(s.gpuCount > 0 ? [q('gpu', '/aws/sagemaker/Endpoints', 'GPUMemoryUtilization', 'Maximum', 60)] : []),
    q('err', 'AWS/SageMaker', 'Invocation5XXErrors', 'Sum', 60),
    q('inv', 'AWS/SageMaker', 'Invocations', 'Sum', 60),
  ];
  const end = new Date(Math.floor(now / 60000) * 60000);
  const start = new Date(end.getTime() - Math.max(15 * 60, s.errorWindowSeconds) * 1000);
  const windowStart = end.getTime() - s.errorWindowSeconds * 1000;
  const out = await c.cloudwatch.send(new GetMetricDataCommand({ MetricDataQueries: queries, StartTime: start, EndTime: end, ScanBy: 'TimestampAscending' }));
  const series = (id: string): MemoryPoint[] => {
    const r = out.MetricDataResults?.find(x => x.Id === id);
    return (r?.Timestamps ?? []).map((t, i) => ({ t: new Date(t).getTime(), v: r!.Values![i] }));
  };
  // Memory judged on the hottest instance: host %, or GPU % normalised by GPU count, whichever is higher.
  const byTime = new Map<number, number>();
  for (const p of series('mem')) byTime.set(p.t, p.v);
  for (const p of series('gpu')) byTime.set(p.t, Math.max(byTime.get(p.t) ?? 0, p.v / Math.max(1, s.gpuCount)));
  const memory = [...byTime.entries()].sort((a, b) => a[0] - b[0]).map(([t, v]) => ({ t, v }));
  const windowSum = (id: string): number | undefined => {
    const pts = series(id).filter(p => p.t >= windowStart && p.t < end.getTime() && Number.isFinite(p.v));
    return pts.length ? pts.reduce((a, p) => a + p.v, 0) : undefined;
  };
  const invocations = windowSum('inv');
  // SageMaker emits Invocation5XXErrors (0 or 1) with every request, so no error data with requests means none.
  const errors = windowSum('err') ?? (invocations !== undefined ? 0 : undefined);
  return { memory, errors, invocations };
}

function emitMetric(s: HandlerSettings, state: keyof typeof STATE_CODE, share: number): void {
  // Embedded Metric Format: Lambda turns this log line into CloudWatch metrics, no API call.
  console.log(JSON.stringify({
    _aws: { Timestamp: Date.now(), CloudWatchMetrics: [{ Namespace: s.metricNamespace, Dimensions: [['EndpointName']], Metrics: [{ Name: 'BreakerState', Unit: 'None' }, { Name: 'FallbackSharePercent', Unit: 'Percent' }] }] },
    EndpointName: s.endpointName,
    BreakerState: STATE_CODE[state],
    FallbackSharePercent: Math.round(share * 100),
  }));
}

function log(o: object): void {
  console.log(JSON.stringify({ component: 'circuit-breaker', ...o }));
}

function summarize(event: unknown): unknown {
  if (!event || typeof event !== 'object') return typeof event;
  const e = event as Record<string, unknown>;
  return { source: e.source, detailType: e['detail-type'] };
}

/** Lambda entry point. */
export async function handler(event: unknown): Promise<EvaluationResult> {
  return evaluate(event, settingsFromEnv(), clients());
}
