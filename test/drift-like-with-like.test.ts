// Like with like, end to end: each example's endpoint with `drift: {}` and its own memory profile is
// synthesized, and the drift function runs with the configuration the template carries, over capture
// objects whose requests are drawn from the example's own profile (the profiler's sampler), encoded by the
// example's own inference code (its profile_request, and for the clustering model CSV rows as its input_fn
// reads them), each read back by that code to the size that was drawn (test/drift_requests.py). With no
// drift, every default feature reads below half of its thresholds for 20 seeds; incident A's drift (15 %
// larger payloads, far longer sequences) reads above them.
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { S3Client } from '@aws-sdk/client-s3';
import { Template } from 'aws-cdk-lib/assertions';
import { mockClient } from 'aws-sdk-client-mock';
import { runDrift, RunResult } from '../lambda/drift/run';
import { ContainerImage, MemoryProfile, ResilientEndpoint, SageMakerInstanceType } from '../lib';
import { DRIFT_CONFIG_ENV, DriftFunctionConfig } from '../lib/drift/contract';
import { b64, BUCKET, record, serveBucket } from './drift-s3';
import { newStack } from './util';

const IMAGE = ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1');
const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);
const W = 0.15; // incident B's thresholds (the defaults)
const KL = 0.3;

type Example = 'recommender' | 'clustering';
/**
 * Requests per window, and in the first window (whose bytes become the learned baseline). A day of 1 %
 * capture at incident B's 150 QPS is ~130,000; these are enough to keep sampling noise under the halves
 * (a normalised Wasserstein-1 between two samples of a heavy-tailed size falls as 1/√n: ~0.04 at 1,000).
 */
const COUNT: Record<Example, number> = { recommender: 2000, clustering: 1000 };
const LEARN: Record<Example, number> = { recommender: 20000, clustering: 10000 };

/** The drift function's configuration as the example's endpoint with `drift: {}` synthesizes it. */
function configOf(example: Example): DriftFunctionConfig {
  const { stack } = newStack(`LikeWithLike${example}`);
  new ResilientEndpoint(stack, 'E', {
    endpointName: example,
    model: { image: IMAGE, memoryProfile: MemoryProfile.fromFile(path.join(__dirname, '..', 'examples', 'models', example, 'memory-profile.json')) },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    instanceCount: 2,
    drift: {},
  });
  const fn = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function')).find(
    (f: any) => f.Properties.Environment?.Variables?.[DRIFT_CONFIG_ENV],
  ) as any;
  // The bucket's and the model's generated names are references: a bucket and a model name stand in.
  const parts: unknown[] = fn.Properties.Environment.Variables[DRIFT_CONFIG_ENV]['Fn::Join'][1];
  const text = parts.map(p => (typeof p === 'string' ? p : JSON.stringify(p).includes('Bucket') ? BUCKET : `${example}-model-1`)).join('');
  return JSON.parse(text);
}

/** One request, as test/drift_requests.py writes it: the size drawn, and the size the inference code read. */
interface Drawn {
  readonly body: string;
  readonly contentType: string;
  readonly size: number;
  readonly readSize: number;
}

/** A window's requests: how many per seed, the seeds, and incident A's drift (LONGER, PAD) or none. */
interface Window {
  readonly count: number;
  readonly seeds: number[];
  readonly drift?: { readonly longer: number; readonly pad: number };
}

/**
 * Each window's requests per seed, from test/drift_requests.py (one process for every window of an example:
 * its code loaded and its rows drawn once), read seed by seed (a window of the clustering model's is ~10 MB).
 */
function requests<K extends string>(example: Example, windows: Record<K, Window>): Record<K, (seed: number) => Drawn[]> {
  const specs = Object.entries<Window>(windows).map(([name, w]) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `drift-${example}-${name}-`));
    dirs.push(dir);
    return { name, dir, w, spec: [dir, w.count, w.seeds.join(','), ...(w.drift ? [w.drift.longer, w.drift.pad] : [])].join(':') };
  });
  execFileSync('python3', [path.join(__dirname, 'drift_requests.py'), example, ...specs.map(s => s.spec)], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return Object.fromEntries(
    specs.map(({ name, dir, w }) => [
      name,
      (seed: number) => {
        const drawn: Drawn[] = fs
          .readFileSync(path.join(dir, `${seed}.jsonl`), 'utf8')
          .trim()
          .split('\n')
          .map(l => JSON.parse(l));
        // Each body reads, with the example's own inference code, as the size that was drawn.
        expect([seed, drawn.length, drawn.filter(r => r.readSize !== r.size)]).toEqual([seed, w.count, []]);
        return drawn;
      },
    ]),
  ) as Record<K, (seed: number) => Drawn[]>;
}
const dirs: string[] = [];
afterAll(() => dirs.forEach(d => fs.rmSync(d, { recursive: true, force: true })));

const s3mock = mockClient(S3Client);
const store = new Map<string, Buffer>();

/**
 * Captured as SageMaker captures them with the endpoint's default DataCaptureConfig: JSON bodies as JSON
 * (application/json is its JsonContentTypes), anything else (text/csv) base64 with its observed type.
 */
function capture(example: Example, day: number, reqs: Drawn[]): void {
  const lines = reqs.map(r =>
    record(r.contentType === 'application/json' ? { type: r.contentType, data: r.body, encoding: 'JSON' } : b64(r.contentType, r.body)),
  );
  const hour = (h: number) => `data-capture/${example}/Primary/2026/12/${String(day).padStart(2, '0')}/${String(h).padStart(2, '0')}/part.jsonl`;
  // Spread over four hours of the day, as SageMaker writes an object per hour and more.
  for (let h = 0; h < 4; h++) store.set(hour(6 + h), Buffer.from(lines.filter((_, i) => i % 4 === h).join('\n') + '\n'));
}

const ctx = (day: number) => ({
  s3: new S3Client({}),
  now: new Date(Date.UTC(2026, 11, day + 1, 1, 30)), // the next day 01:30 UTC: the window is the day before
  remainingMs: () => 600_000,
  log: () => undefined,
  random: mulberry32(day),
});

/** A small seeded generator for the reservoirs (deterministic runs). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Both runs over one day: KL (daily) and Wasserstein (weekly, here over the same day). */
async function runs(config: DriftFunctionConfig, day: number): Promise<{ kl: RunResult; w: RunResult }> {
  const kl = await runDrift({ distance: 'kl', windowHours: 24 }, config, ctx(day));
  const w = await runDrift({ distance: 'wasserstein', windowHours: 24 }, config, ctx(day));
  return { kl, w };
}

const figures: Record<string, string> = {};
afterAll(() => {
  // The figures docs/drift.md quotes (printed, not asserted twice).
  process.stdout.write(
    `drift like-with-like figures:\n${Object.entries(figures)
      .map(([k, v]) => `  ${k}: ${v}`)
      .join('\n')}\n`,
  );
});

describe.each(['recommender', 'clustering'] as Example[])('%s: drift: {} with its own memory profile', example => {
  let config: DriftFunctionConfig;
  let learnedKey: string;
  const DRIFT_SEEDS = [1, 2, 3];
  let draws: Record<'learn' | 'normal' | 'drifted', (seed: number) => Drawn[]>;
  beforeAll(async () => {
    config = configOf(example);
    store.clear();
    serveBucket(s3mock, store);
    draws = requests(example, {
      learn: { count: LEARN[example], seeds: [1000] },
      normal: { count: COUNT[example], seeds: SEEDS },
      // Incident A's drift: every request twice as long, 15 % more bytes.
      drifted: { count: COUNT[example], seeds: DRIFT_SEEDS, drift: { longer: 1.0, pad: 0.15 } },
    });
    // The first day after the model's deployment: its own draw from the profile. The daily run learns the
    // bytes' baseline from it (the request size has the profile's).
    capture(example, 1, draws.learn(1000));
    const learning = await runDrift({ distance: 'kl', windowHours: 24 }, config, ctx(1));
    expect([learning.learned, learning.missingBaselines]).toEqual([true, ['RequestBytes']]); // learned from this window: not compared in it
    learnedKey = [...store.keys()].find(k => /^drift-baselines\/.*\/[0-9a-f]{16}\.json$/.test(k))!;
    for (const k of [...store.keys()]) if (k.startsWith('data-capture/')) store.delete(k);
  });
  beforeEach(() => {
    serveBucket(s3mock, store);
    for (const k of [...store.keys()]) if (k.startsWith('data-capture/')) store.delete(k);
  });

  test('the default features: the request size in the profile’s unit against the profile, the bytes against a learned baseline', () => {
    const unit = example === 'recommender' ? 'events' : 'rows';
    expect(config.features.map(f => [f.name, f.selector, f.csvSelector ?? '', !!f.profileBaseline])).toEqual([
      ['RequestSize', example === 'recommender' ? '$.events.length()' : '$.instances.length()', example === 'recommender' ? '' : '$.length()', true],
      ['RequestBytes', 'bytes()', '', false], // bytes are not the profile's unit: never compared with it
    ]);
    expect(config.sizeProfile?.distribution).toBe(example === 'recommender' ? 'powerlaw:5:3000' : 'powerlaw:100:200000');
    expect(unit).toBe(MemoryProfile.fromFile(path.join(__dirname, '..', 'examples', 'models', example, 'memory-profile.json')).sizeUnit);
    expect(learnedKey).toBeDefined();
  });

  test(`no drift: every feature below half of each threshold for ${SEEDS.length} seeds`, async () => {
    const worst: Record<string, number> = {};
    for (const seed of SEEDS) {
      const reqs = draws.normal(seed);
      for (const k of [...store.keys()]) if (k.startsWith('data-capture/')) store.delete(k);
      capture(example, 2, reqs);
      const { kl, w } = await runs(config, 2);
      expect([seed, kl.records, kl.missingBaselines, w.missingBaselines]).toEqual([seed, reqs.length, [], []]);
      expect(kl.baselineSources.RequestSize).toBe(`memory profile (${config.sizeProfile!.distribution})`);
      expect(kl.baselineSources.RequestBytes).toBe(`s3://${BUCKET}/${learnedKey}`);
      for (const f of ['RequestSize', 'RequestBytes']) {
        expect([seed, f, 'KL', kl.distances[f]! < KL / 2]).toEqual([seed, f, 'KL', true]);
        expect([seed, f, 'W', w.distances[f]! < W / 2]).toEqual([seed, f, 'W', true]);
        worst[`${f} KL`] = Math.max(worst[`${f} KL`] ?? 0, kl.distances[f]!);
        worst[`${f} W`] = Math.max(worst[`${f} W`] ?? 0, w.distances[f]!);
      }
    }
    figures[`${example}, no drift, largest of ${SEEDS.length} seeds`] = Object.entries(worst)
      .map(([k, v]) => `${k} ${v.toFixed(3)}`)
      .join(', ');
  });

  test("incident A's drift (every request 15 % larger in bytes, sequences twice as long): above the thresholds", async () => {
    const read: Record<string, number> = {};
    for (const seed of DRIFT_SEEDS) {
      for (const k of [...store.keys()]) if (k.startsWith('data-capture/')) store.delete(k);
      capture(example, 2, draws.drifted(seed));
      const { kl, w } = await runs(config, 2);
      expect([seed, w.distances.RequestSize! > W, kl.distances.RequestSize! > KL, w.distances.RequestBytes! > W]).toEqual([seed, true, true, true]);
      for (const [k, v] of [
        ['RequestSize W', w.distances.RequestSize!],
        ['RequestSize KL', kl.distances.RequestSize!],
        ['RequestBytes W', w.distances.RequestBytes!],
        ['RequestBytes KL', kl.distances.RequestBytes!],
      ] as const)
        read[k] = Math.min(read[k] ?? Infinity, v);
    }
    figures[`${example}, incident A's drift, smallest of ${DRIFT_SEEDS.length} seeds`] = Object.entries(read)
      .map(([k, v]) => `${k} ${v.toFixed(3)}`)
      .join(', ');
  });
});
