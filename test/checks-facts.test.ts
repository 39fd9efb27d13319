// What the readiness checks read from a template (lib/checks/facts.ts), on a hand-written template
// with every shape CloudFormation allows (GetAtt or Ref, Join or Sub, a model with Containers, shadow
// variants, a shared breaker whose function is elsewhere), so each fact is pinned without the library
// having written the template. test/checks.test.ts runs the rules on the library's own templates.
import { collectEndpoints, valueKey } from '../lib/checks';

describe('valueKey: one spelling for a CloudFormation value, literal or not', () => {
  test.each<[unknown, string]>([
    ['ep', 'ep'],
    [5, '5'],
    [true, 'true'],
    [{ Ref: 'Name' }, '{Ref:Name}'],
    [{ 'Fn::GetAtt': ['Ep', 'EndpointName'] }, '{GetAtt:Ep.EndpointName}'],
    [{ 'Fn::GetAtt': 'Ep.EndpointName' }, '{GetAtt:Ep.EndpointName}'],
    [{ 'Fn::Join': ['/', ['endpoint', { Ref: 'Name' }, 'variant']] }, 'endpoint/{Ref:Name}/variant'],
    [{ 'Fn::Join': ['', ['endpoint/', { 'Fn::GetAtt': ['Ep', 'EndpointName'] }, '/variant/', 7]] }, 'endpoint/{GetAtt:Ep.EndpointName}/variant/7'],
    [{ 'Fn::Sub': 'endpoint/${Ep.EndpointName}/variant/${Variant}' }, 'endpoint/{GetAtt:Ep.EndpointName}/variant/{Ref:Variant}'],
    [{ 'Fn::Sub': ['endpoint/${Name}', { Name: 'x' }] }, 'endpoint/{Ref:Name}'],
    [{ 'Fn::ImportValue': 'shared-endpoint' }, '{Import:shared-endpoint}'],
    [{ 'Fn::ImportValue': { 'Fn::Sub': '${Env}-endpoint' } }, '{Import:{Ref:Env}-endpoint}'],
    [{ 'Fn::If': ['C', 'a', 'b'] }, '{"Fn::If":["C","a","b"]}'],
    [null, 'null'],
    [undefined, undefined as unknown as string],
  ])('%j → %s', (v, key) => {
    expect(valueKey(v)).toBe(key);
  });

  test('the same reference written with Join or Sub compares equal', () => {
    const join = { 'Fn::Join': ['', ['endpoint/', { 'Fn::GetAtt': ['Ep', 'EndpointName'] }, '/variant/Primary']] };
    const sub = { 'Fn::Sub': 'endpoint/${Ep.EndpointName}/variant/Primary' };
    expect(valueKey(join)).toBe(valueKey(sub));
  });
});

describe('collectEndpoints: the facts of each endpoint in a template', () => {
  const getAtt = (r: string, a: string) => ({ 'Fn::GetAtt': [r, a] });
  const template = {
    Resources: {
      Model: {
        Type: 'AWS::SageMaker::Model',
        Properties: {
          PrimaryContainer: { Image: 'i', Environment: { SAGEMAKER_MODEL_SERVER_WORKERS: '6', FROM_PARAM: { Ref: 'P' } } },
          EnableNetworkIsolation: true,
          VpcConfig: { SecurityGroupIds: ['sg'], Subnets: ['s'] },
        },
      },
      Lite: { Type: 'AWS::SageMaker::Model', Properties: { Containers: [{ Image: 'j', Environment: { DEGRADED_MODE: 'true' } }] } },
      Config: {
        Type: 'AWS::SageMaker::EndpointConfig',
        Properties: {
          ProductionVariants: [
            {
              VariantName: 'Primary',
              ModelName: getAtt('Model', 'ModelName'),
              InstanceType: 'ml.g4dn.xlarge',
              InitialInstanceCount: 2,
              InitialVariantWeight: 0.9,
              VolumeSizeInGB: 30,
            },
            { VariantName: 'Fallback', ModelName: { Ref: 'Lite' }, InstanceType: 'ml.m5.xlarge' },
          ],
          ShadowProductionVariants: [
            { VariantName: 'Shadow', ModelName: getAtt('Lite', 'ModelName'), InstanceType: 'ml.m5.large', InitialVariantWeight: 0 },
          ],
          KmsKeyId: 'alias/k',
          DataCaptureConfig: { EnableCapture: false, InitialSamplingPercentage: 1, DestinationS3Uri: 's3://b/capture' },
        },
      },
      Endpoint: {
        Type: 'AWS::SageMaker::Endpoint',
        Properties: {
          EndpointConfigName: getAtt('Config', 'EndpointConfigName'),
          EndpointName: 'ep',
          DeploymentConfig: { AutoRollbackConfiguration: { Alarms: [{ AlarmName: 'a' }, { AlarmName: 'b' }] } },
        },
      },
      PrimaryTarget: {
        Type: 'AWS::ApplicationAutoScaling::ScalableTarget',
        Properties: { ResourceId: 'endpoint/ep/variant/Primary', MinCapacity: 2, MaxCapacity: 4 },
      },
      FallbackTarget: {
        Type: 'AWS::ApplicationAutoScaling::ScalableTarget',
        Properties: {
          ResourceId: { 'Fn::Join': ['', ['endpoint/', getAtt('Endpoint', 'EndpointName'), '/variant/Fallback']] },
          MinCapacity: 1,
          MaxCapacity: 3,
        },
      },
      OtherTarget: {
        Type: 'AWS::ApplicationAutoScaling::ScalableTarget',
        Properties: { ResourceId: 'endpoint/ep-2/variant/Primary', MinCapacity: 9, MaxCapacity: 9 },
      },
      MemoryAlarm: {
        Type: 'AWS::CloudWatch::Alarm',
        Properties: {
          MetricName: 'MemoryUtilization',
          Namespace: '/aws/sagemaker/Endpoints',
          Threshold: 85,
          Dimensions: [{ Name: 'EndpointName', Value: 'ep' }],
        },
      },
      MemoryAlarmByGetAtt: {
        Type: 'AWS::CloudWatch::Alarm',
        Properties: {
          MetricName: 'MemoryUtilization',
          Namespace: '/aws/sagemaker/Endpoints',
          Threshold: 90,
          Dimensions: [
            { Name: 'VariantName', Value: 'Primary' },
            { Name: 'EndpointName', Value: getAtt('Endpoint', 'EndpointName') },
          ],
        },
      },
      BreakerTrigger: {
        Type: 'AWS::CloudWatch::Alarm',
        Properties: {
          AlarmName: 'ep-Primary-breaker-host-memory',
          MetricName: 'MemoryUtilization',
          Namespace: '/aws/sagemaker/Endpoints',
          Threshold: 80,
          Dimensions: [{ Name: 'EndpointName', Value: 'ep' }],
        },
      },
      OtherEndpointAlarm: {
        Type: 'AWS::CloudWatch::Alarm',
        Properties: {
          MetricName: 'MemoryUtilization',
          Namespace: '/aws/sagemaker/Endpoints',
          Threshold: 70,
          Dimensions: [{ Name: 'EndpointName', Value: 'ep-2' }],
        },
      },
      InvocationNamespaceAlarm: {
        Type: 'AWS::CloudWatch::Alarm',
        Properties: {
          MetricName: 'MemoryUtilization',
          Namespace: 'AWS/SageMaker',
          Threshold: 60,
          Dimensions: [{ Name: 'EndpointName', Value: 'ep' }],
        },
      },
      CpuAlarm: {
        Type: 'AWS::CloudWatch::Alarm',
        Properties: {
          MetricName: 'CPUUtilization',
          Namespace: '/aws/sagemaker/Endpoints',
          Threshold: 50,
          Dimensions: [{ Name: 'EndpointName', Value: 'ep' }],
        },
      },
      OwnLogs: { Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 90 } },
      OwnBreaker: {
        Type: 'AWS::Lambda::Function',
        Properties: { Environment: { Variables: { ENDPOINT_NAME: 'ep' } }, LoggingConfig: { LogGroup: { Ref: 'OwnLogs' } } },
      },
      OtherBreaker: { Type: 'AWS::Lambda::Function', Properties: { Environment: { Variables: { ENDPOINT_NAME: 'ep-2' } } } },
      Settings: { Type: 'AWS::SSM::Parameter', Properties: { Tags: { 'resilient-endpoint:breaker-settings': 'ep' } } },
      SharedLogs: { Type: 'AWS::Logs::LogGroup', Properties: {} },
      SharedBreaker: {
        Type: 'AWS::Lambda::Function',
        Properties: {
          Environment: { Variables: { CONFIG_PARAMETERS: { 'Fn::Join': [',', [{ Ref: 'Settings' }, { Ref: 'OtherSettings' }]] } } },
          LoggingConfig: { LogGroup: { Ref: 'SharedLogs' } },
        },
      },
      SettingsOfAFleetEndpoint: {
        Type: 'AWS::SSM::Parameter',
        Properties: { Tags: { 'resilient-endpoint:breaker-settings': getAtt('Endpoint', 'EndpointName') } },
      },
      LoneConfig: {
        Type: 'AWS::SageMaker::EndpointConfig',
        Properties: { ProductionVariants: [{ VariantName: 'Only', ModelName: { Ref: 'Missing' }, InstanceType: 'ml.t2.medium' }] },
      },
    },
  };

  test('an endpoint with everything: variants, shadow, scaling, alarms, breakers', () => {
    const [ep] = collectEndpoints(template);
    expect(ep).toEqual({
      configLogicalId: 'Config',
      endpointLogicalId: 'Endpoint',
      endpointName: 'ep',
      nameKeys: ['ep', '{GetAtt:Endpoint.EndpointName}'],
      variants: [
        {
          variantName: 'Primary',
          instanceType: 'ml.g4dn.xlarge',
          initialInstanceCount: 2,
          weight: 0.9,
          volumeSizeInGb: 30,
          environment: { SAGEMAKER_MODEL_SERVER_WORKERS: '6' }, // the Ref'd value is not literal
          networkIsolation: true,
          vpc: true,
          shadow: false,
        },
        {
          variantName: 'Fallback',
          instanceType: 'ml.m5.xlarge',
          initialInstanceCount: 1,
          weight: 1,
          volumeSizeInGb: undefined,
          environment: { DEGRADED_MODE: 'true' },
          networkIsolation: false,
          vpc: false,
          shadow: false,
        },
        {
          variantName: 'Shadow',
          instanceType: 'ml.m5.large',
          initialInstanceCount: 1,
          weight: 0,
          volumeSizeInGb: undefined,
          environment: { DEGRADED_MODE: 'true' },
          networkIsolation: false,
          vpc: false,
          shadow: true,
        },
      ],
      kmsKeyId: true,
      dataCapture: { enabled: false, sampling: 1, destination: 's3://b/capture' },
      deploymentRollbackAlarms: 2,
      budget: false, // no AWS::Budgets::Budget in this template
      driftMonitors: 0, // nor a drift function or Model Monitor schedule
      scaling: { Primary: { min: 2, max: 4 }, Fallback: { min: 1, max: 3 } },
      memoryAlarmThresholds: [85, 90],
      breakers: [{ retentionDays: 90 }, { retentionDays: undefined }, { functionElsewhere: true }],
    });
  });

  test('a config without an endpoint: no name, nothing found by name; its defaults', () => {
    const lone = collectEndpoints(template)[1];
    expect(lone).toEqual({
      configLogicalId: 'LoneConfig',
      endpointLogicalId: undefined,
      endpointName: undefined,
      nameKeys: [],
      variants: [
        {
          variantName: 'Only',
          instanceType: 'ml.t2.medium',
          initialInstanceCount: 1,
          weight: 1,
          volumeSizeInGb: undefined,
          environment: {},
          networkIsolation: false,
          vpc: false,
          shadow: false,
        },
      ],
      kmsKeyId: false,
      dataCapture: undefined,
      deploymentRollbackAlarms: 0,
      budget: false,
      driftMonitors: 0,
      scaling: {},
      memoryAlarmThresholds: [],
      breakers: [],
    });
    expect(collectEndpoints(template)).toHaveLength(2);
  });

  test('capture without EnableCapture is on; an endpoint named by a parameter is found through its Ref', () => {
    const t = {
      Resources: {
        C: {
          Type: 'AWS::SageMaker::EndpointConfig',
          Properties: { ProductionVariants: [], DataCaptureConfig: { InitialSamplingPercentage: { Ref: 'Pct' } } },
        },
        E: { Type: 'AWS::SageMaker::Endpoint', Properties: { EndpointConfigName: { Ref: 'C' }, EndpointName: { Ref: 'Name' } } },
        T: {
          Type: 'AWS::ApplicationAutoScaling::ScalableTarget',
          Properties: { ResourceId: { 'Fn::Sub': 'endpoint/${Name}/variant/Primary' }, MinCapacity: 1, MaxCapacity: 2 },
        },
      },
    };
    expect(collectEndpoints(t)).toEqual([
      expect.objectContaining({
        endpointLogicalId: 'E',
        endpointName: undefined,
        nameKeys: ['{Ref:Name}', '{GetAtt:E.EndpointName}'],
        dataCapture: { enabled: true, sampling: { Ref: 'Pct' }, destination: undefined },
        scaling: { Primary: { min: 1, max: 2 } },
      }),
    ]);
    expect(collectEndpoints({})).toEqual([]);
  });

  test('optional parts left out, as CloudFormation allows: an imported config name, a serverless variant, functions without environment or logging, untagged parameters, a log group without properties, blue/green without rollback alarms', () => {
    const t = {
      Resources: {
        // Listed first, so every lookup below passes over them before it finds the resource it wants.
        Elsewhere: { Type: 'AWS::SageMaker::Endpoint', Properties: { EndpointConfigName: { 'Fn::ImportValue': 'other-config' } } },
        Plain: { Type: 'AWS::Lambda::Function', Properties: { Code: { ZipFile: 'x' }, Role: 'r', Handler: 'i.h', Runtime: 'nodejs20.x' } },
        EmptyEnv: { Type: 'AWS::Lambda::Function', Properties: { Code: { ZipFile: 'x' }, Role: 'r', Environment: {} } },
        Untagged: { Type: 'AWS::SSM::Parameter', Properties: { Type: 'String', Value: 'v' } },
        // The settings of a shared breaker whose function is in another stack: the functions above are
        // searched for it (and have no environment to search).
        Settings: {
          Type: 'AWS::SSM::Parameter',
          Properties: { Type: 'String', Value: '{}', Tags: { 'resilient-endpoint:breaker-settings': 'svc' } },
        },
        Forever: { Type: 'AWS::Logs::LogGroup' },
        C: {
          Type: 'AWS::SageMaker::EndpointConfig',
          Properties: {
            ProductionVariants: [{ VariantName: 'Serverless', ModelName: 'm', ServerlessConfig: { MaxConcurrency: 5, MemorySizeInMB: 2048 } }],
          },
        },
        E: {
          Type: 'AWS::SageMaker::Endpoint',
          Properties: {
            EndpointConfigName: { 'Fn::GetAtt': ['C', 'EndpointConfigName'] },
            EndpointName: 'svc',
            DeploymentConfig: { BlueGreenUpdatePolicy: { TrafficRoutingConfiguration: { Type: 'ALL_AT_ONCE' } } },
          },
        },
        // Three breakers of the endpoint: logging to a named group (not a resource here), no logging
        // configuration, and a log group without properties (which never expires).
        Named: {
          Type: 'AWS::Lambda::Function',
          Properties: { Environment: { Variables: { ENDPOINT_NAME: 'svc' } }, LoggingConfig: { LogGroup: '/custom/breaker' } },
        },
        Unlogged: { Type: 'AWS::Lambda::Function', Properties: { Environment: { Variables: { ENDPOINT_NAME: 'svc' } } } },
        Kept: {
          Type: 'AWS::Lambda::Function',
          Properties: { Environment: { Variables: { ENDPOINT_NAME: 'svc' } }, LoggingConfig: { LogGroup: { Ref: 'Forever' } } },
        },
      },
    };
    expect(collectEndpoints(t)).toEqual([
      expect.objectContaining({
        configLogicalId: 'C',
        endpointLogicalId: 'E',
        endpointName: 'svc',
        variants: [expect.objectContaining({ variantName: 'Serverless', instanceType: '', initialInstanceCount: 1 })],
        deploymentRollbackAlarms: 0,
        breakers: [{ retentionDays: undefined }, { retentionDays: undefined }, { retentionDays: undefined }, { functionElsewhere: true }],
      }),
    ]);
  });
});
