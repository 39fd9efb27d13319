/**
 * The static members that carry what used to be free functions and constants (so jsii takes them to
 * Python, Java and .NET): each gives the same answer as the rule it wraps, through the public root export.
 */
import { Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lib from '../lib';
import {
  CircuitBreaker,
  ContainerImage,
  ModelServer,
  ModelServerTuner,
  ProductionReadinessChecks,
  ResilientEndpoint,
  ResilientEndpointFleet,
  SageMakerInstanceType,
  VariantAutoScaling,
} from '../lib';
import { BREAKER_NAMESPACE } from '../lib/breaker/contract';

test('ModelServerTuner.tune: the tuned settings for an instance and a footprint', () => {
  const t = ModelServerTuner.tune(
    SageMakerInstanceType.ML_G4DN_XLARGE,
    { gpu: Size.gibibytes(4), host: Size.gibibytes(6) },
    { server: ModelServer.TORCHSERVE },
  );
  expect(t.workers).toBe(2); // one model copy per 4 GiB of a 16 GiB GPU, bounded by host memory (0.8 × 16 / 6)
  expect(t.environment).toMatchObject({ TS_DEFAULT_WORKERS_PER_MODEL: '2', TS_MAX_REQUEST_SIZE: '6291456' });
  expect(ModelServerTuner.tune(SageMakerInstanceType.ML_M5_XLARGE).workers).toBe(6); // 4 vCPUs × 1.5
});

test('ModelServerTuner.tune: settings that cannot work throw, naming every problem', () => {
  expect(() => ModelServerTuner.tune(SageMakerInstanceType.ML_G4DN_XLARGE, { gpu: Size.gibibytes(20) })).toThrow(
    /memoryFootprint\.gpu: got 20 GiB; allowed: at most one GPU's memory on ml\.g4dn\.xlarge \(16 GiB\)/,
  );
});

test('ContainerImage.modelServerOf: the serving stack of an AWS image repository', () => {
  expect(ContainerImage.modelServerOf('pytorch-inference')).toBe(ModelServer.TORCHSERVE);
  expect(ContainerImage.modelServerOf('sagemaker-scikit-learn')).toBe(ModelServer.SCIKIT_LEARN);
  expect(ContainerImage.modelServerOf('my-own-server')).toBeUndefined();
});

test('VariantAutoScaling.invocationsPerInstanceTarget: 150 QPS is 9000 invocations per instance per minute', () => {
  expect(VariantAutoScaling.invocationsPerInstanceTarget(150)).toBe(9000);
});

test("constants as static members: the breaker namespace, CloudFormation's resource limit, the readiness rules", () => {
  expect(CircuitBreaker.METRIC_NAMESPACE).toBe(BREAKER_NAMESPACE);
  expect(ResilientEndpointFleet.CFN_RESOURCE_LIMIT).toBe(500);
  expect(new ProductionReadinessChecks().ruleIds).toEqual(ProductionReadinessChecks.RULES.map(r => r.id));
});

test('ProductionReadinessChecks.checkTemplate: findings for a template, none for a guarded endpoint', () => {
  const stack = new Stack();
  new ResilientEndpoint(stack, 'E', {
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
  });
  const guarded = ProductionReadinessChecks.checkTemplate(Template.fromStack(stack).toJSON(), 'Guarded');
  expect(guarded.filter(f => f.level === lib.RuleLevel.ERROR)).toEqual([]);
  const bare = {
    Resources: {
      Cfg: {
        Type: 'AWS::SageMaker::EndpointConfig',
        Properties: { ProductionVariants: [{ VariantName: 'A', InstanceType: 'ml.m5.xlarge', InitialInstanceCount: 1 }] },
      },
    },
  };
  const ids = ProductionReadinessChecks.checkTemplate(bare, 'Bare').map(f => f.ruleId);
  expect(ids).toEqual(expect.arrayContaining(['RE-MultiInstance', 'RE-DataCapture']));
});

test('the root export holds no free function: every function it exports is a class', () => {
  const functions = Object.entries(lib).filter(([, v]) => typeof v === 'function');
  expect(functions.filter(([, v]) => !/^class\b/.test(Function.prototype.toString.call(v))).map(([k]) => k)).toEqual([]);
});

test('ResilientEndpoint.isResilientEndpoint: true for an endpoint (also from a second copy of the library), false for other constructs', () => {
  const stack = new Stack();
  const e = new ResilientEndpoint(stack, 'E', {
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
  });
  expect(ResilientEndpoint.isResilientEndpoint(e)).toBe(true);
  expect(ResilientEndpoint.isResilientEndpoint(ResilientEndpoint.fromEndpointName(stack, 'I', 'legacy'))).toBe(false);
  expect(ResilientEndpoint.isResilientEndpoint(stack)).toBe(false);
  expect(ResilientEndpoint.isResilientEndpoint(undefined)).toBe(false);
  // A second copy of the library (another module instance) recognises it too, where instanceof does not.
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a second module instance, as jest.isolateModules needs
    const copy = require('../lib') as typeof lib;
    expect(copy.ResilientEndpoint).not.toBe(ResilientEndpoint);
    expect(e instanceof copy.ResilientEndpoint).toBe(false);
    expect(copy.ResilientEndpoint.isResilientEndpoint(e)).toBe(true);
  });
});
