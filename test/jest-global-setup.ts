// jest's globalSetup: every temporary directory the suites make goes under one directory, which
// test/jest-global-teardown.ts removes when the run ends. aws-cdk-lib's Template.fromStack, and
// app.synth() without an outdir, stage each cloud assembly (with a copy of the Lambda bundle) in a new
// os.tmpdir()/cdk.out* and never remove it: 345 directories (49 MB) per jest run, and 96,000 of them
// (23 GB) in /tmp here after a day of test and mutation runs. The workers inherit TMPDIR from this
// process; os.tmpdir() reads it on every call.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// eslint-disable-next-line no-restricted-syntax -- jest loads globalSetup as the module's default export
export default async function globalSetup() {
  const dir = mkdtempSync(join(tmpdir(), 'resilient-endpoint-jest-'));
  process.env.RESILIENT_ENDPOINT_JEST_TMP = dir;
  process.env.TMPDIR = dir;
}
