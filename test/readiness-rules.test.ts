import { EndpointFacts, ProductionReadinessChecks, RuleLevel } from '../lib';

/** A production-ready endpoint's facts; each case below breaks exactly one rule. */
const good: EndpointFacts = {
  configLogicalId: 'Cfg', endpointLogicalId: 'Ep', endpointName: 'ep', nameKeys: ['ep', '{GetAtt:Ep.EndpointName}'],
  variants: [
    {
      variantName: 'Primary', instanceType: 'ml.m5.xlarge', initialInstanceCount: 2, weight: 1,
      environment: { SAGEMAKER_MODEL_SERVER_WORKERS: '6', MMS_MAX_REQUEST_SIZE: '6291456', RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES: String(2 * 1024 ** 3) },
      networkIsolation: false, vpc: true, shadow: false,
    },
    {
      variantName: 'Fallback', instanceType: 'ml.m5.xlarge', initialInstanceCount: 1, weight: 0,
      environment: {}, networkIsolation: true, vpc: false, shadow: false,
    },
  ],
  kmsKeyId: false,
  dataCapture: { enabled: true, sampling: 1, destination: 's3://b/p' },
  deploymentRollbackAlarms: 4,
  scaling: { Primary: { min: 2, max: 4 } },
  memoryAlarmThresholds: [85],
  breakers: [{ retentionDays: 90 }],
};

const primary = (patch: object) => ({ ...good, variants: [{ ...good.variants[0], ...patch }, good.variants[1]] });

const failing: Record<string, EndpointFacts> = {
  'RE-MultiInstance': primary({ initialInstanceCount: 1 }),
  'RE-AutoScaling': { ...good, scaling: { Primary: { min: 2, max: 2 } } },
  'RE-NoBurstable': primary({ instanceType: 'ml.t2.2xlarge' }), // large enough that only the burstable rule fires
  'RE-MemoryAlarm': { ...good, memoryAlarmThresholds: [90] },
  'RE-CircuitBreaker': { ...good, breakers: [] },
  'RE-DataCapture': { ...good, dataCapture: { enabled: true, sampling: 0.5, destination: 's3://b/p' } },
  'RE-RequestSize': primary({ environment: { ...good.variants[0].environment, MMS_MAX_REQUEST_SIZE: String(64 * 1024 * 1024) } }),
  'RE-WorkerMemory': primary({ environment: { ...good.variants[0].environment, SAGEMAKER_MODEL_SERVER_WORKERS: '12' } }),
  'RE-DeploymentGuardrails': { ...good, deploymentRollbackAlarms: 0 },
  'RE-Network': primary({ vpc: false }),
  'RE-BreakerLogRetention': { ...good, breakers: [{ retentionDays: undefined }] },
  'RE-NvmeStorage': primary({ instanceType: 'ml.g5.xlarge', volumeSizeInGb: 100 }),
};

test('every rule has a failing case below', () => {
  expect(Object.keys(failing).sort()).toEqual(ProductionReadinessChecks.RULES.map(r => r.id).sort());
});

describe.each(ProductionReadinessChecks.RULES.map(r => [r.id, r] as const))('%s', (id, rule) => {
  test('passes on a production-ready endpoint', () => {
    expect(rule.check(good)).toEqual([]);
  });
  test('fails on its broken case, naming what is wrong', () => {
    const problems = rule.check(failing[id]);
    expect(problems.length).toBeGreaterThan(0);
    for (const p of problems) expect(p.length).toBeGreaterThan(10);
  });
  test('only its own case breaks it (each case breaks exactly one rule)', () => {
    for (const [other, facts] of Object.entries(failing)) {
      if (other !== id) expect({ other, problems: rule.check(facts) }).toEqual({ other, problems: [] });
    }
  });
  test('has a level, a why from the incidents and a fix', () => {
    expect([RuleLevel.ERROR, RuleLevel.WARNING]).toContain(rule.level);
    expect(rule.why.length).toBeGreaterThan(20);
    expect(rule.fix.length).toBeGreaterThan(10);
  });
});
