import { Stack, Token } from 'aws-cdk-lib';
import { RegionInfo } from 'aws-cdk-lib/region-info';

/**
 * Collects every problem with a construct's props so that synthesis reports
 * them all at once (through `node.addValidation`), each naming the prop, the
 * bad value, the allowed range and the fix. The construct path is prepended
 * by the CDK when validation fails.
 */
export class PropErrors {
  private readonly errors: string[] = [];

  /** Adds one error. */
  public add(prop: string, value: unknown, allowed: string, fix: string): void {
    this.errors.push(`${prop}: got ${show(value)}; allowed: ${allowed}. Fix: ${fix}`);
  }

  /** Adds a message that already names prop, value, range and fix. */
  public addMessage(message: string): void {
    this.errors.push(message);
  }

  /** Checks a number is within [min, max] (and an integer when asked). Tokens are not checked. */
  public range(prop: string, value: number | undefined, min: number, max: number, fix: string, integer = false): void {
    if (value === undefined || Token.isUnresolved(value)) return;
    const ok = Number.isFinite(value) && value >= min && value <= max && (!integer || Number.isInteger(value));
    if (!ok) {
      const kind = integer ? 'an integer' : 'a number';
      const span = max === Number.POSITIVE_INFINITY ? `${kind} >= ${min}` : `${kind} from ${min} to ${max}`;
      this.add(prop, value, span, fix);
    }
  }

  /**
   * A percent prop given as a fraction (`0.85` for 85 %). A value from 0 to 1 is reported, naming the
   * percentage probably meant, when no percentage that small is allowed for the prop: below `from`, or
   * (with `inclusive` false) at it — a memory alarm at 0.85 % or 1 % is in ALARM for ever. Returns
   * whether it reported, so that the caller's own range check does not report the value a second time.
   */
  public fraction(prop: string, value: number | undefined, from: number, inclusive: boolean, max = 100): boolean {
    if (value === undefined || Token.isUnresolved(value) || !(value > 0 && value <= 1)) return false;
    if (inclusive ? value >= from : value > from) return false;
    const meant = percentOf(value);
    const span = `a percentage ${inclusive ? 'from' : 'above'} ${from} ${inclusive ? 'to' : 'and at most'} ${max}, in percent (not a fraction)`;
    const fix =
      meant >= from && meant <= max
        ? `give ${meant} for ${meant} %`
        : `give a percentage from ${from} to ${max} (${value} means ${value} %, not ${meant} %)`;
    this.add(prop, new Described(`${value} (${value} %: a fraction given for ${meant} %?)`), span, fix);
    return true;
  }

  /** All errors collected so far (a copy). */
  public get all(): string[] {
    return [...this.errors];
  }

  /** Appends another collector's errors, prefixing their prop names. */
  public merge(prefix: string, other: PropErrors): void {
    for (const e of other.errors) this.errors.push(`${prefix}${e}`);
  }
}

/** The percentage a fraction stands for (0.85 → 85), without floating-point noise. */
function percentOf(fraction: number): number {
  return +(fraction * 100).toPrecision(12);
}

/**
 * The warning for a percent prop where a value below 1 is legal but may be a fraction given for a
 * percentage (an error-rate threshold: 0.5 % is a strict but real SLO, 0.05 is also 5 % written as a
 * fraction); undefined for values from 1 up.
 */
export function fractionWarning(prop: string, value: number | undefined, what: string): string | undefined {
  if (value === undefined || Token.isUnresolved(value) || !(value > 0 && value < 1)) return undefined;
  const meant = percentOf(value);
  return (
    `${prop} is ${value}: ${what} at ${value} % (1 in ${Math.round(100 / value).toLocaleString('en-US')}). ` +
    `The prop is in percent: if ${value} was a fraction for ${meant} %, give ${meant}; if ${value} % is meant, acknowledge this warning.`
  );
}

/** A value shown as is in an error (a description such as '100 GiB', not a literal string). */
export class Described {
  constructor(public readonly text: string) {}
}

function show(value: unknown): string {
  if (value instanceof Described) return value.text;
  if (typeof value === 'string') return `'${value}'`;
  if (value === undefined) return 'nothing';
  return String(value);
}

/**
 * How an error names a stack: its construct path, and its stack name when that is a literal that differs
 * (a nested stack's name is a token, which would print as `${Token[…]}`).
 */
export function stackLabel(stack: Stack): string {
  const name = stack.stackName;
  return Token.isUnresolved(name) || name === stack.node.path ? `stack ${stack.node.path}` : `stack ${stack.node.path} (${name})`;
}

/**
 * The partitions a stack can be deployed to: its Region's, when the Region is known; for an
 * environment-agnostic stack those of the app's `@aws-cdk/core:target-partitions` context, or undefined
 * (any partition). A Region aws-cdk-lib does not know gives undefined too.
 */
export function stackPartitions(stack: Stack): string[] | undefined {
  if (!Token.isUnresolved(stack.region)) {
    const partition = RegionInfo.get(stack.region).partition;
    return partition === undefined ? undefined : [partition];
  }
  const context: unknown = stack.node.tryGetContext('@aws-cdk/core:target-partitions');
  return Array.isArray(context) ? context.map(String) : undefined;
}
