// API.md: the API reference as Construct Hub shows it (jsii-docgen, TypeScript), generated from the jsii
// assembly (`.jsii`) that scripts/check-jsii.mjs compiles in its scratch directory. The check generates
// it there and fails when the committed API.md differs, naming the first line that does;
// `npm run api` (check-jsii with --update-api) writes it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Generates API.md in `work` (which holds `.jsii`), compares it with `root`'s, or writes it there with `update`. */
export function checkApiReference(work, root, update) {
  execFileSync(join(root, 'node_modules', '.bin', 'jsii-docgen'), ['--language', 'typescript', '--output', join(work, 'API.md')], {
    cwd: work,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const fresh = readFileSync(join(work, 'API.md'), 'utf8');
  const committed = join(root, 'API.md');
  const current = existsSync(committed) ? readFileSync(committed, 'utf8') : '';
  if (fresh === current) return `API.md current (${fresh.length} characters)`;
  if (update) {
    writeFileSync(committed, fresh);
    return `API.md written (${fresh.length} characters)`;
  }
  const a = current.split('\n');
  const b = fresh.split('\n');
  const differs = b.findIndex((l, i) => l !== a[i]);
  const line = differs < 0 ? b.length : differs;
  const [was, now] = [a[line] ?? '<end of file>', b[line] ?? '<end of file>'];
  let col = 0;
  while (col < was.length && was[col] === now[col]) col++;
  const around = s => JSON.stringify(s.slice(Math.max(0, col - 40), col + 80));
  throw new Error(
    `API.md is not what jsii-docgen generates from the library's JSDoc (first difference at line ${line + 1}, column ${col + 1}: ` +
      `committed ${around(was)}, generated ${around(now)}). Fix: npm run api, and commit API.md.`,
  );
}
