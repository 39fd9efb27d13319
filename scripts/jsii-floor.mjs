// The peer-dependency floor: the lowest versions package.json's peerDependencies allow (aws-cdk-lib and
// constructs), installed once under node_modules/.floor. scripts/check-jsii.mjs compiles the library
// with jsii against them (its TypeScript program is the floor's type-check), and scripts/check-floor.mjs
// synthesizes every shape of stack at them. Installing needs npm's cache or the registry.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** { versions: {name: version}, dir, modules }: the floor of `root`'s peers, installed (npm) when missing. */
export function peerFloor(root) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const floorOf = range =>
    /^\^?(\d+\.\d+\.\d+)$/.exec(range)?.[1] ??
    (() => {
      throw new Error(`unsupported peer range ${range}`);
    })();
  const versions = Object.fromEntries(Object.entries(pkg.peerDependencies).map(([n, r]) => [n, floorOf(r)]));
  const dir = join(
    root,
    'node_modules',
    '.floor',
    Object.entries(versions)
      .map(([n, v]) => `${n}@${v}`)
      .join('+'),
  );
  const modules = join(dir, 'node_modules');
  if (!existsSync(join(modules, 'aws-cdk-lib', 'package.json'))) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'floor', private: true }));
    execFileSync(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent', ...Object.entries(versions).map(([n, v]) => `${n}@${v}`)],
      { cwd: dir, stdio: 'inherit' },
    );
  }
  for (const [n, v] of Object.entries(versions)) {
    const got = JSON.parse(readFileSync(join(modules, n, 'package.json'), 'utf8')).version;
    if (got !== v) throw new Error(`floor install has ${n}@${got}, wanted ${v}`);
  }
  return { versions, dir, modules };
}

/** "aws-cdk-lib 2.273.0, constructs 10.5.1" */
export const describeFloor = versions =>
  Object.entries(versions)
    .map(([n, v]) => `${n} ${v}`)
    .join(', ');
