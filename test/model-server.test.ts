// Model-server tuning and the per-server environment contracts (lib/model-server.ts), and how the
// server is detected from the image (lib/model-artifacts.ts).
import { Duration, Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { CapacityPlan, ContainerImage, ModelServer, ResilientEndpoint, SageMakerInstanceType } from '../lib';
import * as simulation from '../lib/simulation';
import { modelServerOfRepository } from '../lib/model-artifacts';
import { fmtBytes, ModelServerTuner, tuneModelServer } from '../lib/model-server';
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

test("a SAGEMAKER_TS_* variable of the user's own on TorchServe warns that AWS's toolkit would run 1 worker, unless both worker variables are set", () => {
  // aws/sagemaker-pytorch-inference-toolkit: once any SAGEMAKER_TS_* variable is set, torchserve.py writes the model's
  // configuration with minWorkers/maxWorkers from SAGEMAKER_TS_MIN_WORKERS/_MAX_WORKERS (ts_environment.py: default 1).
  const run = (environment: Record<string, string>) => {
    const { stack } = newStack();
    new ResilientEndpoint(stack, 'E', {
      model: {
        image: ContainerImage.fromDlc('pytorch-inference', '2.3.0-gpu-py311-cu121-ubuntu20.04-sagemaker'),
        environment,
        memoryFootprint: { gpu: Size.gibibytes(4) },
      },
      instanceType: SageMakerInstanceType.ML_G4DN_2XLARGE,
    });
    return warnings(stack).filter(w => w.includes('TorchServeWorkersReset'));
  };
  const [w] = run({ SAGEMAKER_TS_BATCH_SIZE: '8' });
  expect(w).toMatch(
    /model\.environment sets SAGEMAKER_TS_BATCH_SIZE: AWS's PyTorch toolkit then configures the model with SAGEMAKER_TS_MIN_WORKERS and SAGEMAKER_TS_MAX_WORKERS, which default to 1 worker, not the 3 tuned\. Set SAGEMAKER_TS_MIN_WORKERS and SAGEMAKER_TS_MAX_WORKERS to 3 too\./,
  );
  expect(run({ SAGEMAKER_TS_BATCH_SIZE: '8', SAGEMAKER_TS_MIN_WORKERS: '3' })).toHaveLength(1);
  expect(run({ SAGEMAKER_TS_BATCH_SIZE: '8', SAGEMAKER_TS_MIN_WORKERS: '3', SAGEMAKER_TS_MAX_WORKERS: '3' })).toEqual([]);
  expect(run({ MAX_SEQ_LEN: '1024' })).toEqual([]);
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

describe('tuneModelServer: the whole result, hand-computed, for each rule', () => {
  const { ML_M5_XLARGE: M5, ML_G4DN_XLARGE: G4, ML_G4DN_12XLARGE: G4X12 } = SageMakerInstanceType;
  const tune = (t: SageMakerInstanceType, footprint?: { host?: Size; gpu?: Size }, o: Parameters<typeof tuneModelServer>[2] = {}) => {
    const errors = new PropErrors();
    return { ...tuneModelServer(t, footprint, o, errors), errors: errors.all };
  };
  const toolkitEnv = (workers: number, minutes = 1, seconds = 60, request = 6291456, response = request) => ({
    SAGEMAKER_MODEL_SERVER_WORKERS: String(workers),
    SAGEMAKER_MODEL_SERVER_TIMEOUT: String(minutes),
    SAGEMAKER_MODEL_SERVER_TIMEOUT_SECONDS: String(seconds),
    MMS_DEFAULT_RESPONSE_TIMEOUT: String(minutes),
    MMS_DEFAULT_RESPONSE_TIMEOUT_SECONDS: String(seconds),
    MMS_MAX_REQUEST_SIZE: String(request),
    MMS_MAX_RESPONSE_SIZE: String(response),
  });

  test('ml.m5.xlarge, nothing stated: ⌊4 × 1.5⌋ = 6 workers, the 6 MiB limit, 60 s, the default timeouts', () => {
    expect(tune(M5)).toEqual({
      workers: 6,
      workersReason: '⌊4 vCPU × 1.5⌋',
      maxRequestBytes: 6291456,
      maxResponseBytes: 6291456,
      environment: toolkitEnv(6),
      modelDataDownloadTimeoutSeconds: 3600,
      containerStartupHealthCheckTimeoutSeconds: 900,
      warnings: [],
      server: ModelServer.SAGEMAKER_INFERENCE_TOOLKIT,
      errors: [],
    });
  });

  test('a host footprint caps CPU workers to what fits in 80 % of memory (12.8 GiB / 3 GiB → 4), and exactly 6 still fit at 2 GiB', () => {
    const capped = tune(M5, { host: Size.gibibytes(3) });
    expect([capped.workers, capped.workersReason, capped.errors]).toEqual([4, '⌊4 vCPU × 1.5⌋, capped to 4: 4 × 3 GiB ≤ 80 % of 16 GiB', []]);
    expect(tune(M5, { host: Size.gibibytes(2) }).workers).toBe(6);
    const tooBig = tune(M5, { host: Size.gibibytes(20) });
    expect([tooBig.workers, tooBig.errors]).toEqual([
      1,
      [
        'model.memoryFootprint.host: got 20 GiB; allowed: at most the ml.m5.xlarge memory (16 GiB). Fix: choose an instance type with more memory (see CapacityPlan) or shrink the model',
      ],
    ]);
    expect(tune(M5, { host: Size.gibibytes(16) }).errors).toEqual([]); // as large as the memory: allowed (one copy, and a warning elsewhere)
  });

  test('GPU with a stated footprint: copies that fit in 80 % of each GPU, bounded by vCPUs and then by host memory', () => {
    const three = tune(G4, { gpu: Size.gibibytes(4) });
    expect([three.workers, three.workersReason, three.warnings]).toEqual([3, '3 model copies fit in 80 % of each of 1 GPU(s) of 16 GiB', []]);
    expect(tune(G4, { gpu: Size.gibibytes(10) }).workersReason).toBe('1 model copy fit in 80 % of each of 1 GPU(s) of 16 GiB');
    expect(tune(G4, { gpu: Size.gibibytes(1) }).workers).toBe(6); // 12 copies fit, ⌊4 × 1.5⌋ = 6 vCPU-bound
    expect(tune(G4X12, { gpu: Size.gibibytes(4) }).workers).toBe(12);
    const host = tune(G4X12, { gpu: Size.gibibytes(4), host: Size.gibibytes(20) }); // ⌊153.6 / 20⌋ = 7
    expect([host.workers, host.workersReason]).toEqual([7, '3 model copies fit in 80 % of each of 4 GPU(s) of 16 GiB; capped to 7 by host memory']);
    expect(tune(G4X12, { gpu: Size.gibibytes(4), host: Size.gibibytes(12) }).workers).toBe(12); // ⌊153.6 / 12⌋ = 12: not capped
  });

  test('GPU without a footprint: one worker per GPU, and a warning that asks for it', () => {
    const t = tune(G4X12);
    expect([t.workers, t.workersReason, t.warnings]).toEqual([
      4,
      'one worker per GPU (GPU footprint not stated)',
      [
        'ml.g4dn.12xlarge is a GPU instance but model.memoryFootprint.gpu is not stated: using one worker per GPU (4). State the footprint so workers can be sized to 80 % of GPU memory.',
      ],
    ]);
  });

  test('a GPU footprint on a CPU type, or larger than one GPU, is an error', () => {
    expect(tune(M5, { gpu: Size.gibibytes(4) }).errors).toEqual([
      'model.memoryFootprint.gpu: got 4 GiB; allowed: only on GPU instance types (ml.m5.xlarge has no GPU). Fix: remove memoryFootprint.gpu, or choose a GPU type such as ml.g4dn.xlarge',
    ]);
    expect(tune(G4, { gpu: Size.gibibytes(17) }).errors).toEqual([
      "model.memoryFootprint.gpu: got 17 GiB; allowed: at most one GPU's memory on ml.g4dn.xlarge (16 GiB). Fix: choose a GPU with more memory, or cap the input length so one copy fits",
    ]);
    expect(tune(G4, { gpu: Size.gibibytes(16) }).errors).toEqual([]);
    expect(tune(G4, { host: Size.bytes(0), gpu: Size.bytes(0) }).errors).toEqual([
      'model.memoryFootprint.host (bytes): got 0; allowed: a number >= 1. Fix: state the footprint of one model copy, e.g. Size.gibibytes(2)',
      'model.memoryFootprint.gpu (bytes): got 0; allowed: a number >= 1. Fix: state the GPU footprint of one model copy, e.g. Size.gibibytes(4)',
    ]);
  });

  test('workers set explicitly: used (rounded), warned when the footprints say they cannot fit', () => {
    expect(tune(M5, { host: Size.gibibytes(2) }, { workers: 6 })).toMatchObject({ workers: 6, workersReason: 'set explicitly', warnings: [] });
    expect(tune(M5, undefined, { workers: 2.6 }).workers).toBe(3);
    expect(tune(M5, { host: Size.gibibytes(2) }, { workers: 10 }).warnings).toEqual([
      "modelServer.workers=10 × host footprint 2 GiB exceeds 80 % of ml.m5.xlarge's 16 GiB: expect OOM under load (at most 6 fit).",
    ]);
    expect(tune(G4, { gpu: Size.gibibytes(6) }, { workers: 2 }).warnings).toEqual([]); // ⌊12.8 / 6⌋ = 2 per GPU
    expect(tune(G4, { gpu: Size.gibibytes(6) }, { workers: 3 }).warnings).toEqual([
      "modelServer.workers=3 × GPU footprint 6 GiB exceeds 80 % of ml.g4dn.xlarge's GPU memory: expect GPU OOM (at most 2 fit).",
    ]);
    expect(tune(G4X12, { gpu: Size.gibibytes(15) }, { workers: 4 }).warnings).toEqual([]); // one copy per GPU always fits
    expect(tune(M5, undefined, { workers: 0 }).errors).toEqual([
      'modelServer.workers: got 0; allowed: an integer from 1 to 1000. Fix: give a whole number of worker processes, at least 1',
    ]);
  });

  test('an instance type without known hardware: one worker, and why', () => {
    expect(tune(SageMakerInstanceType.of('ml.x9.large'))).toMatchObject({
      workers: 1,
      workersReason: 'instance hardware unknown: one worker (pass an InstanceSpec to tune)',
      errors: [],
    });
  });

  test('sizes: from 1 KiB to a 32-bit integer, the response limit following the request one; above 6 MiB a warning', () => {
    const big = tune(M5, undefined, { maxRequestSize: Size.mebibytes(10) });
    expect([big.maxRequestBytes, big.maxResponseBytes, big.environment.MMS_MAX_RESPONSE_SIZE]).toEqual([10485760, 10485760, '10485760']);
    expect(big.warnings).toEqual([
      'modelServer.maxRequestSize is 10485760 bytes, above the 6291456 bytes (6 MiB) that real-time InvokeEndpoint accepts: SageMaker rejects larger requests before they reach the container, so the larger limit only matters for asynchronous inference.',
    ]);
    expect(tune(M5, undefined, { maxRequestSize: Size.mebibytes(1), maxResponseSize: Size.mebibytes(2) }).environment).toEqual(
      toolkitEnv(6, 1, 60, 1048576, 2097152),
    );
    const fix = 'use a size from 1 KiB to 2147483647 bytes (the servers read it as a 32-bit integer), e.g. Size.mebibytes(6), the real-time limit';
    expect(tune(M5, undefined, { maxRequestSize: Size.bytes(1023), maxResponseSize: Size.gibibytes(2) }).errors).toEqual([
      `modelServer.maxRequestSize (bytes): got 1023; allowed: an integer from 1024 to 2147483647. Fix: ${fix}`,
      `modelServer.maxResponseSize (bytes): got 2147483648; allowed: an integer from 1024 to 2147483647. Fix: ${fix}`,
    ]);
    expect(tune(M5, undefined, { maxRequestSize: Size.kibibytes(1), maxResponseSize: Size.bytes(2147483647) }).errors).toEqual([]);
  });

  test('the response timeout: whole minutes for MMS (rounded up), seconds elsewhere; above 60 s a warning; 1–3600 s', () => {
    const t = tune(M5, undefined, { responseTimeout: Duration.seconds(90) });
    expect(t.environment).toEqual(toolkitEnv(6, 2, 90));
    expect(t.warnings).toEqual([
      'modelServer.responseTimeout is 90 s, but a real-time container must answer within 60 s: requests will time out at SageMaker first.',
    ]);
    expect(tune(M5, undefined, { responseTimeout: Duration.seconds(30) }).environment).toEqual(toolkitEnv(6, 1, 30));
    expect(tune(M5, undefined, { responseTimeout: Duration.seconds(60) }).warnings).toEqual([]);
    expect(tune(M5, undefined, { responseTimeout: Duration.seconds(3601) }).errors).toEqual([
      'modelServer.responseTimeout (s): got 3601; allowed: an integer from 1 to 3600. Fix: use Duration.seconds(1..3600)',
    ]);
  });

  test('the job queue: written where the server has one, 1–100000', () => {
    expect(tune(M5, undefined, { jobQueueSize: 250 }).environment).toEqual({ ...toolkitEnv(6), MMS_JOB_QUEUE_SIZE: '250' });
    expect(tune(M5, undefined, { jobQueueSize: 0 }).errors).toEqual([
      'modelServer.jobQueueSize: got 0; allowed: an integer from 1 to 100000. Fix: give a whole number of queued requests, e.g. 100',
    ]);
  });

  test('the download and start-up timeouts: 60–3600 s, clamped into range while the error is reported', () => {
    const t = tune(M5, undefined, { modelDataDownloadTimeout: Duration.seconds(59), containerStartupHealthCheckTimeout: Duration.seconds(4000) });
    expect([t.modelDataDownloadTimeoutSeconds, t.containerStartupHealthCheckTimeoutSeconds]).toEqual([60, 3600]);
    expect(t.errors).toEqual([
      'modelServer.modelDataDownloadTimeout (s): got 59; allowed: an integer from 60 to 3600. Fix: use Duration.seconds(60..3600); the default 3600 suits large models',
      'modelServer.containerStartupHealthCheckTimeout (s): got 4000; allowed: an integer from 60 to 3600. Fix: use Duration.seconds(60..3600)',
    ]);
    const given = tune(M5, undefined, { modelDataDownloadTimeout: Duration.minutes(20), containerStartupHealthCheckTimeout: Duration.minutes(5) });
    expect([given.modelDataDownloadTimeoutSeconds, given.containerStartupHealthCheckTimeoutSeconds, given.errors]).toEqual([1200, 300, []]);
  });

  test('each server: exactly the variables it reads, and a warning for each setting it cannot take', () => {
    const o = { responseTimeout: Duration.seconds(45), jobQueueSize: 50, maxRequestSize: Size.mebibytes(2) };
    expect(tune(M5, undefined, { ...o, server: ModelServer.TORCHSERVE })).toMatchObject({
      environment: {
        SAGEMAKER_MODEL_SERVER_WORKERS: '6',
        TS_DEFAULT_WORKERS_PER_MODEL: '6',
        SAGEMAKER_MODEL_SERVER_TIMEOUT: '45',
        TS_DEFAULT_RESPONSE_TIMEOUT: '45',
        TS_MAX_REQUEST_SIZE: '2097152',
        TS_MAX_RESPONSE_SIZE: '2097152',
        TS_JOB_QUEUE_SIZE: '50',
      },
      warnings: [],
    });
    expect(tune(M5, undefined, { ...o, server: ModelServer.SCIKIT_LEARN })).toMatchObject({
      environment: { SAGEMAKER_MODEL_SERVER_WORKERS: '6', SAGEMAKER_MODEL_SERVER_TIMEOUT: '45' },
      warnings: [
        "modelServer.maxRequestSize/maxResponseSize is set, but the scikit-learn image's nginx has no body-size limit to set: it is not written.",
        'modelServer.jobQueueSize is set, but gunicorn has no such queue setting in the scikit-learn image: it is not written.',
      ],
    });
    expect(tune(M5, undefined, { maxResponseSize: Size.mebibytes(2), server: ModelServer.SCIKIT_LEARN }).warnings).toHaveLength(1);
    expect(tune(M5, undefined, { server: ModelServer.SCIKIT_LEARN }).warnings).toEqual([]);
    expect(tune(M5, undefined, { ...o, server: ModelServer.XGBOOST })).toMatchObject({
      environment: { SAGEMAKER_MODEL_SERVER_WORKERS: '6', SAGEMAKER_MODEL_SERVER_TIMEOUT: '45', MAX_CONTENT_LENGTH: '2097152' },
      warnings: ['modelServer.jobQueueSize is set, but gunicorn has no such queue setting in the XGBoost image: it is not written.'],
    });
    expect(tune(M5, undefined, { server: ModelServer.XGBOOST }).warnings).toEqual([]);
    expect(tune(M5, undefined, { ...o, server: ModelServer.NONE })).toMatchObject({ environment: {}, warnings: [] });
  });

  test('fmtBytes and ModelServerTuner.tune (every problem in one error)', () => {
    expect([fmtBytes(1024 ** 3), fmtBytes(1.5 * 1024 ** 3), fmtBytes(1.2345 * 1024 ** 3), fmtBytes(512 * 2 ** 20), fmtBytes(1.25 * 2 ** 20)]).toEqual(
      ['1 GiB', '1.5 GiB', '1.23 GiB', '512 MiB', '1.3 MiB'],
    );
    expect(ModelServerTuner.tune(M5).workers).toBe(6);
    expect(() => ModelServerTuner.tune(M5, { host: Size.gibibytes(20) }, { workers: 0 })).toThrow(
      /^modelServer\.workers: got 0; .*\nmodel\.memoryFootprint\.host: got 20 GiB; /,
    );
  });
});

test('a footprint that is not a whole number of bytes (2.1 GiB, incident B) is rounded up, not a stack trace', () => {
  // Size.toBytes() throws for 2.1 GiB (2,254,857,830.4 bytes); the tuning, the container's variables,
  // the capacity planner and the simulator each read a footprint.
  const host = Size.gibibytes(2.1);
  expect(() => host.toBytes()).toThrow(/cannot be converted into a whole number of bytes/);
  expect(tuneModelServer(SageMakerInstanceType.ML_M5_XLARGE, { host: Size.gibibytes(3.3) }).workers).toBe(3); // ⌊12.8 / 3.3⌋
  const { app, stack } = newStack();
  new ResilientEndpoint(stack, 'E', {
    model: {
      image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1'),
      memoryFootprint: { host, gpu: Size.gibibytes(3.3) },
    },
    instanceType: SageMakerInstanceType.ML_G4DN_XLARGE,
  });
  expect(envOf(stack)).toMatchObject({ RESILIENT_ENDPOINT_HOST_FOOTPRINT_BYTES: '2254857831', RESILIENT_ENDPOINT_GPU_FOOTPRINT_BYTES: '3543348020' });
  expect(app.synth().stacks).toHaveLength(1);
  expect(CapacityPlan.compute({ p50LatencyMs: 50, peakQps: 200, modelMemory: host }).instanceCount).toBe(4); // incident B's plan: 4 × ml.m5.xlarge
  expect(simulation.simVariantsFrom(stack.node.findChild('E') as ResilientEndpoint).primary.footprintBytes).toBe(3543348020);
});
