/**
 * Circuit-breaker Lambda: thin AWS I/O around the pure policy in lib/breaker/policy.ts.
 *
 * Per evaluation, reads: the state item (DynamoDB, consistent read), the published degrade level
 * (SSM), one batched GetMetricData (plus one for the per-GPU Metrics Insights query on multi-GPU
 * types with enhanced metrics), DescribeEndpoint. Writes happen only when something must
 * change, and only after the evaluation has claimed them with a conditional write on the state's
 * version (compare-and-swap): of two evaluations that run at once (an alarm event and the schedule),
 * exactly one acts and the other stops as "superseded", with or without reserved concurrency.
 *
 * Then, in this order (see lib/breaker/policy.ts for why):
 *  1. the degrade level (SSM PutParameter) — works whatever the endpoint's status;
 *  2. weights (UpdateEndpointWeightsAndCapacities) — only when InService; a refusal is retried when
 *     SageMaker reports the endpoint's next state change (EventBridge) or on the 1-minute schedule;
 *  3. capacity (Application Auto Scaling RegisterScalableTarget: suspend the primary's scale-in, raise
 *     the fallback's minimum) — never instance counts.
 *
 * The state lives in a DynamoDB item that CloudFormation never rewrites; the SSM parameter is only
 * the channel to the container, re-published whenever its value differs from the state's.
 */
import { ApplicationAutoScalingClient, RegisterScalableTargetCommand } from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchClient, GetMetricDataCommand, MetricDataQuery, MetricDataResult } from '@aws-sdk/client-cloudwatch';
import { BatchGetItemCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DescribeEndpointCommand, SageMakerClient, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import { GetParameterCommand, GetParametersCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import {
  BreakerConfig,
  CapacityPlan,
  DEFAULT_CONFIG,
  decide,
  EndpointView,
  initialState,
  LEVEL,
  MemoryPoint,
  Readings,
  serializeState,
  STATE_CODE,
  tryParseState,
  VariantCapacity,
} from '../../lib/breaker/policy';
import { BREAKER_ALARM_MARK, BREAKER_ENV as E, BREAKER_METRICS as M, BREAKER_NAMESPACE } from '../../lib/breaker/contract';

/** Settings from the environment (set by the CircuitBreaker construct). */
export interface HandlerSettings {
  readonly endpointName: string;
  readonly primaryVariant: string;
  readonly fallbackVariant?: string;
  /** SSM parameter the container reads its degrade level from. */
  readonly parameterName: string;
  /** DynamoDB table holding the breaker's state item. */
  readonly tableName: string;
  readonly gpuCount: number;
  readonly errorWindowSeconds: number;
  /** The endpoint's metric publishing period (MetricsConfig), 10–300 s. */
  readonly metricPeriodSeconds: number;
  /** Per-GPU data (enhanced metrics) is published: judge the hottest GPU. */
  readonly perGpuMetrics: boolean;
  readonly primaryCapacity?: VariantCapacity;
  readonly fallbackCapacity?: VariantCapacity;
  readonly dryRun: boolean;
  readonly metricNamespace: string;
  readonly config: BreakerConfig;
  /**
   * The state item's key in the table.
   * @default 'breaker' (one endpoint per table); a fleet uses the endpoint's name
   */
  readonly stateKey?: string;
}

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): HandlerSettings {
  const fallback = env[E.FALLBACK_VARIANT] || undefined;
  const json = <T>(k: string): T | undefined => (env[k] ? (JSON.parse(env[k]!) as T) : undefined);
  return {
    endpointName: required(env, E.ENDPOINT_NAME),
    primaryVariant: required(env, E.PRIMARY_VARIANT),
    fallbackVariant: fallback,
    parameterName: required(env, E.PARAMETER_NAME),
    tableName: required(env, E.TABLE_NAME),
    gpuCount: Number(env[E.GPU_COUNT] ?? '0') || 0,
    errorWindowSeconds: Number(env[E.ERROR_WINDOW_SECONDS] ?? '600') || 600,
    metricPeriodSeconds: Number(env[E.METRIC_PERIOD_SECONDS] ?? '60') || 60,
    perGpuMetrics: env[E.PER_GPU_METRICS] === 'true',
    primaryCapacity: json<VariantCapacity>(E.PRIMARY_CAPACITY),
    fallbackCapacity: json<VariantCapacity>(E.FALLBACK_CAPACITY),
    dryRun: env[E.DRY_RUN] === 'true',
    metricNamespace: env[E.METRIC_NAMESPACE] ?? BREAKER_NAMESPACE,
    config: { ...DEFAULT_CONFIG, ...(json<Partial<BreakerConfig>>(E.BREAKER_CONFIG) ?? {}), hasFallback: !!fallback },
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
  readonly dynamodb: DynamoDBClient;
  readonly autoscaling: ApplicationAutoScalingClient;
}

/** One client per service, each with the SDK's standard retries (up to `maxAttempts` attempts). */
export function createClients(maxAttempts = 4): Clients {
  return {
    sagemaker: new SageMakerClient({ maxAttempts }),
    cloudwatch: new CloudWatchClient({ maxAttempts }),
    ssm: new SSMClient({ maxAttempts }),
    dynamodb: new DynamoDBClient({ maxAttempts }),
    autoscaling: new ApplicationAutoScalingClient({ maxAttempts }),
  };
}

let defaultClients: Clients | undefined;
function clients(): Clients {
  defaultClients ??= createClients();
  return defaultClients;
}

/** Result of one invocation (also logged). */
export interface EvaluationResult {
  readonly outcome: 'evaluated' | 'ignored' | 'failed' | 'superseded';
  readonly state?: string;
  readonly level?: number;
  readonly reasons: string[];
  readonly calls: string[];
}

/** True for the event shapes the breaker is triggered by: its schedule, its alarms, SageMaker's endpoint state changes. */
export function isTrigger(event: any): boolean {
  if (!event || typeof event !== 'object') return false;
  if (event.source === 'aws.events' && event['detail-type'] === 'Scheduled Event') return true;
  if (event.source === 'aws.sagemaker' && event['detail-type'] === 'SageMaker Endpoint State Change')
    return typeof event.detail?.EndpointName === 'string';
  return event.source === 'aws.cloudwatch' && event['detail-type'] === 'CloudWatch Alarm State Change' && typeof event.detail?.alarmName === 'string';
}

/** The DynamoDB item: the breaker state, its version (for compare-and-swap), the capacity settings last applied. */
export interface StoredItem {
  readonly version: number;
  readonly raw?: string;
  readonly capacity?: CapacityPlan;
}

/** The state item's key: one item per endpoint (a fleet's endpoints share a table). */
const keyOf = (s: HandlerSettings) => ({ pk: { S: s.stateKey ?? 'breaker' } });

/** One endpoint's reads, made in batches for a fleet (see `evaluateFleet`). */
export interface Prefetched {
  readonly item: StoredItem;
  readonly published?: { level?: number; state?: string };
  readonly readings: MetricReadings;
}

export async function evaluate(
  event: unknown,
  s: HandlerSettings,
  c: Clients,
  now: number = Date.now(),
  pre?: Prefetched,
): Promise<EvaluationResult> {
  const calls: string[] = [];
  if (!isTrigger(event)) {
    const r: EvaluationResult = { outcome: 'ignored', reasons: ['not a schedule, alarm or endpoint state-change event'], calls };
    log({ ...r, event: summarize(event) });
    return r;
  }
  try {
    if (!pre) calls.push('dynamodb:GetItem');
    const item = pre?.item ?? (await readItem(s, c));
    const stored = tryParseState(item.raw);
    const prev = stored ?? initialState(now);

    if (!pre) calls.push('ssm:GetParameter');
    const published = pre ? pre.published : await readPublished(s, c);

    const readings = pre?.readings ?? (await readMetrics(s, c, now, calls));

    // A fleet skips DescribeEndpoint for an endpoint that is CLOSED, stays CLOSED and has its level
    // published (its weights were set at its last transition; the endpoint retains them).
    if (pre && stored?.state === 'CLOSED' && published?.level === 0 && published?.state === 'CLOSED') {
      const quiet = decide(prev, readings, undefined, { primary: s.primaryVariant, fallback: s.fallbackVariant }, s.config, now);
      if (quiet.next.state === 'CLOSED' && !quiet.changed) {
        return { outcome: 'evaluated', state: 'CLOSED', level: 0, reasons: quiet.reasons, calls };
      }
    }

    calls.push('sagemaker:DescribeEndpoint');
    const d = await c.sagemaker.send(new DescribeEndpointCommand({ EndpointName: s.endpointName }));
    const endpoint: EndpointView = {
      status: d.EndpointStatus ?? 'Unknown',
      weights: Object.fromEntries((d.ProductionVariants ?? []).map(v => [v.VariantName!, v.DesiredWeight ?? v.CurrentWeight ?? 0])),
      instances: Object.fromEntries(
        (d.ProductionVariants ?? []).filter(v => v.CurrentInstanceCount !== undefined).map(v => [v.VariantName!, v.CurrentInstanceCount!]),
      ),
    };

    const variants = {
      primary: s.primaryVariant,
      fallback: s.fallbackVariant,
      primaryCapacity: s.primaryCapacity,
      fallbackCapacity: s.fallbackCapacity,
    };
    const primaryInstances = endpoint.instances?.[s.primaryVariant];
    const loadPerInstance =
      readings.newestMinuteInvocations !== undefined && primaryInstances ? readings.newestMinuteInvocations / 60 / primaryInstances : undefined;
    const decision = decide(prev, { ...readings, loadPerInstance }, endpoint, variants, s.config, now);
    const reasons = [...decision.reasons];
    const value = serializeState(decision.next, reasons);
    const publishLevel = published?.level !== decision.level || published?.state !== decision.next.state;
    const capacity = s.primaryCapacity || s.fallbackCapacity ? decision.capacity : undefined;
    const capacityDiffers = capacity !== undefined && !sameCapacity(capacity, item.capacity, s);
    const writeState = decision.changed || !stored;
    if (!stored) reasons.push(item.raw === undefined ? 'no stored state: writing it' : 'stored state did not parse: rewritten');

    if (s.dryRun) {
      reasons.push('dry run: nothing changed');
    } else if (writeState || publishLevel || decision.setWeights || capacityDiffers) {
      // Claim the writes: only the evaluation whose conditional write succeeds acts.
      calls.push('dynamodb:PutItem');
      const claimed = await writeItem(s, c, item.version, writeState ? JSON.stringify(decision.next) : item.raw!, item.capacity);
      if (!claimed) {
        const r: EvaluationResult = {
          outcome: 'superseded',
          state: prev.state,
          reasons: ['another evaluation changed the state first: it acts, this one stops'],
          calls,
        };
        log({ ...r, endpoint: s.endpointName });
        return r;
      }
      // 1. The degrade level, whatever the endpoint's status.
      if (publishLevel) {
        calls.push('ssm:PutParameter');
        await c.ssm.send(new PutParameterCommand({ Name: s.parameterName, Value: value, Overwrite: true, Type: 'String' }));
      }
      // 2. Weights, when the endpoint accepts them.
      if (decision.setWeights) {
        calls.push('sagemaker:UpdateEndpointWeightsAndCapacities');
        try {
          await c.sagemaker.send(
            new UpdateEndpointWeightsAndCapacitiesCommand({
              EndpointName: s.endpointName,
              // Weights only: Application Auto Scaling owns the instance counts.
              DesiredWeightsAndCapacities: Object.entries(decision.setWeights).map(([VariantName, DesiredWeight]) => ({
                VariantName,
                DesiredWeight,
              })),
            }),
          );
        } catch (e: any) {
          if (e?.name === 'ValidationException' && /in-progress/i.test(String(e.message))) {
            reasons.push('endpoint update in progress (ValidationException): weights retried when the endpoint is InService again');
          } else {
            throw e;
          }
        }
      }
      // 3. Capacity through the scaler's own settings (never instance counts).
      if (capacity && capacityDiffers) {
        const applied = await applyCapacity(s, c, capacity, item.capacity, calls, reasons);
        if (applied) {
          calls.push('dynamodb:PutItem');
          await writeItem(s, c, item.version + 1, writeState ? JSON.stringify(decision.next) : item.raw!, capacity);
        }
      }
    }
    const result: EvaluationResult = { outcome: 'evaluated', state: decision.next.state, level: decision.level, reasons, calls };
    log({
      ...result,
      endpoint: s.endpointName,
      previous: prev.state,
      memory: readings.memory.at(-1)?.v,
      errors: readings.errors,
      invocations: readings.invocations,
      status: endpoint.status,
      effectiveShare: decision.effectiveShare,
      capacity,
      trigger: summarize(event),
    });
    emitMetric(s, decision.next.state, decision.effectiveShare);
    return result;
  } catch (e: any) {
    // AWS errors (after the SDK's retries): give up cleanly, the next trigger tries again.
    if (e?.$metadata) {
      const r: EvaluationResult = { outcome: 'failed', reasons: [`${e.name}: ${e.message}`], calls };
      log({ ...r, level: 'error' });
      return r;
    }
    throw e; // a bug: let Lambda retry, then the dead-letter queue keeps the event
  }
}

async function readItem(s: HandlerSettings, c: Clients): Promise<StoredItem> {
  const out = await c.dynamodb.send(new GetItemCommand({ TableName: s.tableName, Key: keyOf(s), ConsistentRead: true }));
  return itemFrom(out.Item);
}

function itemFrom(it: Record<string, any> | undefined): StoredItem {
  if (!it) return { version: 0 };
  let capacity: CapacityPlan | undefined;
  try {
    capacity = it.capacity?.S ? JSON.parse(it.capacity.S) : undefined;
  } catch {
    capacity = undefined;
  }
  return { version: Number(it.version?.N ?? '0') || 0, raw: it.state?.S, capacity };
}

/** Conditional write of version + 1; false when another evaluation wrote first. */
async function writeItem(s: HandlerSettings, c: Clients, version: number, state: string, capacity?: CapacityPlan): Promise<boolean> {
  try {
    await c.dynamodb.send(
      new PutItemCommand({
        TableName: s.tableName,
        Item: {
          ...keyOf(s),
          version: { N: String(version + 1) },
          state: { S: state },
          ...(capacity ? { capacity: { S: JSON.stringify(capacity) } } : {}),
        },
        ConditionExpression: version === 0 ? 'attribute_not_exists(pk)' : 'version = :v',
        ExpressionAttributeValues: version === 0 ? undefined : { ':v': { N: String(version) } },
      }),
    );
    return true;
  } catch (e: any) {
    if (e?.name === 'ConditionalCheckFailedException') return false;
    throw e;
  }
}

async function readPublished(s: HandlerSettings, c: Clients): Promise<{ level?: number; state?: string } | undefined> {
  try {
    return publishedFrom((await c.ssm.send(new GetParameterCommand({ Name: s.parameterName }))).Parameter?.Value);
  } catch (e: any) {
    if (e?.name === 'ParameterNotFound') return undefined;
    throw e;
  }
}

function publishedFrom(raw: string | undefined): { level?: number; state?: string } | undefined {
  try {
    const o = raw ? JSON.parse(raw) : undefined;
    return o && typeof o === 'object' ? { level: o.level, state: o.state } : undefined;
  } catch {
    return undefined;
  }
}

function sameCapacity(want: CapacityPlan, have: CapacityPlan | undefined, s: HandlerSettings): boolean {
  // Nothing applied yet means the template's settings: scale-in on, the fallback at its configured minimum.
  const h = have ?? { suspendPrimaryScaleIn: false, fallbackMinCapacity: s.fallbackCapacity?.min };
  return want.suspendPrimaryScaleIn === h.suspendPrimaryScaleIn && want.fallbackMinCapacity === h.fallbackMinCapacity;
}

/** Applies the capacity plan; true when every call succeeded. Failures are logged, never fatal. */
async function applyCapacity(
  s: HandlerSettings,
  c: Clients,
  want: CapacityPlan,
  have: CapacityPlan | undefined,
  calls: string[],
  reasons: string[],
): Promise<boolean> {
  const target = (variant: string) => ({
    ServiceNamespace: 'sagemaker' as const,
    ScalableDimension: 'sagemaker:variant:DesiredInstanceCount' as const,
    ResourceId: `endpoint/${s.endpointName}/variant/${variant}`,
  });
  let ok = true;
  const call = async (what: string, input: ConstructorParameters<typeof RegisterScalableTargetCommand>[0]) => {
    calls.push('application-autoscaling:RegisterScalableTarget');
    try {
      await c.autoscaling.send(new RegisterScalableTargetCommand(input));
      reasons.push(what);
    } catch (e: any) {
      ok = false;
      reasons.push(`${what} failed (${e?.name}): retried on the next evaluation`);
    }
  };
  if (s.primaryCapacity && want.suspendPrimaryScaleIn !== (have?.suspendPrimaryScaleIn ?? false)) {
    await call(want.suspendPrimaryScaleIn ? `${s.primaryVariant}: scale-in suspended` : `${s.primaryVariant}: scale-in resumed`, {
      ...target(s.primaryVariant),
      SuspendedState: { DynamicScalingInSuspended: want.suspendPrimaryScaleIn },
    });
  }
  if (
    s.fallbackVariant &&
    s.fallbackCapacity &&
    want.fallbackMinCapacity !== undefined &&
    want.fallbackMinCapacity !== (have?.fallbackMinCapacity ?? s.fallbackCapacity.min)
  ) {
    await call(`${s.fallbackVariant}: minimum capacity ${want.fallbackMinCapacity}`, {
      ...target(s.fallbackVariant),
      MinCapacity: want.fallbackMinCapacity,
    });
  }
  return ok;
}

/** What one evaluation reads from CloudWatch, parsed (readings plus the newest minute's traffic). */
export type MetricReadings = Readings & { newestMinuteInvocations?: number };

/** The GetMetricData range for an endpoint: memory at its period, the error window on minute boundaries. */
function metricWindow(s: HandlerSettings, now: number) {
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
function metricQueries(s: HandlerSettings, prefix: string): MetricDataQuery[] {
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
async function perGpuSeries(s: HandlerSettings, c: Clients, now: number, calls: string[]): Promise<MemoryPoint[]> {
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
function parseReadings(s: HandlerSettings, results: MetricDataResult[], prefix: string, perGpu: MemoryPoint[], now: number): MetricReadings {
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

async function readMetrics(s: HandlerSettings, c: Clients, now: number, calls: string[]): Promise<MetricReadings> {
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

function emitMetric(s: HandlerSettings, state: keyof typeof STATE_CODE, share: number): void {
  // Embedded Metric Format: Lambda turns this log line into CloudWatch metrics, no API call.
  console.log(
    JSON.stringify({
      _aws: {
        Timestamp: Date.now(),
        CloudWatchMetrics: [
          {
            Namespace: s.metricNamespace,
            Dimensions: [['EndpointName']],
            Metrics: [
              { Name: M.STATE, Unit: 'None' },
              { Name: M.FALLBACK_SHARE, Unit: 'Percent' },
              { Name: M.DEGRADE_LEVEL, Unit: 'None' },
            ],
          },
        ],
      },
      EndpointName: s.endpointName,
      [M.STATE]: STATE_CODE[state],
      [M.FALLBACK_SHARE]: Math.round(share * 100),
      [M.DEGRADE_LEVEL]: LEVEL[state],
    }),
  );
}

function log(o: object): void {
  console.log(JSON.stringify({ component: 'circuit-breaker', ...o }));
}

function summarize(event: unknown): unknown {
  if (!event || typeof event !== 'object') return typeof event;
  const e = event as Record<string, unknown>;
  return { source: e.source, detailType: e['detail-type'] };
}

// ---------------------------------------------------------------------------------------------
// Fleet mode: one function for every endpoint of a stack. Each endpoint's settings are an SSM
// parameter the construct writes (the function's environment lists their names); its state is its
// own item in the shared table. Reads are batched across endpoints; each endpoint is then decided
// and acted on separately, so one endpoint's failure or Updating status never holds up another's.
// ---------------------------------------------------------------------------------------------

/** Settings of a fleet function (from its environment). */
export interface FleetSettings {
  readonly tableName: string;
  /** Names of the endpoints' settings parameters. */
  readonly configParameters: string[];
}

export function fleetSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): FleetSettings {
  return { tableName: required(env, E.TABLE_NAME), configParameters: required(env, E.CONFIG_PARAMETERS).split(',').filter(Boolean) };
}

/** One endpoint's settings from its settings parameter (written by the CircuitBreaker construct with `shared`). */
export function settingsFromParameter(value: string, tableName: string): HandlerSettings {
  const o = JSON.parse(value);
  return { ...o, tableName, stateKey: o.endpointName, config: { ...DEFAULT_CONFIG, ...o.config, hasFallback: !!o.fallbackVariant } };
}

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

/** Lambda entry point: fleet mode when the function serves several endpoints. */
export async function handler(event: unknown): Promise<EvaluationResult | FleetResult> {
  if (process.env[E.CONFIG_PARAMETERS]) return evaluateFleet(event, fleetSettingsFromEnv(), clients());
  return evaluate(event, settingsFromEnv(), clients());
}
