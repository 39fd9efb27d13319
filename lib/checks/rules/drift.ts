import { IReadinessRule, RuleLevel } from '../rule';
export const Drift: IReadinessRule = {
  id: 'RE-Drift',
  level: RuleLevel.WARNING,
  what: "A drift monitor (the library's drift function or a Model Monitor schedule) reads the endpoint's data capture",
  why: "Incident B's checklist asks for drift detection (Wasserstein 0.15 weekly, KL 0.3 daily); incident A's requests grew longer than anything profiled and nobody compared them.",
  fix: 'Set ResilientEndpoint drift: { features } (DriftFeatures has the examples), or drift.modelMonitor for SageMaker Model Monitor.',
  check: e => ((e.driftMonitors ?? 0) > 0 ? [] : ["no drift monitor reads this endpoint's capture"]),
};
