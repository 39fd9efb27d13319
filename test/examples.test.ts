/**
 * The example models as the containers will see them: the archive this repo builds is a valid
 * model.tar.gz with the files where each container looks, and the model's environment points there.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as zlib from 'zlib';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Construct, IConstruct } from 'constructs';
import { ProductionReadinessChecks } from '../lib';
import { ClusteringStack } from '../lib/examples/clustering-stack';
import {
  exampleAcknowledgements,
  exampleEnv,
  exampleMemoryProfilePath,
  exampleModelArtifact,
  exampleMonitoring,
  RecommenderStack,
} from '../lib/examples/recommender-stack';
import { ResilientEndpoint } from '../lib/resilient-endpoint';
import { deployedValue, exampleStacks, warnings } from './util';

/** The members of a .tar.gz (ustar/pax): name → contents. */
function untar(file: string): Map<string, Buffer> {
  const tar = zlib.gunzipSync(fs.readFileSync(file));
  const out = new Map<string, Buffer>();
  let pending: string | undefined;
  for (let off = 0; off + 512 <= tar.length;) {
    const header = tar.subarray(off, off + 512);
    if (header.every(b => b === 0)) break;
    const name = header.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    const prefix = header.subarray(345, 500).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(header.subarray(124, 136).toString('utf8').replace(/\0.*$/s, '').trim() || '0', 8);
    const type = String.fromCharCode(header[156]);
    const body = tar.subarray(off + 512, off + 512 + size);
    if (type === 'x') {
      const path = /\d+ path=([^\n]+)\n/.exec(body.toString('utf8'));
      pending = path?.[1];
    } else if (type === '0' || type === '\0') {
      out.set(pending ?? (prefix ? `${prefix}/${name}` : name), Buffer.from(body));
      pending = undefined;
    }
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

const { rec, clu, recommender, clustering } = exampleStacks();
const envOf = (t: typeof rec, variant = 0) =>
  (Object.values(t.findResources('AWS::SageMaker::Model')) as any[])[variant].Properties.PrimaryContainer.Environment;

/**
 * Each example as it deploys: the settings its docs and incidents promise (docs/examples.md; the
 * recommender is incident A's fix, the clustering model incident B's), read from the synthesized
 * templates the suite shares (no synthesis per test). Expected values are typed from the examples'
 * stated settings, not computed.
 */
describe('the examples as deployed', () => {
  const GiB = 1024 ** 3;
  /** Resources of a type, by logical id order. */
  const of = (t: Template, type: string) => Object.values(t.findResources(type)).map((r: any) => r.Properties);
  const variants = (t: Template) =>
    of(t, 'AWS::SageMaker::EndpointConfig')[0].ProductionVariants.map((v: any) => ({
      name: v.VariantName,
      type: v.InstanceType,
      count: v.InitialInstanceCount,
      weight: v.InitialVariantWeight,
    }));
  /** Each scalable target's variant, bounds and target-tracking policies (metric → target value). */
  const scaling = (t: Template) => {
    const json = t.toJSON().Resources;
    return Object.entries(json)
      .filter(([, r]: any) => r.Type === 'AWS::ApplicationAutoScaling::ScalableTarget')
      .map(([id, r]: any) => ({
        variant: r.Properties.ResourceId.split('/').pop(),
        min: r.Properties.MinCapacity,
        max: r.Properties.MaxCapacity,
        policies: (Object.values(json) as any[])
          .filter(p => p.Type === 'AWS::ApplicationAutoScaling::ScalingPolicy' && p.Properties.ScalingTargetId.Ref === id)
          .map(p => p.Properties.TargetTrackingScalingPolicyConfiguration)
          .map(c => [c.PredefinedMetricSpecification?.PredefinedMetricType ?? c.CustomizedMetricSpecification.MetricName, c.TargetValue]),
      }));
  };
  /** The model of a variant (by variant name, through the endpoint config). */
  const containerOf = (t: Template, variant: string) => {
    const v = of(t, 'AWS::SageMaker::EndpointConfig')[0].ProductionVariants.find((x: any) => x.VariantName === variant);
    return t.toJSON().Resources[v.ModelName['Fn::GetAtt'][0]].Properties.PrimaryContainer;
  };
  const env = (t: Template, variant: string) => containerOf(t, variant).Environment;
  /** The image URI as it deploys in us-east-1 (the examples' Region when CDK_DEFAULT_REGION is unset). */
  const imageOf = (t: Template, variant: string) =>
    deployedValue(containerOf(t, variant).Image, { ref: id => ({ 'AWS::URLSuffix': 'amazonaws.com' })[id] ?? `<${id}>` });
  /** The example's measured profile, as `npm run profile:examples` wrote it. */
  const profile = (name: string) =>
    JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'examples', 'models', name, 'memory-profile.json'), 'utf8'));
  /** What a construct acknowledges: rule id → reason. */
  const acknowledged = (c: IConstruct) =>
    Object.assign({}, ...c.node.metadata.filter(m => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY).map(m => m.data)) as Record<
      string,
      string
    >;

  test('both in us-east-1 when the CLI resolved no Region', () => {
    // jest sets no CDK_DEFAULT_REGION: the examples fall back to us-east-1, as the CLI does.
    expect([recommender.region, clustering.region]).toEqual(['us-east-1', 'us-east-1']);
  });

  describe('recommender (incident A)', () => {
    test('ml.g4dn.2xlarge: Primary 2 instances taking all traffic, a 1-instance Fallback at weight 0 for the breaker', () => {
      expect(variants(rec)).toEqual([
        { name: 'Primary', type: 'ml.g4dn.2xlarge', count: 2, weight: 1 },
        { name: 'Fallback', type: 'ml.g4dn.2xlarge', count: 1, weight: 0 },
      ]);
    });

    test('autoscaled 2–8 on 40 QPS per instance (2,400 invocations per minute); the fallback from its 1 instance to the same 8 at 500 QPS', () => {
      // SageMakerVariantInvocationsPerInstance counts invocations per minute per instance (Application Auto
      // Scaling's predefined metric for SageMaker): 40 QPS × 60; the lighter fallback 500 × 60.
      expect(scaling(rec)).toEqual([
        { variant: 'Primary', min: 2, max: 8, policies: [['SageMakerVariantInvocationsPerInstance', 2400]] },
        { variant: 'Fallback', min: 1, max: 8, policies: [['SageMakerVariantInvocationsPerInstance', 30000]] },
      ]);
    });

    test("incident A's length tiers: the primary takes ≤ 1024 events, 512 when degraded; the fallback 256 in degraded mode", () => {
      expect(env(rec, 'Primary')).toMatchObject({ MAX_SEQ_LEN: '1024', DEGRADED_MAX_SEQ_LEN: '512' });
      expect(env(rec, 'Primary').DEGRADED_MODE).toBeUndefined();
      expect(env(rec, 'Fallback')).toMatchObject({ MAX_SEQ_LEN: '256', DEGRADED_MAX_SEQ_LEN: '256', DEGRADED_MODE: 'true' });
    });

    test('memory: 4 GiB GPU and 3 GiB host per copy on the primary, 2 and 2 on the fallback; the primary guarded by the recommender profile', () => {
      expect(env(rec, 'Primary')).toMatchObject({
        RESILIENT_ENDPOINT_GPU_FOOTPRINT_BYTES: String(4 * GiB),
        RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES: String(3 * GiB),
        RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES: String(profile('recommender').baselineBytes),
        RESILIENT_ENDPOINT_PROFILE_DEVICE: 'cpu',
      });
      expect(JSON.parse(env(rec, 'Primary').RESILIENT_ENDPOINT_MEMORY_CURVE)).toEqual(profile('recommender').curve);
      expect(env(rec, 'Fallback')).toMatchObject({
        RESILIENT_ENDPOINT_GPU_FOOTPRINT_BYTES: String(2 * GiB),
        RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES: String(2 * GiB),
      });
      // The fallback has no profile of its own.
      expect(Object.keys(env(rec, 'Fallback')).filter(k => k.includes('PROFILE') || k.includes('CURVE'))).toEqual([]);
    });

    test("AWS's PyTorch GPU image of the Region (TorchServe) and the recommender archive, for both variants", () => {
      for (const v of ['Primary', 'Fallback']) {
        expect(imageOf(rec, v)).toBe('763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-inference:2.3.0-gpu-py311-cu121-ubuntu20.04-sagemaker');
        expect(env(rec, v).TS_DEFAULT_WORKERS_PER_MODEL).toBeDefined(); // TorchServe's variables: the server was detected
      }
      expect(containerOf(rec, 'Fallback').ModelDataUrl).toEqual(containerOf(rec, 'Primary').ModelDataUrl);
      expect(containerOf(rec, 'Primary').ModelDataUrl).not.toEqual(containerOf(clu, 'Primary').ModelDataUrl);
    });
  });

  describe('clustering (incident B)', () => {
    test('ml.m5.xlarge (not the ml.t2.medium of the incident): one Primary variant of 2 instances, sized for the 17× peak, no fallback', () => {
      // The planner on the profile's mean latency (2.113 ms over powerlaw:100:200000, measured on a quiet machine: the
      // 30.47 ms of the profile before was measured at load 12): 2.113 ms × 680 QPS / 1000 × 1.3 = 1.87 → 2 busy vCPUs;
      // an ml.m5.xlarge has 4 (6 workers, 4 vCPUs) → 1 instance, and the planner's minimum of 2.
      expect(variants(clu)).toEqual([{ name: 'Primary', type: 'ml.m5.xlarge', count: 2, weight: 1 }]);
    });

    test('autoscaled 2–24 on memory (70 %: the guard’s in-flight memory, load-proportional) as well as on requests (1,325 QPS per instance: 70 % of what 4 busy vCPUs serve)', () => {
      // The in-flight target: (70 − the static 4.10 % of 6 workers × the profile's 111.9 MiB warm baseline of 16 GiB) ÷ 90 × 100 = 73.2.
      // 4 × 1000 / 2.113 ms = 1,893 requests/s an instance; 70 % of it is 1,325.3 → 1,325 QPS → 79,500 a minute.
      expect(scaling(clu)).toEqual([
        {
          variant: 'Primary',
          min: 2,
          max: 24,
          policies: [
            ['SageMakerVariantInvocationsPerInstance', 79500],
            ['GuardInFlightPercent', 73.2],
          ],
        },
      ]);
    });

    test('rows per request: 200,000, 20,000 when degraded; the inference code from the archive', () => {
      expect(env(clu, 'Primary')).toMatchObject({
        SAGEMAKER_PROGRAM: 'inference.py',
        SAGEMAKER_SUBMIT_DIRECTORY: '/opt/ml/model/code',
        MAX_SEQ_LEN: '200000',
        DEGRADED_MAX_SEQ_LEN: '20000',
      });
      expect(env(clu, 'Primary').DEGRADED_MODE).toBeUndefined();
    });

    test('memory: a 2,100 MiB host footprint per copy, no GPU; guarded by the clustering profile', () => {
      expect(env(clu, 'Primary')).toMatchObject({
        RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES: String(2100 * 1024 ** 2),
        RESILIENT_ENDPOINT_PROFILE_BASELINE_BYTES: String(profile('clustering').baselineBytes),
      });
      expect(JSON.parse(env(clu, 'Primary').RESILIENT_ENDPOINT_MEMORY_CURVE)).toEqual(profile('clustering').curve);
      expect(env(clu, 'Primary').RESILIENT_ENDPOINT_GPU_FOOTPRINT_BYTES).toBeUndefined();
    });

    test("AWS's scikit-learn image of the Region", () => {
      expect(imageOf(clu, 'Primary')).toBe('683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3');
    });
  });

  test('acknowledged, with reasons: the network, drift and budget left to the owner, the unsubscribed topic; the CPU profile on a GPU for the recommender', () => {
    const common = ['RE-Network', 'RE-Drift', 'RE-Budget', 'RE-AlarmTopicUnsubscribed'];
    const rules = (e: ResilientEndpoint) => Object.keys(acknowledged(e)).map(k => k.replace(/^Annotation::/, ''));
    expect(rules(recommender.endpoint)).toEqual([...common, 'PrimaryCpuProfileOnGpu']);
    expect(rules(clustering.endpoint)).toEqual(common);
    for (const reason of [...Object.values(acknowledged(recommender.endpoint)), ...Object.values(acknowledged(clustering.endpoint))]) {
      expect(reason).toMatch(/^Example stack/);
    }
    // So synthesis shows no warning, and the readiness checks (cdk synth with the plugin) find nothing.
    expect([warnings(recommender), warnings(clustering)]).toEqual([[], []]);
    const app = recommender.node.root as App;
    const stacks = app.synth().stacks;
    const report = new ProductionReadinessChecks().validate({
      templatePaths: stacks.map(s => s.templateFullPath),
      stackTemplates: stacks.map(s => ({ templatePath: s.templateFullPath, stackConstructPath: s.hierarchicalId })),
      appConstruct: app,
    } as any);
    expect(report.violations.map(v => `${v.violatingResources[0].constructPath} ${v.ruleName}`)).toEqual([]);
  });

  test("the helpers: the CLI's Region and account, else us-east-1; e-mail notifications and the unsubscribed-topic acknowledgement by alarmEmails", () => {
    const saved = { region: process.env.CDK_DEFAULT_REGION, account: process.env.CDK_DEFAULT_ACCOUNT };
    try {
      process.env.CDK_DEFAULT_REGION = 'eu-west-2';
      process.env.CDK_DEFAULT_ACCOUNT = '111122223333';
      expect(exampleEnv({ description: 'd' })).toEqual({ description: 'd', env: { account: '111122223333', region: 'eu-west-2' } });
      delete process.env.CDK_DEFAULT_REGION;
      expect(exampleEnv({}).env).toEqual({ account: '111122223333', region: 'us-east-1' });
      expect(exampleEnv({ env: { region: 'ap-south-1' } }).env).toEqual({ region: 'ap-south-1' });
    } finally {
      for (const [k, v] of [
        ['CDK_DEFAULT_REGION', saved.region],
        ['CDK_DEFAULT_ACCOUNT', saved.account],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    // A model not built yet: the source tree's dist/models path, so the asset error names where `npm run bundle` writes it.
    expect(exampleModelArtifact('not-built')).toBe(path.join(__dirname, '..', 'dist', 'models', 'not-built', 'model.tar.gz'));
    // The memory profile from the source tree is the committed file, not the build's copy in dist/models (stale after
    // a re-profile, missing before `npm run bundle`: the simulator read an endpoint without a profile then).
    for (const name of ['recommender', 'clustering']) {
      expect(exampleMemoryProfilePath(name)).toBe(path.join(__dirname, '..', 'examples', 'models', name, 'memory-profile.json'));
    }
    expect(exampleMemoryProfilePath('not-profiled')).toBe(path.join(__dirname, '..', 'models', 'not-profiled', 'memory-profile.json'));
    expect(exampleMonitoring({})).toBeUndefined();
    expect(exampleMonitoring({ alarmEmails: [] })).toBeUndefined();
    expect(exampleMonitoring({ alarmEmails: ['ops@example.com'] })).toEqual({ notify: { emails: ['ops@example.com'] } });
    const ids = (props: { alarmEmails?: string[] }) => {
      const e = new Construct(new Stack(), 'E');
      exampleAcknowledgements(e as unknown as ResilientEndpoint, props);
      return Object.keys(acknowledged(e)).map(k => k.replace(/^Annotation::/, ''));
    };
    expect(ids({ alarmEmails: [] })).toEqual(['RE-Network', 'RE-Drift', 'RE-Budget', 'RE-AlarmTopicUnsubscribed']);
    expect(ids({ alarmEmails: ['ops@example.com'] })).toEqual(['RE-Network', 'RE-Drift', 'RE-Budget']);
  });
});

describe('clustering model.tar.gz (scikit-learn image)', () => {
  const files = untar(exampleModelArtifact('clustering'));

  test('model.json at the root: the scikit-learn image extracts model.tar.gz into /opt/ml/model and passes it to model_fn', () => {
    const model = JSON.parse(files.get('model.json')!.toString());
    expect(model).toMatchObject({ algorithm: 'k-means', k: 3, trainedOn: 300 });
    expect(model.centroids).toHaveLength(3);
    // Fitted on the shipped data, in standardized space (the scaler is fitted on the same sample at load):
    // mapped back, three blobs around (2, 2), (8, 3) and (5, 8).
    const sample: number[][] = model.scaling.sample;
    expect(sample).toHaveLength(300);
    const mean = [0, 1].map(i => sample.reduce((a, p) => a + p[i], 0) / sample.length);
    const std = [0, 1].map(i => Math.sqrt(sample.reduce((a, p) => a + (p[i] - mean[i]) ** 2, 0) / sample.length));
    const raw = model.centroids.map(([cx, cy]: number[]) => [cx * std[0] + mean[0], cy * std[1] + mean[1]]);
    const near = (x: number, y: number) => raw.some(([cx, cy]: number[]) => Math.hypot(cx - x, cy - y) < 0.5);
    expect([near(2, 2), near(8, 3), near(5, 8)]).toEqual([true, true, true]);
  });

  test("code/inference.py with the runtime helper beside it; the model's environment points there", () => {
    // sagemaker-containers imports SAGEMAKER_PROGRAM from SAGEMAKER_SUBMIT_DIRECTORY, which may be the
    // code directory inside the model (as the SageMaker Python SDK sets it for network-isolated models).
    expect(files.get('code/inference.py')!.toString()).toMatch(/def model_fn\(model_dir\)[\s\S]*def predict_fn/);
    for (const f of ['__init__.py', 'degrade.py', 'tiers.py', 'metrics.py']) expect(files.has(`code/resilient_endpoint_runtime/${f}`)).toBe(true);
    expect(envOf(clu)).toMatchObject({
      SAGEMAKER_PROGRAM: 'inference.py',
      SAGEMAKER_SUBMIT_DIRECTORY: '/opt/ml/model/code',
      MAX_SEQ_LEN: '200000', // rows: about what 6 MiB of CSV holds
      DEGRADED_MAX_SEQ_LEN: '20000',
    });
  });
});

describe('recommender model.tar.gz (PyTorch image)', () => {
  const files = untar(exampleModelArtifact('recommender'));

  test('code/inference.py, where the PyTorch inference toolkit loads it from the model', () => {
    expect(files.get('code/inference.py')!.toString()).toMatch(
      /def model_fn[\s\S]*def predict_fn[\s\S]*def output_fn\(prediction, accept, context=None\)/,
    );
    expect(files.has('code/resilient_endpoint_runtime/tiers.py')).toBe(true);
    expect(envOf(rec)).toMatchObject({ MAX_SEQ_LEN: '1024', DEGRADED_MAX_SEQ_LEN: '512', TS_MAX_REQUEST_SIZE: '6291456' });
  });

  test('archives are reproducible: rebuilding gives the same bytes (stable asset hash)', () => {
    // Rebuilt elsewhere: the suites synthesizing the examples meanwhile read dist/models.
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'models-'));
    try {
      execFileSync('python3', [path.join(__dirname, '..', 'scripts', 'build-models.py'), '--out', out], { stdio: 'ignore' });
      for (const name of ['clustering', 'recommender'] as const) {
        const rebuilt = fs.readFileSync(path.join(out, name, 'model.tar.gz'));
        expect(rebuilt.length).toBeGreaterThan(1000);
        expect(rebuilt.equals(fs.readFileSync(exampleModelArtifact(name)))).toBe(true);
      }
      // Each file whole, under its own name: no part file left beside it.
      expect(fs.readdirSync(path.join(out, 'clustering')).sort()).toEqual(['memory-profile.json', 'model.tar.gz']);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});

test('context values still override the image, the model, the Region and the alarm e-mails (your own artifacts)', () => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const own = { imageUri: '123456789012.dkr.ecr.eu-west-1.amazonaws.com/my-model:7', modelDataUrl: 's3://my-models/model.tar.gz' };
  const env = { account: '123456789012', region: 'eu-west-1' };
  const stacks = [
    new ClusteringStack(app, 'Own', { ...own, env, alarmEmails: ['ops@example.com'] }),
    new RecommenderStack(app, 'OwnRec', { ...own, env, alarmEmails: ['ops@example.com'] }),
  ];
  for (const stack of stacks) {
    const t = Template.fromStack(stack);
    expect(stack.region).toBe('eu-west-1');
    for (const m of Object.values(t.findResources('AWS::SageMaker::Model')) as any[]) {
      expect(m.Properties.PrimaryContainer.Image).toBe('123456789012.dkr.ecr.eu-west-1.amazonaws.com/my-model:7');
      expect(m.Properties.PrimaryContainer.ModelDataUrl).toBe('s3://my-models/model.tar.gz');
    }
    // The alarm topic e-mails them, so nothing acknowledges an unsubscribed topic.
    t.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
    const acks = stack.endpoint.node.metadata.filter(m => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY).flatMap(m => Object.keys(m.data));
    expect(acks).not.toContain('Annotation::RE-AlarmTopicUnsubscribed');
  }
});
