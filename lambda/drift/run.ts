/**
 * One drift run: list the window's capture objects, stream each line by line (the function's memory
 * is bounded by the per-feature samples, never by the window's volume), extract the features, compare
 * them with the baseline and publish the distances as CloudWatch metrics (Embedded Metric Format: a log
 * line, no cloudwatch:PutMetricData permission).
 */
import { createHash } from 'crypto';
import * as readline from 'readline';
import { Readable } from 'stream';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  BASELINE_FORMAT,
  baselineProblems,
  DriftBaselineDocument,
  FeatureBaseline,
  numericBaseline,
  requestSizeBaseline,
} from '../../lib/drift/baseline';
import { BYTES_SELECTOR, CsvSide, DecodedSide, decodeRecord, hourPrefix, numbers, parseSelector, select, windowHours } from '../../lib/drift/capture';
import {
  BaselineStatus,
  DRIFT_METRICS as M,
  DRIFT_NAMESPACE,
  DriftFunctionConfig,
  DriftRunInput,
  DriftRunStatus,
  FeatureConfig,
} from '../../lib/drift/contract';
import { categoricalKl, DriftNormalisation, histogram, klDivergence, normalisedWasserstein, Reservoir, shareShift } from '../../lib/drift/statistics';

/** Distinct categories counted per feature at most; the rest count as one overflow category. */
export const MAX_CATEGORIES = 1000;
const OVERFLOW = '__other__';

/** What a run saw and published. */
export interface RunResult {
  readonly distance: DriftRunInput['distance'];
  readonly objects: number;
  readonly records: number;
  /** Objects left unread (over maxObjects, or out of time). */
  readonly skippedObjects: number;
  /** Distance per feature (undefined: no baseline yet or no data). */
  readonly distances: Record<string, number | undefined>;
  /** Where the baselines came from, per feature. */
  readonly baselineSources: Record<string, string>;
  /** A baseline learned from this window was stored. */
  readonly learned: boolean;
  /** Features this run could not compare for want of a baseline (published as `DriftBaselineMissing`). */
  readonly missingBaselines: string[];
  /** Each feature's baseline: its source and age (written to the run status for `doctor`). */
  readonly baselines: Record<string, BaselineStatus>;
}

/** A feature's values collected over the window. */
class Collector {
  public readonly sample: Reservoir;
  public readonly categories: Record<string, number> = {};
  private readonly steps;
  private readonly csvSteps;
  /** The CSV selector is `$.length()`: the rows, counted without parsing a cell. */
  private readonly csvRowCount: boolean;
  constructor(
    public readonly feature: FeatureConfig,
    sampleSize: number,
    random: () => number,
  ) {
    this.sample = new Reservoir(sampleSize, random);
    this.steps = feature.selector === BYTES_SELECTOR ? undefined : parseSelector(feature.selector);
    this.csvSteps = feature.csvSelector ? parseSelector(feature.csvSelector) : undefined;
    this.csvRowCount = this.csvSteps?.length === 1 && 'length' in this.csvSteps[0];
  }

  public add(side: DecodedSide): void {
    let values: unknown[];
    if (!this.steps) values = [side.bytes];
    else if (side.format === 'csv' && this.csvRowCount && 'rows' in side) values = [(side as CsvSide).rows];
    else if (side.format === 'csv') values = this.csvSteps ? select(side.body, this.csvSteps) : [];
    else values = select(side.body, this.steps);
    if (this.feature.kind === 'numeric') {
      for (const v of numbers(values)) this.sample.add(v);
      return;
    }
    for (const v of values) {
      if (v === null || typeof v === 'object') continue;
      let key = String(v);
      if (!(key in this.categories) && Object.keys(this.categories).length >= MAX_CATEGORIES) key = OVERFLOW;
      this.categories[key] = (this.categories[key] ?? 0) + 1;
    }
  }

  /** This window as a baseline (for a first-window baseline). */
  public baseline(): FeatureBaseline | undefined {
    if (this.feature.kind === 'numeric') return numericBaseline(this.sample.values);
    const count = Object.values(this.categories).reduce((a, n) => a + n, 0);
    return count > 0 ? { kind: 'categorical', count, categories: { ...this.categories } } : undefined;
  }
}

/** The hash a learned baseline is keyed by: the model version's SHA-256, 16 hex digits. */
export function modelHash(modelVersion: string): string {
  return createHash('sha256').update(modelVersion).digest('hex').slice(0, 16);
}

/** `s3://bucket/key` → parts. */
export function parseS3Uri(uri: string): { bucket: string; key: string } | undefined {
  const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri);
  return m ? { bucket: m[1], key: m[2] } : undefined;
}

/** The distance of one feature against its baseline, for this run's distance kind. */
export function featureDistance(
  kind: DriftRunInput['distance'],
  c: { sample: number[]; categories: Record<string, number> },
  b: FeatureBaseline,
  config: Pick<DriftFunctionConfig, 'normalisation' | 'smoothing'>,
  logScale = false,
): number | undefined {
  let d: number;
  if (b.kind === 'numeric') {
    if (!c.sample.length) return undefined;
    const how = config.normalisation as DriftNormalisation;
    if (kind === 'kl') d = klDivergence(histogram(c.sample, b.edges), b.counts, config.smoothing);
    else if (logScale) d = normalisedWasserstein(c.sample.map(Math.log1p), b.quantiles.map(Math.log1p), how);
    else d = normalisedWasserstein(c.sample, b.quantiles, how, b.std);
  } else {
    if (!Object.keys(c.categories).length) return undefined;
    d = kind === 'wasserstein' ? shareShift(c.categories, b.categories) : categoricalKl(c.categories, b.categories, config.smoothing);
  }
  return Number.isFinite(d) ? d : undefined;
}

/** The metric a distance is published as. */
export function metricName(kind: DriftRunInput['distance'], featureKind: FeatureConfig['kind']): string {
  if (kind === 'kl') return M.KL;
  return featureKind === 'numeric' ? M.WASSERSTEIN : M.SHARE_SHIFT;
}

/** Reads a whole (small) object as text; undefined when it does not exist. */
async function readText(s3: S3Client, bucket: string, key: string): Promise<string | undefined> {
  try {
    const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const chunks: Buffer[] = [];
    for await (const chunk of r.Body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
    return Buffer.concat(chunks).toString('utf8');
  } catch (e) {
    if ((e as { name?: string }).name === 'NoSuchKey') return undefined;
    throw e;
  }
}

/** A baseline document read from S3 and checked; a bad one throws (the run fails loudly, into the dead-letter queue). */
async function readBaseline(s3: S3Client, bucket: string, key: string): Promise<DriftBaselineDocument | undefined> {
  const text = await readText(s3, bucket, key);
  if (text === undefined) return undefined;
  const doc = JSON.parse(text);
  const problems = baselineProblems(doc);
  if (problems.length) throw new Error(`the drift baseline s3://${bucket}/${key} is not usable: ${problems.join('; ')}`);
  return doc as DriftBaselineDocument;
}

/** Every key of the window, variant by variant, hour by hour. */
async function* windowKeys(s3: S3Client, config: DriftFunctionConfig, start: Date, end: Date): AsyncGenerator<string> {
  let variants = config.variants;
  if (!variants.length) {
    // The variant folders under <prefix>/<endpoint>/ (CommonPrefixes with a '/' delimiter).
    const base = `${[config.prefix, config.endpointName].filter(Boolean).join('/')}/`;
    variants = [];
    let token: string | undefined;
    do {
      const r = await s3.send(new ListObjectsV2Command({ Bucket: config.bucket, Prefix: base, Delimiter: '/', ContinuationToken: token }));
      for (const p of r.CommonPrefixes ?? []) if (p.Prefix) variants.push(p.Prefix.slice(base.length).replace(/\/$/, ''));
      token = r.NextContinuationToken;
    } while (token);
  }
  for (const variant of variants) {
    for (const hour of windowHours(start, end)) {
      let token: string | undefined;
      do {
        const r = await s3.send(
          new ListObjectsV2Command({
            Bucket: config.bucket,
            Prefix: hourPrefix(config.prefix, config.endpointName, variant, hour),
            ContinuationToken: token,
          }),
        );
        for (const o of r.Contents ?? []) if (o.Key?.endsWith('.jsonl')) yield o.Key;
        token = r.NextContinuationToken;
      } while (token);
    }
  }
}

/** Streams an object line by line into the collectors; returns the records read. */
async function readObject(s3: S3Client, bucket: string, key: string, collectors: Collector[]): Promise<number> {
  const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const lines = readline.createInterface({ input: r.Body as Readable, crlfDelay: Infinity });
  let records = 0;
  for await (const line of lines) {
    const rec = decodeRecord(line);
    if (!rec) continue;
    records++;
    for (const c of collectors) {
      const side = c.feature.side === 'output' ? rec.output : rec.input;
      if (side) c.add(side);
    }
  }
  return records;
}

/** The Embedded Metric Format line of a run: one value per feature and distance, and the records read. */
export function metricsLine(
  config: Pick<DriftFunctionConfig, 'endpointName' | 'features'>,
  kind: DriftRunInput['distance'],
  distances: Record<string, number | undefined>,
  records: number,
  now: number,
  missingBaselines = 0,
): object[] {
  const lines: object[] = [
    {
      _aws: {
        Timestamp: now,
        CloudWatchMetrics: [
          {
            Namespace: DRIFT_NAMESPACE,
            Dimensions: [['EndpointName', 'Distance']],
            Metrics: [
              { Name: M.RECORDS, Unit: 'Count' },
              { Name: M.BASELINE_MISSING, Unit: 'Count' },
            ],
          },
        ],
      },
      EndpointName: config.endpointName,
      Distance: kind,
      [M.RECORDS]: records,
      // A run that compared nothing for want of a baseline says so (an alarm watches it), 0 included.
      [M.BASELINE_MISSING]: missingBaselines,
    },
  ];
  for (const f of config.features) {
    const d = distances[f.name];
    if (d === undefined) continue;
    const name = metricName(kind, f.kind);
    lines.push({
      _aws: {
        Timestamp: now,
        CloudWatchMetrics: [{ Namespace: DRIFT_NAMESPACE, Dimensions: [['EndpointName', 'Feature']], Metrics: [{ Name: name, Unit: 'None' }] }],
      },
      EndpointName: config.endpointName,
      Feature: f.name,
      [name]: d,
    });
  }
  return lines;
}

/** Dependencies of a run (injected by tests). */
export interface RunContext {
  readonly s3: S3Client;
  readonly now: Date;
  /** Milliseconds left before Lambda's timeout. */
  readonly remainingMs: () => number;
  readonly log: (o: object) => void;
  readonly random?: () => number;
}

/** Stop opening objects when less than this is left: the metrics must still be published. */
export const TIME_RESERVE_MS = 30_000;

/** One scheduled run. */
export async function runDrift(input: DriftRunInput, config: DriftFunctionConfig, ctx: RunContext): Promise<RunResult> {
  const end = new Date(ctx.now.getTime());
  end.setUTCMinutes(0, 0, 0); // whole hours: the current hour is still being written
  const start = new Date(end.getTime() - input.windowHours * 3_600_000);
  const collectors = config.features.map(f => new Collector(f, config.sampleSize, ctx.random ?? Math.random));

  let objects = 0;
  let records = 0;
  let skippedObjects = 0;
  for await (const key of windowKeys(ctx.s3, config, start, end)) {
    if (objects >= config.maxObjects || ctx.remainingMs() < TIME_RESERVE_MS) {
      skippedObjects++;
      continue;
    }
    objects++;
    records += await readObject(ctx.s3, config.bucket, key, collectors);
  }

  // Baselines: the file's, then the memory profile's request sizes (only for a feature in the profile's
  // unit), then a learned one (this model version's).
  const baselines: Record<string, FeatureBaseline> = {};
  const status: Record<string, BaselineStatus> = {};
  const file = config.baselineUri ? parseS3Uri(config.baselineUri) : undefined;
  if (config.baselineUri && !file) throw new Error(`baselineUri '${config.baselineUri}' is not s3://bucket/key`);
  const fromFile = file ? await readBaseline(ctx.s3, file.bucket, file.key) : undefined;
  if (file && !fromFile) throw new Error(`the drift baseline ${config.baselineUri} does not exist`);
  for (const f of config.features) {
    const b = fromFile?.features[f.name];
    if (b && b.kind === f.kind) {
      baselines[f.name] = b;
      status[f.name] = { source: 'file', from: config.baselineUri, createdAt: fromFile!.createdAt };
    } else if (f.profileBaseline && config.sizeProfile && f.kind === 'numeric') {
      const p = config.sizeProfile;
      const s = requestSizeBaseline({
        distribution: p.distribution,
        p50: { size: p.p50 },
        p99: { size: p.p99 },
        p999: { size: p.p999 },
        points: [{ size: p.min }, { size: p.max }],
      });
      if (s) {
        baselines[f.name] = s;
        status[f.name] = { source: 'memory-profile', from: p.distribution || 'P50/P99/P99.9' };
      }
    }
  }
  const learnedKey = `${config.learnedPrefix}/${modelHash(config.modelVersion)}.json`;
  let learned = false;
  const missing = config.features.filter(f => !baselines[f.name]);
  if (missing.length && config.learn) {
    const stored = await readBaseline(ctx.s3, config.bucket, learnedKey);
    const fresh: Record<string, FeatureBaseline> = { ...stored?.features };
    for (const f of missing) {
      const b = stored?.features[f.name];
      if (b && b.kind === f.kind) {
        baselines[f.name] = b;
        status[f.name] = { source: 'learned', from: `s3://${config.bucket}/${learnedKey}`, createdAt: stored!.createdAt };
      } else if (records > 0) {
        // No baseline for this model version yet: this window becomes it (no distance this run).
        const made = collectors.find(c => c.feature === f)!.baseline();
        if (made) {
          fresh[f.name] = made;
          learned = true;
          status[f.name] = { source: 'learned', from: `s3://${config.bucket}/${learnedKey}`, createdAt: ctx.now.toISOString(), learnedNow: true };
        }
      }
    }
    if (learned) {
      const doc: DriftBaselineDocument = {
        format: BASELINE_FORMAT,
        modelVersion: config.modelVersion,
        source: `capture window ${start.toISOString()} – ${end.toISOString()}`,
        createdAt: ctx.now.toISOString(),
        features: fresh,
      };
      await ctx.s3.send(new PutObjectCommand({ Bucket: config.bucket, Key: learnedKey, Body: JSON.stringify(doc), ContentType: 'application/json' }));
    }
  }

  const distances: Record<string, number | undefined> = {};
  for (const c of collectors) {
    const b = baselines[c.feature.name];
    distances[c.feature.name] = b
      ? featureDistance(input.distance, { sample: c.sample.values, categories: c.categories }, b, config, c.feature.logScale)
      : undefined;
  }
  // Compared with nothing this run: no baseline at all, or one only just learned from this window.
  const missingBaselines = config.features.filter(f => !baselines[f.name]).map(f => f.name);
  for (const f of config.features) status[f.name] ??= { source: 'none' };
  for (const line of metricsLine(config, input.distance, distances, records, ctx.now.getTime(), missingBaselines.length)) ctx.log(line);
  const sources = Object.fromEntries(
    Object.entries(status)
      .filter(([, b]) => b.source !== 'none' && !b.learnedNow)
      .map(([name, b]) => [name, b.source === 'memory-profile' ? `memory profile (${b.from})` : b.from!]),
  );
  const result: RunResult = {
    distance: input.distance,
    objects,
    records,
    skippedObjects,
    distances,
    baselineSources: sources,
    learned,
    missingBaselines,
    baselines: status,
  };
  ctx.log({ component: 'drift', window: { start: start.toISOString(), end: end.toISOString() }, ...result });
  // The run's status beside the learned baselines: what doctor reports (each baseline's source and age).
  const runStatus: DriftRunStatus = {
    format: 1,
    endpointName: config.endpointName,
    modelVersion: config.modelVersion,
    distance: input.distance,
    at: ctx.now.toISOString(),
    records,
    features: status,
  };
  try {
    await ctx.s3.send(
      new PutObjectCommand({
        Bucket: config.bucket,
        Key: `${config.learnedPrefix}/status.json`,
        Body: JSON.stringify(runStatus),
        ContentType: 'application/json',
      }),
    );
  } catch (e) {
    // The run's metrics are out: a status that cannot be written costs doctor its report, not the run.
    ctx.log({ component: 'drift', warning: `could not write the run status: ${(e as Error).name}: ${(e as Error).message}` });
  }
  return result;
}
