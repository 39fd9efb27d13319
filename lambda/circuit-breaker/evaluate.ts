/**
 * One evaluation of one endpoint's breaker: thin AWS I/O around the pure policy in lib/breaker/policy.ts.
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
import { DescribeEndpointCommand, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import { PutParameterCommand } from '@aws-sdk/client-ssm';
import { ENDPOINT_EVENT_TYPES } from '../../lib/breaker/contract';
import { decide, EndpointView, initialState, serializeState, tryParseState } from '../../lib/breaker/policy';
import { applyCapacity, capacityChanges, liveEndpoint, readTargets, sameCapacity } from './capacity';
import { MetricReadings, readMetrics } from './metrics';
import { Clients, HandlerSettings } from './settings';
import { readItem, readPublished, StoredItem, writeItem } from './state-store';
import { emitMetric, log, summarize } from './telemetry';

/** Result of one invocation (also logged). */
export interface EvaluationResult {
  readonly outcome: 'evaluated' | 'ignored' | 'failed' | 'superseded';
  readonly state?: string;
  readonly level?: number;
  readonly reasons: string[];
  readonly calls: string[];
}

/** Throttling answers of SSM (Parameter Store's throughput is shared with every container's GetParameter). */
const THROTTLED = new Set(['ThrottlingException', 'TooManyUpdates', 'Throttling', 'RequestLimitExceeded']);

/**
 * Publishes the level, retried with backoff (0.1, 0.2, … 1.6 s; each try after the SDK's own retries) while
 * SSM throttles: the containers' reads share Parameter Store's 40 TPS with this write (real-account.md
 * item 29), and in an incident the level is what must land. If it still does not, the next evaluation
 * publishes it again (the published value is compared with the state every time).
 */
async function publishLevelValue(s: HandlerSettings, c: Clients, value: string, calls: string[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    calls.push('ssm:PutParameter');
    try {
      await c.ssm.send(new PutParameterCommand({ Name: s.parameterName, Value: value, Overwrite: true, Type: 'String' }));
      return;
    } catch (e: any) {
      if (!THROTTLED.has(e?.name) || attempt >= 5) throw e;
      await new Promise(resolve => setTimeout(resolve, 100 * 2 ** attempt));
    }
  }
}

/**
 * True for the event shapes the breaker is triggered by: its schedule, its alarms, SageMaker's endpoint
 * state and deployment state changes (both carry `detail.EndpointName`).
 */
export function isTrigger(event: any): boolean {
  if (!event || typeof event !== 'object') return false;
  if (event.source === 'aws.events' && event['detail-type'] === 'Scheduled Event') return true;
  if (event.source === 'aws.sagemaker' && ENDPOINT_EVENT_TYPES.includes(event['detail-type'])) return typeof event.detail?.EndpointName === 'string';
  return event.source === 'aws.cloudwatch' && event['detail-type'] === 'CloudWatch Alarm State Change' && typeof event.detail?.alarmName === 'string';
}

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
    const decision = decide(prev, readings, endpoint, variants, s.config, now);
    const reasons = [...decision.reasons];
    const value = serializeState(decision.next, reasons);
    const publishLevel = published?.level !== decision.level || published?.state !== decision.next.state;
    const capacity = s.primaryCapacity || s.fallbackCapacity ? decision.capacity : undefined;
    // While capacity is held (or being released) the live targets are read and compared with the plan:
    // a stack update may have reset what was applied. In steady CLOSED nothing is read.
    const recordDiffers = capacity !== undefined && !sameCapacity(capacity, item.capacity, s);
    const live = capacity && (decision.next.state !== 'CLOSED' || recordDiffers) ? await readTargets(s, c, calls) : undefined;
    // The live instance counts too: a minimum raised while the endpoint was Updating is re-sent once InService.
    const changes = capacity ? capacityChanges(s, capacity, live, item.capacity, liveEndpoint(d)) : [];
    const capacityDiffers = changes.length > 0 || recordDiffers;
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
      if (publishLevel) await publishLevelValue(s, c, value, calls);
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
        const applied = await applyCapacity(c, changes, calls, reasons);
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
