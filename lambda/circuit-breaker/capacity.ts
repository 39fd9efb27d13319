/**
 * The breaker's capacity hold, through Application Auto Scaling's own settings (never instance counts):
 * the primary's dynamic scale-in suspended, the fallback's minimum raised.
 */
import { RegisterScalableTargetCommand } from '@aws-sdk/client-application-auto-scaling';
import { CapacityPlan } from '../../lib/breaker/policy';
import { Clients, HandlerSettings } from './settings';

export function sameCapacity(want: CapacityPlan, have: CapacityPlan | undefined, s: HandlerSettings): boolean {
  // Nothing applied yet means the template's settings: scale-in on, the fallback at its configured minimum.
  const h = have ?? { suspendPrimaryScaleIn: false, fallbackMinCapacity: s.fallbackCapacity?.min };
  return want.suspendPrimaryScaleIn === h.suspendPrimaryScaleIn && want.fallbackMinCapacity === h.fallbackMinCapacity;
}

/** Applies the capacity plan; true when every call succeeded. Failures are logged, never fatal. */
export async function applyCapacity(
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
