import { EndpointFacts } from './facts';

/** Finding level: errors fail `cdk synth`, warnings are reported. */
export enum RuleLevel {
  ERROR = 'error',
  WARNING = 'warning',
}

/** One production-readiness rule: a pure function of an endpoint's synthesized facts. */
export interface ReadinessRule {
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

/** Variants that take traffic (weight > 0). */
export const weighted = (e: EndpointFacts) => e.variants.filter(v => v.weight > 0);
/** Burstable name test. */
export const isBurstable = (type: string) => /^ml\.t\d\./.test(type);
/** Local-NVMe name test (g4dn, g5, g6, p4d, trn1, inf2 and any *d family). */
export const hasNvme = (type: string) => {
  const fam = type.split('.')[1] ?? '';
  return /^(g4dn|g5|g6|g6e|p4d|p4de|p5|trn1|inf2)$/.test(fam) || /^[a-z]+\d+[a-z]*d$/.test(fam);
};
