/**
 * The drift function's benchmarks (printed by `npm run bench`, never timed tests): its bundle's size and
 * cold start, and one daily run over a day of 1 % capture at 150 QPS — 129,600 recommender-shaped records
 * (a power-law sequence of 5–3,000 item ids, 20 profile values, the answer), the default features of
 * `drift: {}` with the recommender's memory profile — with its CPU seconds, wall time and peak memory. Each
 * run is a fresh Node.js process (`node bench/drift.js --run`), whose S3 is aws-sdk-client-mock serving
 * objects made on request, so its peak resident memory is the function's, not the data's.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const root = path.join(__dirname, '..', '..');
const bundle = path.join(root, 'dist', 'lambda-bundles', 'drift', 'index.js');

/** A day of 1 % capture at 150 QPS, in objects of five minutes (SageMaker writes several an hour). */
export const DAY_RECORDS = 150 * 0.01 * 86_400;
const OBJECTS_PER_HOUR = 12;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** A seeded generator (mulberry32): the same day every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One capture object's JSON Lines: recommender requests of power-law lengths (5–3,000, α = 1) and their answers. */
function captureObject(seed: number, records: number): string {
  const r = rng(seed);
  const lines: string[] = [];
  for (let i = 0; i < records; i++) {
    const u = r();
    const len = Math.max(1, Math.round(1 / (u / 3000 + (1 - u) / 5)));
    const events = Array.from({ length: len }, () => Math.floor(r() * 50000));
    const body = JSON.stringify({ events, profile: Array.from({ length: 20 }, () => Math.round(r() * 1000) / 1000) });
    const answer = JSON.stringify({ ctr: r(), cvr: r(), dwell: 30 * r(), degradeLevel: 0, truncated: 0 });
    const side = (mode: string, data: string) => ({ observedContentType: 'application/json', mode, data, encoding: 'JSON' });
    lines.push(
      JSON.stringify({
        captureData: { endpointInput: side('INPUT', body), endpointOutput: side('OUTPUT', answer) },
        eventMetadata: { eventId: `e-${seed}-${i}`, inferenceTime: '2026-12-01T08:24:40Z' },
        eventVersion: '0',
      }),
    );
  }
  return lines.join('\n') + '\n';
}

/** The child: one daily run over the day, then its figures as a JSON line. */
async function runChild(): Promise<void> {
  const { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } = await import('@aws-sdk/client-s3');
  const { mockClient } = await import('aws-sdk-client-mock');
  const { Readable } = await import('stream');
  const { runDrift } = await import('../lambda/drift/run');
  const { numericBaseline } = await import('../lib/drift/baseline');
  const perObject = Math.round(DAY_RECORDS / 24 / OBJECTS_PER_HOUR);
  const day = '2026/12/01';
  const keys = Array.from({ length: 24 * OBJECTS_PER_HOUR }, (_, i) => {
    const h = String(Math.floor(i / OBJECTS_PER_HOUR)).padStart(2, '0');
    return `data-capture/rec/AllTraffic/${day}/${h}/part-${String(i % OBJECTS_PER_HOUR).padStart(2, '0')}.jsonl`;
  });
  // The bytes' learned baseline, from another day of the same traffic.
  const sample = captureObject(999, 2000)
    .trim()
    .split('\n')
    .map(l => Buffer.byteLength(JSON.parse(l).captureData.endpointInput.data));
  const learned = JSON.stringify({
    format: 1,
    modelVersion: 'rec-model-1',
    source: 'bench',
    createdAt: '2026-11-01T03:00:00Z',
    features: { RequestBytes: numericBaseline(sample) },
  });
  const written = new Map<string, string>();
  let bytes = 0;
  mockClient(S3Client)
    .on(ListObjectsV2Command)
    .callsFake((i: any) => ({ Contents: keys.filter(k => k.startsWith(i.Prefix)).map(Key => ({ Key })), IsTruncated: false }))
    .on(GetObjectCommand)
    .callsFake((i: any) => {
      const text = i.Key.startsWith('drift-baselines/')
        ? i.Key.endsWith('.json') && !i.Key.endsWith('status.json')
          ? learned
          : undefined
        : undefined;
      if (i.Key.startsWith('drift-baselines/')) {
        if (text === undefined) throw Object.assign(new Error('NoSuchKey'), { name: 'NoSuchKey' });
        return { Body: Readable.from([Buffer.from(text)]) };
      }
      const body = Buffer.from(captureObject(keys.indexOf(i.Key), perObject));
      bytes += body.length;
      return { Body: Readable.from([body]) };
    })
    .on(PutObjectCommand)
    .callsFake((i: any) => {
      written.set(i.Key, String(i.Body));
      return {};
    });
  const config = {
    endpointName: 'rec',
    bucket: 'capture',
    prefix: 'data-capture',
    variants: ['AllTraffic'],
    features: [
      { name: 'RequestSize', selector: '$.events.length()', kind: 'numeric' as const, side: 'input' as const, profileBaseline: true, logScale: true },
      { name: 'RequestBytes', selector: 'bytes()', kind: 'numeric' as const, side: 'input' as const, logScale: true },
    ],
    modelVersion: 'rec-model-1',
    baselineUri: '',
    learnedPrefix: 'drift-baselines/rec',
    learn: true,
    sizeProfile: { distribution: 'powerlaw:5:3000', p50: 11, p99: 444, p999: 2801, min: 5, max: 3000 },
    normalisation: 'std' as const,
    smoothing: 0.5,
    sampleSize: 50000,
    maxObjects: 20000,
  };
  const before = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const r = await runDrift({ distance: 'kl', windowHours: 24 }, config, {
    s3: new S3Client({ region: 'us-east-1' }),
    now: new Date('2026-12-02T00:30:00Z'), // the window is the whole of 1 December
    remainingMs: () => 900_000,
    log: () => undefined,
  });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(before);
  process.stdout.write(
    JSON.stringify({
      records: r.records,
      objects: r.objects,
      mb: bytes / 1e6,
      cpuS: (cpu.user + cpu.system) / 1e6,
      wallS: wall,
      maxRssMb: process.resourceUsage().maxRSS / 1024,
      distances: r.distances,
    }) + '\n',
  );
}

/** The drift function's bundle, cold start and a day's run (medians of three fresh processes). */
export function benchDrift(): Record<string, string> {
  const size = fs.statSync(bundle).size;
  const script = `const t=process.hrtime.bigint();require(${JSON.stringify(bundle)});console.log(Number(process.hrtime.bigint()-t)/1e6)`;
  const { NODE_PATH: _ignored, ...env } = process.env;
  const loads = Array.from({ length: 7 }, () => Number(execFileSync(process.execPath, ['-e', script], { cwd: os.tmpdir(), env }).toString().trim()));
  const runs = Array.from(
    { length: 3 },
    () =>
      JSON.parse(
        execFileSync(process.execPath, [__filename, '--run'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
          .toString()
          .trim()
          .split('\n')
          .at(-1)!,
      ) as {
        records: number;
        mb: number;
        cpuS: number;
        wallS: number;
        maxRssMb: number;
      },
  );
  const cpu = median(runs.map(r => r.cpuS));
  const rss = median(runs.map(r => r.maxRssMb));
  const { records, mb } = runs[0];
  return {
    'drift bundle size': `${(size / 1024).toFixed(1)} KB (the S3 client included)`,
    'drift module load (cold start, median of 7)': `${median(loads).toFixed(1)} ms`,
    [`drift daily run over a day of 1 % capture at 150 QPS (${records.toLocaleString('en-US')} records, ${mb.toFixed(0)} MB; median of 3)`]:
      `${cpu.toFixed(2)} s CPU (${median(runs.map(r => r.wallS)).toFixed(2)} s wall), ${Math.round(records / cpu).toLocaleString('en-US')} records/s, ` +
      `${(mb / cpu).toFixed(1)} MB/s; peak memory ${rss.toFixed(0)} MB of the function's 1,024 MB`,
  };
}

if (require.main === module && process.argv.includes('--run')) void runChild();
