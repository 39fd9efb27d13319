export * from './instance-types';
export * from './model-server';
export * from './model-artifacts';
export * from './data-capture';
export * from './resilient-endpoint';
export * from './monitoring/metrics';
export * from './monitoring/endpoint-monitoring';
export * from './circuit-breaker';
