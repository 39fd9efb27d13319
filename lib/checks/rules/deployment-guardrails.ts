import { IReadinessRule, RuleLevel } from '../rule';
export const DeploymentGuardrails: IReadinessRule = {
  id: 'RE-DeploymentGuardrails',
  level: RuleLevel.WARNING,
  what: 'Model updates roll back automatically on alarms',
  why: 'Incident checklist: canary release at 5 % and a tested rollback to the previous model.',
  fix: 'Keep ResilientEndpoint deployment on (canary with auto-rollback alarms).',
  check: e => (e.endpointLogicalId && e.deploymentRollbackAlarms === 0 ? ['no auto-rollback alarms on the endpoint'] : []),
};
