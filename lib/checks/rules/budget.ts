import { IReadinessRule, RuleLevel } from '../rule';
export const Budget: IReadinessRule = {
  id: 'RE-Budget',
  level: RuleLevel.WARNING,
  what: "A monthly AWS Budgets alarm covers the endpoint's cost",
  why: "Incident B's checklist: a budget alarm at 80 %; peaks of 17× the off-peak QPS scale the bill with them.",
  fix: 'Set ResilientEndpoint monitoring.monthlyBudgetUsd (an alarm at 80 % of it to the alarm topic).',
  check: e => (e.budget ? [] : ['no budget alarm for this endpoint']),
};
