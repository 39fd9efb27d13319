import { IReadinessRule, RuleLevel } from '../rule';
export const BreakerLogRetention: IReadinessRule = {
  id: 'RE-BreakerLogRetention',
  level: RuleLevel.WARNING,
  what: "The circuit breaker's log group has a retention period",
  why: "The breaker's decision log is the record of every degradation; unbounded logs cost money forever.",
  fix: 'Set circuitBreaker.logRetention.',
  check: e => e.breakers.filter(b => !b.functionElsewhere && b.retentionDays === undefined).map(() => 'breaker logs never expire'),
};
