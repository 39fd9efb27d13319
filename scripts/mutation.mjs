// `npm run mutation [-- --mutate lib/breaker/policy.ts]`: Stryker over the modules whose bugs reach
// users (stryker.config.json), incremental (reports/stryker-incremental.json: a rerun after a small
// change tests only what changed), then the score per file from its JSON report; and the runtime
// helper's own mutation run (scripts/mutate-python.py). Not part of `npm test`: a full run takes hours
// on 2 cores (about 5 s per mutant); see README "Working on the library".
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const only = args.includes('--python') ? 'python' : args.includes('--js') ? 'js' : 'both';
const pass = args.filter(a => a !== '--python' && a !== '--js');
let code = 0;
if (only !== 'python') {
  const r = spawnSync('npx', ['stryker', 'run', ...pass], { stdio: 'inherit' });
  code ||= r.status ?? 1;
  const report = 'reports/mutation/mutation.json';
  if (existsSync(report)) {
    const files = JSON.parse(readFileSync(report, 'utf8')).files;
    const rows = Object.entries(files).map(([file, f]) => {
      const by = s => f.mutants.filter(m => m.status === s).length;
      const killed = by('Killed') + by('Timeout');
      const survived = by('Survived') + by('NoCoverage');
      return [file, killed, survived, killed + survived ? (100 * killed) / (killed + survived) : 100];
    });
    console.log('\nmutation score per file (killed + timed out) / (killed + timed out + survived + no coverage):');
    for (const [file, k, s, score] of rows.sort((a, b) => a[0].localeCompare(b[0]))) {
      console.log(`  ${score.toFixed(1).padStart(5)} %  ${String(k).padStart(4)} killed  ${String(s).padStart(4)} survived  ${file}`);
    }
  }
}
if (only !== 'js') {
  const r = spawnSync('python3', ['scripts/mutate-python.py'], { stdio: 'inherit' });
  code ||= r.status ?? 1;
}
process.exit(code);
