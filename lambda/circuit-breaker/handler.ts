/**
 * The circuit breaker's Lambda entry point (bundled by scripts/bundle-lambda.mjs): fleet mode when the
 * function serves several endpoints (lambda/circuit-breaker/fleet.ts), one endpoint otherwise
 * (lambda/circuit-breaker/evaluate.ts). The decisions are lib/breaker/policy.ts's.
 */
import { BREAKER_ENV as E } from '../../lib/breaker/contract';
import { evaluate, EvaluationResult } from './evaluate';
import { evaluateFleet, FleetResult } from './fleet';
import { Clients, createClients, fleetSettingsFromEnv, settingsFromEnv } from './settings';

let defaultClients: Clients | undefined;
function clients(): Clients {
  defaultClients ??= createClients();
  return defaultClients;
}

/** Lambda entry point: fleet mode when the function serves several endpoints. */
export async function handler(event: unknown): Promise<EvaluationResult | FleetResult> {
  if (process.env[E.CONFIG_PARAMETERS]) return evaluateFleet(event, fleetSettingsFromEnv(), clients());
  return evaluate(event, settingsFromEnv(), clients());
}
