/** The breaker's decision log (JSON lines) and its own metrics (Embedded Metric Format). */
import { BREAKER_METRICS as M } from '../../lib/breaker/contract';
import { LEVEL, STATE_CODE } from '../../lib/breaker/policy';
import { HandlerSettings } from './settings';

export function emitMetric(s: HandlerSettings, state: keyof typeof STATE_CODE, share: number): void {
  // Embedded Metric Format: Lambda turns this log line into CloudWatch metrics, no API call.
  console.log(
    JSON.stringify({
      _aws: {
        Timestamp: Date.now(),
        CloudWatchMetrics: [
          {
            Namespace: s.metricNamespace,
            Dimensions: [['EndpointName']],
            Metrics: [
              { Name: M.STATE, Unit: 'None' },
              { Name: M.FALLBACK_SHARE, Unit: 'Percent' },
              { Name: M.DEGRADE_LEVEL, Unit: 'None' },
            ],
          },
        ],
      },
      EndpointName: s.endpointName,
      [M.STATE]: STATE_CODE[state],
      [M.FALLBACK_SHARE]: Math.round(share * 100),
      [M.DEGRADE_LEVEL]: LEVEL[state],
    }),
  );
}

export function log(o: object): void {
  console.log(JSON.stringify({ component: 'circuit-breaker', ...o }));
}

export function summarize(event: unknown): unknown {
  if (!event || typeof event !== 'object') return typeof event;
  const e = event as Record<string, unknown>;
  return { source: e.source, detailType: e['detail-type'] };
}
