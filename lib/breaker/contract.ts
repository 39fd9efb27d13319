/**
 * The contract between the CircuitBreaker construct and its function, in one place both import:
 * the environment the construct writes and the function reads, the metric namespace and names the
 * function emits and the construct graphs, and how breaker alarms are named (the function and the
 * readiness checks recognise them by it). No AWS SDK or CDK import here: the function's bundle takes it as is.
 */

/** Environment of a function serving one endpoint. */
export const BREAKER_ENV = {
  ENDPOINT_NAME: 'ENDPOINT_NAME',
  PRIMARY_VARIANT: 'PRIMARY_VARIANT',
  FALLBACK_VARIANT: 'FALLBACK_VARIANT',
  PARAMETER_NAME: 'PARAMETER_NAME',
  TABLE_NAME: 'TABLE_NAME',
  GPU_COUNT: 'GPU_COUNT',
  ERROR_WINDOW_SECONDS: 'ERROR_WINDOW_SECONDS',
  METRIC_PERIOD_SECONDS: 'METRIC_PERIOD_SECONDS',
  PER_GPU_METRICS: 'PER_GPU_METRICS',
  PRIMARY_CAPACITY: 'PRIMARY_CAPACITY',
  FALLBACK_CAPACITY: 'FALLBACK_CAPACITY',
  DRY_RUN: 'DRY_RUN',
  METRIC_NAMESPACE: 'METRIC_NAMESPACE',
  /** The namespace the container publishes its guard metrics in (the application namespace). */
  APPLICATION_NAMESPACE: 'APPLICATION_NAMESPACE',
  BREAKER_CONFIG: 'BREAKER_CONFIG',
  /** A shared function: the names of its endpoints' settings parameters, comma-separated. */
  CONFIG_PARAMETERS: 'CONFIG_PARAMETERS',
} as const;

/** Environment variable that tells the container where its degrade level is. */
export const DEGRADE_PARAMETER_ENV = 'RESILIENT_ENDPOINT_DEGRADE_PARAMETER';

/**
 * Default namespace of the metrics the container publishes (per-stage memory, and the guard's
 * {@link GUARD_METRICS}); it reaches the container as `RESILIENT_ENDPOINT_METRICS_NAMESPACE`.
 */
export const DEFAULT_APPLICATION_NAMESPACE = 'ResilientEndpoint/Application';

/** Namespace of the breaker's own metrics (dimension `EndpointName`). */
export const BREAKER_NAMESPACE = 'ResilientEndpoint/CircuitBreaker';

/** The breaker's own metrics. */
export const BREAKER_METRICS = {
  STATE: 'BreakerState',
  FALLBACK_SHARE: 'FallbackSharePercent',
  DEGRADE_LEVEL: 'DegradeLevel',
} as const;

/**
 * Tag on the settings parameter of an endpoint that a shared breaker serves, valued with the
 * endpoint's name: how the readiness checks see that breaker from the endpoint's own template (a
 * fleet's function lives in the parent stack). AWS::SSM::Parameter takes `Tags` as a key-value map
 * (CloudFormation template reference, aws-resource-ssm-parameter); SSM tag keys and values allow
 * `[\p{L}\p{Z}\p{N}_.:/=+\-@]`, up to 128 and 256 characters, which this key and any endpoint name
 * (`[a-zA-Z0-9-]`, at most 63) meet.
 */
export const BREAKER_SETTINGS_TAG = 'resilient-endpoint:breaker-settings';

/**
 * The SageMaker events the breaker re-evaluates on, both with `detail.EndpointName`: status changes
 * ("SageMaker Endpoint State Change", `EndpointStatus` e.g. IN_SERVICE) and capacity or deployment
 * updates ("SageMaker Endpoint Deployment State Change", e.g. "Scaling out desired instance count to 6"),
 * which the first is not documented to fire for (developer guide automating-sagemaker-with-eventbridge;
 * awsdocs/amazon-sagemaker-developer-guide doc_source/automating-sagemaker-with-eventbridge.md).
 */
export const ENDPOINT_EVENT_TYPES = ['SageMaker Endpoint State Change', 'SageMaker Endpoint Deployment State Change'];

/** Tag key on the scalable targets a breaker may change (valued with the breaker's id); its grant is conditioned on it. */
export const BREAKER_TAG = 'resilient-endpoint:circuit-breaker';

/** What every breaker alarm's name holds, between the variant and the metric. */
export const BREAKER_ALARM_MARK = '-breaker-';

/** The name of a breaker trigger alarm: `<endpoint>-<variant>-breaker-<metric>`. */
export function breakerAlarmName(endpointName: string, variantName: string, metric: string): string {
  return `${endpointName}-${variantName}${BREAKER_ALARM_MARK}${metric}`;
}

/**
 * CloudWatch Metrics Insights query for the hottest GPU of any instance of a variant: enhanced
 * metrics publish `GPUMemoryUtilization` per GPU with the `AcceleratorId` (and `InstanceId`)
 * dimension (SageMaker developer guide, monitoring-cloudwatch-enhanced-metrics). The dimension set
 * is inferred from that page: if it differs, the query returns nothing and the mean GPU (summed
 * metric ÷ GPUs) still counts — being wrong makes the breaker no worse than without it.
 */
export function perGpuQuery(endpointName: string, variantName: string): string {
  const quote = (x: string) => x.replace(/'/g, "''");
  return `SELECT MAX(GPUMemoryUtilization) FROM SCHEMA("/aws/sagemaker/Endpoints", AcceleratorId, EndpointName, InstanceId, VariantName) WHERE EndpointName = '${quote(endpointName)}' AND VariantName = '${quote(variantName)}'`;
}

/**
 * The container → breaker contract (layers of protection that compose, issue 28/29). The container's
 * guard is the fast, blunt layer at the hard edge; the breaker is the slow, graceful one. So the guard
 * reports what it absorbs: one worker per instance (the one holding the instance's lock, as for the
 * degrade level) publishes, every {@link GUARD_METRIC_PERIOD_SECONDS} s, in the application namespace
 * (`RESILIENT_ENDPOINT_METRICS_NAMESPACE`), with exactly the dimensions `EndpointName` and `VariantName`
 * (`RESILIENT_ENDPOINT_NAME` / `RESILIENT_ENDPOINT_VARIANT`), high resolution (`StorageResolution` 1),
 * statistic sets summed over the instance's workers — never one call per request:
 */
export const GUARD_METRICS = {
  /** Percent: the container's memory (every worker's resident memory plus what the guard has admitted
   * and not yet seen released) against the container's budget; the interval's maximum. */
  PRESSURE: 'GuardPressure',
  /** Count: requests refused for memory (the estimate did not fit, the backstop, level 2). */
  MEMORY_REFUSALS: 'GuardMemoryRefusals',
  /** Count: every 4XX the container answered on purpose, whatever the reason (memory, too long,
   * malformed, wrong content type): subtracted from `InvocationModelErrors` so that what remains is
   * what the container did not choose — dead and hung workers, 5XX. */
  DELIBERATE_4XX: 'DeliberateClientErrors',
  /** Percent: the memory the guard has admitted for requests in flight (their estimates), summed over the
   * instance's workers, against the container's budget; the interval's average. It carries the load alone —
   * no model copies, no allocator cache — so it falls as instances are added: what a memory target tracks. */
  IN_FLIGHT: 'GuardInFlightPercent',
} as const;

/** How often (seconds) the container publishes {@link GUARD_METRICS}. */
export const GUARD_METRIC_PERIOD_SECONDS = 10;

/**
 * The container's memory budget: the guard's hard edge, for the whole container (all its workers
 * together), in bytes. Host memory for CPU models; with a GPU, the second variable is the budget of
 * each GPU (for the workers placed on it). The per-worker variables
 * (`RESILIENT_ENDPOINT_WORKER_MEMORY_BYTES`, `..._WORKER_GPU_MEMORY_BYTES`) remain, as this ÷ workers.
 */
export const CONTAINER_BUDGET_ENV = {
  HOST: 'RESILIENT_ENDPOINT_CONTAINER_MEMORY_BYTES',
  GPU: 'RESILIENT_ENDPOINT_CONTAINER_GPU_MEMORY_BYTES',
} as const;

/**
 * The guard's hard edge, by default: the container's budget is this percent of the instance's memory
 * (and of each GPU's), above the breaker's degrade trigger (80 %), so that the graceful layer (shift
 * traffic, scale out, degrade) acts before the blunt one (refuse).
 */
export const CONTAINER_BUDGET_DEFAULT_PERCENT = 90;
