import { Duration, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { DEFAULT_APPLICATION_NAMESPACE, GUARD_METRIC_PERIOD_SECONDS, GUARD_METRICS, perGpuQuery } from '../breaker/contract';

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
    /** The namespace the container publishes its own metrics in (`RESILIENT_ENDPOINT_METRICS_NAMESPACE`). */
    public readonly applicationNamespace: string = DEFAULT_APPLICATION_NAMESPACE,
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
   * The container guard's pressure: the container's memory (its workers' and what the guard has admitted)
   * as % of the container's budget, the hottest instance (`Maximum`), published by the runtime helper every
   * 10 s at high resolution in the application namespace. Default period 10 s.
   */
  public guardPressure(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.make(this.applicationNamespace, GUARD_METRICS.PRESSURE, 'Maximum', { period: Duration.seconds(GUARD_METRIC_PERIOD_SECONDS), ...o });
  }

  /** Requests the container guard refused for memory (`Sum`; default period 10 s). */
  public guardMemoryRefusals(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.make(this.applicationNamespace, GUARD_METRICS.MEMORY_REFUSALS, 'Sum', {
      period: Duration.seconds(GUARD_METRIC_PERIOD_SECONDS),
      ...o,
    });
  }

  /** Every 4XX the container answered on purpose (too long, refused for memory, malformed): `Sum`, 1 minute. */
  public deliberateClientErrors(o: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.make(this.applicationNamespace, GUARD_METRICS.DELIBERATE_4XX, 'Sum', o);
  }

  /**
   * Requests the container did not choose to fail — dead and hung workers, timeouts, broken connections,
   * 5XX — as a count: `InvocationModelErrors` (every answer that was not a 2XX, "4XX/5XX status codes,
   * low-level socket errors, malformed HTTP responses, and request timeouts": developer guide
   * `monitoring-cloudwatch`) less the container's own `DeliberateClientErrors`, clamped at 0. A worker
   * killed by the OOM killer reaches the client as a 5XX, a 4XX (TorchServe answers 507 or 413) or a
   * socket error (pytorch/serve `WorkerThread.java`: 500, or 507 on exit code 137), so subtracting every 4XX would subtract the deaths;
   * only the container knows which 4XX it meant. In a period where the container publishes no
   * `DeliberateClientErrors` (a container without the runtime helper) every 4XX is subtracted instead.
   */
  public unexpectedModelErrors(o: cloudwatch.MathExpressionOptions = {}): cloudwatch.MathExpression {
    const period = o.period ?? Duration.minutes(5);
    return new cloudwatch.MathExpression({
      expression: this.unexpected(),
      usingMetrics: this.errorInputs(period),
      period,
      label: o.label ?? 'Errors not chosen by the container (dead or hung workers, 5XX)',
    });
  }

  /**
   * Model errors the container did not choose, as a fraction of invocations (0–1; 0 with no traffic):
   * `unexpectedModelErrors` ÷ `Invocations`. The container's deliberate 4XX (oversized or refused
   * requests) do not count, so they neither page nor roll deployments back (`InvocationModelErrors` counts 4XX too:
   * developer guide `monitoring-cloudwatch`);
   * what counts is what happens to a request when a worker dies, whatever status it surfaces as.
   */
  public unexpectedModelErrorRate(o: cloudwatch.MathExpressionOptions = {}): cloudwatch.MathExpression {
    const period = o.period ?? Duration.minutes(5);
    const sfx = this.idSuffix();
    return new cloudwatch.MathExpression({
      expression: `IF(inv_${sfx} > 0, ${this.unexpected()} / inv_${sfx}, 0)`,
      usingMetrics: { ...this.errorInputs(period), [`inv_${sfx}`]: this.invocations({ period }) },
      period,
      label: o.label ?? 'Errors not chosen by the container (0-1)',
    });
  }

  /**
   * CPU-seconds per million predictions, incident B's resource efficiency (its baseline 120, its target
   * 100): the variant's CPU time over the period per million invocations. CPU time is `CPUUtilization`
   * (`Average` over the instances; SageMaker sums it over the instance's vCPUs, so 100 is one vCPU busy for
   * the whole period) ÷ 100 × the period's seconds × the instance count; the instance count is `Invocations`
   * ÷ `InvocationsPerInstance` (each request adds 1/instances to the latter, developer guide
   * `monitoring-cloudwatch`). A period without invocations has no point (metric math drops it).
   */
  public cpuSecondsPerMillionPredictions(o: cloudwatch.MathExpressionOptions = {}): cloudwatch.MathExpression {
    const period = o.period ?? Duration.hours(1);
    const sfx = this.idSuffix();
    const [cpu, inv, ipi] = [`cpu_${sfx}`, `inv_${sfx}`, `ipi_${sfx}`];
    const instances = `(${inv} / ${ipi})`;
    return new cloudwatch.MathExpression({
      expression: `IF(${inv} > 0, 1000000 * (${cpu} / 100) * PERIOD(${cpu}) * ${instances} / ${inv})`,
      usingMetrics: {
        [cpu]: this.cpuUtilization({ period, statistic: 'Average' }),
        [inv]: this.invocations({ period }),
        [ipi]: this.invocationsPerInstance({ period }),
      },
      period,
      label: o.label ?? `CPU-seconds per million predictions (${this.variantName})`,
    });
  }

  /** max(0, merr − deliberate), or − 4XX in a period without the container's count (metric math). */
  private unexpected(): string {
    const sfx = this.idSuffix();
    const [merr, dce, e4] = [`merr_${sfx}`, `dce_${sfx}`, `e4_${sfx}`];
    const d = `(${merr} - IF(FILL(${dce}, -1) >= 0, FILL(${dce}, 0), ${e4}))`;
    return `IF(${d} > 0, ${d}, 0)`;
  }

  private errorInputs(period: Duration): Record<string, cloudwatch.IMetric> {
    const sfx = this.idSuffix();
    return {
      [`merr_${sfx}`]: this.invocationModelErrors({ period, statistic: 'Sum' }),
      [`dce_${sfx}`]: this.deliberateClientErrors({ period, statistic: 'Sum' }),
      [`e4_${sfx}`]: this.invocation4xxErrors({ period, statistic: 'Sum' }),
    };
  }

  /** Ids unique per variant, so several variants' expressions can share one graph (a token name: one fixed suffix). */
  private idSuffix(): string {
    return Token.isUnresolved(this.variantName) ? 'variant' : this.variantName.toLowerCase().replace(/[^a-z0-9]/g, '_');
  }

  /**
   * Success rate in percent: 100 × (1 − errors the container did not choose ÷ invocations) over the
   * period (100 with no traffic): a dead worker lowers it whatever status it surfaces as, a deliberate
   * 4XX does not (see `unexpectedModelErrors`).
   */
  public successRate(o: cloudwatch.MathExpressionOptions = {}): cloudwatch.MathExpression {
    const period = o.period ?? Duration.minutes(5);
    const sfx = this.idSuffix();
    return new cloudwatch.MathExpression({
      expression: `IF(inv_${sfx} > 0, 100 * (1 - ${this.unexpected()} / inv_${sfx}), 100)`,
      usingMetrics: { ...this.errorInputs(period), [`inv_${sfx}`]: this.invocations({ period }) },
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
