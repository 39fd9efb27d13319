import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeEndpointCommand, SageMakerClient, SageMakerServiceException, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { evaluate, HandlerSettings } from '../lambda/circuit-breaker/handler';
import { DEFAULT_CONFIG, serializeState } from '../lambda/circuit-breaker/policy';

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

function metrics(host: number[], gpu: number[], errors = 0, invocations = 1000) {
  const ts = (n: number) => Array.from({ length: n }, (_, i) => new Date(NOW - (n - i) * 60_000));
  cw.on(GetMetricDataCommand).resolves({
    MetricDataResults: [
      { Id: 'mem', Timestamps: ts(host.length), Values: host },
      { Id: 'gpu', Timestamps: ts(gpu.length), Values: gpu },
      { Id: 'err', Timestamps: [new Date(NOW - 600_000)], Values: [errors] },
      { Id: 'inv', Timestamps: [new Date(NOW - 600_000)], Values: [invocations] },
    ],
  });
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

test('steady state costs 3 reads and no writes', async () => {
  stored(); metrics([40, 41], [30, 30]); endpoint();
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
