import { IReadinessRule, RuleLevel, weighted } from '../rule';
export const AutoScaling: IReadinessRule = {
  id: 'RE-AutoScaling',
  level: RuleLevel.ERROR,
  what: 'Every variant that takes traffic is autoscaled with max > min',
  why: 'Incident B: peaks reach 17× off-peak QPS; fixed capacity runs out of memory at the peak.',
  fix: 'Keep ResilientEndpoint autoScaling on with capacity { min, max } and max > min.',
  check: e =>
    weighted(e).flatMap(v => {
      const s = e.scaling[v.variantName];
      if (!s) return [`${v.variantName} has no scalable target`];
      return s.max > s.min ? [] : [`${v.variantName} scales ${s.min}..${s.max} (max must exceed min)`];
    }),
};
