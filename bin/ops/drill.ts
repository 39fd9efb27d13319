/**
 * `sagemaker-resilient-endpoint drill`: a game day (incident B's "降级方案的实际演练"). It forces the
 * breaker into DEGRADED or OPEN through the override the breaker's policy honours (`drill` on the state
 * item, with an expiry: lib/breaker/policy.ts), runs the function at once, and watches what a real
 * incident would do — the level published, the container answering degraded (a probe request),
 * weights moved, capacity held — then ends the override and watches the breaker's own way back to
 * CLOSED. It refuses when the endpoint is already degraded for real, and never leaves an override
 * behind: the override expires on its own, and an interrupted drill ends it first.
 */
import { DescribeScalableTargetsCommand } from '@aws-sdk/client-application-auto-scaling';
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { InvokeCommand } from '@aws-sdk/client-lambda';
import { DescribeEndpointCommand } from '@aws-sdk/client-sagemaker';
import { InvokeEndpointCommand } from '@aws-sdk/client-sagemaker-runtime';
import { GetParameterCommand } from '@aws-sdk/client-ssm';
import { publishedFrom } from '../../lambda/circuit-breaker/state-store';
import { HandlerSettings } from '../../lambda/circuit-breaker/settings';
import { BreakerState, serializeState, tryParseState } from '../../lib/breaker/policy';
import { errorName, OpsClients } from './aws';
import { findBreaker, FoundBreaker } from './discover';

export interface DrillOptions {
  readonly endpointName: string;
  readonly to: 'DEGRADED' | 'OPEN';
  /** How long the override holds, ms. */
  readonly holdMs: number;
  /** How long to watch the way back to CLOSED after the override ends, ms. */
  readonly watchBackMs: number;
  readonly dryRun?: boolean;
  /** A request body to send while degraded (the container's answer shows the level it applies). */
  readonly probe?: { body: string; contentType: string };
  /** Seconds between observations. @default 5 */
  readonly pollSeconds?: number;
}

/** What the drill saw, with the seconds from the override's start to each event. */
export interface DrillReport {
  readonly endpointName: string;
  readonly drillId: string;
  readonly to: 'DEGRADED' | 'OPEN';
  readonly dryRun: boolean;
  readonly refused?: string;
  readonly interrupted?: boolean;
  readonly timeline: { readonly seconds: number; readonly event: string }[];
  /** Seconds to: the level published, the probe answered degraded, weights moved, capacity held, the override ended, CLOSED again. */
  readonly levelPublishedS?: number;
  readonly containerDegradedS?: number;
  readonly weightsMovedS?: number;
  readonly capacityHeldS?: number;
  readonly overrideEndedS?: number;
  readonly closedAgainS?: number;
  /**
   * The capacity hold the breaker should make, when it holds capacity (autoscaling on the primary): the
   * primary's dynamic scale-in suspended.
   */
  readonly capacityHoldExpected?: string;
  /**
   * The drill proved the path: level published and, where there is a fallback, weights moved, and where
   * the breaker holds capacity, the hold seen on the scalable target.
   */
  readonly ok: boolean;
  /** What to do when the drill was refused or did not see the path work. */
  readonly fix?: string;
}

/** Time and waiting, injectable for tests. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}
export const REAL_CLOCK: Clock = { now: () => Date.now(), sleep: ms => new Promise(r => setTimeout(r, ms)) };

const LEVEL: Record<string, number> = { CLOSED: 0, RECOVERING: 1, DEGRADED: 1, OPEN: 2 };

async function readState(c: OpsClients, s: HandlerSettings): Promise<{ version: number; state?: BreakerState; item?: Record<string, any> }> {
  const out = await c.dynamodb.send(
    new GetItemCommand({ TableName: s.tableName, Key: { pk: { S: s.stateKey ?? 'breaker' } }, ConsistentRead: true }),
  );
  return { version: Number(out.Item?.version?.N ?? '0') || 0, state: tryParseState(out.Item?.state?.S), item: out.Item };
}

/** Writes the state with version + 1 if nobody wrote since `version` (the breaker's own compare-and-swap); false otherwise. */
async function writeState(
  c: OpsClients,
  s: HandlerSettings,
  version: number,
  item: Record<string, any> | undefined,
  state: BreakerState,
  reason: string,
): Promise<boolean> {
  try {
    await c.dynamodb.send(
      new PutItemCommand({
        TableName: s.tableName,
        Item: {
          ...(item ?? {}),
          pk: { S: s.stateKey ?? 'breaker' },
          version: { N: String(version + 1) },
          state: { S: serializeState(state, [reason]) },
        },
        ConditionExpression: version === 0 ? 'attribute_not_exists(pk)' : 'version = :v',
        ExpressionAttributeValues: version === 0 ? undefined : { ':v': { N: String(version) } },
      }),
    );
    return true;
  } catch (e) {
    if (errorName(e) === 'ConditionalCheckFailedException') return false;
    throw e;
  }
}

/**
 * Puts the override on the state item. Refuses (returns the reason) when the breaker is not CLOSED or
 * another drill holds it: a drill never runs on a real incident.
 */
export async function startOverride(
  c: OpsClients,
  s: HandlerSettings,
  to: 'DEGRADED' | 'OPEN',
  id: string,
  until: number,
  now: number,
): Promise<string | undefined> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const { version, state, item } = await readState(c, s);
    if (state && state.state !== 'CLOSED')
      return `the breaker is ${state.state} since ${new Date(state.since).toISOString()}: no drill during a real degradation`;
    if (state?.drill && state.drill.until > now)
      return `drill ${state.drill.id} is already running until ${new Date(state.drill.until).toISOString()}`;
    const base: BreakerState = state ?? { state: 'CLOSED', since: now, share: 0, entryShare: 0, step: 0 };
    if (await writeState(c, s, version, item, { ...base, drill: { to, until, id } }, `drill ${id}: ${to} until ${new Date(until).toISOString()}`))
      return undefined;
  }
  return 'the state item kept changing under the drill (5 conflicting writes): try again';
}

/** Ends the override (its expiry set to now); the breaker's own evaluation takes over. True when one was ended. */
export async function endOverride(c: OpsClients, s: HandlerSettings, id: string, now: number): Promise<boolean> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const { version, state, item } = await readState(c, s);
    if (!state?.drill || state.drill.id !== id || state.drill.until <= now) return false;
    if (await writeState(c, s, version, item, { ...state, drill: { ...state.drill, until: now } }, `drill ${id} ended`)) return true;
  }
  throw new Error(`could not end drill ${id} after 10 conflicting writes: it expires on its own at the end of its hold`);
}

/** Runs the breaker now (an asynchronous invocation with the schedule's event), instead of waiting for its next minute. */
async function kick(c: OpsClients, b: FoundBreaker): Promise<void> {
  await c.lambda.send(
    new InvokeCommand({
      FunctionName: b.functionName,
      InvocationType: 'Event',
      Payload: Buffer.from(JSON.stringify({ source: 'aws.events', 'detail-type': 'Scheduled Event', detail: { drill: true } })),
    }),
  );
}

/** One observation: the published level, the fallback's share, the primary's scale-in suspension, the probe's answer. */
async function observe(c: OpsClients, b: FoundBreaker, probe: DrillOptions['probe']) {
  const s = b.settings;
  const level = publishedFrom((await c.ssm.send(new GetParameterCommand({ Name: s.parameterName }))).Parameter?.Value);
  const ep = await c.sagemaker.send(new DescribeEndpointCommand({ EndpointName: s.endpointName }));
  const total = (ep.ProductionVariants ?? []).reduce((x, v) => x + (v.CurrentWeight ?? 0), 0) || 1;
  const share = s.fallbackVariant ? (ep.ProductionVariants?.find(v => v.VariantName === s.fallbackVariant)?.CurrentWeight ?? 0) / total : 0;
  let held: boolean | undefined;
  if (s.primaryCapacity) {
    const t = await c.autoscaling.send(
      new DescribeScalableTargetsCommand({ ServiceNamespace: 'sagemaker', ResourceIds: [`endpoint/${s.endpointName}/variant/${s.primaryVariant}`] }),
    );
    held = t.ScalableTargets?.[0]?.SuspendedState?.DynamicScalingInSuspended === true;
  }
  let containerLevel: number | undefined;
  if (probe) {
    try {
      const out = await c.runtime.send(
        new InvokeEndpointCommand({ EndpointName: s.endpointName, ContentType: probe.contentType, Body: Buffer.from(probe.body) }),
      );
      const o = JSON.parse(Buffer.from(out.Body ?? new Uint8Array()).toString('utf8'));
      containerLevel = Number.isFinite(o?.degradeLevel) ? o.degradeLevel : undefined;
    } catch (e) {
      // A rejection at level 2 reaches the client as ModelError (424) with the container's 413 in OriginalStatusCode.
      const err = e as { OriginalStatusCode?: number; OriginalMessage?: string };
      if (errorName(e) === 'ModelError' && err.OriginalStatusCode === 413 && /degraded/.test(err.OriginalMessage ?? '')) containerLevel = 2;
    }
  }
  return { level: level?.level, state: level?.state, share, held, containerLevel, status: ep.EndpointStatus };
}

/**
 * The drill. `signal` aborts it early (Ctrl-C): the override is ended before it returns.
 */
export async function drill(c: OpsClients, o: DrillOptions, clock: Clock = REAL_CLOCK, signal?: AbortSignal): Promise<DrillReport> {
  const start = clock.now();
  const id = `drill-${new Date(start).toISOString().replace(/[-:]/g, '').slice(0, 15)}`;
  const timeline: { seconds: number; event: string }[] = [];
  const at = () => Math.round((clock.now() - start) / 1000);
  const note = (event: string) => timeline.push({ seconds: at(), event });
  const base = { endpointName: o.endpointName, drillId: id, to: o.to, dryRun: !!o.dryRun, timeline };
  const b = await findBreaker(c, o.endpointName);
  if (!b) {
    const refused = `no breaker serves ${o.endpointName} in this Region`;
    return { ...base, refused, ok: false, fix: refusalFix(refused, o.endpointName) };
  }
  const current = await readState(c, b.settings);
  if (current.state && current.state.state !== 'CLOSED') {
    return {
      ...base,
      refused: `the breaker is ${current.state.state} since ${new Date(current.state.since).toISOString()}: no drill during a real degradation`,
      ok: false,
      fix: refusalFix('degraded', o.endpointName),
    };
  }
  if (o.dryRun) {
    note(
      `would set drill ${id} on ${b.settings.tableName} (${b.settings.stateKey ?? 'breaker'}): ${o.to} until +${Math.round(o.holdMs / 1000)} s, and run ${b.functionName}`,
    );
    note(
      `would watch ${b.settings.parameterName} for level ${LEVEL[o.to]}${b.settings.fallbackVariant ? `, ${b.settings.fallbackVariant}'s weight` : ''}${b.settings.primaryCapacity ? ', the primary scale-in suspension' : ''}${o.probe ? ', the probe answer' : ''}`,
    );
    note(`would end the override and watch the way back to CLOSED for up to ${Math.round(o.watchBackMs / 1000)} s`);
    return { ...base, ok: true };
  }
  const until = start + o.holdMs;
  const refused = await startOverride(c, b.settings, o.to, id, until, start);
  if (refused) return { ...base, refused, ok: false, fix: refusalFix(refused, o.endpointName) };
  note(`override set: ${o.to} until ${new Date(until).toISOString()}`);
  const d = { base, id, until, at, note, settled: false };
  try {
    return await watch(c, b, o, clock, signal, d);
  } catch (e) {
    // An error before the override was ended: the caller says it may be left, and until when (it expires on its own then).
    if (!d.settled && e && typeof e === 'object') Object.assign(e, { overrideUntil: until });
    throw e;
  }
}

/** The drill once its override is set: the hold, the override's end, the way back. */
async function watch(
  c: OpsClients,
  b: FoundBreaker,
  o: DrillOptions,
  clock: Clock,
  signal: AbortSignal | undefined,
  d: {
    base: Pick<DrillReport, 'endpointName' | 'drillId' | 'to' | 'dryRun' | 'timeline'>;
    id: string;
    until: number;
    at: () => number;
    note: (event: string) => void;
    /** Set once the override is ended (or seen expired). */
    settled: boolean;
  },
): Promise<DrillReport> {
  const { base, id, until, at, note } = d;
  const seen: Partial<Record<'level' | 'container' | 'weights' | 'held' | 'ended' | 'closed', number>> = {};
  const poll = (o.pollSeconds ?? 5) * 1000;
  try {
    await kick(c, b);
    note(`${b.functionName} invoked`);
    while (clock.now() < until && !signal?.aborted) {
      const x = await observe(c, b, o.probe);
      if (seen.level === undefined && x.level !== undefined && x.level >= LEVEL[o.to]) {
        note(`level ${x.level} published (${x.state})`);
        seen.level = at();
      }
      if (seen.container === undefined && x.containerLevel !== undefined && x.containerLevel >= 1) {
        note(`the container answers at level ${x.containerLevel}`);
        seen.container = at();
      }
      if (seen.weights === undefined && x.share > 0) {
        note(`${b.settings.fallbackVariant} carries ${(100 * x.share).toFixed(0)} % of the traffic (endpoint ${x.status})`);
        seen.weights = at();
      }
      if (seen.held === undefined && x.held) {
        note('primary scale-in suspended');
        seen.held = at();
      }
      await clock.sleep(Math.min(poll, Math.max(0, until - clock.now())));
    }
  } finally {
    // Always: the override must not outlive the drill (it would expire on its own at `until` anyway).
    const ended = await endOverride(c, b.settings, id, clock.now());
    d.settled = true;
    note(ended ? 'override ended' : 'override expired at the end of its hold');
    seen.ended = at();
  }
  const interrupted = !!signal?.aborted;
  if (!interrupted) {
    await kick(c, b);
    const back = clock.now() + o.watchBackMs;
    while (clock.now() < back && !signal?.aborted) {
      const x = await observe(c, b, undefined);
      if (x.state === 'CLOSED' && x.level === 0) {
        note('CLOSED again (level 0)');
        seen.closed = at();
        break;
      }
      await clock.sleep(Math.min(poll * 6, Math.max(0, back - clock.now())));
    }
    if (seen.closed === undefined)
      note(`not CLOSED within ${Math.round(o.watchBackMs / 1000)} s: the breaker keeps recovering on its own (no override is left)`);
  }
  const expectHold = !!b.settings.primaryCapacity;
  if (expectHold && seen.held === undefined)
    note(
      `the capacity hold was not seen: ${b.settings.primaryVariant}'s scale-in never showed as suspended on its scalable target (see the function's decision log: a RegisterScalableTarget failure names its cause)`,
    );
  const ok = seen.level !== undefined && (!b.settings.fallbackVariant || seen.weights !== undefined) && (!expectHold || seen.held !== undefined);
  const fixes: string[] = [];
  const log = `${b.functionName}'s decision log (CloudWatch Logs)`;
  if (seen.level === undefined)
    fixes.push(`the level was not published: read ${log}, and run doctor --endpoint ${o.endpointName} (breaker-runs, level-parameter)`);
  if (b.settings.fallbackVariant && seen.weights === undefined)
    fixes.push(
      `${b.settings.fallbackVariant}'s weight did not move: weights change only while the endpoint is InService; read ${log} for UpdateEndpointWeightsAndCapacities`,
    );
  if (expectHold && seen.held === undefined)
    fixes.push(
      `the capacity hold was not seen: read ${log} for the RegisterScalableTarget error (docs/operations.md: what the breaker's role may do)`,
    );
  return {
    ...base,
    interrupted: interrupted || undefined,
    levelPublishedS: seen.level,
    containerDegradedS: seen.container,
    weightsMovedS: seen.weights,
    capacityHeldS: seen.held,
    overrideEndedS: seen.ended,
    closedAgainS: seen.closed,
    capacityHoldExpected: expectHold ? `${b.settings.primaryVariant} scale-in suspended` : undefined,
    ok,
    ...(ok || interrupted ? {} : { fix: fixes.join('; ') }),
  };
}

/** The fix for a refusal (startOverride's reasons and drill's own). */
function refusalFix(refused: string, endpointName: string): string {
  if (/^no breaker serves/.test(refused))
    return `check --endpoint and --region (the endpoint's Region); an endpoint deployed with circuitBreaker off has no breaker to drill; doctor --endpoint ${endpointName} names the function it finds`;
  if (/is already running until (\S+)/.test(refused))
    return `wait until ${/until (\S+)/.exec(refused)![1]} (that drill's override expires on its own then), then run drill again`;
  if (/kept changing/.test(refused)) return 'run drill again';
  return `no drill during a real degradation: wait until doctor --endpoint ${endpointName} shows the breaker CLOSED, then run drill again`;
}

export function formatDrill(r: DrillReport): string {
  if (r.refused) return `drill refused: ${r.refused}${r.fix ? `\nfix: ${r.fix}` : ''}`;
  const lines = [`drill ${r.drillId} on ${r.endpointName}: ${r.to}${r.dryRun ? ' (dry run)' : ''}`, '', '| + s | event |', '|---|---|'];
  for (const e of r.timeline) lines.push(`| ${e.seconds} | ${e.event} |`);
  if (!r.dryRun) {
    const f = (s?: number) => (s === undefined ? 'not seen' : `${s} s`);
    lines.push(
      '',
      `level published ${f(r.levelPublishedS)}; container degraded ${f(r.containerDegradedS)}; weights moved ${f(r.weightsMovedS)}; capacity held ${r.capacityHoldExpected ? f(r.capacityHeldS) : 'not expected (no autoscaling)'}; CLOSED again ${f(r.closedAgainS)}${r.interrupted ? ' (interrupted)' : ''}: ${r.ok ? 'the path works' : 'FAILED: see what was not seen'}`,
    );
    if (r.fix) lines.push(`fix: ${r.fix}`);
  }
  return lines.join('\n');
}
