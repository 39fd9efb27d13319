// The public API, listed name by name: everything here is carried by jsii to Python, Java and .NET
// (classes, enums, structs and I-interfaces only; rules and constants are static members of the
// classes they belong to). Helpers shared between modules stay out of it. scripts/check-jsii.mjs fails
// if a root export is not in the jsii assembly.
export { SageMakerInstanceType } from './instance-types';
export type { InstanceHardware, InstanceSpec } from './instance-types';
export { ModelServer, ModelServerTuner } from './model-server';
export type { MemoryFootprint, ModelServerOptions, ModelServerTuning } from './model-server';
export { ContainerImage, ModelData } from './model-artifacts';
export type { ContainerImageConfig, ModelDataConfig } from './model-artifacts';
export { CaptureMode, DataCapture } from './data-capture';
export type { DataCaptureOptions, DataCaptureProps } from './data-capture';
export { EndpointBase, ImportedEndpoint } from './endpoint-base';
export type { EndpointAttributes } from './endpoint-base';
export { ResilientEndpoint } from './resilient-endpoint';
export { VariantRole } from './resilient-endpoint-props';
export type {
  FallbackVariantProps,
  MetricPublishingOptions,
  ModelProps,
  RedeployOptions,
  ResilientEndpointProps,
  ShadowVariantProps,
  VariantInfo,
} from './resilient-endpoint-props';
export { ResilientEndpointFleet } from './fleet';
export type { ResilientEndpointFleetProps } from './fleet';
export { EndpointMetricFactory } from './monitoring/metrics';
export { AlarmTier, EndpointMonitoring } from './monitoring/endpoint-monitoring';
export type { AlarmNotifications, EndpointMonitoringProps, MonitoredVariant, MonitoringOptions, TieredAlarm } from './monitoring/endpoint-monitoring';
export { CircuitBreaker } from './breaker/circuit-breaker';
export type { BreakerConfig, CircuitBreakerOptions, CircuitBreakerProps } from './breaker/circuit-breaker';
export { SharedCircuitBreaker } from './breaker/shared-circuit-breaker';
export type { SharedBreakerEndpoint, SharedCircuitBreakerProps } from './breaker/shared-circuit-breaker';
export type { BreakerRuntime } from './breaker/wiring';
export { VariantAutoScaling } from './auto-scaling';
export type {
  AutoScalingOptions,
  CapacityProps,
  GuardInFlightTracking,
  MemoryTracking,
  ScheduledCapacity,
  VariantAutoScalingProps,
} from './auto-scaling';
export { TrafficShift } from './deployment';
export type { DeploymentContext, DeploymentOptions, DeploymentPlan } from './deployment';
export { ProductionReadinessChecks, RuleLevel } from './checks';
export type { BreakerFacts, DataCaptureFacts, EndpointFacts, IReadinessRule, ReadinessFinding, ScalingFacts, VariantFacts } from './checks';
export { CaptureSide } from './drift/capture';
export { DriftBaseline, DriftMonitor } from './drift/drift-monitor';
export type { DriftAlarm, DriftBaselineConfig, DriftMonitorProps, DriftOptions } from './drift/drift-monitor';
export { DriftFeatureKind, DriftFeatures } from './drift/features';
export type { DriftFeature } from './drift/features';
export { DataQualityMonitor } from './drift/model-monitor';
export type { DataQualityMonitorProps, ModelMonitorMetric, ModelMonitorOptions } from './drift/model-monitor';
export { DriftNormalisation } from './drift/statistics';
export { MemoryProfile } from './memory-profile';
export type { ProfiledCurve, ProfiledPercentile, ProfiledPoint } from './memory-profile';
export { CapacityPlan } from './capacity-plan';
export type { CapacityPlanProps } from './capacity-plan';
// The simulator for every language, as a namespace (a jsii submodule: Python imports
// `sagemaker_resilient_endpoint.simulation`). The full engine is the `/simulation` entry point.
export * as simulation from './simulation/api';
