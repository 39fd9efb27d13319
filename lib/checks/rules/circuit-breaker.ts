import { IReadinessRule, RuleLevel } from '../rule';
export const CircuitBreaker: IReadinessRule = {
  id: 'RE-CircuitBreaker',
  level: RuleLevel.WARNING,
  what: 'A memory circuit breaker is wired to the endpoint',
  why: 'Autoscaling adds instances in minutes; an OOM takes seconds once a long-tail request arrives.',
  fix: 'Keep ResilientEndpoint circuitBreaker on, or add a CircuitBreaker for this endpoint.',
  check: e => (e.breakers.length ? [] : ['no circuit breaker function for this endpoint']),
};
