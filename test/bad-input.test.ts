/**
 * Every prop rejects nonsense at synth time with one message naming the construct path, the prop,
 * the value, the allowed range and the fix, collected with the others (no stack trace, no throw at
 * construction, no raw CloudFormation or CDK error from deep inside).
 */
import { Duration, Size, Stack } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  CapacityPlan,
  CircuitBreaker,
  ContainerImage,
  DataCapture,
  DataQualityMonitor,
  DriftMonitor,
  EndpointMonitoring,
  ModelData,
  ResilientEndpoint,
  ResilientEndpointProps,
  SageMakerInstanceType,
  TrafficShift,
  VariantAutoScaling,
} from '../lib';
import { UNIT_PROPS } from '../lib/private/unit-props';
import { newStack, synthError } from './util';

const image = ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/model:1');
const base: ResilientEndpointProps = { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE };
const cron = (c: appscaling.CronOptions) => appscaling.Schedule.cron(c);
const odd = (spec: object) => SageMakerInstanceType.of('ml.x9.large', spec as any);

/** [name, props (merged over a valid endpoint), the prop the message must name, text of the value]. */
const rows: [string, Record<string, unknown>, string, string][] = [
  ['empty endpointName', { endpointName: '' }, 'endpointName', "got ''"],
  ['endpointName with an underscore', { endpointName: 'bad_name' }, 'endpointName', "got 'bad_name'"],
  ['endpointName of 64 characters', { endpointName: 'a'.repeat(64) }, 'endpointName', 'aaaa'],
  ['empty variantName', { variantName: '' }, 'variantName', "got ''"],
  ['empty fallback.variantName', { fallback: { variantName: '' } }, 'fallback.variantName', "got ''"],
  ['fallback named like the primary', { fallback: { variantName: 'Primary' } }, 'fallback.variantName', "got 'Primary'"],
  ['shadow variant name with a space', { shadow: { model: { image }, variantName: 'a b' } }, 'shadow.variantName', "got 'a b'"],
  ['model omitted (plain JavaScript)', { model: undefined }, 'model', 'got nothing'],
  ['instanceType omitted (plain JavaScript)', { instanceType: undefined }, 'instanceType', 'got nothing'],
  ['instanceType as a bare string (plain JavaScript)', { instanceType: 'ml.m5.xlarge' }, 'instanceType', "got 'ml.m5.xlarge'"],
  ['instanceType without the ml. prefix', { instanceType: SageMakerInstanceType.of('m5.xlarge') }, 'instanceType', "got 'm5.xlarge'"],
  ['instance spec with −1 vCPUs', { instanceType: odd({ vCpus: -1, memoryGiB: 8 }) }, 'spec.vCpus', 'got -1'],
  ['instance spec with 2.5 vCPUs', { instanceType: odd({ vCpus: 2.5, memoryGiB: 8 }) }, 'spec.vCpus', 'got 2.5'],
  ['instance spec with 0 GiB memory', { instanceType: odd({ vCpus: 4, memoryGiB: 0 }) }, 'spec.memoryGiB', 'got 0'],
  [
    'instance spec with a GPU of 0 GiB',
    { instanceType: odd({ vCpus: 4, memoryGiB: 16, gpuCount: 1, gpuMemoryGiB: 0 }) },
    'spec.gpuMemoryGiB',
    'got 0',
  ],
  ['instance spec with half a GPU', { instanceType: odd({ vCpus: 4, memoryGiB: 16, gpuCount: 0.5, gpuMemoryGiB: 16 }) }, 'spec.gpuCount', 'got 0.5'],
  ['instanceCount 0', { instanceCount: 0 }, 'instanceCount', 'got 0'],
  ['instanceCount 1.5', { instanceCount: 1.5 }, 'instanceCount', 'got 1.5'],
  ['fallback.instanceCount 0', { fallback: { instanceCount: 0 } }, 'fallback.instanceCount', 'got 0'],
  ['shadow.samplingPercent 0', { shadow: { model: { image }, samplingPercent: 0 } }, 'shadow.samplingPercent', 'got 0'],
  ['volumeSize 600 GiB', { volumeSize: Size.gibibytes(600) }, 'volumeSize', 'got 600'],
  [
    'volumeSize on a local-NVMe type',
    { instanceType: SageMakerInstanceType.ML_G5_XLARGE, volumeSize: Size.gibibytes(100) },
    'volumeSize',
    'got 100 GiB',
  ],
  [
    'model data not an S3 URI',
    { model: { image, modelData: ModelData.fromS3Uri('https://x/model.tar.gz') } },
    'model.modelData',
    "got 'https://x/model.tar.gz'",
  ],
  [
    'memoryFootprint.gpu on a CPU instance',
    { model: { image, memoryFootprint: { gpu: Size.gibibytes(4) } } },
    'model.memoryFootprint.gpu',
    'got 4 GiB',
  ],
  [
    'GPU footprint larger than one T4',
    { instanceType: SageMakerInstanceType.ML_G4DN_XLARGE, model: { image, memoryFootprint: { gpu: Size.gibibytes(20) } } },
    'model.memoryFootprint.gpu',
    'got 20 GiB',
  ],
  [
    'host footprint larger than the instance',
    { model: { image, memoryFootprint: { host: Size.gibibytes(100) } } },
    'model.memoryFootprint.host',
    'got 100 GiB',
  ],
  ['workers 0', { modelServer: { workers: 0 } }, 'modelServer.workers', 'got 0'],
  [
    'maxRequestSize 3 GiB (servers read a 32-bit integer)',
    { modelServer: { maxRequestSize: Size.gibibytes(3) } },
    'modelServer.maxRequestSize',
    'got 3221225472; allowed: an integer from 1024 to 2147483647',
  ],
  ['maxResponseSize 10 bytes', { modelServer: { maxResponseSize: Size.bytes(10) } }, 'modelServer.maxResponseSize', 'got 10'],
  ['responseTimeout 0 s', { modelServer: { responseTimeout: Duration.seconds(0) } }, 'modelServer.responseTimeout', 'got 0'],
  ['jobQueueSize 0', { modelServer: { jobQueueSize: 0 } }, 'modelServer.jobQueueSize', 'got 0'],
  [
    'model download timeout 30 s',
    { modelServer: { modelDataDownloadTimeout: Duration.seconds(30) } },
    'modelServer.modelDataDownloadTimeout',
    'got 30',
  ],
  [
    'start-up health check 4000 s',
    { modelServer: { containerStartupHealthCheckTimeout: Duration.seconds(4000) } },
    'modelServer.containerStartupHealthCheckTimeout',
    'got 4000',
  ],
  ['sampling 0.5 %', { dataCapture: { samplingPercentage: 0.5 } }, 'dataCapture.samplingPercentage', 'got 0.5'],
  [
    '11 JSON content types',
    { dataCapture: { jsonContentTypes: Array(11).fill('application/json') } },
    'dataCapture.jsonContentTypes',
    'got 11 entries',
  ],
  ['empty capture prefix', { dataCapture: { prefix: '' } }, 'dataCapture.prefix', "got ''"],
  ['retention of 12 hours', { dataCapture: { retention: Duration.hours(12) } }, 'dataCapture.retention', '0.5 days'],
  ['retention of 36 hours (not whole days)', { dataCapture: { retention: Duration.hours(36) } }, 'dataCapture.retention', '1.5 days'],
  ['capacity min 0', { autoScaling: { capacity: { min: 0, max: 2 } } }, 'capacity.min', 'got 0'],
  ['capacity min above max', { autoScaling: { capacity: { min: 3, max: 2 } } }, 'capacity', 'min 3 > max 2'],
  ['QPS per instance 0', { autoScaling: { qpsPerInstance: 0 } }, 'qpsPerInstance', 'got 0'],
  ['concurrency target −1', { autoScaling: { concurrentRequestsPerModelTarget: -1 } }, 'concurrentRequestsPerModelTarget', 'got -1'],
  [
    'schedule at hour 25',
    { autoScaling: { schedules: [{ schedule: cron({ hour: '25', minute: '0' }), minCapacity: 3 }] } },
    'schedules[0].schedule',
    'hour 0–23',
  ],
  [
    'schedule at minute 61',
    { autoScaling: { schedules: [{ schedule: cron({ hour: '8', minute: '61' }), minCapacity: 3 }] } },
    'schedules[0].schedule',
    'minute 0–59',
  ],
  [
    'schedule in month 13',
    { autoScaling: { schedules: [{ schedule: cron({ minute: '0', hour: '8', day: '1', month: '13' }), minCapacity: 3 }] } },
    'schedules[0].schedule',
    'month 1–12',
  ],
  [
    'scheduled min above the capacity max',
    { autoScaling: { capacity: { min: 2, max: 4 }, schedules: [{ schedule: cron({ hour: '8', minute: '0' }), minCapacity: 10 }] } },
    'schedules[0]',
    'min 10 > max 4',
  ],
  [
    'scheduled minCapacity 0',
    { autoScaling: { schedules: [{ schedule: cron({ hour: '8', minute: '0' }), minCapacity: 0 }] } },
    'schedules[0].minCapacity',
    'got 0',
  ],
  ['bake of 2 hours', { deployment: { waitInterval: Duration.hours(2) } }, 'deployment.waitInterval', 'got 7200'],
  ['canary of 2 of 2 instances', { deployment: { canaryInstances: 2 } }, 'deployment.canaryInstances', 'got 2'],
  [
    'linear steps of 3 of 4 instances',
    { instanceCount: 4, deployment: { trafficShift: TrafficShift.LINEAR, linearStepInstances: 3 } },
    'deployment.linearStepInstances',
    'got 3',
  ],
  ['memory alarm at 0 %', { monitoring: { memoryThresholdPercent: 0 } }, 'monitoring.memoryThresholdPercent', 'got 0'],
  ['5XX alarm at 0 %', { monitoring: { errorRateThresholdPercent: 0 } }, 'monitoring.errorRateThresholdPercent', 'got 0'],
  ['success-rate alarm at −1 %', { monitoring: { successRateThresholdPercent: -1 } }, 'monitoring.successRateThresholdPercent', 'got -1'],
  ['latency alarm at 0 ms', { monitoring: { latencyP99Threshold: Duration.millis(0) } }, 'monitoring.latencyP99Threshold', 'got 0'],
  ['stage name with a space', { monitoring: { stages: ['pre process'] } }, 'monitoring.stages', "got 'pre process'"],
  ['alarm e-mail without @', { monitoring: { notify: { emails: ['oncall'] } } }, 'monitoring.notify.emails', "got 'oncall'"],
  ['budget of 0 USD', { monitoring: { monthlyBudgetUsd: 0 } }, 'monitoring.monthlyBudgetUsd', 'got 0'],
  ['breaker degrade at 0 %', { circuitBreaker: { degradeAtPercent: 0 } }, 'circuitBreaker.degradeAtPercent', 'got 0'],
  ['breaker 5XX rate at 0 %', { circuitBreaker: { errorRateThresholdPercent: 0 } }, 'circuitBreaker.errorRateThresholdPercent', 'got 0'],
  ['breaker recover above degrade', { circuitBreaker: { recoverBelowPercent: 85 } }, 'circuitBreaker thresholds', 'recover 85 / degrade 80'],
  ['breaker degrade at the critical level', { circuitBreaker: { degradeAtPercent: 95 } }, 'circuitBreaker thresholds', 'degrade 95 / critical 95'],
  ['breaker recovery in 0 steps', { circuitBreaker: { recoverySteps: 0 } }, 'circuitBreaker.recoverySteps', 'got 0'],
  ['breaker dwell of 10 s', { circuitBreaker: { minDwell: Duration.seconds(10) } }, 'circuitBreaker.minDwell', 'got 10'],
  [
    'metric publishing off but a frequency given',
    { metricPublishing: { enabled: false, frequency: Duration.seconds(10) } },
    'metricPublishing',
    'enabled: false with frequency',
  ],
  ['metric publishing every 15 s', { metricPublishing: { frequency: Duration.seconds(15) } }, 'metricPublishing.frequency', 'got 15'],
  ['breaker probes of 1.5', { circuitBreaker: { maxFailedProbes: 1.5 } }, 'circuitBreaker.maxFailedProbes', 'got 1.5'],
  ['breaker probe wait of 1 minute', { circuitBreaker: { maxProbeWait: Duration.minutes(1) } }, 'circuitBreaker.maxProbeWait', 'got 60'],
  ['breaker reserved concurrency 0', { circuitBreaker: { reservedConcurrency: 0 } }, 'circuitBreaker.reservedConcurrency', 'got 0'],
  [
    'guard budget below the breaker trigger',
    { model: { image, guardBudgetPercent: 75 } },
    'model.guardBudgetPercent',
    'got 75, at or below circuitBreaker.degradeAtPercent (80, the default)',
  ],
  [
    'guard budget 85 under a trigger of 90',
    { model: { image, guardBudgetPercent: 85 }, circuitBreaker: { degradeAtPercent: 90 } },
    'model.guardBudgetPercent',
    'got 85, at or below circuitBreaker.degradeAtPercent (90)',
  ],
  [
    'latency alarm as a number (JavaScript)',
    { monitoring: { latencyP99Threshold: 500 } },
    'monitoring.latencyP99Threshold',
    'got 500 (a number: no unit)',
  ],
];

describe('bad input: one clear synth error per prop', () => {
  test('the table covers at least 40 props', () => {
    expect(rows.length).toBeGreaterThanOrEqual(40);
  });

  test.each(rows)('%s', (_name, patch, prop, value) => {
    const { app, stack } = newStack();
    // Construction never throws: the error is reported at synth with the others.
    expect(() => new ResilientEndpoint(stack, 'E', { ...base, ...patch } as ResilientEndpointProps)).not.toThrow();
    const msg = synthError(app);
    const line = msg.split('\n').find(l => l.includes(`${prop}`) && l.includes(value));
    expect(line).toBeDefined();
    expect(line).toMatch(/^\s*\[Test\/E[^\]]*\] /); // the construct path
    expect(line).toMatch(/; allowed: .+\. Fix: ./); // the range and the fix
    expect(msg).not.toMatch(/^\s+at /m); // no stack trace
  });

  test('several bad props at once: every one is reported in one synthesis', () => {
    const { app, stack } = newStack();
    new ResilientEndpoint(stack, 'E', {
      ...base,
      endpointName: '',
      instanceCount: 0,
      dataCapture: { retention: Duration.hours(12) },
      monitoring: { memoryThresholdPercent: 0 },
      autoScaling: { schedules: [{ schedule: cron({ hour: '25', minute: '0' }), minCapacity: 3 }] },
    });
    const msg = synthError(app);
    for (const prop of ['endpointName', 'instanceCount', 'dataCapture.retention', 'monitoring.memoryThresholdPercent', 'schedules[0].schedule']) {
      expect(msg).toContain(prop);
    }
    expect(msg.match(/Fix:/g)!.length).toBeGreaterThanOrEqual(5);
  });
});

describe('bad input from JavaScript: every Duration and Size prop given as a number', () => {
  test('one synthesis names each prop with its fix; no TypeError, no stack trace', () => {
    const { app, stack } = newStack();
    const props: any = {
      ...base,
      fallback: {},
      shadow: { model: { image } },
      drift: { modelMonitor: { imageUri: '123456789012.dkr.ecr.us-east-1.amazonaws.com/monitor:1', baselineUri: 's3://b/baseline' } },
    };
    for (const [path] of UNIT_PROPS.ResilientEndpointProps) {
      const keys = path.split('.');
      let o = props;
      for (const k of keys.slice(0, -1)) o = o[k] = { ...(o[k] ?? {}) };
      o[keys[keys.length - 1]] = 5;
    }
    expect(() => new ResilientEndpoint(stack, 'E', props)).not.toThrow();
    const msg = synthError(app);
    expect(msg).not.toMatch(/TypeError|is not a function|^\s+at /m);
    for (const [path, kind] of UNIT_PROPS.ResilientEndpointProps) {
      expect(msg).toMatch(
        new RegExp(
          `\\[Test/E\\] ${path.replace(/\./g, '\\.')}: got 5 \\(a number: no unit\\); allowed: a ${kind} \\(aws-cdk-lib\\)\\. Fix: pass ${kind}\\.\\w+\\(5\\)`,
        ),
      );
    }
  });
});

describe('bad input from JavaScript: each construct used on its own, and the capacity planner', () => {
  test('every Duration and Size prop given as a number: one synthesis names each with its construct path; no TypeError', () => {
    const { app, stack } = newStack();
    const numbers = (name: keyof typeof UNIT_PROPS) => {
      const o: any = {};
      for (const [path] of UNIT_PROPS[name]) {
        const keys = path.split('.');
        let x = o;
        for (const k of keys.slice(0, -1)) x = x[k] ??= {};
        x[keys[keys.length - 1]] = 7;
      }
      return o;
    };
    const instanceType = SageMakerInstanceType.ML_M5_XLARGE;
    const bucket = s3.Bucket.fromBucketName(stack, 'Capture', 'my-capture-bucket');
    const monitor = { imageUri: '123456789012.dkr.ecr.us-east-1.amazonaws.com/monitor:1', baselineUri: 's3://b/baseline' };
    const build = () => {
      new CircuitBreaker(stack, 'B', {
        endpointName: 'ep',
        primaryVariantName: 'AllTraffic',
        primaryInstanceType: instanceType,
        ...numbers('CircuitBreakerProps'),
      });
      new EndpointMonitoring(stack, 'M', {
        endpointName: 'ep',
        variants: [{ variantName: 'AllTraffic', instanceType }],
        ...numbers('EndpointMonitoringProps'),
      });
      new VariantAutoScaling(stack, 'S', {
        endpointName: 'ep',
        variantName: 'AllTraffic',
        instanceType,
        initialInstanceCount: 2,
        ...numbers('VariantAutoScalingProps'),
      });
      new DataCapture(stack, 'C', {
        role: new iam.Role(stack, 'R', { assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com') }),
        ...numbers('DataCaptureProps'),
      });
      const drift = numbers('DriftMonitorProps');
      new DriftMonitor(stack, 'D', {
        endpointName: 'ep',
        captureBucket: bucket,
        capturePrefix: 'c',
        ...drift,
        modelMonitor: { ...monitor, ...drift.modelMonitor },
      });
      new DataQualityMonitor(stack, 'Q', {
        endpointName: 'ep',
        captureBucket: bucket,
        capturePrefix: 'c',
        ...monitor,
        ...numbers('DataQualityMonitorProps'),
      });
    };
    expect(build).not.toThrow();
    const msg = synthError(app);
    expect(msg).not.toMatch(/TypeError|is not a function|^\s+at /m);
    const at: Record<string, string> = {
      CircuitBreakerProps: 'B',
      EndpointMonitoringProps: 'M',
      VariantAutoScalingProps: 'S',
      DataCaptureProps: 'C',
      DriftMonitorProps: 'D',
      DataQualityMonitorProps: 'Q',
    };
    for (const [name, id] of Object.entries(at)) {
      for (const [path, kind] of UNIT_PROPS[name as keyof typeof UNIT_PROPS]) {
        expect(msg).toContain(`[Test/${id}] ${path}: got 7 (a number: no unit); allowed: a ${kind} (aws-cdk-lib). Fix: pass ${kind}.`);
      }
    }
  });

  test('CapacityPlan.compute: a number for a Size is an error naming the prop, not a TypeError', () => {
    expect(() => CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 200, modelMemory: 2.1 as any, gpuMemory: '4' as any })).toThrow(
      "CapacityPlan: modelMemory: got 2.1 (a number: no unit); allowed: a Size (aws-cdk-lib). Fix: pass Size.gibibytes(2.1) or another unit of Size (import { Size } from 'aws-cdk-lib'); a bare number has no unit; " +
        "gpuMemory: got '4' (a string); allowed: a Size (aws-cdk-lib). Fix: pass Size.gibibytes(4) or another unit of Size (import { Size } from 'aws-cdk-lib'); a bare number has no unit",
    );
  });
});

describe('bad input: a VPC the model cannot use', () => {
  const withVpc = (subnetType: ec2.SubnetType, vpcSubnets?: ec2.SubnetSelection) => {
    const { app, stack } = newStack();
    const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 0, subnetConfiguration: [{ name: 'only', subnetType }] });
    expect(() => new ResilientEndpoint(stack, 'E', { ...base, model: { image, vpc, vpcSubnets } })).not.toThrow();
    return synthError(app);
  };

  test('only public subnets: the prop, the allowed kinds and the fix, no stack trace', () => {
    const msg = withVpc(ec2.SubnetType.PUBLIC);
    expect(msg).toMatch(/\[Test\/E[^\]]*\] model\.vpc: got a VPC with no private or isolated subnets; allowed: .+\. Fix: ./);
    expect(msg).not.toMatch(/^\s+at /m);
  });

  test("a selection the VPC lacks: the prop and aws-cdk-lib's reason, no stack trace", () => {
    const msg = withVpc(ec2.SubnetType.PRIVATE_ISOLATED, { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS });
    expect(msg).toMatch(
      /model\.vpcSubnets: got a selection the VPC cannot satisfy \(There are no 'Private' subnet groups[^)]*\); allowed: .+\. Fix: ./,
    );
    expect(msg).not.toMatch(/^\s+at /m);
  });

  test('isolated subnets only (S3 and ECR through VPC endpoints): the model uses them by default', () => {
    expect(withVpc(ec2.SubnetType.PRIVATE_ISOLATED)).toBe('');
  });
});

/** Warnings recorded on a construct tree (before synthesis, which the errors below would stop). */
const warningsUnder = (scope: IConstruct) =>
  scope.node
    .findAll()
    .flatMap(c => c.node.metadata)
    .filter(m => m.type === 'aws:cdk:warning')
    .map(m => String(m.data));

describe('mistakes a hurried user makes, all caught in one synthesis', () => {
  // One app: percentages as fractions, a typo in the instance type, an image without its registry, and one
  // endpoint name used three times in one account and Region (two stacks) and once in another Region.
  const app = newStack().app;
  const stack = app.node.findChild('Test') as Stack;
  const other = new Stack(app, 'Other', { env: { account: '123456789012', region: 'us-east-1' } });
  const europe = new Stack(app, 'Europe', { env: { account: '123456789012', region: 'eu-west-1' } });
  const fractions = new ResilientEndpoint(stack, 'Fractions', {
    ...base,
    monitoring: {
      memoryThresholdPercent: 0.85,
      gpuMemoryThresholdPercent: 0.85,
      cpuThresholdPercent: 0.9,
      diskThresholdPercent: 0.75,
      stageMemoryThresholdPercent: 1,
      successRateThresholdPercent: 0.99,
      errorRateThresholdPercent: 0.05,
      modelErrorRateThresholdPercent: 0.5,
    },
    circuitBreaker: {
      degradeAtPercent: 0.8,
      criticalAtPercent: 0.95,
      recoverBelowPercent: 0.7,
      errorRateThresholdPercent: 0.05,
      degradedFallbackSharePercent: 0.5,
    },
    deployment: { rollingBatchPercent: 0.25 },
    shadow: { model: { image }, samplingPercent: 0.05 },
    dataCapture: { samplingPercentage: 0.01 },
  });
  const typo = new ResilientEndpoint(stack, 'Typo', {
    model: { image: ContainerImage.fromImageUri('pytorch-inference:2.3.0-cpu-py311') },
    instanceType: SageMakerInstanceType.of('ml.g4dn.xlarg'),
  });
  const nearFamily = new ResilientEndpoint(other, 'NearFamily', { ...base, instanceType: SageMakerInstanceType.of('ml.m4.xlarge') });
  for (const [s, id] of [
    [stack, 'A'],
    [stack, 'B'],
    [other, 'C'],
    [europe, 'D'],
  ] as const)
    new ResilientEndpoint(s, id, { ...base, endpointName: 'recommender' });
  const msg = synthError(app);
  const lines = msg.split('\n');
  const line = (path: string, prop: string) => lines.find(l => l.includes(`[${path}`) && l.includes(`] ${prop}: got`));

  test.each([
    ['monitoring.memoryThresholdPercent', '0.85', 'give 85 for 85 %'],
    ['monitoring.gpuMemoryThresholdPercent', '0.85', 'give 85 for 85 %'],
    ['monitoring.cpuThresholdPercent', '0.9', 'give 90 for 90 %'],
    ['monitoring.diskThresholdPercent', '0.75', 'give 75 for 75 %'],
    ['monitoring.stageMemoryThresholdPercent', '1', 'give 100 for 100 %'],
    ['monitoring.successRateThresholdPercent', '0.99', 'give 99 for 99 %'],
    ['circuitBreaker.degradeAtPercent', '0.8', 'give 80 for 80 %'],
    ['circuitBreaker.criticalAtPercent', '0.95', 'give 95 for 95 %'],
    ['circuitBreaker.recoverBelowPercent', '0.7', 'give 70 for 70 %'],
    ['circuitBreaker.errorRateThresholdPercent', '0.05', 'give 5 for 5 %'],
    ['circuitBreaker.degradedFallbackSharePercent', '0.5', 'give 50 for 50 %'],
    ['deployment.rollingBatchPercent', '0.25', 'give 25 for 25 %'],
    ['shadow.samplingPercent', '0.05', 'give 5 for 5 %'],
  ])('%s: %s is a fraction: an error naming the prop, the value, the range and the percentage meant', (prop, value, fix) => {
    const l = line('Test/Fractions', prop);
    expect(l).toMatch(/^\s*\[Test\/Fractions[^\]]*\] /);
    expect(l).toContain(`got ${value} (${value} %: a fraction given for`);
    expect(l).toMatch(/; allowed: a percentage .+, in percent \(not a fraction\)\. Fix: /);
    expect(l).toContain(`Fix: ${fix}`);
  });

  test('each mistake once: no second error for the breaker hysteresis the fractions break', () => {
    expect(msg).not.toContain('circuitBreaker thresholds');
    expect(lines.filter(l => l.includes('monitoring.memoryThresholdPercent'))).toHaveLength(1);
  });

  test('data capture at 0.01: both readings (below the 1 % minimum, or a fraction for 1 %)', () => {
    expect(line('Test/Fractions', 'dataCapture.samplingPercentage')).toContain('use 1 (or 1 if 0.01 was a fraction for 1 %)');
  });

  test('error-rate alarms below 1 % are real SLOs: a warning naming the prop and both readings, not an error', () => {
    expect(msg).not.toMatch(/monitoring\.(modelE|e)rrorRateThresholdPercent: got/);
    const w = warningsUnder(fractions);
    expect(w).toContainEqual(
      expect.stringMatching(
        /^monitoring\.errorRateThresholdPercent is 0\.05: the 5XX alarm fires at 0\.05 % \(1 in 2,000\)\. .*give 5; if 0\.05 % is meant, acknowledge/,
      ),
    );
    expect(w).toContainEqual(
      expect.stringMatching(/^monitoring\.modelErrorRateThresholdPercent is 0\.5: the model-error alarm fires at 0\.5 % \(1 in 200\)\. .*give 50;/),
    );
  });

  test("an instance-type typo: did you mean ml.g4dn.xlarge?, and no advice to keep 'ml.g4dn.xlarg' with a spec", () => {
    expect(line('Test/Typo', 'instanceType')).toMatch(
      /got 'ml\.g4dn\.xlarg'; allowed: .+\. Fix: did you mean ml\.g4dn\.xlarge\? Use SageMakerInstanceType\.ML_G4DN_XLARGE/,
    );
    expect(warningsUnder(typo).join('\n')).not.toContain("of('ml.g4dn.xlarg'");
  });

  test('a real-looking type near a catalog one: a warning that asks first whether the catalog type was meant', () => {
    expect(msg).not.toContain('NearFamily');
    expect(warningsUnder(nearFamily)).toContainEqual(
      expect.stringMatching(
        /^ml\.m4\.xlarge is not in the instance catalog .*Did you mean ml\.m5\.xlarge \(SageMakerInstanceType\.ML_M5_XLARGE\)\? If ml\.m4\.xlarge is the type you want, give its hardware: SageMakerInstanceType\.of\('ml\.m4\.xlarge', /,
      ),
    );
  });

  test('an image URI without a registry host: an error with the URI it needs, and fromDlc for an AWS image', () => {
    expect(lines.find(l => l.includes('] model.image: '))?.trim()).toBe(
      "[Test/Typo] model.image: ContainerImage.fromImageUri: got 'pytorch-inference:2.3.0-cpu-py311'; allowed: an image URI with its registry host, e.g. 763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-inference:2.3.0-cpu-py311 (without one the name means Docker Hub, which SageMaker does not pull from, and the model server cannot be recognised). Fix: ContainerImage.fromDlc('pytorch-inference', '2.3.0-cpu-py311') for AWS's image in the stack's Region, or the image's full ECR URI",
    );
  });

  test('one endpointName three times in one account and Region (two stacks): each endpoint names the others; another Region is fine', () => {
    const rule = "allowed: a name no other endpoint of the app has in the same account and Region (SageMaker's endpoint names are unique there";
    expect(line('Test/A', 'endpointName')).toContain(`got 'recommender', also the name of Test/B, Other/C; ${rule}`);
    expect(line('Test/B', 'endpointName')).toContain(`also the name of Test/A, Other/C;`);
    expect(line('Other/C', 'endpointName')).toMatch(
      /also the name of Test\/A, Test\/B; .+\. Fix: give each endpoint its own endpointName, or omit endpointName for generated ones/,
    );
    expect(line('Europe/D', 'endpointName')).toBeUndefined();
    // Reported by this library, not as CloudFormation's alarm-name clashes at deploy.
    expect(msg).not.toMatch(/^\s+at /m);
  });
});
