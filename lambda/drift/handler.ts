/**
 * The drift function's Lambda entry point (bundled by scripts/bundle-lambda.mjs): one run per scheduled
 * event (weekly Wasserstein, daily KL), its configuration from the environment. The statistics are
 * lib/drift/statistics.ts's, the capture format lib/drift/capture.ts's.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { DRIFT_CONFIG_ENV, DriftFunctionConfig, DriftRunInput } from '../../lib/drift/contract';
import { RunResult, runDrift } from './run';

let s3: S3Client | undefined;

/** The scheduled event's input, checked (a rule's constant input; anything else is refused). */
export function parseInput(event: unknown): DriftRunInput {
  const e = event as Partial<DriftRunInput> | undefined;
  if (!e || (e.distance !== 'wasserstein' && e.distance !== 'kl') || !(typeof e.windowHours === 'number' && e.windowHours >= 1)) {
    throw new Error(`drift: expected {"distance": "wasserstein" | "kl", "windowHours": ≥ 1}, got ${JSON.stringify(event)}`);
  }
  return { distance: e.distance, windowHours: Math.floor(e.windowHours) };
}

/** Lambda entry point. */
export async function handler(event: unknown, context?: { getRemainingTimeInMillis?: () => number }): Promise<RunResult> {
  const config = JSON.parse(process.env[DRIFT_CONFIG_ENV] ?? '') as DriftFunctionConfig;
  s3 ??= new S3Client({});
  return runDrift(parseInput(event), config, {
    s3,
    now: new Date(),
    remainingMs: () => context?.getRemainingTimeInMillis?.() ?? Number.MAX_SAFE_INTEGER,
    log: o => console.log(JSON.stringify(o)),
  });
}
