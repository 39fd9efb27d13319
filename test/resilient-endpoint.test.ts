import { App, CfnParameter, Duration, Size, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { ContainerImage, ModelData, ResilientEndpoint, ResilientEndpointProps, SageMakerInstanceType } from '../lib';
import { ClusteringStack } from '../lib/examples/clustering-stack';
import { RecommenderStack } from '../lib/examples/recommender-stack';
import { iamStatements, nagFindings, newStack, synthError, warnings } from './util';

const image = ContainerImage.fromImageUri('763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-inference:2.3.0-gpu');
const modelData = ModelData.fromS3Uri('s3://models/rec/model.tar.gz');

function variantOf(t: Template, name: string): any {
  const configs = Object.values(t.findResources('AWS::SageMaker::EndpointConfig'));
  expect(configs).toHaveLength(1);
  return (configs[0] as any).Properties.ProductionVariants.find((v: any) => v.VariantName === name);
}

function containerEnv(t: Template, variant: string): Record<string, string> {
  const models = Object.values(t.findResources('AWS::SageMaker::Model')) as any[];
  const m = models.find(x => x.Properties.PrimaryContainer.Environment.RESILIENT_ENDPOINT_VARIANT === variant);
  return m.Properties.PrimaryContainer.Environment;
}

describe('example stacks', () => {
  let rec: Template;
  let clu: Template;
  let recStack: RecommenderStack;
  let cluStack: ClusteringStack;
  beforeAll(() => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    recStack = new RecommenderStack(app, 'Rec');
    cluStack = new ClusteringStack(app, 'Clu');
    rec = Template.fromStack(recStack);
    clu = Template.fromStack(cluStack);
  });

  test('m5.xlarge scikit-learn container gets 6 gunicorn workers and a 60 s timeout; no MMS variable (gunicorn reads none)', () => {
    const env = containerEnv(clu, 'Primary');
    expect(env.SAGEMAKER_MODEL_SERVER_WORKERS).toBe('6');
    expect(env.SAGEMAKER_MODEL_SERVER_TIMEOUT).toBe('60');
    expect(Object.keys(env).filter(k => k.startsWith('MMS_') || k.startsWith('TS_'))).toEqual([]);
  });

  test("g4dn.2xlarge recommender: TorchServe names, 3 workers from the 4 GiB GPU footprint, incident A's length tiers, user env wins", () => {
    const env = containerEnv(rec, 'Primary');
    expect(env).toMatchObject({
      TS_MAX_REQUEST_SIZE: '6291456',
      SAGEMAKER_MODEL_SERVER_WORKERS: '3',
      MAX_SEQ_LEN: '1024',
      DEGRADED_MAX_SEQ_LEN: '512',
    });
  });

  test('data capture at 1 %, input and output, into the created bucket', () => {
    clu.hasResourceProperties('AWS::SageMaker::EndpointConfig', {
      DataCaptureConfig: Match.objectLike({
        EnableCapture: true,
        InitialSamplingPercentage: 1,
        CaptureOptions: [{ CaptureMode: 'Input' }, { CaptureMode: 'Output' }],
        CaptureContentTypeHeader: { JsonContentTypes: ['application/json'] },
      }),
    });
  });

  test('3600 s model download timeout, long start-up timeout', () => {
    expect(variantOf(clu, 'Primary')).toMatchObject({ ModelDataDownloadTimeoutInSeconds: 3600, ContainerStartupHealthCheckTimeoutInSeconds: 900 });
  });

  test('g4dn.2xlarge endpoint config has no KmsKeyId and no VolumeSizeInGB', () => {
    const cfg = Object.values(rec.findResources('AWS::SageMaker::EndpointConfig'))[0] as any;
    expect(cfg.Properties.KmsKeyId).toBeUndefined();
    for (const v of cfg.Properties.ProductionVariants) expect(v.VolumeSizeInGB).toBeUndefined();
  });

  test('primary with 2 instances at weight 1, fallback with 1 at weight 0', () => {
    expect(variantOf(rec, 'Primary')).toMatchObject({ InstanceType: 'ml.g4dn.2xlarge', InitialInstanceCount: 2, InitialVariantWeight: 1 });
    expect(variantOf(rec, 'Fallback')).toMatchObject({ InitialInstanceCount: 1, InitialVariantWeight: 0 });
    expect(containerEnv(rec, 'Fallback')).toMatchObject({ MAX_SEQ_LEN: '256' });
  });

  test('no physical names on models and endpoint config; endpoint retains variant properties', () => {
    for (const m of Object.values(rec.findResources('AWS::SageMaker::Model')) as any[]) expect(m.Properties.ModelName).toBeUndefined();
    const cfg = Object.values(rec.findResources('AWS::SageMaker::EndpointConfig'))[0] as any;
    expect(cfg.Properties.EndpointConfigName).toBeUndefined();
    rec.hasResourceProperties('AWS::SageMaker::Endpoint', {
      RetainAllVariantProperties: true,
      EndpointName: Match.stringLikeRegexp('^[a-z0-9-]{1,63}$'),
    });
  });

  test('capture bucket: KMS, SSL only, public access blocked, access logs, 30-day expiry', () => {
    clu.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: { ServerSideEncryptionConfiguration: [Match.objectLike({ ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms' } })] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      LoggingConfiguration: Match.objectLike({ DestinationBucketName: Match.anyValue() }),
      LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 30, Status: 'Enabled' })] },
    });
    clu.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  test("execution role: no managed policies; reads exactly the model asset object; pulls exactly the region's PyTorch image", () => {
    rec.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: { Statement: [Match.objectLike({ Principal: { Service: 'sagemaker.amazonaws.com' } })] },
      ManagedPolicyArns: Match.absent(),
    });
    const statements = iamStatements(rec);
    const model = (Object.values(rec.findResources('AWS::SageMaker::Model')) as any[])[0].Properties.PrimaryContainer;
    // The model artifact is this repo's asset: s3:GetObject on that one object key, nothing else in the bucket.
    const objectKey = JSON.stringify(model.ModelDataUrl).match(/([0-9a-f]{64}\.gz)/)![1];
    expect(statements.filter(s => [s.Action].flat().some((a: string) => a.startsWith('s3:Get')))).toEqual([
      {
        Effect: 'Allow',
        Action: 's3:GetObject',
        Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', expect.anything(), `/${objectKey}`]] },
      },
    ]);
    expect(statements.filter(s => JSON.stringify(s.Action).includes('s3:List') || JSON.stringify(s.Action).includes('s3:GetBucket'))).toEqual([]);
    // The image is AWS's PyTorch DLC for the stack's Region (the examples default to us-east-1 without CDK_DEFAULT_REGION).
    expect(JSON.stringify(model.Image)).toMatch(
      /763104351884\.dkr\.ecr\.us-east-1\..*\/pytorch-inference:2\.3\.0-gpu-py311-cu121-ubuntu20\.04-sagemaker/,
    );
    const pull = statements.find(
      s => JSON.stringify(s.Action) === JSON.stringify(['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage']),
    );
    expect(JSON.stringify(pull.Resource)).toMatch(/:repository\/pytorch-inference"/);
  });

  test('no placeholder image or model anywhere in the example app', () => {
    for (const t of [rec, clu]) expect(JSON.stringify(t.toJSON())).not.toMatch(/placeholder/);
  });

  test('cdk-nag AwsSolutions finds nothing on both examples', () => {
    expect(nagFindings(recStack)).toEqual([]);
    expect(nagFindings(cluStack)).toEqual([]);
  });
});

describe('props', () => {
  test('ECR repository image and bucket model data grant exactly those', () => {
    const { stack } = newStack();
    const repo = new ecr.Repository(stack, 'Repo');
    const bucket = new s3.Bucket(stack, 'Models');
    new ResilientEndpoint(stack, 'E', {
      model: { image: ContainerImage.fromEcrRepository(repo, 'v7'), modelData: ModelData.fromBucket(bucket, 'm/model.tar.gz') },
      instanceType: SageMakerInstanceType.ML_M5_LARGE,
    });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::SageMaker::Model', {
      PrimaryContainer: Match.objectLike({
        Image: Match.objectLike({ 'Fn::Join': Match.anyValue() }),
        ModelDataUrl: Match.objectLike({ 'Fn::Join': Match.anyValue() }),
      }),
    });
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: Match.arrayWith(['ecr:BatchGetImage']), Resource: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Repo'), 'Arn'] } }),
        ]),
      },
    });
  });

  test('KMS key and volume size are used on EBS-only types', () => {
    const { stack } = newStack();
    const key = new kms.Key(stack, 'K');
    new ResilientEndpoint(stack, 'E', {
      model: { image, modelData },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      volumeKmsKey: key,
      volumeSize: Size.gibibytes(50),
    });
    Template.fromStack(stack).hasResourceProperties('AWS::SageMaker::EndpointConfig', {
      KmsKeyId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^K'), 'Arn'] },
      ProductionVariants: [Match.objectLike({ VolumeSizeInGB: 50 })],
    });
  });

  test('user bucket and prefix, custom sampling, CSV types; capture can be switched off', () => {
    const { stack } = newStack();
    const bucket = new s3.Bucket(stack, 'Mine');
    new ResilientEndpoint(stack, 'E', {
      model: { image },
      instanceType: SageMakerInstanceType.ML_M5_LARGE,
      dataCapture: { bucket, prefix: 'cap', samplingPercentage: 5, csvContentTypes: ['text/csv'] },
    });
    new ResilientEndpoint(stack, 'Off', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_LARGE, dataCapture: { enabled: false } });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::SageMaker::EndpointConfig', {
      DataCaptureConfig: Match.objectLike({
        InitialSamplingPercentage: 5,
        DestinationS3Uri: Match.objectLike({ 'Fn::Join': ['', ['s3://', { Ref: Match.stringLikeRegexp('^Mine') }, '/cap']] }),
        CaptureContentTypeHeader: { JsonContentTypes: ['application/json'], CsvContentTypes: ['text/csv'] },
      }),
    });
    t.hasResourceProperties('AWS::SageMaker::EndpointConfig', { DataCaptureConfig: Match.absent() });
    t.resourceCountIs('AWS::S3::Bucket', 1);
  });

  test('grantInvoke names only this endpoint (its ARN as CloudFormation reports it); imports build the lower-case ARN', () => {
    const { stack } = newStack();
    const e = new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_LARGE, endpointName: 'My-Endpoint' });
    const role = new iam.Role(stack, 'Caller', { assumedBy: new iam.AccountRootPrincipal() });
    e.grantInvoke(role);
    const imported = ResilientEndpoint.fromEndpointName(stack, 'Imp', 'Other-Endpoint');
    imported.grantInvoke(role);
    const t = Template.fromStack(stack);
    const policy = Object.values(
      t.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: Match.stringLikeRegexp('^Caller') }] } }),
    )[0] as any;
    const statements = policy.Properties.PolicyDocument.Statement;
    expect(statements).toHaveLength(2);
    for (const s of statements) expect(s.Action).toBe('sagemaker:InvokeEndpoint');
    // Ref of AWS::SageMaker::Endpoint is its ARN.
    expect(statements[0].Resource).toEqual({ Ref: Object.keys(t.findResources('AWS::SageMaker::Endpoint'))[0] });
    expect(JSON.stringify(statements[1].Resource)).toMatch(/:endpoint\/other-endpoint"/);
    expect(e.endpointName).toBe('My-Endpoint');
  });

  test('metric helpers use the right namespace, dimensions and statistic, and no unit filter', () => {
    const { stack } = newStack();
    const e = new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_LARGE, endpointName: 'ep' });
    const mem = e.metricMemoryUtilization();
    expect(mem).toMatchObject({
      namespace: '/aws/sagemaker/Endpoints',
      metricName: 'MemoryUtilization',
      statistic: 'Maximum',
      dimensions: { EndpointName: 'ep', VariantName: 'Primary' },
    });
    expect(mem.unit).toBeUndefined();
    expect(e.metricModelLatency()).toMatchObject({ namespace: 'AWS/SageMaker', metricName: 'ModelLatency', statistic: 'p99' });
    expect(e.metricModelLatency().unit).toBeUndefined();
    expect(e.metricInvocation5xxRate()).toMatchObject({ metricName: 'Invocation5XXErrors', statistic: 'Average' });
    expect(e.metricInvocationsPerInstance().period.toSeconds()).toBe(60);
    expect(() => e.metrics('Nope')).toThrow(/no production variant named 'Nope'/);
  });

  test('bare unknown type warns that tuning is off; burstable warns', () => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'U', { model: { image }, instanceType: SageMakerInstanceType.of('ml.m7i.large') });
    new ResilientEndpoint(stack, 'T', { model: { image }, instanceType: SageMakerInstanceType.ML_T2_MEDIUM, autoScaling: { enabled: false } });
    const w = warnings(stack).join('\n');
    expect(w).toMatch(/ml\.m7i\.large is not in the instance catalog/);
    expect(w).toMatch(/ml\.t2\.medium, a burstable demo-grade type/);
  });
});

describe('validation: all errors at once', () => {
  test('sampling 0.5 and a 5 s timeout fail with one message each; a KMS key on g4dn only warns (current API text)', () => {
    const { app, stack } = newStack();
    new ResilientEndpoint(stack, 'Bad', {
      model: { image, modelData },
      instanceType: SageMakerInstanceType.ML_G4DN_XLARGE,
      dataCapture: { samplingPercentage: 0.5 },
      modelServer: { modelDataDownloadTimeout: Duration.seconds(5) },
    });
    const msg = synthError(app);
    expect(msg).toMatch(/\[Test\/Bad[^\]]*\] dataCapture\.samplingPercentage: got 0\.5; allowed: an integer from 1 to 100\. Fix: .*1 is the minimum/);
    expect(msg).toMatch(/\[Test\/Bad[^\]]*\] modelServer\.modelDataDownloadTimeout \(s\): got 5; allowed: an integer from 60 to 3600/);
    expect(msg.match(/Fix:/g)).toHaveLength(2);
    const ok = newStack();
    new ResilientEndpoint(ok.stack, 'Kms', {
      model: { image, modelData },
      instanceType: SageMakerInstanceType.ML_G4DN_XLARGE,
      volumeKmsKey: new kms.Key(ok.stack, 'K'),
    });
    expect(warnings(ok.stack).join('\n')).toMatch(/volumeKmsKey does not encrypt the local NVMe storage of ml\.g4dn\.xlarge/);
  });

  test.each([
    ['instanceCount 0', { instanceCount: 0 }, /instanceCount: got 0; allowed: an integer from 1 to 1000/],
    [
      'volume size on NVMe type',
      { instanceType: SageMakerInstanceType.ML_G5_XLARGE, volumeSize: Size.gibibytes(100) },
      /volumeSize: got 100 GiB; allowed: no volume size/,
    ],
    ['volume size too large', { volumeSize: Size.gibibytes(600) }, /volumeSize \(GiB\): got 600; allowed: an integer from 1 to 512/],
    ['bad endpoint name', { endpointName: 'bad_name' }, /endpointName: got 'bad_name'/],
    [
      'bad S3 URI',
      { model: { image, modelData: ModelData.fromS3Uri('https://x/model.tar.gz') } },
      /model\.modelData: got 'https:\/\/x\/model\.tar\.gz'; allowed: an S3 URI/,
    ],
    ['sampling 101', { dataCapture: { samplingPercentage: 101 } }, /samplingPercentage: got 101/],
    ['fallback named like primary', { fallback: { variantName: 'Primary' } }, /fallback\.variantName: got 'Primary'/],
    [
      'too many content types',
      { dataCapture: { jsonContentTypes: Array(11).fill('application/json') } },
      /jsonContentTypes: got 11 entries; allowed: at most 10/,
    ],
  ])('%s', (_name, extra, pattern) => {
    const { app, stack } = newStack();
    new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, ...(extra as object) });
    expect(synthError(app)).toMatch(pattern);
  });

  test('a valid stack synthesizes', () => {
    const { app, stack } = newStack();
    new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE });
    expect(synthError(app)).toBe('');
    void Stack;
  });
});

test('imported endpoints get the metric helpers too (variant from the attributes), and grantInvoke', () => {
  const { stack } = newStack();
  const imported = ResilientEndpoint.fromEndpointAttributes(stack, 'I', { endpointName: 'legacy', variantName: 'Blue' });
  expect(imported.metricMemoryUtilization()).toMatchObject({
    namespace: '/aws/sagemaker/Endpoints',
    metricName: 'MemoryUtilization',
    statistic: 'Maximum',
    dimensions: { EndpointName: 'legacy', VariantName: 'Blue' },
  });
  expect(imported.metricModelLatency({ period: Duration.minutes(5) }).period.toSeconds()).toBe(300);
  expect(imported.metric('AWS/SageMaker', 'OverheadLatency', { statistic: 'p90' })).toMatchObject({
    statistic: 'p90',
    dimensions: { EndpointName: 'legacy', VariantName: 'Blue' },
  });
  expect(ResilientEndpoint.fromEndpointName(stack, 'N', 'other').metricInvocations()).toMatchObject({
    dimensions: { EndpointName: 'other', VariantName: 'AllTraffic' },
  });
});

test("fromEndpointArn: the name is the ARN's resource name (literal or token), grants use the ARN as given", () => {
  const { stack } = newStack();
  const literal = ResilientEndpoint.fromEndpointArn(stack, 'L', 'arn:aws:sagemaker:eu-west-1:111122223333:endpoint/legacy-endpoint');
  expect(literal.endpointName).toBe('legacy-endpoint');
  expect(literal.metricInvocations()).toMatchObject({ dimensions: { EndpointName: 'legacy-endpoint', VariantName: 'AllTraffic' } });
  const arnParam = new CfnParameter(stack, 'EndpointArn');
  const fromToken = ResilientEndpoint.fromEndpointArn(stack, 'T', arnParam.valueAsString);
  const invoker = new iam.Role(stack, 'Invoker', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
  literal.grantInvoke(invoker);
  fromToken.grantInvoke(invoker);
  const t = Template.fromStack(stack);
  t.hasResourceProperties('AWS::IAM::Policy', {
    PolicyDocument: {
      Statement: [
        Match.objectLike({ Action: 'sagemaker:InvokeEndpoint', Resource: 'arn:aws:sagemaker:eu-west-1:111122223333:endpoint/legacy-endpoint' }),
        Match.objectLike({ Action: 'sagemaker:InvokeEndpoint', Resource: { Ref: 'EndpointArn' } }),
      ],
    },
  });
  // A token ARN's name is its resource part, split out by CloudFormation at deploy time.
  expect(stack.resolve(fromToken.endpointName)).toEqual({
    'Fn::Select': [1, { 'Fn::Split': ['/', { 'Fn::Select': [5, { 'Fn::Split': [':', { Ref: 'EndpointArn' }] }] }] }],
  });
});

test.each([['not-an-arn'], ['arn:aws:sagemaker:eu-west-1:111122223333:model/legacy'], ['arn:aws:sagemaker:eu-west-1:111122223333:endpoint/']])(
  'fromEndpointArn(%s): a synth error naming the path, the value, the form allowed and the fix (nothing thrown)',
  arn => {
    const { app, stack } = newStack();
    expect(() => ResilientEndpoint.fromEndpointArn(stack, 'Bad', arn).metricMemoryUtilization()).not.toThrow();
    expect(synthError(app)).toMatch(
      new RegExp(
        `\\[Test/Bad\\] fromEndpointArn: got '${arn.replace(/[/]/g, '\\/')}'; allowed: arn:<partition>:sagemaker:<region>:<account>:endpoint/<name>\\. Fix: `,
      ),
    );
  },
);

describe('instance counts and weights from code reach the endpoint (or are kept, on purpose)', () => {
  /**
   * What UpdateEndpoint does with the live variants (botocore sagemaker model, UpdateEndpoint and
   * VariantProperty): with RetainAllVariantProperties the live DesiredInstanceCount and DesiredWeight are
   * kept, except the properties ExcludeRetainedVariantProperties names, which come from the new config's
   * InitialInstanceCount / InitialVariantWeight.
   */
  function redeploy(endpoint: any, config: any, live: Record<string, { count: number; weight: number }>) {
    const retain = endpoint.RetainAllVariantProperties === true;
    const excluded = new Set((endpoint.ExcludeRetainedVariantProperties ?? []).map((x: any) => x.VariantPropertyType));
    return Object.fromEntries(
      config.ProductionVariants.map((v: any) => [
        v.VariantName,
        {
          count: retain && !excluded.has('DesiredInstanceCount') && live[v.VariantName] ? live[v.VariantName].count : v.InitialInstanceCount,
          weight: retain && !excluded.has('DesiredWeight') && live[v.VariantName] ? live[v.VariantName].weight : v.InitialVariantWeight,
        },
      ]),
    );
  }
  const deployed = (props: Partial<ResilientEndpointProps>) => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', { model: { image }, instanceType: SageMakerInstanceType.ML_M5_XLARGE, ...props });
    const t = Template.fromStack(stack);
    const endpoint = (Object.values(t.findResources('AWS::SageMaker::Endpoint'))[0] as any).Properties;
    const config = (Object.values(t.findResources('AWS::SageMaker::EndpointConfig'))[0] as any).Properties;
    return { endpoint, config, warnings: warnings(stack) };
  };

  test('autoscaling off: a changed instanceCount (2 → 3) is applied by the next deploy', () => {
    const { endpoint, config } = deployed({ instanceCount: 3, autoScaling: { enabled: false }, circuitBreaker: { enabled: false } });
    expect(redeploy(endpoint, config, { Primary: { count: 2, weight: 1 } })).toEqual({ Primary: { count: 3, weight: 1 } });
  });

  test("autoscaled, with a breaker and a fallback: a deploy keeps the scaler's counts and the breaker's weights", () => {
    const { endpoint, config, warnings: w } = deployed({ fallback: {} });
    expect(endpoint.ExcludeRetainedVariantProperties).toBeUndefined();
    const live = { Primary: { count: 4, weight: 0.5 }, Fallback: { count: 2, weight: 0.5 } };
    expect(redeploy(endpoint, config, live)).toEqual(live);
    expect(w.join('\n')).not.toMatch(/redeploy\./);
  });

  test("autoscaled, no fallback: the weights follow the config (a shadow's changed sampling applies), the counts stay the scaler's", () => {
    const { endpoint, config } = deployed({ shadow: { model: { image }, samplingPercent: 10 } });
    const live = { Primary: { count: 4, weight: 1 } };
    expect(redeploy(endpoint, config, live)).toEqual({ Primary: { count: 4, weight: 1 } });
    expect(endpoint.ExcludeRetainedVariantProperties).toEqual([{ VariantPropertyType: 'DesiredWeight' }]);
    expect(config.ShadowProductionVariants[0].InitialVariantWeight).toBe(0.1);
  });

  test('asking for what fights the scaler or the breaker is a warning that says what happens', () => {
    const { endpoint, warnings: w } = deployed({ fallback: {}, redeploy: { applyInstanceCounts: true, applyWeights: true } });
    expect(endpoint.ExcludeRetainedVariantProperties).toEqual([
      { VariantPropertyType: 'DesiredInstanceCount' },
      { VariantPropertyType: 'DesiredWeight' },
    ]);
    expect(w.join('\n')).toMatch(/every deploy sets the instance counts back to instanceCount/);
    expect(w.join('\n')).toMatch(/a deploy during an incident sends all traffic back to the primary/);
  });
});
