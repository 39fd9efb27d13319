/**
 * The breaker function's settings (from its environment, or from an endpoint's settings parameter for
 * a shared function) and its AWS clients.
 */
import { ApplicationAutoScalingClient } from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { SSMClient } from '@aws-sdk/client-ssm';
import { BREAKER_ENV as E, BREAKER_NAMESPACE, DEFAULT_APPLICATION_NAMESPACE } from '../../lib/breaker/contract';
import { BreakerConfig, DEFAULT_CONFIG, VariantCapacity } from '../../lib/breaker/policy';

/** Settings from the environment (set by the CircuitBreaker construct). */
export interface HandlerSettings {
  readonly endpointName: string;
  readonly primaryVariant: string;
  readonly fallbackVariant?: string;
  /** SSM parameter the container reads its degrade level from. */
  readonly parameterName: string;
  /** DynamoDB table holding the breaker's state item. */
  readonly tableName: string;
  readonly gpuCount: number;
  readonly errorWindowSeconds: number;
  /** The endpoint's metric publishing period (MetricsConfig), 10–300 s. */
  readonly metricPeriodSeconds: number;
  /** Per-GPU data (enhanced metrics) is published: judge the hottest GPU. */
  readonly perGpuMetrics: boolean;
  readonly primaryCapacity?: VariantCapacity;
  readonly fallbackCapacity?: VariantCapacity;
  readonly dryRun: boolean;
  readonly metricNamespace: string;
  /**
   * The namespace the container publishes its guard metrics in (`RESILIENT_ENDPOINT_METRICS_NAMESPACE`).
   * @default DEFAULT_APPLICATION_NAMESPACE
   */
  readonly applicationNamespace?: string;
  readonly config: BreakerConfig;
  /**
   * The state item's key in the table.
   * @default 'breaker' (one endpoint per table); a fleet uses the endpoint's name
   */
  readonly stateKey?: string;
}

export { DEFAULT_APPLICATION_NAMESPACE };

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): HandlerSettings {
  const fallback = env[E.FALLBACK_VARIANT] || undefined;
  const json = <T>(k: string): T | undefined => (env[k] ? (JSON.parse(env[k]!) as T) : undefined);
  return {
    endpointName: required(env, E.ENDPOINT_NAME),
    primaryVariant: required(env, E.PRIMARY_VARIANT),
    fallbackVariant: fallback,
    parameterName: required(env, E.PARAMETER_NAME),
    tableName: required(env, E.TABLE_NAME),
    gpuCount: Number(env[E.GPU_COUNT] ?? '0') || 0,
    errorWindowSeconds: Number(env[E.ERROR_WINDOW_SECONDS] ?? '600') || 600,
    metricPeriodSeconds: Number(env[E.METRIC_PERIOD_SECONDS] ?? '60') || 60,
    perGpuMetrics: env[E.PER_GPU_METRICS] === 'true',
    primaryCapacity: json<VariantCapacity>(E.PRIMARY_CAPACITY),
    fallbackCapacity: json<VariantCapacity>(E.FALLBACK_CAPACITY),
    dryRun: env[E.DRY_RUN] === 'true',
    metricNamespace: env[E.METRIC_NAMESPACE] ?? BREAKER_NAMESPACE,
    applicationNamespace: env[E.APPLICATION_NAMESPACE] || DEFAULT_APPLICATION_NAMESPACE,
    config: { ...DEFAULT_CONFIG, ...(json<Partial<BreakerConfig>>(E.BREAKER_CONFIG) ?? {}), hasFallback: !!fallback },
  };
}

function required(env: NodeJS.ProcessEnv, key: string): string {
  const v = env[key];
  if (!v) throw new Error(`missing environment variable ${key}`);
  return v;
}

/** Settings of a fleet function (from its environment). */
export interface FleetSettings {
  readonly tableName: string;
  /** Names of the endpoints' settings parameters. */
  readonly configParameters: string[];
}

export function fleetSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): FleetSettings {
  return { tableName: required(env, E.TABLE_NAME), configParameters: required(env, E.CONFIG_PARAMETERS).split(',').filter(Boolean) };
}

/** One endpoint's settings from its settings parameter (written by the CircuitBreaker construct with `shared`). */
export function settingsFromParameter(value: string, tableName: string): HandlerSettings {
  const o = JSON.parse(value);
  return { ...o, tableName, stateKey: o.endpointName, config: { ...DEFAULT_CONFIG, ...o.config, hasFallback: !!o.fallbackVariant } };
}

/** AWS clients (injectable for tests). The SDK's standard retry mode handles throttling. */
export interface Clients {
  readonly sagemaker: SageMakerClient;
  readonly cloudwatch: CloudWatchClient;
  readonly ssm: SSMClient;
  readonly dynamodb: DynamoDBClient;
  readonly autoscaling: ApplicationAutoScalingClient;
}

/** One client per service, each with the SDK's standard retries (up to `maxAttempts` attempts). */
export function createClients(maxAttempts = 4): Clients {
  return {
    sagemaker: new SageMakerClient({ maxAttempts }),
    cloudwatch: new CloudWatchClient({ maxAttempts }),
    ssm: new SSMClient({ maxAttempts }),
    dynamodb: new DynamoDBClient({ maxAttempts }),
    autoscaling: new ApplicationAutoScalingClient({ maxAttempts }),
  };
}
