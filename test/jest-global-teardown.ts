// jest's globalTeardown: removes the run's temporary directory (test/jest-global-setup.ts).
import { rmSync } from 'node:fs';

// eslint-disable-next-line no-restricted-syntax -- jest loads globalTeardown as the module's default export
export default async function globalTeardown() {
  const dir = process.env.RESILIENT_ENDPOINT_JEST_TMP;
  if (dir) rmSync(dir, { recursive: true, force: true });
}
