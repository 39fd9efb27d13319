import { Token } from 'aws-cdk-lib';

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
