/**
 * The breaker's capacity hold, through Application Auto Scaling's own settings (never instance counts):
 * the primary's dynamic scale-in suspended, the fallback's minimum raised.
 *
 * The live scalable targets are read before they are changed, and compared with what the plan wants on
 * every evaluation that holds capacity: a stack update that changes a target's bounds resets what the
 * breaker set, and CloudFormation returns no scalable-target ARN to watch it with (real-account.md item 31).
 * `RegisterScalableTarget` "changes only what it is given", but whether unsent `SuspendedState` fields
 * reset is not stated, so the whole `SuspendedState` is sent, the other two fields as read.
 */
import {
  DescribeScalableTargetsCommand,
  RegisterScalableTargetCommand,
  RegisterScalableTargetCommandInput,
  ScalableTarget,
} from '@aws-sdk/client-application-auto-scaling';
import { CapacityPlan } from '../../lib/breaker/policy';
import { Clients, HandlerSettings } from './settings';
import { log } from './telemetry';

/** What the function's RegisterScalableTarget calls address (their IAM request context). */
export const SCALABLE_TARGET_KEY = { ServiceNamespace: 'sagemaker', ScalableDimension: 'sagemaker:variant:DesiredInstanceCount' } as const;
const resourceId = (s: HandlerSettings, variant: string) => `endpoint/${s.endpointName}/variant/${variant}`;

/** True when the recorded settings are the plan (nothing recorded means the template's: scale-in on, the configured minimum). */
export function sameCapacity(want: CapacityPlan, have: CapacityPlan | undefined, s: HandlerSettings): boolean {
  const h = have ?? { suspendPrimaryScaleIn: false, fallbackMinCapacity: s.fallbackCapacity?.min };
  return (
    want.suspendPrimaryScaleIn === h.suspendPrimaryScaleIn &&
    (want.suspendPrimaryScheduled ?? false) === (h.suspendPrimaryScheduled ?? false) &&
    want.fallbackMinCapacity === h.fallbackMinCapacity
  );
}

/** The endpoint's scalable targets by resource id, or undefined when they cannot be read (then the record stands in). */
export async function readTargets(s: HandlerSettings, c: Clients, calls: string[]): Promise<Map<string, ScalableTarget> | undefined> {
  const ids = [s.primaryCapacity ? s.primaryVariant : undefined, s.fallbackCapacity ? s.fallbackVariant : undefined]
    .filter((v): v is string => v !== undefined)
    .map(v => resourceId(s, v));
  calls.push('application-autoscaling:DescribeScalableTargets');
  try {
    const out = await c.autoscaling.send(new DescribeScalableTargetsCommand({ ...SCALABLE_TARGET_KEY, ResourceIds: ids }));
    return new Map((out.ScalableTargets ?? []).map(t => [t.ResourceId!, t]));
  } catch (e: any) {
    log({ level: 'warn', endpoint: s.endpointName, message: `DescribeScalableTargets failed (${e?.name}): comparing with what was last applied` });
    return undefined;
  }
}

/** One RegisterScalableTarget call and what it does, for the decision log. */
export interface CapacityChange {
  readonly what: string;
  readonly input: RegisterScalableTargetCommandInput;
}

/** The endpoint as DescribeEndpoint shows it now: its status and each variant's instance counts. */
export interface LiveEndpoint {
  readonly status: string;
  /** Variant name → the instances it has (`CurrentInstanceCount`) and is moving to (`DesiredInstanceCount`). */
  readonly instances: Record<string, { readonly current?: number; readonly desired?: number }>;
}

/** The live endpoint from a DescribeEndpoint answer. */
export function liveEndpoint(d: {
  EndpointStatus?: string;
  ProductionVariants?: { VariantName?: string; CurrentInstanceCount?: number; DesiredInstanceCount?: number }[];
}): LiveEndpoint {
  return {
    status: d.EndpointStatus ?? 'Unknown',
    instances: Object.fromEntries(
      (d.ProductionVariants ?? []).map(v => [v.VariantName!, { current: v.CurrentInstanceCount, desired: v.DesiredInstanceCount }]),
    ),
  };
}

/**
 * True when a minimum the target already has did not take: the endpoint is InService and the variant has
 * (and is moving to) fewer instances than that minimum. `RegisterScalableTarget`: "If the specified
 * resource is not active in the target service, this operation does not change the resource's current
 * capacity" — a minimum raised while the endpoint was Updating is recorded on the target but never
 * applied, and nothing says it is later (real-account.md item 37). The call is idempotent: re-issued.
 */
export function minimumNotApplied(endpoint: LiveEndpoint | undefined, variant: string, min: number): boolean {
  if (endpoint?.status !== 'InService') return false;
  const v = endpoint.instances[variant];
  const count = v?.desired ?? v?.current;
  return count !== undefined && count < min;
}

/**
 * Pure: the calls that bring the targets to the plan — compared with the live targets when they were read
 * (so a reset by a stack update is re-applied), else with what was last applied; and, once the endpoint is
 * InService, a minimum the target has but the variant's instance count does not show is sent again.
 */
export function capacityChanges(
  s: HandlerSettings,
  want: CapacityPlan,
  live: Map<string, ScalableTarget> | undefined,
  recorded: CapacityPlan | undefined,
  endpoint?: LiveEndpoint,
): CapacityChange[] {
  const changes: CapacityChange[] = [];
  if (s.primaryCapacity) {
    const id = resourceId(s, s.primaryVariant);
    const target = live?.get(id);
    const suspended = live ? (target?.SuspendedState?.DynamicScalingInSuspended ?? false) : (recorded?.suspendPrimaryScaleIn ?? false);
    // Scheduled scaling is held only for a primary with scheduled actions (want.suspendPrimaryScheduled set).
    const holdSchedule = want.suspendPrimaryScheduled !== undefined;
    const scheduled = live ? (target?.SuspendedState?.ScheduledScalingSuspended ?? false) : (recorded?.suspendPrimaryScheduled ?? false);
    const scaleInDiffers = want.suspendPrimaryScaleIn !== suspended;
    const scheduleDiffers = holdSchedule && want.suspendPrimaryScheduled !== scheduled;
    if ((scaleInDiffers || scheduleDiffers) && (!live || target)) {
      const reset = (same: boolean) => (live && same ? ' again (the target was reset)' : '');
      const what = [
        ...(scaleInDiffers
          ? [
              `scale-in ${want.suspendPrimaryScaleIn ? 'suspended' : 'resumed'}${reset(recorded?.suspendPrimaryScaleIn === want.suspendPrimaryScaleIn)}`,
            ]
          : []),
        ...(scheduleDiffers
          ? [
              want.suspendPrimaryScheduled
                ? `scheduled scaling suspended until CLOSED${reset(recorded?.suspendPrimaryScheduled === true)} (a scheduled action due meanwhile is not run later)`
                : `scheduled scaling resumed${reset(recorded?.suspendPrimaryScheduled === false)}`,
            ]
          : []),
      ];
      changes.push({
        what: `${s.primaryVariant}: ${what.join(', ')}`,
        input: {
          ...SCALABLE_TARGET_KEY,
          ResourceId: id,
          SuspendedState: {
            DynamicScalingInSuspended: want.suspendPrimaryScaleIn,
            // The others as they are (when read): a suspension someone else set stays; scheduled scaling as the
            // plan wants it when the breaker holds it.
            ...(target ? { DynamicScalingOutSuspended: target.SuspendedState?.DynamicScalingOutSuspended ?? false } : {}),
            ...(holdSchedule
              ? { ScheduledScalingSuspended: want.suspendPrimaryScheduled }
              : target
                ? { ScheduledScalingSuspended: target.SuspendedState?.ScheduledScalingSuspended ?? false }
                : {}),
          },
        },
      });
    }
  }
  if (s.fallbackVariant && s.fallbackCapacity && want.fallbackMinCapacity !== undefined) {
    const id = resourceId(s, s.fallbackVariant);
    const target = live?.get(id);
    const min = live ? target?.MinCapacity : (recorded?.fallbackMinCapacity ?? s.fallbackCapacity.min);
    if (min !== undefined && want.fallbackMinCapacity !== min) {
      changes.push({
        what: `${s.fallbackVariant}: minimum capacity ${want.fallbackMinCapacity}${live && recorded?.fallbackMinCapacity === want.fallbackMinCapacity ? ' again (the target was reset)' : ''}`,
        input: { ...SCALABLE_TARGET_KEY, ResourceId: id, MinCapacity: want.fallbackMinCapacity },
      });
    } else if (target && minimumNotApplied(endpoint, s.fallbackVariant, want.fallbackMinCapacity)) {
      const v = endpoint!.instances[s.fallbackVariant];
      changes.push({
        what: `${s.fallbackVariant}: minimum capacity ${want.fallbackMinCapacity} re-sent (the target has it, the variant has ${v.desired ?? v.current} instance(s): a change made while the endpoint was updating does not change capacity)`,
        input: { ...SCALABLE_TARGET_KEY, ResourceId: id, MinCapacity: want.fallbackMinCapacity },
      });
    }
  }
  return changes;
}

/** Makes the calls; true when every one succeeded. Failures are logged, never fatal (the next evaluation retries). */
export async function applyCapacity(c: Clients, changes: CapacityChange[], calls: string[], reasons: string[]): Promise<boolean> {
  let ok = true;
  for (const change of changes) {
    calls.push('application-autoscaling:RegisterScalableTarget');
    try {
      await c.autoscaling.send(new RegisterScalableTargetCommand(change.input));
      reasons.push(change.what);
    } catch (e: any) {
      ok = false;
      // Application Auto Scaling answers a permission it validates and the caller lacks with a
      // ValidationException naming it (user guide, security_iam_permission_validation): keep its words.
      const detail = e?.name === 'ValidationException' && e?.message ? `: ${String(e.message).slice(0, 300)}` : '';
      reasons.push(`${change.what} failed (${e?.name}${detail}): retried on the next evaluation`);
    }
  }
  return ok;
}
