/**
 * The typings say what the code does: the JSDoc that users read in their editor, in API.md (which
 * scripts/check-jsii.mjs keeps generated from it) and on Construct Hub names only readiness rules and warnings that exist, and the defaults it states for the
 * breaker and the deployment guardrails are the ones the code applies.
 */
import * as fs from 'fs';
import * as path from 'path';
import { breakerConfig } from '../lib/breaker/circuit-breaker';
import { deploymentConfig } from '../lib/deployment';
import { ProductionReadinessChecks } from '../lib';
import { PropErrors } from '../lib/validation';
import { docComments, interfaceProps, libSources, propDoc } from './jsdoc';

/** Seconds of a `Duration.x(n)` default, or the number of a plain numeric default. */
function defaultValue(d: string | undefined): number | undefined {
  const dur = /^Duration\.(millis|seconds|minutes|hours)\((\d+(?:\.\d+)?)\)/.exec(d ?? '');
  if (dur) return Number(dur[2]) * { millis: 0.001, seconds: 1, minutes: 60, hours: 3600 }[dur[1] as 'seconds'];
  const n = /^(\d+(?:\.\d+)?)\b/.exec(d ?? '');
  return n ? Number(n[1]) : undefined;
}

const sources = libSources();
const warningIds = new Set(sources.flatMap(([, src]) => [...src.matchAll(/addWarning\(\s*'([\w:-]+)'/g)].map(m => m[1])));

test('every RE-… id the JSDoc and API.md name is a readiness rule or a warning the code raises', () => {
  const rules = new Set(ProductionReadinessChecks.RULES.map(r => r.id));
  const api = fs.readFileSync(path.join(__dirname, '..', 'API.md'), 'utf8');
  const named = [...sources.map(([file, src]) => [file, docComments(src).join('\n')]), ['API.md', api]].flatMap(([file, text]) =>
    [...text.matchAll(/\bRE-[A-Za-z]+\b/g)].map(m => `${file}: ${m[0]}`),
  );
  expect(named.length).toBeGreaterThanOrEqual(3);
  expect(named.filter(n => !rules.has(n.split(': ')[1]) && !warningIds.has(n.split(': ')[1]))).toEqual([]);
});

test('a JSDoc that promises a warning names one the code raises, and volumeKmsKey on local NVMe is that warning, not a rejection', () => {
  const promised = sources.flatMap(([, src]) => docComments(src).flatMap(c => [...c.matchAll(/warning \(`([\w:-]+)`\)/g)].map(m => m[1])));
  expect(promised).toContain('VolumeKmsKeyOnNvme');
  expect(promised.filter(id => !warningIds.has(id))).toEqual([]);
  const kms = propDoc('ResilientEndpointProps', 'volumeKmsKey')!.text;
  expect(kms).not.toMatch(/reject|not allowed/i);
  expect(propDoc('InstanceSpec', 'localNvmeGB')!.text).not.toMatch(/rejects[^,.]*KmsKeyId/);
});

test("the breaker's JSDoc defaults are the policy's defaults (every numeric or Duration default of CircuitBreakerOptions)", () => {
  const c = breakerConfig({}, true);
  const code: Record<string, number> = {
    degradeAtPercent: c.degradeAtPercent,
    criticalAtPercent: c.criticalAtPercent,
    recoverBelowPercent: c.recoverBelowPercent,
    errorRateThresholdPercent: c.errorRateOpen * 100,
    minInvocations: c.minInvocations,
    minDwell: c.minDwellSeconds,
    recoveryDwell: c.recoveryDwellSeconds,
    recoveryStepInterval: c.recoveryStepSeconds,
    recoverySteps: c.recoverySteps,
    maxFailedProbes: c.maxFailedProbes,
    maxProbeWait: c.maxProbeWaitSeconds,
    degradedFallbackSharePercent: c.degradedFallbackShare * 100,
  };
  const documented = interfaceProps('CircuitBreakerOptions')
    .map(([name, doc]) => [name, defaultValue(doc.default)] as const)
    .filter(([, v]) => v !== undefined);
  expect(documented.map(([name]) => name).sort()).toEqual(Object.keys(code).sort());
  expect(Object.fromEntries(documented)).toEqual(code);
});

test("the deployment guardrails' JSDoc defaults are what SageMaker gets: a canary of 1 instance, a 5-minute bake", () => {
  const errors = new PropErrors();
  const plan = deploymentConfig({}, { alarms: [], variantCount: 1, minVariantInstances: 2 }, errors);
  const routing = plan.config.blueGreenUpdatePolicy as any;
  const canary = routing.trafficRoutingConfiguration.canarySize;
  expect(canary.type).toBe('INSTANCE_COUNT');
  expect(defaultValue(propDoc('DeploymentOptions', 'canaryInstances')!.default)).toBe(canary.value);
  expect(defaultValue(propDoc('DeploymentOptions', 'waitInterval')!.default)).toBe(routing.trafficRoutingConfiguration.waitIntervalInSeconds);
  expect(defaultValue(propDoc('DeploymentOptions', 'terminationWait')!.default)).toBe(routing.terminationWaitInSeconds);
  expect(defaultValue(propDoc('DeploymentOptions', 'maximumExecutionTimeout')!.default)).toBe(routing.maximumExecutionTimeoutInSeconds);
  // The endpoint's summary of the same defaults: a canary of whole instances, never a percentage.
  const summary = propDoc('ResilientEndpointProps', 'deployment')!.default!;
  expect(summary).toContain(`canary of ${canary.value} instance`);
  expect(summary).toContain(`${routing.trafficRoutingConfiguration.waitIntervalInSeconds / 60}-minute bake`);
  expect(summary).not.toMatch(/\d+ % of capacity/);
  expect(errors.all).toEqual([]);
});
