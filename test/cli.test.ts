// The command-line tools as a user meets them (bin/cli.ts, bin/simulate.ts's arguments, bench/run.ts's
// arguments): help and version exit 0; an unknown option, a stray argument or a malformed value is an
// error naming the flag, exit 2 (a usage error), before anything runs.
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { benchArgs } from '../bench/run';
import { main } from '../bin/cli';

/** Runs `main` with console output captured: the exit code, stdout and stderr. */
async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out = jest.spyOn(console, 'log').mockImplementation(() => {});
  const err = jest.spyOn(console, 'error').mockImplementation(() => {});
  try {
    const code = await main(argv);
    const text = (m: jest.SpyInstance) => m.mock.calls.map(c => String(c[0])).join('\n');
    return { code, out: text(out), err: text(err) };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

const VERSION = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')).version;

describe('sagemaker-resilient-endpoint: help and version', () => {
  test.each([['--help'], ['-h'], ['help']])('%s: the commands on stdout, exit 0', async flag => {
    const r = await run(flag);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toMatch(/^usage: sagemaker-resilient-endpoint <command> \[options\]/);
    for (const cmd of ['plan', 'simulate', 'doctor', 'drill']) expect(r.out).toMatch(new RegExp(`^  ${cmd} `, 'm'));
  });

  test.each([['--version'], ['-v']])("%s: the package's version, exit 0", async flag => {
    expect(await run(flag)).toEqual({ code: 0, out: VERSION, err: '' });
  });

  test('no command: the usage on stderr, exit 2; an unknown command is named', async () => {
    const none = await run();
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/^usage: /);
    const unknown = await run('plna');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/^sagemaker-resilient-endpoint: unknown command 'plna' \(did you mean plan\?\)\n/);
    const option = await run('--verison');
    expect([option.code, option.err.split('\n')[0]]).toEqual([
      2,
      "sagemaker-resilient-endpoint: unknown option '--verison' (did you mean --version?)",
    ]);
    expect((await run('deploy')).err.split('\n')[0]).toBe("sagemaker-resilient-endpoint: unknown command 'deploy'");
  });

  test.each([
    ['plan', '--help', /^usage: sagemaker-resilient-endpoint plan --latency MS --qps QPS/],
    ['plan', '-h', /^usage: sagemaker-resilient-endpoint plan /],
    ['simulate', '--help', /^usage: sagemaker-resilient-endpoint simulate/],
    ['simulate', '-h', /^usage: sagemaker-resilient-endpoint simulate/],
    ['doctor', '--help', /^usage: sagemaker-resilient-endpoint doctor --endpoint NAME/],
    ['doctor', '-h', /^usage: sagemaker-resilient-endpoint doctor /],
    ['drill', '-h', /^usage: sagemaker-resilient-endpoint drill --endpoint NAME/],
  ])('%s %s: its options on stdout, exit 0, nothing run', async (cmd, flag, usage) => {
    const r = await run(cmd, flag);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toMatch(usage);
    expect(r.out).not.toMatch(/instance count|wrote /);
  });
});

describe('every command refuses an option it does not know, with or without a value: did-you-mean, exit 2, nothing run', () => {
  // doctor and drill used to skip a misspelt option and its value: `--regoin eu-west-1` ran and FAILed
  // "Region is missing", `--tiemout 5s` ran 60 s, `drill --hodl 5m --dry-run` called AWS.
  test.each([
    [['plan', '--latency', '50', '--qps', '200', '--saftey', '1.2'], 'plan: unknown option --saftey (did you mean --safety?)'],
    [['simulate', '--matrix', '--seeeds', '1'], 'simulate: unknown option --seeeds (did you mean --seeds?)'],
    [['doctor', '--endpoint', 'rec', '--regoin', 'eu-west-1'], 'doctor: unknown option --regoin (did you mean --region?)'],
    [['doctor', '--endpoint', 'rec', '--tiemout', '5s'], 'doctor: unknown option --tiemout (did you mean --timeout?)'],
    [['doctor', '--endpoint', 'rec', '--jsno'], 'doctor: unknown option --jsno (did you mean --json?)'],
    [['doctor', '--endpoint', 'rec', 'eu-west-1'], "doctor: unexpected argument 'eu-west-1'"],
    [['drill', '--endpoint', 'rec', '--to', 'DEGRADED', '--hodl', '5m', '--dry-run'], 'drill: unknown option --hodl (did you mean --hold?)'],
    [['drill', '--endpoint', 'rec', '--to', 'DEGRADED', '--dryrun'], 'drill: unknown option --dryrun (did you mean --dry-run?)'],
    [['drill', '--endpoint', 'rec', '--to', 'DEGRADED', '--watchback', '10m'], 'drill: unknown option --watchback (did you mean --watch-back?)'],
    [['drill', '--endpoint', 'rec', '--to', 'OPEN', '--json=yes'], 'drill: --json takes no value'],
  ])('%j', async (argv, message) => {
    // No Region and no credentials anywhere: a command that went on to call AWS would fail differently.
    const env = { ...process.env };
    for (const k of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE', 'AWS_ACCESS_KEY_ID']) delete process.env[k];
    try {
      const started = Date.now();
      const r = await run(...argv);
      expect(r.code).toBe(2);
      expect(r.err.split('\n')[0]).toBe(message);
      expect(r.err).toMatch(new RegExp(`\\n\\n?usage: sagemaker-resilient-endpoint ${argv[0]} `));
      expect(r.out).toBe('');
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      process.env = env;
    }
  });

  test('doctor and drill: every mistake at once, each with its range', async () => {
    const d = await run('doctor', '--timeout', '2s');
    expect(d.err.split('\n')[0]).toBe('doctor: --endpoint NAME is required; --timeout: got 2s; allowed: 5s to 10m');
    const r = await run('drill', '--to', 'HALF', '--hold', '2h', '--watch-back', 'soon', '--content-type', 'text/csv');
    expect(r.code).toBe(2);
    expect(r.err.split('\n')[0]).toBe(
      "drill: --endpoint NAME is required; --to: got 'HALF'; allowed: DEGRADED or OPEN; --hold: got 2h; allowed: 1m to 1h (the override's expiry is the safety net); " +
        "--watch-back: got 'soon'; allowed: a duration like 90s, 5m or 1h; --content-type is the probe's: give --probe FILE too",
    );
    const far = await run('drill', '--endpoint', 'rec', '--to', 'OPEN', '--watch-back', '3h', '--probe', '/nonexistent/request.json');
    expect(far.err.split('\n')[0]).toMatch(
      /^drill: --watch-back: got 3h; allowed: 1m to 2h; --probe: cannot read '\/nonexistent\/request\.json': ENOENT/,
    );
  });

  test.each([['plan'], ['simulate'], ['doctor'], ['drill']])('%s --help states its time bound and its exit codes', async cmd => {
    const r = await run(cmd, '--help');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ {0,2}time bound: \S.*/im);
    expect(r.out).toMatch(/^ {0,2}exit codes: 0 .*, 1 .*, 2 a usage error/im);
  });
});

describe('plan: mistakes are usage errors naming the flag (exit 2), and nothing is planned', () => {
  test('a misspelt option: named, with the option probably meant (it used to plan with "memory headroom 100 %")', async () => {
    const r = await run('plan', '--latency', '50', '--qps', '200', '--modle-gib', '2.1');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^plan: unknown option --modle-gib \(did you mean --model-gib\?\)\n\nusage: sagemaker-resilient-endpoint plan /);
    expect(r.out).toBe('');
  });

  test("a value with a unit: the flag and the value, not 'p50LatencyMs: got NaN'", async () => {
    const r = await run('plan', '--latency', '50ms', '--qps', '200');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^plan: --latency: got '50ms'; allowed: a number > 0 \(milliseconds\)\n/);
    expect(r.err).not.toMatch(/NaN|p50LatencyMs/);
  });

  test('every bad value at once, each with its range', async () => {
    const r = await run('plan', '--latency', '0', '--qps', '0x10', '--safety', '5', '--model-gib=-1', '--gpu-gib', '', '--min-instances', '1.5');
    expect(r.code).toBe(2);
    expect(r.err.split('\n')[0]).toBe(
      "plan: --latency: got '0'; allowed: a number > 0 (milliseconds); --qps: got '0x10'; allowed: a number > 0 (requests per second); " +
        "--safety: got '5'; allowed: a number >= 1 and <= 3; --model-gib: got '-1'; allowed: a number > 0 (GiB); --gpu-gib: got ''; allowed: a number > 0 (GiB); " +
        "--min-instances: got '1.5'; allowed: an integer >= 1",
    );
  });

  test.each([
    [['--qps', '200'], 'plan: --latency is required'],
    [['--latency', '50', '--qps'], 'plan: --qps needs a value'],
    [['--latency', '--qps', '200'], 'plan: --latency needs a value'],
    [['--latency', '50', '--qps', '200', '--gpu=yes'], 'plan: --gpu takes no value'],
    [['--latency', '50', '--qps', '200', 'fast'], "plan: unexpected argument 'fast'"],
    [['--latency', '50', '--qps', '200', '-x'], 'plan: unknown option -x'],
  ])('%j: %s', async (args, message) => {
    const r = await run('plan', ...args);
    expect(r.code).toBe(2);
    expect(r.err.split('\n')[0]).toBe(message);
  });

  test('good values plan as before (exit 0); a model no instance holds is the command failing (exit 1)', async () => {
    const ok = await run('plan', '--latency', '50', '--qps', '200', '--model-gib', '2.1', '--safety', '1.3', '--min-instances', '2');
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/instance type\s+ml\.m5\.xlarge/);
    expect(ok.out).toMatch(/memory headroom\s+\d+ %/);
    const gpu = await run('plan', '--latency', '120', '--qps', '100', '--gpu-gib', '4', '--gpu');
    expect(gpu.out).toMatch(/instance type\s+ml\.g5\.xlarge/);
    // Headroom only where the memory is known (it used to print "memory headroom 100 %" without --model-gib).
    expect(gpu.out).toMatch(/^GPU memory headroom\s+33 %$/m);
    expect(gpu.out).toMatch(/^host memory headroom\s+not known: .*--model-gib/m);
    const bare = await run('plan', '--latency', '50', '--qps', '200');
    expect(bare.out).not.toMatch(/headroom\s+\d+ %/);
    const none = await run('plan', '--latency', '50', '--qps', '10', '--gpu-gib', '30');
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/no instance type fits one model copy/);
  });
});

describe("simulate's arguments: mistakes are usage errors naming the flag, before any example is built", () => {
  test.each([
    [['--modle', 'footprint'], /^simulate: unknown option --modle\n/],
    [['--memory-modle', 'footprint'], /^simulate: unknown option --memory-modle \(did you mean --memory-model\?\)/],
    [['--metric-delay', '5s'], /^simulate: --metric-delay: got '5s'; allowed: a number >= 0\n/],
    [
      ['--qps', 'lots', '--seed', '1.5'],
      /^simulate: --qps: got 'lots'; allowed: a number > 0 \(requests per second\); --seed: got '1\.5'; allowed: an integer >= 0\n/,
    ],
    [['--factors', '17,x'], /^simulate: --factors: got '17,x'; allowed: comma-separated numbers > 0\n/],
    [['--example'], /^simulate: --example needs a value\n/],
    [['--no-guard=false'], /^simulate: --no-guard takes no value\n/],
    [['--example', 'recommender', '--trace', 'sine'], /^--trace: got 'sine'; allowed: pulse, steady, poisson, abusive or csv\n/],
    [['--example', 'recommender', '--trace', 'csv'], /^--trace csv needs --csv FILE/],
    [['--example', 'recomender'], /^unknown example 'recomender'/],
  ])('%j', async (args, message) => {
    const started = Date.now();
    const r = await run('simulate', ...args);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err).toMatch(/usage: sagemaker-resilient-endpoint simulate/);
    expect(Date.now() - started).toBeLessThan(20_000); // refused, not simulated
  });
});

describe("the benchmark runner's arguments", () => {
  test('--help and -h print the usage and stop (the runner used to run every benchmark)', () => {
    const out = jest.spyOn(console, 'log').mockImplementation(() => {});
    try {
      expect(benchArgs(['--help'])).toBe(0);
      expect(benchArgs(['-h'])).toBe(0);
      expect(String(out.mock.calls[0][0])).toMatch(/^usage: npm run bench/);
    } finally {
      out.mockRestore();
    }
  });

  test('no argument: run; anything else: a usage error naming it, exit 2', () => {
    const err = jest.spyOn(console, 'error').mockImplementation(() => {});
    try {
      expect(benchArgs([])).toBeUndefined();
      expect(benchArgs(['--fast'])).toBe(2);
      expect(benchArgs(['breaker'])).toBe(2);
      expect(err.mock.calls.map(c => String(c[0]).split('\n')[0])).toEqual(['bench: unknown option --fast', "bench: unexpected argument 'breaker'"]);
    } finally {
      err.mockRestore();
    }
  });
});

test('as a process: exit codes 0 for --help and 2 for a usage error, reach the shell', () => {
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [require.resolve('tsx/cli'), path.join(__dirname, '..', 'bin', 'cli.ts'), ...args], { encoding: 'utf8' });
  const help = cli('plan', '--help');
  expect([help.status, help.stdout.split('\n')[0]]).toEqual([0, expect.stringMatching(/^usage: sagemaker-resilient-endpoint plan /)]);
  const bad = cli('plan', '--modle-gib', '2.1');
  expect([bad.status, bad.stderr.split('\n')[0]]).toEqual([2, 'plan: unknown option --modle-gib (did you mean --model-gib?)']);
});
