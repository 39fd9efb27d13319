// End to end, through the synthesized templates: a fleet endpoint's breaker alarm → the parent's rule →
// the shared function → its settings (environment → settings parameter in the nested stack) → the exact
// level parameter it writes (IAM and behaviour) and the scalable targets it may change (tag and
// condition), for endpoint names that are prefixes of each other. Then the real handler, fed those
// settings, acts on exactly that endpoint's parameter.
import { App, NestedStack, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeEndpointCommand, SageMakerClient, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import { GetParametersCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import {
  ApplicationAutoScalingClient,
  DescribeScalableTargetsCommand,
  RegisterScalableTargetCommand,
} from '@aws-sdk/client-application-auto-scaling';
import { mockClient } from 'aws-sdk-client-mock';
import { evaluateFleet } from '../lambda/circuit-breaker/fleet';
import { Clients, createClients, fleetSettingsFromEnv } from '../lambda/circuit-breaker/settings';
import { ContainerImage, ResilientEndpoint, ResilientEndpointFleet, SageMakerInstanceType, SharedCircuitBreaker } from '../lib';
import { CloudWatchFake } from './cloudwatch-fake';
import { LocalDynamoDb } from './local-dynamodb';
import { deployedValue, synthError } from './util';

const env = { account: '123456789012', region: 'us-east-1' };
const image = ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3');
const NAMES = ['rank', 'rank-v2', 'rank-v2-b']; // each a prefix of the next

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new Stack(app, 'Wiring', { env });
const fleet = new ResilientEndpointFleet(stack, 'Models');
for (const name of NAMES) {
  fleet.addEndpoint(name.replace(/-/g, ''), {
    endpointName: name,
    model: { image },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    fallback: {},
    monitoring: { notify: { emails: ['oncall@example.com'] } },
  });
}
const parent = Template.fromStack(stack).toJSON();
const nestedOf = new Map(fleet.endpoints.map(e => [e.endpointName, e.node.scope as NestedStack]));
// Each nested stack's template synthesized once (the app does not change after this point; tests only read them).
const nestedTemplates = new Map<string, any>();
const nestedTemplate = (name: string) => {
  if (!nestedTemplates.has(name)) nestedTemplates.set(name, Template.fromStack(nestedOf.get(name)!).toJSON());
  return nestedTemplates.get(name);
};
const nestedLogicalId = (name: string) => stack.getLogicalId(nestedOf.get(name)!.nestedStackResource!);

/**
 * A parent-stack value as it deploys, with each nested-stack output followed to the resource it refers
 * to: `<nested:STACK/RESOURCE>`; the parent's own references as `<ref:X>`, pseudo parameters by value.
 */
function deployed(v: unknown): string {
  const pseudo: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::Region': env.region, 'AWS::AccountId': env.account };
  return deployedValue(v, {
    ref: id => pseudo[id] ?? `<ref:${id}>`,
    getAtt: (logicalId, attr) => {
      const name = NAMES.find(n => nestedLogicalId(n) === logicalId);
      if (name && String(attr).startsWith('Outputs.')) {
        const output = nestedTemplate(name).Outputs[String(attr).slice('Outputs.'.length)].Value;
        return `<nested:${name}/${output.Ref ?? JSON.stringify(output)}>`;
      }
      return `<att:${logicalId}.${attr}>`;
    },
  });
}
const resources = (t: any, type: string) => Object.entries(t.Resources as Record<string, any>).filter(([, r]) => r.Type === type);
const fn = resources(parent, 'AWS::Lambda::Function')[0];
const statements = resources(parent, 'AWS::IAM::Policy').flatMap(([, p]) => p.Properties.PolicyDocument.Statement) as any[];

describe.each(NAMES)("endpoint '%s' (its name a prefix of another, or another's prefix)", name => {
  const nested = nestedTemplate(name);
  const param = (description: RegExp) => resources(nested, 'AWS::SSM::Parameter').find(([, r]) => description.test(r.Properties.Description))!;
  const [levelId] = param(/degrade level/);
  const [settingsId, settings] = param(/settings/);

  test('its breaker alarm is in a rule of the parent that targets the shared function', () => {
    const alarm = resources(nested, 'AWS::CloudWatch::Alarm').find(([, a]) => a.Properties.AlarmName === `${name}-Primary-breaker-HostMemory`);
    expect(alarm).toBeDefined();
    const rules = resources(parent, 'AWS::Events::Rule').filter(([, r]) =>
      (r.Properties.EventPattern?.detail?.alarmName ?? []).includes(`${name}-Primary-breaker-HostMemory`),
    );
    expect(rules).toHaveLength(1);
    expect(rules[0][1].Properties.Targets[0].Arn).toEqual({ 'Fn::GetAtt': [fn[0], 'Arn'] });
    const endpointRules = resources(parent, 'AWS::Events::Rule').filter(([, r]) =>
      (r.Properties.EventPattern?.detail?.EndpointName ?? []).includes(name),
    );
    expect(endpointRules).toHaveLength(1);
    // The patterns match the events as the services send them (source and detail-type of CloudWatch's
    // alarm state changes and of SageMaker's endpoint events), and a failed delivery is retried, then kept.
    expect(rules[0][1].Properties.EventPattern).toEqual({
      source: ['aws.cloudwatch'],
      'detail-type': ['CloudWatch Alarm State Change'],
      detail: { alarmName: expect.arrayContaining([`${name}-Primary-breaker-HostMemory`]) },
    });
    expect(endpointRules[0][1].Properties.EventPattern).toEqual({
      source: ['aws.sagemaker'],
      'detail-type': ['SageMaker Endpoint State Change', 'SageMaker Endpoint Deployment State Change'],
      detail: { EndpointName: expect.arrayContaining([name]) },
    });
    for (const [, rule] of [rules[0], endpointRules[0]]) {
      expect(rule.Properties.Targets[0]).toMatchObject({ RetryPolicy: { MaximumRetryAttempts: 2 }, DeadLetterConfig: { Arn: expect.anything() } });
    }
  });

  test("the function's environment names its settings parameter, whose value names its own level parameter", () => {
    const names = deployed(fn[1].Properties.Environment.Variables.CONFIG_PARAMETERS).split(',');
    expect(names).toContain(`<nested:${name}/${settingsId}>`);
    const value = JSON.parse(deployed(settings.Properties.Value).replace(/<ref:([^>]+)>/g, '<level:$1>'));
    expect(value).toMatchObject({ endpointName: name, parameterName: `<level:${levelId}>` });
  });

  test('the function may write exactly its level parameter and act on exactly its endpoint', () => {
    const writes = statements.filter(s => [s.Action].flat().includes('ssm:PutParameter')).flatMap(s => [s.Resource].flat().map(deployed));
    expect(writes).toContain(`arn:aws:ssm:us-east-1:123456789012:parameter/<nested:${name}/${levelId}>`);
    expect(writes.every(w => !w.includes('*'))).toBe(true);
    const sm = statements.find(s => [s.Action].flat().includes('sagemaker:UpdateEndpointWeightsAndCapacities'));
    const [endpointId] = resources(nested, 'AWS::SageMaker::Endpoint')[0];
    expect([sm.Resource].flat().map(deployed)).toContain(`<nested:${name}/${endpointId}>`);
  });

  test('its scalable targets carry the tag the function may change targets by', () => {
    const register = statements.find(s => [s.Action].flat().includes('application-autoscaling:RegisterScalableTarget'));
    const [[key, value]] = Object.entries(register.Condition.StringEquals as Record<string, string>);
    const tagKey = key.replace('aws:ResourceTag/', '');
    const scaled = resources(nested, 'AWS::ApplicationAutoScaling::ScalableTarget');
    expect(scaled.map(([, t]) => deployed(t.Properties.ResourceId))).toEqual([
      `endpoint/${name}/variant/Primary`,
      `endpoint/${name}/variant/Fallback`,
    ]);
    for (const [, t] of scaled) expect(t.Properties.Tags).toEqual(expect.arrayContaining([{ Key: tagKey, Value: value }]));
  });
});

describe('the real handler, given the synthesized settings, acts on exactly the alarmed endpoint', () => {
  const sm = mockClient(SageMakerClient);
  const cw = mockClient(CloudWatchClient);
  const ssm = mockClient(SSMClient);
  const aas = mockClient(ApplicationAutoScalingClient);
  let db: LocalDynamoDb;
  let clients: Clients;
  beforeAll(async () => {
    db = await LocalDynamoDb.start('fleet-wiring');
    clients = { ...createClients(1), dynamodb: db.client };
  });
  afterAll(() => db.stop());

  test.each(NAMES)("an alarm of '%s' writes its level parameter only (not the endpoint whose name is its prefix)", async name => {
    sm.reset();
    cw.reset();
    ssm.reset();
    aas.reset();
    await db.clear();
    jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const NOW = Date.UTC(2026, 10, 29, 12, 0, 30);
    // What SSM holds at run time: the settings parameters, by their deployed (placeholder) names.
    const values = new Map<string, string>();
    for (const n of NAMES) {
      const nested = nestedTemplate(n);
      const [id, p] = resources(nested, 'AWS::SSM::Parameter').find(([, r]) => /settings/.test(r.Properties.Description))!;
      values.set(`<nested:${n}/${id}>`, deployed(p.Properties.Value).replace(/<ref:([^>]+)>/g, `<nested:${n}/$1>`));
    }
    ssm.on(GetParametersCommand).callsFake(input => ({
      Parameters: input.Names.filter((x: string) => values.has(x)).map((Name: string) => ({ Name, Value: values.get(Name) })),
    }));
    ssm.on(PutParameterCommand).resolves({});
    const fake = new CloudWatchFake();
    const last = Math.floor(NOW / 60_000) * 60_000 - 60_000;
    for (const n of NAMES) {
      // 10-s publishing: the hot one's memory at 90 %, the others cool.
      for (let k = 0; k < 12; k++)
        fake.put(
          '/aws/sagemaker/Endpoints',
          'MemoryUtilization',
          { EndpointName: n, VariantName: 'Primary' },
          last - k * 10_000,
          n === name ? 90 : 40,
        );
    }
    cw.on(GetMetricDataCommand).callsFake(input => fake.getMetricData(input, NOW));
    sm.on(DescribeEndpointCommand).resolves({
      EndpointStatus: 'InService',
      ProductionVariants: [
        { VariantName: 'Primary', DesiredWeight: 1, CurrentInstanceCount: 2 },
        { VariantName: 'Fallback', DesiredWeight: 0, CurrentInstanceCount: 1 },
      ],
    });
    sm.on(UpdateEndpointWeightsAndCapacitiesCommand).resolves({});
    aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [] });
    aas.on(RegisterScalableTargetCommand).resolves({});
    const f = fleetSettingsFromEnv({
      TABLE_NAME: db.tableName,
      CONFIG_PARAMETERS: deployed(fn[1].Properties.Environment.Variables.CONFIG_PARAMETERS),
    });
    const event = {
      source: 'aws.cloudwatch',
      'detail-type': 'CloudWatch Alarm State Change',
      detail: { alarmName: `${name}-Primary-breaker-HostMemory`, state: { value: 'ALARM' } },
    };
    const r = await evaluateFleet(event, f, clients, NOW);
    expect(Object.keys(r.endpoints)).toEqual([name]);
    expect(r.endpoints[name].state).toBe('DEGRADED');
    const [levelId] = resources(nestedTemplate(name), 'AWS::SSM::Parameter').find(([, p]) => /degrade level/.test(p.Properties.Description))!;
    expect(ssm.commandCalls(PutParameterCommand).map(c => c.args[0].input.Name)).toEqual([`<nested:${name}/${levelId}>`]);
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand).map(c => c.args[0].input.EndpointName)).toEqual([name]);
  });
});

describe('fleet.addEndpoint: which breaker each endpoint gets', () => {
  const cpu = { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE };
  const fleetIn = (id: string) => {
    const s = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), id, { env });
    return { s, f: new ResilientEndpointFleet(s, 'Models') };
  };
  const breakerFunctions = (t: Template) => Object.keys(t.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler' } }));

  test('the first endpoint with a breaker creates the shared breaker; the next ones join it', () => {
    const { s, f } = fleetIn('Join');
    expect(f.sharedBreaker).toBeUndefined();
    f.addEndpoint('a', cpu);
    const shared = f.sharedBreaker;
    expect(shared).toBeInstanceOf(SharedCircuitBreaker);
    f.addEndpoint('b', cpu);
    expect(f.sharedBreaker).toBe(shared);
    expect(breakerFunctions(Template.fromStack(s))).toHaveLength(1);
    expect(f.endpoints.map(e => e.circuitBreaker?.config.hasFallback)).toEqual([false, false]);
  });

  test('an endpoint with its breaker switched off gets none, and creates no shared breaker', () => {
    const { s, f } = fleetIn('Off');
    const e = f.addEndpoint('a', { ...cpu, circuitBreaker: { enabled: false } });
    expect(e.circuitBreaker).toBeUndefined();
    expect(f.sharedBreaker).toBeUndefined();
    expect(breakerFunctions(Template.fromStack(s))).toEqual([]);
    expect(breakerFunctions(Template.fromStack(e.node.scope as NestedStack))).toEqual([]);
  });

  test('circuitBreaker.shared names another shared breaker: the endpoint uses it, not the fleet’s', () => {
    const { s, f } = fleetIn('Other');
    const mine = new SharedCircuitBreaker(s, 'Mine');
    f.addEndpoint('a', { ...cpu, circuitBreaker: { shared: mine, degradeAtPercent: 77 } });
    expect(f.sharedBreaker).toBeUndefined();
    // The endpoint's settings parameter (its value a JSON string joined with the level parameter's name).
    const settings = Object.values(
      Template.fromStack(f.endpoints[0].node.scope as NestedStack).findResources('AWS::SSM::Parameter', {
        Properties: { Description: Match.stringLikeRegexp('read by the shared breaker function') },
      }),
    ).map(p => JSON.stringify(p.Properties.Value));
    expect(settings).toEqual([expect.stringMatching(/degradeAtPercent\\":77,/)]); // the endpoint's own options kept beside the shared breaker
    expect(breakerFunctions(Template.fromStack(s))).toHaveLength(1); // Mine's
  });

  test('each endpoint is a nested stack named for its id and its fleet', () => {
    const { f } = fleetIn('Named');
    const e = f.addEndpoint('ranker', cpu);
    expect(Template.fromStack(e.node.scope as NestedStack).toJSON().Description).toBe('SageMaker endpoint ranker of fleet Named/Models');
  });
});

describe('a SharedCircuitBreaker in one stack, its endpoint in another', () => {
  const cpu = { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE };
  /** The breaker in stack Breakers, endpoint 'rank' in stack Models, with each stack's own env. */
  const twoStacks = (breakerEnv: typeof env | undefined, endpointEnv: typeof env | undefined, crossRegionReferences = false) => {
    const a = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const breakers = new Stack(a, 'Breakers', { env: breakerEnv, crossRegionReferences });
    const models = new Stack(a, 'Models', { env: endpointEnv, crossRegionReferences });
    const shared = new SharedCircuitBreaker(breakers, 'Shared');
    new ResilientEndpoint(models, 'Rank', { ...cpu, endpointName: 'rank', fallback: {}, circuitBreaker: { shared } });
    return { a, breakers, models };
  };

  test('same account and Region: it synthesizes, the breaker stack deploys after the endpoint stack, and every value it needs crosses by an export', () => {
    const { a, breakers, models } = twoStacks(env, env);
    const assembly = a.synth();
    expect(assembly.getStackByName('Breakers').dependencies.map(d => d.id)).toContain('Models');
    expect(assembly.getStackByName('Models').dependencies.map(d => d.id)).not.toContain('Breakers'); // no cycle
    const b = Template.fromStack(breakers).toJSON();
    const m = Template.fromStack(models).toJSON();
    // An import as it deploys: the exporting stack's output, followed to the resource it refers to.
    const exports = new Map(Object.values(m.Outputs as Record<string, any>).map(o => [o.Export.Name, o.Value]));
    const follow = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(follow);
      if (v && typeof v === 'object') {
        const o = v as Record<string, unknown>;
        if (o['Fn::ImportValue'] !== undefined) {
          const value = exports.get(o['Fn::ImportValue'] as string) as { Ref?: string };
          return `<Models:${value.Ref ?? JSON.stringify(value)}>`;
        }
        return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, follow(x)]));
      }
      return v;
    };
    const pseudo: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::Region': env.region, 'AWS::AccountId': env.account };
    const deployedIn = (v: unknown) => deployedValue(follow(v), { ref: id => pseudo[id] ?? `<ref:${id}>`, getAtt: (id, at) => `<att:${id}.${at}>` });
    const [[fnId, fnRes]] = resources(b, 'AWS::Lambda::Function');
    const [[levelId]] = resources(m, 'AWS::SSM::Parameter').filter(([, p]) => /degrade level/.test(p.Properties.Description));
    const [[settingsId]] = resources(m, 'AWS::SSM::Parameter').filter(([, p]) => /settings/.test(p.Properties.Description));
    // The function reads the endpoint's settings parameter (in Models), and may write exactly its level parameter.
    expect(deployedIn(fnRes.Properties.Environment.Variables.CONFIG_PARAMETERS)).toBe(`<Models:${settingsId}>`);
    const stmts = resources(b, 'AWS::IAM::Policy').flatMap(([, p]) => p.Properties.PolicyDocument.Statement) as any[];
    const writes = stmts.filter(s => [s.Action].flat().includes('ssm:PutParameter')).flatMap(s => [s.Resource].flat().map(deployedIn));
    expect(writes).toEqual([`arn:aws:ssm:us-east-1:123456789012:parameter/<Models:${levelId}>`]);
    const sm = stmts.find(s => [s.Action].flat().includes('sagemaker:UpdateEndpointWeightsAndCapacities'));
    const [[endpointId]] = resources(m, 'AWS::SageMaker::Endpoint');
    expect([sm.Resource].flat().map(deployedIn)).toEqual([`<Models:${endpointId}>`]); // the endpoint's Ref is its ARN
    // Its rules watch the endpoint's breaker alarm (created in Models) and the endpoint's events, and target the function.
    const alarmNames = resources(m, 'AWS::CloudWatch::Alarm').map(([, x]) => x.Properties.AlarmName);
    expect(alarmNames).toContain('rank-Primary-breaker-HostMemory');
    const rules = resources(b, 'AWS::Events::Rule').filter(([, r]) => r.Properties.EventPattern);
    expect(rules.map(([, r]) => r.Properties.EventPattern.detail)).toEqual(
      expect.arrayContaining([{ alarmName: expect.arrayContaining(['rank-Primary-breaker-HostMemory']) }, { EndpointName: ['rank'] }]),
    );
    for (const [, r] of rules) expect(r.Properties.Targets[0].Arn).toEqual({ 'Fn::GetAtt': [fnId, 'Arn'] });
    // Its scaling grant is by the tag Models puts on the endpoint's scalable targets.
    const register = stmts.find(s => [s.Action].flat().includes('application-autoscaling:RegisterScalableTarget'));
    const [[key, value]] = Object.entries(register.Condition.StringEquals as Record<string, string>);
    const scaled = resources(m, 'AWS::ApplicationAutoScaling::ScalableTarget');
    expect(scaled).toHaveLength(2);
    for (const [, t] of scaled)
      expect(t.Properties.Tags).toEqual(expect.arrayContaining([{ Key: key.replace('aws:ResourceTag/', ''), Value: value }]));
  });

  test.each([
    ['another Region (even with crossRegionReferences)', env, { ...env, region: 'eu-west-1' }, true, 'account 123456789012, Region eu-west-1'],
    ['another account', env, { ...env, account: '210987654321' }, false, 'account 210987654321, Region us-east-1'],
    ['an environment-agnostic breaker stack', undefined, env, false, 'account 123456789012, Region us-east-1'],
  ])('%s: a synth error naming both stacks and the fix, not a resolution error or a breaker that cannot reach it', (_n, be, ee, xr, where) => {
    const { a } = twoStacks(be, ee, xr);
    const message = synthError(a);
    expect(message).toContain(`[Breakers/Shared] got the endpoint rank of stack Models (${where}) for this shared breaker of stack Breakers (`);
    expect(message).toContain(
      "allowed: endpoints of the breaker's own account and Region (its function calls SageMaker, CloudWatch and Parameter Store in its Region, and EventBridge rules see only that Region's events). Fix: give both stacks the same env, or use a shared breaker in the endpoint's stack (SharedCircuitBreaker.of(stack))",
    );
    expect(message).not.toMatch(/Resolution error|got no endpoints/);
  });
});
