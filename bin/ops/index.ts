/**
 * The operator commands of the shipped CLI: `doctor` and `drill` (bundled with the AWS SDK into
 * dist/cli-bundles/ops.js; bin/cli.ts loads it). Their options are parsed by the one parser of every
 * command (bin/args.ts: `util.parseArgs`, strict): an unknown option, with or without a value, is a
 * usage error naming it (and the option probably meant), exit code 2, before any AWS call.
 * Exit codes: 0 nothing failed, 1 a check failed or the drill was refused, failed or did not see the
 * path work, 2 usage error, 130 a drill interrupted (Ctrl-C).
 */
import * as fs from 'fs';
import { FlagSpec, parseFlags, UsageError } from '../args';
import { CallLimits, errorName, fixFor, isTimeout, nodeNotice, opsClients, OpsClients, resolveRegion, withAbort } from './aws';
import { doctor, DOCTOR_DEADLINE_MS, formatReport } from './doctor';
import { drill, formatDrill } from './drill';

/** What a drill may take beyond --hold and --watch-back (its AWS calls, the override's end): 2 minutes. */
export const DRILL_MARGIN_MS = 120_000;
/** A dry run's bound: it only reads (the breaker, its state). */
export const DRY_RUN_BOUND_MS = 60_000;

export const DOCTOR_USAGE = `usage: sagemaker-resilient-endpoint doctor --endpoint NAME [--region R] [--json] [--timeout 60s]
  Read-only checks of a deployed ResilientEndpoint with your AWS credentials: endpoint InService and its
  live config; what CloudWatch really stores of SageMaker's memory data and of the container guard's
  metrics (10 s or 1 minute, and how late, against the simulator's --metric-delay-10s and
  --guard-metric-delay); the per-GPU and per-variant series, every alarm (none stuck without data) and a
  confirmed subscriber, the breaker (function runs, rules enabled, state item, level parameter, weights,
  tagged scalable targets), captured requests, Parameter Store throughput; the live metrics config and
  instance family (utilisation metrics, empty series filled, rollback alarms, GPU memory held); each drift
  feature's baseline and the Model Monitor metrics the alarms read.
  --endpoint NAME   the endpoint's name (required)
  --region R        else AWS_REGION, else AWS_DEFAULT_REGION, else your profile's
  --json            the report as JSON
  --timeout T       the whole run's bound, 5s to 10m (default ${DOCTOR_DEADLINE_MS / 1000}s)
  -h, --help        this help
  Time bound: ends within --timeout (${DOCTOR_DEADLINE_MS / 1000} s by default) whatever the network does (each AWS call: 10 s,
  3 tries); a check that did not finish in time FAILs, named.
  Permissions: Describe*/List*/Get* on those services, cloudwatch:DescribeAlarms on "*" for the composite
  alarm (see docs/operations.md).
  exit codes: 0 no check FAILs, 1 a check FAILs, 2 a usage error`;

export const DRILL_USAGE = `usage: sagemaker-resilient-endpoint drill --endpoint NAME --to DEGRADED|OPEN [--hold 5m] [--watch-back 30m]
         [--probe FILE --content-type application/json] [--dry-run] [--region R] [--json]
  A game day: forces the breaker into DEGRADED or OPEN through an expiring override on its state item,
  watches the level published, the container's answer (--probe: a request body to send), the weights
  and the capacity hold, then ends the override and watches the breaker's own way back to CLOSED.
  Refuses when the endpoint is already degraded; Ctrl-C ends the override first. --dry-run changes nothing.
  --endpoint NAME        the endpoint's name (required)
  --to DEGRADED|OPEN     the state to force (required)
  --hold T               how long the override holds, 1m to 1h (default 5m); it expires on its own
  --watch-back T         how long to watch the way back to CLOSED, 1m to 2h (default 30m)
  --probe FILE           a request body to send while degraded
  --content-type TYPE    the probe's content type (default application/json)
  --dry-run              change nothing: say what the drill would do
  --region R             else AWS_REGION, else AWS_DEFAULT_REGION, else your profile's
  --json                 the report as JSON
  -h, --help             this help
  Durations: 90s, 5m, 1h (a plain number is seconds).
  Time bound: ends within --hold + --watch-back + ${DRILL_MARGIN_MS / 60_000} min (37 min by default) whatever the network does
  (each AWS call: 10 s, 3 tries), a --dry-run within ${DRY_RUN_BOUND_MS / 1000} s; the override never outlives --hold.
  exit codes: 0 the path works (or the dry run), 1 refused, failed or a step not seen (each with its fix), 2 a usage error,
  130 interrupted (the override ended first)`;

const DOCTOR_FLAGS: FlagSpec = {
  endpoint: { type: 'string' },
  region: { type: 'string' },
  json: { type: 'boolean' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

const DRILL_FLAGS: FlagSpec = {
  endpoint: { type: 'string' },
  to: { type: 'string' },
  hold: { type: 'string' },
  'watch-back': { type: 'string' },
  probe: { type: 'string' },
  'content-type': { type: 'string' },
  'dry-run': { type: 'boolean' },
  region: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

/** '90s', '5m', '1h' or plain seconds → ms. */
export function durationMs(v: string, name: string): number {
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(v.trim());
  if (!m) throw new Error(`--${name}: got '${v}'; allowed: a duration like 90s, 5m or 1h`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 's' | 'm' | 'h'];
}

/** A duration flag within [min, max] ms; a mistake is added to `errors`, naming the flag. */
function durationFlag(errors: string[], raw: string | undefined, name: string, min: number, max: number, range: string): number | undefined {
  if (raw === undefined) return undefined;
  try {
    const ms = durationMs(raw, name);
    if (ms >= min && ms <= max) return ms;
    errors.push(`--${name}: got ${raw}; allowed: ${range}`);
  } catch (e) {
    errors.push((e as Error).message);
  }
  return undefined;
}

type Out = { log: (s: string) => void; error: (s: string) => void };

/** After the report, not before it: the SDK's own Node.js notice is turned off (aws.ts). */
function notice(out: Out): void {
  const n = nodeNotice();
  if (n) out.error(n);
}
const CONSOLE: Out = { log: s => console.log(s), error: s => console.error(s) };

/** Parses a command's flags; a mistake is printed with the command's usage and the exit code is 2. */
function parsed<T>(out: Out, usage: string, f: () => T): T | number {
  try {
    return f();
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    out.error(`${e.message}\n\n${usage}`);
    return 2;
  }
}

export async function doctorMain(
  argv: string[],
  clients = undefined as OpsClients | undefined,
  out: Out = CONSOLE,
  deps: { deadlineMs?: number; limits?: CallLimits } = {},
): Promise<number> {
  const o = parsed(out, DOCTOR_USAGE, () => {
    const v = parseFlags('doctor', argv, DOCTOR_FLAGS);
    if (v.help) return { help: true as const };
    const errors: string[] = [];
    if (typeof v.endpoint !== 'string' || !v.endpoint) errors.push('--endpoint NAME is required');
    const timeout = durationFlag(errors, v.timeout as string | undefined, 'timeout', 5_000, 600_000, '5s to 10m');
    if (errors.length) throw new UsageError(`doctor: ${errors.join('; ')}`);
    return { endpoint: v.endpoint as string, region: v.region as string | undefined, json: v.json === true, deadlineMs: timeout ?? deps.deadlineMs };
  });
  if (typeof o === 'number') return o;
  if ('help' in o) {
    out.log(DOCTOR_USAGE);
    return 0;
  }
  const r = await doctor(clients ?? opsClients(resolveRegion(o.region), undefined, deps.limits), o.endpoint, Date.now(), {
    deadlineMs: o.deadlineMs,
  });
  out.log(o.json ? JSON.stringify(r, null, 2) : formatReport(r));
  notice(out);
  return r.ok ? 0 : 1;
}

export async function drillMain(
  argv: string[],
  clients = undefined as OpsClients | undefined,
  out: Out = CONSOLE,
  deps: {
    clock?: Parameters<typeof drill>[2];
    readFile?: (f: string) => string;
    signals?: NodeJS.EventEmitter;
    /** The whole drill's bound, ms. @default --hold + --watch-back + DRILL_MARGIN_MS */
    boundMs?: number;
  } = {},
): Promise<number> {
  const o = parsed(out, DRILL_USAGE, () => {
    const v = parseFlags('drill', argv, DRILL_FLAGS);
    if (v.help) return { help: true as const };
    const errors: string[] = [];
    if (typeof v.endpoint !== 'string' || !v.endpoint) errors.push('--endpoint NAME is required');
    if (v.to !== 'DEGRADED' && v.to !== 'OPEN') errors.push(`--to: got '${v.to ?? ''}'; allowed: DEGRADED or OPEN`);
    const holdMs = durationFlag(
      errors,
      v.hold as string | undefined,
      'hold',
      60_000,
      3_600_000,
      "1m to 1h (the override's expiry is the safety net)",
    );
    const watchBackMs = durationFlag(errors, v['watch-back'] as string | undefined, 'watch-back', 60_000, 7_200_000, '1m to 2h');
    if (v['content-type'] !== undefined && v.probe === undefined) errors.push("--content-type is the probe's: give --probe FILE too");
    let probe: { body: string; contentType: string } | undefined;
    if (typeof v.probe === 'string') {
      try {
        probe = {
          body: (deps.readFile ?? ((f: string) => fs.readFileSync(f, 'utf8')))(v.probe),
          contentType: (v['content-type'] as string) ?? 'application/json',
        };
      } catch (e) {
        errors.push(`--probe: cannot read '${v.probe}': ${(e as Error).message}`);
      }
    }
    if (errors.length) throw new UsageError(`drill: ${errors.join('; ')}`);
    return {
      region: v.region as string | undefined,
      json: v.json === true,
      opts: {
        endpointName: v.endpoint as string,
        to: v.to as 'DEGRADED' | 'OPEN',
        holdMs: holdMs ?? 300_000,
        watchBackMs: watchBackMs ?? 1_800_000,
        dryRun: v['dry-run'] === true,
        probe,
      },
    };
  });
  if (typeof o === 'number') return o;
  if ('help' in o) {
    out.log(DRILL_USAGE);
    return 0;
  }
  const boundMs = deps.boundMs ?? (o.opts.dryRun ? DRY_RUN_BOUND_MS : o.opts.holdMs + o.opts.watchBackMs + DRILL_MARGIN_MS);
  // The bound: every call still running past it is aborted. The override ends by itself at the end of
  // --hold, which is before the bound, so aborting never leaves one behind.
  const bound = new AbortController();
  const timer = setTimeout(() => bound.abort(), boundMs);
  const abort = new AbortController();
  const signals = deps.signals ?? process;
  const stop = () => {
    out.error('interrupted: ending the override before exiting…');
    abort.abort();
  };
  signals.once('SIGINT', stop);
  signals.once('SIGTERM', stop);
  try {
    const c = withAbort(clients ?? opsClients(resolveRegion(o.region)), bound.signal);
    const r = await drill(c, o.opts, deps.clock, abort.signal);
    out.log(o.json ? JSON.stringify(r, null, 2) : formatDrill(r));
    notice(out);
    return r.interrupted ? 130 : r.ok ? 0 : 1;
  } catch (e) {
    out.error(drillFailure(e, bound.signal.aborted ? boundMs : undefined));
    notice(out);
    return 1;
  } finally {
    clearTimeout(timer);
    signals.removeListener('SIGINT', stop);
    signals.removeListener('SIGTERM', stop);
  }
}

/**
 * A drill stopped by an error: what failed, the fix (as doctor names them), and whether an override may
 * be left (it expires on its own at the end of --hold, and the breaker then recovers by itself).
 */
export function drillFailure(e: unknown, boundReachedMs?: number): string {
  const until = (e as { overrideUntil?: number })?.overrideUntil;
  const left =
    until !== undefined
      ? `\nthe override may still be set: it expires on its own at ${new Date(until).toISOString()}, and the breaker then recovers by itself`
      : '';
  if (boundReachedMs !== undefined)
    return (
      `drill failed: no answer from AWS within the drill's ${Math.round(boundReachedMs / 1000)} s bound` +
      `\nfix: ${fixFor(Object.assign(new Error('timed out'), { name: 'TimeoutError' }), 'drill')}${left}`
    );
  const name = errorName(e);
  const msg = (e as Error)?.message ?? String(e);
  return `drill failed: ${isTimeout(e) ? 'no answer from AWS in time: ' : ''}${name}: ${msg}\nfix: ${fixFor(e, 'drill')}${left}`;
}
