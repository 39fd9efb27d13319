import { App, Stack, Token } from 'aws-cdk-lib';
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

  test('a Region where AWS does not publish the image is a synth error naming it (not a pull failure at deploy)', () => {
    const { app } = endpointOn('sagemaker-scikit-learn', 'mx-central-1');
    expect(synthError(app)).toMatch(
      /\[S\/E\] model\.image: ContainerImage\.fromDlc\('sagemaker-scikit-learn'\): got region mx-central-1; allowed: the Regions AWS publishes it in \(af-south-1, .*\)\. Fix: /,
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

  test('region-agnostic: a Region of the target partitions without the image fails at synth, naming it', () => {
    const { app } = endpointOn('sagemaker-scikit-learn', undefined, { '@aws-cdk/core:target-partitions': ['aws'] });
    expect(synthError(app)).toMatch(
      /fromDlc\('sagemaker-scikit-learn'\) in the region-agnostic stack S: got Regions it could be deployed to where AWS does not publish the image \(ap-east-2, .*mx-central-1\).* Fix: give the stack a Region/,
    );
  });

  test('region-agnostic, every Region of the target partitions has it: the account is a Fn::FindInMap over exactly those Regions', () => {
    const { stack } = endpointOn('sagemaker-scikit-learn', undefined, { '@aws-cdk/core:target-partitions': ['aws-cn', 'aws-us-gov'] });
    expect(imageOf(stack)).toContain('Fn::FindInMap');
    const mapping = Object.values(Template.fromStack(stack).toJSON().Mappings as Record<string, any>)[0];
    expect(mapping['cn-north-1']).toEqual({ account: '450853457545' });
    expect(mapping['us-gov-west-1']).toEqual({ account: '414596584902' });
    expect(mapping['il-central-1']).toEqual({ account: '898809789911' });
    expect(Object.keys(mapping)).not.toContain('mx-central-1');
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
