/**
 * The example models as the containers will see them: the archive this repo builds is a valid
 * model.tar.gz with the files where each container looks, and the model's environment points there.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as zlib from 'zlib';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ClusteringStack } from '../lib/examples/clustering-stack';
import { exampleModelArtifact } from '../lib/examples/recommender-stack';
import { exampleStacks } from './util';

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

const { rec, clu } = exampleStacks();
const envOf = (t: typeof rec, variant = 0) =>
  (Object.values(t.findResources('AWS::SageMaker::Model')) as any[])[variant].Properties.PrimaryContainer.Environment;

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

test('context values still override the image and the model (your own artifacts)', () => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new ClusteringStack(app, 'Own', {
    imageUri: '123456789012.dkr.ecr.eu-west-1.amazonaws.com/my-kmeans:7',
    modelDataUrl: 's3://my-models/kmeans/model.tar.gz',
  });
  const container = (Object.values(Template.fromStack(stack).findResources('AWS::SageMaker::Model'))[0] as any).Properties.PrimaryContainer;
  expect(container.Image).toBe('123456789012.dkr.ecr.eu-west-1.amazonaws.com/my-kmeans:7');
  expect(container.ModelDataUrl).toBe('s3://my-models/kmeans/model.tar.gz');
});
