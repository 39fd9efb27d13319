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

  /** All errors collected so far (a copy). */
  public get all(): string[] {
    return [...this.errors];
  }

  /** Appends another collector's errors, prefixing their prop names. */
  public merge(prefix: string, other: PropErrors): void {
    for (const e of other.errors) this.errors.push(`${prefix}${e}`);
  }
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
