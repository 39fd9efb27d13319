/**
 * The breaker's function as it ships: the pre-built bundle (dist/lambda-bundles/circuit-breaker/index.js,
 * the asset CloudFormation deploys), run in a process of its own from a folder with no node_modules, with
 * the environment its construct writes and the variables Lambda sets (AWS_REGION and the role's
 * credentials). Every other suite drives the TypeScript source with mocked clients; this one checks what
 * they cannot: that the bundle loads alone (the SDK clients it needs are in it), and that those clients
 * sign and send the breaker's calls to real HTTP endpoints and read the answers, for an endpoint's own
 * function and for a shared one (its batched GetParameters and BatchGetItem). DynamoDB is dynalite;
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
import { Match, Template } from 'aws-cdk-lib/assertions';
import { ContainerImage, ResilientEndpoint, SageMakerInstanceType, SharedCircuitBreaker } from '../lib';
import { lambdaBundleDir } from '../lib/breaker/wiring';
import { CloudWatchFake } from './cloudwatch-fake';
import { LocalDynamoDb } from './local-dynamodb';
import { deployedValue } from './util';
import { LAMBDA_NODE_MAJOR, lambdaNode } from './lambda-node';

const REGION = 'eu-west-1';
const KEY_ID = 'ASIALOCALTESTKEY';
const TABLE = 'breaker-state';

const image = (repo: string) => ContainerImage.fromImageUri(`123456789012.dkr.ecr.${REGION}.amazonaws.com/${repo}:1`);
/** An endpoint on ml.m5.xlarge with a fallback on ml.m5.large; the rest (breaker, autoscaling) its defaults. */
const endpointProps = (endpointName: string) => ({
  endpointName,
  model: { image: image(endpointName) },
  instanceType: SageMakerInstanceType.ML_M5_XLARGE,
  fallback: { model: { image: image(`${endpointName}-lite`) }, instanceType: SageMakerInstanceType.ML_M5_LARGE },
});

/**
 * A synthesized stack as it deploys, for what the function reads: its table is `TABLE` (the name dynalite
 * serves) and each SSM parameter is named `/cfn/<logical id>` (a generated name, as CloudFormation gives it).
 */
class Deployed {
  private readonly template: Template;
  private readonly resources: Record<string, { Type: string; Properties?: any }>;

  constructor(stack: Stack) {
    this.template = Template.fromStack(stack);
    this.resources = this.template.toJSON().Resources;
  }

  /** The string a CloudFormation value deploys as. */
  public value(v: unknown): string {
    return deployedValue(v, {
      ref: id => {
        const type = this.resources[id]?.Type;
        if (type === 'AWS::DynamoDB::Table') return TABLE;
        if (type === 'AWS::SSM::Parameter') return `/cfn/${id}`;
        throw new Error(`a value refers to ${id} (${type}), which this test does not deploy`);
      },
    });
  }

  /** The environment of the one function whose variables include these. */
  public functionEnvironment(has: Record<string, unknown>): Record<string, string> {
    const fns = Object.values(this.template.findResources('AWS::Lambda::Function', { Properties: { Environment: { Variables: has } } }));
    expect(fns).toHaveLength(1);
    return Object.fromEntries(Object.entries(fns[0].Properties.Environment.Variables as Record<string, unknown>).map(([k, v]) => [k, this.value(v)]));
  }

  /** Every SSM parameter the stack creates with a value, by its deployed name. */
  public parameters(): [string, string][] {
    return Object.entries(this.resources)
      .filter(([, r]) => r.Type === 'AWS::SSM::Parameter')
      .map(([id, r]) => [`/cfn/${id}`, this.value(r.Properties.Value)]);
  }
}

interface Call {
  readonly target: string;
  readonly authorization: string;
  readonly body: any;
}

/** SSM, CloudWatch, SageMaker and Application Auto Scaling on one local server, as their JSON protocols answer. */
class AwsJsonServer {
  public readonly calls: Call[] = [];
  /** Parameter Store: name → value. */
  public readonly parameters = new Map<string, string>();
  /** Endpoint name → the weights last asked for. */
  public readonly weightsOf = new Map<string, unknown>();
  public readonly registered: any[] = [];
  /** Operation → how many more of its requests to refuse, and the error body to refuse them with (status 400). */
  private readonly refusals = new Map<string, { times: number; error: object }>();

  /** Refuses the next `times` requests of `operation` with a 400 and this error body, as the service does. */
  public refuse(operation: string, times: number, error: object): void {
    this.refusals.set(operation, { times, error });
  }
  /** Operation → answers held back until this many of its requests have arrived (then all go out). */
  private readonly barriers = new Map<string, { count: number; waiting: (() => void)[] }>();

  /** Holds the answers to `operation` until `count` of its requests have arrived: evaluations that run in step. */
  public holdUntil(operation: string, count: number): void {
    this.barriers.set(operation, { count, waiting: [] });
  }
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
        const operation = target.split('.').pop()!;
        const send = () => {
          const [status, out] = this.answer(operation, body);
          res.writeHead(status, {
            'content-type': target.startsWith('GraniteServiceVersion20100801') ? 'application/x-amz-json-1.0' : 'application/x-amz-json-1.1',
          });
          res.end(JSON.stringify(out));
        };
        const barrier = this.barriers.get(operation);
        if (!barrier) return send();
        barrier.waiting.push(send);
        if (barrier.waiting.length >= barrier.count) {
          this.barriers.delete(operation);
          barrier.waiting.forEach(f => f());
        }
      });
    });
    await new Promise<void>(resolve => this.server.listen(0, '127.0.0.1', resolve));
  }

  /** Forgets the calls, parameters, weights and registrations of an earlier test. */
  public reset(): void {
    this.calls.length = 0;
    this.parameters.clear();
    this.weightsOf.clear();
    this.registered.length = 0;
    this.refusals.clear();
    this.barriers.clear();
  }

  public stop(): Promise<void> {
    return new Promise(resolve => this.server.close(() => resolve()));
  }

  private answer(operation: string, body: any): [number, unknown] {
    const refusal = this.refusals.get(operation);
    if (refusal && refusal.times > 0) {
      refusal.times--;
      return [400, refusal.error];
    }
    switch (operation) {
      case 'GetParameter':
        return this.parameters.has(body.Name)
          ? [200, { Parameter: { Name: body.Name, Type: 'String', Value: this.parameters.get(body.Name), Version: 1 } }]
          : [400, { __type: 'ParameterNotFound', message: `Parameter ${body.Name} not found.` }];
      case 'GetParameters': {
        const names = body.Names as string[];
        return [
          200,
          {
            Parameters: names
              .filter(n => this.parameters.has(n))
              .map(Name => ({ Name, Type: 'String', Value: this.parameters.get(Name), Version: 1 })),
            InvalidParameters: names.filter(n => !this.parameters.has(n)),
          },
        ];
      }
      case 'PutParameter':
        this.parameters.set(body.Name, body.Value);
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
        this.weightsOf.set(body.EndpointName, body.DesiredWeightsAndCapacities);
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

/** How many runs the suite has started (each writes its result to a file of its own). */
let invocations = 0;
/** The Node.js the bundle runs on: 24, as Lambda's nodejs24.x, where it could be installed (test/lambda-node.ts). */
const NODE = lambdaNode();
/** The Node.js version each run reported. */
const ranOn = new Set<string>();

/**
 * Runs the shipped bundle's handler once, in a new node process started in `dir`: its exit code, its log
 * (stdout: the function's decision log) and stderr, and the handler's result (written to a result file of its own).
 */
function invoke(
  dir: string,
  env: Record<string, string>,
  event: object,
): Promise<{ code: number | null; stdout: string; stderr: string; result?: any }> {
  // One result file per run: two runs in step must not read each other's result.
  const out = path.join(dir, `result-${++invocations}.json`);
  const driver =
    `require('./index.js').handler(${JSON.stringify(event)})` +
    `.then(r => require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(r)), e => { console.error(e); process.exitCode = 1; });` +
    `require('fs').writeFileSync(${JSON.stringify(`${out}.node`)}, process.versions.node);`;
  return new Promise(resolve => {
    const child = spawn(NODE.path ?? process.execPath, ['-e', driver], {
      cwd: dir,
      // Lambda's variables (no others from this machine: no AWS profile, no NODE_PATH).
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', d => (stdout += d));
    child.stderr.on('data', d => (stderr += d));
    child.on('close', code => {
      if (fs.existsSync(`${out}.node`)) ranOn.add(fs.readFileSync(`${out}.node`, 'utf8'));
      resolve({ code, stdout, stderr, result: fs.existsSync(out) ? JSON.parse(fs.readFileSync(out, 'utf8')) : undefined });
    });
  });
}

describe('the shipped breaker bundle, alone in a process, against local AWS endpoints', () => {
  let db: LocalDynamoDb;
  let aws: AwsJsonServer;
  let dir: string;
  /** What Lambda sets for every function: its Region and its role's temporary credentials; and where the services are. */
  let lambdaEnv: Record<string, string>;
  /** The environment of endpoint 'reco''s own breaker function, as its construct writes it (synthesized once). */
  let ownFunction: Record<string, string>;
  const schedule = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };

  beforeAll(async () => {
    const stack = new Stack(new App(), 'Own', { env: { account: '123456789012', region: REGION } });
    new ResilientEndpoint(stack, 'E', endpointProps('reco'));
    ownFunction = new Deployed(stack).functionEnvironment({ ENDPOINT_NAME: 'reco' });
    db = await LocalDynamoDb.start(TABLE);
    // Host memory for the last ten minutes, a datapoint every 10 s (whatever period the construct chose,
    // its buckets have data), 100 requests and no 5XX in each: 90 % on 'reco' and 'reco-a', 40 % on 'reco-b'.
    const cw = new CloudWatchFake();
    const now = Math.floor(Date.now() / 10_000) * 10_000;
    for (const [endpoint, memory] of [
      ['reco', 90],
      ['reco-a', 90],
      ['reco-b', 40],
    ] as const) {
      const dims = { EndpointName: endpoint, VariantName: 'Primary' };
      for (let t = now - 600_000; t <= now - 10_000; t += 10_000) {
        cw.put('/aws/sagemaker/Endpoints', 'MemoryUtilization', dims, t, memory);
        cw.put('AWS/SageMaker', 'Invocations', dims, t, 100);
        cw.put('AWS/SageMaker', 'Invocation5XXErrors', dims, t, 0);
      }
    }
    aws = new AwsJsonServer(cw);
    await aws.start();
    // Only the bundle, in a folder whose parents have no node_modules (the SDK cannot come from there).
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'breaker-bundle-'));
    fs.copyFileSync(path.join(lambdaBundleDir('circuit-breaker')!, 'index.js'), path.join(dir, 'index.js'));
    lambdaEnv = {
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
  beforeEach(async () => {
    await db.clear();
    aws.reset();
  });
  afterAll(async () => {
    await aws?.stop();
    await db?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
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
    const fn = ownFunction;
    const level = fn.PARAMETER_NAME;
    expect(level).toMatch(/^\/cfn\//);
    const r = await invoke(dir, { ...fn, ...lambdaEnv }, schedule);
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
    expect(aws.calls[0].body).toEqual({ Name: level });
    // The level the containers read, the weights SageMaker was asked for, the state in DynamoDB.
    expect(aws.calls[4].body).toMatchObject({ Name: level, Overwrite: true });
    expect(JSON.parse(aws.parameters.get(level)!)).toMatchObject({ level: 1, state: 'DEGRADED' });
    expect(aws.weightsOf.get('reco')).toEqual([
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

  test("a shared function on the schedule: both endpoints' settings in one GetParameters, their states in one BatchGetItem; only the hot one degrades", async () => {
    const stack = new Stack(new App(), 'Shared', { env: { account: '123456789012', region: REGION } });
    const shared = new SharedCircuitBreaker(stack, 'Breaker');
    new ResilientEndpoint(stack, 'A', { ...endpointProps('reco-a'), circuitBreaker: { shared } });
    new ResilientEndpoint(stack, 'B', { ...endpointProps('reco-b'), circuitBreaker: { shared } });
    const deployed = new Deployed(stack);
    // Parameter Store as CloudFormation leaves it: each endpoint's settings (and each level's initial value).
    for (const [name, value] of deployed.parameters()) aws.parameters.set(name, value);
    const fn = deployed.functionEnvironment({ CONFIG_PARAMETERS: Match.anyValue() });
    const settingsNames = fn.CONFIG_PARAMETERS.split(',');
    expect(settingsNames).toHaveLength(2);
    const levelOf = (endpoint: string) =>
      JSON.parse(settingsNames.map(n => aws.parameters.get(n)!).find(v => JSON.parse(v).endpointName === endpoint)!).parameterName;

    const r = await invoke(dir, { ...fn, ...lambdaEnv }, schedule);
    expect(r.stderr).not.toMatch(/Cannot find module/);
    expect(r.code).toBe(0);
    expect(r.result.outcome).toBe('evaluated');
    expect(r.result.endpoints['reco-a']).toMatchObject({ outcome: 'evaluated', state: 'DEGRADED', level: 1 });
    expect(r.result.endpoints['reco-b']).toMatchObject({ outcome: 'evaluated', state: 'CLOSED', level: 0 });
    const targets = aws.calls.map(c => c.target);
    expect(targets.slice(0, 2)).toEqual(['AmazonSSM.GetParameters', 'AmazonSSM.GetParameters']);
    expect(aws.calls[0].body.Names.sort()).toEqual([...settingsNames].sort());
    expect(aws.calls[1].body.Names.sort()).toEqual([levelOf('reco-a'), levelOf('reco-b')].sort());
    expect(targets.filter(t => t.endsWith('.GetMetricData'))).toHaveLength(1);
    expect(r.result.calls.filter((c: string) => c === 'dynamodb:BatchGetItem')).toHaveLength(1);
    // What changed: reco-a's level, weights and scale-in; nothing of reco-b's.
    expect(aws.calls.filter(c => c.target === 'AmazonSSM.PutParameter').map(c => c.body.Name)).toEqual([levelOf('reco-a')]);
    expect(JSON.parse(aws.parameters.get(levelOf('reco-a'))!)).toMatchObject({ level: 1, state: 'DEGRADED' });
    expect([...aws.weightsOf.keys()]).toEqual(['reco-a']);
    expect(aws.registered.map(b => b.ResourceId)).toEqual(['endpoint/reco-a/variant/Primary']);
    expect(JSON.parse((await db.get('reco-a'))!.state.S!)).toMatchObject({ state: 'DEGRADED', share: 0.5 });
  });

  test('Parameter Store throttling the level write: the bundled SDK retries it, then the function does, and the level lands', async () => {
    const fn = ownFunction;
    // Five refusals: the SDK's four attempts (the function's maxAttempts) of its first try, and the first of its second.
    aws.refuse('PutParameter', 5, { __type: 'ThrottlingException', message: 'Rate exceeded' });
    const r = await invoke(dir, { ...fn, ...lambdaEnv }, schedule);
    expect(r.code).toBe(0);
    expect(r.result).toMatchObject({ outcome: 'evaluated', state: 'DEGRADED', level: 1 });
    expect(r.result.calls.filter((c: string) => c === 'ssm:PutParameter')).toHaveLength(2);
    expect(aws.calls.filter(c => c.target === 'AmazonSSM.PutParameter')).toHaveLength(6);
    expect(JSON.parse(aws.parameters.get(fn.PARAMETER_NAME)!)).toMatchObject({ level: 1, state: 'DEGRADED' });
    // After the level: weights and capacity, as without throttling.
    expect(aws.weightsOf.get('reco')).toEqual([
      { VariantName: 'Primary', DesiredWeight: 0.5 },
      { VariantName: 'Fallback', DesiredWeight: 0.5 },
    ]);
  });

  test('SageMaker refusing the weights because the endpoint is updating (its qualified error type): level and capacity still land, no failure', async () => {
    const fn = ownFunction;
    // The refusal SageMaker gives while an update is in progress (sagemaker-facts.md: "Cannot update
    // in-progress endpoint"), with the type qualified by its namespace and `Message` capitalized, as AWS's
    // JSON services may send them; the SDK reduces the type to the name after '#'.
    aws.refuse('UpdateEndpointWeightsAndCapacities', 1, {
      __type: 'com.amazon.coral.validate#ValidationException',
      Message: 'Cannot update in-progress endpoint "arn:aws:sagemaker:eu-west-1:123456789012:endpoint/reco".',
    });
    const r = await invoke(dir, { ...fn, ...lambdaEnv }, schedule);
    expect(r.code).toBe(0);
    expect(r.result).toMatchObject({ outcome: 'evaluated', state: 'DEGRADED', level: 1 });
    expect(r.result.reasons).toContain('endpoint update in progress (ValidationException): weights retried when the endpoint is InService again');
    expect(JSON.parse(aws.parameters.get(fn.PARAMETER_NAME)!)).toMatchObject({ level: 1, state: 'DEGRADED' });
    expect(aws.weightsOf.size).toBe(0);
    expect(aws.registered.map(b => b.ResourceId)).toEqual(['endpoint/reco/variant/Primary']);
  });

  test('an alarm and the schedule at once, two processes that both read the state before either writes: exactly one acts', async () => {
    const fn = ownFunction;
    // DescribeEndpoint is each evaluation's last read: both have read the item (version 0) when either claims it.
    aws.holdUntil('DescribeEndpoint', 2);
    const alarm = {
      source: 'aws.cloudwatch',
      'detail-type': 'CloudWatch Alarm State Change',
      detail: { alarmName: 'reco-Primary-breaker-HostMemory', state: { value: 'ALARM' } },
    };
    const runs = await Promise.all([invoke(dir, { ...fn, ...lambdaEnv }, alarm), invoke(dir, { ...fn, ...lambdaEnv }, schedule)]);
    expect(runs.map(r => r.code)).toEqual([0, 0]);
    expect(runs.map(r => r.result.outcome).sort()).toEqual(['evaluated', 'superseded']);
    expect(aws.calls.filter(c => c.target === 'SageMaker.DescribeEndpoint')).toHaveLength(2);
    // dynalite evaluated both conditional claims: one level write, one weight change, one item at version 2.
    expect(aws.calls.filter(c => c.target === 'AmazonSSM.PutParameter')).toHaveLength(1);
    expect(aws.calls.filter(c => c.target === 'SageMaker.UpdateEndpointWeightsAndCapacities')).toHaveLength(1);
    expect((await db.get('breaker'))!.version.N).toBe('2');
  });

  // Last: every run above was on Node.js 24, the runtime Lambda gives the function (nodejs24.x).
  (NODE.path ? test : test.skip)(
    NODE.path
      ? `every run above was on Node.js ${NODE.version}, as Lambda's nodejs${LAMBDA_NODE_MAJOR}.x runs the function`
      : `SKIPPED Node.js ${LAMBDA_NODE_MAJOR}: ${(NODE as { reason: string }).reason}; the bundle ran on this machine's Node.js ${process.versions.node} instead`,
    () => {
      expect(ranOn.size).toBeGreaterThan(0);
      expect([...ranOn]).toEqual([(NODE as { version: string }).version]);
      expect(Number([...ranOn][0].split('.')[0])).toBe(LAMBDA_NODE_MAJOR);
    },
  );
});

test("it ships the notice of every package esbuild put in it: name, version, license and the license's own text", () => {
  const notices = fs.readFileSync(path.join(lambdaBundleDir('circuit-breaker')!, 'THIRD-PARTY-NOTICES.txt'), 'utf8');
  const squeeze = (t: string) => t.replace(/\s+/g, ' ');
  const text = squeeze(notices);
  // The packages, from esbuild's own record of the bundle's inputs (dist/lambda-meta, written beside it).
  const meta = JSON.parse(fs.readFileSync(path.join(lambdaBundleDir('circuit-breaker')!, '..', '..', 'lambda-meta', 'circuit-breaker.json'), 'utf8'));
  const dirs = new Set(
    Object.keys(meta.inputs)
      .filter(k => k.includes('node_modules/'))
      .map(k => {
        const parts = k.split('/');
        const at = parts.lastIndexOf('node_modules');
        return parts.slice(0, at + (parts[at + 1].startsWith('@') ? 3 : 2)).join('/');
      }),
  );
  expect(dirs.size).toBeGreaterThan(20);
  expect([...dirs].some(d => d.endsWith('/mnemonist'))).toBe(true); // an MIT package, with its own copyright
  for (const dir of dirs) {
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    expect(notices).toContain(`  ${pkg.name}@${pkg.version} (${pkg.license})\n`);
    const own = fs.readdirSync(dir).find(f => /^licen[cs]e(\.(md|txt))?$/i.test(f));
    if (own) expect(text).toContain(squeeze(fs.readFileSync(path.join(dir, own), 'utf8').trim()));
    else expect(pkg.license).toBe('Apache-2.0'); // then its repository's Apache-2.0 text, which the others carry
  }
});
