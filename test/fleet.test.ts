import { App, NestedStack, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as logs from 'aws-cdk-lib/aws-logs';
import {
  ContainerImage,
  ProductionReadinessChecks,
  ResilientEndpoint,
  ResilientEndpointFleet,
  SageMakerInstanceType,
  SharedCircuitBreaker,
} from '../lib';
import { iamStatements, synthError } from './util';

const image = ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3');
const props = { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE };
const newApp = () => new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const env = { account: '123456789012', region: 'us-east-1' };

test("12 endpoints in one stack: a clear synth error before CloudFormation's TooManyResourcesInStack", () => {
  const app = newApp();
  const stack = new Stack(app, 'Crowded', { env });
  for (let i = 0; i < 12; i++) new ResilientEndpoint(stack, `E${i}`, props);
  const msg = synthError(app);
  expect(msg).toMatch(/\[Crowded\] stack Crowded: got \d+ CloudFormation resources; allowed: at most 500 per stack/);
  expect(msg).toMatch(/Crowded\/E0: 4\d, /); // each endpoint's own count
  expect(msg).toMatch(/Fix: put the endpoints in a ResilientEndpointFleet .* or split them across stacks/);
  expect(msg.match(/allowed: at most 500 per stack/g)).toHaveLength(1); // once per stack, not per endpoint
});

/** More guarded ml.m5.xlarge endpoints than fit in one plain stack (11), as one fleet built and synthesized once. */
const N = 15;
const fleetOfN = (() => {
  const app = newApp();
  const stack = new Stack(app, 'Fleet', { env });
  const fleet = new ResilientEndpointFleet(stack, 'Models');
  // Every endpoint tells the on-call address, and half of them a team's too: three addresses in all.
  for (let i = 0; i < N; i++) {
    fleet.addEndpoint(`Model${i}`, {
      ...props,
      monitoring: { notify: { emails: ['oncall@example.com', i % 2 ? 'odd@example.com' : 'even@example.com'] } },
    });
  }
  return { fleet, t: Template.fromStack(stack) };
})();

describe(`${N} fully guarded ml.m5.xlarge endpoints in one stack, as a fleet`, () => {
  const { fleet } = fleetOfN;
  const parent = fleetOfN.t.toJSON();

  test('the parent stays far under the limit: one nested stack per endpoint', () => {
    const types = Object.values(parent.Resources).map((r: any) => r.Type);
    expect(types.filter(t => t === 'AWS::CloudFormation::Stack')).toHaveLength(N);
    expect(types.length).toBeLessThan(ResilientEndpointFleet.CFN_RESOURCE_LIMIT);
    expect(fleet.endpoints).toHaveLength(N);
  });

  test('each nested stack holds one complete guarded endpoint (its alarms, level and settings parameters), under the limit', () => {
    const nested = Template.fromStack(fleet.endpoints[7].node.scope as NestedStack);
    nested.resourceCountIs('AWS::SageMaker::Endpoint', 1);
    nested.resourceCountIs('AWS::Lambda::Function', 0); // the breaker runs in the fleet's shared function
    nested.resourceCountIs('AWS::SSM::Parameter', 2);
    expect(Object.values(nested.findResources('AWS::CloudWatch::Alarm')).length).toBeGreaterThan(10);
    expect(Object.keys(nested.toJSON().Resources).length).toBeLessThan(ResilientEndpointFleet.CFN_RESOURCE_LIMIT);
    expect(new Set(fleet.endpoints.map(e => e.endpointName)).size).toBe(N); // distinct generated names
  });
});

describe('one alarm topic per fleet: one confirmation e-mail per address, not one per endpoint', () => {
  const { fleet, t } = fleetOfN;

  test(`one encrypted topic in the parent with each of the 3 addresses subscribed once, for all ${N} endpoints`, () => {
    t.resourceCountIs('AWS::SNS::Topic', 1);
    t.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    const subs = Object.values(t.findResources('AWS::SNS::Subscription')) as any[];
    expect(subs.map(s => [s.Properties.Protocol, s.Properties.Endpoint]).sort()).toEqual([
      ['email', 'even@example.com'],
      ['email', 'odd@example.com'],
      ['email', 'oncall@example.com'],
    ]);
    expect(fleet.alarmTopic).toBeDefined();
  });

  test("each endpoint's nested stack has no topic of its own; its composite alarm notifies the fleet's (a parameter from the parent)", () => {
    for (const e of [fleet.endpoints[0], fleet.endpoints[N - 1]]) {
      const nested = Template.fromStack(e.node.scope as NestedStack);
      nested.resourceCountIs('AWS::SNS::Topic', 0);
      nested.resourceCountIs('AWS::SNS::Subscription', 0);
      const composite = Object.values(nested.findResources('AWS::CloudWatch::CompositeAlarm'))[0] as any;
      expect(composite.Properties.AlarmActions).toEqual([{ Ref: expect.stringMatching(/AlarmTopic/) }]);
    }
  });

  test("the topic policy lets each endpoint's alarms publish, every statement with its own id (SNS rejects repeated ids)", () => {
    const policy = Object.values(t.findResources('AWS::SNS::TopicPolicy'))[0] as any;
    const statements = policy.Properties.PolicyDocument.Statement as any[];
    const alarmStatements = statements.filter(s => s.Principal?.Service === 'cloudwatch.amazonaws.com');
    expect(alarmStatements).toHaveLength(N);
    const sids = statements.map(s => s.Sid);
    expect(new Set(sids).size).toBe(sids.length);
    const arns = alarmStatements.map(s => JSON.stringify(s.Condition.ArnLike['aws:SourceArn']));
    for (const e of fleet.endpoints) expect(arns.some(a => a.includes(`:alarm:${e.endpointName}-*`))).toBe(true);
  });

  test('sharedAlarmTopic: false gives each endpoint its own topic and subscriptions, as a plain endpoint has', () => {
    const stack = new Stack(newApp(), 'Own', { env });
    const own = new ResilientEndpointFleet(stack, 'F', { sharedAlarmTopic: false });
    for (const id of ['One', 'Two']) own.addEndpoint(id, { ...props, monitoring: { notify: { emails: ['oncall@example.com'] } } });
    Template.fromStack(stack).resourceCountIs('AWS::SNS::Topic', 0);
    expect(own.alarmTopic).toBeUndefined();
    for (const e of own.endpoints) {
      const nested = Template.fromStack(e.node.scope as NestedStack);
      nested.resourceCountIs('AWS::SNS::Topic', 1);
      nested.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
    }
  });

  test('an endpoint with its own alarmTopic keeps it; a subscription object given to several endpoints is subscribed once', () => {
    const stack = new Stack(newApp(), 'Mixed', { env });
    const mine = new sns.Topic(stack, 'Mine');
    const pager = new subscriptions.SqsSubscription(new sqs.Queue(stack, 'Pager', { enforceSSL: true }));
    const mixed = new ResilientEndpointFleet(stack, 'F');
    mixed.addEndpoint('Own', { ...props, monitoring: { alarmTopic: mine } });
    for (const id of ['A', 'B']) mixed.addEndpoint(id, { ...props, monitoring: { notify: { subscriptions: [pager] } } });
    const parent = Template.fromStack(stack);
    parent.resourceCountIs('AWS::SNS::Topic', 2); // 'Mine' and the fleet's
    parent.resourceCountIs('AWS::SNS::Subscription', 1);
    const ownAlarm = Object.values(
      Template.fromStack(mixed.endpoints[0].node.scope as NestedStack).findResources('AWS::CloudWatch::CompositeAlarm'),
    )[0] as any;
    expect(JSON.stringify(ownAlarm.Properties.AlarmActions)).toMatch(/Mine/);
  });
});

describe('fleets that deploy less than they seem: warnings at synth', () => {
  const warningsOf = (build: (fleet: ResilientEndpointFleet) => void) => {
    const stack = new Stack(newApp(), 'W', { env });
    build(new ResilientEndpointFleet(stack, 'F'));
    return Annotations.fromStack(stack)
      .findWarning('*', Match.anyValue())
      .map(w => String(w.entry.data));
  };

  test('an empty fleet: a warning that it deploys nothing (legal: a list of endpoints may be empty in some stage)', () => {
    expect(warningsOf(() => {})).toEqual([
      'the fleet W/F has no endpoints, so it deploys nothing. Fix: fleet.addEndpoint(id, props), or remove the fleet. [ack: Annotation::EmptyFleet]',
    ]);
    expect(warningsOf(f => f.addEndpoint('One', { ...props, monitoring: { notify: { emails: ['a@example.com'] } } }))).not.toContainEqual(
      expect.stringContaining('no endpoints'),
    );
  });

  test('a shared topic nobody subscribed to: one warning on the fleet (not one per endpoint)', () => {
    const w = warningsOf(f => {
      f.addEndpoint('One', props);
      f.addEndpoint('Two', props);
    });
    expect(w.filter(x => x.includes('reach no one'))).toEqual([
      "the fleet's shared alarm topic has no subscription, so the alarms of its 2 endpoints reach no one. Fix: monitoring: { notify: { emails: ['oncall@example.com'] } } on any of its endpoints (each address is subscribed once), or pass your own monitoring.alarmTopic. [ack: Annotation::RE-AlarmTopicUnsubscribed]",
    ]);
  });
});

describe('one shared breaker function per fleet', () => {
  const { t } = fleetOfN;

  test(`one function, queue, log group, table and schedule for all ${N} endpoints`, () => {
    t.resourceCountIs('AWS::Lambda::Function', 1);
    t.resourceCountIs('AWS::SQS::Queue', 1);
    t.resourceCountIs('AWS::Logs::LogGroup', 1);
    t.resourceCountIs('AWS::DynamoDB::Table', 1);
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 minute)' });
    // Exact alarm names, no wildcard rule (EventBridge allows 30 per bus, not adjustable).
    const alarmRules = (Object.values(t.findResources('AWS::Events::Rule')) as any[]).filter(
      r => r.Properties.EventPattern?.source?.[0] === 'aws.cloudwatch',
    );
    // HostMemory, the guard's GuardPressure and GuardMemoryRefusals, and ErrorRate per endpoint
    expect(alarmRules.flatMap(r => r.Properties.EventPattern.detail.alarmName)).toHaveLength(4 * N);
    expect(JSON.stringify(alarmRules)).not.toContain('wildcard');
  });

  test(`least privilege: the SageMaker actions name exactly the fleet's ${N} endpoints (no wildcard); its settings reach the function`, () => {
    const statements = iamStatements(t);
    const sm = statements.find(s => JSON.stringify(s.Action).includes('sagemaker:UpdateEndpointWeightsAndCapacities'));
    expect(sm.Resource).toHaveLength(N);
    expect(JSON.stringify(sm.Resource)).not.toContain('*');
    const fn = Object.values(t.findResources('AWS::Lambda::Function'))[0] as any;
    const parts = fn.Properties.Environment.Variables.CONFIG_PARAMETERS['Fn::Join'][1].filter((x: unknown) => typeof x !== 'string');
    expect(parts).toHaveLength(N);
  });

  test('endpoints in two different stacks do not share a breaker', () => {
    const app2 = newApp();
    const a = new Stack(app2, 'A', { env });
    const b = new Stack(app2, 'B', { env });
    const fa = new ResilientEndpointFleet(a, 'F');
    const fb = new ResilientEndpointFleet(b, 'F');
    fa.addEndpoint('One', props);
    fb.addEndpoint('Two', props);
    expect(fa.sharedBreaker).not.toBe(fb.sharedBreaker);
    for (const s of [a, b]) {
      const statements = (Object.values(Template.fromStack(s).findResources('AWS::IAM::Policy')) as any[]).flatMap(
        p => p.Properties.PolicyDocument.Statement,
      );
      const sm = statements.find(x => JSON.stringify(x.Action).includes('sagemaker:UpdateEndpointWeightsAndCapacities'));
      expect([sm.Resource].flat()).toHaveLength(1);
    }
  });
});

test('cdk-nag AwsSolutions finds nothing on a fleet (parent with the shared breaker, and each nested stack)', () => {
  const app = newApp();
  const stack = new Stack(app, 'Nag', { env });
  const fleet = new ResilientEndpointFleet(stack, 'F');
  for (let i = 0; i < 2; i++) fleet.addEndpoint(`E${i}`, props);
  expect(new AwsSolutionsChecks().validateScope(stack).violations).toEqual([]);
  for (const e of fleet.endpoints) expect(new AwsSolutionsChecks().validateScope(e.node.scope as NestedStack).violations).toEqual([]);
});

describe('the readiness checks see a shared breaker', () => {
  const ruleIds = (t: Template) => ProductionReadinessChecks.checkTemplate(t.toJSON()).map(f => f.ruleId);

  test('in a plain stack: the endpoints have a breaker, and its log retention is checked on the shared function', () => {
    const stack = new Stack(newApp(), 'Plain', { env });
    const shared = SharedCircuitBreaker.of(stack);
    for (let i = 0; i < 2; i++) new ResilientEndpoint(stack, `E${i}`, { ...props, circuitBreaker: { shared } });
    expect(ruleIds(Template.fromStack(stack))).not.toEqual(expect.arrayContaining(['RE-CircuitBreaker']));
    expect(ruleIds(Template.fromStack(stack))).not.toEqual(expect.arrayContaining(['RE-BreakerLogRetention']));
    const forever = new Stack(newApp(), 'Forever', { env });
    const keepsLogs = new SharedCircuitBreaker(forever, 'Shared', { logRetention: logs.RetentionDays.INFINITE });
    new ResilientEndpoint(forever, 'E', { ...props, circuitBreaker: { shared: keepsLogs } });
    expect(ruleIds(Template.fromStack(forever))).toEqual(expect.arrayContaining(['RE-BreakerLogRetention']));
  });

  test("in a fleet's nested stack, whose breaker function is in the parent", () => {
    const fleet = new ResilientEndpointFleet(new Stack(newApp(), 'Fleet', { env }), 'F');
    const endpoint = fleet.addEndpoint('One', props);
    const found = ruleIds(Template.fromStack(endpoint.node.scope as NestedStack));
    expect(found).not.toEqual(expect.arrayContaining(['RE-CircuitBreaker']));
    expect(found).not.toEqual(expect.arrayContaining(['RE-BreakerLogRetention']));
  });
});

describe('fleets that deploy at their stated size: every per-fleet limit checked at synth', () => {
  const fleetOf = (n: number, fleetProps?: (i: number) => Partial<typeof props>) => {
    const app = newApp();
    const stack = new Stack(app, 'Big', { env });
    const fleet = new ResilientEndpointFleet(stack, 'Models');
    for (let i = 0; i < n; i++) fleet.addEndpoint(`E${i}`, { ...props, ...fleetProps?.(i) });
    return { app, stack, fleet };
  };

  test('60 CPU endpoints synthesize with every limit met: rules split under 2,048 characters, 9 managed policies, environment under 4 KB', () => {
    const { app, stack } = fleetOf(60);
    expect(synthError(app)).toBe('');
    const t = app.synth().getStackByName(stack.stackName).template;
    const rules = Object.values(t.Resources as Record<string, any>).filter(r => r.Type === 'AWS::Events::Rule' && r.Properties.EventPattern);
    const alarmNames = rules.flatMap(r => r.Properties.EventPattern.detail?.alarmName ?? []);
    const endpointNames = rules.flatMap(r =>
      r.Properties.EventPattern['detail-type']?.includes('SageMaker Endpoint State Change') ? r.Properties.EventPattern.detail.EndpointName : [],
    );
    expect(alarmNames).toHaveLength(240); // 4 trigger alarms per endpoint (host memory, guard pressure, guard refusals, errors)
    expect(endpointNames).toHaveLength(60);
    // Each pattern, as deployed (endpoint names are literals here), within EventBridge's limit.
    for (const r of rules) expect(JSON.stringify(r.Properties.EventPattern).length).toBeLessThanOrEqual(2048);
    expect(rules.length).toBeGreaterThan(2);
    const managed = Object.values(t.Resources as Record<string, any>).filter(r => r.Type === 'AWS::IAM::ManagedPolicy');
    expect(managed.length).toBeLessThanOrEqual(10);
    expect(Object.keys(t.Resources).length).toBeLessThan(500);
  });

  test('80 CPU endpoints fail at synth, naming the limit that binds first (10 managed policies per role), the count and the fix', () => {
    const { app } = fleetOf(80);
    expect(synthError(app)).toMatch(
      /\[Big\/Models\/SharedBreaker\] the shared breaker function's role needs 1\d managed policies for the grants of 80 endpoints .*allowed: 10 per role \(IAM's default quota; the deploy would fail\)\. Fix: split the endpoints across fleets in separate stacks, or raise the IAM quota/,
    );
  });

  test("the environment limit: ~4 KB of settings-parameter names fails at synth (each at most 40 characters, CloudFormation's generated names)", () => {
    const { app, fleet } = fleetOf(1);
    const shared = fleet.sharedBreaker!;
    // 100 more names of 40 characters: 100 × 41 bytes is over 4,096 with the rest of the environment.
    for (let i = 0; i < 100; i++) (shared as any).settings.push('x'.repeat(40));
    expect(synthError(app)).toMatch(
      /the shared breaker function's environment would be ~\d{4} bytes for 1 endpoints .*allowed: 4096 bytes \(Lambda's 4 KB limit/,
    );
  });

  test('a duplicate fleet.addEndpoint id is a synth error like every other prop (no stack trace)', () => {
    const { app, fleet } = fleetOf(1);
    expect(() => fleet.addEndpoint('E0', props)).not.toThrow();
    expect(fleet.endpoints).toHaveLength(1);
    expect(synthError(app)).toMatch(
      /\[Big\/Models\] fleet\.addEndpoint: got id 'E0' a second time; allowed: one endpoint per id\. Fix: give each endpoint its own id/,
    );
  });

  test('more than 200 Metrics Insights alarms in one Region fail at synth (the per-GPU alarms of multi-GPU endpoints)', () => {
    const app = newApp();
    const stack = new Stack(app, 'Gpu', { env });
    // ml.g5.12xlarge (4 GPUs, enhanced metrics): a HottestGpuMemory alarm in monitoring and one in the breaker.
    new ResilientEndpoint(stack, 'G', {
      model: { image },
      instanceType: SageMakerInstanceType.ML_G5_12XLARGE,
      monitoring: { notify: { emails: ['a@example.com'] } },
    });
    // 199 more in the same Region (another stack of the app): 201.
    const other = new Stack(app, 'Other', { env });
    for (let i = 0; i < 199; i++) {
      new cloudwatch.CfnAlarm(other, `A${i}`, {
        comparisonOperator: 'GreaterThanThreshold',
        evaluationPeriods: 1,
        threshold: 1,
        metrics: [{ id: 'q', expression: 'SELECT MAX(GPUMemoryUtilization) FROM SCHEMA("/aws/sagemaker/Endpoints", AcceleratorId)', period: 60 }],
      });
    }
    expect(synthError(app)).toMatch(
      /got 201 Metrics Insights alarms in us-east-1 .*allowed: 200 per Region \(CloudWatch quota; the deploy would fail\)\. Fix: /,
    );
  });
});
