/**
 * Command-line parsing shared by the CLIs (bin/cli.ts, bin/simulate.ts, bench/run.ts): Node's own
 * `util.parseArgs` in strict mode, with errors that name the flag (and the flag probably meant) and
 * exit code 2, as usage errors have by convention.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseArgs } from 'util';
import { closest } from '../lib/private/suggest';

/** A mistake in how a command was called: printed with the usage, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A command's options: each flag's kind (a value, or a switch) and its one-letter alias. */
export type FlagSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>;

/** Parses `argv` strictly (no unknown flags, no stray arguments); a mistake is a UsageError naming the flag. */
export function parseFlags(command: string, argv: string[], flags: FlagSpec): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({ args: argv, options: flags, strict: true, allowPositionals: false }).values as Record<string, string | boolean | undefined>;
  } catch (e) {
    const err = e as Error & { code?: string };
    const quoted = /'([^' ]+)/.exec(err.message)?.[1] ?? '';
    if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const near = quoted.startsWith('--') ? closest(quoted.slice(2), Object.keys(flags)) : undefined;
      throw new UsageError(`${command}: unknown option ${quoted}${near ? ` (did you mean --${near}?)` : ''}`);
    }
    if (err.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') throw new UsageError(`${command}: unexpected argument '${quoted}'`);
    if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const flag = quoted.split(' ')[0];
      throw new UsageError(
        /does not take an argument/.test(err.message) ? `${command}: ${flag} takes no value` : `${command}: ${flag} needs a value`,
      );
    }
    throw e;
  }
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i;

/**
 * A flag's value as a number in [min, max] (an integer when asked); undefined when the flag is absent.
 * A value that is no plain decimal number ('50ms', '', '0x10') or is out of range is added to `errors`,
 * naming the flag.
 */
export function numberFlag(
  errors: string[],
  values: Record<string, string | boolean | undefined>,
  flag: string,
  allowed: { min: number; max?: number; integer?: boolean; above?: boolean; unit?: string },
): number | undefined {
  const raw = values[flag];
  if (raw === undefined || typeof raw === 'boolean') return undefined;
  const v = NUMBER.test(raw.trim()) ? Number(raw) : NaN;
  const max = allowed.max ?? Number.POSITIVE_INFINITY;
  const ok = (allowed.above ? v > allowed.min : v >= allowed.min) && v <= max && (!allowed.integer || Number.isInteger(v));
  if (!ok) {
    const kind = allowed.integer ? 'an integer' : 'a number';
    const range = `${allowed.above ? '>' : '>='} ${allowed.min}${max < Number.POSITIVE_INFINITY ? ` and <= ${max}` : ''}`;
    errors.push(`--${flag}: got '${raw}'; allowed: ${kind} ${range}${allowed.unit ? ` (${allowed.unit})` : ''}`);
  }
  return v;
}

/** This package's version (its package.json, from the source tree or from dist/ in an installed package). */
export function packageVersion(): string {
  for (const dir of [path.join(__dirname, '..'), path.join(__dirname, '..', '..')]) {
    const file = path.join(dir, 'package.json');
    if (!fs.existsSync(file)) continue;
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'sagemaker-resilient-endpoint') return pkg.version ?? 'unknown';
  }
  return 'unknown';
}
