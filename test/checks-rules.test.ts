// Each readiness rule on its own, as a pure function of an endpoint's facts: a compliant endpoint
// passes every rule, and each way of breaking a rule gives its exact finding, at and around the
// rule's bounds. test/checks.test.ts runs the pack on synthesized stacks through `cdk synth`.
import * as fs from 'fs';
import { spawnSync } from 'child_process';
import * as path from 'path';
import { checkTemplate, EndpointFacts, ProductionReadinessChecks, RuleLevel, VariantFacts } from '../lib/checks';
import { MemoryProfile } from '../lib/memory-profile';
import { admittedP999 } from '../lib/private/models';

const GIB = 1024 ** 3;
const variant = (over: Partial<VariantFacts> = {}): VariantFacts => ({
  variantName: 'Primary',
  instanceType: 'ml.m5.xlarge',
  initialInstanceCount: 2,
  weight: 1,
  environment: {},
  networkIsolation: true,
  vpc: false,
  shadow: false,
  ...over,
});
const compliant = (over: Partial<EndpointFacts> = {}): EndpointFacts => ({
  configLogicalId: 'Config',
  endpointLogicalId: 'Endpoint',
  endpointName: 'ep',
  nameKeys: ['ep'],
  variants: [variant()],
  kmsKeyId: false,
  dataCapture: { enabled: true, sampling: 1, destination: 's3://b/c' },
  deploymentRollbackAlarms: 2,
  scaling: { Primary: { min: 2, max: 4 } },
  memoryAlarmThresholds: [85],
  breakers: [{ retentionDays: 90 }],
  driftMonitors: 1,
  budget: true,
  ...over,
});
const rule = (id: string) => {
  const r = ProductionReadinessChecks.RULES.find(x => x.id === id);
  if (!r) throw new Error(`no rule ${id}`);
  return (e: EndpointFacts) => r.check(e);
};

test('a compliant endpoint passes every rule', () => {
  for (const r of ProductionReadinessChecks.RULES) expect([r.id, r.check(compliant())]).toEqual([r.id, []]);
  expect(ProductionReadinessChecks.RULES.map(r => [r.id, r.level])).toEqual([
    ['RE-MultiInstance', RuleLevel.ERROR],
    ['RE-AutoScaling', RuleLevel.ERROR],
    ['RE-NoBurstable', RuleLevel.ERROR],
    ['RE-MemoryAlarm', RuleLevel.ERROR],
    ['RE-CircuitBreaker', RuleLevel.WARNING],
    ['RE-DataCapture', RuleLevel.WARNING],
    ['RE-RequestSize', RuleLevel.WARNING],
    ['RE-WorkerMemory', RuleLevel.ERROR],
    ['RE-DeploymentGuardrails', RuleLevel.WARNING],
    ['RE-Network', RuleLevel.WARNING],
    ['RE-BreakerLogRetention', RuleLevel.WARNING],
    ['RE-NvmeStorage', RuleLevel.ERROR],
    ['RE-ProfiledMemory', RuleLevel.ERROR],
    ['RE-Drift', RuleLevel.WARNING],
    ['RE-Budget', RuleLevel.WARNING],
    ['RE-GpuPlacement', RuleLevel.WARNING],
    ['RE-GuardBudget', RuleLevel.ERROR],
  ]);
});

test('what each rule checks, as RULES tells a user who lists them', () => {
  expect(Object.fromEntries(ProductionReadinessChecks.RULES.map(r => [r.id, r.what]))).toEqual({
    'RE-MultiInstance': 'Every variant that takes traffic starts with more than one instance',
    'RE-AutoScaling': 'Every variant that takes traffic is autoscaled with max > min',
    'RE-NoBurstable': 'No burstable (T2/T3) instance types',
    'RE-MemoryAlarm': 'A memory alarm at 85 % or lower watches the endpoint',
    'RE-CircuitBreaker': 'A memory circuit breaker is wired to the endpoint',
    'RE-DataCapture': 'Data capture is on with an integer sampling of 1–100 % into an S3 destination',
    'RE-RequestSize': 'The model server caps request bodies at the real-time payload limit (6 MiB) or less',
    'RE-WorkerMemory': 'Workers × stated model footprint stays within 80 % of the instance memory',
    'RE-DeploymentGuardrails': 'Model updates roll back automatically on alarms',
    'RE-Network': 'Each model runs with network isolation or in a VPC',
    'RE-BreakerLogRetention': "The circuit breaker's log group has a retention period",
    'RE-NvmeStorage': 'No VolumeSizeInGB on local-NVMe instance types (production and shadow variants)',
    'RE-ProfiledMemory': "The profiled P99.9 request fits a worker's memory budget, with the model loaded",
    'RE-Drift': "A drift monitor (the library's drift function or a Model Monitor schedule) reads the endpoint's data capture",
    'RE-Budget': "A monthly AWS Budgets alarm covers the endpoint's cost",
    'RE-GpuPlacement': 'On a multi-GPU type, each worker is placed on its own GPU by model_fn(model_dir, context)',
    'RE-GuardBudget': "The container's guard budget is at least the smallest the guard serves for its workers (from the memory profile)",
  });
});

test("docs/readiness-checks.md's rule table lists every rule once, with its level", () => {
  const section = fs.readFileSync(path.join(__dirname, '..', 'docs', 'readiness-checks.md'), 'utf8');
  const rows = [...section.matchAll(/^\| (RE-\w+) \| (error|warning) \|/gm)].map(m => [m[1], m[2]]);
  expect(rows.sort()).toEqual(ProductionReadinessChecks.RULES.map(r => [r.id, r.level]).sort());
});

test('RE-MultiInstance: each variant that takes traffic starts with 2 or more (shadow and weight-0 variants do not count)', () => {
  const check = rule('RE-MultiInstance');
  expect(
    check(compliant({ variants: [variant({ initialInstanceCount: 1 }), variant({ variantName: 'Fallback', initialInstanceCount: 1 })] })),
  ).toEqual(['Primary starts with 1 instance', 'Fallback starts with 1 instance']);
  expect(
    check(
      compliant({
        variants: [
          variant(),
          variant({ variantName: 'Shadow', initialInstanceCount: 1, shadow: true }),
          variant({ variantName: 'Idle', weight: 0, initialInstanceCount: 1 }),
        ],
      }),
    ),
  ).toEqual([]);
});

test('RE-AutoScaling: every variant that takes traffic has a scalable target whose max exceeds its min', () => {
  const check = rule('RE-AutoScaling');
  expect(check(compliant({ scaling: {} }))).toEqual(['Primary has no scalable target']);
  expect(check(compliant({ scaling: { Primary: { min: 2, max: 2 } } }))).toEqual(['Primary scales 2..2 (max must exceed min)']);
  expect(check(compliant({ scaling: { Primary: { min: 2, max: 3 } } }))).toEqual([]);
  expect(check(compliant({ variants: [variant(), variant({ variantName: 'Shadow', shadow: true })] }))).toEqual([]);
});

test('RE-NoBurstable: no variant on a T2/T3 type, by catalog or by name', () => {
  const check = rule('RE-NoBurstable');
  expect(
    check(
      compliant({ variants: [variant({ instanceType: 'ml.t2.medium' }), variant({ variantName: 'S', instanceType: 'ml.t3.large', shadow: true })] }),
    ),
  ).toEqual(['Primary runs on ml.t2.medium', 'S runs on ml.t3.large']);
  expect(check(compliant({ variants: [variant({ instanceType: 'ml.m5.large' })] }))).toEqual([]);
});

test('RE-MemoryAlarm: some memory alarm at 85 % or below', () => {
  const check = rule('RE-MemoryAlarm');
  expect(check(compliant({ memoryAlarmThresholds: [] }))).toEqual(['no memory alarm at ≤ 85 %']);
  expect(check(compliant({ memoryAlarmThresholds: [90, 85.5] }))).toEqual(['no memory alarm at ≤ 85 %']);
  expect(check(compliant({ memoryAlarmThresholds: [90, 70] }))).toEqual([]);
});

test('RE-CircuitBreaker and RE-BreakerLogRetention: a breaker, whose logs expire (one elsewhere is not checked here)', () => {
  expect(rule('RE-CircuitBreaker')(compliant({ breakers: [] }))).toEqual(['no circuit breaker function for this endpoint']);
  const retention = rule('RE-BreakerLogRetention');
  expect(retention(compliant({ breakers: [{ retentionDays: undefined }, { retentionDays: 7 }, { retentionDays: undefined }] }))).toEqual([
    'breaker logs never expire',
    'breaker logs never expire',
  ]);
  expect(retention(compliant({ breakers: [{ functionElsewhere: true }] }))).toEqual([]);
});

test('RE-DataCapture: on, sampling a whole 1–100 %, a destination', () => {
  const check = rule('RE-DataCapture');
  expect(check(compliant({ dataCapture: undefined }))).toEqual(['data capture is off']);
  expect(check(compliant({ dataCapture: { enabled: false, sampling: 1, destination: 's3://b' } }))).toEqual(['data capture is off']);
  for (const s of [0, 101, 1.5, -1])
    expect(check(compliant({ dataCapture: { enabled: true, sampling: s, destination: 's3://b' } }))).toEqual([
      `sampling ${s} is not an integer from 1 to 100`,
    ]);
  for (const s of [1, 100, { Ref: 'Pct' }])
    expect(check(compliant({ dataCapture: { enabled: true, sampling: s, destination: 's3://b' } }))).toEqual([]);
  expect(check(compliant({ dataCapture: { enabled: true, sampling: 5 } }))).toEqual(['no capture destination']);
});

test('RE-RequestSize: a request limit above the 6 MiB real-time payload, by the variable each server reads', () => {
  const check = rule('RE-RequestSize');
  const env = (environment: Record<string, string>) => compliant({ variants: [variant({ environment })] });
  expect(check(env({ MMS_MAX_REQUEST_SIZE: '6291457', TS_MAX_REQUEST_SIZE: '6291456', MAX_CONTENT_LENGTH: '10000000', OTHER: '99999999' }))).toEqual([
    'Primary: MMS_MAX_REQUEST_SIZE=6291457',
    'Primary: MAX_CONTENT_LENGTH=10000000',
  ]);
  expect(check(env({ TS_MAX_REQUEST_SIZE: '7000000' }))).toEqual(['Primary: TS_MAX_REQUEST_SIZE=7000000']);
  expect(check(env({ MMS_MAX_REQUEST_SIZE: '6291456' }))).toEqual([]);
});

test('RE-WorkerMemory: workers × the stated footprint within 80 % of host memory, and of GPU memory beyond one copy per GPU', () => {
  const check = rule('RE-WorkerMemory');
  const env = (instanceType: string, environment: Record<string, string>) => compliant({ variants: [variant({ instanceType, environment })] });
  // ml.m5.xlarge: 16 GiB → 12.8 GiB for all copies.
  expect(check(env('ml.m5.xlarge', { SAGEMAKER_MODEL_SERVER_WORKERS: '6', RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES: String(2.2 * GIB) }))).toEqual([
    'Primary: 6 workers × 2.2 GiB > 80 % of 16 GiB',
  ]);
  expect(check(env('ml.m5.xlarge', { SAGEMAKER_MODEL_SERVER_WORKERS: '6', RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES: String(2 * GIB) }))).toEqual([]);
  // ml.g4dn.12xlarge: 4 × 16 GiB → 51.2 GiB.
  const gpu = (workers: number, gib: number) =>
    check(env('ml.g4dn.12xlarge', { SAGEMAKER_MODEL_SERVER_WORKERS: String(workers), RESILIENT_ENDPOINT_GPU_FOOTPRINT_BYTES: String(gib * GIB) }));
  expect(gpu(4, 15)).toEqual([]); // one copy per GPU is always allowed
  expect(gpu(8, 6.4)).toEqual([]); // 51.2 GiB exactly
  expect(gpu(9, 6)).toEqual(['Primary: 9 workers × 6.0 GiB GPU > 80 % of 64 GiB']);
  expect(check(env('ml.x9.large', { SAGEMAKER_MODEL_SERVER_WORKERS: '99', RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES: String(GIB) }))).toEqual([]); // hardware unknown
  expect(check(env('ml.m5.xlarge', { RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES: String(100 * GIB) }))).toEqual([]); // workers not written
  // A GPU footprint on a type without GPUs: no GPU memory to compare with (the host rule still applies).
  expect(check(env('ml.m5.xlarge', { SAGEMAKER_MODEL_SERVER_WORKERS: '6', RESILIENT_ENDPOINT_GPU_FOOTPRINT_BYTES: String(2 * GIB) }))).toEqual([]);
});

test('RE-DeploymentGuardrails: an endpoint (not a lone config) with auto-rollback alarms', () => {
  const check = rule('RE-DeploymentGuardrails');
  expect(check(compliant({ deploymentRollbackAlarms: 0 }))).toEqual(['no auto-rollback alarms on the endpoint']);
  expect(check(compliant({ deploymentRollbackAlarms: 0, endpointLogicalId: undefined }))).toEqual([]);
});

test('RE-Network: each variant isolated or in a VPC', () => {
  const check = rule('RE-Network');
  expect(
    check(
      compliant({
        variants: [
          variant({ networkIsolation: false }),
          variant({ variantName: 'V', networkIsolation: false, vpc: true }),
          variant({ variantName: 'S', networkIsolation: false, shadow: true }),
        ],
      }),
    ),
  ).toEqual(['Primary has neither network isolation nor a VPC', 'S has neither network isolation nor a VPC']);
  // The fix is a VPC with endpoints: network isolation would cut the container off the degrade level (SSM)
  // and the guard metrics (CloudWatch) the breaker reads.
  const { fix } = ProductionReadinessChecks.RULES.find(r => r.id === 'RE-Network')!;
  expect(fix).toMatch(/^Set model\.vpc, with interface VPC endpoints for SSM and CloudWatch/);
  expect(fix).not.toMatch(/networkIsolation: true/);
  expect(fix).toMatch(/Not model\.networkIsolation, which cuts it off from both/);
});

test('RE-NvmeStorage: no VolumeSizeInGB on a local-NVMe type', () => {
  const check = rule('RE-NvmeStorage');
  expect(
    check(
      compliant({ variants: [variant({ instanceType: 'ml.g4dn.xlarge', volumeSizeInGb: 30 }), variant({ variantName: 'E', volumeSizeInGb: 30 })] }),
    ),
  ).toEqual(['Primary (ml.g4dn.xlarge) sets VolumeSizeInGB']);
  expect(check(compliant({ variants: [variant({ instanceType: 'ml.m5d.large', volumeSizeInGb: 10 })] }))).toEqual([
    'Primary (ml.m5d.large) sets VolumeSizeInGB',
  ]);
  expect(check(compliant({ variants: [variant({ instanceType: 'ml.g4dn.xlarge' })] }))).toEqual([]);
});

test("RE-ProfiledMemory: the profiled P99.9 request on top of the loaded model within a worker's budget (host or GPU)", () => {
  const check = rule('RE-ProfiledMemory');
  const MIB = 2 ** 20;
  const env = (environment: Record<string, string>) => compliant({ variants: [variant({ environment })] });
  const host = (bytes: number, baseline: number, budget: number) =>
    check(
      env({
        RESILIENT_ENDPOINT_PROFILE_P999: JSON.stringify({ size: 2900, bytes }),
        RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES: String(baseline),
        RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES: String(budget),
      }),
    );
  expect(host(300 * MIB, 500 * MIB, 800 * MIB)).toEqual([]); // exactly the budget
  expect(host(301 * MIB, 500 * MIB, 800 * MIB)).toEqual([
    "Primary: the profiled P99.9 request (size 2900) needs 301 MiB on top of the loaded model's 500 MiB, more than a worker's budget of 800 MiB",
  ]);
  // The smallest budget the guard supports: below the warm baseline a worker cannot run its first inference.
  expect(host(0, 800 * MIB, 800 * MIB)).toEqual([]);
  expect(host(0, 801 * MIB, 800 * MIB)).toEqual([
    "Primary: the loaded model and its first inference (thread pools, BLAS buffers: the profile's warm baseline) need 801 MiB, more than a worker's budget of 800 MiB: no worker could answer its first request",
  ]);
  expect(
    check(
      env({
        RESILIENT_ENDPOINT_PROFILE_P999: JSON.stringify({ size: 10, bytes: 2048 * MIB }),
        RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES: '0',
        RESILIENT_ENDPOINT_PROFILE_DEVICE: 'cuda',
        RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES: String(100000 * MIB),
        RESILIENT_ENDPOINT_WORKER_GPU_MEMORY_BYTES: String(1024 * MIB),
      }),
    ),
  ).toEqual([
    "Primary: the profiled P99.9 request (size 10) needs 2048 MiB on top of the loaded model's 0 MiB, more than a worker's GPU budget of 1024 MiB",
  ]);
  // Nothing to compare: no profile, an unreadable one, no budget (a budget of 0 bytes is none: the construct never writes one).
  expect(host(Number.NaN, 0, 0)).toEqual([]);
  expect(host(5 * MIB, 0, 0)).toEqual([]);
  expect(
    check(
      env({ RESILIENT_ENDPOINT_PROFILE_P999: '{nope', RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES: '0', RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES: '1' }),
    ),
  ).toEqual([]);
  expect(check(env({ RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES: '0', RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES: '1' }))).toEqual([]);
  expect(
    check(
      env({
        RESILIENT_ENDPOINT_PROFILE_P999: JSON.stringify({ size: 1, bytes: 5 }),
        RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES: 'x',
        RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES: '1',
      }),
    ),
  ).toEqual([]);
});

test("RE-GuardBudget: the container's budget against 1.25 × (workers × the warm baseline + the P99.9 request), naming what works", () => {
  const check = rule('RE-GuardBudget');
  const MIB = 2 ** 20;
  const host = (budget: number, workers: number, extra: Record<string, string> = {}) =>
    check(
      compliant({
        variants: [
          variant({
            environment: {
              RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES: String(budget),
              RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES: String(280 * MIB),
              RESILIENT_ENDPOINT_PROFILE_P999: JSON.stringify({ size: 1024, bytes: 24 * MIB }),
              SAGEMAKER_MODEL_SERVER_WORKERS: String(workers),
              ...extra,
            },
          }),
        ],
      }),
    );
  // 4 workers: 1.25 × (4 × 280 + 24) = 1430 MiB, exactly
  expect(host(1430 * MIB, 4)).toEqual([]);
  expect(host(1430 * MIB - 1, 4)).toEqual([
    "Primary: the container's guard budget is 1430 MiB; 4 workers need at least 1430 MiB (1.25 × (4 × the profile's warm baseline of 280 MiB + its P99.9 request of 24 MiB)), an instance with 2 GiB of memory at 90 %",
  ]);
  expect(host(380 * MIB, 1)).toEqual([]); // 1.25 × 304
  expect(host(379 * MIB, 1)[0]).toMatch(
    /^Primary: the container's guard budget is 379 MiB; 1 worker need at least 380 MiB .* an instance with 1 GiB of memory at 90 %$/,
  );
  expect(host(8000 * MIB, 24, { RESILIENT_ENDPOINT_CONTAINER_BUDGET_PERCENT: '60' })[0]).toMatch(/an instance with 14 GiB of memory at 60 %$/);
  // Not applicable: no profile, a GPU profile (RE-ProfiledMemory's), no budget, no worker count, an unreadable P99.9
  for (const extra of <Record<string, string>[]>[
    { RESILIENT_ENDPOINT_PROFILE_DEVICE: 'cuda' },
    { RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES: '' },
    { SAGEMAKER_MODEL_SERVER_WORKERS: '' },
    { RESILIENT_ENDPOINT_PROFILE_P999: 'not json' },
    { RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES: '' },
  ])
    expect([extra, host(10 * MIB, 4, extra)]).toEqual([extra, []]);
  expect(check(compliant())).toEqual([]);
});

test('RE-GuardBudget uses the figure scripts/guard-budget.py measures: the same smallest budget for each example and worker count', () => {
  const check = rule('RE-GuardBudget');
  const py = spawnSync(
    'python3',
    [
      '-c',
      'import json, sys; sys.path.insert(0, "examples/models/tests"); import stacks; ' +
        'print(json.dumps({ex: [stacks.smallest_budget(ex, n) for n in (1, 2, 4)] for ex in ("recommender", "clustering")}))',
    ],
    { cwd: path.join(__dirname, '..'), encoding: 'utf8' },
  );
  expect(py.stderr).toBe('');
  const measured = JSON.parse(py.stdout) as Record<string, number[]>;
  const caps: Record<string, string> = { recommender: '1024', clustering: '200000' }; // lib/examples' MAX_SEQ_LEN
  for (const example of ['recommender', 'clustering']) {
    const profile = MemoryProfile.fromFile(path.join(__dirname, '..', 'examples', 'models', example, 'memory-profile.json'));
    const p999 = admittedP999(profile, { image: undefined as never, environment: { MAX_SEQ_LEN: caps[example] } });
    [1, 2, 4].forEach((workers, i) => {
      const at = (budget: number) =>
        check(
          compliant({
            variants: [
              variant({
                environment: {
                  RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES: String(budget),
                  RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES: String(profile.baselineBytes),
                  RESILIENT_ENDPOINT_PROFILE_P999: JSON.stringify(p999),
                  SAGEMAKER_MODEL_SERVER_WORKERS: String(workers),
                },
              }),
            ],
          }),
        );
      const smallest = measured[example][i];
      expect([example, workers, at(smallest)]).toEqual([example, workers, []]);
      expect([example, workers, at(smallest - 1).length]).toEqual([example, workers, 1]);
    });
  }
});

test('RE-GpuPlacement: a warning on every variant of a multi-GPU type, naming model_fn(model_dir, context)', () => {
  const check = rule('RE-GpuPlacement');
  expect(
    check(
      compliant({
        variants: [
          variant({ instanceType: 'ml.g4dn.12xlarge' }),
          variant({ variantName: 'Single', instanceType: 'ml.g4dn.xlarge' }),
          variant({ variantName: 'Cpu', instanceType: 'ml.m5.xlarge' }),
          variant({ variantName: 'Unknown', instanceType: 'ml.zz9.huge' }),
        ],
      }),
    ),
  ).toEqual(['Primary: ml.g4dn.12xlarge has 4 GPUs; workers find theirs only through model_fn(model_dir, context)']);
  expect(ProductionReadinessChecks.RULES.find(r => r.id === 'RE-GpuPlacement')!.level).toBe('warning');
});

test('checkTemplate: each finding names its rule, level, stack and resource, with the why and the fix', () => {
  const template = {
    Resources: {
      C: {
        Type: 'AWS::SageMaker::EndpointConfig',
        Properties: { ProductionVariants: [{ VariantName: 'Only', InstanceType: 'ml.m5.xlarge', InitialInstanceCount: 1 }] },
      },
    },
  };
  const [multi] = ProductionReadinessChecks.RULES;
  expect(checkTemplate(template, 'Prod', [multi])).toEqual([
    {
      ruleId: 'RE-MultiInstance',
      level: RuleLevel.ERROR,
      stack: 'Prod',
      resource: 'C',
      message: `Only starts with 1 instance. Why: ${multi.why} Fix: ${multi.fix}`,
    },
  ]);
  expect(ProductionReadinessChecks.checkTemplate(template).map(f => [f.ruleId, f.stack])).toEqual(
    expect.arrayContaining([
      ['RE-MultiInstance', 'template'],
      ['RE-AutoScaling', 'template'],
      ['RE-MemoryAlarm', 'template'],
    ]),
  );
});
