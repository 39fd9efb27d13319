/**
 * Finds a deployed endpoint's breaker from AWS alone: the function whose environment names the endpoint
 * (its own breaker), or a shared function whose settings parameters include it (a fleet). Its settings
 * are read with the function's own parser (lambda/circuit-breaker/settings.ts), so they are what the
 * breaker itself runs with.
 */
import { ListFunctionsCommand } from '@aws-sdk/client-lambda';
import { GetParametersCommand } from '@aws-sdk/client-ssm';
import { HandlerSettings, settingsFromEnv, settingsFromParameter } from '../../lambda/circuit-breaker/settings';
import { BREAKER_ENV as E } from '../../lib/breaker/contract';
import { OpsClients } from './aws';

export interface FoundBreaker {
  readonly functionName: string;
  readonly functionArn: string;
  readonly shared: boolean;
  readonly settings: HandlerSettings;
}

/** The breaker of `endpointName`, or undefined when no function in the Region serves it. */
export async function findBreaker(c: OpsClients, endpointName: string): Promise<FoundBreaker | undefined> {
  let marker: string | undefined;
  const shared: { name: string; arn: string; table: string; params: string[] }[] = [];
  do {
    const page = await c.lambda.send(new ListFunctionsCommand({ Marker: marker, MaxItems: 50 }));
    for (const f of page.Functions ?? []) {
      const env = f.Environment?.Variables ?? {};
      if (env[E.ENDPOINT_NAME] === endpointName && env[E.TABLE_NAME] && env[E.PARAMETER_NAME]) {
        return { functionName: f.FunctionName!, functionArn: f.FunctionArn!, shared: false, settings: settingsFromEnv(env) };
      }
      if (env[E.CONFIG_PARAMETERS] && env[E.TABLE_NAME]) {
        shared.push({
          name: f.FunctionName!,
          arn: f.FunctionArn!,
          table: env[E.TABLE_NAME],
          params: env[E.CONFIG_PARAMETERS].split(',').filter(Boolean),
        });
      }
    }
    marker = page.NextMarker;
  } while (marker);
  for (const f of shared) {
    for (let i = 0; i < f.params.length; i += 10) {
      const out = await c.ssm.send(new GetParametersCommand({ Names: f.params.slice(i, i + 10) }));
      for (const p of out.Parameters ?? []) {
        try {
          const s = settingsFromParameter(p.Value ?? '', f.table);
          if (s.endpointName === endpointName) return { functionName: f.name, functionArn: f.arn, shared: true, settings: s };
        } catch {
          // not a breaker's settings: skip
        }
      }
    }
  }
  return undefined;
}
