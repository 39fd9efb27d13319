import { IReadinessRule, RuleLevel, weighted } from '../rule';
export const MultiInstance: IReadinessRule = {
  id: 'RE-MultiInstance',
  level: RuleLevel.ERROR,
  what: 'Every variant that takes traffic starts with more than one instance',
  why: 'One instance is one Availability Zone and one OOM away from an outage (incident checklist: multi-AZ resilience).',
  fix: 'Set instanceCount to 2 or more.',
  check: e =>
    weighted(e)
      .filter(v => v.initialInstanceCount < 2)
      .map(v => `${v.variantName} starts with ${v.initialInstanceCount} instance`),
};
