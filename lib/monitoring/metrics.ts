import { Duration, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { perGpuQuery } from '../breaker/contract';

/** Namespace of the instance metrics (utilization) of SageMaker endpoints. */
export const ENDPOINT_INSTANCE_NAMESPACE = '/aws/sagemaker/Endpoints';
/** Namespace of the invocation metrics of SageMaker endpoints. */
export const ENDPOINT_INVOCATION_NAMESPACE = 'AWS/SageMaker';

/**
 * Metric factory for one production variant of one endpoint: the right namespace,
 * dimensions (`EndpointName`, `VariantName`), statistic and unit for each SageMaker metric.
 *
 * Units (verified in the SageMaker docs): utilization metrics are Percent; CPU, GPU and GPU-memory
 * utilization are summed over vCPUs / GPUs (0 – 100 × N); `ModelLatency` and `OverheadLatency`
 * are in **microseconds**.
 *
 * No metric carries a `unit`: on an alarm (and in a metric-math `MetricStat`) `Unit` is a filter,
 * and data published with another unit would never match, leaving the alarm in INSUFFICIENT_DATA
 * forever. CloudWatch's `PutMetricAlarm` reference recommends omitting it. Thresholds are stated
 * in the unit SageMaker publishes instead (see each helper).
 */
export class EndpointMetricFactory {
  constructor(
    /** The endpoint's name. */
    public readonly endpointName: string,
    /** The production variant's name. */
    public readonly variantName: string,
  ) {}

  /** Host memory used by the containers, 0–100 %. Default statistic `Maximum`: the hottest instance. */
  public memoryUtilization(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.instanceMetric('MemoryUtilization', 'Maximum', o);
  }

  /** GPU memory used, summed over GPUs: 0 – 100 × GPUs %. Default statistic `Maximum`. */
  public gpuMemoryUtilization(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.instanceMetric('GPUMemoryUtilization', 'Maximum', o);
  }

  /**
   * GPU memory of the hottest single GPU of any instance, 0–100 %: a CloudWatch Metrics Insights
   * `MAX` over the per-GPU series that enhanced metrics publish (`AcceleratorId` dimension; needs
   * `MetricsConfig.EnableEnhancedMetrics`). The summed metric hides one full GPU among idle ones.
   */
  public hottestGpuMemoryUtilization(o: cloudwatch.MathExpressionOptions = {}): cloudwatch.MathExpression {
    return new cloudwatch.MathExpression({
      expression: perGpuQuery(this.endpointName, this.variantName),
      usingMetrics: {},
      // Metrics Insights aggregates at one minute ("does not support high-resolution data": real-account.md item 24).
      period: o.period ?? Duration.minutes(1),
      label: o.label ?? 'Hottest GPU memory (%)',
    });
  }

  /** GPU utilization, summed over GPUs: 0 – 100 × GPUs %. Default statistic `Maximum`. */
  public gpuUtilization(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.instanceMetric('GPUUtilization', 'Maximum', o);
  }

  /** CPU utilization, summed over vCPUs: 0 – 100 × vCPUs %. Default statistic `Maximum`. */
  public cpuUtilization(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.instanceMetric('CPUUtilization', 'Maximum', o);
  }

  /** Disk used, 0–100 %. Data capture stops above ~75 %. Default statistic `Maximum`. */
  public diskUtilization(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.instanceMetric('DiskUtilization', 'Maximum', o);
  }

  /** Invocations (requests). Default statistic `Sum`. */
  public invocations(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.invocationMetric('Invocations', 'Sum', o);
  }

  /**
   * Invocations per instance: each request adds 1/instances, so the per-minute `Sum` is the
   * per-instance request count of that minute (what target tracking scales on). Default `Sum`.
   */
  public invocationsPerInstance(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.invocationMetric('InvocationsPerInstance', 'Sum', o);
  }

  /** 5XX responses. Statistic `Average` is the 5XX rate (0–1); default `Sum` (a count). */
  public invocation5xxErrors(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.invocationMetric('Invocation5XXErrors', 'Sum', o);
  }

  /** 4XX responses. Statistic `Average` is the 4XX rate (0–1); default `Sum`. */
  public invocation4xxErrors(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.invocationMetric('Invocation4XXErrors', 'Sum', o);
  }

  /** Non-2xx answers of the model container, including timeouts. Default `Sum`. */
  public invocationModelErrors(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.invocationMetric('InvocationModelErrors', 'Sum', o);
  }

  /** Model latency in **microseconds** (500 ms = 500,000). Default statistic `p99`. */
  public modelLatency(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.invocationMetric('ModelLatency', 'p99', o);
  }

  /** SageMaker's own overhead latency in **microseconds**. Default statistic `Average`. */
  public overheadLatency(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.invocationMetric('OverheadLatency', 'Average', o);
  }

  /** In-flight requests at the model container (10-second data). Default statistic `Maximum`. */
  public concurrentRequestsPerModel(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.invocationMetric('ConcurrentRequestsPerModel', 'Maximum', o);
  }

  /** 5XX error rate as a fraction (0–1): `Average` of `Invocation5XXErrors`. */
  public invocation5xxRate(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.invocationMetric('Invocation5XXErrors', 'Average', { ...o, statistic: 'Average' });
  }

  /**
   * Model errors that are not deliberate rejections, as a fraction of invocations (0–1):
   * (`InvocationModelErrors` − `Invocation4XXErrors`) ÷ `Invocations`, a math expression (0 with no
   * traffic). `InvocationModelErrors` counts every non-2XX answer of the container, 4XX included
   * (developer guide `monitoring-cloudwatch`), so the container's own 413s for oversized or degraded
   * requests would page and roll deployments back; what is left is its 5XXs, timeouts and broken
   * connections.
   */
  public unexpectedModelErrorRate(o: cloudwatch.MathExpressionOptions = {}): cloudwatch.MathExpression {
    const period = o.period ?? Duration.minutes(5);
    const sfx = this.idSuffix();
    return new cloudwatch.MathExpression({
      expression: `IF(inv_${sfx} > 0 AND merr_${sfx} > e4_${sfx}, (merr_${sfx} - e4_${sfx}) / inv_${sfx}, 0)`,
      usingMetrics: {
        [`inv_${sfx}`]: this.invocations({ period }),
        [`merr_${sfx}`]: this.invocationModelErrors({ period, statistic: 'Sum' }),
        [`e4_${sfx}`]: this.invocation4xxErrors({ period, statistic: 'Sum' }),
      },
      period,
      label: o.label ?? 'Model errors other than 4XX (0-1)',
    });
  }

  /** Ids unique per variant, so several variants' expressions can share one graph (a token name: one fixed suffix). */
  private idSuffix(): string {
    return Token.isUnresolved(this.variantName) ? 'variant' : this.variantName.toLowerCase().replace(/[^a-z0-9]/g, '_');
  }

  /** Success rate in percent: 100 × (1 − 5XX / invocations) over the period, as a math expression (100 with no traffic). */
  public successRate(o: cloudwatch.MathExpressionOptions = {}): cloudwatch.MathExpression {
    const period = o.period ?? Duration.minutes(5);
    const sfx = this.idSuffix();
    return new cloudwatch.MathExpression({
      expression: `IF(inv_${sfx} > 0, 100 * (1 - e5_${sfx} / inv_${sfx}), 100)`,
      usingMetrics: {
        [`inv_${sfx}`]: this.invocations({ period }),
        [`e5_${sfx}`]: this.invocation5xxErrors({ period }),
      },
      period,
      label: o.label ?? 'Success rate (%)',
    });
  }

  private instanceMetric(metricName: string, statistic: string, o: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.make(ENDPOINT_INSTANCE_NAMESPACE, metricName, statistic, o);
  }

  private invocationMetric(metricName: string, statistic: string, o: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.make(ENDPOINT_INVOCATION_NAMESPACE, metricName, statistic, o);
  }

  /**
   * Any metric of this variant (`EndpointName` and `VariantName` dimensions; `Average` per minute unless `props` says otherwise).
   * @param namespace e.g. 'AWS/SageMaker' or '/aws/sagemaker/Endpoints'
   * @param metricName the metric's name
   * @param props statistic, period, label, extra dimensions; default `Average` per minute
   */
  public metric(namespace: string, metricName: string, props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.make(namespace, metricName, 'Average', props);
  }

  /** The metric with this variant's dimensions, the helper's statistic and 1-minute period unless `o` says otherwise. */
  private make(namespace: string, metricName: string, statistic: string, o: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      ...o,
      namespace,
      metricName,
      dimensionsMap: { EndpointName: this.endpointName, VariantName: this.variantName, ...o.dimensionsMap },
      statistic: o.statistic ?? statistic,
      period: o.period ?? Duration.minutes(1),
    });
  }
}
