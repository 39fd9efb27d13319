// `node scripts/compare-templates.mjs [REV]` (default HEAD): synthesizes every shape of stack the library
// ships (test/template-shapes.ts, taken from the working tree for both sides) at REV and in the working
// tree, and compares the templates byte for byte. A refactor must leave them identical; the one
// allowed difference is an asset's hash (a moved line of Lambda code changes its bundle), which is
// reported separately. Exit code 1 when a template differs.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const rev = process.argv[2] ?? 'HEAD';
const work = mkdtempSync(join(tmpdir(), 'compare-templates-'));
const base = join(work, 'base');
const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, CDK_VALIDATION: 'false' } });

const synthScript = `
import { App } from 'aws-cdk-lib';
import { buildTemplateShapes } from './test/template-shapes';
const app = new App({ outdir: process.argv[2], context: JSON.parse(require('fs').readFileSync('cdk.json', 'utf8')).context });
buildTemplateShapes(app);
app.synth();
`;

function synth(tree, out) {
  cpSync(join(root, 'test', 'template-shapes.ts'), join(tree, 'test', 'template-shapes.ts'));
  writeFileSync(join(tree, 'synth-shapes.ts'), synthScript);
  run('npm', ['run', 'bundle', '--silent'], tree);
  run('npx', ['tsx', 'synth-shapes.ts', out], tree);
  rmSync(join(tree, 'synth-shapes.ts'));
}

const templates = dir => readdirSync(dir).filter(f => f.endsWith('.template.json'));
const hashes = /[0-9a-f]{64}/g;
try {
  execFileSync('git', ['worktree', 'add', '--detach', base, rev], { cwd: root, stdio: 'ignore' });
  symlinkSync(join(root, 'node_modules'), join(base, 'node_modules'));
  synth(base, join(work, 'before'));
  const head = join(work, 'head');
  cpSync(root, head, { recursive: true, filter: p => !/\/(node_modules|dist|cdk\.out[^/]*|\.git)(\/|$)/.test(p.slice(root.length)) });
  symlinkSync(join(root, 'node_modules'), join(head, 'node_modules'));
  synth(head, join(work, 'after'));
  const before = templates(join(work, 'before'));
  const after = templates(join(work, 'after'));
  let failed = false;
  const changedAssets = new Set();
  for (const f of new Set([...before, ...after])) {
    if (!before.includes(f) || !after.includes(f)) {
      console.log(`✗ ${f}: only ${before.includes(f) ? 'before' : 'after'}`);
      failed = true;
      continue;
    }
    const a = readFileSync(join(work, 'before', f), 'utf8');
    const b = readFileSync(join(work, 'after', f), 'utf8');
    if (a === b) {
      console.log(`= ${f}: byte-identical`);
    } else if (a.replace(hashes, 'HASH') === b.replace(hashes, 'HASH')) {
      const ha = a.match(hashes) ?? [];
      const hb = b.match(hashes) ?? [];
      ha.forEach((h, i) => h !== hb[i] && changedAssets.add(`${h.slice(0, 12)}… → ${hb[i].slice(0, 12)}…`));
      console.log(`≈ ${f}: identical but for asset hashes`);
    } else {
      console.log(`✗ ${f}: differs`);
      failed = true;
    }
  }
  if (changedAssets.size) console.log(`asset hashes that changed: ${[...changedAssets].join(', ')}`);
  console.log(failed ? `templates differ from ${rev}` : `${before.length} templates match ${rev}`);
  process.exitCode = failed ? 1 : 0;
} finally {
  if (existsSync(base)) run('git', ['worktree', 'remove', '--force', base], root);
  rmSync(work, { recursive: true, force: true });
}
