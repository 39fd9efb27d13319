/**
 * The construct and its function agree: what the CircuitBreaker construct writes (its function's
 * environment, or a shared function's settings parameter) is what the handler's own parsers read,
 * with the construct's props intact — both ways to reach the function give the same settings.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { HandlerSettings, settingsFromEnv, settingsFromParameter } from '../lambda/circuit-breaker/settings';
import { ContainerImage, ResilientEndpoint, SageMakerInstanceType, SharedCircuitBreaker } from '../lib';
import { Construct } from 'constructs';
import { BREAKER_NAMESPACE } from '../lib/breaker/contract';
import { bundledCode, lambdaBundleDir } from '../lib/breaker/wiring';
import { deployedValue } from './util';

/** CloudFormation value → the string it deploys as (references become placeholders). */
const deployed = (v: unknown): string => deployedValue(v, { ref: id => `<ref:${id}>`, getAtt: (id, attribute) => `<att:${id}.${attribute}>` });

const props = {
  endpointName: 'reco',
  model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/reco:1') },
  instanceType: SageMakerInstanceType.ML_G4DN_12XLARGE,
  fallback: {
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/reco-lite:1') },
    instanceType: SageMakerInstanceType.ML_G4DN_XLARGE,
  },
};
// Every option of the policy away from its default (DEFAULT_CONFIG), so a setting the construct drops or
// mixes up shows in what the function reads.
const breaker = {
  degradeAtPercent: 75,
  criticalAtPercent: 92,
  recoverBelowPercent: 60,
  errorRateThresholdPercent: 7,
  minInvocations: 35,
  minDwell: Duration.minutes(7),
  recoveryDwell: Duration.minutes(11),
  recoveryStepInterval: Duration.minutes(4),
  recoverySteps: 5,
  maxFailedProbes: 6,
  maxProbeWait: Duration.hours(2),
  degradedFallbackSharePercent: 30,
  dryRun: true,
};

function ownFunctionSettings(): HandlerSettings {
  const stack = new Stack(new App(), 'Own', { env: { account: '123456789012', region: 'us-east-1' } });
  new ResilientEndpoint(stack, 'E', { ...props, circuitBreaker: breaker });
  const fns = Template.fromStack(stack).findResources('AWS::Lambda::Function', {
    Properties: { Environment: { Variables: { ENDPOINT_NAME: 'reco' } } },
  });
  const vars = Object.values(fns)[0].Properties.Environment.Variables as Record<string, unknown>;
  return settingsFromEnv(Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, deployed(v)])));
}

const SETTINGS_DESCRIPTION = 'Circuit-breaker settings of a SageMaker endpoint, read by the shared breaker function';

function sharedFunctionSettings(): HandlerSettings {
  const stack = new Stack(new App(), 'Shared', { env: { account: '123456789012', region: 'us-east-1' } });
  const shared = new SharedCircuitBreaker(stack, 'Breaker');
  new ResilientEndpoint(stack, 'E', { ...props, circuitBreaker: { ...breaker, shared } });
  const params = Template.fromStack(stack).findResources('AWS::SSM::Parameter', { Properties: { Description: SETTINGS_DESCRIPTION } });
  return settingsFromParameter(deployed(Object.values(params)[0].Properties.Value), 'table');
}

const comparable = ({ tableName, stateKey, parameterName, ...rest }: HandlerSettings) => rest;

test("the function's environment parses to the construct's settings", () => {
  const s = ownFunctionSettings();
  expect(s).toMatchObject({
    endpointName: 'reco',
    primaryVariant: 'Primary',
    fallbackVariant: 'Fallback',
    gpuCount: 4,
    perGpuMetrics: true,
    metricPeriodSeconds: 10,
    errorWindowSeconds: 600,
    dryRun: true,
    metricNamespace: BREAKER_NAMESPACE,
    config: {
      degradeAtPercent: 75,
      criticalAtPercent: 92,
      recoverBelowPercent: 60,
      errorRateOpen: 0.07,
      minInvocations: 35,
      minDwellSeconds: 420,
      recoveryDwellSeconds: 660,
      recoveryStepSeconds: 240,
      recoverySteps: 5,
      degradedFallbackShare: 0.3,
      maxFailedProbes: 6,
      maxProbeWaitSeconds: 7200,
      // Not options: the policy's own.
      staleAfterSeconds: 300,
      probationSeconds: 600,
      hasFallback: true,
    },
  });
  expect(s.parameterName).toMatch(/^<ref:/); // the level parameter's generated name
  expect(s.primaryCapacity).toEqual({ min: expect.any(Number), max: expect.any(Number), qpsPerInstance: 150 });
  expect(s.fallbackCapacity).toEqual({ min: expect.any(Number), max: expect.any(Number), qpsPerInstance: expect.any(Number) });
});

test("a shared function reads the same settings from the endpoint's settings parameter", () => {
  const shared = sharedFunctionSettings();
  expect(shared.stateKey).toBe('reco');
  expect(comparable(shared)).toEqual(comparable(ownFunctionSettings()));
});

test('a bundle that was never built is a synth error saying how to build it, not a stack trace', () => {
  const stack = new Stack();
  const scope = new Construct(stack, 'Fn');
  expect(lambdaBundleDir('circuit-breaker')).toBeDefined();
  expect(lambdaBundleDir('no-such-function')).toBeUndefined();
  bundledCode(scope, 'no-such-function');
  expect(scope.node.validate()).toEqual([
    expect.stringMatching(
      /the pre-built Lambda bundle 'no-such-function' is missing .* Fix: run 'npm run bundle' \(or 'npm run synth', which builds it\)/,
    ),
  ]);
});

test('without a fallback variant the function is told so: no fallback name or capacity, hasFallback false', () => {
  const stack = new Stack(new App(), 'Alone', { env: { account: '123456789012', region: 'us-east-1' } });
  new ResilientEndpoint(stack, 'E', { ...props, fallback: undefined, circuitBreaker: {} });
  const [fn] = Object.values(
    Template.fromStack(stack).findResources('AWS::Lambda::Function', { Properties: { Environment: { Variables: { ENDPOINT_NAME: 'reco' } } } }),
  );
  const vars = fn.Properties.Environment.Variables as Record<string, unknown>;
  expect(vars.FALLBACK_VARIANT).toBe('');
  expect(vars).not.toHaveProperty('FALLBACK_CAPACITY');
  const s = settingsFromEnv(Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, deployed(v)])));
  expect(s.fallbackVariant).toBeUndefined();
  expect(s.fallbackCapacity).toBeUndefined();
  expect(s.config.hasFallback).toBe(false);
  expect(s.primaryCapacity).toBeDefined();
});

test("the level parameter starts CLOSED at level 0: what the container reads before the breaker's first evaluation", () => {
  const stack = new Stack(new App(), 'Start', { env: { account: '123456789012', region: 'us-east-1' } });
  new ResilientEndpoint(stack, 'E', props);
  const levels = Template.fromStack(stack).findResources('AWS::SSM::Parameter', {
    Properties: { Description: Match.stringLikeRegexp('degrade level') },
  });
  expect(Object.values(levels).map(p => JSON.parse(p.Properties.Value))).toEqual([
    { level: 0, state: 'CLOSED', since: 0, share: 0, entryShare: 0, step: 0, reasons: ['initial'] },
  ]);
});
