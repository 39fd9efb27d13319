// The production-readiness rule pack (lib/checks): on synthesized stacks here, on plain facts below.
import * as fs from 'fs';
import * as path from 'path';
import { App, Size, Stack, Stage, Validations } from 'aws-cdk-lib';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { Template } from 'aws-cdk-lib/assertions';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import {
  ContainerImage,
  EndpointFacts,
  MemoryProfile,
  ProductionReadinessChecks,
  ResilientEndpoint,
  ResilientEndpointFleet,
  RuleLevel,
  SageMakerInstanceType,
} from '../lib';
import { ClusteringStack } from '../lib/examples/clustering-stack';
import { RecommenderStack } from '../lib/examples/recommender-stack';

const image = ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1');

/** A hand-written, not-production-ready endpoint: one ml.t2.medium, no alarms, no scaling. */
function handWritten(
  stack: Stack,
  props: Partial<sagemaker.CfnEndpointConfig.ProductionVariantProperty> = {},
  config: Partial<sagemaker.CfnEndpointConfigProps> = {},
) {
  const model = new sagemaker.CfnModel(stack, 'Model', {
    executionRoleArn: 'arn:aws:iam::123456789012:role/x',
    primaryContainer: { image: 'img', environment: { MMS_MAX_REQUEST_SIZE: String(100 * 1024 * 1024) } },
  });
  const cfg = new sagemaker.CfnEndpointConfig(stack, 'Config', {
    productionVariants: [
      {
        variantName: 'AllTraffic',
        modelName: model.attrModelName,
        instanceType: 'ml.t2.medium',
        initialInstanceCount: 1,
        initialVariantWeight: 1,
        ...props,
      },
    ],
    ...config,
  });
  new sagemaker.CfnEndpoint(stack, 'Endpoint', { endpointName: 'legacy', endpointConfigName: cfg.attrEndpointConfigName });
}

describe('rule pack', () => {
  test('the example stacks pass every error rule', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    for (const s of [new RecommenderStack(app, 'Rec'), new ClusteringStack(app, 'Clu')]) {
      const findings = ProductionReadinessChecks.checkTemplate(Template.fromStack(s).toJSON());
      expect(findings.filter(f => f.level === RuleLevel.ERROR)).toEqual([]);
      // RE-Network: documented trade-off, the container must reach SSM; drift and a budget are the user's to set.
      expect([...new Set(findings.map(f => f.ruleId))]).toEqual(['RE-Network', 'RE-Drift', 'RE-Budget']);
    }
  });

  test('a hand-written ml.t2.medium endpoint without alarms fails with the expected rule ids', () => {
    const stack = new Stack();
    handWritten(stack);
    const ids = ProductionReadinessChecks.checkTemplate(Template.fromStack(stack).toJSON())
      .map(f => f.ruleId)
      .sort();
    expect(ids).toEqual([
      'RE-AutoScaling',
      'RE-Budget',
      'RE-CircuitBreaker',
      'RE-DataCapture',
      'RE-DeploymentGuardrails',
      'RE-Drift',
      'RE-MemoryAlarm',
      'RE-MultiInstance',
      'RE-Network',
      'RE-NoBurstable',
      'RE-RequestSize',
    ]);
  });

  test('NVMe rule: VolumeSizeInGB on g4dn is an error; KmsKeyId is not (it does not encrypt the NVMe, but is accepted)', () => {
    const stack = new Stack();
    handWritten(stack, { instanceType: 'ml.g4dn.xlarge', volumeSizeInGb: 50 }, { kmsKeyId: 'arn:aws:kms:us-east-1:123456789012:key/1' });
    const nvme = ProductionReadinessChecks.checkTemplate(Template.fromStack(stack).toJSON()).filter(f => f.ruleId === 'RE-NvmeStorage');
    expect(nvme).toHaveLength(1);
    expect(nvme[0].message).toMatch(/^AllTraffic \(ml\.g4dn\.xlarge\) sets VolumeSizeInGB\. Why: SageMaker rejects/);
    expect(nvme[0].level).toBe(RuleLevel.ERROR);
  });

  test('NVMe rule covers the shadow variant; inf2 (EBS only) may set a volume size', () => {
    const stack = new Stack();
    handWritten(
      stack,
      { instanceType: 'ml.m5.xlarge' },
      {
        shadowProductionVariants: [
          {
            variantName: 'Shadow',
            modelName: 'm',
            instanceType: 'ml.g5.xlarge',
            initialInstanceCount: 1,
            initialVariantWeight: 0.05,
            volumeSizeInGb: 50,
          },
        ],
      },
    );
    const nvme = ProductionReadinessChecks.checkTemplate(Template.fromStack(stack).toJSON()).filter(f => f.ruleId === 'RE-NvmeStorage');
    expect(nvme.map(f => f.message.split('.')[0])).toEqual(['Shadow (ml']);
    const inf2 = new Stack();
    handWritten(inf2, { instanceType: 'ml.inf2.xlarge', volumeSizeInGb: 50 });
    expect(ProductionReadinessChecks.checkTemplate(Template.fromStack(inf2).toJSON()).filter(f => f.ruleId === 'RE-NvmeStorage')).toEqual([]);
  });

  test('worker-memory rule: explicit workers beyond 80 % of memory are an error', () => {
    const stack = new Stack();
    new ResilientEndpoint(stack, 'E', {
      model: { image, memoryFootprint: { host: Size.gibibytes(4) } },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      modelServer: { workers: 8 },
    });
    const f = ProductionReadinessChecks.checkTemplate(Template.fromStack(stack).toJSON()).filter(x => x.ruleId === 'RE-WorkerMemory');
    expect(f[0].message).toMatch(/Primary: 8 workers × 4\.0 GiB > 80 % of 16 GiB/);
  });

  test('guard-budget rule: a profiled model whose workers fill the guard budget is an error naming the memory that works', () => {
    // The recommender's profile (a 285-MiB warm baseline) with 24 workers on ml.m5.large (8 GiB; a 7.2-GiB budget):
    // 1.25 × (24 × 285 MiB + its 21-MiB P99.9 request) is 8.4 GiB. Each worker's 307 MiB still holds one request.
    const profile = MemoryProfile.fromFile(path.join(__dirname, '..', 'examples', 'models', 'recommender', 'memory-profile.json'));
    const at = (instanceType: SageMakerInstanceType, workers: number) => {
      const stack = new Stack();
      new ResilientEndpoint(stack, 'E', {
        model: { image, memoryProfile: profile, environment: { MAX_SEQ_LEN: '1024' } },
        instanceType,
        modelServer: { workers },
      });
      return ProductionReadinessChecks.checkTemplate(Template.fromStack(stack).toJSON()).filter(f => f.ruleId === 'RE-GuardBudget');
    };
    const [f] = at(SageMakerInstanceType.ML_M5_LARGE, 24);
    expect(f.level).toBe(RuleLevel.ERROR);
    expect(f.message).toMatch(
      /^Primary: the container's guard budget is 7373 MiB; 24 workers need at least 8\d{3} MiB \(1\.25 × \(24 × the profile's warm baseline of 285 MiB \+ its P99\.9 request of 21 MiB\)\), an instance with 10 GiB of memory at 90 %\. Why: /,
    );
    expect(at(SageMakerInstanceType.ML_M5_LARGE, 20)).toEqual([]); // 1.25 × (20 × 285 + 21) = 7151 MiB
    expect(at(SageMakerInstanceType.ML_M5_XLARGE, 24)).toEqual([]);
  });

  test('every rule has id, level, why and fix; each rule fires on the bad stack or a targeted one', () => {
    for (const r of ProductionReadinessChecks.RULES) expect(r.id).toMatch(/^RE-[A-Za-z]+$/);
  });

  test('cdk synth: a single ml.t2.medium endpoint without alarms fails, printing rule ids and fixes; acknowledged findings are skipped', () => {
    const app = new App();
    handWritten(new Stack(app, 'Bad'));
    Validations.of(app).addPlugins(new ProductionReadinessChecks());
    let msg = '';
    try {
      app.synth();
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toMatch(/RE-NoBurstable/);
    expect(msg).toMatch(/RE-MultiInstance/);
    expect(msg).toMatch(/Use the CapacityPlan answer, e\.g\. ml\.m5\.xlarge/);

    const ok = new App();
    const s = new Stack(ok, 'Acked');
    handWritten(s, { instanceType: 'ml.m5.xlarge', initialInstanceCount: 2 });
    Validations.of(ok).addPlugins(new ProductionReadinessChecks());
    for (const id of ['RE-AutoScaling', 'RE-MemoryAlarm']) Validations.of(s).acknowledge({ id, reason: 'legacy endpoint, migrating next sprint' });
    expect(() => ok.synth()).not.toThrow();
  });
});

/** A production-ready endpoint's facts; each case below breaks exactly one rule. */
const good: EndpointFacts = {
  configLogicalId: 'Cfg',
  endpointLogicalId: 'Ep',
  endpointName: 'ep',
  nameKeys: ['ep', '{GetAtt:Ep.EndpointName}'],
  variants: [
    {
      variantName: 'Primary',
      instanceType: 'ml.m5.xlarge',
      initialInstanceCount: 2,
      weight: 1,
      environment: {
        SAGEMAKER_MODEL_SERVER_WORKERS: '6',
        MMS_MAX_REQUEST_SIZE: '6291456',
        RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES: String(2 * 1024 ** 3),
      },
      networkIsolation: false,
      vpc: true,
      shadow: false,
    },
    {
      variantName: 'Fallback',
      instanceType: 'ml.m5.xlarge',
      initialInstanceCount: 1,
      weight: 0,
      environment: {},
      networkIsolation: true,
      vpc: false,
      shadow: false,
    },
  ],
  kmsKeyId: false,
  dataCapture: { enabled: true, sampling: 1, destination: 's3://b/p' },
  deploymentRollbackAlarms: 4,
  scaling: { Primary: { min: 2, max: 4 } },
  memoryAlarmThresholds: [85],
  breakers: [{ retentionDays: 90 }],
  driftMonitors: 1,
  budget: true,
};

const primary = (patch: object) => ({ ...good, variants: [{ ...good.variants[0], ...patch }, good.variants[1]] });

const failing: Record<string, EndpointFacts> = {
  'RE-Drift': { ...good, driftMonitors: 0 },
  'RE-Budget': { ...good, budget: false },
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
  // A profiled model whose P99.9 request (135 MiB) does not fit on top of its 3 GiB baseline in a 3.1 GiB budget.
  'RE-ProfiledMemory': primary({
    environment: {
      ...good.variants[0].environment,
      RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES: String(3.1 * 1024 ** 3),
      RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES: String(3 * 1024 ** 3),
      RESILIENT_ENDPOINT_PROFILE_P999: JSON.stringify({ size: 2801, bytes: 135 * 2 ** 20 }),
      RESILIENT_ENDPOINT_PROFILE_DEVICE: 'cpu',
    },
  }),
  'RE-GpuPlacement': primary({ instanceType: 'ml.g5.12xlarge' }),
  // Two workers whose own budget holds the P99.9 request (RE-ProfiledMemory passes), in a container budget below
  // 1.25 × (2 × 1 GiB + 100 MiB) = 2685 MiB.
  'RE-GuardBudget': primary({
    environment: {
      ...good.variants[0].environment,
      SAGEMAKER_MODEL_SERVER_WORKERS: '2',
      RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES: String(2400 * 2 ** 20),
      RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES: String(1200 * 2 ** 20),
      RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES: String(1024 * 2 ** 20),
      RESILIENT_ENDPOINT_PROFILE_P999: JSON.stringify({ size: 1024, bytes: 100 * 2 ** 20 }),
      RESILIENT_ENDPOINT_PROFILE_DEVICE: 'cpu',
    },
  }),
};

/** What each rule says about its failing case: the variant or setting at fault, with the value found. */
const messages: Record<string, RegExp> = {
  'RE-Drift': /^no drift monitor reads this endpoint's capture$/,
  'RE-Budget': /^no budget alarm for this endpoint$/,
  'RE-MultiInstance': /^Primary starts with 1 instance$/,
  'RE-AutoScaling': /^Primary scales 2\.\.2 \(max must exceed min\)$/,
  'RE-NoBurstable': /^Primary runs on ml\.t2\.2xlarge$/,
  'RE-MemoryAlarm': /^no memory alarm at ≤ 85 %$/,
  'RE-CircuitBreaker': /^no circuit breaker function for this endpoint$/,
  'RE-DataCapture': /^sampling 0\.5 is not an integer from 1 to 100$/,
  'RE-RequestSize': /^Primary: MMS_MAX_REQUEST_SIZE=67108864$/,
  'RE-WorkerMemory': /^Primary: 12 workers × 2\.0 GiB > 80 % of 16 GiB$/,
  'RE-DeploymentGuardrails': /^no auto-rollback alarms on the endpoint$/,
  'RE-Network': /^Primary has neither network isolation nor a VPC$/,
  'RE-BreakerLogRetention': /^breaker logs never expire$/,
  'RE-NvmeStorage': /^Primary \(ml\.g5\.xlarge\) sets VolumeSizeInGB$/,
  'RE-ProfiledMemory':
    /^Primary: the profiled P99\.9 request \(size 2801\) needs 135 MiB on top of the loaded model's 3072 MiB, more than a worker's budget of 3174 MiB$/,
  'RE-GpuPlacement': /^Primary: ml\.g5\.12xlarge has 4 GPUs; workers find theirs only through model_fn\(model_dir, context\)$/,
  'RE-GuardBudget':
    /^Primary: the container's guard budget is 2400 MiB; 2 workers need at least 2685 MiB \(1\.25 × \(2 × the profile's warm baseline of 1024 MiB \+ its P99\.9 request of 100 MiB\)\), an instance with 3 GiB of memory at 90 %$/,
};

/** A fix names something to change in this library (a prop, a construct) or a concrete instance type. */
const ACTIONABLE =
  /\b(ResilientEndpoint|CircuitBreaker|CapacityPlan|instanceCount|autoScaling|circuitBreaker|dataCapture|deployment|monitoring|model\.\w+|modelServer\.\w+|volumeSize|ml\.\w+\.\w+)\b/;

test('every rule has a failing case below, and the message it gives', () => {
  expect(Object.keys(failing).sort()).toEqual(ProductionReadinessChecks.RULES.map(r => r.id).sort());
  expect(Object.keys(messages).sort()).toEqual(Object.keys(failing).sort());
});

describe.each(ProductionReadinessChecks.RULES.map(r => [r.id, r] as const))('%s', (id, rule) => {
  test('passes on a production-ready endpoint', () => {
    expect(rule.check(good)).toEqual([]);
  });
  test('fails on its broken case, naming what is wrong', () => {
    expect(rule.check(failing[id])).toEqual([expect.stringMatching(messages[id])]);
  });
  test('only its own case breaks it (each case breaks exactly one rule)', () => {
    for (const [other, facts] of Object.entries(failing)) {
      if (other !== id) expect({ other, problems: rule.check(facts) }).toEqual({ other, problems: [] });
    }
  });
  test('has a level, a why and a fix that names what to change', () => {
    expect([RuleLevel.ERROR, RuleLevel.WARNING]).toContain(rule.level);
    expect(rule.why).toMatch(/^\S.{30,}[.)]$/); // a sentence, not a placeholder
    expect(rule.fix).toMatch(ACTIONABLE);
  });
});

test('one name per rule: file lib/checks/rules/<kebab>.ts exports <Pascal> with id RE-<Pascal>, and RULES holds each once', async () => {
  const dir = path.join(__dirname, '..', 'lib', 'checks', 'rules');
  const files = fs.readdirSync(dir).filter(f => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  const pascal = (kebab: string) => kebab.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());
  for (const file of files) {
    const name = pascal(file.replace(/\.ts$/, ''));
    const mod = await import(path.join(dir, file));
    expect(Object.keys(mod)).toEqual([name]);
    expect(mod[name].id).toBe(`RE-${name}`);
  }
  expect(ProductionReadinessChecks.RULES.map(r => r.id).sort()).toEqual(files.map(f => `RE-${pascal(f.replace(/\.ts$/, ''))}`).sort());
});

/** A fleet endpoint that is not production-ready: one burstable instance, no autoscaling (RE-NoBurstable, RE-MultiInstance, RE-AutoScaling). */
const tiny = (fleet: ResilientEndpointFleet) =>
  fleet.addEndpoint('Tiny', {
    model: { image },
    instanceType: SageMakerInstanceType.ML_T2_MEDIUM,
    instanceCount: 1,
    autoScaling: { enabled: false },
    monitoring: { notify: { emails: ['a@example.com'] } },
  });
const env = { account: '123456789012', region: 'us-east-1' };

describe('readiness checks look inside nested stacks', () => {
  test('a not-ready endpoint inside a ResilientEndpointFleet fails cdk synth; a ready fleet passes', () => {
    const notReady = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    Validations.of(notReady).addPlugins(new ProductionReadinessChecks());
    const fleet = new ResilientEndpointFleet(new Stack(notReady, 'Fleet', { env }), 'Models');
    tiny(fleet);
    let message = '';
    try {
      notReady.synth();
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/RE-NoBurstable/);
    expect(message).toMatch(/RE-MultiInstance/);
    expect(message).toMatch(/Fleet\/Models\/Tiny/);

    const ready = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    Validations.of(ready).addPlugins(new ProductionReadinessChecks());
    const ok = new ResilientEndpointFleet(new Stack(ready, 'Fleet', { env: { account: '123456789012', region: 'us-east-1' } }), 'Models');
    const e = ok.addEndpoint('Good', {
      model: { image },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      monitoring: { notify: { emails: ['a@example.com'] } },
    });
    Validations.of(e).acknowledge({ id: 'RE-Network', reason: 'test' });
    expect(() => ready.synth()).not.toThrow();
  });
});

describe("the plugin's report, as cdk synth receives it", () => {
  /** A hand-written endpoint under `scope` that only some rules flag: two ml.m5.xlarge, no scaling, alarms, breaker or capture. */
  function legacy(scope: Construct) {
    const model = new sagemaker.CfnModel(scope, 'Model', {
      executionRoleArn: 'arn:aws:iam::123456789012:role/x',
      primaryContainer: { image: 'img', environment: { MMS_MAX_REQUEST_SIZE: String(100 * 1024 * 1024) } },
    });
    const cfg = new sagemaker.CfnEndpointConfig(scope, 'Config', {
      productionVariants: [
        { variantName: 'AllTraffic', modelName: model.attrModelName, instanceType: 'ml.m5.xlarge', initialInstanceCount: 2, initialVariantWeight: 1 },
      ],
    });
    return new sagemaker.CfnEndpoint(scope, 'Endpoint', { endpointConfigName: cfg.attrEndpointConfigName });
  }
  /** A stack as aws-cdk-lib's synthesis lists it for a plugin (private/synthesis-validation: an unknown account or Region is undefined). */
  const listed = (s: cxapi.CloudFormationStackArtifact) => ({
    templatePath: s.templateFullPath,
    stackConstructPath: s.hierarchicalId,
    accountId: s.environment.account === cxapi.UNKNOWN_ACCOUNT ? undefined : s.environment.account,
    region: s.environment.region === cxapi.UNKNOWN_REGION ? undefined : s.environment.region,
  });
  /** validate() on the app's synthesized stacks, with the context aws-cdk-lib builds (stack paths and template paths). */
  function report(app: App) {
    const stacks = app.synth().stacksRecursively;
    return new ProductionReadinessChecks().validate({
      templatePaths: stacks.map(s => s.templateFullPath),
      stackTemplates: stacks.map(listed),
      appConstruct: app,
    });
  }
  const found = (r: ReturnType<typeof report>) => r.violations.map(v => `${v.violatingResources[0].constructPath} ${v.ruleName}`).sort();
  const synthError = (app: App) => {
    try {
      app.synth();
      return '';
    } catch (e) {
      return (e as Error).message;
    }
  };

  test("name, version and rule ids; each violation's rule, severity, fix, resource, template and construct path", () => {
    const plugin = new ProductionReadinessChecks();
    expect([plugin.name, plugin.version]).toEqual(['ProductionReadiness', '0.1.0']);
    expect(plugin.ruleIds).toEqual([
      'RE-MultiInstance',
      'RE-AutoScaling',
      'RE-NoBurstable',
      'RE-MemoryAlarm',
      'RE-CircuitBreaker',
      'RE-DataCapture',
      'RE-RequestSize',
      'RE-WorkerMemory',
      'RE-DeploymentGuardrails',
      'RE-Network',
      'RE-BreakerLogRetention',
      'RE-NvmeStorage',
      'RE-ProfiledMemory',
      'RE-Drift',
      'RE-Budget',
      'RE-GpuPlacement',
      'RE-GuardBudget',
    ]);
    const app = new App();
    legacy(new Stack(app, 'Legacy'));
    const r = report(app);
    expect(r.success).toBe(false);
    expect(r.violations.map(v => [v.ruleName, v.severity])).toEqual([
      ['RE-AutoScaling', 'error'],
      ['RE-MemoryAlarm', 'error'],
      ['RE-CircuitBreaker', 'warning'],
      ['RE-DataCapture', 'warning'],
      ['RE-RequestSize', 'warning'],
      ['RE-DeploymentGuardrails', 'warning'],
      ['RE-Network', 'warning'],
      ['RE-Drift', 'warning'],
      ['RE-Budget', 'warning'],
    ]);
    expect(r.violations[0]).toEqual({
      ruleName: 'RE-AutoScaling',
      description:
        'AllTraffic has no scalable target. Why: Incident B: peaks reach 17× off-peak QPS; fixed capacity runs out of memory at the peak. Fix: Keep ResilientEndpoint autoScaling on with capacity { min, max } and max > min.',
      severity: 'error',
      fix: 'Keep ResilientEndpoint autoScaling on with capacity { min, max } and max > min.',
      violatingResources: [
        {
          resourceLogicalId: 'Endpoint',
          templatePath: expect.stringMatching(/[/\\]Legacy\.template\.json$/),
          locations: ['Properties'],
          constructPath: 'Legacy/Endpoint',
        },
      ],
    });
    // Each violation's fix is its own rule's (the description ends with it).
    for (const v of r.violations) expect(v.description.endsWith(` Fix: ${v.fix}`)).toBe(true);
  });

  test('an acknowledgement skips that rule on that endpoint only; several rules can be acknowledged in one call', () => {
    const app = new App();
    const stack = new Stack(app, 'Legacy');
    const a = new Construct(stack, 'A');
    const b = new Construct(stack, 'B');
    legacy(a);
    legacy(b);
    Validations.of(a).acknowledge({ id: 'RE-AutoScaling', reason: 'scaled by hand' });
    Validations.of(b).acknowledge({ id: 'RE-DataCapture', reason: 'no PII allowed' }, { id: 'RE-RequestSize', reason: 'large images' });
    const all = [
      'RE-AutoScaling',
      'RE-Budget',
      'RE-CircuitBreaker',
      'RE-DataCapture',
      'RE-DeploymentGuardrails',
      'RE-Drift',
      'RE-MemoryAlarm',
      'RE-Network',
      'RE-RequestSize',
    ];
    expect(found(report(app))).toEqual(
      [
        ...all.filter(id => id !== 'RE-AutoScaling').map(id => `Legacy/A/Endpoint ${id}`),
        ...all.filter(id => id !== 'RE-DataCapture' && id !== 'RE-RequestSize').map(id => `Legacy/B/Endpoint ${id}`),
      ].sort(),
    );
  });

  test('two stacks with the same construct ids: an acknowledgement in one does not reach the other', () => {
    const app = new App();
    const one = new Stack(app, 'One');
    legacy(one);
    legacy(new Stack(app, 'Two'));
    Validations.of(one).acknowledge({ id: 'RE-AutoScaling', reason: 'scaled by hand' });
    const autoScaling = found(report(app)).filter(f => f.endsWith(' RE-AutoScaling'));
    expect(autoScaling).toEqual(['Two/Endpoint RE-AutoScaling']);
  });

  test("a fleet in a Stage, beside a stack outside it: the fleet's endpoints (nested stacks, in the Stage's own assembly directory) are checked", () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    Validations.of(app).addPlugins(new ProductionReadinessChecks());
    new Stack(app, 'Shared', { env });
    tiny(new ResilientEndpointFleet(new Stack(new Stage(app, 'Prod'), 'Fleet', { env }), 'Models'));
    const message = synthError(app);
    expect(message).toMatch(/RE-NoBurstable/);
    expect(message).toMatch(/Prod\/Fleet\/Models\/Tiny/);
  });

  test('validate() checks the nested stacks of the stacks it is given, and no others', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    tiny(new ResilientEndpointFleet(new Stack(app, 'Given', { env }), 'Models'));
    tiny(new ResilientEndpointFleet(new Stack(app, 'NotGiven', { env }), 'Models'));
    const given = app.synth().getStackByName('Given');
    const r = new ProductionReadinessChecks().validate({
      templatePaths: [given.templateFullPath],
      stackTemplates: [listed(given)],
      appConstruct: app,
    });
    expect([...new Set(r.violations.map(v => v.violatingResources[0].constructPath))]).toEqual(['Given/Models/Tiny/Endpoint/Endpoint']);
  });
});
