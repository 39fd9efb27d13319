import { execFileSync } from 'child_process';
import * as path from 'path';
import { App, Size, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { CapacityPlan, ContainerImage, ProductionReadinessChecks, ResilientEndpoint, RuleLevel, SageMakerInstanceType } from '../lib';
import { ClusteringStack } from '../lib/examples/clustering-stack';
import { RecommenderStack } from '../lib/examples/recommender-stack';

const image = ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1');

/** A hand-written, not-production-ready endpoint: one ml.t2.medium, no alarms, no scaling. */
function handWritten(stack: Stack, props: Partial<sagemaker.CfnEndpointConfig.ProductionVariantProperty> = {}, config: Partial<sagemaker.CfnEndpointConfigProps> = {}) {
  const model = new sagemaker.CfnModel(stack, 'Model', { executionRoleArn: 'arn:aws:iam::123456789012:role/x', primaryContainer: { image: 'img', environment: { MMS_MAX_REQUEST_SIZE: String(100 * 1024 * 1024) } } });
  const cfg = new sagemaker.CfnEndpointConfig(stack, 'Config', {
    productionVariants: [{ variantName: 'AllTraffic', modelName: model.attrModelName, instanceType: 'ml.t2.medium', initialInstanceCount: 1, initialVariantWeight: 1, ...props }],
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
      expect([...new Set(findings.map(f => f.ruleId))]).toEqual(['RE-Network']); // documented trade-off: the container must reach SSM
    }
  });

  test('a hand-written ml.t2.medium endpoint without alarms fails with the expected rule ids', () => {
    const stack = new Stack();
    handWritten(stack);
    const ids = ProductionReadinessChecks.checkTemplate(Template.fromStack(stack).toJSON()).map(f => f.ruleId).sort();
    expect(ids).toEqual(['RE-AutoScaling', 'RE-CircuitBreaker', 'RE-DataCapture', 'RE-DeploymentGuardrails', 'RE-MemoryAlarm', 'RE-MultiInstance', 'RE-Network', 'RE-NoBurstable', 'RE-RequestSize']);
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
    handWritten(stack, { instanceType: 'ml.m5.xlarge' }, {
      shadowProductionVariants: [{ variantName: 'Shadow', modelName: 'm', instanceType: 'ml.g5.xlarge', initialInstanceCount: 1, initialVariantWeight: 0.05, volumeSizeInGb: 50 }],
    });
    const nvme = ProductionReadinessChecks.checkTemplate(Template.fromStack(stack).toJSON()).filter(f => f.ruleId === 'RE-NvmeStorage');
    expect(nvme.map(f => f.message.split('.')[0])).toEqual(['Shadow (ml']);
    const inf2 = new Stack();
    handWritten(inf2, { instanceType: 'ml.inf2.xlarge', volumeSizeInGb: 50 });
    expect(ProductionReadinessChecks.checkTemplate(Template.fromStack(inf2).toJSON()).filter(f => f.ruleId === 'RE-NvmeStorage')).toEqual([]);
  });

  test('worker-memory rule: explicit workers beyond 80 % of memory are an error', () => {
    const stack = new Stack();
    new ResilientEndpoint(stack, 'E', { model: { image, memoryFootprint: { host: Size.gibibytes(4) } }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, modelServer: { workers: 8 } });
    const f = ProductionReadinessChecks.checkTemplate(Template.fromStack(stack).toJSON()).filter(x => x.ruleId === 'RE-WorkerMemory');
    expect(f[0].message).toMatch(/Primary: 8 workers × 4\.0 GiB > 80 % of 16 GiB/);
  });

  test('every rule has id, level, why and fix; each rule fires on the bad stack or a targeted one', () => {
    for (const r of ProductionReadinessChecks.RULES) {
      expect(r.id).toMatch(/^RE-[A-Za-z]+$/);
      expect(r.why.length).toBeGreaterThan(20);
      expect(r.fix.length).toBeGreaterThan(10);
    }
  });

  test('cdk synth: a single ml.t2.medium endpoint without alarms fails, printing rule ids and fixes; acknowledged findings are skipped', () => {
    const app = new App();
    handWritten(new Stack(app, 'Bad'));
    Validations.of(app).addPlugins(new ProductionReadinessChecks());
    let msg = '';
    try { app.synth(); } catch (e) { msg = (e as Error).message; }
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

describe('capacity planner', () => {
  test("incident B: 50 ms × 200 QPS × 1.3 = 13 vCPU → 4 × ml.m5.xlarge, not one 4-vCPU instance", () => {
    const plan = CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 200, modelMemory: Size.mebibytes(2150) });
    expect(plan.slotsNeeded).toBe(13);
    expect(plan.instanceType.name).toBe('ml.m5.xlarge');
    expect(plan.instanceCount).toBe(4);
    expect(plan.workersPerInstance).toBe(6);
    expect(plan.instanceCount * Math.min(plan.instanceType.spec.vCpus, plan.workersPerInstance)).toBeGreaterThanOrEqual(13);
    expect(plan.arithmetic[0]).toBe('parallel vCPUs needed = 50 ms × 200 QPS / 1000 × 1.3 = 13 → 13');
  });

  test('GPU model: copies per T4/A10G, at least 2 instances', () => {
    const plan = CapacityPlan.compute({ p50LatencyMs: 120, peakQps: 100, gpuMemory: Size.gibibytes(4) });
    expect(plan.instanceType.isGpu).toBe(true);
    expect(plan.instanceCount).toBeGreaterThanOrEqual(2);
    expect(plan.instanceCount * plan.workersPerInstance).toBeGreaterThanOrEqual(16);
  });

  test('a model larger than any instance is a clear error naming the largest type tried', () => {
    expect(() => CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 10, gpuMemory: Size.gibibytes(30) }))
      .toThrow(/no instance type fits one model copy needing 30\.0 GiB of GPU memory.*largest tried was ml\.g5\.\w+ \(24 GiB per GPU\)/);
    expect(() => CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 10, modelMemory: Size.gibibytes(900) }))
      .toThrow(/largest tried was ml\.r5\.24xlarge \(768 GiB\)/);
    expect(() => CapacityPlan.compute({ p50LatencyMs: 0, peakQps: -1 })).toThrow(/p50LatencyMs: got 0.*peakQps: got -1/);
  });

  test('from the terminal', () => {
    const out = execFileSync(process.execPath, [require.resolve('tsx/cli'), path.join(__dirname, '..', 'bin', 'cli.ts'), 'plan', '--latency', '50', '--qps', '200', '--model-gib', '2.1'], { encoding: 'utf8' });
    expect(out).toMatch(/instance type\s+ml\.m5\.xlarge/);
    expect(out).toMatch(/instance count\s+4/);
  });
});
