// Model-server tuning and the per-server environment contracts (lib/model-server.ts), and how the
// server is detected from the image (lib/model-artifacts.ts).
import { Duration, Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ContainerImage, ModelServer, ResilientEndpoint, SageMakerInstanceType } from '../lib';
import { modelServerOfRepository } from '../lib/model-artifacts';
import { tuneModelServer } from '../lib/model-server';
import { PropErrors } from '../lib/validation';
import { newStack, warnings } from './util';

/** The container environment of the primary model of a one-endpoint stack. */
function envOf(stack: Stack): Record<string, string> {
  const models = Object.values(Template.fromStack(stack).findResources('AWS::SageMaker::Model')) as any[];
  return models[0].Properties.PrimaryContainer.Environment;
}

const families: [string, string, ModelServer, string[], string[]][] = [
  // image family, repository:tag, contract, variables that must be written, prefixes that must not appear
  [
    'PyTorch',
    'pytorch-inference:2.3.0-gpu-py311-cu121-ubuntu20.04-sagemaker',
    ModelServer.TORCHSERVE,
    ['TS_MAX_REQUEST_SIZE', 'TS_DEFAULT_RESPONSE_TIMEOUT', 'TS_DEFAULT_WORKERS_PER_MODEL', 'SAGEMAKER_MODEL_SERVER_WORKERS'],
    ['MMS_'],
  ],
  [
    'Hugging Face',
    'huggingface-pytorch-inference:2.1.0-transformers4.37.0-gpu-py310-cu118-ubuntu20.04',
    ModelServer.SAGEMAKER_INFERENCE_TOOLKIT,
    ['MMS_MAX_REQUEST_SIZE', 'SAGEMAKER_MODEL_SERVER_TIMEOUT', 'SAGEMAKER_MODEL_SERVER_TIMEOUT_SECONDS'],
    ['TS_'],
  ],
  ['MXNet', 'mxnet-inference:1.9.0-cpu-py38-ubuntu20.04-sagemaker', ModelServer.SAGEMAKER_INFERENCE_TOOLKIT, ['MMS_MAX_REQUEST_SIZE'], ['TS_']],
  [
    'scikit-learn',
    'sagemaker-scikit-learn:1.2-1-cpu-py3',
    ModelServer.SCIKIT_LEARN,
    ['SAGEMAKER_MODEL_SERVER_WORKERS', 'SAGEMAKER_MODEL_SERVER_TIMEOUT'],
    ['MMS_', 'TS_', 'MAX_CONTENT_LENGTH'],
  ],
  [
    'XGBoost',
    'sagemaker-xgboost:1.7-1',
    ModelServer.XGBOOST,
    ['SAGEMAKER_MODEL_SERVER_WORKERS', 'SAGEMAKER_MODEL_SERVER_TIMEOUT', 'MAX_CONTENT_LENGTH'],
    ['MMS_', 'TS_'],
  ],
  ['TensorFlow', 'tensorflow-inference:2.14.1-cpu', ModelServer.NONE, [], ['MMS_', 'TS_', 'SAGEMAKER_MODEL_SERVER', 'MAX_CONTENT_LENGTH']],
];

describe.each(families)('%s image', (_family, repoTag, server, written, absent) => {
  const [repo, tag] = repoTag.split(':');

  test('the contract is detected from the repository', () => {
    expect(modelServerOfRepository(repo)).toBe(server);
    expect(ContainerImage.fromImageUri(`763104351884.dkr.ecr.eu-west-1.amazonaws.com/${repoTag}`).modelServer).toBe(server);
  });

  test("fromDlc: the region's account, the variables that server reads and no others, no warning", () => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', { model: { image: ContainerImage.fromDlc(repo, tag) }, instanceType: SageMakerInstanceType.ML_M5_XLARGE });
    const t = Template.fromStack(stack);
    const image = (Object.values(t.findResources('AWS::SageMaker::Model'))[0] as any).Properties.PrimaryContainer.Image;
    const account = repo.startsWith('sagemaker-') ? '683313688378' : '763104351884';
    expect(image).toEqual({ 'Fn::Join': ['', [`${account}.dkr.ecr.us-east-1.`, { Ref: 'AWS::URLSuffix' }, `/${repoTag}`]] });
    const env = envOf(stack);
    for (const k of written) expect(env[k]).toMatch(/^\d+$/); // each a number, as the server parses it
    for (const p of absent) expect(Object.keys(env).filter(k => k.startsWith(p))).toEqual([]);
    expect(warnings(stack).join('\n')).not.toMatch(/not an AWS framework image/);
  });
});

test('an unknown image gets the toolkit contract with a warning that says how to choose', () => {
  const { stack } = newStack();
  new ResilientEndpoint(stack, 'E', {
    model: { image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/my-server:1') },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
  });
  expect(warnings(stack).join('\n')).toMatch(
    /not an AWS framework image .* modelServer: \{ server: ModelServer\.TORCHSERVE \| SCIKIT_LEARN \| XGBOOST \| NONE \}/,
  );
  expect(envOf(stack).MMS_MAX_REQUEST_SIZE).toBe('6291456');
});

describe('units and unsupported tuning', () => {
  const m5 = SageMakerInstanceType.ML_M5_XLARGE;
  test('MMS timeouts in whole minutes (rounded up), the seconds variants in seconds; TorchServe and gunicorn in seconds', () => {
    const o = { responseTimeout: Duration.seconds(90) };
    expect(tuneModelServer(m5, undefined, { ...o, server: ModelServer.SAGEMAKER_INFERENCE_TOOLKIT }).environment).toMatchObject({
      SAGEMAKER_MODEL_SERVER_TIMEOUT: '2',
      MMS_DEFAULT_RESPONSE_TIMEOUT: '2',
      SAGEMAKER_MODEL_SERVER_TIMEOUT_SECONDS: '90',
      MMS_DEFAULT_RESPONSE_TIMEOUT_SECONDS: '90',
    });
    expect(tuneModelServer(m5, undefined, { ...o, server: ModelServer.TORCHSERVE }).environment).toMatchObject({
      TS_DEFAULT_RESPONSE_TIMEOUT: '90',
      SAGEMAKER_MODEL_SERVER_TIMEOUT: '90',
    });
    expect(tuneModelServer(m5, undefined, { ...o, server: ModelServer.SCIKIT_LEARN }).environment).toEqual({
      SAGEMAKER_MODEL_SERVER_WORKERS: '6',
      SAGEMAKER_MODEL_SERVER_TIMEOUT: '90',
    });
  });

  test('XGBoost single-model endpoints run gunicorn: workers bounded by memory, timeout in seconds, MAX_CONTENT_LENGTH as asked (no 20 MiB cap)', () => {
    // ml.m5.xlarge: 4 vCPUs × 1.5 = 6 workers, capped by a 4 GiB footprint to ⌊0.8 × 16 / 4⌋ = 3.
    const x = tuneModelServer(
      m5,
      { host: Size.gibibytes(4) },
      { server: ModelServer.XGBOOST, maxRequestSize: Size.mebibytes(64), responseTimeout: Duration.seconds(45) },
    );
    expect(x.workers).toBe(3);
    expect(x.environment).toEqual({
      SAGEMAKER_MODEL_SERVER_WORKERS: '3',
      SAGEMAKER_MODEL_SERVER_TIMEOUT: '45',
      MAX_CONTENT_LENGTH: String(64 * 1024 * 1024),
    });
    expect(tuneModelServer(m5, undefined, { server: ModelServer.XGBOOST, workers: 2 }).environment.SAGEMAKER_MODEL_SERVER_WORKERS).toBe('2');
  });

  test('scikit-learn: a request-size limit cannot be written (nginx has none there): warned, not written', () => {
    const s = tuneModelServer(m5, undefined, { server: ModelServer.SCIKIT_LEARN, maxRequestSize: Size.mebibytes(1) });
    expect(s.warnings.join()).toMatch(/nginx has no body-size limit/);
    expect(Object.keys(s.environment)).toEqual(['SAGEMAKER_MODEL_SERVER_WORKERS', 'SAGEMAKER_MODEL_SERVER_TIMEOUT']);
  });

  test('NONE writes nothing', () => {
    expect(tuneModelServer(m5, undefined, { server: ModelServer.NONE }).environment).toEqual({});
  });
});

describe('model-server tuning', () => {
  test('CPU: workers = floor(vCPU × 1.5); m5.xlarge → 6', () => {
    expect(tuneModelServer(SageMakerInstanceType.ML_M5_XLARGE, undefined).workers).toBe(6);
    expect(tuneModelServer(SageMakerInstanceType.ML_M5_LARGE, undefined).workers).toBe(3);
    expect(tuneModelServer(SageMakerInstanceType.ML_C5_9XLARGE, undefined).workers).toBe(54);
  });

  test('CPU: capped so workers × host footprint stays under 80 % of memory, never below 1', () => {
    // 0.8 × 16 GiB / 4 GiB = 3.2 → 3
    expect(tuneModelServer(SageMakerInstanceType.ML_M5_XLARGE, { host: Size.gibibytes(4) }).workers).toBe(3);
    // a 14 GiB model on 16 GiB: 0 fit in 80 %, but never below 1
    expect(tuneModelServer(SageMakerInstanceType.ML_M5_XLARGE, { host: Size.gibibytes(14) }).workers).toBe(1);
  });

  test('GPU without footprint: one worker per GPU, with a warning asking for it', () => {
    const t = tuneModelServer(SageMakerInstanceType.ML_G4DN_XLARGE, undefined);
    expect(t.workers).toBe(1);
    expect(t.warnings.join()).toMatch(/memoryFootprint\.gpu is not stated/);
    expect(tuneModelServer(SageMakerInstanceType.ML_G4DN_12XLARGE, undefined).workers).toBe(4);
  });

  test('GPU with footprint: copies that fit in 80 % of each GPU, bounded by host memory', () => {
    // 0.8 × 16 / 4 = 3.2 → 3 per GPU
    expect(tuneModelServer(SageMakerInstanceType.ML_G4DN_XLARGE, { gpu: Size.gibibytes(4) }).workers).toBe(3);
    // host cap: 0.8 × 16 / 6 = 2.1 → 2
    expect(tuneModelServer(SageMakerInstanceType.ML_G4DN_XLARGE, { gpu: Size.gibibytes(4), host: Size.gibibytes(6) }).workers).toBe(2);
    // 4 GPUs × 3
    expect(tuneModelServer(SageMakerInstanceType.ML_G4DN_12XLARGE, { gpu: Size.gibibytes(4) }).workers).toBe(12);
  });

  test('a model larger than one GPU is an error', () => {
    const errors = new PropErrors();
    tuneModelServer(SageMakerInstanceType.ML_G4DN_XLARGE, { gpu: Size.gibibytes(20) }, {}, errors);
    expect(errors.all.join()).toMatch(/memoryFootprint\.gpu: got 20 GiB; allowed: at most one GPU's memory on ml\.g4dn\.xlarge \(16 GiB\)/);
  });

  test('environment names follow the server; the 6 MiB real-time limit by default, warned only above it', () => {
    const mms = tuneModelServer(SageMakerInstanceType.ML_M5_XLARGE, undefined);
    expect(mms.environment).toMatchObject({
      SAGEMAKER_MODEL_SERVER_WORKERS: '6',
      MMS_MAX_REQUEST_SIZE: '6291456',
      MMS_MAX_RESPONSE_SIZE: '6291456',
      // MMS reads default_response_timeout in minutes; the *_SECONDS variants in seconds.
      SAGEMAKER_MODEL_SERVER_TIMEOUT: '1',
      MMS_DEFAULT_RESPONSE_TIMEOUT: '1',
      SAGEMAKER_MODEL_SERVER_TIMEOUT_SECONDS: '60',
      MMS_DEFAULT_RESPONSE_TIMEOUT_SECONDS: '60',
    });
    expect(mms.warnings).toEqual([]);
    expect(tuneModelServer(SageMakerInstanceType.ML_M5_XLARGE, undefined, { maxRequestSize: Size.mebibytes(8) }).warnings.join()).toMatch(
      /8388608 bytes, above the 6291456 bytes \(6 MiB\) that real-time InvokeEndpoint accepts/,
    );
    const ts = tuneModelServer(SageMakerInstanceType.ML_M5_XLARGE, undefined, { server: ModelServer.TORCHSERVE, jobQueueSize: 50 });
    expect(ts.environment).toMatchObject({ TS_MAX_REQUEST_SIZE: '6291456', TS_JOB_QUEUE_SIZE: '50' });
    expect(ts.environment.MMS_MAX_REQUEST_SIZE).toBeUndefined();
    expect(tuneModelServer(SageMakerInstanceType.ML_M5_XLARGE, undefined, { server: ModelServer.NONE }).environment).toEqual({});
  });

  test('explicit workers beyond the memory budget warn', () => {
    const t = tuneModelServer(SageMakerInstanceType.ML_M5_XLARGE, { host: Size.gibibytes(4) }, { workers: 8 });
    expect(t.workers).toBe(8);
    expect(t.warnings.join()).toMatch(/exceeds 80 %/);
  });

  test('timeouts default to 3600 s download and validate 60–3600', () => {
    expect(tuneModelServer(SageMakerInstanceType.ML_M5_XLARGE, undefined).modelDataDownloadTimeoutSeconds).toBe(3600);
    const errors = new PropErrors();
    tuneModelServer(
      SageMakerInstanceType.ML_M5_XLARGE,
      undefined,
      {
        modelDataDownloadTimeout: Duration.seconds(5),
        containerStartupHealthCheckTimeout: Duration.hours(2),
        workers: 0,
      },
      errors,
    );
    expect(errors.all).toHaveLength(3);
    expect(errors.all[1]).toMatch(/modelDataDownloadTimeout \(s\): got 5; allowed: an integer from 60 to 3600/);
  });
});
