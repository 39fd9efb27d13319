// The breaker function's settings for one endpoint, shaped as the CircuitBreaker construct writes them
// (environment or settings parameter): the fixture of the handler suites and the bench.
import type { HandlerSettings } from '../lambda/circuit-breaker/settings';
import { DEFAULT_CONFIG } from '../lib/breaker/policy';

export function breakerSettings(endpointName: string, overrides: Partial<HandlerSettings> = {}): HandlerSettings {
  return {
    endpointName,
    primaryVariant: 'Primary',
    fallbackVariant: 'Fallback',
    parameterName: `/breaker/${endpointName}`,
    tableName: 'state',
    gpuCount: 0,
    errorWindowSeconds: 600,
    metricPeriodSeconds: 60,
    perGpuMetrics: false,
    dryRun: false,
    metricNamespace: 'NS',
    config: DEFAULT_CONFIG,
    ...overrides,
  };
}
