/**
 * Duration and Size props checked at run time, for JavaScript callers: TypeScript and jsii check the
 * type, plain JavaScript passes `latencyP99Threshold: 500` through, and aws-cdk-lib then fails with a
 * `TypeError` and a stack. Each wrong value is an error naming the prop and the fix (reported at
 * synthesis with the others), and is dropped from the props the construct goes on with, so its default
 * applies and synthesis goes on.
 */
import { IConstruct } from 'constructs';
import { Described, PropErrors } from '../validation';

/** A prop that takes an aws-cdk-lib `Duration` or `Size`, and the unit its docs use (for the fix). */
export type UnitProp = readonly [path: string, kind: 'Duration' | 'Size', unit: string];

const MODEL: UnitProp[] = [
  ['memoryFootprint.host', 'Size', 'gibibytes'],
  ['memoryFootprint.gpu', 'Size', 'gibibytes'],
];
const SERVER: UnitProp[] = [
  ['maxRequestSize', 'Size', 'mebibytes'],
  ['maxResponseSize', 'Size', 'mebibytes'],
  ['responseTimeout', 'Duration', 'seconds'],
  ['modelDataDownloadTimeout', 'Duration', 'minutes'],
  ['containerStartupHealthCheckTimeout', 'Duration', 'minutes'],
];
const SCALING: UnitProp[] = [
  ['scaleOutCooldown', 'Duration', 'seconds'],
  ['scaleInCooldown', 'Duration', 'seconds'],
];
const BREAKER: UnitProp[] = [
  ['minDwell', 'Duration', 'minutes'],
  ['recoveryDwell', 'Duration', 'minutes'],
  ['recoveryStepInterval', 'Duration', 'minutes'],
  ['maxProbeWait', 'Duration', 'hours'],
];
const MODEL_MONITOR: UnitProp[] = [['maxRuntime', 'Duration', 'minutes']];
const DRIFT: UnitProp[] = [
  ['wassersteinWindow', 'Duration', 'hours'],
  ['klWindow', 'Duration', 'hours'],
];
const within = (prefix: string, list: UnitProp[]): UnitProp[] => list.map(([p, k, u]) => [`${prefix}.${p}`, k, u]);

/**
 * Every Duration and Size prop of each public construct's props (test/prop-checks.test.ts derives the
 * lists from the interfaces and fails when one is missing here).
 */
export const UNIT_PROPS = {
  ResilientEndpointProps: [
    ...within('model', MODEL),
    ...within('fallback.model', MODEL),
    ...within('shadow.model', MODEL),
    ...within('modelServer', SERVER),
    ...within('fallback.modelServer', SERVER),
    ...within('autoScaling', SCALING),
    ...within('fallback.autoScaling', SCALING),
    ['dataCapture.retention', 'Duration', 'days'],
    ['metricPublishing.frequency', 'Duration', 'seconds'],
    ['volumeSize', 'Size', 'gibibytes'],
    ['deployment.waitInterval', 'Duration', 'minutes'],
    ['deployment.terminationWait', 'Duration', 'minutes'],
    ['deployment.maximumExecutionTimeout', 'Duration', 'minutes'],
    ['monitoring.latencyP99Threshold', 'Duration', 'millis'],
    ...within('circuitBreaker', BREAKER),
    ...within('drift', DRIFT),
    ...within('drift.modelMonitor', MODEL_MONITOR),
  ],
  CircuitBreakerProps: [...BREAKER, ['metricPublishFrequency', 'Duration', 'seconds']],
  EndpointMonitoringProps: [['latencyP99Threshold', 'Duration', 'millis']],
  VariantAutoScalingProps: SCALING,
  DataCaptureProps: [['retention', 'Duration', 'days']],
  DriftMonitorProps: [...DRIFT, ...within('modelMonitor', MODEL_MONITOR)],
  DataQualityMonitorProps: MODEL_MONITOR,
  CapacityPlanProps: [
    ['modelMemory', 'Size', 'gibibytes'],
    ['gpuMemory', 'Size', 'gibibytes'],
  ],
} satisfies Record<string, UnitProp[]>;

/** Whether `v` is an aws-cdk-lib Duration (or Size): by its methods, so a second copy of aws-cdk-lib or a jsii proxy counts. */
function isUnit(v: unknown, kind: 'Duration' | 'Size'): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return kind === 'Duration'
    ? typeof o.toSeconds === 'function' && typeof o.toMilliseconds === 'function'
    : typeof o.toBytes === 'function' && typeof o.toMebibytes === 'function';
}

/** How a wrong value reads in the error. */
function describeWrong(v: unknown): Described {
  if (typeof v === 'number') return new Described(`${v} (a number: no unit)`);
  if (typeof v === 'string') return new Described(`'${v}' (a string)`);
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    if (typeof o.toSeconds === 'function') return new Described('a Duration');
    if (typeof o.toBytes === 'function') return new Described('a Size');
    return new Described(`an object (${Object.keys(o).slice(0, 3).join(', ') || 'no keys'})`);
  }
  return new Described(`${String(v)} (${typeof v})`);
}

/** The value at `keys` inside `o`. */
function valueAt(o: unknown, keys: string[]): unknown {
  let v = o;
  for (const k of keys) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** A copy of `o` without the value at `keys` (the objects on the way copied, the rest shared). */
function without(o: unknown, keys: string[]): unknown {
  const [k, ...rest] = keys;
  if (typeof o !== 'object' || o === null || !(k in o)) return o;
  const copy: Record<string, unknown> = { ...(o as Record<string, unknown>) };
  if (rest.length) copy[k] = without(copy[k], rest);
  else delete copy[k];
  return copy;
}

/**
 * Checks `list`'s props of `props`: each wrong value is added to `errors` (named `prefix` + its path,
 * with the fix) and left out of the props returned; props with none wrong come back as they are.
 */
export function checkUnitProps<T>(errors: PropErrors, props: T, list: readonly UnitProp[], prefix = ''): T {
  let out: unknown = props;
  for (const [path, kind, unit] of list) {
    const keys = path.split('.');
    const v = valueAt(props, keys);
    if (v === undefined || v === null || isUnit(v, kind)) continue;
    const n = typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && /^\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : 1;
    errors.add(
      `${prefix}${path}`,
      describeWrong(v),
      `a ${kind} (aws-cdk-lib)`,
      `pass ${kind}.${unit}(${n}) or another unit of ${kind} (import { ${kind} } from 'aws-cdk-lib'); a bare number has no unit`,
    );
    out = without(out, keys);
  }
  return out as T;
}

/**
 * The same for a construct used on its own: its wrong Duration and Size props become synth errors on
 * `scope` (with its path), and the props it goes on with leave them out.
 */
export function unitsChecked<T>(scope: IConstruct, props: T, list: readonly UnitProp[]): T {
  const errors = new PropErrors();
  const out = checkUnitProps(errors, props, list);
  if (errors.all.length) scope.node.addValidation({ validate: () => errors.all });
  return out;
}
