import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeEndpointCommand, SageMakerClient, SageMakerServiceException, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { evaluate, HandlerSettings } from '../lambda/circuit-breaker/handler';
import { DEFAULT_CONFIG, serializeState } from '../lambda/circuit-breaker/policy';
import { CloudWatchFake } from './cloudwatch-fake';

const sm = mockClient(SageMakerClient);
const cw = mockClient(CloudWatchClient);
const ssm = mockClient(SSMClient);
const clients = { sagemaker: new SageMakerClient({}), cloudwatch: new CloudWatchClient({}), ssm: new SSMClient({}) };
const NOW = Date.UTC(2026, 10, 29, 12, 0, 30);
const settings: HandlerSettings = {
  endpointName: 'rec', primaryVariant: 'Primary', fallbackVariant: 'Fallback', parameterName: '/breaker/rec',
  gpuCount: 1, errorWindowSeconds: 600, dryRun: false, metricNamespace: 'NS', config: DEFAULT_CONFIG,
};
const schedule = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };
const alarmEvent = { source: 'aws.cloudwatch', 'detail-type': 'CloudWatch Alarm State Change', detail: { alarmName: 'rec-Primary-breaker-HostMemory', state: { value: 'ALARM' } } };

const DIMS = { EndpointName: 'rec', VariantName: 'Primary' };
const LAST_MINUTE = Math.floor(NOW / 60_000) * 60_000 - 60_000; // the newest complete minute
/**
 * Publishes 1-minute data the way SageMaker does (host and GPU memory per minute, the newest last;
 * invocations and 5XX spread evenly over the 10 minutes before now) into a CloudWatch stand-in that
 * answers GetMetricData with CloudWatch's bucket layout.
 */
function metrics(host: number[], gpu: number[], errors = 0, invocations = 1000, delayS = 0): CloudWatchFake {
  const fake = new CloudWatchFake(delayS)
    .putMinutes('/aws/sagemaker/Endpoints', 'MemoryUtilization', DIMS, LAST_MINUTE, host)
    .putMinutes('/aws/sagemaker/Endpoints', 'GPUMemoryUtilization', DIMS, LAST_MINUTE, gpu)
    .putMinutes('AWS/SageMaker', 'Invocation5XXErrors', DIMS, LAST_MINUTE, Array(10).fill(errors / 10))
    .putMinutes('AWS/SageMaker', 'Invocations', DIMS, LAST_MINUTE, Array(10).fill(invocations / 10));
  serve(fake);
  return fake;
}
function serve(fake: CloudWatchFake) {
  cw.on(GetMetricDataCommand).callsFake(input => fake.getMetricData(input, NOW));
}
function endpoint(status = 'InService', primary = 1, fallback = 0) {
  sm.on(DescribeEndpointCommand).resolves({
    EndpointStatus: status as any,
    ProductionVariants: [{ VariantName: 'Primary', DesiredWeight: primary }, { VariantName: 'Fallback', DesiredWeight: fallback }],
  });
}
function stored(state?: object) {
  if (state) ssm.on(GetParameterCommand).resolves({ Parameter: { Value: serializeState(state as any, []) } });
  else ssm.on(GetParameterCommand).rejects(Object.assign(new Error('not found'), { name: 'ParameterNotFound', $metadata: {} }));
}

beforeEach(() => {
  sm.reset(); cw.reset(); ssm.reset();
  jest.spyOn(console, 'log').mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

test('GPU memory at 84 % of the T4 degrades: weights 0.5/0.5, level 1 stored; 3 reads + 2 writes', async () => {
  stored(); metrics([40, 41, 42], [60, 70, 84]); endpoint();
  const r = await evaluate(alarmEvent, settings, clients, NOW);
  expect(r).toMatchObject({ outcome: 'evaluated', state: 'DEGRADED', level: 1 });
  expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)[0].args[0].input).toEqual({
    EndpointName: 'rec', DesiredWeightsAndCapacities: [{ VariantName: 'Primary', DesiredWeight: 0.5 }, { VariantName: 'Fallback', DesiredWeight: 0.5 }],
  });
  const put = ssm.commandCalls(PutParameterCommand)[0].args[0].input;
  expect(JSON.parse(put.Value!)).toMatchObject({ level: 1, state: 'DEGRADED' });
  expect(r.calls).toEqual(['ssm:GetParameter', 'cloudwatch:GetMetricData', 'sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpointWeightsAndCapacities', 'ssm:PutParameter']);
  const q = cw.commandCalls(GetMetricDataCommand);
  expect(q).toHaveLength(1);
  expect(q[0].args[0].input.MetricDataQueries!.map(x => x.Id)).toEqual(['mem', 'gpu', 'err', 'inv']);
});

const CLOSED = { state: 'CLOSED', since: NOW - 3600_000, share: 0, entryShare: 0, step: 0 };

test('steady state costs 3 reads and no writes', async () => {
  stored(CLOSED); metrics([40, 41], [30, 30]); endpoint();
  const r = await evaluate(schedule, settings, clients, NOW);
  expect(r.calls).toEqual(['ssm:GetParameter', 'cloudwatch:GetMetricData', 'sagemaker:DescribeEndpoint']);
  expect(r.state).toBe('CLOSED');
});

test('the breaker never sets instance counts', async () => {
  stored(); metrics([97], []); endpoint();
  await evaluate(schedule, settings, clients, NOW);
  for (const c of sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)) {
    for (const v of c.args[0].input.DesiredWeightsAndCapacities!) expect(v.DesiredInstanceCount).toBeUndefined();
  }
  expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)[0].args[0].input.DesiredWeightsAndCapacities).toEqual([
    { VariantName: 'Primary', DesiredWeight: 0 }, { VariantName: 'Fallback', DesiredWeight: 1 },
  ]);
});

test.each(['Updating', 'SystemUpdating', 'RollingBack'])('endpoint %s: no weight write, level still published', async (status) => {
  stored(); metrics([90], []); endpoint(status);
  const r = await evaluate(schedule, settings, clients, NOW);
  expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
  expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(1);
  expect(r.reasons.join()).toMatch(/not InService/);
});

test('ValidationException "Cannot update in-progress endpoint": logged, retried next tick, no throw', async () => {
  stored(); metrics([90], []); endpoint();
  sm.on(UpdateEndpointWeightsAndCapacitiesCommand).rejects(new SageMakerServiceException({
    name: 'ValidationException', $fault: 'client', $metadata: {}, message: 'Cannot update in-progress endpoint "arn:..."',
  }));
  const r = await evaluate(schedule, settings, clients, NOW);
  expect(r.outcome).toBe('evaluated');
  expect(r.reasons.join()).toMatch(/in progress/);
  expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(1);
});

test('throttling after the SDK retries: gives up cleanly, writes nothing', async () => {
  stored(); endpoint();
  cw.on(GetMetricDataCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { attempts: 4 } }));
  const r = await evaluate(schedule, settings, clients, NOW);
  expect(r.outcome).toBe('failed');
  expect(r.reasons[0]).toMatch(/ThrottlingException/);
  expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
  expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(0);
});

test('no metric data: holds the stored state', async () => {
  stored({ state: 'DEGRADED', since: NOW - 3600_000, share: 0.5, entryShare: 0.5, step: 0 }); metrics([], []); endpoint('InService', 0.5, 0.5);
  const r = await evaluate(schedule, settings, clients, NOW);
  expect(r.state).toBe('DEGRADED');
  expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(0);
  expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
});

test.each([
  ['null', null], ['a string', 'hello'], ['an S3 event', { source: 'aws.s3', 'detail-type': 'Object Created' }],
  ['an alarm event without a name', { source: 'aws.cloudwatch', 'detail-type': 'CloudWatch Alarm State Change', detail: {} }],
])('malformed or foreign event (%s): logged and ignored, no AWS call, no throw', async (_n, ev) => {
  const r = await evaluate(ev, settings, clients, NOW);
  expect(r.outcome).toBe('ignored');
  expect(sm.calls().length + cw.calls().length + ssm.calls().length).toBe(0);
});

test('dry run decides and logs but changes nothing', async () => {
  stored(); metrics([97], []); endpoint();
  const r = await evaluate(schedule, { ...settings, dryRun: true }, clients, NOW);
  expect(r.state).toBe('OPEN');
  expect(r.reasons.join()).toMatch(/dry run/);
  expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
  expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(0);
});

test('repeated events are idempotent', async () => {
  stored({ state: 'DEGRADED', since: NOW - 60_000, share: 0.5, entryShare: 0.5, step: 0 }); metrics([85], []); endpoint('InService', 0.5, 0.5);
  await evaluate(alarmEvent, settings, clients, NOW);
  await evaluate(alarmEvent, settings, clients, NOW);
  expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
  expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(0);
});

test('a JSON decision log and an EMF state metric are written', async () => {
  const logs: string[] = [];
  (console.log as jest.Mock).mockImplementation((s: string) => logs.push(s));
  stored(); metrics([90], []); endpoint();
  await evaluate(schedule, settings, clients, NOW);
  const decision = logs.map(l => JSON.parse(l)).find(o => o.component === 'circuit-breaker');
  expect(decision).toMatchObject({ outcome: 'evaluated', previous: 'CLOSED', state: 'DEGRADED', memory: 90 });
  const emf = logs.map(l => JSON.parse(l)).find(o => o._aws);
  expect(emf).toMatchObject({ BreakerState: 1, FallbackSharePercent: 50, EndpointName: 'rec' });
  expect(emf._aws.CloudWatchMetrics[0].Namespace).toBe('NS');
});

test('an unexpected bug is rethrown so Lambda retries and the DLQ keeps the event', async () => {
  stored(); endpoint();
  cw.on(GetMetricDataCommand).resolves({ MetricDataResults: [{ Id: 'mem', Timestamps: [new Date(NOW)], Values: undefined as any }] });
  await expect(evaluate(schedule, settings, clients, NOW)).rejects.toThrow(TypeError);
});

describe('the 5XX window matches the alarm: exactly the 10 minutes before now, at CloudWatch bucket boundaries', () => {
  const perMinute = (errors: number[], invocations: number[]) => {
    const fake = new CloudWatchFake()
      .putMinutes('/aws/sagemaker/Endpoints', 'MemoryUtilization', DIMS, LAST_MINUTE, Array(15).fill(40))
      .putMinutes('AWS/SageMaker', 'Invocation5XXErrors', DIMS, LAST_MINUTE, errors)
      .putMinutes('AWS/SageMaker', 'Invocations', DIMS, LAST_MINUTE, invocations);
    serve(fake);
    return fake;
  };

  test('an error burst 6–10 minutes old opens the breaker (the newest 5 minutes are clean)', async () => {
    stored(CLOSED); endpoint();
    // oldest first: minutes −10 … −6 at 20 % errors, then −5 … −1 clean: 100 / 1000 = 10 % ≥ 5 %.
    perMinute([20, 20, 20, 20, 20, 0, 0, 0, 0, 0], Array(10).fill(100));
    const r = await evaluate(alarmEvent, settings, clients, NOW);
    expect(r.state).toBe('OPEN');
    expect(r.reasons.join()).toMatch(/5XX rate 10 % ≥ 5 %/);
  });

  test('a burst 11–15 minutes old is outside the window and does not open it', async () => {
    stored(CLOSED); endpoint();
    perMinute([50, 50, 50, 50, 50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], Array(15).fill(100));
    const r = await evaluate(alarmEvent, settings, clients, NOW);
    expect(r.state).toBe('CLOSED');
  });

  test('the query asks for 1-minute buckets over a range that starts and ends on minute boundaries', async () => {
    stored(CLOSED); endpoint();
    const fake = perMinute(Array(10).fill(0), Array(10).fill(100));
    await evaluate(schedule, settings, clients, NOW);
    const q = fake.requests[0];
    expect(q.MetricDataQueries!.every(x => x.MetricStat!.Period === 60)).toBe(true);
    expect((q.EndTime as Date).getTime() % 60_000).toBe(0);
    expect((q.StartTime as Date).getTime() % 60_000).toBe(0);
  });
});

test('data delivered 3 minutes late still degrades (staleness judged on the newest point)', async () => {
  stored(CLOSED); endpoint();
  metrics([40, 50, 60, 82, 85], [], 0, 1000, 180);
  const r = await evaluate(alarmEvent, settings, clients, NOW);
  // The two newest minutes (82, 85) are not delivered yet: 60 is the newest visible point.
  expect(r.state).toBe('CLOSED');
  const late = metrics([40, 50, 82, 85, 85], [], 0, 1000, 180);
  const r2 = await evaluate(alarmEvent, settings, clients, NOW);
  expect(late.requests).toHaveLength(1);
  expect(r2.state).toBe('DEGRADED');
});

test('a stored state that does not parse is rewritten with a valid one', async () => {
  ssm.on(GetParameterCommand).resolves({ Parameter: { Value: '{"level": 2, "state": "HALF-OPEN"' } });
  metrics([40], []); endpoint();
  const r = await evaluate(schedule, settings, clients, NOW);
  expect(r.state).toBe('CLOSED');
  const put = ssm.commandCalls(PutParameterCommand);
  expect(put).toHaveLength(1);
  expect(JSON.parse(put[0].args[0].input.Value!)).toMatchObject({ level: 0, state: 'CLOSED' });
  expect(r.reasons.join()).toMatch(/did not parse: rewritten/);
});

test('two concurrent evaluations (alarm event and schedule at once) write the same absolute state and weights', async () => {
  stored(CLOSED); metrics([60, 70, 86], []); endpoint();
  const [a, b] = await Promise.all([evaluate(alarmEvent, settings, clients, NOW), evaluate(schedule, settings, clients, NOW + 200)]);
  expect([a.state, b.state]).toEqual(['DEGRADED', 'DEGRADED']);
  const weights = sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand).map(c => c.args[0].input.DesiredWeightsAndCapacities);
  expect(weights).toHaveLength(2);
  expect(weights[0]).toEqual(weights[1]); // absolute weights, never increments: applying twice = applying once
  const states = ssm.commandCalls(PutParameterCommand).map(c => JSON.parse(c.args[0].input.Value!));
  expect(states.map(s => [s.state, s.level, s.share])).toEqual([['DEGRADED', 1, 0.5], ['DEGRADED', 1, 0.5]]);
});
