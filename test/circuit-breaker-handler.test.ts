import {
  ApplicationAutoScalingClient,
  DescribeScalableTargetsCommand,
  RegisterScalableTargetCommand,
  ScalableTarget,
  ValidationException as AasValidationException,
} from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import {
  DescribeEndpointCommand,
  SageMakerClient,
  SageMakerServiceException,
  UpdateEndpointWeightsAndCapacitiesCommand,
} from '@aws-sdk/client-sagemaker';
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { evaluate } from '../lambda/circuit-breaker/evaluate';
import { Clients, createClients, HandlerSettings } from '../lambda/circuit-breaker/settings';
import { BreakerState, serializeState } from '../lib/breaker/policy';
import { breakerSettings } from './breaker-settings';
import { CloudWatchFake } from './cloudwatch-fake';
import { LocalDynamoDb } from './local-dynamodb';

const sm = mockClient(SageMakerClient);
const cw = mockClient(CloudWatchClient);
const ssm = mockClient(SSMClient);
const aas = mockClient(ApplicationAutoScalingClient);
// aws-sdk-client-mock answers every client of a mocked class; DynamoDB is a real engine (dynalite) that
// evaluates the conditional writes.
let db: LocalDynamoDb;
let clients: Clients;
beforeAll(async () => {
  db = await LocalDynamoDb.start('state');
  clients = { ...createClients(1), dynamodb: db.client };
});
afterAll(() => db.stop());
const NOW = Date.UTC(2026, 10, 29, 12, 0, 30);
const settings: HandlerSettings = breakerSettings('rec', { gpuCount: 1 });
const scaled: HandlerSettings = {
  ...settings,
  primaryCapacity: { min: 2, max: 4, qpsPerInstance: 150 },
  fallbackCapacity: { min: 1, max: 4, qpsPerInstance: 150 },
};
const schedule = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };
const alarmEvent = {
  source: 'aws.cloudwatch',
  'detail-type': 'CloudWatch Alarm State Change',
  detail: { alarmName: 'rec-Primary-breaker-HostMemory', state: { value: 'ALARM' } },
};
// As SageMaker sends it (developer guide, automating-sagemaker-with-eventbridge): status in upper snake case.
const inServiceEvent = {
  version: '0',
  source: 'aws.sagemaker',
  'detail-type': 'SageMaker Endpoint State Change',
  resources: ['arn:aws:sagemaker:us-east-1:123456789012:endpoint/rec'],
  detail: { EndpointName: 'rec', EndpointStatus: 'IN_SERVICE', ProductionVariants: [{ DesiredWeight: 1.0, DesiredInstanceCount: 2.0 }] },
};

// ---------- the state item (in the local DynamoDB), the SSM parameter, the endpoint ----------
/** The state item as the last evaluation left it. */
const item = () => db.get('breaker');
let parameter: string | undefined;
/**
 * Application Auto Scaling as its API documents it: RegisterScalableTarget changes only what it is given
 * ("Any parameters that you don't specify are not changed") — except that a SuspendedState sent with
 * fields left out resets those to false, the pessimistic reading of what AWS does not state (item 31).
 */
let targets: Map<string, ScalableTarget>;
function scalableTargets(bounds: Record<string, [number, number]> = { Primary: [2, 4], Fallback: [1, 4] }) {
  targets = new Map(
    Object.entries(bounds).map(([variant, [min, max]]) => {
      const ResourceId = `endpoint/rec/variant/${variant}`;
      return [
        ResourceId,
        {
          ServiceNamespace: 'sagemaker',
          ResourceId,
          ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
          MinCapacity: min,
          MaxCapacity: max,
          RoleARN: 'arn:aws:iam::123456789012:role/aws-service-role/x',
          CreationTime: new Date(0),
          SuspendedState: { DynamicScalingInSuspended: false, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: false },
        },
      ];
    }),
  );
  aas.on(DescribeScalableTargetsCommand).callsFake(input => ({
    ScalableTargets: [...targets.values()].filter(t => (input.ResourceIds ?? [t.ResourceId]).includes(t.ResourceId)).map(t => structuredClone(t)),
  }));
  aas.on(RegisterScalableTargetCommand).callsFake(input => {
    const t = targets.get(input.ResourceId)!;
    if (input.MinCapacity !== undefined) t.MinCapacity = input.MinCapacity;
    if (input.MaxCapacity !== undefined) t.MaxCapacity = input.MaxCapacity;
    if (input.SuspendedState) {
      t.SuspendedState = {
        DynamicScalingInSuspended: input.SuspendedState.DynamicScalingInSuspended ?? false,
        DynamicScalingOutSuspended: input.SuspendedState.DynamicScalingOutSuspended ?? false,
        ScheduledScalingSuspended: input.SuspendedState.ScheduledScalingSuspended ?? false,
      };
    }
    return { ScalableTargetARN: 'arn:aws:application-autoscaling:us-east-1:123456789012:scalable-target/abc' };
  });
}
function param() {
  ssm.on(GetParameterCommand).callsFake(() => {
    if (parameter === undefined) throw Object.assign(new Error('not found'), { name: 'ParameterNotFound', $metadata: {} });
    return { Parameter: { Value: parameter } };
  });
  ssm.on(PutParameterCommand).callsFake(input => {
    parameter = input.Value;
    return { Version: 2 };
  });
}
/** A stored state: the DynamoDB item (version 7) and the parameter as a previous evaluation left them. */
async function stored(state?: BreakerState, capacity?: object) {
  if (state) {
    await db.put({
      pk: { S: 'breaker' },
      version: { N: '7' },
      state: { S: JSON.stringify(state) },
      ...(capacity ? { capacity: { S: JSON.stringify(capacity) } } : {}),
    });
    db.calls.length = 0; // count only the evaluation's own calls
  }
  parameter = state ? serializeState(state, ['before']) : undefined;
}
function endpoint(status = 'InService', primary = 1, fallback = 0, instances: [number, number] = [2, 1]) {
  sm.on(DescribeEndpointCommand).resolves({
    EndpointStatus: status as any,
    ProductionVariants: [
      { VariantName: 'Primary', DesiredWeight: primary, CurrentInstanceCount: instances[0] },
      { VariantName: 'Fallback', DesiredWeight: fallback, CurrentInstanceCount: instances[1] },
    ],
  });
}

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
    // A 5XX is a model error too (InvocationModelErrors counts every answer that was not a 2XX).
    .putMinutes('AWS/SageMaker', 'InvocationModelErrors', DIMS, LAST_MINUTE, Array(10).fill(errors / 10))
    .putMinutes('AWS/SageMaker', 'Invocations', DIMS, LAST_MINUTE, Array(10).fill(invocations / 10));
  serve(fake);
  return fake;
}
function serve(fake: CloudWatchFake) {
  cw.on(GetMetricDataCommand).callsFake(input => fake.getMetricData(input, NOW));
}
const weightCalls = () => sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand).map(c => c.args[0].input.DesiredWeightsAndCapacities);
const published = () => (parameter ? JSON.parse(parameter) : undefined);

const CLOSED: BreakerState = { state: 'CLOSED', since: NOW - 3600_000, share: 0, entryShare: 0, step: 0 };
const MIN = 60_000;
const DEGRADED: BreakerState = { state: 'DEGRADED', since: NOW - 60_000, share: 0.5, entryShare: 0.5, step: 0 };

beforeEach(async () => {
  sm.reset();
  cw.reset();
  ssm.reset();
  await db.clear();
  aas.reset();
  param();
  scalableTargets();
  jest.spyOn(console, 'log').mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

test('GPU memory at 84 % of the T4 degrades: level published, weights 0.5/0.5; 4 reads, then claim and act', async () => {
  await stored(CLOSED);
  metrics([40, 41, 42], [60, 70, 84]);
  endpoint();
  const r = await evaluate(alarmEvent, settings, clients, NOW);
  expect(r).toMatchObject({ outcome: 'evaluated', state: 'DEGRADED', level: 1 });
  expect(weightCalls()).toEqual([
    [
      { VariantName: 'Primary', DesiredWeight: 0.5 },
      { VariantName: 'Fallback', DesiredWeight: 0.5 },
    ],
  ]);
  expect(published()).toMatchObject({ level: 1, state: 'DEGRADED' });
  expect(r.calls).toEqual([
    'dynamodb:GetItem',
    'ssm:GetParameter',
    'cloudwatch:GetMetricData',
    'sagemaker:DescribeEndpoint',
    'dynamodb:PutItem',
    'ssm:PutParameter',
    'sagemaker:UpdateEndpointWeightsAndCapacities',
  ]);
  expect(JSON.parse((await item())!.state.S!)).toMatchObject({ state: 'DEGRADED', share: 0.5 });
  expect((await item())!.version.N).toBe('8');
});

test('steady state costs 4 reads and no writes', async () => {
  await stored(CLOSED);
  metrics([40, 41], [30, 30]);
  endpoint();
  const r = await evaluate(schedule, settings, clients, NOW);
  expect(r.calls).toEqual(['dynamodb:GetItem', 'ssm:GetParameter', 'cloudwatch:GetMetricData', 'sagemaker:DescribeEndpoint']);
  expect(r.state).toBe('CLOSED');
});

test('the breaker never sets instance counts', async () => {
  await stored(CLOSED);
  metrics([97], []);
  endpoint('InService', 1, 0, [2, 2]);
  await evaluate(schedule, settings, clients, NOW);
  for (const call of weightCalls()) for (const v of call!) expect(v.DesiredInstanceCount).toBeUndefined();
  expect(weightCalls()[0]).toEqual([
    { VariantName: 'Primary', DesiredWeight: 0 },
    { VariantName: 'Fallback', DesiredWeight: 1 },
  ]);
});

describe('while the endpoint is Updating (autoscaling, a deployment, a weight change)', () => {
  test.each(['Updating', 'SystemUpdating', 'RollingBack'])('%s: the degrade level is published at once, the weights wait', async status => {
    await stored(CLOSED);
    metrics([90], []);
    endpoint(status);
    const r = await evaluate(alarmEvent, settings, clients, NOW);
    expect(weightCalls()).toHaveLength(0);
    expect(published()).toMatchObject({ level: 1, state: 'DEGRADED' });
    expect(r.reasons.join()).toMatch(/not InService/);
  });

  test('the refused weight change is applied as soon as SageMaker reports the endpoint InService again', async () => {
    await stored(CLOSED);
    metrics([90], []);
    endpoint('Updating');
    await evaluate(alarmEvent, settings, clients, NOW);
    expect(weightCalls()).toHaveLength(0);
    endpoint('InService');
    const r = await evaluate(inServiceEvent, settings, clients, NOW + 20_000);
    expect(r.outcome).toBe('evaluated');
    expect(weightCalls()).toEqual([
      [
        { VariantName: 'Primary', DesiredWeight: 0.5 },
        { VariantName: 'Fallback', DesiredWeight: 0.5 },
      ],
    ]);
    expect(JSON.parse((await item())!.state.S!).state).toBe('DEGRADED'); // the state did not move again
  });

  test('ValidationException "Cannot update in-progress endpoint" (the race after DescribeEndpoint): no throw, level already out', async () => {
    await stored(CLOSED);
    metrics([90], []);
    endpoint();
    sm.on(UpdateEndpointWeightsAndCapacitiesCommand).rejects(
      new SageMakerServiceException({
        name: 'ValidationException',
        $fault: 'client',
        $metadata: {},
        message: 'Cannot update in-progress endpoint "arn:..."',
      }),
    );
    const r = await evaluate(schedule, settings, clients, NOW);
    expect(r.outcome).toBe('evaluated');
    expect(r.reasons.join()).toMatch(/in progress/);
    expect(published()).toMatchObject({ level: 1 });
  });

  test.each([
    ['another ValidationException', 'ValidationException', 'The variant(s) "[Fallback]" is/are not present in the endpoint'],
    ['another error that mentions in-progress', 'ThrottlingException', 'Rate exceeded while in-progress'],
  ])('%s on the weight change is a failure, not "in progress"', async (_, name, message) => {
    await stored(CLOSED);
    metrics([90], []);
    endpoint();
    sm.on(UpdateEndpointWeightsAndCapacitiesCommand).rejects(new SageMakerServiceException({ name, $fault: 'client', $metadata: {}, message }));
    const r = await evaluate(schedule, settings, clients, NOW).catch((e: Error) => ({ outcome: 'threw', reasons: [`${e.name}: ${e.message}`] }));
    expect(r.outcome).not.toBe('evaluated');
    expect(r.reasons).toEqual([`${name}: ${message}`]);
  });
});

test('a capacity update ("SageMaker Endpoint Deployment State Change", as SageMaker sends it) triggers an evaluation', async () => {
  // The shape of the developer guide's example (automating-sagemaker-with-eventbridge, eventbridge-deployment-state).
  const scalingOut = {
    version: '0',
    id: '0bd4a141-0a02-9d8a-f977-3924c3fb259c',
    'detail-type': 'SageMaker Endpoint Deployment State Change',
    source: 'aws.sagemaker',
    account: '123456789012',
    time: '2026-11-29T12:00:10Z',
    region: 'us-east-1',
    resources: ['arn:aws:sagemaker:us-east-1:123456789012:endpoint/rec'],
    detail: {
      EndpointName: 'rec',
      EndpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/rec',
      EndpointConfigName: 'rec-config-1',
      ProductionVariants: [{ VariantName: 'Primary', CurrentWeight: 1, DesiredWeight: 1, CurrentInstanceCount: 2, DesiredInstanceCount: 6 }],
      EndpointStatus: 'UPDATING',
      StatusMessage: 'Scaling out desired instance count to 6.',
    },
  };
  await stored(CLOSED);
  metrics([90], []);
  endpoint('Updating');
  const r = await evaluate(scalingOut, settings, clients, NOW);
  expect(r.outcome).toBe('evaluated');
  expect(r.state).toBe('DEGRADED');
  expect(published()).toMatchObject({ level: 1 });
});

test("the level is retried until it lands while SSM throttles (the containers' reads share its throughput)", async () => {
  await stored(CLOSED);
  metrics([90], []);
  endpoint();
  let refused = 0;
  ssm.on(PutParameterCommand).callsFake(input => {
    if (refused < 3) {
      refused++;
      throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    }
    parameter = input.Value;
    return { Version: 2 };
  });
  const r = await evaluate(alarmEvent, settings, clients, NOW);
  expect(r.outcome).toBe('evaluated');
  expect(r.calls.filter(c => c === 'ssm:PutParameter')).toHaveLength(4);
  expect(published()).toMatchObject({ level: 1, state: 'DEGRADED' });
});

test('SSM throttling that does not end: 6 attempts with waits that grow (0.1 … 1.6 s), then a clean failure the next evaluation repairs; other errors are not retried', async () => {
  await stored(CLOSED);
  metrics([90], []);
  endpoint();
  ssm.on(PutParameterCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } }));
  const started = Date.now();
  const r = await evaluate(alarmEvent, settings, clients, NOW);
  const waited = Date.now() - started;
  expect(r.outcome).toBe('failed');
  expect(r.reasons[0]).toMatch(/^ThrottlingException: Rate exceeded/);
  expect(r.calls.filter(c => c === 'ssm:PutParameter')).toHaveLength(6);
  expect(waited).toBeGreaterThanOrEqual(3000); // 100 + 200 + 400 + 800 + 1600 ms
  expect(ssm.commandCalls(PutParameterCommand)[0].args[0].input).toMatchObject({ Name: settings.parameterName, Overwrite: true, Type: 'String' });

  ssm.reset();
  param();
  ssm
    .on(PutParameterCommand)
    .rejects(Object.assign(new Error('not authorized'), { name: 'AccessDeniedException', $metadata: { httpStatusCode: 400 } }));
  const denied = await evaluate(alarmEvent, settings, clients, NOW);
  expect(denied.outcome).toBe('failed');
  expect(denied.calls.filter(c => c === 'ssm:PutParameter')).toHaveLength(1);
});

describe('capacity follows the state (Application Auto Scaling settings, never counts)', () => {
  const registered = () => aas.commandCalls(RegisterScalableTargetCommand).map(c => c.args[0].input);

  test("degrading suspends the primary's scale-in and raises the fallback's minimum, after the weight call", async () => {
    await stored(CLOSED);
    metrics([90], []);
    endpoint('InService', 1, 0, [4, 1]);
    const r = await evaluate(alarmEvent, scaled, clients, NOW);
    // 1 fallback instance can carry 150 of the primary fleet's 600 QPS: 25 %, not yet the 50 % target.
    expect(weightCalls()).toEqual([
      [
        { VariantName: 'Primary', DesiredWeight: 0.75 },
        { VariantName: 'Fallback', DesiredWeight: 0.25 },
      ],
    ]);
    expect(registered()).toEqual([
      {
        ServiceNamespace: 'sagemaker',
        ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
        ResourceId: 'endpoint/rec/variant/Primary',
        SuspendedState: { DynamicScalingInSuspended: true, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: false },
      },
      {
        ServiceNamespace: 'sagemaker',
        ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
        ResourceId: 'endpoint/rec/variant/Fallback',
        MinCapacity: 2,
      },
    ]);
    const order = r.calls.filter(
      c =>
        !c.startsWith('dynamodb') &&
        !c.endsWith('Get') &&
        !['ssm:GetParameter', 'cloudwatch:GetMetricData', 'sagemaker:DescribeEndpoint'].includes(c),
    );
    expect(order).toEqual([
      'application-autoscaling:DescribeScalableTargets',
      'ssm:PutParameter',
      'sagemaker:UpdateEndpointWeightsAndCapacities',
      'application-autoscaling:RegisterScalableTarget',
      'application-autoscaling:RegisterScalableTarget',
    ]);
    expect(JSON.parse((await item())!.capacity.S!)).toEqual({ suspendPrimaryScaleIn: true, fallbackMinCapacity: 2 });
  });

  test('once the fallback has its instances, the full share moves; capacity is not registered twice', async () => {
    await stored(DEGRADED, { suspendPrimaryScaleIn: true, fallbackMinCapacity: 2 });
    targets.get('endpoint/rec/variant/Primary')!.SuspendedState!.DynamicScalingInSuspended = true;
    targets.get('endpoint/rec/variant/Fallback')!.MinCapacity = 2;
    metrics([85], []);
    endpoint('InService', 0.75, 0.25, [4, 2]);
    await evaluate(schedule, scaled, clients, NOW);
    expect(weightCalls()).toEqual([
      [
        { VariantName: 'Primary', DesiredWeight: 0.5 },
        { VariantName: 'Fallback', DesiredWeight: 0.5 },
      ],
    ]);
    expect(registered()).toEqual([]);
  });

  test('back to CLOSED: scale-in resumed, the fallback back to its configured minimum', async () => {
    const last: BreakerState = { state: 'RECOVERING', since: NOW - 600_000, share: 1 / 6, entryShare: 0.5, step: 2 };
    await stored(last, { suspendPrimaryScaleIn: true, fallbackMinCapacity: 2 });
    targets.get('endpoint/rec/variant/Primary')!.SuspendedState!.DynamicScalingInSuspended = true;
    targets.get('endpoint/rec/variant/Fallback')!.MinCapacity = 2;
    metrics(Array(10).fill(40), []);
    endpoint('InService', 0.85, 0.15, [4, 2]);
    const r = await evaluate(schedule, scaled, clients, NOW);
    expect(r.state).toBe('CLOSED');
    expect(registered().map(x => x.SuspendedState ?? { MinCapacity: x.MinCapacity })).toEqual([
      { DynamicScalingInSuspended: false, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: false },
      { MinCapacity: 1 },
    ]);
  });

  test('the whole SuspendedState is sent, read first: a scheduled-scaling suspension set by someone else survives the hold', async () => {
    await stored(CLOSED);
    targets.get('endpoint/rec/variant/Primary')!.SuspendedState!.ScheduledScalingSuspended = true; // an operator's freeze
    metrics([90], []);
    endpoint('InService', 1, 0, [4, 1]);
    await evaluate(alarmEvent, scaled, clients, NOW);
    expect(targets.get('endpoint/rec/variant/Primary')!.SuspendedState).toEqual({
      DynamicScalingInSuspended: true,
      DynamicScalingOutSuspended: false,
      ScheduledScalingSuspended: true,
    });
  });

  test('a stack update that reset the targets while degraded (scale-in back on, fallback minimum back to 1) is re-applied on the next evaluation', async () => {
    await stored({ ...DEGRADED, since: NOW - 2 * MIN }, { suspendPrimaryScaleIn: true, fallbackMinCapacity: 2 });
    // CloudFormation re-registered both targets with the template's bounds: what the breaker set is gone.
    scalableTargets({ Primary: [2, 4], Fallback: [1, 4] });
    metrics([85], []);
    endpoint('InService', 0.5, 0.5, [4, 2]);
    const r = await evaluate(schedule, scaled, clients, NOW);
    expect(r.state).toBe('DEGRADED');
    expect(targets.get('endpoint/rec/variant/Primary')!.SuspendedState!.DynamicScalingInSuspended).toBe(true);
    expect(targets.get('endpoint/rec/variant/Fallback')!.MinCapacity).toBe(2);
    expect(r.reasons.join()).toMatch(/scale-in suspended again \(the target was reset\)/);
    // The next evaluation finds them as applied: no further calls.
    aas.resetHistory();
    await evaluate(schedule, scaled, clients, NOW + MIN);
    expect(registered()).toEqual([]);
  });

  test('an Application Auto Scaling failure is logged and retried next time; weights and level still applied', async () => {
    await stored(CLOSED);
    metrics([90], []);
    endpoint('InService', 1, 0, [2, 1]);
    aas.on(RegisterScalableTargetCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException', $metadata: {} }));
    aas.on(DescribeScalableTargetsCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException', $metadata: {} }));
    const r = await evaluate(alarmEvent, scaled, clients, NOW);
    expect(r.outcome).toBe('evaluated');
    expect(r.reasons.join()).toMatch(/scale-in suspended failed \(AccessDeniedException\)/);
    expect(published()).toMatchObject({ level: 1 });
    expect(weightCalls()).toHaveLength(1);
    expect((await item())!.capacity).toBeUndefined(); // not recorded as applied: the next evaluation tries again
  });
});

describe('capacity holds that land (real-account.md items 36, 37)', () => {
  const registered = () => aas.commandCalls(RegisterScalableTargetCommand).map(c => c.args[0].input);
  /** DescribeEndpoint as SageMaker answers it: both instance counts per variant. */
  function endpointCounts(status: string, weights: [number, number], current: [number, number], desired = current) {
    sm.on(DescribeEndpointCommand).resolves({
      EndpointName: 'rec',
      EndpointStatus: status as any,
      ProductionVariants: [
        {
          VariantName: 'Primary',
          CurrentWeight: weights[0],
          DesiredWeight: weights[0],
          CurrentInstanceCount: current[0],
          DesiredInstanceCount: desired[0],
        },
        {
          VariantName: 'Fallback',
          CurrentWeight: weights[1],
          DesiredWeight: weights[1],
          CurrentInstanceCount: current[1],
          DesiredInstanceCount: desired[1],
        },
      ],
    });
  }

  test('a minimum raised while the endpoint was Updating changed nothing: re-sent once it is InService, then left alone', async () => {
    // Degrades while the primary's own scale-out is in progress (Updating): the minimum lands on the target
    // but, the resource not being active, the capacity stays (RegisterScalableTarget's documentation).
    await stored(CLOSED);
    metrics([90], []);
    endpointCounts('Updating', [1, 0], [4, 1]);
    const r1 = await evaluate(alarmEvent, scaled, clients, NOW);
    expect(r1.state).toBe('DEGRADED');
    expect(registered().filter(x => x.MinCapacity !== undefined)).toEqual([
      expect.objectContaining({ ResourceId: 'endpoint/rec/variant/Fallback', MinCapacity: 2 }),
    ]);
    expect(targets.get('endpoint/rec/variant/Fallback')!.MinCapacity).toBe(2);
    // InService again, the fallback still at 1 instance, desired 1: the target's minimum of 2 never took.
    aas.resetHistory();
    endpointCounts('InService', [1, 0], [4, 1]);
    const r2 = await evaluate(schedule, scaled, clients, NOW + MIN);
    expect(registered()).toEqual([
      {
        ServiceNamespace: 'sagemaker',
        ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
        ResourceId: 'endpoint/rec/variant/Fallback',
        MinCapacity: 2,
      },
    ]);
    expect(r2.reasons.join()).toMatch(/Fallback: minimum capacity 2 re-sent \(the target has it, the variant has 1 instance\(s\)/);
    // Application Auto Scaling acts on it: SageMaker moves the fallback to 2 (Updating, desired 2), then InService at 2.
    for (const [status, current, desired] of [
      ['Updating', [4, 1], [4, 2]],
      ['InService', [4, 2], [4, 2]],
    ] as [string, [number, number], [number, number]][]) {
      aas.resetHistory();
      endpointCounts(status, [0.75, 0.25], current, desired);
      await evaluate(schedule, scaled, clients, NOW + 2 * MIN);
      expect(registered().filter(x => x.MinCapacity !== undefined)).toEqual([]);
    }
  });

  test('while the endpoint is still Updating, a minimum not yet reflected is not re-sent (it may be in progress)', async () => {
    await stored(DEGRADED, { suspendPrimaryScaleIn: true, fallbackMinCapacity: 2 });
    targets.get('endpoint/rec/variant/Primary')!.SuspendedState!.DynamicScalingInSuspended = true;
    targets.get('endpoint/rec/variant/Fallback')!.MinCapacity = 2;
    metrics([85], []);
    endpointCounts('Updating', [0.75, 0.25], [4, 1]);
    await evaluate(schedule, scaled, clients, NOW);
    expect(registered()).toEqual([]);
  });

  test('a ValidationException for a permission Application Auto Scaling validates: its words logged, not recorded, retried next evaluation', async () => {
    await stored(CLOSED);
    metrics([90], []);
    endpointCounts('InService', [1, 0], [4, 1]);
    // The SDK's own exception class, as AAS fails a request whose caller lacks a validated permission
    // (user guide, security_iam_permission_validation: "returns an error ... containing information about the missing permission").
    const missing = new AasValidationException({
      message:
        'User: arn:aws:sts::123456789012:assumed-role/Rec-CircuitBreakerRole/Rec-CircuitBreakerFn is not authorized to perform: cloudwatch:DescribeAlarms',
      $metadata: { httpStatusCode: 400, requestId: 'a1b2' },
    });
    aas.on(RegisterScalableTargetCommand).rejects(missing);
    const r = await evaluate(alarmEvent, scaled, clients, NOW);
    expect(r.outcome).toBe('evaluated');
    expect(r.reasons.join('\n')).toMatch(
      /Fallback: minimum capacity 2 failed \(ValidationException: User: .* is not authorized to perform: cloudwatch:DescribeAlarms\): retried on the next evaluation/,
    );
    expect(published()).toMatchObject({ level: 1 });
    expect((await item())!.capacity).toBeUndefined();
    // The grant fixed: the next evaluation makes both calls again and records them.
    scalableTargets();
    aas.resetHistory();
    await evaluate(schedule, scaled, clients, NOW + MIN);
    expect(registered().map(x => x.ResourceId)).toEqual(['endpoint/rec/variant/Primary', 'endpoint/rec/variant/Fallback']);
    expect(JSON.parse((await item())!.capacity.S!)).toEqual({ suspendPrimaryScaleIn: true, fallbackMinCapacity: 2 });
  });
});

describe('state survives stack updates and concurrent evaluations', () => {
  test('a redeploy that resets the parameter to its template value (level 0) is corrected from the state item', async () => {
    await stored(DEGRADED);
    metrics([85], []);
    endpoint('InService', 0.5, 0.5);
    parameter = JSON.stringify({ level: 0, state: 'CLOSED', since: 0, share: 0, entryShare: 0, step: 0, reasons: ['initial'] }); // CloudFormation's value
    const r = await evaluate(schedule, settings, clients, NOW);
    expect(r.state).toBe('DEGRADED');
    expect(published()).toMatchObject({ level: 1, state: 'DEGRADED' });
    expect(weightCalls()).toHaveLength(0); // the weights were retained by the endpoint
  });

  test('two evaluations that read the same version (alarm event and schedule): exactly one write succeeds, the other stops as superseded', async () => {
    await stored(CLOSED);
    metrics([60, 70, 86], []);
    endpoint();
    // Both have read version 7 before either writes: the engine's condition decides which one acts.
    const pa = db.pausedAfterRead();
    const pb = db.pausedAfterRead();
    const ra = evaluate(alarmEvent, settings, { ...clients, dynamodb: pa.client }, NOW);
    const rb = evaluate(schedule, settings, { ...clients, dynamodb: pb.client }, NOW + 200);
    await Promise.all([pa.read, pb.read]);
    pa.resume();
    pb.resume();
    const results = await Promise.all([ra, rb]);
    expect(results.map(r => r.outcome).sort()).toEqual(['evaluated', 'superseded']);
    expect(weightCalls()).toHaveLength(1);
    expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(1);
    expect(JSON.parse((await item())!.state.S!).state).toBe('DEGRADED');
    expect((await item())!.version.N).toBe('8');
  });

  test('a stale evaluation cannot undo a newer one (no weight flapping)', async () => {
    await stored(CLOSED);
    endpoint();
    // A reads version 7 (CLOSED), then waits; B reads and acts first: OPEN, weights 0/1, version 8.
    const a = db.pausedAfterRead();
    metrics([50], []);
    const ra = evaluate(schedule, settings, { ...clients, dynamodb: a.client }, NOW + 1000);
    await a.read;
    metrics([96], []);
    await evaluate(alarmEvent, settings, clients, NOW);
    expect(weightCalls()).toHaveLength(1);
    // A goes on: it sees cool memory and the endpoint at B's weights, and would restore 1/0.
    metrics([50], []);
    endpoint('InService', 0, 1);
    a.resume();
    expect((await ra).outcome).toBe('superseded');
    expect(weightCalls()).toHaveLength(1); // no flap back
    expect(JSON.parse((await item())!.state.S!).state).toBe('OPEN');
    expect((await item())!.version.N).toBe('8');
  });

  test('a first write (no item yet) from two evaluations at once: exactly one creates the item', async () => {
    metrics([40], []);
    endpoint();
    const pa = db.pausedAfterRead();
    const pb = db.pausedAfterRead();
    const ra = evaluate(schedule, settings, { ...clients, dynamodb: pa.client }, NOW);
    const rb = evaluate(schedule, settings, { ...clients, dynamodb: pb.client }, NOW);
    await Promise.all([pa.read, pb.read]);
    pa.resume();
    pb.resume();
    expect((await Promise.all([ra, rb])).map(r => r.outcome).sort()).toEqual(['evaluated', 'superseded']);
    expect((await item())!.version.N).toBe('1');
  });

  test('no stored state, or one that does not parse: a valid one is written', async () => {
    metrics([40], []);
    endpoint();
    await db.put({ pk: { S: 'breaker' }, version: { N: '3' }, state: { S: '{"level": 2, "state": "HALF-OPEN"' } });
    const r = await evaluate(schedule, settings, clients, NOW);
    expect(r.state).toBe('CLOSED');
    expect(JSON.parse((await item())!.state.S!)).toMatchObject({ state: 'CLOSED', share: 0 });
    expect(r.reasons.join()).toMatch(/did not parse: rewritten/);
    await db.clear();
    const r2 = await evaluate(schedule, settings, clients, NOW);
    expect(r2.reasons.join()).toMatch(/no stored state: writing it/);
    expect((await item())!.version.N).toBe('1');
  });
});

test('throttling after the SDK retries: gives up cleanly, writes nothing', async () => {
  await stored(CLOSED);
  endpoint();
  cw.on(GetMetricDataCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { attempts: 4 } }));
  const r = await evaluate(schedule, settings, clients, NOW);
  expect(r.outcome).toBe('failed');
  expect(r.reasons[0]).toMatch(/ThrottlingException/);
  expect(weightCalls()).toHaveLength(0);
  expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(0);
  expect(db.calls.filter(c => c === 'PutItemCommand')).toHaveLength(0);
});

test('no metric data: holds the stored state', async () => {
  await stored({ ...DEGRADED, since: NOW - 3600_000 });
  metrics([], []);
  endpoint('InService', 0.5, 0.5);
  const r = await evaluate(schedule, settings, clients, NOW);
  expect(r.state).toBe('DEGRADED');
  expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(0);
  expect(weightCalls()).toHaveLength(0);
});

test.each([
  ['null', null],
  ['a string', 'hello'],
  ['an S3 event', { source: 'aws.s3', 'detail-type': 'Object Created' }],
  ['an alarm event without a name', { source: 'aws.cloudwatch', 'detail-type': 'CloudWatch Alarm State Change', detail: {} }],
  ['a SageMaker event of another kind', { source: 'aws.sagemaker', 'detail-type': 'SageMaker Training Job State Change', detail: {} }],
])('malformed or foreign event (%s): logged and ignored, no AWS call, no throw', async (_n, ev) => {
  const r = await evaluate(ev, settings, clients, NOW);
  expect(r.outcome).toBe('ignored');
  expect(sm.calls().length + cw.calls().length + ssm.calls().length + db.calls.length).toBe(0);
});

test('dry run decides and logs but changes nothing', async () => {
  await stored(CLOSED);
  metrics([97], []);
  endpoint();
  const r = await evaluate(schedule, { ...scaled, dryRun: true }, clients, NOW);
  expect(r.state).toBe('OPEN');
  expect(r.reasons.join()).toMatch(/dry run/);
  expect(weightCalls()).toHaveLength(0);
  expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(0);
  expect(aas.commandCalls(RegisterScalableTargetCommand)).toHaveLength(0); // it may read the targets, never change them
});

test('repeated events are idempotent', async () => {
  await stored(DEGRADED);
  metrics([85], []);
  endpoint('InService', 0.5, 0.5);
  await evaluate(alarmEvent, settings, clients, NOW);
  await evaluate(alarmEvent, settings, clients, NOW);
  expect(weightCalls()).toHaveLength(0);
  expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(0);
  expect(db.calls.filter(c => c === 'PutItemCommand')).toHaveLength(0);
});

test('a JSON decision log and EMF state metrics are written', async () => {
  const logs: string[] = [];
  (console.log as jest.Mock).mockImplementation((s: string) => logs.push(s));
  await stored(CLOSED);
  metrics([90], []);
  endpoint();
  await evaluate(schedule, settings, clients, NOW);
  const decision = logs.map(l => JSON.parse(l)).find(o => o.component === 'circuit-breaker');
  expect(decision).toMatchObject({ outcome: 'evaluated', previous: 'CLOSED', state: 'DEGRADED', memory: 90 });
  const emf = logs.map(l => JSON.parse(l)).find(o => o._aws);
  expect(emf).toMatchObject({ BreakerState: 1, FallbackSharePercent: 50, DegradeLevel: 1, EndpointName: 'rec' });
  expect(emf._aws.CloudWatchMetrics[0].Namespace).toBe('NS');
});

test('an unexpected bug is rethrown so Lambda retries and the DLQ keeps the event', async () => {
  await stored(CLOSED);
  endpoint();
  cw.on(GetMetricDataCommand).resolves({ MetricDataResults: [{ Id: 'mem', Timestamps: [new Date(NOW)], Values: undefined as any }] });
  await expect(evaluate(schedule, settings, clients, NOW)).rejects.toThrow(TypeError);
});

describe('the error window matches the alarm: exactly the 10 minutes before now, at CloudWatch bucket boundaries', () => {
  const perMinute = (errors: number[], invocations: number[]) => {
    const fake = new CloudWatchFake()
      .putMinutes('/aws/sagemaker/Endpoints', 'MemoryUtilization', DIMS, LAST_MINUTE, Array(15).fill(40))
      .putMinutes('AWS/SageMaker', 'InvocationModelErrors', DIMS, LAST_MINUTE, errors)
      .putMinutes('AWS/SageMaker', 'Invocations', DIMS, LAST_MINUTE, invocations);
    serve(fake);
    return fake;
  };

  test('an error burst 6–10 minutes old opens the breaker (the newest 5 minutes are clean)', async () => {
    await stored(CLOSED);
    endpoint();
    // oldest first: minutes −10 … −6 at 20 % errors, then −5 … −1 clean: 100 / 1000 = 10 % ≥ 5 %.
    perMinute([20, 20, 20, 20, 20, 0, 0, 0, 0, 0], Array(10).fill(100));
    const r = await evaluate(alarmEvent, settings, clients, NOW);
    expect(r.state).toBe('OPEN');
    expect(r.reasons.join()).toMatch(/error rate 10 % \(dead or hung workers, 5XX\) ≥ 5 %/);
  });

  test('a burst 11–15 minutes old is outside the window and does not open it', async () => {
    await stored(CLOSED);
    endpoint();
    perMinute([50, 50, 50, 50, 50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], Array(15).fill(100));
    const r = await evaluate(alarmEvent, settings, clients, NOW);
    expect(r.state).toBe('CLOSED');
  });

  test("the query asks for 1-minute buckets (the guard's 10 s apart) over a range that starts on a minute and ends on 10 s", async () => {
    await stored(CLOSED);
    endpoint();
    const fake = perMinute(Array(10).fill(0), Array(10).fill(100));
    await evaluate(schedule, settings, clients, NOW);
    const q = fake.requests[0];
    const guard = new Set(['gp', 'gr']);
    expect(q.MetricDataQueries!.every(x => x.MetricStat!.Period === (guard.has(x.Id!) ? 10 : 60))).toBe(true);
    expect((q.EndTime as Date).getTime()).toBe(Math.floor(NOW / 10_000) * 10_000);
    expect((q.StartTime as Date).getTime() % 60_000).toBe(0);
  });
});

test('data delivered 3 minutes late still degrades (staleness judged on the newest point)', async () => {
  await stored(CLOSED);
  endpoint();
  metrics([40, 50, 60, 82, 85], [], 0, 1000, 180);
  const r = await evaluate(alarmEvent, settings, clients, NOW);
  // The two newest minutes (82, 85) are not delivered yet: 60 is the newest visible point.
  expect(r.state).toBe('CLOSED');
  const late = metrics([40, 50, 82, 85, 85], [], 0, 1000, 180);
  const r2 = await evaluate(alarmEvent, settings, clients, NOW);
  expect(late.requests).toHaveLength(1);
  expect(r2.state).toBe('DEGRADED');
});

test('a single memory spike at constant load does not leave the endpoint degraded for good: it steps back to CLOSED', async () => {
  await stored(CLOSED);
  let weights: [number, number] = [1, 0];
  const states: string[] = [];
  // Minute by minute for 40 minutes: memory 85 % in the first minute, then 50 %; traffic unchanged.
  for (let m = 0; m < 40; m++) {
    const now = NOW + m * MIN;
    const fake = new CloudWatchFake(90);
    const end = Math.floor(now / MIN) * MIN - MIN;
    for (let k = 0; k <= m + 10; k++) {
      const t = end - k * MIN;
      fake.put('/aws/sagemaker/Endpoints', 'MemoryUtilization', DIMS, t, t === Math.floor(NOW / MIN) * MIN - MIN ? 85 : 50);
      fake.put('AWS/SageMaker', 'Invocations', DIMS, t, 6000);
      fake.put('AWS/SageMaker', 'InvocationModelErrors', DIMS, t, 0);
    }
    cw.on(GetMetricDataCommand).callsFake(input => fake.getMetricData(input, now));
    endpoint('InService', weights[0], weights[1]);
    const r = await evaluate(schedule, settings, clients, now + 100_000);
    const w = weightCalls().at(-1);
    if (w) weights = [w[0].DesiredWeight!, w[1].DesiredWeight!];
    states.push(r.state!);
  }
  expect(states).toContain('DEGRADED');
  expect(states.at(-1)).toBe('CLOSED');
  expect(weights).toEqual([1, 0]);
  expect(published()).toMatchObject({ level: 0, state: 'CLOSED' });
});

describe('seen within seconds, on every GPU', () => {
  const TEN = Math.floor(NOW / 10_000) * 10_000 - 10_000; // the newest complete 10-s period
  const tenSecond = { ...settings, metricPeriodSeconds: 10 };

  test('one hot GPU of four, judged at 0, 15, 35 and 55 s into the minute: the per-GPU minute maximum weighs on every 10-s point of its minute', async () => {
    // As CloudWatch stores it: host and summed GPU memory every 10 s (delivered 20 s late), the per-GPU
    // series through Metrics Insights as 1-minute maxima at the minute's start (delivered 90 s after
    // the minute ends). One GPU at 100 %, three at 40 %: the summed metric reads 220 of 400 (mean 55 %).
    const fourGpus: HandlerSettings = { ...tenSecond, gpuCount: 4, perGpuMetrics: true };
    const base = Date.UTC(2026, 10, 29, 12, 20, 0);
    const run = async (offsetS: number, hotGpu: number) => {
      const now = base + offsetS * 1000;
      await stored({ ...CLOSED, since: now - 3600_000 });
      endpoint('InService', 1, 0, [2, 2]);
      const fake = new CloudWatchFake(20);
      for (let t = base - 20 * MIN; t < now; t += 10_000) {
        fake.put('/aws/sagemaker/Endpoints', 'MemoryUtilization', DIMS, t, 30);
        fake.put('/aws/sagemaker/Endpoints', 'GPUMemoryUtilization', DIMS, t, hotGpu + 3 * 40);
      }
      fake.putMinutes('AWS/SageMaker', 'Invocations', DIMS, Math.floor(now / MIN) * MIN - MIN, Array(10).fill(100));
      cw.on(GetMetricDataCommand).callsFake(input => {
        const insights = input.MetricDataQueries.find((q: any) => q.Expression);
        if (!insights) return fake.getMetricData(input, now);
        const [start, end] = [new Date(input.StartTime).getTime(), new Date(input.EndTime).getTime()];
        const minutes: number[] = [];
        for (let m = start; m < end; m += MIN) if (m + MIN + 90_000 <= now) minutes.push(m);
        return {
          MetricDataResults: [
            { Id: insights.Id, StatusCode: 'Complete', Timestamps: minutes.map(m => new Date(m)), Values: minutes.map(() => hotGpu) },
          ],
        };
      });
      return (await evaluate(schedule, fourGpus, clients, now)).state;
    };
    const offsets = [0, 15, 35, 55];
    const hot: (string | undefined)[] = [];
    for (const o of offsets) hot.push(await run(o, 100));
    expect(hot).toEqual(['OPEN', 'OPEN', 'OPEN', 'OPEN']); // 100 % on one GPU ≥ 95 %, whatever the second
    const cool: (string | undefined)[] = [];
    for (const o of offsets) cool.push(await run(o, 40));
    expect(cool).toEqual(['CLOSED', 'CLOSED', 'CLOSED', 'CLOSED']);
  });

  test('a container that dies while 5XX stays flat opens the breaker: its deaths are model errors (socket errors, timeouts)', async () => {
    await stored(CLOSED);
    endpoint();
    const fake = new CloudWatchFake()
      .putMinutes('/aws/sagemaker/Endpoints', 'MemoryUtilization', DIMS, LAST_MINUTE, Array(15).fill(60))
      .putMinutes('AWS/SageMaker', 'Invocations', DIMS, LAST_MINUTE, Array(10).fill(100))
      .putMinutes('AWS/SageMaker', 'Invocation5XXErrors', DIMS, LAST_MINUTE, Array(10).fill(0))
      .putMinutes('AWS/SageMaker', 'InvocationModelErrors', DIMS, LAST_MINUTE, [0, 0, 0, 0, 0, 0, 0, 30, 40, 30])
      .putMinutes('ResilientEndpoint/Application', 'DeliberateClientErrors', DIMS, LAST_MINUTE, Array(10).fill(0));
    serve(fake);
    const r = await evaluate(alarmEvent, settings, clients, NOW);
    expect(r.state).toBe('OPEN'); // 100 of 1,000 = 10 % ≥ 5 %, with no 5XX at all
  });

  test('deaths that surface as 4XX (TorchServe 507/413) count; the 4XX the container chose do not', async () => {
    const run = async (deliberate: number) => {
      await stored(CLOSED);
      endpoint();
      const fake = new CloudWatchFake()
        .putMinutes('/aws/sagemaker/Endpoints', 'MemoryUtilization', DIMS, LAST_MINUTE, Array(15).fill(60))
        .putMinutes('AWS/SageMaker', 'Invocations', DIMS, LAST_MINUTE, Array(10).fill(100))
        .putMinutes('AWS/SageMaker', 'InvocationModelErrors', DIMS, LAST_MINUTE, Array(10).fill(8))
        .putMinutes('AWS/SageMaker', 'Invocation4XXErrors', DIMS, LAST_MINUTE, Array(10).fill(8))
        .putMinutes('ResilientEndpoint/Application', 'DeliberateClientErrors', DIMS, LAST_MINUTE, Array(10).fill(deliberate));
      serve(fake);
      return (await evaluate(alarmEvent, settings, clients, NOW)).state;
    };
    expect(await run(2)).toBe('OPEN'); // 8 % 4XX, of which the container chose 2 %: 6 % are deaths
    expect(await run(8)).toBe('CLOSED'); // every 4XX was the container's own (too long, refused): no death
  });

  test("the guard's refusals and pressure reach the breaker: refusals at 1 % of requests degrade, a few at high traffic do not, pressure ≥ 95 % for 30 s opens, while instance memory reads 60 %", async () => {
    const APP = 'ResilientEndpoint/Application';
    const run = async (pressure: number, refusals: number, perMinute = 100, state: BreakerState = CLOSED) => {
      await stored(state);
      endpoint();
      const fake = new CloudWatchFake(20);
      for (let i = 0; i < 60; i++) {
        const t = TEN - (59 - i) * 10_000;
        fake.put('/aws/sagemaker/Endpoints', 'MemoryUtilization', DIMS, t, 60);
        fake.put(APP, 'GuardPressure', DIMS, t, i < 55 ? 50 : pressure);
        fake.put(APP, 'GuardMemoryRefusals', DIMS, t, i === 57 ? refusals : 0);
      }
      fake.putMinutes('AWS/SageMaker', 'Invocations', DIMS, LAST_MINUTE - MIN, Array(10).fill(perMinute));
      serve(fake);
      return evaluate(alarmEvent, tenSecond, clients, NOW);
    };
    // 100 requests a minute: 4 refusals in 120 s are 2 % of them.
    const refused = await run(50, 4);
    expect(refused.state).toBe('DEGRADED');
    expect(refused.reasons[0]).toBe('4 memory refusals by the container guard in 1 of its 10-s intervals (2 % of requests) ≥ 1 %: DEGRADED');
    // 6,000 a minute: the same 4 are 0.03 %, in one interval, with memory at 60 % and pressure 50 %: not an incident.
    const few = await run(50, 4, 6000);
    expect(few.state).toBe('CLOSED');
    expect(few.reasons[0]).toMatch(
      /^memory 60 % < 80 %: CLOSED \(4 memory refusals by the container guard in 1 of its 10-s intervals \(0.03 % of requests\): not an incident\)$/,
    );
    expect((await run(96, 0)).state).toBe('OPEN');
    expect((await run(82, 0)).state).toBe('DEGRADED');
    expect((await run(70, 0)).state).toBe('CLOSED');
  });

  test('OPEN at 40 % memory with its own tier refusals at level 2 (0.45 % of 300 requests/s, as an older container counts them) is CLOSED within 540 s, evaluation by evaluation', async () => {
    const APP = 'ResilientEndpoint/Application';
    const single: HandlerSettings = { ...tenSecond, fallbackVariant: undefined, config: { ...tenSecond.config, hasFallback: false } };
    sm.on(DescribeEndpointCommand).resolves({
      EndpointStatus: 'InService',
      ProductionVariants: [{ VariantName: 'Primary', DesiredWeight: 1, CurrentInstanceCount: 2 }],
    });
    // CloudWatch as it fills: every 10 s host memory 40 %, guard pressure 30 %, 13 or 14 refusals (0.45 % of 3,000
    // requests); Invocations 18,000 a minute. The evaluations read it at their own time, 20 s behind.
    const fake = new CloudWatchFake(20);
    const opened = NOW - 30 * MIN;
    for (let t = opened - 20 * MIN; t < opened + 30 * MIN; t += 10_000) {
      fake.put('/aws/sagemaker/Endpoints', 'MemoryUtilization', DIMS, t, 40);
      fake.put(APP, 'GuardPressure', DIMS, t, 30);
      fake.put(APP, 'GuardMemoryRefusals', DIMS, t, (t / 10_000) % 2 ? 13 : 14);
      if (t % MIN === 0) fake.put('AWS/SageMaker', 'Invocations', DIMS, t, 18_000);
    }
    let at = opened;
    cw.on(GetMetricDataCommand).callsFake(input => fake.getMetricData(input, at));
    await stored({ state: 'OPEN', since: opened, share: 1, entryShare: 1, step: 0 });
    const states: string[] = [];
    for (let k = 1; k <= 20; k++) {
      at = opened + k * MIN;
      states.push((await evaluate(schedule, single, clients, at)).state!);
    }
    // Held for the minimum dwell (300 s), then two recovery steps 120 s apart: CLOSED 9 minutes after it opened.
    expect(states.indexOf('CLOSED') + 1).toBe(9);
    expect(states.slice(0, 4)).toEqual(['OPEN', 'OPEN', 'OPEN', 'OPEN']);
    expect(states.slice(8)).toEqual(Array(12).fill('CLOSED'));
    expect(JSON.parse(parameter!)).toMatchObject({ level: 0, state: 'CLOSED' });
  });

  test('10-second data: degrades on the newest 10-s point (a 1-minute average would hide it)', async () => {
    await stored(CLOSED);
    endpoint();
    const fake = new CloudWatchFake();
    for (let i = 0; i < 30; i++) fake.put('/aws/sagemaker/Endpoints', 'MemoryUtilization', DIMS, TEN - (29 - i) * 10_000, i < 29 ? 50 : 83);
    serve(fake);
    const r = await evaluate(alarmEvent, tenSecond, clients, NOW);
    expect(r.state).toBe('DEGRADED');
    expect(fake.requests[0].MetricDataQueries!.find(q => q.Id === 'mem')!.MetricStat!.Period).toBe(10);
  });

  test('no 10-second data stored: the 1-minute series is used instead (the design still works at 60 s)', async () => {
    await stored(CLOSED);
    endpoint();
    metrics([40, 50, 81], []);
    const r = await evaluate(alarmEvent, tenSecond, clients, NOW);
    expect(r.state).toBe('DEGRADED');
  });

  test('a 10-s query answered with 1-minute points (CloudWatch keeps only 1-minute data), memory at 30 %: DEGRADED recovers within the dwell', async () => {
    await stored({ ...DEGRADED, since: NOW - 6 * MIN });
    endpoint('InService', 0.5, 0.5);
    const fake = metrics(Array(10).fill(30), [], 0, 1000, 90); // one point a minute, delivered 90 s late
    const r = await evaluate(schedule, tenSecond, clients, NOW);
    // What CloudWatch answered to the Period-10 query: points a minute apart, not every 10 s.
    const q = fake.requests[0].MetricDataQueries!.find(x => x.Id === 'mem')!;
    expect(q.MetricStat!.Period).toBe(10);
    expect(r.state).toBe('RECOVERING');
    expect(weightCalls().at(-1)).toEqual([
      { VariantName: 'Primary', DesiredWeight: 0.6667 },
      { VariantName: 'Fallback', DesiredWeight: 0.3333 },
    ]);
  });

  test('10-s points lost now and then (one every 2 minutes), memory at 30 %: the 1-minute maxima cover the holes and it recovers', async () => {
    await stored({ ...DEGRADED, since: NOW - 6 * MIN });
    endpoint('InService', 0.5, 0.5);
    const fake = new CloudWatchFake(20);
    for (let i = 0; i < 90; i++) if (i % 12 !== 5) fake.put('/aws/sagemaker/Endpoints', 'MemoryUtilization', DIMS, TEN - (89 - i) * 10_000, 30);
    fake.putMinutes('AWS/SageMaker', 'Invocations', DIMS, LAST_MINUTE, Array(10).fill(100));
    serve(fake);
    const r = await evaluate(schedule, tenSecond, clients, NOW);
    expect(fake.requests[0].MetricDataQueries!.find(q => q.Id === 'mem60')!.MetricStat!.Period).toBe(60);
    expect(r.state).toBe('RECOVERING');
  });

  test('one hot GPU of four (100 %) with the others at 40 % degrades and opens, though the summed metric reads 220 of 400', async () => {
    const fourGpus: HandlerSettings = { ...settings, gpuCount: 4, perGpuMetrics: true };
    await stored(CLOSED);
    endpoint('InService', 1, 0, [2, 2]);
    const fake = metrics([30, 30, 30], [160, 190, 220]);
    const perGpu = { ...DIMS, InstanceId: 'i-1', AcceleratorId: 'GPU-2' };
    fake.putMinutes('/aws/sagemaker/Endpoints', 'GPUMemoryUtilization', perGpu, LAST_MINUTE, [70, 85, 100]);
    let insightsFails = false;
    cw.on(GetMetricDataCommand).callsFake(input => {
      // Metrics Insights (its own call): the MAX over every per-GPU series of the variant, per period.
      const insights = input.MetricDataQueries.find((q: any) => q.Expression);
      if (!insights) return fake.getMetricData(input, NOW);
      expect(input.MetricDataQueries).toHaveLength(1);
      expect(insights.Expression).toBe(
        `SELECT MAX(GPUMemoryUtilization) FROM SCHEMA("/aws/sagemaker/Endpoints", AcceleratorId, EndpointName, InstanceId, VariantName) WHERE EndpointName = 'rec' AND VariantName = 'Primary'`,
      );
      expect(insights.Period).toBe(60); // Metrics Insights is 1-minute data whatever the period asked
      if (insightsFails) throw Object.assign(new Error('invalid query'), { name: 'InvalidParameterValueException', $metadata: {} });
      return {
        MetricDataResults: [{ Id: insights.Id, Timestamps: [60_000 * 2, 60_000, 0].map(d => new Date(LAST_MINUTE - d)), Values: [70, 85, 100] }],
      };
    });
    const r = await evaluate(alarmEvent, fourGpus, clients, NOW);
    expect(r.state).toBe('OPEN'); // 100 % on one GPU ≥ 95 %
    await stored(CLOSED);
    const meanOnly = await evaluate(alarmEvent, { ...fourGpus, perGpuMetrics: false }, clients, NOW);
    expect(meanOnly.state).toBe('CLOSED'); // the mean GPU (220 / 4 = 55 %) would not even degrade
    // A rejected per-GPU query costs only the per-GPU data: the evaluation goes on with the mean.
    insightsFails = true;
    await stored(CLOSED);
    const rejected = await evaluate(alarmEvent, fourGpus, clients, NOW);
    expect(rejected).toMatchObject({ outcome: 'evaluated', state: 'CLOSED' });
  });
});
