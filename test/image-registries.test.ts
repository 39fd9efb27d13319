/**
 * ContainerImage.fromDlc's image table (lib/image-registries.ts) and its mapping onto templates
 * (lib/model-artifacts.ts imageAccount, DlcImage), against facts taken from AWS's own source, not from
 * the module: the SageMaker Python SDK's image catalog (aws/sagemaker-python-sdk a24812666d25,
 * sagemaker-core/src/sagemaker/core/image_uri_config/*.json, "registries").
 * - test/fixtures/sdk-image-registries.json: every Region → account of every inference repository in
 *   that catalog, written by scripts/sdk-image-registries.py from the SDK's files (re-run it on a newer
 *   SDK to refresh the table).
 * - The table below: a sample typed by hand from pytorch.json ("inference" 2.3.0) and sklearn.json
 *   ("inference" 1.2-1), incl. opt-in Regions, China and GovCloud, checked on synthesized templates.
 * Fast: no ResilientEndpoint, only a role and the image per stack.
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, CfnOutput, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import { Construct } from 'constructs';
import { ContainerImage, ModelServer } from '../lib';
import { imageAccount } from '../lib/model-artifacts';
import { iamStatements } from './util';

const SDK: Record<string, Record<string, string>> = JSON.parse(
  fs.readFileSync(path.join(__dirname, 'fixtures', 'sdk-image-registries.json'), 'utf8'),
).repositories;

/** The repositories fromDlc knows, the serving stack each runs, and whether AWS publishes it in ap-east-2 and mx-central-1 (the SDK's newest Regions). */
const REPOSITORIES: [repository: string, registry: 'DLC' | 'SageMaker', inNewestRegions: boolean, server: ModelServer][] = [
  ['djl-inference', 'DLC', true, ModelServer.NONE],
  ['huggingface-pytorch-inference', 'DLC', false, ModelServer.SAGEMAKER_INFERENCE_TOOLKIT],
  ['huggingface-pytorch-tgi-inference', 'DLC', true, ModelServer.NONE],
  ['huggingface-tensorflow-inference', 'DLC', false, ModelServer.SAGEMAKER_INFERENCE_TOOLKIT],
  ['mxnet-inference', 'DLC', false, ModelServer.SAGEMAKER_INFERENCE_TOOLKIT],
  ['pytorch-inference', 'DLC', true, ModelServer.TORCHSERVE],
  ['pytorch-inference-graviton', 'DLC', true, ModelServer.TORCHSERVE],
  ['tensorflow-inference', 'DLC', true, ModelServer.NONE],
  ['tensorflow-inference-graviton', 'DLC', true, ModelServer.NONE],
  ['sagemaker-scikit-learn', 'SageMaker', false, ModelServer.SCIKIT_LEARN],
  ['sagemaker-xgboost', 'SageMaker', false, ModelServer.XGBOOST],
  ['tei', 'SageMaker', false, ModelServer.NONE],
  ['tei-cpu', 'SageMaker', false, ModelServer.NONE],
];

/**
 * Typed from the SDK's catalog: pytorch.json "inference" 2.3.0 "registries" (the Deep Learning
 * Containers' account) and sklearn.json "inference" 1.2-1 "registries" (AWS's first-party images),
 * per Region; the partition and the ECR domain of each Region (China: amazonaws.com.cn, the SDK's
 * common_utils.py ALTERNATE_DOMAINS; ECR_URI_TEMPLATE "{registry}.dkr.{hostname}/{repository}" in
 * image_uris.py).
 */
const REGIONS: Record<string, { DLC: string; SageMaker?: string; newest?: true; partition: string; domain: string }> = {
  'us-east-1': { DLC: '763104351884', SageMaker: '683313688378', partition: 'aws', domain: 'amazonaws.com' },
  'eu-west-1': { DLC: '763104351884', SageMaker: '141502667606', partition: 'aws', domain: 'amazonaws.com' },
  'af-south-1': { DLC: '626614931356', SageMaker: '510948584623', partition: 'aws', domain: 'amazonaws.com' },
  'il-central-1': { DLC: '780543022126', SageMaker: '898809789911', partition: 'aws', domain: 'amazonaws.com' },
  'ca-west-1': { DLC: '204538143572', SageMaker: '190319476487', partition: 'aws', domain: 'amazonaws.com' },
  'ap-east-2': { DLC: '975050140332', newest: true, partition: 'aws', domain: 'amazonaws.com' },
  'mx-central-1': { DLC: '637423239942', newest: true, partition: 'aws', domain: 'amazonaws.com' },
  'cn-north-1': { DLC: '727897471807', SageMaker: '450853457545', partition: 'aws-cn', domain: 'amazonaws.com.cn' },
  'cn-northwest-1': { DLC: '727897471807', SageMaker: '451049120500', partition: 'aws-cn', domain: 'amazonaws.com.cn' },
  'us-gov-west-1': { DLC: '442386744353', SageMaker: '414596584902', partition: 'aws-us-gov', domain: 'amazonaws.com' },
  'us-gov-east-1': { DLC: '446045086412', SageMaker: '237065988967', partition: 'aws-us-gov', domain: 'amazonaws.com' },
};

/** The image URI AWS publishes `repository` at in `region` (the SDK's URI form), or undefined where it does not. */
function expectedUri(repository: string, region: string): string | undefined {
  const [, registry, inNewest] = REPOSITORIES.find(([r]) => r === repository)!;
  const r = REGIONS[region];
  const account = r[registry];
  if (!account || (r.newest && !inNewest)) return undefined;
  return `${account}.dkr.ecr.${region}.${r.domain}/${repository}:1.0-tag`;
}

/** What a template value deploys as in `region`: Ref (pseudo parameters), Fn::Join, Fn::FindInMap on the template's own Mappings. */
function deployed(v: unknown, region: string, mappings: Record<string, any> = {}): string {
  if (typeof v === 'string') return v;
  const o = v as Record<string, any>;
  if (o.Ref === 'AWS::Region') return region;
  if (o.Ref === 'AWS::URLSuffix') return REGIONS[region].domain; // CloudFormation pseudo parameters: amazonaws.com, amazonaws.com.cn in China
  if (o.Ref === 'AWS::Partition') return REGIONS[region].partition;
  if (o['Fn::Join']) return (o['Fn::Join'][1] as unknown[]).map(x => deployed(x, region, mappings)).join(o['Fn::Join'][0]);
  if (o['Fn::FindInMap']) {
    const [map, key, attr] = (o['Fn::FindInMap'] as unknown[]).map(x => deployed(x, region, mappings));
    const value = mappings[map]?.[key]?.[attr];
    if (value === undefined) throw new Error(`Fn::FindInMap ${map}.${key}.${attr}: no such key (the deploy would fail on it)`);
    return value;
  }
  throw new Error(`unexpected CloudFormation value ${JSON.stringify(v)}`);
}

/** A stack (with `env` when a Region is given) holding every given repository's image, each bound to one role, its URI an output. */
function imagesIn(region: string | undefined, repositories: string[], context: Record<string, unknown> = {}) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = new Stack(app, 'S', region ? { env: { account: '111122223333', region } } : {});
  const role = new iam.Role(stack, 'Role', { assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com') });
  for (const repository of repositories) {
    const { imageUri } = ContainerImage.fromDlc(repository, '1.0-tag').bind(new Construct(stack, `Model-${repository}`), role);
    new CfnOutput(stack, repository.replace(/[^A-Za-z0-9]/g, ''), { value: imageUri });
  }
  return Template.fromStack(stack).toJSON();
}
const outputOf = (t: Record<string, any>, repository: string) => t.Outputs[repository.replace(/[^A-Za-z0-9]/g, '')].Value;

test('fromDlc knows the SDK repositories of these images, each with its serving stack', () => {
  expect([...ContainerImage.IMAGE_REPOSITORIES].sort()).toEqual(REPOSITORIES.map(([r]) => r).sort());
  for (const [repository, , , server] of REPOSITORIES) {
    expect([repository, ContainerImage.fromDlc(repository, '1').modelServer]).toEqual([repository, server]);
    expect(Object.keys(SDK)).toContain(repository);
  }
});

test("a repository under a namespace (a mirror in the user's own registry) runs the server of its name", () => {
  expect(ContainerImage.modelServerOf('mirror/pytorch-inference')).toBe(ModelServer.TORCHSERVE);
  expect(ContainerImage.modelServerOf('team/ml/sagemaker-scikit-learn')).toBe(ModelServer.SCIKIT_LEARN);
  // Not an AWS image: no server assumed.
  expect(ContainerImage.modelServerOf('team/my-own-server')).toBeUndefined();
});

test('an unknown repository: an error listing every known one, and the way out', () => {
  expect(() => imageAccount(new Stack(new App(), 'S', { env: { region: 'us-east-1' } }), 'pytorch-inferense')).toThrow(
    new Error(
      "ContainerImage.fromDlc in stack S: got repository 'pytorch-inferense'; allowed: one of AWS's inference images (" +
        'djl-inference, huggingface-pytorch-inference, huggingface-pytorch-tgi-inference, huggingface-tensorflow-inference, mxnet-inference, ' +
        'pytorch-inference, pytorch-inference-graviton, tensorflow-inference, tensorflow-inference-graviton, sagemaker-scikit-learn, sagemaker-xgboost, tei, tei-cpu). ' +
        'Fix: use one of them, or ContainerImage.fromImageUri for any other image',
    ),
  );
});

describe.each(Object.keys(REGIONS))('a stack in %s', region => {
  const published = REPOSITORIES.map(([r]) => r).filter(r => expectedUri(r, region));
  const missing = REPOSITORIES.map(([r]) => r).filter(r => !expectedUri(r, region));
  let t: Record<string, any>;
  beforeAll(() => {
    t = imagesIn(region, published);
  });

  test("each image's URI in the template is AWS's registry of that Region, in the Region's ECR domain", () => {
    expect(published.map(r => deployed(outputOf(t, r), region))).toEqual(published.map(r => expectedUri(r, region)));
  });

  test("the role may pull exactly those repositories, in the Region's partition", () => {
    const pulls = iamStatements(t).filter(s => JSON.stringify(s.Action).includes('ecr:BatchGetImage'));
    const arns = pulls.map(s => deployed(s.Resource, region));
    expect(arns).toEqual(
      published.map(r => `arn:${REGIONS[region].partition}:ecr:${region}:${expectedUri(r, region)!.split('.')[0]}:repository/${r}`),
    );
  });

  if (missing.length) {
    test.each(missing)('%s, which AWS does not publish here: an error naming the Region and the fix', repository => {
      const stack = new Stack(new App(), 'S', { env: { region } });
      expect(() => imageAccount(stack, repository)).toThrow(
        new RegExp(
          `^ContainerImage\\.fromDlc\\('${repository}'\\) in stack S: got Region ${region}, where AWS publishes no version of ${repository}; allowed: the Regions AWS publishes it in \\(af-south-1, .*\\)\\. Fix: deploy the stack to one of them`,
        ),
      );
    });
  }
});

test("every Region of the SDK's catalog, every repository: the SDK's account, and an error in every other Region aws-cdk-lib knows", () => {
  const regions = [...new Set([...RegionInfo.regions.map(r => r.name), ...Object.values(SDK).flatMap(Object.keys)])].sort();
  const stacks = new Map(regions.map(r => [r, new Stack(new App(), 'S', { env: { region: r } })]));
  const got: Record<string, Record<string, string>> = {};
  const refused: Record<string, string[]> = {};
  for (const [repository] of REPOSITORIES) {
    for (const region of regions) {
      try {
        (got[repository] ??= {})[region] = imageAccount(stacks.get(region)!, repository);
      } catch {
        (refused[repository] ??= []).push(region);
      }
    }
    expect([repository, got[repository]]).toEqual([repository, SDK[repository]]);
    expect(refused[repository]).toEqual(regions.filter(r => !(r in SDK[repository])));
  }
});

describe('an environment-agnostic stack (no env, as cdk init writes it): the account by Fn::FindInMap on AWS::Region, the Region asserted by a rule', () => {
  const repositories = ['pytorch-inference', 'sagemaker-scikit-learn'];
  let t: Record<string, any>;
  beforeAll(() => {
    t = imagesIn(undefined, repositories);
  });
  const ruleOf = (repository: string) =>
    (Object.values(t.Rules) as any[]).find(r => r.Assertions[0].AssertDescription.startsWith(`ContainerImage.fromDlc('${repository}')`));

  test.each(repositories)("%s: deployed to each Region, the template's image is the one of that Region", repository => {
    const image = outputOf(t, repository);
    // One lookup, keyed by the Region the stack is deployed to.
    expect(JSON.stringify(image)).toMatch(/\{"Fn::FindInMap":\["SageMakerImageAccounts[A-Za-z]+",\{"Ref":"AWS::Region"\},"account"\]\}/);
    for (const region of Object.keys(REGIONS)) {
      const uri = expectedUri(repository, region);
      if (uri) expect([region, deployed(image, region, t.Mappings)]).toEqual([region, uri]);
      else
        expect([region, deployed(image, region, t.Mappings)]).toEqual([
          region,
          `no-image-in-this-region.dkr.ecr.${region}.${REGIONS[region].domain}/${repository}:1.0-tag`,
        ]);
    }
  });

  test.each(repositories)("%s: the rule allows exactly the SDK's Regions; every Region aws-cdk-lib knows has a mapping key", repository => {
    const rule = ruleOf(repository);
    expect(rule.Assertions).toHaveLength(1);
    const [allowed, region] = rule.Assertions[0].Assert['Fn::Contains'];
    expect(region).toEqual({ Ref: 'AWS::Region' });
    expect([...allowed].sort()).toEqual(Object.keys(SDK[repository]).sort());
    for (const r of Object.keys(REGIONS)) expect([r, allowed.includes(r)]).toEqual([r, expectedUri(repository, r) !== undefined]);
    expect(rule.Assertions[0].AssertDescription).toBe(
      `ContainerImage.fromDlc('${repository}') in stack S: AWS publishes no version of ${repository} in this Region (the Regions it does publish it in are listed in this rule). ` +
        'Deploy the stack to one of them, give it a Region (env: { region }) to have this checked at synth, or use ContainerImage.fromImageUri with an image in this Region.',
    );
    // A lookup never fails on a missing key: the rule, with its message, is what refuses a Region.
    const mapping = Object.values(t.Mappings).find(
      m => (m as any)['us-east-1'].account === expectedUri(repository, 'us-east-1')!.split('.')[0],
    ) as any;
    for (const r of RegionInfo.regions.map(x => x.name)) expect([r, typeof mapping[r]?.account]).toEqual([r, 'string']);
  });

  test("with target partitions (cdk.json's @aws-cdk/core:target-partitions): placeholders only for their Regions; none of the repository's Regions in them is an error", () => {
    const agnostic = (partitions?: string[]) =>
      new Stack(new App({ context: partitions ? { '@aws-cdk/core:target-partitions': partitions } : {} }), 'S');
    const mappingOf = (stack: Stack) => Object.values(Template.fromStack(stack).toJSON().Mappings)[0] as Record<string, { account: string }>;
    const placeholders = (stack: Stack) =>
      Object.entries(mappingOf(stack))
        .filter(([, v]) => v.account === 'no-image-in-this-region')
        .map(([r]) => r)
        .sort();
    const without = (partition?: string) =>
      RegionInfo.regions.filter(r => (!partition || r.partition === partition) && !(r.name in SDK['sagemaker-scikit-learn'])).map(r => r.name);
    const commercial = agnostic(['aws']);
    imageAccount(commercial, 'sagemaker-scikit-learn');
    expect(placeholders(commercial)).toEqual(expect.arrayContaining(['ap-east-2', 'ap-southeast-7', 'mx-central-1']));
    expect(placeholders(commercial)).toEqual(without('aws').sort());
    // scikit-learn's own Regions in other partitions keep their account (the SDK lists them all).
    expect(mappingOf(commercial)['cn-north-1']).toEqual({ account: '450853457545' });
    // No target partitions: placeholders for every Region aws-cdk-lib knows without the repository.
    const any = agnostic();
    imageAccount(any, 'sagemaker-scikit-learn');
    expect(placeholders(any)).toEqual(expect.arrayContaining(['eusc-de-east-1', 'mx-central-1']));
    expect(placeholders(any)).toEqual(without().sort());
    // No target partition has tei: a synth error; pytorch-inference is in aws-iso-f (us-isof-east-1, us-isof-south-1).
    expect(() => imageAccount(agnostic(['aws-iso-f']), 'tei')).toThrow(
      /^ContainerImage\.fromDlc\('tei'\) in the environment-agnostic stack S: got the target partitions aws-iso-f \(@aws-cdk\/core:target-partitions\), where AWS publishes no version of tei in any Region; allowed: partitions with a Region among the 35 where AWS publishes it \(af-south-1, .*\)\. Fix: give the stack one of those Regions \(env: \{ region \}\), or use ContainerImage\.fromImageUri$/,
    );
    expect(() => imageAccount(agnostic(['aws-iso-f']), 'pytorch-inference')).not.toThrow();
    expect(() => imageAccount(agnostic(['aws-iso-f', 'aws-iso-e']), 'tei')).toThrow(/ got the target partitions aws-iso-f, aws-iso-e \(@aws-cdk/);
  });

  test("pytorch-inference and scikit-learn in one template: two mappings, two rules (plus the CDK's bootstrap check)", () => {
    expect(Object.keys(t.Mappings).sort()).toEqual(['SageMakerImageAccountspytorchinference', 'SageMakerImageAccountssagemakerscikitlearn']);
    expect(Object.keys(t.Rules).sort()).toEqual([
      'CheckBootstrapVersion',
      'SageMakerImageAccountspytorchinferenceRegion',
      'SageMakerImageAccountssagemakerscikitlearnRegion',
    ]);
  });
});
