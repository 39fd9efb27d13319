/**
 * ResilientEndpoint's variants from its props: the primary, the optional fallback (weight 0 until the
 * breaker shifts traffic) and the optional shadow, each with its tuned model server.
 */
import { SageMakerInstanceType } from '../instance-types';
import { ModelServerOptions, ModelServerTuning } from '../model-server';
import { ModelProps, ResilientEndpointProps, VariantInfo, VariantRole } from '../resilient-endpoint-props';
import { Described, PropErrors } from '../validation';

/** The endpoint's own checks and tuning, which the resolution calls for every variant. */
export interface VariantChecks {
  validateVariantName(prop: string, name: string): string;
  validateInstanceType(prop: string, t: SageMakerInstanceType): void;
  tune(prefix: string, type: SageMakerInstanceType, model: ModelProps, options?: ModelServerOptions): ModelServerTuning;
}

export interface ResolvedVariants {
  readonly primary: VariantInfo;
  readonly fallback?: VariantInfo;
  readonly shadow?: VariantInfo;
}

export function resolveVariants(props: ResilientEndpointProps, errors: PropErrors, c: VariantChecks): ResolvedVariants {
  const primaryName = c.validateVariantName('variantName', props.variantName ?? 'Primary');
  const primaryCount = props.instanceCount ?? 2;
  errors.range('instanceCount', primaryCount, 1, 1000, 'use at least 1 instance; 2 or more spread the variant over Availability Zones', true);
  c.validateInstanceType('instanceType', props.instanceType);
  const primary: VariantInfo = {
    variantName: primaryName,
    instanceType: props.instanceType,
    instanceCount: primaryCount,
    initialWeight: 1,
    role: VariantRole.PRIMARY,
    tuning: c.tune('', props.instanceType, props.model, props.modelServer),
    model: props.model,
  };

  let fallback: VariantInfo | undefined;
  if (props.fallback) {
    const f = props.fallback;
    const type = f.instanceType ?? props.instanceType;
    const count = f.instanceCount ?? 1;
    errors.range('fallback.instanceCount', count, 1, 1000, 'use at least 1 instance', true);
    if (f.instanceType) c.validateInstanceType('fallback.instanceType', type);
    let name = c.validateVariantName('fallback.variantName', f.variantName ?? 'Fallback');
    if (name === primaryName) {
      errors.add('fallback.variantName', name, 'a name different from the primary variant', "use e.g. 'Fallback'");
      name = `${name}-2`; // keep synthesizing so every error is reported at once
    }
    fallback = {
      variantName: name,
      instanceType: type,
      instanceCount: count,
      initialWeight: 0,
      role: VariantRole.FALLBACK,
      tuning: c.tune('fallback.', type, f.model ?? props.model, f.modelServer ?? props.modelServer),
      model: f.model ?? props.model,
    };
  }

  let shadow: VariantInfo | undefined;
  if (props.shadow) {
    const sh = props.shadow;
    if (props.fallback) {
      errors.add(
        'shadow',
        new Described('a shadow variant together with a fallback variant'),
        'one production variant plus one shadow variant (an AWS limit)',
        'drop the fallback while shadow testing, or test the new model on the primary with a canary deployment',
      );
    }
    const sampling = sh.samplingPercent ?? 5;
    if (!errors.fraction('shadow.samplingPercent', sampling, 1, true))
      errors.range('shadow.samplingPercent', sampling, 1, 100, 'give the share of traffic to copy, e.g. 5');
    const type = sh.instanceType ?? props.instanceType;
    shadow = {
      variantName: c.validateVariantName('shadow.variantName', sh.variantName ?? 'Shadow'),
      instanceType: type,
      instanceCount: sh.instanceCount ?? 1,
      // The shadow's weight relative to the production variant's is the share of requests copied to it.
      initialWeight: sampling / 100,
      role: VariantRole.SHADOW,
      tuning: c.tune('shadow.', type, sh.model, props.modelServer),
      model: sh.model,
    };
  }
  return { primary, fallback, shadow };
}
