// `npm test` talks while it works (scripts/steps-runner.cjs, scripts/test.mjs): a line when a step starts
// and ends, at least one every heartbeat naming what runs and its last line, a step's "▸ " lines at once
// (the Node.js 24 download), and on a failure that step's output with the others stopped. Issue 40: it was
// silent for 31 s, then for 147 s.
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the runner is CommonJS, as scripts/test.mjs loads it
const { runSteps } = require('../scripts/steps-runner.cjs') as {
  runSteps(o: object): Promise<boolean>;
};

const node = (js: string) => `"${process.execPath}" -e "${js.replace(/"/g, '\\"')}"`;

/** Runs the runner, recording each line with the milliseconds since the start. */
async function record(steps: object, lanes: string[][], heartbeatMs: number) {
  const lines: { t: number; text: string }[] = [];
  const t0 = Date.now();
  const ok = await runSteps({
    steps,
    lanes,
    heartbeatMs,
    write: (s: string) => s.split('\n').forEach(text => text && lines.push({ t: Date.now() - t0, text })),
  });
  return { ok, lines, texts: lines.map(l => l.text) };
}

test('a line at once, one when each step starts and ends, and at least one per heartbeat naming what runs', async () => {
  const { ok, lines, texts } = await record(
    {
      slow: {
        cmd: node(
          "console.log('PASS test/first.test.ts'); setTimeout(() => console.log('PASS test/second.test.ts'), 900); setTimeout(() => {}, 1800)",
        ),
        why: 'a slow step',
      },
      after: { cmd: node("console.log('done')"), needs: ['slow'], why: 'a step that waits for it' },
      side: { cmd: node('setTimeout(() => {}, 300)'), why: 'a short step beside it' },
    },
    [['slow', 'after'], ['side']],
    400,
  );
  expect(ok).toBe(true);
  expect(texts[0]).toBe('npm test: 3 steps in 2 lanes side by side (slow → after; side); a line at least every 0.4 s names what runs');
  expect(lines[0].t).toBeLessThan(200);
  expect(texts).toEqual(expect.arrayContaining([expect.stringMatching(/^▶ slow\s+a slow step$/), expect.stringMatching(/^▶ side /)]));
  // While a step runs, no silence longer than the heartbeat (with slack for a loaded machine).
  const end = lines.find(l => /^✓ slow/.test(l.text))!.t;
  const during = lines.filter(l => l.t <= end).map(l => l.t);
  const gaps = during.slice(1).map((t, i) => t - during[i]);
  expect(Math.max(...gaps)).toBeLessThan(400 + 300);
  const beats = texts.filter(t => t.startsWith('… '));
  expect(beats.length).toBeGreaterThanOrEqual(2);
  expect(beats).toContainEqual(expect.stringMatching(/^… \d+ s: running slow \(\d+ s; last: PASS test\/(first|second)\.test\.ts\)$/));
  // 'after' starts only once 'slow' has ended; the run ends with the summary.
  expect(texts.findIndex(t => /^▶ after/.test(t))).toBeGreaterThan(texts.findIndex(t => /^✓ slow/.test(t)));
  expect(texts[texts.length - 1]).toMatch(/^all checks passed in [\d.]+ s \(2 lanes\)$/);
});

test('a step\'s "▸ " line is printed at once, not when the step ends', async () => {
  const { texts, lines } = await record(
    { dl: { cmd: node("console.log('▸ downloading a big thing, once …'); setTimeout(() => console.log('ready'), 1200)"), why: 'download' } },
    [['dl']],
    10_000,
  );
  const said = lines.find(l => l.text === '  dl: downloading a big thing, once …')!;
  const ended = lines.find(l => /^✓ dl/.test(l.text))!;
  expect(said).toBeDefined();
  expect(ended.t - said.t).toBeGreaterThan(800);
  expect(texts.filter(t => t.startsWith('… '))).toEqual([]); // 10 s heartbeat: none in 1.2 s
});

test("a failure prints that step's output and stops the others", async () => {
  const { ok, texts } = await record(
    {
      bad: { cmd: node("console.error('boom: the reason'); process.exit(3)"), why: 'fails' },
      long: { cmd: node('setTimeout(() => {}, 20000)'), why: 'would run 20 s' },
    },
    [['bad'], ['long']],
    5000,
  );
  expect(ok).toBe(false);
  expect(texts).toContain('boom: the reason');
  expect(texts.find(t => t.startsWith('✗ bad'))).toMatch(/failed with exit code 3 after/);
  expect(texts.some(t => t.startsWith('✓ long'))).toBe(false);
});

test('scripts/node24.mjs announces the Node.js 24 download before it starts it, and never fails the run', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'node24-'));
  const r = spawnSync(process.execPath, [path.join(__dirname, '..', 'scripts', 'node24.mjs')], {
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      ...process.env,
      NODE24_CACHE: path.join(tmp, 'node24'),
      npm_config_cache: path.join(tmp, 'npm-cache'), // nothing cached: it must go to the registry
      npm_config_registry: 'http://127.0.0.1:9/', // which is not there
      npm_config_fetch_retries: '0',
      npm_config_fetch_timeout: '5000',
    },
  });
  expect(r.status).toBe(0);
  const out = r.stdout.trim().split('\n');
  expect(out[0]).toMatch(/^▸ downloading Node\.js 24\.\d+\.\d+ \(node-\w+-\w+, about 50 MB; unpacked about 190 MB\) from the npm registry .*, once/);
  expect(out[out.length - 1]).toMatch(/^SKIP Node\.js 24: .* could not be installed from the npm registry/);
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('npm run test:quick: the bundle step and the quick jest lane, without the slow suites; CI keeps the full npm test', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
  expect(pkg.scripts['test:quick']).toBe('node scripts/test.mjs --quick');
  expect(fs.readFileSync(path.join(__dirname, '..', '.ci', 'run'), 'utf8')).toMatch(/^npm test$/m);
  const src = fs.readFileSync(path.join(__dirname, '..', 'scripts', 'test.mjs'), 'utf8');
  // Every suite the quick lane skips exists (a renamed suite would silently join the quick lane).
  const skips = [
    ...src.slice(src.indexOf('QUICK_SKIPS'), src.indexOf('};', src.indexOf('QUICK_SKIPS'))).matchAll(/'([\w.-]+\.(?:test|group)\.ts)'/g),
  ].map(m => m[1]);
  expect(skips.length).toBeGreaterThanOrEqual(6);
  for (const f of skips) expect(fs.existsSync(path.join(__dirname, f))).toBe(true);
});

describe('jest groups (scripts/jest-groups.cjs): suites that share one module registry under npm test', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { GROUPS } = require('../scripts/jest-groups.cjs') as { GROUPS: Record<string, string[]> };
  const grouped = Object.values(GROUPS).flat();

  test('npm test runs every suite exactly once: each grouped suite through its group file, every other one alone', () => {
    const r = spawnSync('npx', ['jest', '--config', 'scripts/jest-grouped.config.cjs', '--listTests'], {
      cwd: path.join(__dirname, '..'),
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    const listed = r.stdout
      .trim()
      .split('\n')
      .map(f => path.basename(f))
      .sort();
    const suites = fs.readdirSync(__dirname).filter(f => f.endsWith('.test.ts'));
    const alone = suites.filter(f => !grouped.includes(f));
    expect(listed).toEqual([...alone, ...Object.keys(GROUPS).map(g => `${g}.group.ts`)].sort());
    expect(grouped.length).toBe(new Set(grouped).size); // no suite in two groups, or twice in one
    expect(grouped.length).toBeGreaterThan(30);
    for (const f of grouped) expect([f, fs.existsSync(path.join(__dirname, f))]).toEqual([f, true]);
  });

  test('a grouped suite reaches nothing beyond itself: no client mocks, jest.mock, fake timers or process.env writes', () => {
    // Each would change the other suites of the registry (aws-sdk-client-mock patches the client class itself).
    const reach = /mockClient\(|jest\.mock\(|useFake[T]imers|process\.env(\.\w+|\[[^\]]+\])\s*=[^=]|delete process\.env/;
    for (const f of grouped) expect([f, reach.exec(fs.readFileSync(path.join(__dirname, f), 'utf8'))?.[0]]).toEqual([f, undefined]);
    // The check finds what it looks for (a suite left alone because of it).
    expect(reach.test(fs.readFileSync(path.join(__dirname, 'ops-doctor.test.ts'), 'utf8'))).toBe(true);
    expect(reach.test(fs.readFileSync(path.join(__dirname, 'examples.test.ts'), 'utf8'))).toBe(true);
  });
});

test('npm run mutation -- --help prints its usage and exits; an unknown option is refused (exit 2), nothing run', () => {
  // Before, any argument it did not know started every group's Stryker run (hours on 2 cores), --help included.
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ['scripts/mutation.mjs', ...args], { cwd: path.join(__dirname, '..'), encoding: 'utf8', timeout: 20_000 });
  const help = run('--help');
  expect([help.status, help.stdout]).toEqual([0, expect.stringMatching(/^usage: npm run mutation .*\n[\s\S]*exit codes: 0/)]);
  const typo = run('--gruop', 'sim-scan');
  expect([typo.status, typo.stderr]).toEqual([2, expect.stringMatching(/Unknown option '--gruop'[\s\S]*usage: npm run mutation/)]);
  const unknownGroup = run('--group', 'sim-scna');
  expect([unknownGroup.status, unknownGroup.stderr]).toEqual([2, expect.stringContaining('no mutation group sim-scna; the groups: ')]);
});
