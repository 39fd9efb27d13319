/**
 * doctor and drill against a network that misbehaves, with the real AWS SDK (no client mock): a local
 * server on 127.0.0.1 that accepts connections and never answers, one that answers only SageMaker and
 * stalls every other service, and one that answers throttling. Every AWS call has a time limit and a
 * bounded retry, a whole doctor run ends within its bound with the check that timed out named, and the
 * SDK's Node.js-version notice does not bury the report.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as net from 'net';
import * as path from 'path';
import * as os from 'os';
import { opsClients } from '../bin/ops/aws';
import { doctor } from '../bin/ops/doctor';
import { doctorMain, drillMain } from '../bin/ops/index';

const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };

/** A server that accepts every connection and never answers; it counts connections and tracks open sockets. */
class Stalled {
  public connections = 0;
  public readonly open = new Set<net.Socket>();
  private readonly server = net.createServer(socket => {
    this.connections++;
    this.open.add(socket);
    socket.on('close', () => this.open.delete(socket));
    socket.on('error', () => undefined);
    socket.resume(); // reads (and drops) the request, so that the client closing is seen
  });
  public url = '';
  async start(): Promise<this> {
    await new Promise<void>(r => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
    return this;
  }
  async stop(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise(r => this.server.close(r));
  }
}

/**
 * An HTTP server standing in for AWS: `answer` decides per request (the X-Amz-Target of a JSON protocol
 * call, e.g. SageMaker.DescribeEndpoint) — a status and body, or undefined to never answer.
 */
class FakeAws {
  public readonly requests: { target?: string; authorization?: string }[] = [];
  public readonly open = new Set<net.Socket>();
  private readonly server: http.Server;
  public url = '';
  constructor(answer: (target: string | undefined) => { status: number; body: object; headers?: Record<string, string> } | undefined) {
    this.server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const target = req.headers['x-amz-target'] as string | undefined;
        this.requests.push({ target, authorization: req.headers.authorization });
        const a = answer(target);
        if (!a) return; // never answers
        res.writeHead(a.status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': 'r1', ...(a.headers ?? {}) });
        res.end(JSON.stringify(a.body));
      });
    });
    this.server.on('connection', s => {
      this.open.add(s);
      s.on('close', () => this.open.delete(s));
    });
  }
  async start(): Promise<this> {
    await new Promise<void>(r => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
    return this;
  }
  async stop(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise(r => this.server.close(r));
  }
}

const THROTTLED = { status: 400, body: { __type: 'ThrottlingException', message: 'Rate exceeded' } };
const ENDPOINT = {
  status: 200,
  body: {
    EndpointName: 'rec',
    EndpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/rec',
    EndpointConfigName: 'rec-config-1',
    EndpointStatus: 'InService',
    CreationTime: 1764590400,
    LastModifiedTime: 1764590400,
    ProductionVariants: [{ VariantName: 'Primary', CurrentWeight: 1, DesiredWeight: 1, CurrentInstanceCount: 2, DesiredInstanceCount: 2 }],
  },
};
const out = () => {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, o: { log: (s: string) => lines.push(s), error: (s: string) => errors.push(s) } };
};

describe('every call has a time limit and a bounded retry', () => {
  let stalled: Stalled;
  beforeAll(async () => {
    stalled = await new Stalled().start();
  });
  afterAll(() => stalled.stop());

  test('a server that accepts and never answers: the call gives up after 3 tries of its time limit, and doctor FAILs naming the fix', async () => {
    stalled.connections = 0;
    const c = opsClients('us-east-1', 3, { endpoint: stalled.url, requestTimeoutMs: 300, connectionTimeoutMs: 300, credentials: CREDENTIALS });
    const t0 = Date.now();
    const r = await doctor(c, 'rec', Date.now(), { deadlineMs: 20_000 });
    const took = Date.now() - t0;
    expect(r.ok).toBe(false);
    expect(r.checks).toEqual([
      expect.objectContaining({
        id: 'endpoint',
        result: 'FAIL',
        saw: expect.stringMatching(/^could not check: TimeoutError: .*300 ms requestTimeout/),
        fix: expect.stringMatching(/^no answer from AWS in time: check the network, a proxy \(HTTPS_PROXY\) or the VPC endpoint/),
      }),
    ]);
    expect(stalled.connections).toBe(3); // maxAttempts, then no more
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(10_000); // 3 × 0.3 s plus the SDK's backoff (at most a few seconds)
  });

  test('a call that timed out leaves no connection open (nothing keeps the process alive)', async () => {
    stalled.connections = 0;
    const o = out();
    const limits = { endpoint: stalled.url, requestTimeoutMs: 300, connectionTimeoutMs: 300, credentials: CREDENTIALS };
    expect(await doctorMain(['--endpoint', 'rec', '--region', 'us-east-1'], undefined, o.o, { limits })).toBe(1);
    expect(stalled.connections).toBe(3);
    const until = Date.now() + 2000;
    while (stalled.open.size > 0 && Date.now() < until) await new Promise(r => setTimeout(r, 20));
    expect(stalled.open.size).toBe(0);
  });

  test("drill's bound: past it the call is aborted, and the failure says so with its fix, exit code 1", async () => {
    stalled.connections = 0;
    const c = opsClients('us-east-1', 3, { endpoint: stalled.url, credentials: CREDENTIALS }); // default 10 s per try
    const o = out();
    const t0 = Date.now();
    expect(await drillMain(['--endpoint', 'rec', '--to', 'DEGRADED'], c, o.o, { boundMs: 1500 })).toBe(1);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(1500);
    expect(took).toBeLessThan(3000);
    expect(o.errors[0]).toBe(
      "drill failed: no answer from AWS within the drill's 2 s bound\n" +
        'fix: no answer from AWS in time: check the network, a proxy (HTTPS_PROXY) or the VPC endpoint to the service, and --region; then run drill again',
    );
    const until = Date.now() + 2000;
    while (stalled.open.size > 0 && Date.now() < until) await new Promise(r => setTimeout(r, 20));
    expect(stalled.open.size).toBe(0); // the aborted call left no socket
  });

  test('drill against a server that never answers: each call gives up after its tries, and the failure names the timeout and its fix', async () => {
    const c = opsClients('us-east-1', 2, { endpoint: stalled.url, requestTimeoutMs: 300, connectionTimeoutMs: 300, credentials: CREDENTIALS });
    const o = out();
    expect(await drillMain(['--endpoint', 'rec', '--to', 'OPEN', '--dry-run'], c, o.o)).toBe(1);
    expect(o.errors[0]).toMatch(
      /^drill failed: no answer from AWS in time: TimeoutError: .*300 ms requestTimeout.*\nfix: no answer from AWS in time: check the network, .*then run drill again$/,
    );
  });

  test("the whole run's bound: past it the running check FAILs, named, its call is aborted, and exit code 1", async () => {
    const c = opsClients('us-east-1', 3, { endpoint: stalled.url, credentials: CREDENTIALS }); // default 10 s per try: 30 s and more
    const o = out();
    const t0 = Date.now();
    expect(await doctorMain(['--endpoint', 'rec'], c, o.o, { deadlineMs: 1500 })).toBe(1);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(1500);
    expect(took).toBeLessThan(3000);
    expect(o.lines.join('\n')).toMatch(/\| endpoint \| FAIL \| timed out: no answer from AWS within doctor's 2 s bound .*\| check the network/);
  });
});

test('SageMaker answers, another service stalls: that check FAILs timed out within the bound, the rest are not run', async () => {
  const aws = await new FakeAws(target => (target === 'SageMaker.DescribeEndpoint' ? ENDPOINT : undefined)).start();
  try {
    const c = opsClients('us-east-1', 3, { endpoint: aws.url, credentials: CREDENTIALS });
    const t0 = Date.now();
    const r = await doctor(c, 'rec', Date.now(), { deadlineMs: 2000 });
    expect(Date.now() - t0).toBeLessThan(3500);
    expect(r.checks.slice(0, 2)).toEqual([
      expect.objectContaining({ id: 'endpoint', result: 'PASS' }),
      expect.objectContaining({
        id: 'breaker-function',
        result: 'FAIL',
        saw: expect.stringMatching(/^timed out: no answer from AWS within doctor's 2 s bound/),
      }),
    ]);
    const rest = r.checks.slice(2);
    expect(rest.length).toBeGreaterThan(3);
    expect(rest.every(x => x.result === 'SKIP' && x.saw === "not run: doctor's 2 s bound was reached during breaker-function")).toBe(true);
    expect(r.ok).toBe(false);
  } finally {
    await aws.stop();
  }
});

test('a service that answers throttling: 3 tries with backoff, then a WARN that says to wait; the run ends and fails (no endpoint read)', async () => {
  const aws = await new FakeAws(() => THROTTLED).start();
  try {
    const c = opsClients('us-east-1', 3, { endpoint: aws.url, credentials: CREDENTIALS });
    const t0 = Date.now();
    const r = await doctor(c, 'rec', Date.now(), { deadlineMs: 20_000 });
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(aws.requests.map(x => x.target)).toEqual(Array(3).fill('SageMaker.DescribeEndpoint'));
    expect(r.checks).toEqual([
      expect.objectContaining({
        id: 'endpoint',
        result: 'FAIL',
        saw: "could not check: AWS throttled the call (ThrottlingException) after the SDK's retries",
        fix: 'AWS throttled the call after the SDK retries: run doctor again in a minute',
      }),
    ]);
  } finally {
    await aws.stop();
  }
});

describe('as a user runs it: the bundled CLI in its own process', () => {
  const bundle = path.join(__dirname, '..', 'dist', 'cli-bundles', 'ops.js');
  /** Runs `doctor` (or `drill`) from the bundle with `env`; resolves with its exit code, output and run time. */
  const runDoctor = (args: string[], env: Record<string, string | undefined>, command: 'doctorMain' | 'drillMain' = 'doctorMain') =>
    new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((resolve, reject) => {
      const t0 = Date.now();
      // As bin/cli.ts runs it: the exit code set, then the process ends when nothing is left to do.
      const runner = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ops-cli-')), 'doctor.js');
      fs.writeFileSync(runner, `require(${JSON.stringify(bundle)}).${command}(process.argv.slice(2)).then(c => { process.exitCode = c; });\n`);
      const child = spawn(process.execPath, [runner, ...args], {
        env: { PATH: process.env.PATH, HOME: '/nonexistent', AWS_CONFIG_FILE: '/nonexistent', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent', ...env },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', d => (stdout += d));
      child.stderr.on('data', d => (stderr += d));
      child.on('error', reject);
      child.on('close', code => resolve({ code, stdout, stderr, ms: Date.now() - t0 }));
    });
  beforeAll(() => {
    if (!fs.existsSync(bundle)) throw new Error(`${bundle} is missing: run 'npm run bundle' first`);
  });

  test('AWS_DEFAULT_REGION is used when AWS_REGION is unset; the SDK notice is one line after the report; the process exits on its own', async () => {
    const aws = await new FakeAws(() => THROTTLED).start();
    try {
      const r = await runDoctor(['--endpoint', 'rec'], {
        AWS_DEFAULT_REGION: 'eu-west-1',
        AWS_ENDPOINT_URL: aws.url,
        AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      });
      expect(r.code).toBe(1);
      expect(r.ms).toBeLessThan(20_000);
      // Signed for the Region AWS_DEFAULT_REGION names.
      expect(aws.requests[0].authorization).toMatch(/Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/sagemaker\/aws4_request/);
      expect(r.stdout).toMatch(/^doctor: rec at .*\n\n\| check \| result \| saw \| fix \|/);
      expect(r.stdout).toMatch(/\| endpoint \| FAIL \| could not check: AWS throttled the call/);
      expect(r.stderr).not.toMatch(/NodeVersionSupportWarning/);
      const major = Number(process.versions.node.split('.')[0]);
      expect(r.stderr.trim()).toEqual(
        major < 22 ? expect.stringMatching(/^note: Node\.js v\d+\.\d+\.\d+: AWS SDK for JavaScript releases after .* need Node\.js 22 or later/) : '',
      );
      expect(r.stderr.trim().split('\n').length).toBeLessThanOrEqual(1);
    } finally {
      await aws.stop();
    }
  });

  test('a server that accepts and never answers: the process ends within --timeout, exit code 1, the check named; no socket keeps it alive', async () => {
    const stalled = await new Stalled().start();
    try {
      const r = await runDoctor(['--endpoint', 'rec', '--region', 'us-east-1', '--timeout', '5s'], {
        AWS_ENDPOINT_URL: stalled.url,
        AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      });
      expect(r.code).toBe(1);
      expect(r.ms).toBeGreaterThanOrEqual(5000);
      expect(r.ms).toBeLessThan(8000);
      expect(r.stdout).toMatch(/\| endpoint \| FAIL \| timed out: no answer from AWS within doctor's 5 s bound/);
      expect(stalled.connections).toBe(1); // one try of 10 s was running when the bound came
    } finally {
      await stalled.stop();
    }
  });

  test('no Region anywhere: the report says to pass --region', async () => {
    const r = await runDoctor(['--endpoint', 'rec'], {
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /\| endpoint \| FAIL \| could not check: Error: Region is missing \| pass --region R \(or set AWS_REGION or AWS_DEFAULT_REGION, or region in your AWS profile\) \|/,
    );
  });

  test('drill with no Region anywhere, and against a port nothing listens on: each failure named with its fix, exit code 1 (it used to print a raw Error)', async () => {
    const noRegion = await runDoctor(
      ['--endpoint', 'rec', '--to', 'DEGRADED'],
      { AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey },
      'drillMain',
    );
    expect(noRegion.code).toBe(1);
    expect(noRegion.stderr).toMatch(
      /^drill failed: Error: Region is missing\nfix: pass --region R \(or set AWS_REGION or AWS_DEFAULT_REGION, or region in your AWS profile\)\n/,
    );
    const closed = await new Stalled().start();
    const url = closed.url;
    await closed.stop(); // nothing listens there now: connections are refused
    const refused = await runDoctor(
      ['--endpoint', 'rec', '--to', 'DEGRADED', '--region', 'us-east-1'],
      { AWS_ENDPOINT_URL: url, AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey },
      'drillMain',
    );
    expect(refused.code).toBe(1);
    expect(refused.ms).toBeLessThan(20_000);
    expect(refused.stderr).toMatch(/^drill failed: .*ECONNREFUSED.*\nfix: AWS could not be reached: check the network/);
    expect(refused.stderr).not.toMatch(/^\s+at /m);
  });
});
