/**
 * Facts about every SageMaker endpoint in a synthesized CloudFormation template, gathered once
 * so each rule is a small pure function of them. Works for ResilientEndpoint and for hand-written
 * CfnEndpointConfig / CfnEndpoint alike.
 */
export interface VariantFacts {
  readonly variantName: string;
  readonly instanceType: string;
  readonly initialInstanceCount: number;
  readonly weight: number;
  readonly volumeSizeInGb?: number;
  /** Container environment of the variant's model (literal values only). */
  readonly environment: Record<string, string>;
  readonly networkIsolation: boolean;
  readonly vpc: boolean;
}

export interface EndpointFacts {
  /** Logical id of the endpoint config (and the endpoint, when found). */
  readonly configLogicalId: string;
  readonly endpointLogicalId?: string;
  /** Endpoint name when literal. */
  readonly endpointName?: string;
  readonly variants: VariantFacts[];
  readonly kmsKeyId: boolean;
  readonly dataCapture?: { enabled: boolean; sampling: unknown; destination: unknown };
  readonly deploymentRollbackAlarms: number;
  /** Scalable targets on this endpoint's variants: variant → [min, max]. */
  readonly scaling: Record<string, [number, number]>;
  /** Thresholds of the alarms on this endpoint's host MemoryUtilization (breaker triggers excluded). */
  readonly memoryAlarmThresholds: number[];
  /** Breaker functions pointed at this endpoint, with their log retention (days, undefined = never expire). */
  readonly breakers: { retentionDays?: number }[];
}

type Resources = Record<string, { Type: string; Properties?: any }>;

const refOf = (v: any): string | undefined => (v && typeof v === 'object' ? v.Ref ?? v['Fn::GetAtt']?.[0] : undefined);

/** Pure: the endpoints of a template. */
export function collectEndpoints(template: { Resources?: Resources }): EndpointFacts[] {
  const res = template.Resources ?? {};
  const entries = Object.entries(res);
  const of = (type: string) => entries.filter(([, r]) => r.Type === type);
  const models = new Map(of('AWS::SageMaker::Model'));
  const out: EndpointFacts[] = [];
  for (const [cid, cfg] of of('AWS::SageMaker::EndpointConfig')) {
    const p = cfg.Properties ?? {};
    const ep = of('AWS::SageMaker::Endpoint').find(([, e]) => refOf(e.Properties?.EndpointConfigName) === cid);
    const endpointName = typeof ep?.[1].Properties?.EndpointName === 'string' ? ep[1].Properties.EndpointName : undefined;
    const variants: VariantFacts[] = (p.ProductionVariants ?? []).map((v: any) => {
      const model = models.get(refOf(v.ModelName) ?? '')?.Properties ?? {};
      const env = model.PrimaryContainer?.Environment ?? model.Containers?.[0]?.Environment ?? {};
      return {
        variantName: v.VariantName, instanceType: String(v.InstanceType ?? ''), initialInstanceCount: Number(v.InitialInstanceCount ?? 1),
        weight: v.InitialVariantWeight === undefined ? 1 : Number(v.InitialVariantWeight), volumeSizeInGb: v.VolumeSizeInGB,
        environment: Object.fromEntries(Object.entries(env).filter(([, x]) => typeof x === 'string')) as Record<string, string>,
        networkIsolation: model.EnableNetworkIsolation === true, vpc: !!model.VpcConfig,
      };
    });
    const scaling: Record<string, [number, number]> = {};
    for (const [, t] of of('AWS::ApplicationAutoScaling::ScalableTarget')) {
      const m = /^endpoint\/(.+)\/variant\/(.+)$/.exec(String(t.Properties?.ResourceId ?? ''));
      if (m && endpointName && m[1] === endpointName) scaling[m[2]] = [t.Properties.MinCapacity, t.Properties.MaxCapacity];
    }
    const dims = (a: any) => (a.Properties?.Dimensions ?? []) as { Name: string; Value: unknown }[];
    const memoryAlarmThresholds = of('AWS::CloudWatch::Alarm')
      .filter(([, a]) => a.Properties?.MetricName === 'MemoryUtilization' && a.Properties?.Namespace === '/aws/sagemaker/Endpoints'
        && dims(a).some(d => d.Name === 'EndpointName' && d.Value === endpointName) && !String(a.Properties?.AlarmName ?? '').includes('-breaker-'))
      .map(([, a]) => Number(a.Properties.Threshold));
    const breakers = of('AWS::Lambda::Function')
      .filter(([, f]) => endpointName && f.Properties?.Environment?.Variables?.ENDPOINT_NAME === endpointName)
      .map(([, f]) => {
        const lg = res[refOf(f.Properties?.LoggingConfig?.LogGroup) ?? ''];
        return { retentionDays: lg?.Properties?.RetentionInDays };
      });
    const dc = p.DataCaptureConfig;
    out.push({
      configLogicalId: cid, endpointLogicalId: ep?.[0], endpointName, variants, kmsKeyId: p.KmsKeyId !== undefined,
      dataCapture: dc ? { enabled: dc.EnableCapture !== false, sampling: dc.InitialSamplingPercentage, destination: dc.DestinationS3Uri } : undefined,
      deploymentRollbackAlarms: ep?.[1].Properties?.DeploymentConfig?.AutoRollbackConfiguration?.Alarms?.length ?? 0,
      scaling, memoryAlarmThresholds, breakers,
    });
  }
  return out;
}
