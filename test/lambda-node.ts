/**
 * The Node.js the breaker's bundle is run on in test/lambda-bundle.test.ts: Node.js 24, as Lambda's
 * nodejs24.x runs it, from node_modules/.cache/node24 (scripts/node24.mjs installs it from the npm
 * registry; `npm test` runs that first), or — where it could not be installed — this machine's Node.js,
 * with the reason.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/** The runtime of the function (lib/breaker/wiring.ts: lambda.Runtime.NODEJS_24_X). */
export const LAMBDA_NODE_MAJOR = 24;

/** Node.js 24's binary and version, or why there is none. */
export type LambdaNode = { readonly path: string; readonly version: string } | { readonly path?: undefined; readonly reason: string };

export function lambdaNode(cache = path.join(__dirname, '..', 'node_modules', '.cache', 'node24')): LambdaNode {
  const statusFile = path.join(cache, 'status.json');
  if (!fs.existsSync(statusFile)) {
    return { reason: 'not installed (run `node scripts/node24.mjs`, as `npm test` does, to install it from the npm registry)' };
  }
  const status = JSON.parse(fs.readFileSync(statusFile, 'utf8')) as { path?: string; error?: string };
  if (!status.path) return { reason: status.error ?? 'not installed' };
  try {
    const version = execFileSync(status.path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    if (Number(version.split('.')[0]) !== LAMBDA_NODE_MAJOR) return { reason: `${status.path} is Node.js ${version}` };
    return { path: status.path, version };
  } catch (e) {
    return { reason: `${status.path} does not run: ${(e as Error).message.split('\n')[0]}` };
  }
}
