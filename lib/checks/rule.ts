import { SageMakerInstanceType } from '../instance-types';
import { EndpointFacts } from './facts';

/** Finding level: errors fail `cdk synth`, warnings are reported. */
export enum RuleLevel {
  ERROR = 'error',
  WARNING = 'warning',
}

/** One production-readiness rule: a pure function of an endpoint's synthesized facts. */
export interface IReadinessRule {
  readonly id: string;
  readonly level: RuleLevel;
  /** What is checked. */
  readonly what: string;
  /** Why it matters (from the incidents). */
  readonly why: string;
  /** How to fix it. */
  readonly fix: string;
  /** Problems found (empty = compliant). */
  check(endpoint: EndpointFacts): string[];
}

/** Production variants that take traffic (weight > 0; shadow variants answer nobody). */
export const weighted = (e: EndpointFacts) => e.variants.filter(v => v.weight > 0 && !v.shadow);
/** Burstable type (catalog or name), as the instance catalog decides it. */
export const isBurstable = (type: string) => SageMakerInstanceType.of(type).isBurstable;
/** Local-NVMe type (catalog or name), as the instance catalog decides it. */
export const hasNvme = (type: string) => SageMakerInstanceType.of(type).hasLocalNvme;
