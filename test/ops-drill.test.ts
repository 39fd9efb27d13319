import { EventEmitter } from 'events';
import {
  ApplicationAutoScalingClient,
  DescribeScalableTargetsCommand,
  RegisterScalableTargetCommand,
  ScalableTarget,
  ValidationException,
} from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { InvokeCommand, LambdaClient, ListFunctionsCommand } from '@aws-sdk/client-lambda';
import { DescribeEndpointCommand, SageMakerClient, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import { InvokeEndpointCommand, SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { evaluate } from '../lambda/circuit-breaker/evaluate';
import { createClients, settingsFromEnv } from '../lambda/circuit-breaker/settings';
import { opsClients } from '../bin/ops/aws';
import { Clock, drill, endOverride, formatDrill, startOverride } from '../bin/ops/drill';
import { drillMain, durationMs } from '../bin/ops/index';
import { BreakerState, serializeState } from '../lib/breaker/policy';
import { CloudWatchFake } from './cloudwatch-fake';
import { LocalDynamoDb } from './local-dynamodb';

// The account: the real breaker handler behind a mocked Lambda Invoke, its state in a DynamoDB that
// evaluates conditions (dynalite), SSM, SageMaker and Application Auto Scaling as the handler suites model them.
const sm = mockClient(SageMakerClient);
const rt = mockClient(SageMakerRuntimeClient);
const cw = mockClient(CloudWatchClient);
const ssm = mockClient(SSMClient);
const aas = mockClient(ApplicationAutoScalingClient);
const lambda = mockClient(LambdaClient);

const T0 = Date.UTC(2026, 11, 1, 12, 0, 30);
const ENV = {
  ENDPOINT_NAME: 'rec',
  PRIMARY_VARIANT: 'Primary',
  FALLBACK_VARIANT: 'Fallback',
  PARAMETER_NAME: '/rec/level',
  TABLE_NAME: 'state',
  GPU_COUNT: '0',
  METRIC_PERIOD_SECONDS: '60',
  PRIMARY_CAPACITY: JSON.stringify({ min: 2, max: 4, qpsPerInstance: 150 }),
  FALLBACK_CAPACITY: JSON.stringify({ min: 1, max: 4, qpsPerInstance: 150 }),
};
const settings = settingsFromEnv(ENV);

let db: LocalDynamoDb;
let clock: Clock & { t: number };
let parameter: string | undefined;
let weights: { Primary: number; Fallback: number };
let targets: Map<string, ScalableTarget>;
let invocations: number;
const ops = () => ({ ...opsClients('us-east-1', 1), dynamodb: db.client });

beforeAll(async () => {
  db = await LocalDynamoDb.start('state');
});
afterAll(() => db.stop());

beforeEach(async () => {
  for (const m of [sm, rt, cw, ssm, aas, lambda]) m.reset();
  await db.clear();
  jest.spyOn(console, 'log').mockImplementation(() => undefined);
  // Time passes in the account: the breaker's 1-minute schedule runs the real handler at every minute crossed.
  const handlerClients = { ...createClients(1), dynamodb: db.client };
  const schedule = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };
  clock = {
    t: T0,
    now: () => clock.t,
    sleep: async ms => {
      const to = clock.t + Math.max(ms, 1000);
      for (let m = Math.floor(clock.t / 60_000) + 1; m * 60_000 <= to; m++) {
        clock.t = m * 60_000;
        await evaluate(schedule, settings, handlerClients, clock.t);
      }
      clock.t = to;
    },
  };
  parameter = undefined;
  weights = { Primary: 1, Fallback: 0 };
  invocations = 0;
  lambda.on(ListFunctionsCommand).resolves({
    Functions: [
      {
        FunctionName: 'Rec-CircuitBreakerFn',
        FunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:Rec-CircuitBreakerFn',
        Environment: { Variables: ENV },
      },
    ],
  });
  // Lambda's asynchronous Invoke runs the real handler on the event the drill sends.
  lambda.on(InvokeCommand).callsFake(async input => {
    invocations++;
    await evaluate(JSON.parse(Buffer.from(input.Payload as Uint8Array).toString()), settings, handlerClients, clock.now());
    return { StatusCode: 202 };
  });
  ssm.on(GetParameterCommand).callsFake(() => {
    if (parameter === undefined) throw Object.assign(new Error('not found'), { name: 'ParameterNotFound', $metadata: {} });
    return { Parameter: { Value: parameter } };
  });
  ssm.on(PutParameterCommand).callsFake(i => {
    parameter = i.Value;
    return { Version: 1 };
  });
  sm.on(DescribeEndpointCommand).callsFake(() => ({
    EndpointStatus: 'InService',
    ProductionVariants: [
      { VariantName: 'Primary', CurrentWeight: weights.Primary, DesiredWeight: weights.Primary, CurrentInstanceCount: 2 },
      { VariantName: 'Fallback', CurrentWeight: weights.Fallback, DesiredWeight: weights.Fallback, CurrentInstanceCount: 2 },
    ],
  }));
  sm.on(UpdateEndpointWeightsAndCapacitiesCommand).callsFake(i => {
    for (const v of i.DesiredWeightsAndCapacities) weights[v.VariantName as 'Primary' | 'Fallback'] = v.DesiredWeight;
    return {};
  });
  targets = new Map(
    ['Primary', 'Fallback'].map((v, k) => [
      `endpoint/rec/variant/${v}`,
      {
        ServiceNamespace: 'sagemaker',
        ResourceId: `endpoint/rec/variant/${v}`,
        ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
        MinCapacity: k === 0 ? 2 : 1,
        MaxCapacity: 4,
        RoleARN: 'arn:aws:iam::123456789012:role/x',
        CreationTime: new Date(0),
        SuspendedState: { DynamicScalingInSuspended: false, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: false },
      },
    ]),
  );
  aas.on(DescribeScalableTargetsCommand).callsFake(i => ({
    ScalableTargets: [...targets.values()].filter(t => (i.ResourceIds ?? [t.ResourceId]).includes(t.ResourceId)).map(t => structuredClone(t)),
  }));
  aas.on(RegisterScalableTargetCommand).callsFake(i => {
    const t = targets.get(i.ResourceId)!;
    if (i.MinCapacity !== undefined) t.MinCapacity = i.MinCapacity;
    if (i.SuspendedState) t.SuspendedState = { ...t.SuspendedState, ...i.SuspendedState };
    return {};
  });
  // Cool memory (40 %) every minute for hours, visible 90 s after each minute, as 1-minute SageMaker data.
  const fake = new CloudWatchFake(90);
  const dims = { EndpointName: 'rec', VariantName: 'Primary' };
  const start = Math.floor(T0 / 60_000) * 60_000 - 30 * 60_000;
  for (let t = start; t < T0 + 3 * 3_600_000; t += 60_000) {
    fake
      .put('/aws/sagemaker/Endpoints', 'MemoryUtilization', dims, t, 40)
      .put('AWS/SageMaker', 'Invocations', dims, t, 6000)
      .put('AWS/SageMaker', 'Invocation5XXErrors', dims, t, 0);
  }
  cw.on(GetMetricDataCommand).callsFake(i => fake.getMetricData(i, clock.now()));
  // The container answers with the level it reads (the runtime helper: within one 10-s read).
  rt.on(InvokeEndpointCommand).callsFake(() => ({
    Body: Buffer.from(JSON.stringify({ clusters: [0], degradeLevel: parameter ? JSON.parse(parameter).level : 0 })),
  }));
  // A breaker that has been CLOSED for an hour.
  const closed: BreakerState = { state: 'CLOSED', since: T0 - 3_600_000, share: 0, entryShare: 0, step: 0 };
  await db.put({ pk: { S: 'breaker' }, version: { N: '5' }, state: { S: serializeState(closed, []) } });
  parameter = serializeState(closed, []);
});
afterEach(() => jest.restoreAllMocks());

const stored = async () => JSON.parse((await db.get('breaker'))!.state.S!);

test('a DEGRADED drill through the real handler: level, container, weights, capacity, then the way back to CLOSED; no override left', async () => {
  const r = await drill(
    ops(),
    {
      endpointName: 'rec',
      to: 'DEGRADED',
      holdMs: 5 * 60_000,
      watchBackMs: 60 * 60_000,
      probe: { body: '{"instances":[[1,2]]}', contentType: 'application/json' },
    },
    clock,
  );
  expect(r.refused).toBeUndefined();
  expect(r.levelPublishedS).toBe(0); // the drill runs the function at once
  expect(r.containerDegradedS).toBe(0);
  expect(r.weightsMovedS).toBe(0);
  expect(r.capacityHeldS).toBe(0);
  expect(r.overrideEndedS).toBe(300);
  expect(r.closedAgainS!).toBeGreaterThan(300); // the breaker's own recovery: dwell and steps
  expect(r.ok).toBe(true);
  const s = await stored();
  expect(s.state).toBe('CLOSED');
  expect(s.drill).toBeUndefined();
  expect(weights).toEqual({ Primary: 1, Fallback: 0 });
  expect(r.timeline.map(e => e.event)).toEqual(
    expect.arrayContaining([
      'override expired at the end of its hold',
      'CLOSED again (level 0)',
      'level 1 published (DEGRADED)',
      'Fallback carries 50 % of the traffic (endpoint InService)',
      'primary scale-in suspended',
    ]),
  );
});

test('the capacity hold it expects is never seen (Application Auto Scaling refuses it): the drill FAILs though level and weights moved', async () => {
  aas.on(RegisterScalableTargetCommand).rejects(
    new ValidationException({
      message: 'User: arn:aws:sts::123456789012:assumed-role/Rec-CircuitBreakerRole/x is not authorized to perform: sagemaker:DescribeEndpointConfig',
      $metadata: { httpStatusCode: 400 },
    }),
  );
  const r = await drill(ops(), { endpointName: 'rec', to: 'DEGRADED', holdMs: 2 * 60_000, watchBackMs: 0 }, clock);
  expect(r.levelPublishedS).toBe(0);
  expect(r.weightsMovedS).toBe(0);
  expect(r.capacityHeldS).toBeUndefined();
  expect(r.capacityHoldExpected).toBe('Primary scale-in suspended');
  expect(r.ok).toBe(false);
  expect(r.timeline.map(e => e.event).join('\n')).toMatch(/the capacity hold was not seen: Primary's scale-in never showed as suspended/);
  expect(formatDrill(r)).toMatch(
    /capacity held not seen; .*FAILED: see what was not seen\nfix: the capacity hold was not seen: read Rec-CircuitBreakerFn's decision log \(CloudWatch Logs\) for the RegisterScalableTarget error/,
  );
});

test('without autoscaling no capacity hold is expected: level and weights prove the path', async () => {
  const noScaling = { ...ENV, PRIMARY_CAPACITY: '', FALLBACK_CAPACITY: '' };
  lambda.on(ListFunctionsCommand).resolves({
    Functions: [{ FunctionName: 'F', FunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:F', Environment: { Variables: noScaling } }],
  });
  lambda.on(InvokeCommand).callsFake(async input => {
    await evaluate(
      JSON.parse(Buffer.from(input.Payload as Uint8Array).toString()),
      settingsFromEnv(noScaling),
      { ...createClients(1), dynamodb: db.client },
      clock.now(),
    );
    return { StatusCode: 202 };
  });
  const r = await drill(ops(), { endpointName: 'rec', to: 'OPEN', holdMs: 60_000, watchBackMs: 0 }, clock);
  expect(r.capacityHoldExpected).toBeUndefined();
  expect(r.ok).toBe(true);
  expect(formatDrill(r)).toMatch(/capacity held not expected \(no autoscaling\)/);
});

test('the override holds between evaluations and expires on its own, even if the drill process dies', async () => {
  expect(await startOverride(ops(), settings, 'OPEN', 'd1', T0 + 2 * 60_000, T0)).toBeUndefined();
  const handlerClients = { ...createClients(1), dynamodb: db.client };
  const schedule = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };
  await evaluate(schedule, settings, handlerClients, T0 + 30_000);
  expect(JSON.parse(parameter!)).toMatchObject({ level: 2, state: 'OPEN' });
  expect(weights).toEqual({ Primary: 0, Fallback: 1 });
  await evaluate(schedule, settings, handlerClients, T0 + 3 * 60_000); // past its expiry, nobody ended it
  const s = await stored();
  expect(s.drill).toBeUndefined();
  expect(s.state).toBe('OPEN'); // the breaker's own evaluation: it holds its minimum dwell, then recovers
});

test('refused when the breaker is degraded for real: nothing written', async () => {
  const real: BreakerState = { state: 'DEGRADED', since: T0 - 120_000, share: 0.5, entryShare: 0.5, step: 0 };
  await db.put({ pk: { S: 'breaker' }, version: { N: '9' }, state: { S: serializeState(real, []) } });
  db.calls.length = 0;
  const r = await drill(ops(), { endpointName: 'rec', to: 'OPEN', holdMs: 60_000, watchBackMs: 0 }, clock);
  expect(r.refused).toBe('the breaker is DEGRADED since 2026-12-01T11:58:30.000Z: no drill during a real degradation');
  expect(r.ok).toBe(false);
  expect(db.calls).toEqual(['GetItemCommand']);
  expect(invocations).toBe(0);
  // The same refusal holds in the write itself (a degradation that starts between the check and the write).
  expect(await startOverride(ops(), settings, 'OPEN', 'd2', T0 + 60_000, T0)).toMatch(/no drill during a real degradation/);
});

describe('every failure names its fix, as doctor does', () => {
  const capture = () => {
    const lines: string[] = [];
    // (the SDK's one-line Node.js notice after the report, on Node.js < 22, is not what these test)
    const keep = (x: string) => (/^note: Node\.js/.test(x) ? undefined : lines.push(x));
    return { lines, o: { log: keep, error: keep } };
  };

  test('refusals: a real degradation, no breaker in the Region, another drill', async () => {
    const real: BreakerState = { state: 'OPEN', since: T0 - 120_000, share: 1, entryShare: 1, step: 0 };
    await db.put({ pk: { S: 'breaker' }, version: { N: '9' }, state: { S: serializeState(real, []) } });
    const degraded = capture();
    expect(await drillMain(['--endpoint', 'rec', '--to', 'DEGRADED'], ops(), degraded.o, { clock })).toBe(1);
    expect(degraded.lines.join('\n')).toBe(
      'drill refused: the breaker is OPEN since 2026-12-01T11:58:30.000Z: no drill during a real degradation\n' +
        'fix: no drill during a real degradation: wait until doctor --endpoint rec shows the breaker CLOSED, then run drill again',
    );

    const other = capture();
    const running: BreakerState = {
      state: 'CLOSED',
      since: T0 - 3_600_000,
      share: 0,
      entryShare: 0,
      step: 0,
      drill: { to: 'OPEN', until: T0 + 240_000, id: 'd0' },
    };
    await db.put({ pk: { S: 'breaker' }, version: { N: '10' }, state: { S: serializeState(running, []) } });
    expect(await drillMain(['--endpoint', 'rec', '--to', 'DEGRADED'], ops(), other.o, { clock })).toBe(1);
    expect(other.lines.join('\n')).toMatch(
      /^drill refused: drill d0 is already running until 2026-12-01T12:04:30\.000Z\nfix: wait until 2026-12-01T12:04:30\.000Z \(that drill's override expires on its own then\), then run drill again$/,
    );

    lambda.on(ListFunctionsCommand).resolves({ Functions: [] });
    const none = capture();
    expect(await drillMain(['--endpoint', 'rec', '--to', 'DEGRADED', '--dry-run'], ops(), none.o, { clock })).toBe(1);
    expect(none.lines.join('\n')).toMatch(/^drill refused: no breaker serves rec in this Region\nfix: check --endpoint and --region/);
  });

  test('an AWS error before the override: what failed and its fix, exit 1, no raw stack', async () => {
    lambda.on(ListFunctionsCommand).rejects(new Error('Region is missing'));
    const c = capture();
    expect(await drillMain(['--endpoint', 'rec', '--to', 'DEGRADED'], ops(), c.o, { clock })).toBe(1);
    expect(c.lines[0]).toBe(
      'drill failed: Error: Region is missing\nfix: pass --region R (or set AWS_REGION or AWS_DEFAULT_REGION, or region in your AWS profile)',
    );
    expect(c.lines.join('\n')).not.toMatch(/override may| {4}at /);
  });

  test('an error during the hold: the override is ended first, and the error named with its fix', async () => {
    const reset = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', errno: -104, syscall: 'read' });
    ssm.on(GetParameterCommand).rejects(reset());
    const c = capture();
    expect(await drillMain(['--endpoint', 'rec', '--to', 'DEGRADED'], ops(), c.o, { clock })).toBe(1);
    expect(c.lines.join('\n')).toBe(
      'drill failed: Error: read ECONNRESET\nfix: AWS could not be reached: check the network, a proxy (HTTPS_PROXY) and --region (a Region name that does not exist resolves to no endpoint)',
    );
    expect((await stored()).drill.until).toBeLessThanOrEqual(clock.t); // ended
  });

  test('an error that also stops the override from being ended: says until when it holds (it expires on its own)', async () => {
    let down = false;
    ssm.on(GetParameterCommand).callsFake(() => {
      down = true; // the network goes: every call fails from here on
      throw Object.assign(new Error('connect ETIMEDOUT 52.94.0.1:443'), { code: 'ETIMEDOUT', name: 'TimeoutError' });
    });
    const dynamodb = new Proxy(db.client, {
      get: (t, p, r) =>
        p === 'send'
          ? (cmd: any) => (down ? Promise.reject(new Error('getaddrinfo ENOTFOUND dynamodb.us-east-1.amazonaws.com')) : t.send(cmd))
          : Reflect.get(t, p, r),
    });
    const c = capture();
    expect(await drillMain(['--endpoint', 'rec', '--to', 'DEGRADED', '--hold', '2m'], { ...ops(), dynamodb }, c.o, { clock })).toBe(1);
    expect(c.lines.join('\n')).toMatch(
      /^drill failed: Error: getaddrinfo ENOTFOUND .*\nfix: AWS could not be reached: .*\nthe override may still be set: it expires on its own at 2026-12-01T12:02:30\.000Z, and the breaker then recovers by itself$/,
    );
    expect((await stored()).drill.until).toBe(T0 + 120_000);
  });
});

test('Ctrl-C during the hold ends the override at once (exit code 130)', async () => {
  const signals = new EventEmitter();
  let sleeps = 0;
  const c = {
    now: () => clock.t,
    sleep: async (ms: number) => {
      clock.t += ms;
      if (++sleeps === 2) signals.emit('SIGINT');
    },
  };
  const out: string[] = [];
  const code = await drillMain(
    ['--endpoint', 'rec', '--to', 'DEGRADED', '--hold', '10m'],
    ops(),
    { log: s => out.push(s), error: s => out.push(s) },
    { clock: c, signals },
  );
  expect(code).toBe(130);
  const s = await stored();
  expect(s.drill.until).toBeLessThanOrEqual(clock.t);
  expect(s.drill.until).toBeLessThan(T0 + 10 * 60_000);
  expect(out.join('\n')).toMatch(/interrupted: ending the override/);
  expect(signals.listenerCount('SIGINT')).toBe(0);
});

test('--dry-run changes nothing and says what it would do', async () => {
  db.calls.length = 0;
  const out: string[] = [];
  expect(
    await drillMain(['--endpoint', 'rec', '--to', 'OPEN', '--dry-run'], ops(), { log: s => out.push(s), error: s => out.push(s) }, { clock }),
  ).toBe(0);
  expect(db.calls).toEqual(['GetItemCommand']);
  expect(invocations).toBe(0);
  expect(out.join('\n')).toMatch(/would set drill drill-\d{8}T\d{6} on state \(breaker\): OPEN until \+300 s/);
});

test('ending an override that already expired or belongs to another drill writes nothing', async () => {
  await startOverride(ops(), settings, 'DEGRADED', 'mine', T0 + 60_000, T0);
  expect(await endOverride(ops(), settings, 'theirs', T0)).toBe(false);
  expect(await endOverride(ops(), settings, 'mine', T0 + 120_000)).toBe(false);
  expect(await endOverride(ops(), settings, 'mine', T0 + 1000)).toBe(true);
  expect((await stored()).drill.until).toBe(T0 + 1000);
});

test('usage: --to and --hold are checked; durations read 90s, 5m, 1h', async () => {
  const out: string[] = [];
  const o = { log: (s: string) => out.push(s), error: (s: string) => out.push(s) };
  expect(await drillMain(['--endpoint', 'rec', '--to', 'HALF'], ops(), o)).toBe(2);
  expect(await drillMain(['--endpoint', 'rec', '--to', 'OPEN', '--hold', '2h'], ops(), o)).toBe(2);
  expect(await drillMain(['--help'], ops(), o)).toBe(0);
  expect(out.join('\n')).toMatch(/--to: got 'HALF'; allowed: DEGRADED or OPEN[\s\S]*--hold: got 2h; allowed: 1m to 1h/);
  expect([durationMs('90s', 'x'), durationMs('5m', 'x'), durationMs('1h', 'x'), durationMs('30', 'x')]).toEqual([90_000, 300_000, 3_600_000, 30_000]);
  expect(() => durationMs('soon', 'hold')).toThrow("--hold: got 'soon'; allowed: a duration like 90s, 5m or 1h");
});
