import { BREAKER_ALARM_MARK, BREAKER_ENV, BREAKER_SETTINGS_TAG } from '../breaker/contract';
import { DRIFT_CONFIG_ENV } from '../drift/contract';

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
  /** A shadow variant (receives a copy of traffic, answers nobody). */
  readonly shadow: boolean;
}

export interface EndpointFacts {
  /** Logical id of the endpoint config (and the endpoint, when found). */
  readonly configLogicalId: string;
  readonly endpointLogicalId?: string;
  /** Endpoint name when literal. */
  readonly endpointName?: string;
  /**
   * Every form a reference to this endpoint's name takes in the template (see `valueKey`): the
   * literal name or its token (a parameter `Ref`, an import), and `Fn::GetAtt [<endpoint>, EndpointName]`.
   */
  readonly nameKeys: string[];
  readonly variants: VariantFacts[];
  readonly kmsKeyId: boolean;
  readonly dataCapture?: DataCaptureFacts;
  readonly deploymentRollbackAlarms: number;
  /** Scalable targets on this endpoint's variants: variant → [min, max]. */
  readonly scaling: { [variantName: string]: ScalingFacts };
  /** Thresholds of the alarms on this endpoint's host MemoryUtilization (breaker triggers excluded). */
  readonly memoryAlarmThresholds: number[];
  /** Breaker functions pointed at this endpoint, with their log retention (days, undefined = never expire). */
  readonly breakers: BreakerFacts[];
  /**
   * Drift monitors reading this endpoint's capture: drift functions naming it, and Model Monitor schedules on it.
   * @default 0
   */
  readonly driftMonitors?: number;
  /**
   * An AWS Budgets budget covers it: one filtered on its `resilient-endpoint` cost tag, or one with no filter.
   * @default false
   */
  readonly budget?: boolean;
}

/** An endpoint config's data capture as synthesized. */
export interface DataCaptureFacts {
  /** `EnableCapture` (true when absent). */
  readonly enabled: boolean;
  /** `InitialSamplingPercentage` as written (a number, or a token). */
  readonly sampling?: any;
  /** `DestinationS3Uri` as written. */
  readonly destination?: any;
}

/** A scalable target's bounds. */
export interface ScalingFacts {
  /** `MinCapacity`. */
  readonly min: number;
  /** `MaxCapacity`. */
  readonly max: number;
}

/** A breaker function pointed at the endpoint. */
export interface BreakerFacts {
  /**
   * Its log group's retention in days.
   * @default - never expires
   */
  readonly retentionDays?: number;
  /**
   * A shared breaker whose function is in another template (a fleet's parent stack): its log group
   * is not visible here.
   * @default false
   */
  readonly functionElsewhere?: boolean;
}

type Resources = Record<string, { Type: string; Properties?: any }>;

const refOf = (v: any): string | undefined => (v && typeof v === 'object' ? (v.Ref ?? v['Fn::GetAtt']?.[0]) : undefined);

/**
 * Pure: a comparable string for a CloudFormation value, literal or not. `{Ref: P}` → `{Ref:P}`,
 * `{Fn::GetAtt: [R, A]}` → `{GetAtt:R.A}`, `Fn::Join` and `Fn::Sub` are spelled out with those keys,
 * so `endpoint/${Ep.EndpointName}/variant/Primary` written by any of them compares equal.
 */
export function valueKey(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v && typeof v === 'object') {
    const o = v as Record<string, any>;
    if (o.Ref !== undefined) return `{Ref:${o.Ref}}`;
    if (o['Fn::GetAtt'] !== undefined) {
      const g = o['Fn::GetAtt'];
      return `{GetAtt:${Array.isArray(g) ? g.join('.') : String(g)}}`;
    }
    if (o['Fn::Join'] !== undefined) {
      const [d, parts] = o['Fn::Join'];
      return (parts as unknown[]).map(valueKey).join(d);
    }
    if (o['Fn::Sub'] !== undefined) {
      const str = Array.isArray(o['Fn::Sub']) ? o['Fn::Sub'][0] : o['Fn::Sub'];
      return String(str).replace(/\$\{([^}]+)\}/g, (_m, x: string) => (x.includes('.') ? `{GetAtt:${x}}` : `{Ref:${x}}`));
    }
    if (o['Fn::ImportValue'] !== undefined) return `{Import:${valueKey(o['Fn::ImportValue'])}}`;
  }
  return JSON.stringify(v);
}

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
    const rawName = ep?.[1].Properties?.EndpointName;
    const endpointName = typeof rawName === 'string' ? rawName : undefined;
    const nameKeys = [...(rawName !== undefined ? [valueKey(rawName)] : []), ...(ep ? [`{GetAtt:${ep[0]}.EndpointName}`] : [])];
    const isThisEndpoint = (v: unknown) => v !== undefined && nameKeys.includes(valueKey(v));
    const variantOf = (v: any, shadow: boolean): VariantFacts => {
      const model = models.get(refOf(v.ModelName) ?? '')?.Properties ?? {};
      const env = model.PrimaryContainer?.Environment ?? model.Containers?.[0]?.Environment ?? {};
      return {
        variantName: v.VariantName,
        instanceType: String(v.InstanceType ?? ''),
        initialInstanceCount: Number(v.InitialInstanceCount ?? 1),
        weight: v.InitialVariantWeight === undefined ? 1 : Number(v.InitialVariantWeight),
        volumeSizeInGb: v.VolumeSizeInGB,
        environment: Object.fromEntries(Object.entries(env).filter(([, x]) => typeof x === 'string')) as Record<string, string>,
        networkIsolation: model.EnableNetworkIsolation === true,
        vpc: !!model.VpcConfig,
        shadow,
      };
    };
    const variants: VariantFacts[] = [
      ...(p.ProductionVariants ?? []).map((v: any) => variantOf(v, false)),
      ...(p.ShadowProductionVariants ?? []).map((v: any) => variantOf(v, true)),
    ];
    const scaling: { [variantName: string]: ScalingFacts } = {};
    for (const [, t] of of('AWS::ApplicationAutoScaling::ScalableTarget')) {
      const m = /^endpoint\/(.+)\/variant\/(.+)$/.exec(valueKey(t.Properties?.ResourceId ?? ''));
      if (m && nameKeys.includes(m[1])) scaling[m[2]] = { min: t.Properties.MinCapacity, max: t.Properties.MaxCapacity };
    }
    const dims = (a: any) => (a.Properties?.Dimensions ?? []) as { Name: string; Value: unknown }[];
    const memoryAlarmThresholds = of('AWS::CloudWatch::Alarm')
      .filter(
        ([, a]) =>
          a.Properties?.MetricName === 'MemoryUtilization' &&
          a.Properties?.Namespace === '/aws/sagemaker/Endpoints' &&
          dims(a).some(d => d.Name === 'EndpointName' && isThisEndpoint(d.Value)) &&
          !valueKey(a.Properties?.AlarmName ?? '').includes(BREAKER_ALARM_MARK),
      )
      .map(([, a]) => Number(a.Properties.Threshold));
    const functions = of('AWS::Lambda::Function');
    const retentionOf = (f: any): BreakerFacts => ({
      retentionDays: res[refOf(f.Properties?.LoggingConfig?.LogGroup) ?? '']?.Properties?.RetentionInDays,
    });
    // A function of its own names the endpoint in its environment; a shared one reads the endpoint's
    // settings parameter (tagged with the endpoint's name), in this template or in a parent stack's.
    const ownBreakers = functions.filter(([, f]) => isThisEndpoint(f.Properties?.Environment?.Variables?.[BREAKER_ENV.ENDPOINT_NAME]));
    const sharedBreakers = of('AWS::SSM::Parameter')
      .filter(([, p]) => isThisEndpoint(p.Properties?.Tags?.[BREAKER_SETTINGS_TAG]))
      .map(([pid]) => {
        const fn = functions.find(([, f]) =>
          valueKey(f.Properties?.Environment?.Variables?.[BREAKER_ENV.CONFIG_PARAMETERS] ?? '').includes(`{Ref:${pid}}`),
        );
        return fn ? retentionOf(fn[1]) : { functionElsewhere: true };
      });
    const breakers = [...ownBreakers.map(([, f]) => retentionOf(f)), ...sharedBreakers];
    // The drift function's configuration names the endpoint ("endpointName":"<name>", a reference spelled by valueKey).
    const driftFunctions = functions.filter(([, f]) => {
      const config = f.Properties?.Environment?.Variables?.[DRIFT_CONFIG_ENV];
      return config !== undefined && nameKeys.some(k => valueKey(config).includes(`"endpointName":"${k}"`));
    });
    const schedules = of('AWS::SageMaker::MonitoringSchedule').filter(([, m]) => isThisEndpoint(m.Properties?.EndpointName));
    const budget = of('AWS::Budgets::Budget').some(([, b]) => {
      const tags: unknown[] = b.Properties?.Budget?.CostFilters?.TagKeyValue ?? [];
      const filters = b.Properties?.Budget?.CostFilters;
      return !filters || Object.keys(filters).length === 0 || tags.some(t => nameKeys.some(k => valueKey(t) === `user:resilient-endpoint$${k}`));
    });
    const dc = p.DataCaptureConfig;
    out.push({
      configLogicalId: cid,
      endpointLogicalId: ep?.[0],
      endpointName,
      nameKeys,
      variants,
      kmsKeyId: p.KmsKeyId !== undefined,
      dataCapture: dc ? { enabled: dc.EnableCapture !== false, sampling: dc.InitialSamplingPercentage, destination: dc.DestinationS3Uri } : undefined,
      deploymentRollbackAlarms: ep?.[1].Properties?.DeploymentConfig?.AutoRollbackConfiguration?.Alarms?.length ?? 0,
      scaling,
      memoryAlarmThresholds,
      breakers,
      driftMonitors: driftFunctions.length + schedules.length,
      budget,
    });
  }
  return out;
}
