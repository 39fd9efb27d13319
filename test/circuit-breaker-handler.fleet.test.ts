import { ApplicationAutoScalingClient } from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeEndpointCommand, SageMakerClient, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import { GetParametersCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { evaluateFleet } from '../lambda/circuit-breaker/fleet';
import { Clients, createClients } from '../lambda/circuit-breaker/settings';
import { serializeState } from '../lib/breaker/policy';
import { breakerSettings } from './breaker-settings';
import { CloudWatchFake } from './cloudwatch-fake';
import { LocalDynamoDb } from './local-dynamodb';

const sm = mockClient(SageMakerClient);
const cw = mockClient(CloudWatchClient);
const ssm = mockClient(SSMClient);
mockClient(ApplicationAutoScalingClient);
// aws-sdk-client-mock answers every client of a mocked class; the shared state table is a real engine (dynalite).
let db: LocalDynamoDb;
let clients: Clients;
beforeAll(async () => {
  db = await LocalDynamoDb.start('fleet-state');
  clients = { ...createClients(1), dynamodb: db.client };
});
afterAll(() => db.stop());
const NOW = Date.UTC(2026, 10, 29, 12, 0, 30);
const LAST_MINUTE = Math.floor(NOW / 60_000) * 60_000 - 60_000;
const schedule = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };
/** A CloudWatch alarm state-change event as EventBridge delivers it, for a breaker alarm's name. */
const alarmEvent = (alarmName: string) => ({ source: 'aws.cloudwatch', 'detail-type': 'CloudWatch Alarm State Change', detail: { alarmName } });
/** The fleet's decision log line (the last evaluation's), parsed. */
const fleetLogLine = () => (console.log as jest.Mock).mock.calls.map(([l]) => JSON.parse(l)).find(l => l.component === 'circuit-breaker-fleet');

/** n endpoints' settings parameters, level parameters, state items and metrics, as a fleet finds them. */
async function fleet(
  n: number,
  memory: (i: number) => number,
  describe: (name: string) => any = () => ({
    EndpointStatus: 'InService',
    ProductionVariants: [
      { VariantName: 'Primary', DesiredWeight: 1, CurrentInstanceCount: 2 },
      { VariantName: 'Fallback', DesiredWeight: 0, CurrentInstanceCount: 1 },
    ],
  }),
) {
  const params = new Map<string, string>();
  const fake = new CloudWatchFake();
  for (let i = 0; i < n; i++) {
    const name = `ep-${i}`;
    params.set(
      `/cfg/${name}`,
      // The settings parameter holds everything but the table, which the shared function's environment names.
      JSON.stringify({ ...breakerSettings(name, { parameterName: `/level/${name}` }), tableName: undefined }),
    );
    params.set(`/level/${name}`, serializeState({ state: 'CLOSED', since: 0, share: 0, entryShare: 0, step: 0 }, []));
    await db.put({
      pk: { S: name },
      version: { N: '1' },
      state: { S: JSON.stringify({ state: 'CLOSED', since: 0, share: 0, entryShare: 0, step: 0 }) },
    });
    fake.putMinutes('/aws/sagemaker/Endpoints', 'MemoryUtilization', { EndpointName: name, VariantName: 'Primary' }, LAST_MINUTE, [40, memory(i)]);
    fake.putMinutes('AWS/SageMaker', 'Invocations', { EndpointName: name, VariantName: 'Primary' }, LAST_MINUTE, Array(10).fill(100));
  }
  ssm.on(GetParametersCommand).callsFake(input => ({
    Parameters: input.Names.filter((x: string) => params.has(x)).map((Name: string) => ({ Name, Value: params.get(Name) })),
  }));
  ssm.on(PutParameterCommand).callsFake(input => {
    params.set(input.Name, input.Value);
    return {};
  });
  cw.on(GetMetricDataCommand).callsFake(input => fake.getMetricData(input, NOW));
  sm.on(DescribeEndpointCommand).callsFake(input => describe(input.EndpointName));
  sm.on(UpdateEndpointWeightsAndCapacitiesCommand).resolves({});
  const item = async (name: string) => JSON.parse((await db.get(name))!.state.S!);
  return { settings: { tableName: db.tableName, configParameters: [...params.keys()].filter(k => k.startsWith('/cfg/')) }, item, params, fake };
}

beforeEach(async () => {
  sm.reset();
  cw.reset();
  ssm.reset();
  await db.clear();
  jest.spyOn(console, 'log').mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

test('each endpoint is judged on its own metrics, with its own state item and level', async () => {
  const f = await fleet(3, i => (i === 1 ? 88 : 45));
  const r = await evaluateFleet(schedule, f.settings, clients, NOW);
  expect(Object.fromEntries(Object.entries(r.endpoints).map(([k, v]) => [k, v.state]))).toEqual({
    'ep-0': 'CLOSED',
    'ep-1': 'DEGRADED',
    'ep-2': 'CLOSED',
  });
  expect((await f.item('ep-1')).state).toBe('DEGRADED');
  expect((await f.item('ep-0')).state).toBe('CLOSED');
  expect(JSON.parse(f.params.get('/level/ep-1')!).level).toBe(1);
  expect(JSON.parse(f.params.get('/level/ep-2')!).level).toBe(0);
  expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand).map(c => c.args[0].input.EndpointName)).toEqual(['ep-1']);
});

test('a failing endpoint does not stop the others', async () => {
  const f = await fleet(
    3,
    () => 88,
    name => {
      if (name === 'ep-0') throw new TypeError('a bug that only this endpoint hits');
      if (name === 'ep-2') throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: {} });
      return {
        EndpointStatus: 'InService',
        ProductionVariants: [
          { VariantName: 'Primary', DesiredWeight: 1, CurrentInstanceCount: 2 },
          { VariantName: 'Fallback', DesiredWeight: 0, CurrentInstanceCount: 1 },
        ],
      };
    },
  );
  const r = await evaluateFleet(schedule, f.settings, clients, NOW);
  expect(r.endpoints['ep-0'].outcome).toBe('failed');
  expect(r.endpoints['ep-2'].outcome).toBe('failed');
  expect(r.endpoints['ep-1']).toMatchObject({ outcome: 'evaluated', state: 'DEGRADED' });
});

test('an endpoint that is Updating waits for its weights; the others are not held up', async () => {
  const f = await fleet(
    2,
    () => 88,
    name => ({
      EndpointStatus: name === 'ep-0' ? 'Updating' : 'InService',
      ProductionVariants: [
        { VariantName: 'Primary', DesiredWeight: 1, CurrentInstanceCount: 2 },
        { VariantName: 'Fallback', DesiredWeight: 0, CurrentInstanceCount: 1 },
      ],
    }),
  );
  await evaluateFleet(schedule, f.settings, clients, NOW);
  expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand).map(c => c.args[0].input.EndpointName)).toEqual(['ep-1']);
  expect(JSON.parse(f.params.get('/level/ep-0')!).level).toBe(1); // its level is out all the same
});

test('an alarm or endpoint event evaluates only its endpoint', async () => {
  const f = await fleet(3, () => 88);
  const alarm = alarmEvent('ep-2-Primary-breaker-HostMemory');
  expect(Object.keys((await evaluateFleet(alarm, f.settings, clients, NOW)).endpoints)).toEqual(['ep-2']);
  const event = {
    source: 'aws.sagemaker',
    'detail-type': 'SageMaker Endpoint State Change',
    detail: { EndpointName: 'ep-1', EndpointStatus: 'IN_SERVICE' },
  };
  expect(Object.keys((await evaluateFleet(event, f.settings, clients, NOW)).endpoints)).toEqual(['ep-1']);
});

test.each([1, 10, 30])('steady state: the AWS calls of one evaluation of %i endpoints grow far slower than the endpoints', async n => {
  const f = await fleet(n, () => 45);
  const r = await evaluateFleet(schedule, f.settings, clients, NOW);
  expect(Object.values(r.endpoints).every(e => e.outcome === 'evaluated' && e.state === 'CLOSED')).toBe(true);
  // settings and levels: GetParameters of 10; states: BatchGetItem of 100; metrics: GetMetricData of 500 queries; no DescribeEndpoint
  expect(r.calls.length).toBe(2 * Math.ceil(n / 10) + Math.ceil(n / 100) + Math.ceil((6 * n) / 500));
  expect(r.calls).not.toContain('sagemaker:DescribeEndpoint');
});

test('an event that is not a trigger is ignored without a call', async () => {
  const f = await fleet(2, () => 88);
  const r = await evaluateFleet({ source: 'aws.s3', 'detail-type': 'Object Created', detail: {} }, f.settings, clients, NOW);
  expect(r).toEqual({ outcome: 'ignored', endpoints: {}, calls: [] });
  expect(ssm.calls()).toHaveLength(0);
  expect(JSON.parse((console.log as jest.Mock).mock.calls[0][0])).toMatchObject({
    outcome: 'ignored',
    reasons: ['not a schedule, alarm or endpoint state-change event'],
    event: { source: 'aws.s3', detailType: 'Object Created' },
  });
});

test("the reads of a degrading evaluation, in order, and each endpoint's own calls after them", async () => {
  const f = await fleet(2, i => (i === 0 ? 88 : 45));
  const send = jest.spyOn(clients.dynamodb, 'send');
  const r = await evaluateFleet(schedule, f.settings, clients, NOW);
  expect(r.outcome).toBe('evaluated');
  expect(r.calls.slice(0, 4)).toEqual(['ssm:GetParameters', 'dynamodb:BatchGetItem', 'ssm:GetParameters', 'cloudwatch:GetMetricData']);
  // ep-0 degrades: its own calls (the endpoint's weights, the level, the state write) come after the batched reads.
  expect(r.calls.slice(4)).toEqual(r.endpoints['ep-0'].calls.concat(r.endpoints['ep-1'].calls));
  expect(r.endpoints['ep-0'].calls).toEqual(expect.arrayContaining(['sagemaker:UpdateEndpointWeightsAndCapacities', 'ssm:PutParameter']));
  // The states are read consistently: the version a conditional write compares with must be the newest.
  const batch = send.mock.calls.map(([c]) => c.input as any).find(i => i.RequestItems);
  expect(batch.RequestItems[f.settings.tableName]).toEqual({ Keys: [{ pk: { S: 'ep-0' } }, { pk: { S: 'ep-1' } }], ConsistentRead: true });
  // The decision log names each endpoint's outcome and state.
  expect(fleetLogLine()).toEqual({
    component: 'circuit-breaker-fleet',
    endpoints: { 'ep-0': 'evaluated DEGRADED', 'ep-1': 'evaluated CLOSED' },
    calls: r.calls.length,
  });
});

test('endpoints of one period share a GetMetricData over the widest of their windows, oldest first', async () => {
  const f = await fleet(2, () => 45);
  // ep-1 judges its error rate over 30 minutes: the shared range must reach back that far.
  const wide = JSON.parse(f.params.get('/cfg/ep-1')!);
  f.params.set('/cfg/ep-1', JSON.stringify({ ...wide, errorWindowSeconds: 1800 }));
  await evaluateFleet(schedule, f.settings, clients, NOW);
  const [input] = cw.commandCalls(GetMetricDataCommand).map(c => c.args[0].input);
  const minute = Math.floor(NOW / 60_000) * 60_000;
  // It ends on the last 10-s boundary (the guard's metrics come every 10 s).
  expect(input).toMatchObject({
    StartTime: new Date(minute - 30 * 60_000),
    EndTime: new Date(Math.floor(NOW / 10_000) * 10_000),
    ScanBy: 'TimestampAscending',
  });
  const each = (e: string) => ['mem', 'merr', 'e4', 'dce', 'inv', 'invf', 'gp', 'gr'].map(q => `${e}_${q}`);
  expect(input.MetricDataQueries!.map(q => q.Id)).toEqual([...each('e0'), ...each('e1')]);
});

test("a failed endpoint's reason names the error", async () => {
  const f = await fleet(
    1,
    () => 88,
    () => {
      throw new TypeError('a bug that only this endpoint hits');
    },
  );
  const r = await evaluateFleet(schedule, f.settings, clients, NOW);
  expect(r.endpoints['ep-0']).toEqual({ outcome: 'failed', reasons: ['TypeError: a bug that only this endpoint hits'], calls: [] });
  expect(fleetLogLine().endpoints).toEqual({ 'ep-0': 'failed' });
});

test('an alarm of no endpoint of this fleet evaluates none (and reads no state)', async () => {
  const f = await fleet(2, () => 88);
  const alarm = alarmEvent('other-Primary-breaker-HostMemory');
  const r = await evaluateFleet(alarm, f.settings, clients, NOW);
  expect(r.endpoints).toEqual({});
  expect(r.calls).toEqual(['ssm:GetParameters']);
});

test('a CLOSED endpoint whose published level is not CLOSED (a level write that was lost) is read and republished, not skipped', async () => {
  const f = await fleet(2, () => 45);
  // ep-0: the table says CLOSED, its parameter still says DEGRADED; ep-1: level 0 but a stale state name.
  f.params.set('/level/ep-0', JSON.stringify({ level: 1, state: 'DEGRADED' }));
  f.params.set('/level/ep-1', JSON.stringify({ level: 0, state: 'RECOVERING' }));
  const r = await evaluateFleet(schedule, f.settings, clients, NOW);
  for (const name of ['ep-0', 'ep-1']) {
    expect(r.endpoints[name].calls).toContain('sagemaker:DescribeEndpoint');
    expect(JSON.parse(f.params.get(`/level/${name}`)!)).toMatchObject({ level: 0, state: 'CLOSED' });
  }
});

test('an endpoint whose level parameter does not exist yet is evaluated and its level written', async () => {
  const f = await fleet(1, () => 45);
  f.params.delete('/level/ep-0');
  const r = await evaluateFleet(schedule, f.settings, clients, NOW);
  expect(r.endpoints['ep-0']).toMatchObject({ outcome: 'evaluated', state: 'CLOSED' });
  expect(JSON.parse(f.params.get('/level/ep-0')!)).toMatchObject({ level: 0, state: 'CLOSED' });
});
