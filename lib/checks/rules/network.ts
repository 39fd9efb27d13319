import { IReadinessRule, RuleLevel } from '../rule';
export const Network: IReadinessRule = {
  id: 'RE-Network',
  level: RuleLevel.WARNING,
  what: 'Each model runs with network isolation or in a VPC',
  why: 'Dependency isolation (incident checklist): a model container should not reach arbitrary networks.',
  fix: 'Set model.vpc (with VPC endpoints for SSM and CloudWatch), or model.networkIsolation: true.',
  check: e => e.variants.filter(v => !v.networkIsolation && !v.vpc).map(v => `${v.variantName} has neither network isolation nor a VPC`),
};
