/**
 * The breaker's function as it ships: the pre-built bundle (dist/lambda-bundles/circuit-breaker/index.js,
 * the asset CloudFormation deploys), run in a process of its own from a folder with no node_modules, with
 * the environment its construct writes and the variables Lambda sets (AWS_REGION and the role's
 * credentials). Every other suite drives the TypeScript source with mocked clients; this one checks what
 * they cannot: that the bundle loads alone (the SDK clients it needs are in it), and that those clients
 * sign and send the breaker's calls to real HTTP endpoints and read the answers. DynamoDB is dynalite;
 * SSM, CloudWatch, SageMaker and Application Auto Scaling are one local server that answers their JSON
 * protocols (the `X-Amz-Target` operation, epoch-second timestamps, errors as `{"__type": ...}` with a
 * 400), CloudWatch with its bucket layout (test/cloudwatch-fake.ts).
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ContainerImage, ResilientEndpoint, SageMakerInstanceType } from '../lib';
import { lambdaBundleDir } from '../lib/breaker/wiring';
import { CloudWatchFake } from './cloudwatch-fake';
import { LocalDynamoDb } from './local-dynamodb';

const REGION = 'eu-west-1';
const KEY_ID = 'ASIALOCALTESTKEY';
const LEVEL_PARAMETER = '/resilient-endpoint/reco/level';

/** The breaker function's environment as the construct writes it, its references resolved to the names given. */
function functionEnvironment(tableName: string): Record<string, string> {
  const stack = new Stack(new App(), 'Bundle', { env: { account: '123456789012', region: REGION } });
  new ResilientEndpoint(stack, 'E', {
    endpointName: 'reco',
    model: { image: ContainerImage.fromImageUri(`123456789012.dkr.ecr.${REGION}.amazonaws.com/reco:1`) },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    fallback: {
      model: { image: ContainerImage.fromImageUri(`123456789012.dkr.ecr.${REGION}.amazonaws.com/reco-lite:1`) },
      instanceType: SageMakerInstanceType.ML_M5_LARGE,
    },
  });
  const template = Template.fromStack(stack);
  const fns = Object.values(
    template.findResources('AWS::Lambda::Function', { Properties: { Environment: { Variables: { ENDPOINT_NAME: 'reco' } } } }),
  );
  expect(fns).toHaveLength(1);
  const resources = template.toJSON().Resources as Record<string, { Type: string }>;
  const name = (ref: string): string => {
    const type = resources[ref]?.Type;
    if (type === 'AWS::DynamoDB::Table') return tableName;
    if (type === 'AWS::SSM::Parameter') return LEVEL_PARAMETER;
    throw new Error(`the function's environment refers to ${ref} (${type}), which this test does not deploy`);
  };
  const value = (v: unknown): string => {
    if (typeof v === 'string') return v;
    const o = v as Record<string, any>;
    if (o.Ref) return name(o.Ref);
    throw new Error(`unexpected CloudFormation value in the function's environment: ${JSON.stringify(v)}`);
  };
  return Object.fromEntries(Object.entries(fns[0].Properties.Environment.Variables as Record<string, unknown>).map(([k, v]) => [k, value(v)]));
}

interface Call {
  readonly target: string;
  readonly authorization: string;
  readonly body: any;
}

/** SSM, CloudWatch, SageMaker and Application Auto Scaling on one local server, as their JSON protocols answer. */
class AwsJsonServer {
  public readonly calls: Call[] = [];
  public parameter: string | undefined;
  public weights: unknown;
  public readonly registered: any[] = [];
  private server!: http.Server;

  constructor(private readonly cloudwatch: CloudWatchFake) {}

  public get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  public async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', d => (raw += d));
      req.on('end', () => {
        const target = String(req.headers['x-amz-target'] ?? '');
        const body = raw ? JSON.parse(raw) : {};
        this.calls.push({ target, authorization: String(req.headers.authorization ?? ''), body });
        const [status, out] = this.answer(target.split('.').pop()!, body);
        res.writeHead(status, {
          'content-type': target.startsWith('GraniteServiceVersion20100801') ? 'application/x-amz-json-1.0' : 'application/x-amz-json-1.1',
        });
        res.end(JSON.stringify(out));
      });
    });
    await new Promise<void>(resolve => this.server.listen(0, '127.0.0.1', resolve));
  }

  public stop(): Promise<void> {
    return new Promise(resolve => this.server.close(() => resolve()));
  }

  private answer(operation: string, body: any): [number, unknown] {
    switch (operation) {
      case 'GetParameter':
        return this.parameter === undefined
          ? [400, { __type: 'ParameterNotFound', message: `Parameter ${body.Name} not found.` }]
          : [200, { Parameter: { Name: body.Name, Type: 'String', Value: this.parameter, Version: 1 } }];
      case 'PutParameter':
        this.parameter = body.Value;
        return [200, { Version: 2, Tier: 'Standard' }];
      case 'GetMetricData': {
        // JSON protocol timestamps are epoch seconds, both ways.
        const out = this.cloudwatch.getMetricData(
          { ...body, StartTime: new Date(body.StartTime * 1000), EndTime: new Date(body.EndTime * 1000) },
          Date.now(),
        );
        const results = (out.MetricDataResults ?? []).map(r => ({ ...r, Timestamps: (r.Timestamps ?? []).map(t => new Date(t).getTime() / 1000) }));
        return [200, { MetricDataResults: results, Messages: [] }];
      }
      case 'DescribeEndpoint':
        return [
          200,
          {
            EndpointName: body.EndpointName,
            EndpointArn: `arn:aws:sagemaker:${REGION}:123456789012:endpoint/${body.EndpointName}`,
            EndpointConfigName: 'config',
            EndpointStatus: 'InService',
            CreationTime: 1764590400,
            LastModifiedTime: 1764590400,
            ProductionVariants: [
              { VariantName: 'Primary', CurrentWeight: 1, DesiredWeight: 1, CurrentInstanceCount: 1, DesiredInstanceCount: 1 },
              { VariantName: 'Fallback', CurrentWeight: 0, DesiredWeight: 0, CurrentInstanceCount: 1, DesiredInstanceCount: 1 },
            ],
          },
        ];
      case 'UpdateEndpointWeightsAndCapacities':
        this.weights = body.DesiredWeightsAndCapacities;
        return [200, { EndpointArn: `arn:aws:sagemaker:${REGION}:123456789012:endpoint/${body.EndpointName}` }];
      case 'DescribeScalableTargets':
        return [
          200,
          {
            ScalableTargets: (body.ResourceIds as string[]).map(ResourceId => ({
              ServiceNamespace: 'sagemaker',
              ResourceId,
              ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
              MinCapacity: 1,
              MaxCapacity: 2,
              RoleARN: 'arn:aws:iam::123456789012:role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/x',
              CreationTime: 1764590400,
              SuspendedState: { DynamicScalingInSuspended: false, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: false },
            })),
          },
        ];
      case 'RegisterScalableTarget':
        this.registered.push(body);
        return [200, { ScalableTargetARN: `arn:aws:application-autoscaling:${REGION}:123456789012:scalable-target/x` }];
      default:
        return [400, { __type: 'UnknownOperationException', message: `no such operation: ${operation}` }];
    }
  }
}

/**
 * Runs the shipped bundle's handler once, in a new node process started in `dir`: its exit code, its log
 * (stdout: the function's decision log) and stderr, and the handler's result (written to result.json).
 */
function invoke(
  dir: string,
  env: Record<string, string>,
  event: object,
): Promise<{ code: number | null; stdout: string; stderr: string; result?: any }> {
  const out = path.join(dir, 'result.json');
  fs.rmSync(out, { force: true });
  const driver =
    `require('./index.js').handler(${JSON.stringify(event)})` +
    `.then(r => require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(r)), e => { console.error(e); process.exitCode = 1; });`;
  return new Promise(resolve => {
    const child = spawn(process.execPath, ['-e', driver], {
      cwd: dir,
      // Lambda's variables (no others from this machine: no AWS profile, no NODE_PATH).
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', d => (stdout += d));
    child.stderr.on('data', d => (stderr += d));
    child.on('close', code => resolve({ code, stdout, stderr, result: fs.existsSync(out) ? JSON.parse(fs.readFileSync(out, 'utf8')) : undefined }));
  });
}

describe('the shipped breaker bundle, alone in a process, against local AWS endpoints', () => {
  let db: LocalDynamoDb;
  let aws: AwsJsonServer;
  let dir: string;
  let env: Record<string, string>;
  const dims = { EndpointName: 'reco', VariantName: 'Primary' };

  beforeAll(async () => {
    db = await LocalDynamoDb.start('breaker-state');
    // Host memory at 90 % for the last ten minutes, a datapoint every 10 s (whatever period the
    // construct chose, its buckets have data), 100 requests and no 5XX in each.
    const cw = new CloudWatchFake();
    const now = Math.floor(Date.now() / 10_000) * 10_000;
    for (let t = now - 600_000; t <= now - 10_000; t += 10_000) {
      cw.put('/aws/sagemaker/Endpoints', 'MemoryUtilization', dims, t, 90);
      cw.put('AWS/SageMaker', 'Invocations', dims, t, 100);
      cw.put('AWS/SageMaker', 'Invocation5XXErrors', dims, t, 0);
    }
    aws = new AwsJsonServer(cw);
    await aws.start();
    // Only the bundle, in a folder whose parents have no node_modules (the SDK cannot come from there).
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'breaker-bundle-'));
    fs.copyFileSync(path.join(lambdaBundleDir('circuit-breaker')!, 'index.js'), path.join(dir, 'index.js'));
    env = {
      ...functionEnvironment(db.tableName),
      AWS_REGION: REGION,
      AWS_DEFAULT_REGION: REGION,
      AWS_ACCESS_KEY_ID: KEY_ID,
      AWS_SECRET_ACCESS_KEY: 'local-secret',
      AWS_SESSION_TOKEN: 'local-session-token',
      AWS_LAMBDA_FUNCTION_NAME: 'breaker',
      AWS_ENDPOINT_URL: aws.url,
      AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
    };
  });
  afterAll(async () => {
    await aws?.stop();
    await db?.stop();
  });

  test('no folder above the bundle has node_modules', () => {
    const parents = [];
    for (let d = dir; ; d = path.dirname(d)) {
      parents.push(d);
      if (path.dirname(d) === d) break;
    }
    expect(parents.length).toBeGreaterThan(1);
    expect(parents.filter(d => fs.existsSync(path.join(d, 'node_modules')))).toEqual([]);
  });

  test('90 % host memory on the schedule: it degrades, with each call signed and sent as AWS receives it', async () => {
    const r = await invoke(dir, env, { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} });
    expect(r.stderr).not.toMatch(/Cannot find module/);
    expect(r.code).toBe(0);
    const result = r.result;
    expect(result).toMatchObject({ outcome: 'evaluated', state: 'DEGRADED', level: 1 });
    expect(result.calls).toEqual([
      'dynamodb:GetItem',
      'ssm:GetParameter',
      'cloudwatch:GetMetricData',
      'sagemaker:DescribeEndpoint',
      'application-autoscaling:DescribeScalableTargets',
      'dynamodb:PutItem',
      'ssm:PutParameter',
      'sagemaker:UpdateEndpointWeightsAndCapacities',
      'application-autoscaling:RegisterScalableTarget',
      'dynamodb:PutItem',
    ]);
    // What the local server received, in order: each service's own operation name and its SigV4 scope.
    expect(aws.calls.map(c => c.target)).toEqual([
      'AmazonSSM.GetParameter',
      'GraniteServiceVersion20100801.GetMetricData',
      'SageMaker.DescribeEndpoint',
      'AnyScaleFrontendService.DescribeScalableTargets',
      'AmazonSSM.PutParameter',
      'SageMaker.UpdateEndpointWeightsAndCapacities',
      'AnyScaleFrontendService.RegisterScalableTarget',
    ]);
    const scopes = aws.calls.map(c => /Credential=([^,]+),/.exec(c.authorization)?.[1].split('/').slice(2).join('/'));
    expect(scopes).toEqual([
      `${REGION}/ssm/aws4_request`,
      `${REGION}/monitoring/aws4_request`,
      `${REGION}/sagemaker/aws4_request`,
      `${REGION}/application-autoscaling/aws4_request`,
      `${REGION}/ssm/aws4_request`,
      `${REGION}/sagemaker/aws4_request`,
      `${REGION}/application-autoscaling/aws4_request`,
    ]);
    expect(aws.calls.every(c => c.authorization.startsWith(`AWS4-HMAC-SHA256 Credential=${KEY_ID}/`))).toBe(true);
    expect(aws.calls[0].body).toEqual({ Name: LEVEL_PARAMETER });
    // The level the containers read, the weights SageMaker was asked for, the state in DynamoDB.
    expect(aws.calls[4].body).toMatchObject({ Name: LEVEL_PARAMETER, Overwrite: true });
    expect(JSON.parse(aws.parameter!)).toMatchObject({ level: 1, state: 'DEGRADED' });
    expect(aws.weights).toEqual([
      { VariantName: 'Primary', DesiredWeight: 0.5 },
      { VariantName: 'Fallback', DesiredWeight: 0.5 },
    ]);
    // The primary's scale-in suspended (the fallback's minimum of 1 already holds half of one instance's load).
    expect(aws.registered).toEqual([
      {
        ServiceNamespace: 'sagemaker',
        ResourceId: 'endpoint/reco/variant/Primary',
        ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
        SuspendedState: { DynamicScalingInSuspended: true, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: false },
      },
    ]);
    // An endpoint's own function keeps one item, under the key 'breaker', claimed from version 0 and then recorded.
    const stored = await db.get('breaker');
    expect(JSON.parse(stored!.state.S!)).toMatchObject({ state: 'DEGRADED', share: 0.5 });
    expect(stored!.version.N).toBe('2');
  });
});
