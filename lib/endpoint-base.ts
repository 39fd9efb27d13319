import { Arn, ArnFormat, Resource, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { Construct } from 'constructs';
import { EndpointMetricFactory } from './monitoring/metrics';

/**
 * What every endpoint of this library offers, created here or imported: the invoke grant and the
 * metric helpers (the right namespace, dimensions, statistic; no unit filter), as aws-cdk's own
 * resources do (`metricXxx(props?: cloudwatch.MetricOptions)`, `grantXxx(grantee)`).
 */
export abstract class EndpointBase extends Resource implements sagemaker.IEndpoint {
  /** The endpoint's name. */
  public abstract readonly endpointName: string;
  /** The endpoint's ARN. */
  public abstract readonly endpointArn: string;
  /** The variant the `metricXxx()` helpers describe. */
  public abstract readonly metricsVariantName: string;
  private readonly metricFactories = new Map<string, EndpointMetricFactory>();

  public get endpointRef(): sagemaker.EndpointReference {
    return { endpointArn: this.endpointArn };
  }

  /** Grants `sagemaker:InvokeEndpoint` on this endpoint. */
  public grantInvoke(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({ grantee, actions: ['sagemaker:InvokeEndpoint'], resourceArns: [this.endpointArn] });
  }

  /**
   * The metric factory of a variant: every SageMaker endpoint metric with its namespace, dimensions
   * and sensible statistic.
   * @param variantName the variant (default: the one the `metricXxx()` helpers describe)
   */
  public metrics(variantName?: string): EndpointMetricFactory {
    const name = variantName ?? this.metricsVariantName;
    let f = this.metricFactories.get(name);
    if (!f) {
      f = new EndpointMetricFactory(this.endpointName, name);
      this.metricFactories.set(name, f);
    }
    return f;
  }

  /** Any metric of this endpoint's variant (`EndpointName` and `VariantName` dimensions; default `Average` per minute). */
  public metric(namespace: string, metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics().metric(namespace, metricName, props);
  }

  /** Host memory utilization of the hottest instance (`Maximum`, 0–100 %). */
  public metricMemoryUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics().memoryUtilization(props);
  }

  /** GPU memory utilization (`Maximum`, summed over GPUs: 0 – 100 × GPUs %). */
  public metricGpuMemoryUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics().gpuMemoryUtilization(props);
  }

  /** CPU utilization (`Maximum`, summed over vCPUs). */
  public metricCpuUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics().cpuUtilization(props);
  }

  /** Disk utilization (`Maximum`, 0–100 %). */
  public metricDiskUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics().diskUtilization(props);
  }

  /** P99 model latency, in microseconds. */
  public metricModelLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics().modelLatency(props);
  }

  /** Invocations (`Sum`). */
  public metricInvocations(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics().invocations(props);
  }

  /** Invocations per instance (`Sum` per minute: what autoscaling tracks). */
  public metricInvocationsPerInstance(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics().invocationsPerInstance(props);
  }

  /** 5XX errors (`Sum`). */
  public metricInvocation5xxErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics().invocation5xxErrors(props);
  }

  /** 5XX error rate (0–1): `Average` of `Invocation5XXErrors`. */
  public metricInvocation5xxRate(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics().invocation5xxRate(props);
  }

  /** Success rate (%): 100 × (1 − 5XX / invocations), a math expression. */
  public metricSuccessRate(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.metrics().successRate(props);
  }
}

/** Attributes to import an existing endpoint. */
export interface EndpointAttributes {
  /** The endpoint's name. */
  readonly endpointName: string;
  /**
   * The variant the metric helpers describe.
   * @default 'AllTraffic' (the SageMaker Python SDK's name for a single variant)
   */
  readonly variantName?: string;
  /**
   * The endpoint's ARN.
   * @default - built from `endpointName` in this stack's account and region
   */
  readonly endpointArn?: string;
}

/** An endpoint defined elsewhere. */
export class ImportedEndpoint extends EndpointBase {
  public readonly endpointName: string;
  public readonly endpointArn: string;
  public readonly metricsVariantName: string;
  constructor(scope: Construct, id: string, attrs: EndpointAttributes) {
    super(scope, id);
    this.endpointName = attrs.endpointName;
    this.endpointArn = attrs.endpointArn ?? endpointArnFor(this, attrs.endpointName);
    this.metricsVariantName = attrs.variantName ?? 'AllTraffic';
  }
}

/**
 * The ARN of an endpoint by name. SageMaker writes endpoint ARNs in lower case, so a literal name is
 * lower-cased; a token is left as it is (lower-casing its string form would corrupt it).
 */
export function endpointArnFor(scope: Construct, endpointName: string): string {
  const name = Token.isUnresolved(endpointName) ? endpointName : endpointName.toLowerCase();
  return Arn.format({ service: 'sagemaker', resource: 'endpoint', resourceName: name, arnFormat: ArnFormat.SLASH_RESOURCE_NAME }, Stack.of(scope));
}
