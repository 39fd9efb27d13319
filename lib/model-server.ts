import { Duration, Size, SizeRoundingBehavior } from 'aws-cdk-lib';
import { SageMakerInstanceType } from './instance-types';
import { Described, PropErrors } from './validation';

/**
 * The serving stack inside the container: it decides which variables exist, in which units, and
 * which tuning is possible at all. Each contract below cites the server source it follows.
 */
export enum ModelServer {
  /**
   * Multi Model Server through the SageMaker inference toolkit (Hugging Face and MXNet DLCs, custom
   * toolkit images). Workers: `SAGEMAKER_MODEL_SERVER_WORKERS`. Response timeout: MMS reads
   * `default_response_timeout` in **minutes** (awslabs/multi-model-server `ConfigManager.java`), and
   * the toolkit maps `SAGEMAKER_MODEL_SERVER_TIMEOUT` onto it (aws/sagemaker-inference-toolkit
   * `model_server.py`), so both get whole minutes; the seconds variants of newer versions
   * (`SAGEMAKER_MODEL_SERVER_TIMEOUT_SECONDS`, `MMS_DEFAULT_RESPONSE_TIMEOUT_SECONDS`, MMS ≥ 1.1.11)
   * get seconds. Sizes: `MMS_MAX_REQUEST_SIZE` / `MMS_MAX_RESPONSE_SIZE` in bytes
   * (`enable_envvars_config=true` in the toolkit's `default-mms.properties`).
   */
  SAGEMAKER_INFERENCE_TOOLKIT = 'SAGEMAKER_INFERENCE_TOOLKIT',
  /**
   * TorchServe, as AWS's PyTorch inference images run it (aws/sagemaker-pytorch-inference-toolkit
   * `torchserve.py`, `etc/default-ts.properties`): it reads `TS_*` names only (pytorch/serve
   * `ConfigManager.java`); `TS_DEFAULT_RESPONSE_TIMEOUT` in seconds; the toolkit maps
   * `SAGEMAKER_MODEL_SERVER_WORKERS` and `SAGEMAKER_MODEL_SERVER_TIMEOUT` (seconds) too.
   */
  TORCHSERVE = 'TORCHSERVE',
  /**
   * AWS's scikit-learn image: gunicorn behind nginx for single models (aws/sagemaker-scikit-learn-container
   * `serving.py`, aws/sagemaker-containers `_server.py`): `SAGEMAKER_MODEL_SERVER_WORKERS` gunicorn
   * workers, `SAGEMAKER_MODEL_SERVER_TIMEOUT` in seconds; nginx sets no body-size limit there
   * (`nginx.conf.template`), so a request-size limit cannot be written.
   */
  SCIKIT_LEARN = 'SCIKIT_LEARN',
  /**
   * AWS's XGBoost image, single-model endpoints (all this library creates): `serving_entrypoint`
   * starts sagemaker-containers' gunicorn unless `SAGEMAKER_MULTI_MODEL` is set (aws/sagemaker-xgboost-container
   * `serving.py`), so `SAGEMAKER_MODEL_SERVER_WORKERS` sets the workers and `SAGEMAKER_MODEL_SERVER_TIMEOUT`
   * the timeout in seconds (aws/sagemaker-containers `_server.py`); the payload limit is Flask's
   * `MAX_CONTENT_LENGTH` in bytes, uncapped (`algorithm_mode/serve.py`). The 20 MiB cap and one worker
   * per CPU of `serving_mms.py` apply to multi-model endpoints only (`serving.py` runs MMS only `if is_multi_model()`).
   */
  XGBOOST = 'XGBOOST',
  /** A custom server: no tuning variables are written; pass your own `environment`. */
  NONE = 'NONE',
}

/**
 * Memory one copy of the model needs. Each model-server worker loads its own copy. Sizes need not be
 * whole bytes (`Size.gibibytes(2.1)`): they are rounded up.
 */
export interface MemoryFootprint {
  /**
   * Host (RAM) memory of one model copy under peak load, including per-request buffers.
   * @default - unknown: workers are not capped by host memory
   */
  readonly host?: Size;
  /**
   * GPU memory of one model copy under peak load (weights + activations of the longest accepted input).
   * @default - unknown: one worker per GPU, with a warning
   */
  readonly gpu?: Size;
}

/** Model-server settings. Every field has an incident-proven default. */
export interface ModelServerOptions {
  /**
   * Which serving stack the container runs.
   * @default - detected from an AWS framework image URI (PyTorch → TorchServe, scikit-learn,
   * XGBoost, Hugging Face / MXNet → the inference toolkit, TensorFlow → NONE); otherwise the
   * inference toolkit, with a warning
   */
  readonly server?: ModelServer;
  /**
   * Worker processes per instance (each loads its own model copy).
   * @default - ⌊vCPU × 1.5⌋ on CPU instances, one per GPU on GPU instances, capped so that
   * workers × memory footprint stays under 80 % of the instance's (GPU) memory, never below 1
   */
  readonly workers?: number;
  /**
   * Largest request body the model server accepts. Real-time InvokeEndpoint itself accepts at most
   * 6 MiB (6,291,456 bytes), so a larger limit only matters for asynchronous inference (warned).
   * @default Size.mebibytes(6) — the real-time payload limit
   */
  readonly maxRequestSize?: Size;
  /**
   * Largest response body the model server returns.
   * @default - the same as `maxRequestSize`
   */
  readonly maxResponseSize?: Size;
  /**
   * How long the model server waits for one inference before it declares the worker stuck.
   * @default Duration.seconds(60) — SageMaker requires a real-time container to answer within 60 s
   */
  readonly responseTimeout?: Duration;
  /**
   * Requests the model server queues before answering 503.
   * @default - the server's default (100)
   */
  readonly jobQueueSize?: number;
  /**
   * Time SageMaker allows to download the model artifact to a new instance (60 s – 3600 s).
   * @default Duration.seconds(3600) (incident A)
   */
  readonly modelDataDownloadTimeout?: Duration;
  /**
   * Time SageMaker allows the container to pass its first health check (60 s – 3600 s).
   * @default Duration.seconds(900)
   */
  readonly containerStartupHealthCheckTimeout?: Duration;
}

/**
 * Real-time InvokeEndpoint payload limit: the sagemaker-runtime service model gives `Body` a
 * maximum of 6,291,456 bytes (6 MiB) (botocore `sagemaker-runtime` service-2.json, `InvokeEndpointInput.Body`).
 */
export const INVOKE_PAYLOAD_LIMIT_BYTES = 6 * 1024 * 1024;
/** Default request/response limit: the real-time payload limit. */
export const DEFAULT_MAX_REQUEST_BYTES = INVOKE_PAYLOAD_LIMIT_BYTES;
/**
 * Largest size limit the model servers can read: MMS and TorchServe parse `max_request_size` /
 * `max_response_size` as a Java `int` (awslabs/multi-model-server and pytorch/serve `ConfigManager.java`),
 * so a larger value stops the server at start-up.
 */
export const MAX_SERVER_SIZE_BYTES = 2147483647;
/** Share of the instance's memory that all model copies together may use. */
export const MEMORY_BUDGET_SHARE = 0.8;

/** The result of tuning: what goes into the container environment and the variant. */
export interface ModelServerTuning {
  /** Worker processes per instance. */
  readonly workers: number;
  /** Why this many workers (one sentence, for logs and docs). */
  readonly workersReason: string;
  /** Request size limit in bytes. */
  readonly maxRequestBytes: number;
  /** Response size limit in bytes. */
  readonly maxResponseBytes: number;
  /** Container environment written by the tuning (user variables are merged over it later). */
  readonly environment: { [key: string]: string };
  /** `ModelDataDownloadTimeoutInSeconds`. */
  readonly modelDataDownloadTimeoutSeconds: number;
  /** `ContainerStartupHealthCheckTimeoutInSeconds`. */
  readonly containerStartupHealthCheckTimeoutSeconds: number;
  /** Legal but risky settings, as warnings. */
  readonly warnings: string[];
  /** The serving stack the variables were written for. */
  readonly server: ModelServer;
}

/** A tuning value, in the unit a server variable takes. */
type ServerSetting = 'workers' | 'timeoutMinutes' | 'timeoutSeconds' | 'maxRequestBytes' | 'maxResponseBytes' | 'jobQueueSize';

/**
 * Every variable each model server reads, in the order written, with the setting (and unit) it takes:
 * the contract, per server, with its sources in this file's header. Values left unset (a job queue
 * size nobody asked for) are not written.
 */
const SERVER_VARIABLES: Record<ModelServer, [string, ServerSetting][]> = {
  [ModelServer.SAGEMAKER_INFERENCE_TOOLKIT]: [
    ['SAGEMAKER_MODEL_SERVER_WORKERS', 'workers'],
    // MMS reads default_response_timeout in minutes; the seconds variants win where they exist.
    ['SAGEMAKER_MODEL_SERVER_TIMEOUT', 'timeoutMinutes'],
    ['SAGEMAKER_MODEL_SERVER_TIMEOUT_SECONDS', 'timeoutSeconds'],
    ['MMS_DEFAULT_RESPONSE_TIMEOUT', 'timeoutMinutes'],
    ['MMS_DEFAULT_RESPONSE_TIMEOUT_SECONDS', 'timeoutSeconds'],
    ['MMS_MAX_REQUEST_SIZE', 'maxRequestBytes'],
    ['MMS_MAX_RESPONSE_SIZE', 'maxResponseBytes'],
    ['MMS_JOB_QUEUE_SIZE', 'jobQueueSize'],
  ],
  [ModelServer.TORCHSERVE]: [
    ['SAGEMAKER_MODEL_SERVER_WORKERS', 'workers'],
    ['TS_DEFAULT_WORKERS_PER_MODEL', 'workers'],
    ['SAGEMAKER_MODEL_SERVER_TIMEOUT', 'timeoutSeconds'],
    // The toolkit's own `default_response_timeout=` line would be lost: it appends its settings to
    // default-ts.properties, which since toolkit v2.0.25 ends without a newline, gluing the first appended
    // line onto the last property. TS_* variables are read because that file sets enable_envvars_config=true
    // (aws/sagemaker-pytorch-inference-toolkit etc/default-ts.properties, torchserve.py; real-account.md item 34).
    ['TS_DEFAULT_RESPONSE_TIMEOUT', 'timeoutSeconds'],
    ['TS_MAX_REQUEST_SIZE', 'maxRequestBytes'],
    ['TS_MAX_RESPONSE_SIZE', 'maxResponseBytes'],
    ['TS_JOB_QUEUE_SIZE', 'jobQueueSize'],
  ],
  [ModelServer.SCIKIT_LEARN]: [
    ['SAGEMAKER_MODEL_SERVER_WORKERS', 'workers'],
    ['SAGEMAKER_MODEL_SERVER_TIMEOUT', 'timeoutSeconds'], // gunicorn's timeout, seconds
  ],
  [ModelServer.XGBOOST]: [
    ['SAGEMAKER_MODEL_SERVER_WORKERS', 'workers'], // gunicorn (sagemaker-containers), single-model endpoints
    ['SAGEMAKER_MODEL_SERVER_TIMEOUT', 'timeoutSeconds'],
    ['MAX_CONTENT_LENGTH', 'maxRequestBytes'], // Flask's request limit in the algorithm-mode app, bytes
  ],
  [ModelServer.NONE]: [],
};

/**
 * Pure tuning rule: model-server settings from the instance's hardware and the model's footprint.
 * Errors go into `errors`; the returned values are always usable (clamped) so synthesis can go on
 * and report every error at once.
 */
export function tuneModelServer(
  instanceType: SageMakerInstanceType,
  footprint: MemoryFootprint | undefined,
  options: ModelServerOptions = {},
  errors: PropErrors = new PropErrors(),
): ModelServerTuning {
  const warnings: string[] = [];
  const spec = instanceType.spec;
  const server = options.server ?? ModelServer.SAGEMAKER_INFERENCE_TOOLKIT;
  const unsupported = (what: string, why: string) => warnings.push(`modelServer.${what} is set, but ${why}: it is not written.`);
  const hostBytes = footprint?.host && wholeBytes(footprint.host);
  const gpuBytes = footprint?.gpu && wholeBytes(footprint.gpu);
  const memBytes = spec.memoryGiB * GIB;
  const gpuMemPerGpuBytes = spec.gpuMemoryGiB * GIB;

  errors.range('modelServer.workers', options.workers, 1, 1000, 'give a whole number of worker processes, at least 1', true);
  errors.range(
    'model.memoryFootprint.host (bytes)',
    hostBytes,
    1,
    Number.POSITIVE_INFINITY,
    'state the footprint of one model copy, e.g. Size.gibibytes(2)',
  );
  errors.range(
    'model.memoryFootprint.gpu (bytes)',
    gpuBytes,
    1,
    Number.POSITIVE_INFINITY,
    'state the GPU footprint of one model copy, e.g. Size.gibibytes(4)',
  );

  // --- workers ---
  let workers: number;
  let workersReason: string;
  const cpuBound = Math.max(1, Math.floor(spec.vCpus * 1.5));
  const hostCap = hostBytes && memBytes ? Math.floor((MEMORY_BUDGET_SHARE * memBytes) / hostBytes) : undefined;
  if (hostBytes && memBytes && hostBytes > memBytes) {
    errors.add(
      'model.memoryFootprint.host',
      new Described(fmtBytes(hostBytes)),
      `at most the ${instanceType.name} memory (${spec.memoryGiB} GiB)`,
      'choose an instance type with more memory (see CapacityPlan) or shrink the model',
    );
  }
  if (!instanceType.isGpu && !instanceType.specUnknown && gpuBytes) {
    errors.add(
      'model.memoryFootprint.gpu',
      new Described(fmtBytes(gpuBytes)),
      `only on GPU instance types (${instanceType.name} has no GPU)`,
      'remove memoryFootprint.gpu, or choose a GPU type such as ml.g4dn.xlarge',
    );
  }
  if (instanceType.isGpu && gpuBytes && gpuBytes > gpuMemPerGpuBytes) {
    errors.add(
      'model.memoryFootprint.gpu',
      new Described(fmtBytes(gpuBytes)),
      `at most one GPU's memory on ${instanceType.name} (${spec.gpuMemoryGiB} GiB)`,
      'choose a GPU with more memory, or cap the input length so one copy fits',
    );
  }
  if (options.workers !== undefined) {
    workers = Math.max(1, Math.round(options.workers));
    workersReason = 'set explicitly';
    if (hostCap !== undefined && workers > Math.max(1, hostCap)) {
      warnings.push(
        `modelServer.workers=${workers} × host footprint ${fmtBytes(hostBytes!)} exceeds 80 % of ${instanceType.name}'s ${spec.memoryGiB} GiB: expect OOM under load (at most ${Math.max(1, hostCap)} fit).`,
      );
    }
    if (instanceType.isGpu && gpuBytes) {
      const gpuCap = spec.gpuCount * Math.floor((MEMORY_BUDGET_SHARE * gpuMemPerGpuBytes) / gpuBytes);
      if (workers > Math.max(spec.gpuCount, gpuCap)) {
        warnings.push(
          `modelServer.workers=${workers} × GPU footprint ${fmtBytes(gpuBytes)} exceeds 80 % of ${instanceType.name}'s GPU memory: expect GPU OOM (at most ${Math.max(1, gpuCap)} fit).`,
        );
      }
    }
  } else if (instanceType.specUnknown) {
    workers = 1;
    workersReason = 'instance hardware unknown: one worker (pass an InstanceSpec to tune)';
  } else if (instanceType.isGpu) {
    if (gpuBytes) {
      const perGpu = Math.max(1, Math.floor((MEMORY_BUDGET_SHARE * gpuMemPerGpuBytes) / gpuBytes));
      workers = Math.min(spec.gpuCount * perGpu, cpuBound);
      workersReason = `${perGpu} model cop${perGpu === 1 ? 'y' : 'ies'} fit in 80 % of each of ${spec.gpuCount} GPU(s) of ${spec.gpuMemoryGiB} GiB`;
    } else {
      workers = spec.gpuCount;
      workersReason = 'one worker per GPU (GPU footprint not stated)';
      warnings.push(
        `${instanceType.name} is a GPU instance but model.memoryFootprint.gpu is not stated: using one worker per GPU (${spec.gpuCount}). State the footprint so workers can be sized to 80 % of GPU memory.`,
      );
    }
    if (hostCap !== undefined && workers > hostCap) {
      workers = Math.max(1, hostCap);
      workersReason += `; capped to ${workers} by host memory`;
    }
  } else {
    workers = cpuBound;
    workersReason = `⌊${spec.vCpus} vCPU × 1.5⌋`;
    if (hostCap !== undefined && hostCap < workers) {
      workers = Math.max(1, hostCap);
      workersReason += `, capped to ${workers}: ${workers} × ${fmtBytes(hostBytes!)} ≤ 80 % of ${spec.memoryGiB} GiB`;
    }
  }

  // --- sizes and timeouts ---
  const maxRequestBytes = options.maxRequestSize ? wholeBytes(options.maxRequestSize) : DEFAULT_MAX_REQUEST_BYTES;
  const maxResponseBytes = options.maxResponseSize ? wholeBytes(options.maxResponseSize) : maxRequestBytes;
  const sizeFix = `use a size from 1 KiB to ${MAX_SERVER_SIZE_BYTES} bytes (the servers read it as a 32-bit integer), e.g. Size.mebibytes(6), the real-time limit`;
  errors.range('modelServer.maxRequestSize (bytes)', maxRequestBytes, 1024, MAX_SERVER_SIZE_BYTES, sizeFix, true);
  errors.range('modelServer.maxResponseSize (bytes)', maxResponseBytes, 1024, MAX_SERVER_SIZE_BYTES, sizeFix, true);
  if (maxRequestBytes > INVOKE_PAYLOAD_LIMIT_BYTES) {
    warnings.push(
      `modelServer.maxRequestSize is ${maxRequestBytes} bytes, above the ${INVOKE_PAYLOAD_LIMIT_BYTES} bytes (6 MiB) that real-time InvokeEndpoint accepts: SageMaker rejects larger requests before they reach the container, so the larger limit only matters for asynchronous inference.`,
    );
  }
  const responseTimeout = options.responseTimeout?.toSeconds() ?? 60;
  errors.range('modelServer.responseTimeout (s)', responseTimeout, 1, 3600, 'use Duration.seconds(1..3600)', true);
  if (responseTimeout > 60) {
    warnings.push(
      `modelServer.responseTimeout is ${responseTimeout} s, but a real-time container must answer within 60 s: requests will time out at SageMaker first.`,
    );
  }
  errors.range('modelServer.jobQueueSize', options.jobQueueSize, 1, 100000, 'give a whole number of queued requests, e.g. 100', true);
  const download = options.modelDataDownloadTimeout?.toSeconds() ?? 3600;
  const startup = options.containerStartupHealthCheckTimeout?.toSeconds() ?? 900;
  errors.range(
    'modelServer.modelDataDownloadTimeout (s)',
    download,
    60,
    3600,
    'use Duration.seconds(60..3600); the default 3600 suits large models',
    true,
  );
  errors.range('modelServer.containerStartupHealthCheckTimeout (s)', startup, 60, 3600, 'use Duration.seconds(60..3600)', true);

  // The variables each server reads, written in its units (see SERVER_VARIABLES).
  const values: Record<ServerSetting, number | undefined> = {
    workers,
    timeoutMinutes: Math.max(1, Math.ceil(responseTimeout / 60)),
    timeoutSeconds: responseTimeout,
    maxRequestBytes,
    maxResponseBytes,
    jobQueueSize: options.jobQueueSize,
  };
  const environment: { [key: string]: string } = {};
  for (const [name, setting] of SERVER_VARIABLES[server]) {
    const value = values[setting];
    if (value !== undefined) environment[name] = String(value);
  }
  switch (server) {
    case ModelServer.SCIKIT_LEARN:
      if (options.maxRequestSize || options.maxResponseSize)
        unsupported('maxRequestSize/maxResponseSize', "the scikit-learn image's nginx has no body-size limit to set");
      if (options.jobQueueSize !== undefined) unsupported('jobQueueSize', 'gunicorn has no such queue setting in the scikit-learn image');
      break;
    case ModelServer.XGBOOST:
      if (options.jobQueueSize !== undefined) unsupported('jobQueueSize', 'gunicorn has no such queue setting in the XGBoost image');
      break;
    default:
      break;
  }

  return {
    workers,
    workersReason,
    maxRequestBytes,
    maxResponseBytes,
    environment,
    modelDataDownloadTimeoutSeconds: clampInt(download, 60, 3600),
    containerStartupHealthCheckTimeoutSeconds: clampInt(startup, 60, 3600),
    warnings,
    server,
  };
}

const GIB = 1024 * 1024 * 1024;

/**
 * A size in whole bytes, rounded up. `Size.toBytes()` throws for a size that is not a whole number of
 * bytes (`Size.gibibytes(2.1)` is 2,254,857,830.4 bytes), which a footprint stated in GiB often is.
 */
export function wholeBytes(size: Size): number {
  return Math.ceil(size.toBytes({ rounding: SizeRoundingBehavior.NONE }));
}

function clampInt(v: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.round(v)));
}

/** Human-readable byte count (GiB / MiB). */
export function fmtBytes(bytes: number): string {
  if (bytes >= GIB) return `${+(bytes / GIB).toFixed(2)} GiB`;
  return `${+(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * The model-server tuning rule, usable on its own (the capacity planner and `ResilientEndpoint` use it too).
 */
export class ModelServerTuner {
  /**
   * Model-server settings for a model on an instance type: workers (vCPUs × 1.5 on CPU, one per GPU,
   * bounded by the model's memory footprint), payload limit, timeouts, and the container environment.
   * @param instanceType the instance type
   * @param footprint the model's memory footprint; default unknown (workers bounded by the instance only)
   * @param options settings to override; default the tuned values
   * @throws Error naming every problem, when the settings cannot work (e.g. the model does not fit)
   */
  public static tune(instanceType: SageMakerInstanceType, footprint?: MemoryFootprint, options?: ModelServerOptions): ModelServerTuning {
    const errors = new PropErrors();
    const tuning = tuneModelServer(instanceType, footprint, options ?? {}, errors);
    if (errors.all.length) throw new Error(errors.all.join('\n'));
    return tuning;
  }

  private constructor() {}
}
