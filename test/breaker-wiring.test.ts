// The arithmetic behind a fleet's deploy-time limits (real-account.md item 25), on its own and fast:
// how long a value will be once deployed, how the exact-list rules split under EventBridge's 2,048
// characters, and the shared function's environment against Lambda's 4 KB. test/fleet.test.ts checks
// the same limits on whole fleets of 60 and 80 endpoints; these pin each figure.
import { App, Aws, Fn, Lazy, NestedStack, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import fc from 'fast-check';
import { ContainerImage, ResilientEndpoint, SageMakerInstanceType, SharedCircuitBreaker } from '../lib';
import { deployedLength, EVENT_PATTERN_LIMIT, ListRules, sharedEnvironmentBytes } from '../lib/breaker/wiring';
import { iamStatements, synthError } from './util';

const env = { account: '123456789012', region: 'us-east-1' };
const newApp = () => new App({ context: { 'aws:cdk:bundling-stacks': [] } });

describe('deployedLength: a value as long as it will be once deployed', () => {
  const stack = new Stack(newApp(), 'Lengths', { env });
  test('a literal is its own length', () => {
    expect(deployedLength('rank-v2', 63)).toBe(7);
    expect(deployedLength('', 63)).toBe(0);
  });
  test('each token counts as the given length, the literal text around it as itself', () => {
    expect(deployedLength(`${Aws.STACK_NAME}-x`, 128)).toBe(130);
    expect(deployedLength(Fn.join('/', [Aws.STACK_NAME, Aws.REGION]), 10)).toBe(10); // one token: the join is unresolved as a whole
    expect(deployedLength(`a${Aws.STACK_NAME}b${Aws.ACCOUNT_ID}c`, 40)).toBe(83);
    expect(deployedLength(Lazy.string({ produce: () => 'never read' }), 63)).toBe(63);
    expect(stack.resolve(`${Aws.STACK_NAME}-x`)).toEqual({ 'Fn::Join': ['', [{ Ref: 'AWS::StackName' }, '-x']] }); // a token indeed
  });
});

describe('ListRules: exact-list rules split under 2,048 characters, only where needed', () => {
  // A target that needs nothing else in the stack.
  const target = (): events.IRuleTarget => ({ bind: () => ({ arn: 'arn:aws:sqs:us-east-1:123456789012:q', id: '' }) });
  const pattern = (values: string[]): events.EventPattern => ({ source: ['aws.cloudwatch'], detail: { alarmName: values } });
  const build = (lengths: number[], patternOf = pattern) => {
    const stack = new Stack(newApp(), 'Rules', { env });
    const rules = new ListRules(stack, 'AlarmRule', 'Evaluate on alarms', patternOf, target);
    const values = lengths.map((n, i) => `${i}-`.padEnd(n, 'x').slice(0, Math.max(n, `${i}-`.length)));
    for (const v of values) rules.add(v, v.length);
    const found = Object.values(Template.fromStack(stack).findResources('AWS::Events::Rule')).map(r => r.Properties);
    // In the order the rules were made: "…", "… (part 2)", "… (part 3)", …
    const part = (d: string) => Number(/\(part (\d+)\)$/.exec(d)?.[1] ?? 1);
    found.sort((a, b) => part(a.Description) - part(b.Description));
    return { rules, values, found, rendered: found.map(p => JSON.stringify(p.EventPattern).length) };
  };

  test('no value, no rule; one value, one rule with the description as given', () => {
    expect(build([]).found).toEqual([]);
    expect(build([]).rules.largestPattern).toBe(0);
    const one = build([20]);
    expect(one.found).toEqual([expect.objectContaining({ Description: 'Evaluate on alarms', EventPattern: pattern([one.values[0]]) })]);
    expect(one.found[0].Targets).toEqual([expect.objectContaining({ Arn: 'arn:aws:sqs:us-east-1:123456789012:q' })]);
  });

  test('values that fill exactly 2,048 characters stay in one rule; one character more starts a second', () => {
    const empty = JSON.stringify(pattern([])).length; // {"source":["aws.cloudwatch"],"detail":{"alarmName":[]}}
    expect(empty).toBe(55);
    // One value of n characters adds n + 2 ("…"), each further value n + 3 (,"…").
    const fill = EVENT_PATTERN_LIMIT - empty - 2 - 9 * 203; // nine of 200 characters after the first
    const exact = build([fill, ...Array(9).fill(200)]);
    expect(exact.rendered).toEqual([2048]);
    expect(exact.rules.largestPattern).toBe(2048);
    const over = build([fill + 1, ...Array(9).fill(200)]);
    expect(over.rendered).toHaveLength(2);
    expect(over.found[1].Description).toBe('Evaluate on alarms (part 2)');
    expect(over.found[1].EventPattern.detail.alarmName).toEqual([over.values[9]]);
  });

  test('measured as deployed: detailType renders as detail-type (real-account.md item 43); exactly 2,048 rendered stays in one rule, 2,049 splits', () => {
    // The breaker's alarm rule: the CDK object says detailType, the template (and EventBridge) detail-type.
    const alarms = (values: string[]): events.EventPattern => ({
      source: ['aws.cloudwatch'],
      detailType: ['CloudWatch Alarm State Change'],
      detail: { alarmName: values },
    });
    // {"source":["aws.cloudwatch"],"detail-type":["CloudWatch Alarm State Change"],"detail":{"alarmName":[]}}
    const empty = 103;
    const fill = EVENT_PATTERN_LIMIT - empty - 2 - 9 * 203;
    const exact = build([fill, ...Array(9).fill(200)], alarms);
    expect(exact.found[0].EventPattern['detail-type']).toEqual(['CloudWatch Alarm State Change']);
    expect(exact.rendered).toEqual([2048]);
    expect(exact.rules.largestPattern).toBe(2048);
    // One character more renders 2,049: the last value starts a second rule (measuring the CDK object, which
    // is one character shorter, kept it in the first).
    const over = build([fill + 1, ...Array(9).fill(200)], alarms);
    expect(over.rendered).toEqual([2048 - 203 + 1, 200 + 2 + empty]);
    expect(over.found[1].EventPattern.detail.alarmName).toEqual([over.values[9]]);
  });

  test('a value longer than the limit gets a rule of its own, and the estimate says it is too long', () => {
    const { rendered, found, rules } = build([3000, 3000, 10]);
    expect(found.map(f => f.EventPattern.detail.alarmName.length)).toEqual([1, 1, 1]); // nothing fits beside one
    expect(rendered).toEqual([3057, 3057, 67]);
    expect(rules.largestPattern).toBeGreaterThan(EVENT_PATTERN_LIMIT);
  });

  test('over any list of names: every pattern fits, every value is in exactly one rule in order, a new rule only when the next value would not fit', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 3, max: 700 }), { maxLength: 40 }), lengths => {
        const { values, found, rendered, rules } = build(lengths);
        expect(found.flatMap(f => f.EventPattern.detail.alarmName)).toEqual(values);
        for (const r of rendered) expect(r).toBeLessThanOrEqual(EVENT_PATTERN_LIMIT);
        found.forEach((f, i) => {
          expect(f.Description).toBe(i === 0 ? 'Evaluate on alarms' : `Evaluate on alarms (part ${i + 1})`);
          expect(f.EventPattern.source).toEqual(['aws.cloudwatch']);
          // The next rule's first value would not have fitted here.
          if (i > 0) expect(rendered[i - 1] + f.EventPattern.detail.alarmName[0].length + 3).toBeGreaterThan(EVENT_PATTERN_LIMIT);
        });
        // The figure the validation uses is the largest pattern as deployed (literal names: exact).
        expect(rules.largestPattern).toBe(Math.max(0, ...rendered));
        expect(rules.rules.map(r => r.node.id)).toEqual(found.map((_, i) => (i === 0 ? 'AlarmRule' : `AlarmRule${i + 1}`)));
      }),
      { numRuns: 40, seed: 19 },
    );
  });
});

describe("sharedEnvironmentBytes: the shared function's environment once deployed", () => {
  const fixed = 'CONFIG_PARAMETERS'.length + 'METRIC_NAMESPACE'.length + 'TABLE_NAME'.length + 'ResilientEndpoint/CircuitBreaker'.length;
  const tableIn = (scope: Stack) => {
    const table = new dynamodb.Table(scope, 'T', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
    return { table, logicalId: Object.keys(Template.fromStack(scope).findResources('AWS::DynamoDB::Table'))[0] };
  };

  test('names as given or at most 40 characters (a generated parameter name), commas, the table name, the fixed variables', () => {
    const stack = new Stack(newApp(), 'Env', { env });
    const { table, logicalId } = tableIn(stack);
    const generated = new ssm.StringParameter(stack, 'P', { stringValue: 'x' }).parameterName;
    expect(fixed).toBe(75);
    // "/literal/name" (13) + a generated name (40) + one comma; <stack>-<logical id>-<12 random>.
    expect(sharedEnvironmentBytes(['/literal/name', generated], table)).toBe(13 + 40 + 1 + (3 + logicalId.length + 14) + fixed);
    expect(sharedEnvironmentBytes([], table)).toBe(3 + logicalId.length + 14 + fixed);
  });

  test("in a nested stack the stack name is a token: counted at CloudFormation's 128, the table name at most 255", () => {
    const parent = new Stack(newApp(), 'Parent', { env });
    const nested = new NestedStack(parent, 'Inner');
    const { table, logicalId } = tableIn(nested);
    expect(sharedEnvironmentBytes(['/a'], table)).toBe(2 + (128 + logicalId.length + 14) + fixed);
  });

  test('what it counts is all there is: the function has exactly those three variables', () => {
    const stack = new Stack(newApp(), 'Shared', { env });
    const shared = new SharedCircuitBreaker(stack, 'Breaker');
    new ResilientEndpoint(stack, 'E', {
      model: { image: ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3') },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      circuitBreaker: { shared },
    });
    const [fn] = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler' } }));
    expect(Object.keys(fn.Properties.Environment.Variables).sort()).toEqual(['CONFIG_PARAMETERS', 'METRIC_NAMESPACE', 'TABLE_NAME']);
    expect(fn.Properties.Environment.Variables.METRIC_NAMESPACE).toBe('ResilientEndpoint/CircuitBreaker');
  });
});

describe("a shared breaker's grant on scalable targets, tagged or by condition keys", () => {
  const image = ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3');
  const build = (tagging: boolean[]) => {
    const stack = new Stack(newApp(), 'Scaled', { env });
    const shared = new SharedCircuitBreaker(stack, 'Breaker');
    tagging.forEach(
      (tagScalableTargets, i) =>
        new ResilientEndpoint(stack, `E${i}`, {
          model: { image },
          instanceType: SageMakerInstanceType.ML_M5_XLARGE,
          fallback: {},
          circuitBreaker: { shared, tagScalableTargets },
        }),
    );
    const t = Template.fromStack(stack);
    const register = iamStatements(t).filter((s: any) => [s.Action].flat().includes('application-autoscaling:RegisterScalableTarget'));
    return { t, register };
  };
  const anyTarget = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':application-autoscaling:us-east-1:123456789012:scalable-target/*']] };
  const byKeys = {
    StringEquals: {
      'application-autoscaling:service-namespace': 'sagemaker',
      'application-autoscaling:scalable-dimension': 'sagemaker:variant:DesiredInstanceCount',
    },
  };

  test('an endpoint that does not autoscale: no scaling grant at all, own breaker or shared', () => {
    const stack = new Stack(newApp(), 'Fixed', { env });
    const shared = new SharedCircuitBreaker(stack, 'Breaker');
    const fixed = { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, instanceCount: 2, autoScaling: { enabled: false } };
    new ResilientEndpoint(stack, 'Own', { ...fixed, endpointName: 'own' });
    new ResilientEndpoint(stack, 'Joined', { ...fixed, endpointName: 'joined', circuitBreaker: { shared } });
    const t = Template.fromStack(stack);
    t.resourceCountIs('AWS::ApplicationAutoScaling::ScalableTarget', 0);
    expect(iamStatements(t).filter((s: any) => [s.Action].flat().includes('application-autoscaling:RegisterScalableTarget'))).toEqual([]);
  });

  test('untagged (tagScalableTargets: false): one statement limited by the action’s condition keys, and no breaker tag on any target', () => {
    const { t, register } = build([false, false]);
    expect(register).toEqual([{ Effect: 'Allow', Action: 'application-autoscaling:RegisterScalableTarget', Resource: anyTarget, Condition: byKeys }]);
    const targets = Object.values(t.findResources('AWS::ApplicationAutoScaling::ScalableTarget'));
    expect(targets.length).toBeGreaterThanOrEqual(4); // primary and fallback of each endpoint
    for (const target of targets) expect(JSON.stringify(target.Properties.Tags ?? [])).not.toContain('resilient-endpoint');
  });

  test('tagged and untagged endpoints in one fleet: each way of scoping granted once, the tag only on the tagged endpoint’s targets', () => {
    const { t, register } = build([true, false, true]);
    expect(register).toHaveLength(2);
    expect(register).toContainEqual(expect.objectContaining({ Resource: anyTarget, Condition: byKeys }));
    const tagged = register.find((s: any) => !s.Condition.StringEquals['application-autoscaling:service-namespace']);
    const [[key, value]] = Object.entries(tagged.Condition.StringEquals) as [string, string][];
    expect(key).toMatch(/^aws:ResourceTag\//);
    const tag = key.slice('aws:ResourceTag/'.length);
    const targets = t.findResources('AWS::ApplicationAutoScaling::ScalableTarget', {
      Properties: { Tags: Match.arrayWith([{ Key: tag, Value: value }]) },
    });
    expect(Object.keys(targets)).toHaveLength(4); // E0 and E2, primary and fallback
    expect(Object.keys(t.findResources('AWS::ApplicationAutoScaling::ScalableTarget'))).toHaveLength(6);
  });
});

describe("a shared breaker's role against IAM's quota of managed policies per role", () => {
  const image = ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3');
  // aws-cdk-lib moves a role's policy over 10 KB into managed policies under the role (a fleet of ~70
  // endpoints needs 10); here they are added directly, as many as each case needs.
  const withManaged = (count: number, managedPolicyQuota?: number) => {
    const app = newApp();
    const stack = new Stack(app, 'Quota', { env });
    const shared = new SharedCircuitBreaker(stack, 'Breaker', { managedPolicyQuota });
    new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, circuitBreaker: { shared } });
    const role = shared.function.role as iam.Role;
    for (let i = 0; i < count; i++) {
      new iam.ManagedPolicy(role, `Overflow${i}`, {
        roles: [role],
        statements: [new iam.PolicyStatement({ actions: ['ssm:GetParameter'], resources: [`arn:aws:ssm:us-east-1:123456789012:parameter/p${i}`] })],
      });
    }
    return synthError(app);
  };

  test("more than IAM's default 10 fails at synth, naming the count, the quota and both fixes", () => {
    expect(withManaged(10)).toBe('');
    expect(withManaged(11)).toMatch(
      /\[Quota\/Breaker\] the shared breaker function's role needs 11 managed policies for the grants of 1 endpoints .*allowed: 10 per role \(IAM's default quota; the deploy would fail\)\. Fix: split the endpoints across fleets in separate stacks, or raise the IAM quota \(up to 20\) and pass it as managedPolicyQuota/,
    );
  });

  test('a raised quota (managedPolicyQuota) is the limit instead, and the message names it', () => {
    expect(withManaged(12, 12)).toBe('');
    expect(withManaged(13, 12)).toMatch(/needs 13 managed policies .*allowed: 12 per role \(managedPolicyQuota; the deploy would fail\)/);
  });

  test('managedPolicyQuota outside what IAM allows (10 to 20, whole) is a clear synth error, each value named', () => {
    for (const q of [10, 20]) expect(withManaged(0, q)).toBe('');
    for (const q of [9, 21, 12.5, 0]) {
      expect(withManaged(0, q)).toMatch(
        new RegExp(
          `\\[Quota/Breaker\\] managedPolicyQuota: got ${q}; allowed: an integer from 10 to 20\\. Fix: give the account's quota of managed policies per role`,
        ),
      );
    }
  });
});

describe('SharedCircuitBreaker.of: one per stack', () => {
  const props = {
    model: { image: ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3') },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
  };

  test('endpoints of a plain stack share one function and one table', () => {
    const stack = new Stack(newApp(), 'Plain', { env });
    for (let i = 0; i < 3; i++) new ResilientEndpoint(stack, `E${i}`, { ...props, circuitBreaker: { shared: SharedCircuitBreaker.of(stack) } });
    expect(SharedCircuitBreaker.of(stack)).toBe(stack.node.findChild('ResilientEndpointSharedBreaker'));
    const t = Template.fromStack(stack);
    t.resourceCountIs('AWS::Lambda::Function', 1);
    t.resourceCountIs('AWS::DynamoDB::Table', 1);
  });

  test('a shared breaker nobody uses is a clear synth error', () => {
    const app = newApp();
    SharedCircuitBreaker.of(new Stack(app, 'Empty', { env }));
    expect(synthError(app)).toMatch(
      /\[Empty\/ResilientEndpointSharedBreaker\] got no endpoints; allowed: at least one\. Fix: pass it as circuitBreaker\.shared of a ResilientEndpoint, or remove it/,
    );
  });
});

describe("the shared breaker's own limits, at their bounds", () => {
  const image = ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3');
  const withOne = () => {
    const app = newApp();
    const stack = new Stack(app, 'Limits', { env });
    const shared = new SharedCircuitBreaker(stack, 'Breaker');
    new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, circuitBreaker: { shared } });
    // What 4 KB of names would take: the settings-parameter names the function's environment lists.
    return { app, shared: shared as unknown as { settings: string[]; stateTable: dynamodb.Table; alarmRules: ListRules } };
  };

  test("Lambda's 4,096 bytes of environment: exactly 4,096 deploys, one byte more is a synth error naming the size and the fix", () => {
    const at = withOne();
    const room = 4096 - sharedEnvironmentBytes(at.shared.settings, at.shared.stateTable);
    at.shared.settings.push('x'.repeat(room - 1)); // plus its comma
    expect(sharedEnvironmentBytes(at.shared.settings, at.shared.stateTable)).toBe(4096);
    expect(synthError(at.app)).toBe('');
    const over = withOne();
    over.shared.settings.push('x'.repeat(room));
    expect(synthError(over.app)).toMatch(
      /\[Limits\/Breaker\] the shared breaker function's environment would be ~4097 bytes for 1 endpoints \(one settings-parameter name each, up to 40 characters\); allowed: 4096 bytes \(Lambda's 4 KB limit on environment variables; the deploy would fail\)\. Fix: split the endpoints across fleets in separate stacks/,
    );
  });

  test("a name longer than EventBridge's 2,048-character pattern is a synth error (no valid endpoint or alarm name is)", () => {
    const { app, shared } = withOne();
    shared.alarmRules.add('x'.repeat(2100), 2100);
    expect(synthError(app)).toMatch(
      /\[Limits\/Breaker\] an alarm rule's event pattern would be ~2\d{3} characters; allowed: 2048 \(EventBridge's pattern limit\)\. Fix: shorten the endpoint names/,
    );
  });
});

test("the breaker function's role trusts Lambda alone; its schedule evaluates every minute", () => {
  const stack = new Stack(newApp(), 'Trust', { env });
  new ResilientEndpoint(stack, 'E', {
    model: { image: ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3') },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
  });
  const t = Template.fromStack(stack);
  const [fn] = Object.values(t.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler' } }));
  const role = t.toJSON().Resources[fn.Properties.Role['Fn::GetAtt'][0]];
  expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
    { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
  ]);
  expect(
    Object.values(t.findResources('AWS::Events::Rule', { Properties: { ScheduleExpression: Match.anyValue() } })).map(r => r.Properties),
  ).toEqual([
    expect.objectContaining({
      ScheduleExpression: 'rate(1 minute)',
      Description: 'Evaluate the circuit breaker every minute (recovery steps)',
      State: 'ENABLED',
    }),
  ]);
});

test("a shared breaker's function, rules and settings list: exactly its endpoints, described", () => {
  const stack = new Stack(newApp(), 'Described', { env });
  const shared = new SharedCircuitBreaker(stack, 'Breaker');
  const props = {
    model: { image: ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3') },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
  };
  new ResilientEndpoint(stack, 'A', { ...props, endpointName: 'a', circuitBreaker: { shared } });
  new ResilientEndpoint(stack, 'B', { ...props, endpointName: 'b', circuitBreaker: { shared } });
  const t = Template.fromStack(stack);
  const settings = Object.keys(
    t.findResources('AWS::SSM::Parameter', { Properties: { Description: Match.stringLikeRegexp('read by the shared breaker') } }),
  );
  expect(settings).toHaveLength(2);
  const [fn] = Object.values(t.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler' } }));
  expect(fn.Properties.Description).toBe('Memory circuit breaker of the SageMaker endpoints of this stack');
  expect(fn.Properties.Environment.Variables.CONFIG_PARAMETERS).toEqual({ 'Fn::Join': ['', [{ Ref: settings[0] }, ',', { Ref: settings[1] }]] });
  const rules = Object.values(t.findResources('AWS::Events::Rule', { Properties: { EventPattern: Match.anyValue() } })).map(r => r.Properties);
  expect(rules.map(r => [r.Description, r.EventPattern.detail])).toEqual(
    expect.arrayContaining([
      [
        'Evaluate the circuit breakers when one of their alarms (<endpoint>-<variant>-breaker-<metric>) changes state',
        {
          alarmName: [
            'a-Primary-breaker-HostMemory',
            'a-Primary-breaker-GuardPressure',
            'a-Primary-breaker-GuardMemoryRefusals',
            'a-Primary-breaker-ErrorRate',
            'b-Primary-breaker-HostMemory',
            'b-Primary-breaker-GuardPressure',
            'b-Primary-breaker-GuardMemoryRefusals',
            'b-Primary-breaker-ErrorRate',
          ],
        },
      ],
      ['Re-evaluate a circuit breaker when its endpoint changes state or capacity (e.g. back to InService)', { EndpointName: ['a', 'b'] }],
    ]),
  );
  expect(rules).toHaveLength(2);
});
