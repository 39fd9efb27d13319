/**
 * What AWS does with the synthesized templates (../shared/reference/real-account.md), checked on the
 * templates themselves: who may publish to the alarm topic, unit filters, container dimensions vs
 * alarm dimensions, guardrail sizes, token-valued names, redundant DependsOn, legacy bucket ACLs.
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, CfnParameter, Fn, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { CircuitBreaker, ContainerImage, ProductionReadinessChecks, ResilientEndpoint, RuleLevel, SageMakerInstanceType } from '../lib';
import { SCALABLE_TARGET_KEY } from '../lambda/circuit-breaker/capacity';
import { appContext, deployedValue, exampleStacks, iamStatements, newStack } from './util';

type Resources = Record<string, { Type: string; Properties?: any; DependsOn?: string | string[] }>;

const ENV = { partition: 'aws', region: 'us-east-1', account: '123456789012' };

/** Evaluates the intrinsic functions IAM conditions and names use here, with fixed pseudo parameters. */
function evaluate(v: any, res: Resources): string {
  const pseudo: Record<string, string> = { 'AWS::Partition': ENV.partition, 'AWS::Region': ENV.region, 'AWS::AccountId': ENV.account };
  return deployedValue(v, {
    ref: id => {
      if (pseudo[id]) return pseudo[id];
      if (res[id]?.Type === 'AWS::SNS::Topic') return `arn:aws:sns:${ENV.region}:${ENV.account}:${id}`;
      if (res[id]?.Type === 'AWS::CloudWatch::Alarm') return evaluate(res[id].Properties.AlarmName, res);
      throw new Error(`cannot evaluate the Ref ${id}`);
    },
    getAtt: (id, attribute) => {
      if (attribute === 'Arn' && res[id]?.Type?.startsWith('AWS::CloudWatch::')) {
        return `arn:aws:cloudwatch:${ENV.region}:${ENV.account}:alarm:${evaluate(res[id].Properties.AlarmName, res)}`;
      }
      throw new Error(`cannot evaluate the Fn::GetAtt ${id}.${attribute}`);
    },
  });
}

/** IAM's ArnLike: `*` matches any run of characters. */
const arnLike = (pattern: string, arn: string) =>
  new RegExp(
    `^${pattern
      .split('*')
      .map(x => x.replace(/[.?+^$()[\]{}|\\/]/g, '\\$&'))
      .join('.*')}$`,
  ).test(arn);

const asList = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);

/** For each alarm action: can CloudWatch publish to that topic (topic policy and KMS key policy)? */
function unauthorizedAlarmActions(template: { [key: string]: any }): string[] {
  const res: Resources = template.Resources;
  const problems: string[] = [];
  for (const [id, a] of Object.entries(res).filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm' || r.Type === 'AWS::CloudWatch::CompositeAlarm')) {
    const alarmArn = `arn:aws:cloudwatch:${ENV.region}:${ENV.account}:alarm:${evaluate(a.Properties.AlarmName, res)}`;
    for (const action of [...asList(a.Properties.AlarmActions), ...asList(a.Properties.OKActions)]) {
      const topicId = (action as any).Ref;
      const policies = Object.values(res).filter(r => r.Type === 'AWS::SNS::TopicPolicy' && r.Properties.Topics.some((t: any) => t.Ref === topicId));
      const allows = policies
        .flatMap(p => p.Properties.PolicyDocument.Statement)
        .some(
          (s: any) =>
            s.Effect === 'Allow' &&
            asList(s.Principal?.Service).includes('cloudwatch.amazonaws.com') &&
            asList(s.Action).includes('sns:Publish') &&
            evaluate(s.Condition?.StringEquals?.['aws:SourceAccount'] ?? '', res) === ENV.account &&
            arnLike(evaluate(s.Condition?.ArnLike?.['aws:SourceArn'] ?? '', res), alarmArn),
        );
      if (!allows) problems.push(`${id}: topic ${topicId} does not let CloudWatch publish for ${alarmArn}`);
      const keyId = res[topicId]?.Properties?.KmsMasterKeyId?.['Fn::GetAtt']?.[0];
      if (keyId) {
        const keyOk = res[keyId].Properties.KeyPolicy.Statement.some(
          (s: any) =>
            s.Effect === 'Allow' &&
            asList(s.Principal?.Service).includes('cloudwatch.amazonaws.com') &&
            ['kms:Decrypt', 'kms:GenerateDataKey*'].every(x => asList(s.Action).includes(x)),
        );
        if (!keyOk) problems.push(`${id}: key ${keyId} of topic ${topicId} does not let CloudWatch use it`);
      }
    }
  }
  return problems;
}

const { recommender, rec, clu } = exampleStacks();
const templates = { recommender: rec.toJSON(), clustering: clu.toJSON() };

describe.each(Object.entries(templates))('%s example as AWS reads it', (_name, template) => {
  const res: Resources = template.Resources;
  const of = (type: string) => Object.entries(res).filter(([, r]) => r.Type === type);

  test('every alarm action reaches its topic: CloudWatch may publish (scoped to the account and these alarms) and use the key', () => {
    const actions = of('AWS::CloudWatch::CompositeAlarm').flatMap(([, a]) => asList(a.Properties.AlarmActions));
    expect(actions.length).toBeGreaterThan(0);
    expect(unauthorizedAlarmActions(template)).toEqual([]);
  });

  test('no alarm filters on a unit (an alarm whose Unit differs from the data never sees any)', () => {
    const alarms = of('AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(10);
    for (const [, a] of alarms) {
      expect(a.Properties.Unit).toBeUndefined();
      for (const m of a.Properties.Metrics ?? []) expect(m.MetricStat?.Unit).toBeUndefined();
    }
  });

  test('the application-stage alarms watch exactly the dimensions the container is told to publish with', () => {
    const models = new Map(of('AWS::SageMaker::Model').map(([id, m]) => [id, m.Properties.PrimaryContainer.Environment]));
    const stageAlarms = of('AWS::CloudWatch::Alarm').filter(([, a]) => a.Properties.Dimensions?.some((d: any) => d.Name === 'Stage'));
    expect(stageAlarms.length).toBeGreaterThanOrEqual(3);
    const envs = [...models.values()];
    for (const [, a] of stageAlarms) {
      const dim = Object.fromEntries(a.Properties.Dimensions.map((d: any) => [d.Name, d.Value]));
      const env = envs.find(e => e.RESILIENT_ENDPOINT_VARIANT === dim.VariantName);
      expect(env).toBeDefined();
      expect(env.RESILIENT_ENDPOINT_NAME).toBe(dim.EndpointName);
      expect(env.RESILIENT_ENDPOINT_METRICS_NAMESPACE).toBe(a.Properties.Namespace);
    }
  });

  test('no DependsOn that a reference already implies', () => {
    const refs = (v: any, out = new Set<string>()): Set<string> => {
      if (Array.isArray(v)) v.forEach(x => refs(x, out));
      else if (v && typeof v === 'object') {
        if (typeof v.Ref === 'string') out.add(v.Ref);
        if (Array.isArray(v['Fn::GetAtt'])) out.add(v['Fn::GetAtt'][0]);
        Object.values(v).forEach(x => refs(x, out));
      }
      return out;
    };
    // aws-cdk-lib's lambda.Function depends on its role construct (to order the role's DefaultPolicy
    // first), which also lists the role it references: that one is aws-cdk-lib's, not ours.
    const cdkOwn = (r: { Type: string }, d: string) => r.Type === 'AWS::Lambda::Function' && res[d]?.Type === 'AWS::IAM::Role';
    const redundant = Object.entries(res).flatMap(([id, r]) => {
      const referenced = refs(r.Properties);
      return asList(r.DependsOn)
        .filter(d => referenced.has(d) && !cdkOwn(r, d))
        .map(d => `${id} → ${d}`);
    });
    expect(redundant).toEqual([]);
  });

  test('no legacy AccessControl on buckets; access logs are delivered under a bucket policy', () => {
    const buckets = of('AWS::S3::Bucket');
    expect(buckets.length).toBeGreaterThan(0);
    for (const [, b] of buckets) expect(b.Properties.AccessControl).toBeUndefined();
    const logTarget = buckets.find(([, b]) => b.Properties.LoggingConfiguration)![1].Properties.LoggingConfiguration.DestinationBucketName.Ref;
    const policy = of('AWS::S3::BucketPolicy').find(([, p]) => p.Properties.Bucket.Ref === logTarget)![1];
    expect(policy.Properties.PolicyDocument.Statement).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Allow', Principal: { Service: 'logging.s3.amazonaws.com' }, Action: 's3:PutObject' }),
      ]),
    );
  });
});

test('canary in whole instances (1 of the 2 clustering instances = 50 % of traffic); the execution role may read the rollback alarms', () => {
  const ep = Object.values(clu.findResources('AWS::SageMaker::Endpoint'))[0] as any;
  expect(ep.Properties.DeploymentConfig.BlueGreenUpdatePolicy.TrafficRoutingConfiguration.CanarySize).toEqual({ Type: 'INSTANCE_COUNT', Value: 1 });
  const rollback = ep.Properties.DeploymentConfig.AutoRollbackConfiguration.Alarms.map((a: any) => a.AlarmName.Ref);
  const statements = iamStatements(clu);
  const describe = statements.find(s => s.Action === 'cloudwatch:DescribeAlarms');
  expect(describe.Resource.map((r: any) => r['Fn::GetAtt'][0]).sort()).toEqual([...rollback].sort());
});

test("the example app's cdk.json carries every recommended feature flag of the pinned aws-cdk-lib", () => {
  const recommended = JSON.parse(fs.readFileSync(require.resolve('aws-cdk-lib/recommended-feature-flags.json'), 'utf8'));
  const ctx = appContext();
  const missing = Object.entries(recommended)
    .filter(([k, v]) => JSON.stringify(ctx[k]) !== JSON.stringify(v))
    .map(([k]) => k);
  expect(missing).toEqual([]);
  expect(Object.keys(recommended).length).toBeGreaterThan(50);
  expect(fs.existsSync(path.join(__dirname, '..', 'cdk.json'))).toBe(true);
});

describe('token-valued names', () => {
  test('an endpoint name from a parameter: the breaker may act on exactly that endpoint (its ARN by Ref), names stay tokens', () => {
    const { stack } = newStack();
    const name = new CfnParameter(stack, 'EndpointName', { type: 'String' });
    const e = new ResilientEndpoint(stack, 'E', {
      model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      endpointName: name.valueAsString,
    });
    const t = Template.fromStack(stack).toJSON();
    const statements = iamStatements(t);
    const sm = statements.find((s: any) => asList(s.Action).includes('sagemaker:UpdateEndpointWeightsAndCapacities'));
    expect(sm.Resource).toEqual({ Ref: stack.getLogicalId(e.cfnEndpoint) });
    expect(JSON.stringify(t)).not.toMatch(/\$\{token\[/i); // no lower-cased token string anywhere
    const target = Object.values(t.Resources as Resources).find(r => r.Type === 'AWS::ApplicationAutoScaling::ScalableTarget')!;
    expect(target.Properties.ResourceId).toEqual({ 'Fn::Join': ['', ['endpoint/', { Ref: 'EndpointName' }, '/variant/Primary']] });
    // The readiness checks recognise the parameter-named endpoint's own alarms, targets and breaker.
    expect(ProductionReadinessChecks.checkTemplate(t).filter(f => f.level === RuleLevel.ERROR)).toEqual([]);
  });

  test('CircuitBreaker alone for an endpoint with a generated name: IAM ARN built with Fn::Join, never a lower-cased token', () => {
    const { stack } = newStack();
    const ep = new sagemaker.CfnEndpoint(stack, 'Ep', { endpointConfigName: 'cfg' });
    new CircuitBreaker(stack, 'B', {
      endpointName: ep.attrEndpointName,
      primaryVariantName: 'AllTraffic',
      primaryInstanceType: SageMakerInstanceType.ML_M5_XLARGE,
    });
    const t = Template.fromStack(stack).toJSON();
    const statements = iamStatements(t);
    const sm = statements.find((s: any) => asList(s.Action).includes('sagemaker:DescribeEndpoint'));
    expect(sm.Resource).toEqual({
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':sagemaker:us-east-1:123456789012:endpoint/', { 'Fn::GetAtt': ['Ep', 'EndpointName'] }]],
    });
  });

  test('imported by a token name: the ARN keeps the token intact', () => {
    const { stack } = newStack();
    const imported = ResilientEndpoint.fromEndpointName(stack, 'I', Fn.importValue('shared-endpoint-name'));
    expect(JSON.stringify(stack.resolve(imported.endpointArn))).toContain('"Fn::ImportValue":"shared-endpoint-name"');
  });

  test('a correct hand-written endpoint with a generated name passes the readiness checks', () => {
    const stack = new Stack(new App());
    const model = new sagemaker.CfnModel(stack, 'Model', {
      executionRoleArn: 'arn:aws:iam::123456789012:role/r',
      primaryContainer: { image: '123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1' },
      vpcConfig: { securityGroupIds: ['sg-0123456789abcdef0'], subnets: ['subnet-0123456789abcdef0'] },
    });
    const config = new sagemaker.CfnEndpointConfig(stack, 'Config', {
      productionVariants: [
        { variantName: 'AllTraffic', modelName: model.attrModelName, instanceType: 'ml.m5.xlarge', initialInstanceCount: 2, initialVariantWeight: 1 },
      ],
      dataCaptureConfig: { initialSamplingPercentage: 1, destinationS3Uri: 's3://capture/x', captureOptions: [{ captureMode: 'Input' }] },
    });
    const ep = new sagemaker.CfnEndpoint(stack, 'Endpoint', { endpointConfigName: config.attrEndpointConfigName });
    const target = new appscaling.ScalableTarget(stack, 'Target', {
      serviceNamespace: appscaling.ServiceNamespace.SAGEMAKER,
      scalableDimension: 'sagemaker:variant:DesiredInstanceCount',
      resourceId: `endpoint/${ep.attrEndpointName}/variant/AllTraffic`,
      minCapacity: 2,
      maxCapacity: 4,
    });
    target.scaleToTrackMetric('Qps', { predefinedMetric: appscaling.PredefinedMetric.SAGEMAKER_VARIANT_INVOCATIONS_PER_INSTANCE, targetValue: 9000 });
    new cloudwatch.Alarm(stack, 'Memory', {
      metric: new cloudwatch.Metric({
        namespace: '/aws/sagemaker/Endpoints',
        metricName: 'MemoryUtilization',
        statistic: 'Maximum',
        dimensionsMap: { EndpointName: ep.attrEndpointName, VariantName: 'AllTraffic' },
      }),
      threshold: 85,
      evaluationPeriods: 3,
    });
    new CircuitBreaker(stack, 'Breaker', {
      endpointName: ep.attrEndpointName,
      primaryVariantName: 'AllTraffic',
      primaryInstanceType: SageMakerInstanceType.ML_M5_XLARGE,
    });
    const findings = ProductionReadinessChecks.checkTemplate(Template.fromStack(stack).toJSON());
    expect(findings.filter(f => f.level === RuleLevel.ERROR).map(f => f.ruleId)).toEqual([]);
    expect(findings.map(f => f.ruleId)).not.toContain('RE-CircuitBreaker');
  });
});

test("the recommender's endpoint ARN in its breaker policy is the endpoint's own Ref", () => {
  const statements = iamStatements(rec);
  const sm = statements.find(s => asList(s.Action).includes('sagemaker:UpdateEndpointWeightsAndCapacities'));
  expect(sm.Resource).toEqual({ Ref: recommender.getLogicalId(recommender.endpoint.cfnEndpoint) });
});

describe('Regions whose CloudFormation does not know the newest properties yet (MetricsConfig, ScalableTarget Tags)', () => {
  const lagging = () => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', {
      model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
      instanceType: SageMakerInstanceType.ML_G5_12XLARGE,
      fallback: {},
      metricPublishing: { enabled: false },
      circuitBreaker: { tagScalableTargets: false },
      monitoring: { notify: { emails: ['oncall@example.com'] } },
    });
    return Template.fromStack(stack).toJSON();
  };
  const t = lagging();
  const of = (type: string) => Object.values(t.Resources as Resources).filter(r => r.Type === type);

  test('no MetricsConfig and no Tags on any scalable target are written', () => {
    expect(of('AWS::SageMaker::EndpointConfig')[0].Properties.MetricsConfig).toBeUndefined();
    const targets = of('AWS::ApplicationAutoScaling::ScalableTarget');
    expect(targets).toHaveLength(2);
    for (const target of targets) expect(target.Properties.Tags).toBeUndefined();
  });

  test('the breaker then works on 1-minute data, without the per-GPU signal', () => {
    const fn = of('AWS::Lambda::Function')[0].Properties.Environment.Variables;
    expect(fn).toMatchObject({ METRIC_PERIOD_SECONDS: '60', PER_GPU_METRICS: 'false' });
    const triggers = of('AWS::CloudWatch::Alarm').filter(a => /-breaker-/.test(a.Properties.AlarmName));
    const period = (a: any) => a.Properties.Period ?? a.Properties.Metrics?.find((m: any) => m.MetricStat)?.MetricStat.Period;
    // SageMaker's own metrics fall back to 1 minute; the guard's are the container's custom metrics, published
    // with StorageResolution 1 whatever MetricsConfig says (CloudWatch keeps custom high-resolution data), so 10 s.
    const own = triggers.filter(a => !/-breaker-Guard/.test(a.Properties.AlarmName));
    const guard = triggers.filter(a => /-breaker-Guard/.test(a.Properties.AlarmName));
    expect(own.map(period)).toEqual([60, 60, 600]);
    expect(guard.map(period)).toEqual([10, 10]);
    expect(JSON.stringify(t)).not.toMatch(/SELECT MAX\(GPUMemoryUtilization\)/);
  });

  test("the capacity hold's grant allows exactly the calls the function makes, without tags", () => {
    const register = iamStatements(t).find(s => asList(s.Action).includes('application-autoscaling:RegisterScalableTarget'));
    expect(register.Condition).toEqual({
      StringEquals: {
        'application-autoscaling:service-namespace': 'sagemaker',
        'application-autoscaling:scalable-dimension': 'sagemaker:variant:DesiredInstanceCount',
      },
    });
    expect(evaluate(register.Resource, t.Resources)).toBe(`arn:aws:application-autoscaling:${ENV.region}:${ENV.account}:scalable-target/*`);
    // The request context of the function's RegisterScalableTarget calls (the other side of the contract):
    const request = SCALABLE_TARGET_KEY;
    const context = {
      'application-autoscaling:service-namespace': request.ServiceNamespace,
      'application-autoscaling:scalable-dimension': request.ScalableDimension,
    };
    for (const [key, value] of Object.entries(register.Condition.StringEquals)) expect(context[key as keyof typeof context]).toBe(value);
  });
});

test("every model's container knows its Region (SageMaker hosting does not promise AWS_REGION; boto3 without one raises NoRegionError)", () => {
  for (const [t, region] of [
    [rec, ENV.region],
    [clu, ENV.region],
  ] as const) {
    const models = Object.values(t.toJSON().Resources as Resources).filter(r => r.Type === 'AWS::SageMaker::Model');
    expect(models.length).toBeGreaterThan(0);
    for (const m of models) expect(m.Properties.PrimaryContainer.Environment.AWS_DEFAULT_REGION).toBe(region);
  }
  // A region-agnostic stack: the stack's own Region at deploy.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const agnostic = new Stack(app, 'Agnostic');
  new ResilientEndpoint(agnostic, 'E', {
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1') },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
  });
  const model = Object.values(Template.fromStack(agnostic).toJSON().Resources as Resources).find(r => r.Type === 'AWS::SageMaker::Model')!;
  expect(model.Properties.PrimaryContainer.Environment.AWS_DEFAULT_REGION).toEqual({ Ref: 'AWS::Region' });
});
