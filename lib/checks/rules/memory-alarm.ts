import { IReadinessRule, RuleLevel } from '../rule';
export const MemoryAlarm: IReadinessRule = {
  id: 'RE-MemoryAlarm',
  level: RuleLevel.ERROR,
  what: 'A memory alarm at 85 % or lower watches the endpoint',
  why: 'Incident A: GPU memory climbed from 25 % to 98 % and nobody saw it until traffic fell.',
  fix: 'Keep ResilientEndpoint monitoring on, or add an alarm on MemoryUtilization (Maximum) at ≤ 85.',
  check: e => (e.memoryAlarmThresholds.some(t => t <= 85) ? [] : ['no memory alarm at ≤ 85 %']),
};
