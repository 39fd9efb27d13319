/**
 * The operator commands of the shipped CLI: `doctor` and `drill` (bundled with the AWS SDK into
 * dist/cli-bundles/ops.js; bin/cli.ts loads it). Exit codes: 0 nothing failed, 1 a check failed or the
 * drill was refused or did not see the path work, 2 usage error.
 */
import * as fs from 'fs';
import { CallLimits, nodeNotice, opsClients, resolveRegion } from './aws';
import { doctor, DOCTOR_DEADLINE_MS, formatReport } from './doctor';
import { drill, formatDrill } from './drill';

export const DOCTOR_USAGE = `usage: sagemaker-resilient-endpoint doctor --endpoint NAME [--region R] [--json] [--timeout 60s]
  Read-only checks of a deployed ResilientEndpoint with your AWS credentials: endpoint InService and its
  live config; what CloudWatch really stores of SageMaker's memory data and of the container guard's
  metrics (10 s or 1 minute, and how late, against the simulator's --metric-delay-10s and
  --guard-metric-delay); the per-GPU and per-variant series, every alarm (none stuck without data) and a
  confirmed subscriber, the breaker (function runs, rules enabled, state item, level parameter, weights,
  tagged scalable targets), captured requests, Parameter Store throughput.
  Region: --region, else AWS_REGION, else AWS_DEFAULT_REGION, else your profile's.
  Ends within ${DOCTOR_DEADLINE_MS / 1000} s (--timeout: 5s to 10m) whatever the network does (each AWS call: 10 s,
  3 tries); a check that did not finish in time FAILs, named. Exit code 0 when no check FAILs. Permissions: Describe*/List*/Get*
  on those services, cloudwatch:DescribeAlarms on "*" for the composite alarm (see docs/operations.md).`;

export const DRILL_USAGE = `usage: sagemaker-resilient-endpoint drill --endpoint NAME --to DEGRADED|OPEN [--hold 5m] [--watch-back 30m]
         [--probe FILE --content-type application/json] [--dry-run] [--region R] [--json]
  A game day: forces the breaker into DEGRADED or OPEN through an expiring override on its state item,
  watches the level published, the container's answer (--probe: a request body to send), the weights
  and the capacity hold, then ends the override and watches the breaker's own way back to CLOSED.
  Refuses when the endpoint is already degraded; Ctrl-C ends the override first. --dry-run changes nothing.`;

function parse(argv: string[], switches: string[]): Record<string, string> {
  const o: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i].startsWith('--')) throw new Error(`unexpected argument '${argv[i]}'`);
    const k = argv[i].slice(2);
    if (switches.includes(k)) o[k] = 'true';
    else {
      if (argv[i + 1] === undefined || argv[i + 1].startsWith('--')) throw new Error(`--${k} needs a value`);
      o[k] = argv[++i];
    }
  }
  return o;
}

/** '90s', '5m', '1h' or plain seconds → ms. */
export function durationMs(v: string, name: string): number {
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(v.trim());
  if (!m) throw new Error(`--${name}: got '${v}'; allowed: a duration like 90s, 5m or 1h`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 's' | 'm' | 'h'];
}

type Out = { log: (s: string) => void; error: (s: string) => void };

/** After the report, not before it: the SDK's own Node.js notice is turned off (aws.ts). */
function notice(out: Out): void {
  const n = nodeNotice();
  if (n) out.error(n);
}
const CONSOLE: Out = { log: s => console.log(s), error: s => console.error(s) };

export async function doctorMain(
  argv: string[],
  clients = undefined as ReturnType<typeof opsClients> | undefined,
  out: Out = CONSOLE,
  deps: { deadlineMs?: number; limits?: CallLimits } = {},
): Promise<number> {
  let o: Record<string, string>;
  let deadlineMs = deps.deadlineMs;
  try {
    o = parse(argv, ['json', 'help']);
    if (o.help) {
      out.log(DOCTOR_USAGE);
      return 0;
    }
    if (!o.endpoint) throw new Error('--endpoint NAME is required');
    if (o.timeout !== undefined) {
      const ms = durationMs(o.timeout, 'timeout');
      if (ms < 5_000 || ms > 600_000) throw new Error(`--timeout: got ${o.timeout}; allowed: 5s to 10m`);
      deadlineMs = ms;
    }
  } catch (e) {
    out.error(`${(e as Error).message}\n${DOCTOR_USAGE}`);
    return 2;
  }
  const r = await doctor(clients ?? opsClients(resolveRegion(o.region), undefined, deps.limits), o.endpoint, Date.now(), { deadlineMs });
  out.log(o.json ? JSON.stringify(r, null, 2) : formatReport(r));
  notice(out);
  return r.ok ? 0 : 1;
}

export async function drillMain(
  argv: string[],
  clients = undefined as ReturnType<typeof opsClients> | undefined,
  out: Out = CONSOLE,
  deps: { clock?: Parameters<typeof drill>[2]; readFile?: (f: string) => string; signals?: NodeJS.EventEmitter } = {},
): Promise<number> {
  let o: Record<string, string>;
  let opts: Parameters<typeof drill>[1];
  try {
    o = parse(argv, ['json', 'help', 'dry-run']);
    if (o.help) {
      out.log(DRILL_USAGE);
      return 0;
    }
    if (!o.endpoint) throw new Error('--endpoint NAME is required');
    if (o.to !== 'DEGRADED' && o.to !== 'OPEN') throw new Error(`--to: got '${o.to ?? ''}'; allowed: DEGRADED or OPEN`);
    const holdMs = durationMs(o.hold ?? '5m', 'hold');
    if (holdMs < 60_000 || holdMs > 3_600_000) throw new Error(`--hold: got ${o.hold}; allowed: 1m to 1h (the override's expiry is the safety net)`);
    const read = deps.readFile ?? ((f: string) => fs.readFileSync(f, 'utf8'));
    opts = {
      endpointName: o.endpoint,
      to: o.to,
      holdMs,
      watchBackMs: durationMs(o['watch-back'] ?? '30m', 'watch-back'),
      dryRun: !!o['dry-run'],
      probe: o.probe ? { body: read(o.probe), contentType: o['content-type'] ?? 'application/json' } : undefined,
    };
  } catch (e) {
    out.error(`${(e as Error).message}\n${DRILL_USAGE}`);
    return 2;
  }
  const abort = new AbortController();
  const signals = deps.signals ?? process;
  const stop = () => {
    out.error('interrupted: ending the override before exiting…');
    abort.abort();
  };
  signals.once('SIGINT', stop);
  signals.once('SIGTERM', stop);
  try {
    const r = await drill(clients ?? opsClients(resolveRegion(o.region)), opts, deps.clock, abort.signal);
    out.log(o.json ? JSON.stringify(r, null, 2) : formatDrill(r));
    notice(out);
    return r.interrupted ? 130 : r.ok ? 0 : 1;
  } finally {
    signals.removeListener('SIGINT', stop);
    signals.removeListener('SIGTERM', stop);
  }
}
