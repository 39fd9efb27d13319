// Every resource type the library creates exists in the Region the stack deploys to, judged against AWS's own
// offline validator, run here live (the @aws/cloudformation-validate aws-cdk-lib carries), not against the
// library's copy of its data: a Region-bound stack where a type is missing fails synth naming the type, the
// Region and the fix, whatever the app's feature flags; an environment-agnostic stack's Rules refuse exactly
// the Regions where the validator finds a type missing. CPU: the every-feature stack is synthesized once per
// set of Regions the validator finds the same types missing in (5 sets over 47 Regions today), plus one
// agnostic synthesis; the validator's answers for the other Regions of a set come from that set's template.
import * as path from 'path';
import { App, Stack } from 'aws-cdk-lib';
import * as budgets from 'aws-cdk-lib/aws-budgets';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import {
  ContainerImage,
  DriftBaseline,
  DriftFeatures,
  EndpointMonitoring,
  ResilientEndpoint,
  ResilientEndpointFleet,
  ResilientEndpointProps,
  SageMakerInstanceType,
} from '../lib';
import { RESOURCE_TYPE_DATA } from '../lib/region-resource-types.data';
import { synthError, warnings } from './util';

// The validator aws-cdk-lib runs during synthesis, loaded from there.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const validator = require(require.resolve('@aws/cloudformation-validate', { paths: [path.dirname(require.resolve('aws-cdk-lib'))] }));
const schemas = new validator.SchemaValidator();
afterAll(() => schemas.free());

/**
 * The types the validator says do not exist in `region`, for a template. Its schema validator evaluates
 * conditions on `AWS::Region` itself; `AWS::Partition` is put in as CloudFormation resolves it there (the
 * Region's partition, from aws-cdk-lib), which the validator's own default (aws) would not.
 */
function missingIn(template: any, region: string): string[] {
  // Only what F3006 reads: each resource's type and condition, and the conditions (validating ~5× faster).
  const resources = Object.entries<any>(template.Resources).map(([id, r]) => [id, { Type: r.Type, Condition: r.Condition, Properties: {} }]);
  const partition = JSON.stringify(RegionInfo.get(region).partition ?? 'aws');
  const conditions = JSON.parse(JSON.stringify(template.Conditions ?? {}).replace(/\{"Ref":"AWS::Partition"\}/g, partition));
  const lean = { Conditions: conditions, Resources: Object.fromEntries(resources) };
  const out = new Set<string>();
  const diagnostics = schemas.validate(new validator.TemplateContent(JSON.stringify(lean)), region);
  for (const d of diagnostics) {
    const m = /^Resource type '(.+)' does not exist in '(.+)'$/.exec(d.message);
    if (m && m[2] === region) out.add(m[1]);
  }
  return [...out].sort();
}

const ACCOUNT = '123456789012';
const image = (region = 'us-east-1') => ContainerImage.fromImageUri(`${ACCOUNT}.dkr.ecr.${region}.amazonaws.com/model:1`);
const budget = { notify: { emails: ['oncall@example.com'] }, monthlyBudgetUsd: 2000 };
const modelMonitor = {
  imageUri: '156813124566.dkr.ecr.us-east-1.amazonaws.com/sagemaker-model-monitor-analyzer',
  baselineUri: 's3://training-data/model-monitor',
  alarmFeatures: ['x'],
};
const drift = (withModelMonitor: boolean): ResilientEndpointProps['drift'] => ({
  features: DriftFeatures.clusteringExample(),
  baseline: DriftBaseline.fromS3Uri('s3://training-data/drift-baseline.json'),
  ...(withModelMonitor ? { modelMonitor } : {}),
});

/** A stack in `region` (undefined: environment-agnostic) with one endpoint; `every`: every feature on. */
function endpointIn(region: string | undefined, props: Partial<ResilientEndpointProps> = {}, context: Record<string, unknown> = {}) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = new Stack(app, 'Types', region ? { env: { account: ACCOUNT, region } } : {});
  new ResilientEndpoint(stack, 'Endpoint', { model: { image: image(region) }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, ...props });
  return { app, stack };
}
/** Every feature: fallback, autoscaling, breaker, capture, monitoring with a budget, drift with Model Monitor, a VPC. */
function everything(region: string | undefined) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Everything', region ? { env: { account: ACCOUNT, region } } : {});
  const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', { vpcId: 'vpc-1', availabilityZones: ['a', 'b'], privateSubnetIds: ['subnet-1', 'subnet-2'] });
  new ResilientEndpoint(stack, 'Endpoint', {
    model: { image: image(region), vpc },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    instanceCount: 2,
    fallback: { model: { image: image(region) }, instanceType: SageMakerInstanceType.ML_M5_LARGE },
    monitoring: budget,
    drift: drift(true),
  });
  return { app, stack };
}

/** Every Region the library may be deployed to: the validator's, those aws-cdk-lib knows. */
const REGIONS = [
  ...new Set([...Object.keys(RESOURCE_TYPE_DATA.regions), ...Object.keys(RESOURCE_TYPE_DATA.unchecked), ...RegionInfo.regions.map(r => r.name)]),
].sort();

describe('a Region-bound stack', () => {
  test('eu-central-2 with a budget: a synth error naming the type, the Region and the fix (a budget from a Region that has them), without the feature flag', () => {
    const { app } = endpointIn('eu-central-2', { monitoring: budget }, { '@aws-cdk/core:validateAgainstDefaultRules': false });
    const lines = synthError(app)
      .split('\n')
      .filter(l => /does not have/.test(l));
    expect(lines).toEqual([
      expect.stringMatching(
        /^\s*\[Types\/Endpoint\] AWS::Budgets::Budget \(Types\/Endpoint\/Monitoring\/MonthlyBudget\) in stack Types: got Region eu-central-2, whose CloudFormation does not have AWS::Budgets::Budget \(AWS's CloudFormation validator @aws\/cloudformation-validate [0-9.]+, as of \d{4}-\d\d-\d\d\); allowed: a Region whose CloudFormation has it \(in the aws partition: [^)]*eu-central-1[^)]*\)\. Fix: remove monitoring\.monthlyBudgetUsd from this stack and create the budget from a stack in a Region that has AWS::Budgets::Budget \(e\.g\. us-east-1\): budgets belong to the account/,
      ),
    ]);
  });

  test('us-gov-west-1 with Model Monitor: a synth error per Model Monitor type, with the fix (Model Monitor off)', () => {
    const { app } = endpointIn('us-gov-west-1', { drift: drift(true) });
    const lines = synthError(app)
      .split('\n')
      .filter(l => /does not have/.test(l));
    expect(lines.map(l => /\] (AWS::\S+)/.exec(l)?.[1])).toEqual(['AWS::SageMaker::DataQualityJobDefinition', 'AWS::SageMaker::MonitoringSchedule']);
    for (const l of lines) {
      expect(l).toMatch(
        /got Region us-gov-west-1, whose CloudFormation does not have AWS::SageMaker::\w+ .*; allowed: a Region whose CloudFormation has it \(in the aws-us-gov partition: none\)/,
      );
      expect(l).toMatch(/Fix: turn Model Monitor off \(remove drift\.modelMonitor/);
    }
    // Without Model Monitor the same stack synthesizes (the library's own drift detection stays).
    expect(synthError(endpointIn('us-gov-west-1', { drift: drift(false) }).app)).toBe('');
  });

  test("only the library's own resources: a budget the app makes itself is the app's business", () => {
    const app = new App();
    const stack = new Stack(app, 'Own', { env: { account: ACCOUNT, region: 'eu-central-2' } });
    new EndpointMonitoring(stack, 'M', {
      endpointName: 'legacy',
      variants: [{ variantName: 'AllTraffic', instanceType: SageMakerInstanceType.ML_M5_XLARGE }],
      dashboard: false,
    });
    new budgets.CfnBudget(stack, 'Mine', { budget: { budgetType: 'COST', timeUnit: 'MONTHLY' } });
    expect(synthError(app)).toBe('');
  });

  test('a fleet: its nested stacks are judged in the Region of the stack that holds them', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const fleet = new ResilientEndpointFleet(new Stack(app, 'Fleet', { env: { account: ACCOUNT, region: 'me-central-1' } }), 'Models');
    fleet.addEndpoint('Model0', { model: { image: image('me-central-1') }, instanceType: SageMakerInstanceType.ML_M5_XLARGE });
    const lines = synthError(app)
      .split('\n')
      .filter(l => /does not have/.test(l));
    expect(lines.map(l => /\] (AWS::\S+) \(([^ ,)]+)/.exec(l)?.slice(1, 3).join(' '))).toEqual([
      'AWS::SageMaker::Model Fleet/Models/Model0/Endpoint/Model',
      'AWS::SageMaker::EndpointConfig Fleet/Models/Model0/Endpoint/EndpointConfig',
      'AWS::SageMaker::Endpoint Fleet/Models/Model0/Endpoint/Endpoint',
    ]);
    expect(lines[0]).toMatch(/^\s*\[Fleet\/Models\] .* got Region me-central-1, .*Fix: deploy the stack to a Region that has it/);
  });

  test('a Region the data does not cover (me-south-1): no error, a warning with the command that checks', () => {
    const { stack } = endpointIn('me-south-1');
    const w = warnings(stack).filter(x => /RE-RegionTypesUnchecked/.test(x));
    expect(w).toEqual([
      expect.stringMatching(
        /stack Types deploys to me-south-1, which the per-Region resource types of .* do not cover \(it judges that Region with no data of its own\): .*aws cloudformation describe-type --type RESOURCE --region me-south-1 --type-name <type> \(.*AWS::SageMaker::Endpoint, .*\)/,
      ),
    ]);
    expect(warnings(endpointIn('us-east-1').stack).filter(x => /RE-RegionTypesUnchecked/.test(x))).toEqual([]);
    // A Region aws-cdk-lib knows and the validator does not name at all.
    expect(warnings(endpointIn('me-west-1').stack).filter(x => /RE-RegionTypesUnchecked/.test(x))).toEqual([
      expect.stringMatching(/stack Types deploys to me-west-1, .* do not cover \(a Region it does not name\)/),
    ]);
  });
});

describe('every Region the library accepts, with every feature on (the validator, live)', () => {
  /** The every-feature template in us-east-1, and the set of types it creates. */
  let types: string[];
  beforeAll(() => {
    const { app } = everything('us-east-1');
    const t = app.synth().getStackByName('Everything').template;
    types = [...new Set(Object.values<any>(t.Resources).map(r => r.Type as string))].sort();
  });

  test('us-east-1 and eu-west-1 synthesize with every feature on; the data file lists every type the library creates', () => {
    expect(synthError(everything('eu-west-1').app)).toBe('');
    expect(types).toEqual(expect.arrayContaining(['AWS::Budgets::Budget', 'AWS::SageMaker::MonitoringSchedule', 'AWS::EC2::SecurityGroup']));
    const unlisted = [...types, 'AWS::CloudFormation::Stack'].filter(t => !(t in RESOURCE_TYPE_DATA.missing));
    // A type the library starts creating: node scripts/region-resource-types.mjs <type> adds it.
    expect(unlisted).toEqual([]);
  });

  test('per set of Regions missing the same types: accepted ⇔ the validator finds none missing in the synthesized template', () => {
    const probe = { Resources: Object.fromEntries(types.map((type, i) => [`R${i}`, { Type: type, Properties: {} }])) };
    const groups = new Map<string, string[]>();
    for (const r of REGIONS) {
      const key = missingIn(probe, r).join(' ');
      groups.set(key, [...(groups.get(key) ?? []), r]);
    }
    expect(groups.size).toBeGreaterThan(3); // Budgets, Model Monitor, SageMaker hosting: Regions differ
    const seen: string[] = [];
    for (const [key, regions] of groups) {
      const missing = key ? key.split(' ') : [];
      const { app } = everything(regions[0]);
      if (!missing.length) {
        const template = app.synth().getStackByName('Everything').template;
        for (const r of regions) expect([r, missingIn(template, r)]).toEqual([r, []]);
        seen.push(...regions);
        continue;
      }
      // Refused, with one error per type the validator finds missing, and none other.
      const named = synthError(app)
        .split('\n')
        .filter(l => /does not have/.test(l))
        .map(l => /\] (AWS::\S+) .* got Region (\S+),/.exec(l)!.slice(1, 3).join(' '));
      expect(named.sort()).toEqual(missing.map(t => `${t} ${regions[0]}`).sort());
    }
    // The Regions every feature deploys to: the validator's full Regions and those it has no data for.
    expect(seen).toEqual(expect.arrayContaining(['us-east-1', 'eu-west-1', 'me-south-1', 'us-iso-east-1']));
    expect(seen).not.toContain('eu-central-2');
  });
});

describe('an environment-agnostic stack', () => {
  /** A Rules assertion's value in `region` (the rule intrinsics the library writes, and Equals). */
  const holds = (e: any, region: string): boolean => {
    if (e['Fn::Not']) return !holds(e['Fn::Not'][0], region);
    if (e['Fn::And']) return e['Fn::And'].every((x: any) => holds(x, region));
    if (e['Fn::Or']) return e['Fn::Or'].some((x: any) => holds(x, region));
    const value = (x: any) => (x?.Ref === 'AWS::Region' ? region : x);
    if (e['Fn::Contains']) return e['Fn::Contains'][0].includes(value(e['Fn::Contains'][1]));
    if (e['Fn::Equals']) return value(e['Fn::Equals'][0]) === value(e['Fn::Equals'][1]);
    throw new Error(`no evaluator for ${JSON.stringify(e)}`);
  };
  let template: any;
  beforeAll(() => {
    template = everything(undefined).app.synth().getStackByName('Everything').template;
  });

  test('the Rules refuse exactly the Regions where the validator finds a type missing, each assertion naming the types it refuses for', () => {
    const rule = template.Rules.ResilientEndpointResourceTypes;
    expect(rule.Assertions.length).toBeGreaterThan(0);
    const admitted: string[] = [];
    for (const r of REGIONS) {
      const missing = missingIn(template, r); // the budget's condition on AWS::Region honoured
      const failing = rule.Assertions.filter((a: any) => !holds(a.Assert, r));
      if (!failing.length) admitted.push(r);
      expect([r, failing.length > 0]).toEqual([r, missing.length > 0]);
      const named = failing.flatMap((a: any) => /creates (.*?) \(/.exec(a.AssertDescription)![1].split(', '));
      expect([r, named.sort()]).toEqual([r, missing]);
    }
    expect(admitted).toEqual(expect.arrayContaining(['us-east-1', 'eu-west-1', 'eu-central-1', 'me-south-1']));
    expect(admitted).not.toContain('us-gov-west-1');
    // The budget refuses the Regions of its partitions without its type (eu-north-1 has Model Monitor);
    // in GovCloud its AWS::Partition condition leaves it out, and the validator agrees.
    expect(admitted).not.toContain('eu-north-1');
    const budget = rule.Assertions.find((a: any) => /creates AWS::Budgets::Budget /.test(a.AssertDescription));
    expect(budget.AssertDescription).toMatch(
      /Fix: remove monitoring\.monthlyBudgetUsd from this stack and create the budget from a stack in a Region that has AWS::Budgets::Budget/,
    );
    expect(JSON.stringify(budget.Assert)).not.toMatch(/us-gov/);
  });

  test('target partitions where no Region has Model Monitor (GovCloud alone): a synth error', () => {
    const { app } = endpointIn(undefined, { drift: drift(true) }, { '@aws-cdk/core:target-partitions': ['aws-us-gov'] });
    expect(synthError(app)).toMatch(
      /AWS::SageMaker::DataQualityJobDefinition \(Types\/Endpoint\/Drift\/ModelMonitor\/JobDefinition\) in the environment-agnostic stack Types: got the target partitions aws-us-gov \(@aws-cdk\/core:target-partitions\), where no Region's CloudFormation has AWS::SageMaker::DataQualityJobDefinition .* Fix: turn Model Monitor off/,
    );
  });

  test('a stack whose types exist in every Region has no such rule', () => {
    const app = new App();
    const stack = new Stack(app, 'Alarms');
    new EndpointMonitoring(stack, 'M', {
      endpointName: 'legacy',
      variants: [{ variantName: 'AllTraffic', instanceType: SageMakerInstanceType.ML_M5_XLARGE }],
      dashboard: false,
    });
    const t = app.synth().getStackByName('Alarms').template;
    expect(Object.keys(t.Rules ?? {})).toEqual(['CheckBootstrapVersion']);
    expect(Object.values<any>(t.Resources).some(r => r.Type === 'AWS::CloudWatch::Alarm')).toBe(true);
  });
});

describe("the data file is the validator's", () => {
  test('every Region and type it lists: missing exactly where the validator says; the unchecked Regions judged as us-east-1 or not at all', () => {
    const listed = Object.keys(RESOURCE_TYPE_DATA.missing);
    const probe = { Resources: Object.fromEntries(listed.map((type, i) => [`R${i}`, { Type: type, Properties: {} }])) };
    for (const r of Object.keys(RESOURCE_TYPE_DATA.regions)) {
      const data = listed.filter(t => RESOURCE_TYPE_DATA.missing[t].includes(r)).sort();
      expect([r, missingIn(probe, r)]).toEqual([r, data]);
    }
    const east = missingIn(probe, 'us-east-1').join();
    for (const r of Object.keys(RESOURCE_TYPE_DATA.unchecked)) expect([r, ['', east].includes(missingIn(probe, r).join())]).toEqual([r, true]);
    // What the issue's review found, in the data: Budgets not in eu-central-2, Model Monitor not in GovCloud.
    expect(RESOURCE_TYPE_DATA.missing['AWS::Budgets::Budget']).toContain('eu-central-2');
    expect(RESOURCE_TYPE_DATA.missing['AWS::SageMaker::MonitoringSchedule']).toEqual(expect.arrayContaining(['us-gov-west-1', 'us-gov-east-1']));
  });
});
