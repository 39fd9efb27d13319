import { App, NestedStack, Stack, Token } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ContainerImage, ResilientEndpoint, SageMakerInstanceType } from '../lib';
import { imageUriProblem } from '../lib/model-artifacts';
import { iamStatements, synthError } from './util';

/** One endpoint on `repository` in a stack of `region` (undefined: region-agnostic), with app context. */
function endpointOn(repository: string, region: string | undefined, context: Record<string, unknown> = {}) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = new Stack(app, 'S', region ? { env: { account: '111122223333', region } } : {});
  new ResilientEndpoint(stack, 'E', {
    model: { image: ContainerImage.fromDlc(repository, '1.2-1-cpu-py3') },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
  });
  return { app, stack };
}
const imageOf = (stack: Stack) =>
  JSON.stringify(
    (Object.values(Template.fromStack(stack).toJSON().Resources) as any[]).find(r => r.Type === 'AWS::SageMaker::Model').Properties.PrimaryContainer
      .Image,
  );
/** The model's image in a template's JSON. */
const imageIn = (json: Record<string, any>) =>
  JSON.stringify((Object.values(json.Resources) as any[]).find(r => r.Type === 'AWS::SageMaker::Model').Properties.PrimaryContainer.Image);

describe('ContainerImage.fromDlc: the registry of every Region AWS serves the image in', () => {
  // Values as the SageMaker Python SDK lists them (sagemaker-core/src/sagemaker/core/image_uri_config/*.json,
  // "registries"; real-account.md item 33). Regions aws-cdk-lib's DLC_REPOSITORY_ACCOUNT fact lacks.
  test.each([
    ['pytorch-inference', 'us-gov-west-1', '442386744353'],
    ['pytorch-inference', 'af-south-1', '626614931356'],
    ['pytorch-inference', 'ap-northeast-3', '364406365360'],
    ['pytorch-inference', 'il-central-1', '780543022126'],
    ['pytorch-inference', 'ca-west-1', '204538143572'],
    ['pytorch-inference', 'cn-north-1', '727897471807'],
    ['sagemaker-scikit-learn', 'il-central-1', '898809789911'],
    ['sagemaker-scikit-learn', 'ca-west-1', '190319476487'],
    ['sagemaker-scikit-learn', 'us-gov-west-1', '414596584902'],
    ['sagemaker-scikit-learn', 'eu-west-1', '141502667606'],
    ['sagemaker-xgboost', 'us-east-1', '683313688378'],
  ])('%s in %s is pulled from %s', (repository, region, account) => {
    const { stack } = endpointOn(repository, region);
    const image = imageOf(stack);
    expect(image).toContain(`${account}.dkr.ecr.${region}.`);
    expect(image).toContain(`/${repository}:`);
    // The pull grant names exactly that repository, in the stack's partition.
    const pull = iamStatements(Template.fromStack(stack)).find(s => JSON.stringify(s.Action).includes('ecr:BatchGetImage'));
    expect(JSON.stringify(pull.Resource)).toContain(`:ecr:${region}:${account}:repository/${repository}`);
  });

  test('a Region where AWS publishes no version of the repository is a synth error naming the stack (not a pull failure at deploy)', () => {
    const { app } = endpointOn('sagemaker-scikit-learn', 'mx-central-1');
    expect(synthError(app)).toMatch(
      /\[S\/E\] model\.image: ContainerImage\.fromDlc\('sagemaker-scikit-learn'\) in stack S: got Region mx-central-1, where AWS publishes no version of sagemaker-scikit-learn; allowed: the Regions AWS publishes it in \(af-south-1, .*\)\. Fix: /,
    );
  });

  test('an unknown repository is a synth error listing the known ones', () => {
    const { app } = endpointOn('pytorch-inferense', 'us-east-1');
    const message = synthError(app);
    expect(message).toMatch(
      /got repository 'pytorch-inferense'; allowed: one of AWS's inference images \(.*pytorch-inference.*sagemaker-scikit-learn.*\)\. Fix: /,
    );
    expect(ContainerImage.IMAGE_REPOSITORIES).toEqual(
      expect.arrayContaining(['pytorch-inference', 'sagemaker-scikit-learn', 'sagemaker-xgboost', 'huggingface-pytorch-inference']),
    );
  });

  describe('environment-agnostic (cdk init writes stacks without env): a template for every Region, refused before any resource where the repository is missing', () => {
    // The stack cdk init writes, with cdk.json's target partitions; and one with no target partitions (any).
    let t: Record<string, any>;
    let any: Record<string, any>;
    beforeAll(() => {
      t = Template.fromStack(
        endpointOn('sagemaker-scikit-learn', undefined, { '@aws-cdk/core:target-partitions': ['aws', 'aws-cn'] }).stack,
      ).toJSON();
      any = Template.fromStack(endpointOn('sagemaker-scikit-learn', undefined).stack).toJSON();
    });
    const mappingOf = (x: Record<string, any>) => Object.values(x.Mappings as Record<string, any>)[0];
    const ruleOf = (x: Record<string, any>) => Object.values(x.Rules as Record<string, any>)[0];

    test('the image account is a Fn::FindInMap on AWS::Region, the account of each Region AWS publishes the repository in', () => {
      const [mappingId] = Object.keys(t.Mappings);
      expect(imageIn(t)).toContain(JSON.stringify({ 'Fn::FindInMap': [mappingId, { Ref: 'AWS::Region' }, 'account'] }));
      // Values as the SageMaker Python SDK lists them (real-account.md item 33), in all three partitions.
      expect(mappingOf(t)['eu-west-1']).toEqual({ account: '141502667606' });
      expect(mappingOf(t)['il-central-1']).toEqual({ account: '898809789911' });
      expect(mappingOf(t)['cn-north-1']).toEqual({ account: '450853457545' });
      expect(mappingOf(t)['us-gov-west-1']).toEqual({ account: '414596584902' });
    });

    test('a rule asserts the Region is one AWS publishes the repository in, naming the stack and the way out', () => {
      expect(ruleOf(t)).toEqual({
        Assertions: [
          {
            Assert: { 'Fn::Contains': [expect.any(Array), { Ref: 'AWS::Region' }] },
            AssertDescription:
              "ContainerImage.fromDlc('sagemaker-scikit-learn') in stack S: AWS publishes no version of sagemaker-scikit-learn in this Region (the Regions it does publish it in are listed in this rule). " +
              'Deploy the stack to one of them, give it a Region (env: { region }) to have this checked at synth, or use ContainerImage.fromImageUri with an image in this Region.',
          },
        ],
      });
      const allowed: string[] = ruleOf(t).Assertions[0].Assert['Fn::Contains'][0];
      expect(allowed).toEqual(expect.arrayContaining(['us-east-1', 'eu-west-1', 'il-central-1', 'ca-west-1', 'cn-northwest-1', 'us-gov-east-1']));
      // scikit-learn is not published in these (real-account.md item 44: aws-cdk-lib's Region list has Regions without it).
      for (const r of ['mx-central-1', 'ap-east-2', 'ap-southeast-5', 'ap-southeast-7']) expect(allowed).not.toContain(r);
    });

    test('a Region without the repository resolves the lookup to a placeholder, so the rule, not a missing mapping key, stops the deploy', () => {
      const allowed: string[] = ruleOf(t).Assertions[0].Assert['Fn::Contains'][0];
      expect(mappingOf(t)['mx-central-1']).toEqual({ account: 'no-image-in-this-region' });
      // Every mapped Region with a real account is allowed by the rule, and every allowed Region has its account.
      const real = Object.entries(mappingOf(t) as Record<string, { account: string }>).filter(([, v]) => v.account !== 'no-image-in-this-region');
      expect(real.map(([r]) => r).sort()).toEqual([...allowed].sort());
      // Without target partitions, GovCloud and the isolated Regions aws-cdk-lib knows are mapped too.
      expect(mappingOf(any)['us-gov-west-1']).toEqual({ account: '414596584902' });
      expect(Object.keys(mappingOf(any)).length).toBeGreaterThan(Object.keys(mappingOf(t)).length);
    });

    test('no synth error, and no token in the message', () => {
      const { app } = endpointOn('sagemaker-scikit-learn', undefined, { '@aws-cdk/core:target-partitions': ['aws', 'aws-cn'] });
      expect(synthError(app)).toBe('');
      expect(JSON.stringify(ruleOf(t))).not.toMatch(/Token\[/);
    });
  });

  test('environment-agnostic, several repositories in one stack: one mapping and one rule per repository, each image from its own', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:target-partitions': ['aws', 'aws-cn'] } });
    const stack = new Stack(app, 'Mixed');
    for (const [id, repository] of [
      ['A', 'sagemaker-scikit-learn'],
      ['B', 'sagemaker-scikit-learn'],
      ['C', 'pytorch-inference'],
      ['D', 'sagemaker-xgboost'],
    ]) {
      new ResilientEndpoint(stack, id, {
        model: { image: ContainerImage.fromDlc(repository, '1') },
        instanceType: SageMakerInstanceType.ML_M5_XLARGE,
        circuitBreaker: { enabled: false },
      });
    }
    const json = Template.fromStack(stack).toJSON();
    const fromDlcRules = (Object.values(json.Rules) as any[])
      .map(r => r.Assertions[0].AssertDescription)
      .filter(d => /^ContainerImage\.fromDlc/.test(d));
    expect(fromDlcRules.map(d => d.match(/fromDlc\('([^']+)'\)/)[1])).toEqual(['sagemaker-scikit-learn', 'pytorch-inference', 'sagemaker-xgboost']);
    const images = (Object.values(json.Resources) as any[])
      .filter(r => r.Type === 'AWS::SageMaker::Model')
      .map(r => r.Properties.PrimaryContainer.Image);
    // Each image's account in eu-west-1, followed through its own mapping.
    const accountIn = (image: any, region: string) => {
      const [mapping, , key] = JSON.stringify(image)
        .match(/"Fn::FindInMap":\["([^"]+)",\{"Ref":"AWS::Region"\},"(account)"\]/)!
        .slice(1);
      return json.Mappings[mapping][region][key ?? 'account'];
    };
    expect(images.map(i => `${accountIn(i, 'eu-west-1')} ${JSON.stringify(i).match(/\/([a-z-]+):1/)![1]}`)).toEqual([
      '141502667606 sagemaker-scikit-learn',
      '141502667606 sagemaker-scikit-learn',
      '763104351884 pytorch-inference',
      '141502667606 sagemaker-xgboost',
    ]);
    // pytorch-inference exists in mx-central-1, scikit-learn and XGBoost do not.
    expect(images.map(i => accountIn(i, 'mx-central-1'))).toEqual([
      'no-image-in-this-region',
      'no-image-in-this-region',
      '637423239942',
      'no-image-in-this-region',
    ]);
  });

  test('target partitions without any Region of the repository: a synth error naming the stack', () => {
    const { app } = endpointOn('tei', undefined, { '@aws-cdk/core:target-partitions': ['aws-iso-f'] });
    expect(synthError(app)).toMatch(
      /ContainerImage\.fromDlc\('tei'\) in the environment-agnostic stack S: got the target partitions aws-iso-f \(@aws-cdk\/core:target-partitions\), where AWS publishes no version of tei in any Region; allowed: /,
    );
  });

  test('a stack whose name differs from its path is named by both', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'S', { stackName: 'prod-models', env: { account: '111122223333', region: 'mx-central-1' } });
    new ResilientEndpoint(stack, 'E', {
      model: { image: ContainerImage.fromDlc('sagemaker-scikit-learn', '1') },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    });
    expect(synthError(app)).toContain("ContainerImage.fromDlc('sagemaker-scikit-learn') in stack S (prod-models): got Region mx-central-1");
  });

  test('a nested stack is named by its path, never by its token name', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const nested = new NestedStack(new Stack(app, 'Parent', { env: { account: '111122223333', region: 'mx-central-1' } }), 'Models');
    new ResilientEndpoint(nested, 'E', {
      model: { image: ContainerImage.fromDlc('sagemaker-scikit-learn', '1') },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    });
    const message = synthError(app);
    expect(message).toContain("ContainerImage.fromDlc('sagemaker-scikit-learn') in stack Parent/Models: got Region mx-central-1");
    expect(message).not.toMatch(/Token\[/);
    // In an environment-agnostic parent, the rule's message names the nested stack the same way.
    const agnostic = new NestedStack(new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Agnostic'), 'Models');
    new ResilientEndpoint(agnostic, 'E', {
      model: { image: ContainerImage.fromDlc('sagemaker-scikit-learn', '1') },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    });
    const rule = Object.values(Template.fromStack(agnostic).toJSON().Rules as Record<string, any>)[0];
    expect(rule.Assertions[0].AssertDescription).toMatch(
      /^ContainerImage\.fromDlc\('sagemaker-scikit-learn'\) in stack Agnostic\/Models: AWS publishes no version/,
    );
  });
});

describe('ContainerImage.fromImageUri: an image SageMaker can pull names its registry', () => {
  test.each([
    '763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-inference:2.3.0-cpu-py311',
    '727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/pytorch-inference:2.3.0-cpu-py311',
    'registry.example.com/team/model:1',
    'registry.example.com:5000/model@sha256:abc',
    'localhost/model:1',
    'localhost:5000/model',
    Token.asString({ Ref: 'ImageUri' }),
  ])('%s: fine', uri => {
    expect(imageUriProblem(uri)).toBeUndefined();
  });

  test("a bare name or a Docker Hub path: the URI it needs (AWS's registry for AWS's images) and the fix", () => {
    expect(imageUriProblem('sagemaker-scikit-learn:1.2-1-cpu-py3')).toBe(
      "ContainerImage.fromImageUri: got 'sagemaker-scikit-learn:1.2-1-cpu-py3'; allowed: an image URI with its registry host, e.g. 683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3 (without one the name means Docker Hub, which SageMaker does not pull from, and the model server cannot be recognised). Fix: ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3') for AWS's image in the stack's Region, or the image's full ECR URI",
    );
    expect(imageUriProblem('library/ubuntu')).toBe(
      "ContainerImage.fromImageUri: got 'library/ubuntu'; allowed: an image URI with its registry host, e.g. 123456789012.dkr.ecr.us-east-1.amazonaws.com/library/ubuntu:<tag> (without one the name means Docker Hub, which SageMaker does not pull from, and the model server cannot be recognised). Fix: the image's full ECR URI, or ContainerImage.fromEcrRepository",
    );
    // Docker's grammar: a first part without '.' or ':' (and not localhost) is a Docker Hub namespace.
    for (const uri of ['myteam/model:1', 'model', 'pytorch-inference@sha256:abc', 'localhosts/model:1']) expect(imageUriProblem(uri)).toBeDefined();
    expect(imageUriProblem('pytorch-inference@sha256:abc')).toContain("ContainerImage.fromDlc('pytorch-inference', '<tag>')");
  });
});
