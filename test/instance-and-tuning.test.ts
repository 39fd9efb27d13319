import { Duration, Size } from 'aws-cdk-lib';
import { ModelServer, SageMakerInstanceType } from '../lib';
import { tuneModelServer } from '../lib/model-server';
import { PropErrors } from '../lib/validation';

describe('instance catalog', () => {
  test.each([
    ['ml.g4dn.xlarge', 4, 16, 1, 16, true],
    ['ml.g4dn.12xlarge', 48, 192, 4, 16, true],
    ['ml.g5.48xlarge', 192, 768, 8, 24, true],
    ['ml.m5.xlarge', 4, 16, 0, 0, false],
    ['ml.m5.24xlarge', 96, 384, 0, 0, false],
    ['ml.c5.9xlarge', 36, 72, 0, 0, false],
    ['ml.r5.large', 2, 16, 0, 0, false],
    ['ml.t2.medium', 2, 4, 0, 0, false],
  ])('%s has %d vCPU, %d GiB, %d GPU × %d GiB, NVMe=%s', (name, vcpu, mem, gpus, gpuMem, nvme) => {
    const t = SageMakerInstanceType.of(name);
    expect(t.specUnknown).toBe(false);
    expect(t.spec).toMatchObject({ vCpus: vcpu, memoryGiB: mem, gpuCount: gpus, gpuMemoryGiB: gpuMem });
    expect(t.hasLocalNvme).toBe(nvme);
  });

  test('every g4dn and m5 size of SageMaker hosting is in the catalog', () => {
    const names = SageMakerInstanceType.all().map(t => t.name);
    for (const s of ['xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge']) expect(names).toContain(`ml.g4dn.${s}`);
    for (const s of ['large', 'xlarge', '2xlarge', '4xlarge', '12xlarge', '24xlarge']) expect(names).toContain(`ml.m5.${s}`);
  });

  test('unknown types: spec from the caller, NVMe and burstable from the name', () => {
    const custom = SageMakerInstanceType.of('ml.p4d.24xlarge', { vCpus: 96, memoryGiB: 1152, gpuCount: 8, gpuMemoryGiB: 40 });
    expect(custom.specUnknown).toBe(false);
    expect(custom.hasLocalNvme).toBe(true);
    const bare = SageMakerInstanceType.of('ml.m6id.large');
    expect(bare.specUnknown).toBe(true);
    expect(bare.hasLocalNvme).toBe(true);
    expect(SageMakerInstanceType.of('ml.t3.medium').isBurstable).toBe(true);
    expect(SageMakerInstanceType.of('ml.m6i.large').hasLocalNvme).toBe(false);
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
      SAGEMAKER_MODEL_SERVER_WORKERS: '6', MMS_MAX_REQUEST_SIZE: '6291456', MMS_MAX_RESPONSE_SIZE: '6291456',
      // MMS reads default_response_timeout in minutes; the *_SECONDS variants in seconds.
      SAGEMAKER_MODEL_SERVER_TIMEOUT: '1', MMS_DEFAULT_RESPONSE_TIMEOUT: '1', SAGEMAKER_MODEL_SERVER_TIMEOUT_SECONDS: '60', MMS_DEFAULT_RESPONSE_TIMEOUT_SECONDS: '60',
    });
    expect(mms.warnings).toEqual([]);
    expect(tuneModelServer(SageMakerInstanceType.ML_M5_XLARGE, undefined, { maxRequestSize: Size.mebibytes(8) }).warnings.join())
      .toMatch(/8388608 bytes, above the 6291456 bytes \(6 MiB\) that real-time InvokeEndpoint accepts/);
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
    tuneModelServer(SageMakerInstanceType.ML_M5_XLARGE, undefined, {
      modelDataDownloadTimeout: Duration.seconds(5), containerStartupHealthCheckTimeout: Duration.hours(2), workers: 0,
    }, errors);
    expect(errors.all).toHaveLength(3);
    expect(errors.all[1]).toMatch(/modelDataDownloadTimeout \(s\): got 5; allowed: an integer from 60 to 3600/);
  });
});
