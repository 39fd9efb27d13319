import { IReadinessRule, RuleLevel } from '../rule';
export const Network: IReadinessRule = {
  id: 'RE-Network',
  level: RuleLevel.WARNING,
  what: 'Each model runs with network isolation or in a VPC',
  why: 'Dependency isolation (incident checklist): a model container should not reach arbitrary networks.',
  fix: "Set model.vpc, with interface VPC endpoints for SSM and CloudWatch: the container reads the breaker's degrade level from SSM and publishes the guard metrics the breaker reads to CloudWatch. Not model.networkIsolation, which cuts it off from both.",
  check: e => e.variants.filter(v => !v.networkIsolation && !v.vpc).map(v => `${v.variantName} has neither network isolation nor a VPC`),
};
