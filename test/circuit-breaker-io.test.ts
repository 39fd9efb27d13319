/**
 * The breaker function's thin AWS layer, piece by piece: the CloudWatch queries it sends and how it
 * reads CloudWatch's answers, the Application Auto Scaling calls that hold capacity, its settings and
 * its log and metric lines, and the Lambda entry point's choice of mode. Answers are shaped as the
 * services return them (MetricDataResult with Date timestamps, ScalableTarget with its SuspendedState,
 * the SDK's own exception classes).
 */
import {
  ApplicationAutoScalingClient,
  DescribeScalableTargetsCommand,
  RegisterScalableTargetCommand,
  ScalableTarget,
  ValidationException,
} from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchClient, GetMetricDataCommand, LimitExceededException, MetricDataResult } from '@aws-sdk/client-cloudwatch';
import { GetParametersCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { applyCapacity, capacityChanges, LiveEndpoint, liveEndpoint, readTargets, sameCapacity } from '../lambda/circuit-breaker/capacity';
import { metricQueries, metricWindow, parseReadings, perGpuSeries, readMetrics, withHottestGpu } from '../lambda/circuit-breaker/metrics';
import { Clients, createClients, fleetSettingsFromEnv, HandlerSettings, settingsFromEnv } from '../lambda/circuit-breaker/settings';
import { emitMetric, summarize } from '../lambda/circuit-breaker/telemetry';
import { BREAKER_NAMESPACE } from '../lib/breaker/contract';
import { DEFAULT_CONFIG } from '../lib/breaker/policy';
import { breakerSettings } from './breaker-settings';

const cw = mockClient(CloudWatchClient);
const aas = mockClient(ApplicationAutoScalingClient);
const ssm = mockClient(SSMClient);
const clients: Clients = createClients(1);
let logged: string[];
beforeEach(() => {
  cw.reset();
  aas.reset();
  ssm.reset();
  logged = [];
  jest.spyOn(console, 'log').mockImplementation((line: string) => void logged.push(line));
});
afterEach(() => jest.restoreAllMocks());

const NOW = Date.UTC(2026, 10, 29, 12, 0, 37, 500); // 12:00:37.5
const MINUTE = Date.UTC(2026, 10, 29, 12, 0, 0);
const at = (t: number) => new Date(t);
/** A MetricDataResult as GetMetricData returns it (timestamps as Date, ascending). */
const result = (Id: string, points: [number, number][]): MetricDataResult => ({
  Id,
  Label: Id,
  StatusCode: 'Complete',
  Timestamps: points.map(([t]) => at(t)),
  Values: points.map(([, v]) => v),
});

describe('what the breaker asks CloudWatch', () => {
  test('the range ends on the last 10-s boundary whatever the period (the guard publishes every 10 s) and starts ≥ 15 minutes earlier on a minute', () => {
    for (const P of [10, 60, 300]) {
      expect(metricWindow(breakerSettings('e', { metricPeriodSeconds: P }), NOW)).toEqual({
        end: Date.UTC(2026, 10, 29, 12, 0, 30),
        start: Date.UTC(2026, 10, 29, 11, 45, 0),
      });
    }
    // 12:03:20 → 12:03:20: a range ending on the minute would hide the refusals of the last 20 s.
    expect(metricWindow(breakerSettings('e', { metricPeriodSeconds: 300 }), MINUTE + 200_000).end).toBe(MINUTE + 200_000);
    // An error window longer than 15 minutes widens the range to it.
    expect(metricWindow(breakerSettings('e', { errorWindowSeconds: 1800 }), NOW).start).toBe(MINUTE - 30 * 60_000);
  });

  test('the queries: memory at the period, its 1-minute twin below 60 s, GPU memory only with GPUs, and the two 1-minute counts', () => {
    const ids = (o: Partial<HandlerSettings>) => metricQueries(breakerSettings('e', o), 'x_').map(q => q.Id);
    // The fallback's Invocations too (the endpoint's traffic); an endpoint without a fallback has no such query.
    const counts = ['x_merr', 'x_e4', 'x_dce', 'x_inv', 'x_invf', 'x_gp', 'x_gr'];
    expect(ids({ metricPeriodSeconds: 60, gpuCount: 0, fallbackVariant: undefined })).toEqual([
      'x_mem',
      'x_merr',
      'x_e4',
      'x_dce',
      'x_inv',
      'x_gp',
      'x_gr',
    ]);
    const invf = metricQueries(breakerSettings('e'), '').find(q => q.Id === 'invf')!.MetricStat!;
    expect(invf).toEqual({
      Metric: {
        Namespace: 'AWS/SageMaker',
        MetricName: 'Invocations',
        Dimensions: [
          { Name: 'EndpointName', Value: 'e' },
          { Name: 'VariantName', Value: 'Fallback' },
        ],
      },
      Period: 60,
      Stat: 'Sum',
    });
    expect(ids({ metricPeriodSeconds: 60, gpuCount: 0 })).toEqual(['x_mem', ...counts]);
    expect(ids({ metricPeriodSeconds: 60, gpuCount: 1 })).toEqual(['x_mem', 'x_gpu', ...counts]);
    expect(ids({ metricPeriodSeconds: 10, gpuCount: 0 })).toEqual(['x_mem', 'x_mem60', ...counts]);
    expect(ids({ metricPeriodSeconds: 10, gpuCount: 4 })).toEqual(['x_mem', 'x_gpu', 'x_mem60', 'x_gpu60', ...counts]);
    const byId = Object.fromEntries(
      metricQueries(breakerSettings('rec', { metricPeriodSeconds: 10, gpuCount: 4 }), '').map(q => [q.Id, q.MetricStat]),
    );
    const dims = [
      { Name: 'EndpointName', Value: 'rec' },
      { Name: 'VariantName', Value: 'Primary' },
    ];
    expect(byId.gpu60).toEqual({
      Metric: { Namespace: '/aws/sagemaker/Endpoints', MetricName: 'GPUMemoryUtilization', Dimensions: dims },
      Period: 60,
      Stat: 'Maximum',
    });
    expect(byId.mem).toEqual({
      Metric: { Namespace: '/aws/sagemaker/Endpoints', MetricName: 'MemoryUtilization', Dimensions: dims },
      Period: 10,
      Stat: 'Maximum',
    });
    expect(byId.merr).toEqual({
      Metric: { Namespace: 'AWS/SageMaker', MetricName: 'InvocationModelErrors', Dimensions: dims },
      Period: 60,
      Stat: 'Sum',
    });
    expect(byId.e4).toEqual({ Metric: { Namespace: 'AWS/SageMaker', MetricName: 'Invocation4XXErrors', Dimensions: dims }, Period: 60, Stat: 'Sum' });
    // The container's own metrics: in the application namespace (the default, or the one it is told), same dimensions.
    expect(byId.dce).toEqual({
      Metric: { Namespace: 'ResilientEndpoint/Application', MetricName: 'DeliberateClientErrors', Dimensions: dims },
      Period: 60,
      Stat: 'Sum',
    });
    expect(byId.gp).toEqual({
      Metric: { Namespace: 'ResilientEndpoint/Application', MetricName: 'GuardPressure', Dimensions: dims },
      Period: 10,
      Stat: 'Maximum',
    });
    expect(byId.gr).toEqual({
      Metric: { Namespace: 'ResilientEndpoint/Application', MetricName: 'GuardMemoryRefusals', Dimensions: dims },
      Period: 10,
      Stat: 'Sum',
    });
    const mine = metricQueries(breakerSettings('rec', { applicationNamespace: 'Mine/App' }), '').find(q => q.Id === 'gr')!;
    expect(mine.MetricStat!.Metric!.Namespace).toBe('Mine/App');
  });

  test('one GetMetricData, oldest first, over the window', async () => {
    cw.on(GetMetricDataCommand).resolves({ MetricDataResults: [] });
    const calls: string[] = [];
    await readMetrics(breakerSettings('e'), clients, NOW, calls);
    expect(calls).toEqual(['cloudwatch:GetMetricData']);
    expect(cw.commandCalls(GetMetricDataCommand)[0].args[0].input).toMatchObject({
      StartTime: at(MINUTE - 15 * 60_000),
      EndTime: at(MINUTE + 30_000),
      ScanBy: 'TimestampAscending',
    });
  });
});

describe('the per-GPU query', () => {
  const multi = breakerSettings('e', { gpuCount: 4, perGpuMetrics: true });
  test('only for more than one GPU with per-GPU data; a Metrics Insights query at 1 minute, oldest first', async () => {
    cw.on(GetMetricDataCommand).resolves({ MetricDataResults: [result('gpudev', [[MINUTE - 60_000, 91]])] });
    for (const s of [breakerSettings('e', { gpuCount: 1, perGpuMetrics: true }), breakerSettings('e', { gpuCount: 4, perGpuMetrics: false })]) {
      const calls: string[] = [];
      expect(await perGpuSeries(s, clients, NOW, calls)).toEqual([]);
      expect(calls).toEqual([]);
    }
    const calls: string[] = [];
    expect(await perGpuSeries(multi, clients, NOW, calls)).toEqual([{ t: MINUTE - 60_000, v: 91 }]);
    expect(calls).toEqual(['cloudwatch:GetMetricData']);
    const input = cw.commandCalls(GetMetricDataCommand)[0].args[0].input;
    expect(input.MetricDataQueries).toEqual([{ Id: 'gpudev', Expression: expect.stringMatching(/^SELECT MAX\(GPUMemoryUtilization\)/), Period: 60 }]);
    expect(input.ScanBy).toBe('TimestampAscending');
  });

  test('a rejected query costs only the per-GPU data, and says why', async () => {
    cw.on(GetMetricDataCommand).rejects(new LimitExceededException({ message: 'too many', $metadata: {} }));
    expect(await perGpuSeries(multi, clients, NOW, [])).toEqual([]);
    expect(logged.map(l => JSON.parse(l))).toEqual([
      {
        component: 'circuit-breaker',
        level: 'warn',
        endpoint: 'e',
        message: 'per-GPU query failed (LimitExceededException): judging the mean GPU only',
      },
    ]);
  });
});

describe("reading CloudWatch's answer", () => {
  const fine = breakerSettings('e', { metricPeriodSeconds: 10, gpuCount: 2 });
  const t = (s: number) => MINUTE - 60_000 + s * 1000;

  test('host and GPU points merge by time, in time order, the mean GPU being the summed metric over the GPUs', () => {
    const r = parseReadings(
      fine,
      [
        result('mem', [
          [t(0), 50],
          [t(20), 55],
        ]),
        result('gpu', [
          [t(10), 170], // 2 GPUs: 85 % on average, at a time the host has no point
          [t(20), 100],
        ]),
      ],
      '',
      [],
      NOW,
    );
    expect(r.memory).toEqual([
      { t: t(0), v: 50 },
      { t: t(10), v: 85 },
      { t: t(20), v: 55 },
    ]);
  });

  test('a timestamp without a value is dropped', () => {
    const broken: MetricDataResult = { Id: 'mem', Timestamps: [at(t(0)), at(t(10))], Values: [60] };
    expect(parseReadings(fine, [broken], '', [], NOW).memory).toEqual([{ t: t(0), v: 60 }]);
  });

  test('no 10-second data: the 1-minute series (host and GPU) stands in, and is not given twice', () => {
    const r = parseReadings(fine, [result('mem60', [[t(0), 40]]), result('gpu60', [[t(0), 180]])], '', [], NOW);
    expect(r.memory).toEqual([{ t: t(0), v: 90 }]);
    expect(r.minuteMemory).toBeUndefined();
    // With 10-second data the 1-minute maxima come beside it.
    const both = parseReadings(fine, [result('mem', [[t(50), 41]]), result('mem60', [[t(0), 70]])], '', [], NOW);
    expect(both.memory).toEqual([{ t: t(50), v: 41 }]);
    expect(both.minuteMemory).toEqual([{ t: t(0), v: 70 }]);
  });

  test('at a 1-minute period there is no separate 1-minute series; no memory data is no memory points', () => {
    const minute = breakerSettings('e', { metricPeriodSeconds: 60 });
    const r = parseReadings(minute, [result('mem', [[t(0), 40]])], '', [], NOW);
    expect(r.minuteMemory).toBeUndefined();
    expect(r.maxSpacingSeconds).toBe(60);
    expect(parseReadings(minute, [], '', [], NOW).memory).toEqual([]);
    expect(parseReadings(breakerSettings('e', { metricPeriodSeconds: 300 }), [], '', [], NOW).maxSpacingSeconds).toBe(300);
  });

  test('errors and invocations: the whole minutes of the window, not the minute in progress; no counts at all is no data', () => {
    const s = breakerSettings('e', { errorWindowSeconds: 120 });
    const r = parseReadings(
      s,
      [
        result('merr', [
          [MINUTE - 180_000, 50], // before the window
          [MINUTE - 120_000, 1],
          [MINUTE - 60_000, 2],
          [MINUTE, 40], // the minute in progress
        ]),
        result('inv', [
          [MINUTE - 120_000, 100],
          [MINUTE - 60_000, 100],
          [MINUTE, 100],
        ]),
      ],
      '',
      [],
      NOW,
    );
    expect(r).toMatchObject({ errors: 3, invocations: 200 });
    // Requests without any model-error datapoint: no errors. No requests either: nothing known.
    expect(parseReadings(s, [result('inv', [[MINUTE - 60_000, 10]])], '', [], NOW)).toMatchObject({ errors: 0, invocations: 10 });
    const none = parseReadings(s, [], '', [], NOW);
    expect(none.errors).toBeUndefined();
    expect(none.invocations).toBeUndefined();
  });

  test('requests per minute: the primary’s alone (its guard’s refusals are a share of them) and every variant’s summed by minute (the endpoint’s traffic)', () => {
    const r = parseReadings(
      breakerSettings('e'),
      [
        result('inv', [
          [MINUTE - 120_000, 300],
          [MINUTE - 60_000, 200],
        ]),
        result('invf', [
          [MINUTE - 180_000, 7],
          [MINUTE - 60_000, 100],
        ]),
      ],
      '',
      [],
      NOW,
    );
    expect(r.invocationsPerMinute).toEqual([
      { t: MINUTE - 120_000, v: 300 },
      { t: MINUTE - 60_000, v: 200 },
    ]);
    expect(r.endpointInvocationsPerMinute).toEqual([
      { t: MINUTE - 180_000, v: 7 },
      { t: MINUTE - 120_000, v: 300 },
      { t: MINUTE - 60_000, v: 300 },
    ]);
    const none = parseReadings(breakerSettings('e'), [], '', [], NOW);
    expect(none.invocationsPerMinute).toBeUndefined();
    expect(none.endpointInvocationsPerMinute).toBeUndefined();
  });

  // Dead workers, as SageMaker counts them (real-account.md items 38, 48): InvocationModelErrors counts
  // every answer that was not a 2XX; Invocation5XXErrors only the 5XX the model returned.
  const window = breakerSettings('e', { errorWindowSeconds: 120 });
  const minutes = (Id: string, a: number, b: number) =>
    result(Id, [
      [MINUTE - 120_000, a],
      [MINUTE - 60_000, b],
    ]);
  test('a container dies while 5XX stays flat (socket errors, timeouts): the deaths count', () => {
    const r = parseReadings(window, [minutes('inv', 500, 500), minutes('merr', 40, 30), minutes('e4', 0, 0), minutes('dce', 0, 0)], '', [], NOW);
    expect(r).toMatchObject({ errors: 70, invocations: 1000 });
  });

  test('deaths surfacing as 4XX (TorchServe 507/413) count; the 4XX the container chose do not', () => {
    // 90 4XX of which the container chose 20 (too long, refused for memory): 70 are deaths.
    const r = parseReadings(window, [minutes('inv', 500, 500), minutes('merr', 50, 40), minutes('e4', 50, 40), minutes('dce', 10, 10)], '', [], NOW);
    expect(r.errors).toBe(70);
    // Without the container's count (a container without the runtime helper) every 4XX is subtracted.
    const noGuard = parseReadings(window, [minutes('inv', 500, 500), minutes('merr', 50, 40), minutes('e4', 45, 40)], '', [], NOW);
    expect(noGuard.errors).toBe(5);
    // More deliberate 4XX than model errors (they are published apart, a bucket may lag): clamped at 0.
    expect(parseReadings(window, [minutes('inv', 500, 500), minutes('merr', 1, 1), minutes('dce', 5, 5)], '', [], NOW).errors).toBe(0);
  });

  test("the guard's pressure and refusals come through as they are (10-s points); none published is none", () => {
    const ten = (Id: string, vs: number[]) =>
      result(
        Id,
        vs.map((v, i) => [MINUTE + i * 10_000, v] as [number, number]),
      );
    const r = parseReadings(window, [ten('gp', [70, 85, 92]), ten('gr', [0, 0, 3])], '', [], NOW);
    expect(r.guardPressure).toEqual([
      { t: MINUTE, v: 70 },
      { t: MINUTE + 10_000, v: 85 },
      { t: MINUTE + 20_000, v: 92 },
    ]);
    expect(r.guardRefusals!.map(p => p.v)).toEqual([0, 0, 3]);
    const silent = parseReadings(window, [], '', [], NOW);
    expect(silent.guardPressure).toBeUndefined();
    expect(silent.guardRefusals).toBeUndefined();
  });
});

describe('the hottest GPU weighs on every 10-s point of its minute', () => {
  const M = MINUTE; // 12:00
  const ten = (from: number, n: number, v = 40) => Array.from({ length: n }, (_, i) => ({ t: from + i * 10_000, v }));
  test("each point takes its minute's per-GPU maximum, or the newest earlier one for up to 3 minutes from that one's start", () => {
    // 10-s memory from 11:58 to 12:00:50; per-GPU maxima for 11:58 (100 %) and 11:59 (70 %), none yet for 12:00.
    const memory = ten(M - 120_000, 18);
    const out = withHottestGpu(memory, [
      { t: M - 60_000, v: 70 },
      { t: M - 120_000, v: 100 },
    ]);
    expect(out.map(p => p.v)).toEqual([...Array(6).fill(100), ...Array(6).fill(70), ...Array(6).fill(70)]);
    // A point of its own below the per-GPU value keeps the higher one; a hotter point keeps its own.
    expect(withHottestGpu([{ t: M + 10_000, v: 90 }], [{ t: M, v: 60 }])).toEqual([{ t: M + 10_000, v: 90 }]);
    // 180 s after the per-GPU point's minute start it weighs no more (179 s still does).
    expect(withHottestGpu([{ t: M + 179_999, v: 10 }], [{ t: M, v: 99 }])[0].v).toBe(99);
    expect(withHottestGpu([{ t: M + 180_000, v: 10 }], [{ t: M, v: 99 }])[0].v).toBe(10);
    // Points before any per-GPU point keep their own value.
    expect(withHottestGpu([{ t: M - 10_000, v: 10 }], [{ t: M, v: 99 }])).toEqual([
      { t: M - 10_000, v: 10 },
      { t: M, v: 99 },
    ]);
  });

  test('per-GPU points newer than every memory point (or with no memory data) are points of their own; none: memory as it is', () => {
    expect(withHottestGpu([], [{ t: M, v: 99 }])).toEqual([{ t: M, v: 99 }]);
    const memory = ten(M, 3);
    expect(withHottestGpu(memory, [])).toBe(memory);
    expect(withHottestGpu(memory, [{ t: M + 60_000, v: 88 }])).toEqual([...memory, { t: M + 60_000, v: 88 }]);
    // Unsorted per-GPU input is taken in time order.
    expect(
      withHottestGpu(ten(M, 1), [
        { t: M, v: 50 },
        { t: M - 60_000, v: 90 },
      ])[0].v,
    ).toBe(50);
  });

  test('parseReadings applies it to the fine series and to the 1-minute one', () => {
    const s = breakerSettings('e', { metricPeriodSeconds: 10, gpuCount: 4, perGpuMetrics: true });
    const r = parseReadings(
      s,
      [
        result('mem', [
          [M, 30],
          [M + 10_000, 30],
        ]),
        result('mem60', [[M, 30]]),
      ],
      '',
      [{ t: M, v: 97 }],
      NOW,
    );
    expect(r.memory).toEqual([
      { t: M, v: 97 },
      { t: M + 10_000, v: 97 },
    ]);
    expect(r.minuteMemory).toEqual([{ t: M, v: 97 }]);
  });
});

describe('reading CloudWatch, at the edges', () => {
  test("a per-GPU point at the newest memory point's time is that point's maximum, not a second point", () => {
    expect(withHottestGpu([{ t: MINUTE, v: 40 }], [{ t: MINUTE, v: 99 }])).toEqual([{ t: MINUTE, v: 99 }]);
    expect(
      withHottestGpu(
        [
          { t: MINUTE - 10_000, v: 40 },
          { t: MINUTE, v: 40 },
        ],
        [{ t: MINUTE, v: 99 }],
      ),
    ).toEqual([
      { t: MINUTE - 10_000, v: 40 },
      { t: MINUTE, v: 99 },
    ]);
  });

  test('an answer without MetricDataResults is no data, not a failure', async () => {
    cw.on(GetMetricDataCommand).resolves({});
    expect(await perGpuSeries(breakerSettings('e', { gpuCount: 4, perGpuMetrics: true }), clients, NOW, [])).toEqual([]);
    expect(logged).toEqual([]);
    const r = await readMetrics(breakerSettings('e'), clients, NOW, []);
    expect(r).toMatchObject({ memory: [], errors: undefined, invocations: undefined });
  });
});

// ---------- capacity ----------
const scaled = breakerSettings('rec', {
  primaryCapacity: { min: 2, max: 4, qpsPerInstance: 150 },
  fallbackCapacity: { min: 1, max: 4, qpsPerInstance: 150 },
});
const target = (variant: string, o: Partial<ScalableTarget> = {}): ScalableTarget => ({
  ServiceNamespace: 'sagemaker',
  ResourceId: `endpoint/rec/variant/${variant}`,
  ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
  MinCapacity: 1,
  MaxCapacity: 4,
  RoleARN:
    'arn:aws:iam::123456789012:role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint',
  CreationTime: at(0),
  SuspendedState: { DynamicScalingInSuspended: false, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: false },
  ...o,
});
const live = (...ts: ScalableTarget[]) => new Map(ts.map(x => [x.ResourceId!, x]));
const hold = { suspendPrimaryScaleIn: true, fallbackMinCapacity: 3 };
const release = { suspendPrimaryScaleIn: false, fallbackMinCapacity: 1 };

describe('capacity holds', () => {
  test('sameCapacity: both fields must match; nothing recorded is the template (scale-in on, the configured minimum)', () => {
    expect(sameCapacity(hold, hold, scaled)).toBe(true);
    expect(sameCapacity(hold, { ...hold, fallbackMinCapacity: 2 }, scaled)).toBe(false);
    expect(sameCapacity(hold, { ...hold, suspendPrimaryScaleIn: false }, scaled)).toBe(false);
    expect(sameCapacity(release, undefined, scaled)).toBe(true);
    expect(sameCapacity({ suspendPrimaryScaleIn: true, fallbackMinCapacity: 1 }, undefined, scaled)).toBe(false);
    expect(sameCapacity({ suspendPrimaryScaleIn: false, fallbackMinCapacity: 2 }, undefined, scaled)).toBe(false);
    const unscaled = breakerSettings('rec');
    expect(sameCapacity({ suspendPrimaryScaleIn: false, fallbackMinCapacity: undefined }, undefined, unscaled)).toBe(true);
  });

  test('a primary with scheduled actions: scheduled scaling suspended with scale-in while holding, resumed with it on release, and compared on its own', () => {
    const sched = { suspendPrimaryScaleIn: true, suspendPrimaryScheduled: true, fallbackMinCapacity: 1 };
    const resume = { suspendPrimaryScaleIn: false, suspendPrimaryScheduled: false, fallbackMinCapacity: 1 };
    expect(capacityChanges(scaled, sched, live(target('Primary'), target('Fallback')), undefined)).toEqual([
      {
        what: 'Primary: scale-in suspended, scheduled scaling suspended until CLOSED (a scheduled action due meanwhile is not run later)',
        input: {
          ServiceNamespace: 'sagemaker',
          ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
          ResourceId: 'endpoint/rec/variant/Primary',
          SuspendedState: { DynamicScalingInSuspended: true, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: true },
        },
      },
    ]);
    const held = target('Primary', {
      SuspendedState: { DynamicScalingInSuspended: true, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: true },
    });
    expect(capacityChanges(scaled, sched, live(held, target('Fallback')), sched)).toEqual([]);
    expect(capacityChanges(scaled, resume, live(held, target('Fallback')), sched).map(c => [c.what, c.input.SuspendedState])).toEqual([
      [
        'Primary: scale-in resumed, scheduled scaling resumed',
        { DynamicScalingInSuspended: false, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: false },
      ],
    ]);
    // A stack update reset scheduled scaling alone: it is suspended again, scale-in left as it is.
    const reset = target('Primary', {
      SuspendedState: { DynamicScalingInSuspended: true, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: false },
    });
    expect(capacityChanges(scaled, sched, live(reset, target('Fallback')), sched).map(c => c.what)).toEqual([
      'Primary: scheduled scaling suspended until CLOSED again (the target was reset) (a scheduled action due meanwhile is not run later)',
    ]);
    // Without the targets read: the record decides.
    expect(capacityChanges(scaled, sched, undefined, { ...sched, suspendPrimaryScheduled: false }).map(c => c.input.SuspendedState)).toEqual([
      { DynamicScalingInSuspended: true, ScheduledScalingSuspended: true },
    ]);
    expect(sameCapacity(sched, { ...sched, suspendPrimaryScheduled: false }, scaled)).toBe(false);
    expect(sameCapacity(sched, sched, scaled)).toBe(true);
    expect(sameCapacity({ suspendPrimaryScaleIn: false, fallbackMinCapacity: 1 }, resume, scaled)).toBe(true);
  });

  test('scheduled scaling held: a target read without its ScheduledScalingSuspended counts as running; resumed again after a reset, said so', () => {
    const sched = { suspendPrimaryScaleIn: true, suspendPrimaryScheduled: true, fallbackMinCapacity: 1 };
    const resume = { suspendPrimaryScaleIn: false, suspendPrimaryScheduled: false, fallbackMinCapacity: 1 };
    // The field is absent from what was read: scheduled scaling runs, so the hold suspends it (again: the record says it was).
    const bare = target('Primary', { SuspendedState: { DynamicScalingInSuspended: true, DynamicScalingOutSuspended: false } });
    expect(capacityChanges(scaled, sched, live(bare, target('Fallback')), sched).map(c => [c.what, c.input.SuspendedState])).toEqual([
      [
        'Primary: scheduled scaling suspended until CLOSED again (the target was reset) (a scheduled action due meanwhile is not run later)',
        { DynamicScalingInSuspended: true, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: true },
      ],
    ]);
    // CLOSED, recorded resumed, but the target reads suspended: resumed again, and the log says the target was reset.
    const frozen = target('Primary', {
      SuspendedState: { DynamicScalingInSuspended: false, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: true },
    });
    expect(capacityChanges(scaled, resume, live(frozen, target('Fallback')), resume).map(c => [c.what, c.input.SuspendedState])).toEqual([
      [
        'Primary: scheduled scaling resumed again (the target was reset)',
        { DynamicScalingInSuspended: false, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: false },
      ],
    ]);
    // Nothing recorded yet (the first evaluation): resumed, not "again".
    expect(capacityChanges(scaled, resume, live(frozen, target('Fallback')), undefined).map(c => c.what)).toEqual([
      'Primary: scheduled scaling resumed',
    ]);
  });

  test('scheduled scaling held, the targets unreadable: the record decides (suspended stays, released is resumed, nothing recorded is running)', () => {
    const sched = { suspendPrimaryScaleIn: true, suspendPrimaryScheduled: true, fallbackMinCapacity: 1 };
    const resume = { suspendPrimaryScaleIn: false, suspendPrimaryScheduled: false, fallbackMinCapacity: 1 };
    expect(capacityChanges(scaled, sched, undefined, sched)).toEqual([]);
    expect(capacityChanges(scaled, resume, undefined, sched).map(c => [c.what, c.input.SuspendedState])).toEqual([
      ['Primary: scale-in resumed, scheduled scaling resumed', { DynamicScalingInSuspended: false, ScheduledScalingSuspended: false }],
    ]);
    expect(capacityChanges(scaled, sched, undefined, undefined).map(c => [c.what, c.input.SuspendedState])).toEqual([
      [
        'Primary: scale-in suspended, scheduled scaling suspended until CLOSED (a scheduled action due meanwhile is not run later)',
        { DynamicScalingInSuspended: true, ScheduledScalingSuspended: true },
      ],
    ]);
  });

  test('the targets read are the scaled variants only, by resource id; a failed read says so and gives nothing', async () => {
    aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [target('Primary')] });
    const calls: string[] = [];
    const got = await readTargets(breakerSettings('rec', { primaryCapacity: scaled.primaryCapacity }), clients, calls);
    expect([...got!.keys()]).toEqual(['endpoint/rec/variant/Primary']);
    expect(calls).toEqual(['application-autoscaling:DescribeScalableTargets']);
    expect(aas.commandCalls(DescribeScalableTargetsCommand)[0].args[0].input).toEqual({
      ServiceNamespace: 'sagemaker',
      ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
      ResourceIds: ['endpoint/rec/variant/Primary'],
    });
    await readTargets(breakerSettings('rec', { fallbackCapacity: scaled.fallbackCapacity }), clients, []);
    expect(aas.commandCalls(DescribeScalableTargetsCommand)[1].args[0].input.ResourceIds).toEqual(['endpoint/rec/variant/Fallback']);
    aas.on(DescribeScalableTargetsCommand).rejects(new ValidationException({ message: 'no', $metadata: {} }));
    expect(await readTargets(scaled, clients, [])).toBeUndefined();
    expect(JSON.parse(logged[0])).toMatchObject({
      level: 'warn',
      endpoint: 'rec',
      message: 'DescribeScalableTargets failed (ValidationException): comparing with what was last applied',
    });
  });

  test('holding: scale-in suspended with the other two suspensions as read, the fallback minimum raised', () => {
    const someoneElse = target('Primary', {
      SuspendedState: { DynamicScalingInSuspended: false, DynamicScalingOutSuspended: true, ScheduledScalingSuspended: true },
    });
    const changes = capacityChanges(scaled, hold, live(someoneElse, target('Fallback')), undefined);
    expect(changes).toEqual([
      {
        what: 'Primary: scale-in suspended',
        input: {
          ServiceNamespace: 'sagemaker',
          ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
          ResourceId: 'endpoint/rec/variant/Primary',
          SuspendedState: { DynamicScalingInSuspended: true, DynamicScalingOutSuspended: true, ScheduledScalingSuspended: true },
        },
      },
      {
        what: 'Fallback: minimum capacity 3',
        input: {
          ServiceNamespace: 'sagemaker',
          ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
          ResourceId: 'endpoint/rec/variant/Fallback',
          MinCapacity: 3,
        },
      },
    ]);
    // A target read without a SuspendedState: nothing was suspended.
    const bare = capacityChanges(scaled, hold, live(target('Primary', { SuspendedState: undefined }), target('Fallback')), undefined);
    expect(bare[0].input.SuspendedState).toEqual({
      DynamicScalingInSuspended: true,
      DynamicScalingOutSuspended: false,
      ScheduledScalingSuspended: false,
    });
  });

  test('releasing, and re-applying what a stack update reset', () => {
    const held = live(
      target('Primary', { SuspendedState: { DynamicScalingInSuspended: true, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: false } }),
      target('Fallback', { MinCapacity: 3 }),
    );
    expect(capacityChanges(scaled, release, held, hold).map(c => c.what)).toEqual(['Primary: scale-in resumed', 'Fallback: minimum capacity 1']);
    // The record says held, the live targets say reset: "again".
    expect(capacityChanges(scaled, hold, live(target('Primary'), target('Fallback')), hold).map(c => c.what)).toEqual([
      'Primary: scale-in suspended again (the target was reset)',
      'Fallback: minimum capacity 3 again (the target was reset)',
    ]);
    // Already as wanted: nothing to do.
    expect(capacityChanges(scaled, hold, held, hold)).toEqual([]);
  });

  test('without live targets the record is compared; without a record, the template', () => {
    expect(capacityChanges(scaled, hold, undefined, hold)).toEqual([]);
    expect(capacityChanges(scaled, hold, undefined, undefined).map(c => c.what)).toEqual([
      'Primary: scale-in suspended',
      'Fallback: minimum capacity 3',
    ]);
    expect(capacityChanges(scaled, release, undefined, undefined)).toEqual([]);
    expect(capacityChanges(scaled, release, undefined, hold).map(c => c.what)).toEqual(['Primary: scale-in resumed', 'Fallback: minimum capacity 1']);
    // Without live targets and without a record, the primary is not touched when it is not to be held.
    expect(capacityChanges(scaled, { suspendPrimaryScaleIn: false, fallbackMinCapacity: 2 }, undefined, undefined).map(c => c.what)).toEqual([
      'Fallback: minimum capacity 2',
    ]);
  });

  test('a variant that is not scaled, or whose target is not there, is left alone', () => {
    // Live targets were read but neither variant has one (deleted, or not yet created): no call to make.
    expect(capacityChanges(scaled, hold, live(), hold)).toEqual([]);
    expect(
      capacityChanges(breakerSettings('rec', { fallbackCapacity: scaled.fallbackCapacity }), hold, undefined, undefined).map(c => c.what),
    ).toEqual(['Fallback: minimum capacity 3']);
    expect(capacityChanges(breakerSettings('rec', { primaryCapacity: scaled.primaryCapacity }), hold, undefined, undefined).map(c => c.what)).toEqual(
      ['Primary: scale-in suspended'],
    );
    expect(capacityChanges({ ...scaled, fallbackVariant: undefined }, hold, undefined, undefined).map(c => c.what)).toEqual([
      'Primary: scale-in suspended',
    ]);
    expect(capacityChanges(scaled, { suspendPrimaryScaleIn: true, fallbackMinCapacity: undefined }, undefined, undefined).map(c => c.what)).toEqual([
      'Primary: scale-in suspended',
    ]);
  });

  test('a failed RegisterScalableTarget is named in the reasons and retried next time', async () => {
    aas.on(RegisterScalableTargetCommand).rejects(new ValidationException({ message: 'no', $metadata: {} }));
    const reasons: string[] = [];
    const calls: string[] = [];
    expect(await applyCapacity(clients, capacityChanges(scaled, hold, undefined, undefined).slice(0, 1), calls, reasons)).toBe(false);
    expect(reasons).toEqual(['Primary: scale-in suspended failed (ValidationException: no): retried on the next evaluation']);
    expect(calls).toEqual(['application-autoscaling:RegisterScalableTarget']);
  });
});

describe('capacity holds: the re-sent minimum and the calls, at their edges', () => {
  const inService = (instances: LiveEndpoint['instances']): LiveEndpoint => ({ status: 'InService', instances });
  const fallbackAt3 = () =>
    live(
      target('Primary', { SuspendedState: { ...target('Primary').SuspendedState, DynamicScalingInSuspended: true } }),
      target('Fallback', { MinCapacity: 3 }),
    );

  test('a minimum is re-sent only when the target was read and has it; without a read target nothing is known to re-send', () => {
    // The target read has MinCapacity 3, the variant shows 1: re-sent.
    expect(capacityChanges(scaled, hold, fallbackAt3(), hold, inService({ Fallback: { current: 1, desired: 1 } })).map(c => c.what)).toEqual([
      'Fallback: minimum capacity 3 re-sent (the target has it, the variant has 1 instance(s): a change made while the endpoint was updating does not change capacity)',
    ]);
    // DescribeScalableTargets failed (no live targets), the record says held: the record alone is no evidence the target has it.
    expect(capacityChanges(scaled, hold, undefined, hold, inService({ Fallback: { current: 1, desired: 1 } }))).toEqual([]);
  });

  test('the count judged is the one the variant is moving to (DesiredInstanceCount), else the current one; a variant not described is left alone', () => {
    // Moving to 3 already: not re-sent, though only 1 runs.
    expect(capacityChanges(scaled, hold, fallbackAt3(), hold, inService({ Fallback: { current: 1, desired: 3 } }))).toEqual([]);
    // 3 running but moving to 1: re-sent, naming the 1.
    expect(capacityChanges(scaled, hold, fallbackAt3(), hold, inService({ Fallback: { current: 3, desired: 1 } })).map(c => c.what)).toEqual([
      expect.stringContaining('the variant has 1 instance(s)'),
    ]);
    // Only the current count known.
    expect(capacityChanges(scaled, hold, fallbackAt3(), hold, inService({ Fallback: { current: 2 } }))).toHaveLength(1);
    // DescribeEndpoint without the fallback variant (or without any): nothing to compare, no call.
    expect(capacityChanges(scaled, hold, fallbackAt3(), hold, inService({ Primary: { current: 4, desired: 4 } }))).toEqual([]);
    expect(capacityChanges(scaled, hold, fallbackAt3(), hold, liveEndpoint({ EndpointStatus: 'InService' }))).toEqual([]);
    expect(liveEndpoint({})).toEqual({ status: 'Unknown', instances: {} });
  });

  test("a ValidationException's words are kept up to 300 characters; a call that succeeds is named and reported true", async () => {
    const long = `User: arn:aws:sts::123456789012:assumed-role/R/F is not authorized to perform: cloudwatch:DescribeAlarms ${'x'.repeat(400)}`;
    aas.on(RegisterScalableTargetCommand).rejects(new ValidationException({ message: long, $metadata: {} }));
    const reasons: string[] = [];
    expect(await applyCapacity(clients, capacityChanges(scaled, hold, undefined, undefined).slice(0, 1), [], reasons)).toBe(false);
    expect(reasons).toEqual([`Primary: scale-in suspended failed (ValidationException: ${long.slice(0, 300)}): retried on the next evaluation`]);
    aas.reset();
    aas.on(RegisterScalableTargetCommand).resolves({});
    const ok: string[] = [];
    expect(await applyCapacity(clients, capacityChanges(scaled, hold, undefined, undefined), [], ok)).toBe(true);
    expect(ok).toEqual(['Primary: scale-in suspended', 'Fallback: minimum capacity 3']);
  });
});

// ---------- settings ----------
describe("the function's settings", () => {
  const base = { ENDPOINT_NAME: 'rec', PRIMARY_VARIANT: 'Primary', PARAMETER_NAME: '/p', TABLE_NAME: 't' };
  test('defaults for what the environment leaves out', () => {
    expect(settingsFromEnv(base)).toEqual({
      endpointName: 'rec',
      primaryVariant: 'Primary',
      fallbackVariant: undefined,
      parameterName: '/p',
      tableName: 't',
      gpuCount: 0,
      errorWindowSeconds: 600,
      metricPeriodSeconds: 60,
      perGpuMetrics: false,
      primaryCapacity: undefined,
      fallbackCapacity: undefined,
      dryRun: false,
      metricNamespace: BREAKER_NAMESPACE,
      applicationNamespace: 'ResilientEndpoint/Application',
      config: { ...DEFAULT_CONFIG, hasFallback: false },
    });
    expect(
      settingsFromEnv({
        ...base,
        PER_GPU_METRICS: 'false',
        DRY_RUN: 'false',
        ERROR_WINDOW_SECONDS: '900',
        METRIC_NAMESPACE: 'Mine',
        APPLICATION_NAMESPACE: 'Mine/App',
      }),
    ).toMatchObject({
      perGpuMetrics: false,
      dryRun: false,
      errorWindowSeconds: 900,
      metricNamespace: 'Mine',
      applicationNamespace: 'Mine/App',
    });
  });

  test('a missing required variable is named', () => {
    expect(() => settingsFromEnv({ ...base, TABLE_NAME: '' })).toThrow('missing environment variable TABLE_NAME');
    expect(() => fleetSettingsFromEnv({ TABLE_NAME: 't' })).toThrow('missing environment variable CONFIG_PARAMETERS');
  });

  test("a fleet's parameter names, empty entries dropped", () => {
    expect(fleetSettingsFromEnv({ TABLE_NAME: 't', CONFIG_PARAMETERS: '/a,,/b,' })).toEqual({ tableName: 't', configParameters: ['/a', '/b'] });
  });

  test('each client retries up to the attempts asked for', async () => {
    const c = createClients(5); // not the SDK default of 3
    for (const client of [c.sagemaker, c.cloudwatch, c.ssm, c.dynamodb, c.autoscaling]) expect(await client.config.maxAttempts()).toBe(5);
  });
});

// ---------- telemetry ----------
describe('log and metric lines', () => {
  test('the metrics line is Embedded Metric Format: namespace, the EndpointName dimension, three metrics with units', () => {
    emitMetric(breakerSettings('rec', { metricNamespace: 'NS' }), 'DEGRADED', 0.25);
    const line = JSON.parse(logged[0]);
    expect(line).toEqual({
      _aws: {
        Timestamp: expect.any(Number),
        CloudWatchMetrics: [
          {
            Namespace: 'NS',
            Dimensions: [['EndpointName']],
            Metrics: [
              { Name: 'BreakerState', Unit: 'None' },
              { Name: 'FallbackSharePercent', Unit: 'Percent' },
              { Name: 'DegradeLevel', Unit: 'None' },
            ],
          },
        ],
      },
      EndpointName: 'rec',
      BreakerState: 1,
      FallbackSharePercent: 25,
      DegradeLevel: 1,
    });
  });

  test('an event is summarized by its source and type; anything else by its type', () => {
    expect(summarize({ source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} })).toEqual({
      source: 'aws.events',
      detailType: 'Scheduled Event',
    });
    expect(summarize(null)).toBe('object');
    expect(summarize('x')).toBe('string');
    expect(summarize(undefined)).toBe('undefined');
  });
});

// ---------- the entry point ----------
describe('the Lambda entry point', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
    jest.resetModules();
  });
  const schedule = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };

  test('a function with endpoints settings parameters runs as a fleet, with its own clients', async () => {
    process.env = { ...saved, TABLE_NAME: 't', CONFIG_PARAMETERS: '/a' };
    ssm.on(GetParametersCommand).resolves({ Parameters: [] });
    const { handler } = await import('../lambda/circuit-breaker/handler');
    const r = await handler(schedule);
    expect(r).toMatchObject({ outcome: 'evaluated', endpoints: {}, calls: ['ssm:GetParameters'] });
    expect(ssm.commandCalls(GetParametersCommand)[0].args[0].input).toEqual({ Names: ['/a'] });
  });

  test('otherwise it serves one endpoint', async () => {
    process.env = { ...saved, ...{ ENDPOINT_NAME: 'rec', PRIMARY_VARIANT: 'Primary', PARAMETER_NAME: '/p', TABLE_NAME: 't' } };
    delete process.env.CONFIG_PARAMETERS;
    const { handler } = await import('../lambda/circuit-breaker/handler');
    const r = await handler({ source: 'somewhere.else' });
    expect(r).toMatchObject({ outcome: 'ignored' });
    expect(r).not.toHaveProperty('endpoints');
  });
});
