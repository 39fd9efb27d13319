import { GetMetricDataCommandInput, GetMetricDataCommandOutput, MetricDataResult } from '@aws-sdk/client-cloudwatch';

/** One raw datapoint as a service publishes it (epoch ms, value). */
interface Sample {
  readonly t: number;
  readonly v: number;
}

/**
 * A stand-in for CloudWatch's GetMetricData that answers the way CloudWatch does, so tests do not
 * hand the handler one convenient bucket:
 * - buckets start at StartTime rounded down to the period (to the minute for periods ≥ 60 s) and
 *   step by the period; EndTime is exclusive, so the last bucket of a range that is not a multiple
 *   of the period is partial (CloudWatch `GetMetricData` reference: StartTime / EndTime / Period);
 * - a datapoint becomes visible `delayS` after its timestamp (1-minute SageMaker data reaches
 *   readers 1–2 minutes late: ../shared/reference/scaling-dynamics.md §2);
 * - buckets with no visible data are left out, as CloudWatch does;
 * - statistics Sum, Maximum, Minimum, Average and SampleCount over the samples in each bucket.
 */
export class CloudWatchFake {
  private readonly series = new Map<string, Sample[]>();
  /** Queries received, for assertions. */
  public readonly requests: GetMetricDataCommandInput[] = [];

  constructor(private readonly delayS = 0) {}

  /** Publishes one sample of a metric (dimensions as name → value). */
  public put(namespace: string, metricName: string, dimensions: Record<string, string>, t: number, v: number): this {
    const k = key(namespace, metricName, dimensions);
    const list = this.series.get(k) ?? [];
    list.push({ t, v });
    this.series.set(k, list);
    return this;
  }

  /** Publishes one sample per minute, the last one at `endMinute` (epoch ms of a minute start). */
  public putMinutes(namespace: string, metricName: string, dimensions: Record<string, string>, endMinute: number, values: number[]): this {
    values.forEach((v, i) => this.put(namespace, metricName, dimensions, endMinute - (values.length - 1 - i) * 60_000, v));
    return this;
  }

  /** Answers a GetMetricData request at wall-clock time `now`. */
  public getMetricData(input: GetMetricDataCommandInput, now: number): GetMetricDataCommandOutput {
    this.requests.push(input);
    const start = new Date(input.StartTime as Date).getTime();
    const end = new Date(input.EndTime as Date).getTime();
    const results: MetricDataResult[] = (input.MetricDataQueries ?? []).map(q => {
      const ms = q.MetricStat!;
      const period = ms.Period! * 1000;
      const dims = Object.fromEntries((ms.Metric!.Dimensions ?? []).map(d => [d.Name!, d.Value!]));
      const samples = (this.series.get(key(ms.Metric!.Namespace!, ms.Metric!.MetricName!, dims)) ?? []).filter(s => s.t + this.delayS * 1000 <= now);
      const align = period >= 60_000 ? 60_000 : period;
      const first = Math.floor(start / align) * align;
      const timestamps: Date[] = [];
      const values: number[] = [];
      for (let b = first; b < end; b += period) {
        const inBucket = samples.filter(s => s.t >= b && s.t < Math.min(b + period, end)).map(s => s.v);
        if (!inBucket.length) continue;
        timestamps.push(new Date(b));
        values.push(stat(ms.Stat!, inBucket));
      }
      if (input.ScanBy !== 'TimestampAscending') {
        timestamps.reverse();
        values.reverse();
      }
      return { Id: q.Id, Label: ms.Metric!.MetricName, Timestamps: timestamps, Values: values, StatusCode: 'Complete' };
    });
    return { MetricDataResults: results, $metadata: {} };
  }
}

function key(namespace: string, metricName: string, dimensions: Record<string, string>): string {
  return `${namespace}|${metricName}|${Object.keys(dimensions)
    .sort()
    .map(k => `${k}=${dimensions[k]}`)
    .join(',')}`;
}

function stat(name: string, xs: number[]): number {
  switch (name) {
    case 'Sum':
      return xs.reduce((a, b) => a + b, 0);
    case 'Maximum':
      return Math.max(...xs);
    case 'Minimum':
      return Math.min(...xs);
    case 'Average':
      return xs.reduce((a, b) => a + b, 0) / xs.length;
    case 'SampleCount':
      return xs.length;
    default:
      throw new Error(`CloudWatchFake: statistic ${name} not modelled`);
  }
}
