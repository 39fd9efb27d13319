import { isBurstable, IReadinessRule, RuleLevel } from '../rule';
export const NoBurstable: IReadinessRule = {
  id: 'RE-NoBurstable',
  level: RuleLevel.ERROR,
  what: 'No burstable (T2/T3) instance types',
  why: 'Incident B landed on a demo-grade ml.t2.medium (4 GiB, 110 s cold start) that cannot autoscale.',
  fix: 'Use the CapacityPlan answer, e.g. ml.m5.xlarge.',
  check: e => e.variants.filter(v => isBurstable(v.instanceType)).map(v => `${v.variantName} runs on ${v.instanceType}`),
};
