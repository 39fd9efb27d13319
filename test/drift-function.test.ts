// The drift function against S3-shaped data: capture objects in SageMaker's layout and record format
// (JSON, CSV and BASE64 bodies), served by aws-sdk-client-mock with real streams as bodies, ListObjectsV2
// pages with continuation tokens and delimiters, and the SDK's own NoSuchKey exception for a missing key.
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import * as fc from 'fast-check';
import { handler, parseInput } from '../lambda/drift/handler';
import { featureDistance, modelHash, parseS3Uri, runDrift, TIME_RESERVE_MS } from '../lambda/drift/run';
import { numericBaseline } from '../lib/drift/baseline';
import {
  BYTES_SELECTOR,
  CsvSide,
  csvRows,
  csvRowsOfBytes,
  decodeRecord,
  hourPrefix,
  parseCsv,
  parseSelector,
  select,
  windowHours,
} from '../lib/drift/capture';
import { DRIFT_CONFIG_ENV, DriftFunctionConfig } from '../lib/drift/contract';
import { b64, BUCKET, csv, json, record, serveBucket } from './drift-s3';

/** Φ⁻¹ by bisection on erf-free logistic bounds is overkill: the tests use evenly spread deterministic values. */
const spread = (mu: number, sigma: number, n: number) => Array.from({ length: n }, (_, i) => mu + sigma * Math.sqrt(3) * (2 * ((i + 0.5) / n) - 1)); // uniform, σ = sigma

describe('capture records', () => {
  test('JSON, CSV and BASE64 bodies decode to the same rows', () => {
    const rows = [
      [1.5, 2],
      [3, 4.25],
    ];
    const a = decodeRecord(record(json({ instances: rows })))!;
    const b = decodeRecord(record(csv(rows)))!;
    const c = decodeRecord(record(b64('application/json', JSON.stringify({ instances: rows }))))!;
    const d = decodeRecord(record(b64('text/csv; charset=utf-8', '1.5,2\n3,4.25\n')))!;
    expect(select(a.input!.body, parseSelector('$.instances[*][0]'))).toEqual([1.5, 3]);
    expect(select(b.input!.body, parseSelector('$[*][1]'))).toEqual([2, 4.25]);
    expect(select(c.input!.body, parseSelector('$.instances[*][1]'))).toEqual([2, 4.25]);
    expect(d.input!.body).toEqual(rows);
    expect(d.input!.bytes).toBe(13); // the decoded body's bytes, not the base64 text's
    expect(a.input!.bytes).toBe(JSON.stringify({ instances: rows }).length);
    expect(a.inferenceTime).toBe('2026-12-01T08:24:40Z');
    expect(a.output).toBeUndefined();
  });

  test('a body SageMaker could not type stays text; broken lines and bodies are skipped', () => {
    expect(decodeRecord(record(b64('application/octet-stream', 'abc')))!.input!.body).toBe('abc');
    expect(decodeRecord('not json')).toBeUndefined();
    expect(decodeRecord('   ')).toBeUndefined();
    expect(decodeRecord('{"other": 1}')).toBeUndefined();
    expect(decodeRecord(record({ type: 'application/json', data: '{broken', encoding: 'JSON' }))!.input).toBeUndefined();
    expect(decodeRecord(record({ type: 'x', data: 'a', encoding: 'GZIP' }))!.input).toBeUndefined();
    expect(parseCsv('a,1\r\n\r\n2, x ')).toEqual([
      ['a', 1],
      [2, 'x'],
    ]);
  });

  test('selectors', () => {
    const body = { events: [4, 8, 15], profile: [0.1, 0.2], 'user-id': 'u1', nested: { rows: [[1], [2, 3]] } };
    expect(select(body, parseSelector('$.events.length()'))).toEqual([3]);
    expect(select(body, parseSelector('$.profile[*]'))).toEqual([0.1, 0.2]);
    expect(select(body, parseSelector('$.profile[1]'))).toEqual([0.2]);
    expect(select(body, parseSelector("$['user-id']"))).toEqual(['u1']);
    expect(select(body, parseSelector('$.nested.rows[*][1]'))).toEqual([3]);
    expect(select(body, parseSelector('$.missing[*]'))).toEqual([]);
    expect(select(body, parseSelector('$.events[9]'))).toEqual([]);
    expect(select([[1, 2], [3]], parseSelector('$.length()'))).toEqual([2]);
    expect(() => parseSelector('events')).toThrow(/starts with '\$'/);
    expect(() => parseSelector('$.a[x]')).toThrow(/position 3/);
  });

  test('CSV rows counted without parsing a cell: the same count as parsing them, on any text', () => {
    fc.assert(
      fc.property(
        fc
          // The ASCII controls below tab are not blank (trim keeps them): a line of them is a row.
          .array(fc.constantFrom('1', ',', ' ', '\t', '\r', '\n', 'x', '-2.5', 'é', '\u00a0', '\u2028', '\ufeff', '\v', '\f', '😀', '\u0000', '\b'))
          .map(a => a.join('')),
        text => {
          expect(csvRows(text)).toBe(parseCsv(text).length);
          // In its UTF-8 bytes (a base64 body), and as the decoded side counts it, the same.
          expect(csvRowsOfBytes(Buffer.from(text))).toBe(parseCsv(text).length);
          expect((decodeRecord(record(b64('text/csv', text)))!.input as CsvSide).rows).toBe(parseCsv(text).length);
          expect((decodeRecord(record({ type: 'text/csv', data: text, encoding: 'CSV' }))!.input as CsvSide).rows).toBe(parseCsv(text).length);
        },
      ),
      { numRuns: 500 },
    );
    expect(csvRows('1,2\r\n\r\n  \n3,4')).toBe(2);
    // A first line that is empty ends at once: the rows after it are each their own.
    expect([csvRows('\n1\n2'), csvRowsOfBytes(Buffer.from('\n1\n2'))]).toEqual([2, 2]);
    // An empty cell stays empty (not the 0 that Number('') reads).
    expect(parseCsv('1,,2')).toEqual([[1, '', 2]]);
    // A CSV side counts its rows and parses its cells on first use.
    const side = decodeRecord(record(b64('text/csv', '1,2\n3,4\n')))!.input!;
    expect([side.format, (side as CsvSide).rows, side.body]).toEqual([
      'csv',
      2,
      [
        [1, 2],
        [3, 4],
      ],
    ]);
  });

  test('the layout: one prefix per variant and UTC hour, zero-padded; windows end at a whole hour', () => {
    expect(hourPrefix('/data-capture/', 'rec', 'Primary', new Date('2026-03-04T05:59:00Z'))).toBe('data-capture/rec/Primary/2026/03/04/05/');
    expect(hourPrefix('', 'rec', 'AllTraffic', new Date('2026-12-31T23:00:00Z'))).toBe('rec/AllTraffic/2026/12/31/23/');
    const hours = windowHours(new Date('2026-12-01T05:00:00Z'), new Date('2026-12-02T05:00:00Z'));
    expect(hours).toHaveLength(24);
    expect(hours[0].toISOString()).toBe('2026-12-01T05:00:00.000Z');
    expect(hours[23].toISOString()).toBe('2026-12-02T04:00:00.000Z');
  });
});

// ---- the function against a fake bucket served through the SDK (test/drift-s3.ts) ----
const s3mock = mockClient(S3Client);
const store = new Map<string, Buffer>();
const serve = () => serveBucket(s3mock, store);

const NOW = new Date('2026-12-02T05:54:07Z');
const put = (key: string, lines: string[]) => store.set(key, Buffer.from(lines.join('\n') + '\n'));
/** Clustering requests of 4 rows each, x and y from the given values, answers with clusters. */
function clusteringLines(xs: number[], ys: number[], clusters: number[], encoding: 'json' | 'csv' | 'b64'): string[] {
  const lines: string[] = [];
  for (let i = 0; i < xs.length; i += 4) {
    const rows = xs.slice(i, i + 4).map((x, k) => [x, ys[i + k]]);
    const input =
      encoding === 'json' ? json({ instances: rows }) : encoding === 'csv' ? csv(rows) : b64('application/json', JSON.stringify({ instances: rows }));
    lines.push(record(input, json({ clusters: clusters.slice(i, i + 4), rows: rows.length })));
  }
  return lines;
}

const CONFIG: DriftFunctionConfig = {
  endpointName: 'clustering',
  bucket: BUCKET,
  prefix: 'data-capture',
  variants: [],
  features: [
    { name: 'x', selector: '$.instances[*][0]', csvSelector: '$[*][0]', kind: 'numeric', side: 'input' },
    { name: 'y', selector: '$.instances[*][1]', csvSelector: '$[*][1]', kind: 'numeric', side: 'input' },
    { name: 'cluster', selector: '$.clusters[*]', kind: 'categorical', side: 'output' },
    { name: 'requestBytes', selector: BYTES_SELECTOR, kind: 'numeric', side: 'input' },
  ],
  modelVersion: 's3://models/clustering/model.tar.gz',
  baselineUri: 's3://baselines/clustering/v1.json',
  learnedPrefix: 'drift-baselines/clustering',
  learn: true,
  normalisation: 'std',
  smoothing: 0.5,
  sampleSize: 100000,
  maxObjects: 1000,
};

describe('a run over the capture', () => {
  const logs: any[] = [];
  const ctx = (over: Partial<Parameters<typeof runDrift>[2]> = {}) => ({
    s3: new S3Client({}),
    now: NOW,
    remainingMs: () => 600_000,
    log: (o: object) => logs.push(o),
    ...over,
  });
  const emf = (metric: string, feature: string) => logs.find(l => l._aws && l.Feature === feature && metric in l)?.[metric];

  beforeEach(() => {
    store.clear();
    logs.length = 0;
    serve();
    // The baseline file: x ~ σ 1 around 0, y ~ σ 2 around 5, clusters 50/50, from "training data".
    const base = {
      format: 1,
      modelVersion: CONFIG.modelVersion,
      source: 'training data',
      createdAt: '2026-11-30T00:00:00Z',
      features: {
        x: numericBaseline(spread(0, 1, 4000)),
        y: numericBaseline(spread(5, 2, 4000)),
        cluster: { kind: 'categorical', count: 1000, categories: { 0: 500, 1: 500 } },
      },
    };
    store.set('__other_bucket__', Buffer.from('')); // unrelated
    store.set('clustering/v1.json', Buffer.from(JSON.stringify(base)));
  });

  test('x shifted by 0.3 σ reads 0.3, y unchanged reads ~0, cluster shares 70/30 read 0.2; JSON, CSV and BASE64 objects alike', async () => {
    const n = 1200;
    const xs = spread(0.3, 1, n);
    const ys = spread(5, 2, n);
    const clusters = Array.from({ length: n }, (_, i) => (i % 10 < 7 ? 0 : 1));
    // Three variants' objects in three encodings, spread over hours of the window (07 Dec 1 … 04 Dec 2).
    const third = n / 3;
    put(
      'data-capture/clustering/Primary/2026/12/01/07/a.jsonl',
      clusteringLines(xs.slice(0, third), ys.slice(0, third), clusters.slice(0, third), 'json'),
    );
    put(
      'data-capture/clustering/Primary/2026/12/02/04/b.jsonl',
      clusteringLines(xs.slice(third, 2 * third), ys.slice(third, 2 * third), clusters.slice(third, 2 * third), 'csv'),
    );
    put(
      'data-capture/clustering/Fallback/2026/12/01/23/c.jsonl',
      clusteringLines(xs.slice(2 * third), ys.slice(2 * third), clusters.slice(2 * third), 'b64'),
    );
    // Outside the window (the current hour, and before it): a huge shift that must not be read.
    put(
      'data-capture/clustering/Primary/2026/12/02/05/late.jsonl',
      clusteringLines(spread(100, 1, 400), spread(100, 1, 400), Array(400).fill(1), 'json'),
    );
    put(
      'data-capture/clustering/Primary/2026/11/25/05/early.jsonl',
      clusteringLines(spread(100, 1, 400), spread(100, 1, 400), Array(400).fill(1), 'json'),
    );
    put('data-capture/clustering/Primary/2026/12/01/07/notes.txt', ['not capture']);

    const w = await runDrift({ distance: 'wasserstein', windowHours: 24 }, CONFIG, ctx());
    expect(w.objects).toBe(3);
    expect(w.records).toBe(n / 4);
    expect(w.distances.x).toBeCloseTo(0.3, 2);
    expect(w.distances.y).toBeLessThan(0.01);
    expect(w.distances.cluster).toBeCloseTo(0.2, 6); // |0.7 − 0.5|
    expect(emf('WassersteinDistance', 'x')).toBeCloseTo(0.3, 2);
    expect(emf('ShareShift', 'cluster')).toBeCloseTo(0.2, 6);
    expect(logs.find(l => l.Distance === 'wasserstein').DriftRecords).toBe(300);
    // requestBytes had no baseline in the file: learned from this window, stored under the model's hash.
    expect(w.learned).toBe(true);
    expect(w.distances.requestBytes).toBeUndefined();
    const learned = JSON.parse(store.get(`drift-baselines/clustering/${modelHash(CONFIG.modelVersion)}.json`)!.toString());
    expect(Object.keys(learned.features)).toEqual(['requestBytes']);
    expect(learned.modelVersion).toBe(CONFIG.modelVersion);

    const k = await runDrift({ distance: 'kl', windowHours: 24 }, CONFIG, ctx());
    // Categorical KL of 70/30 against 50/50 with 0.5 pseudo-counts on 3 bins (0, 1, other):
    // p = (840.5, 360.5, 0.5)/1201.5, q = (500.5, 500.5, 0.5)/1001.5 — hand-computed 0.0823
    expect(k.distances.cluster).toBeCloseTo(0.0823, 3);
    expect(k.distances.x).toBeGreaterThan(0.02); // a 0.3 σ shift moves decile mass
    expect(k.distances.y).toBeLessThan(0.01);
    expect(k.distances.requestBytes).toBeLessThan(0.01); // now compared with the learned baseline: the same window
    expect(k.learned).toBe(false);
    expect(k.baselineSources.requestBytes).toMatch(/drift-baselines\/clustering\/[0-9a-f]{16}\.json$/);
    expect(emf('KLDivergence', 'cluster')).toBeCloseTo(0.0823, 3);
  });

  test('no data: DriftRecords 0 is still published (doctor reads it), no distance', async () => {
    const r = await runDrift({ distance: 'kl', windowHours: 24 }, CONFIG, ctx());
    expect(r.records).toBe(0);
    expect(r.learned).toBe(false);
    expect(logs.find(l => 'DriftRecords' in l).DriftRecords).toBe(0);
    expect(logs.filter(l => l.Feature)).toHaveLength(0);
  });

  test('bounded work: objects past maxObjects, or when time runs short, are skipped and counted', async () => {
    for (let h = 0; h < 5; h++)
      put(`data-capture/clustering/Primary/2026/12/01/1${h}/x.jsonl`, clusteringLines([1, 2, 3, 4], [1, 2, 3, 4], [0, 0, 1, 1], 'json'));
    const r = await runDrift({ distance: 'kl', windowHours: 24 }, { ...CONFIG, maxObjects: 2 }, ctx());
    expect([r.objects, r.skippedObjects]).toEqual([2, 3]);
    let left = TIME_RESERVE_MS; // the first object is opened with exactly the reserve left, the next not
    const t = await runDrift({ distance: 'kl', windowHours: 24 }, CONFIG, ctx({ remainingMs: () => left-- }));
    expect([t.objects, t.skippedObjects]).toEqual([1, 4]);
  });

  test('the request size against the memory profile (incident A: 15 % longer sequences)', async () => {
    // Sequence lengths at the profile's exact quantiles × 1.15, as the recommender's JSON requests.
    const q = (u: number) => 1 / (u / 3000 + (1 - u) / 5); // powerlaw:5:3000, α = 1
    const lengths = Array.from({ length: 2000 }, (_, i) => Math.round(1.15 * q((i + 0.5) / 2000)));
    put(
      'data-capture/rec/AllTraffic/2026/12/01/12/a.jsonl',
      lengths.map(len => record(json({ events: Array(len).fill(7), profile: Array(20).fill(0.1) }))),
    );
    const config: DriftFunctionConfig = {
      ...CONFIG,
      endpointName: 'rec',
      baselineUri: '',
      learn: false,
      features: [{ name: 'sequenceLength', selector: '$.events.length()', kind: 'numeric', side: 'input', profileBaseline: true, logScale: true }],
      sizeProfile: { distribution: 'powerlaw:5:3000', p50: 11, p99: 444, p999: 2801, min: 5, max: 2835 },
    };
    const k = await runDrift({ distance: 'kl', windowHours: 24 }, config, ctx());
    expect(k.baselineSources.sequenceLength).toBe('memory profile (powerlaw:5:3000)');
    // 15 % longer moves requests across the profile's decile edges: measurable, below the 0.3 alarm.
    expect(k.distances.sequenceLength).toBeGreaterThan(0.02);
    expect(k.distances.sequenceLength).toBeLessThan(0.3);
    // On the log scale a 15 % growth is a shift of ln 1.15 = 0.1398; ln(size/5) of powerlaw:5:3000 (α = 1) is an
    // exponential truncated at ln 600, σ = 0.965 (closed form): 0.1398 / 0.965 = 0.1448, at incident B's 0.15.
    const w = await runDrift({ distance: 'wasserstein', windowHours: 24 }, config, ctx());
    expect(Math.abs(w.distances.sequenceLength! - 0.1448)).toBeLessThan(0.01);
    const same = Array.from({ length: 2000 }, (_, i) => Math.round(q((i + 0.5) / 2000)));
    store.clear();
    put(
      'data-capture/rec/AllTraffic/2026/12/01/12/a.jsonl',
      same.map(len => record(json({ events: Array(len).fill(7) }))),
    );
    const k0 = await runDrift({ distance: 'kl', windowHours: 24 }, config, ctx());
    expect(k0.distances.sequenceLength!).toBeLessThan(0.005);
    const w0 = await runDrift({ distance: 'wasserstein', windowHours: 24 }, config, ctx());
    expect(w0.distances.sequenceLength!).toBeLessThan(0.02);
  });

  test('like with like in the function: only a feature marked for it is compared with the profile; the others learn', async () => {
    const q = (u: number) => 1 / (u / 3000 + (1 - u) / 5); // powerlaw:5:3000, α = 1
    put(
      'data-capture/rec/AllTraffic/2026/12/01/12/a.jsonl',
      Array.from({ length: 800 }, (_, i) => record(json({ events: Array(Math.round(q((i + 0.5) / 800))).fill(7), profile: Array(20).fill(0.1) }))),
    );
    const config: DriftFunctionConfig = {
      ...CONFIG,
      endpointName: 'rec',
      baselineUri: '',
      learnedPrefix: 'drift-baselines/rec',
      features: [
        { name: 'RequestSize', selector: '$.events.length()', kind: 'numeric', side: 'input', profileBaseline: true, logScale: true },
        { name: 'RequestBytes', selector: BYTES_SELECTOR, kind: 'numeric', side: 'input', logScale: true },
      ],
      sizeProfile: { distribution: 'powerlaw:5:3000', p50: 11, p99: 444, p999: 2801, min: 5, max: 3000 },
    };
    const first = await runDrift({ distance: 'kl', windowHours: 24 }, config, ctx());
    // The bytes are not the profile's unit: learned from this window (so not compared in it, nor a source yet).
    expect(first.baselineSources).toEqual({ RequestSize: 'memory profile (powerlaw:5:3000)' });
    expect(first.missingBaselines).toEqual(['RequestBytes']);
    expect(first.baselines).toEqual({
      RequestSize: { source: 'memory-profile', from: 'powerlaw:5:3000' },
      RequestBytes: {
        source: 'learned',
        from: expect.stringMatching(/^s3:\/\/capture-bucket\/drift-baselines\/rec\//),
        createdAt: NOW.toISOString(),
        learnedNow: true,
      },
    });
    expect(first.distances.RequestSize).toBeLessThan(0.01);
    // The run's summary line: its window and what it saw.
    expect(logs.at(-1)).toMatchObject({
      component: 'drift',
      window: { start: '2026-12-01T05:00:00.000Z', end: '2026-12-02T05:00:00.000Z' },
      records: 800,
      missingBaselines: ['RequestBytes'],
    });
    // The run status, as JSON.
    const put1 = s3mock
      .commandCalls(PutObjectCommand)
      .map(c => c.args[0].input)
      .find(i => i.Key === 'drift-baselines/rec/status.json')!;
    expect([put1.ContentType, JSON.parse(put1.Body as string).features.RequestBytes.learnedNow]).toEqual(['application/json', true]);
    // A profile of recorded requests (no powerlaw description): its percentiles, named as such.
    const recorded = await runDrift(
      { distance: 'kl', windowHours: 24 },
      { ...config, learn: false, sizeProfile: { ...config.sizeProfile!, distribution: '' } },
      ctx(),
    );
    expect(recorded.baselineSources.RequestSize).toBe('memory profile (P50/P99/P99.9)');
    expect(recorded.baselines.RequestSize).toEqual({ source: 'memory-profile', from: 'P50/P99/P99.9' });
    expect(recorded.baselines.RequestBytes).toEqual({ source: 'none' });
  });

  test('a run status that cannot be written costs the report, not the run (its metrics are out)', async () => {
    put('data-capture/clustering/Primary/2026/12/01/07/a.jsonl', clusteringLines([1, 2, 3, 4], [1, 2, 3, 4], [0, 0, 1, 1], 'json'));
    s3mock.on(PutObjectCommand).callsFake(input => {
      if (String(input.Key).endsWith('status.json')) throw Object.assign(new Error('Access Denied'), { name: 'AccessDenied' });
      store.set(input.Key!, Buffer.from(input.Body as string));
      return {};
    });
    const r = await runDrift({ distance: 'kl', windowHours: 24 }, CONFIG, ctx());
    expect(r.records).toBe(1);
    expect(logs.some(l => 'DriftRecords' in l)).toBe(true);
    expect(logs.at(-1)).toEqual({ component: 'drift', warning: 'could not write the run status: AccessDenied: Access Denied' });
  });

  test('a bad or missing baseline file fails the run loudly', async () => {
    store.set('clustering/v1.json', Buffer.from(JSON.stringify({ format: 2, features: {} })));
    await expect(runDrift({ distance: 'kl', windowHours: 24 }, CONFIG, ctx())).rejects.toThrow(/not usable: format 2 is not 1/);
    store.delete('clustering/v1.json');
    await expect(runDrift({ distance: 'kl', windowHours: 24 }, CONFIG, ctx())).rejects.toThrow(/does not exist/);
    await expect(runDrift({ distance: 'kl', windowHours: 24 }, { ...CONFIG, baselineUri: 'https://x' }, ctx())).rejects.toThrow(
      /not s3:\/\/bucket\/key/,
    );
  });

  test('the entry point: configuration from the environment, the rule input checked', async () => {
    expect(() => parseInput({ distance: 'euclid', windowHours: 1 })).toThrow(/expected/);
    expect(() => parseInput({ distance: 'kl', windowHours: 0 })).toThrow(/expected/);
    expect(parseInput({ distance: 'kl', windowHours: 24.5 })).toEqual({ distance: 'kl', windowHours: 24 });
    process.env[DRIFT_CONFIG_ENV] = JSON.stringify({ ...CONFIG, baselineUri: '', learn: false });
    const spy = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const r = await handler({ distance: 'kl', windowHours: 24 }, { getRemainingTimeInMillis: () => 600_000 });
      expect(r.records).toBe(0);
      expect(spy.mock.calls.some(c => String(c[0]).includes('"DriftRecords":0'))).toBe(true);
    } finally {
      spy.mockRestore();
      delete process.env[DRIFT_CONFIG_ENV];
    }
  });

  test('helpers', () => {
    expect(parseS3Uri('s3://b/k/x.json')).toEqual({ bucket: 'b', key: 'k/x.json' });
    expect(parseS3Uri('s3://b')).toBeUndefined();
    expect(modelHash('a')).toBe('ca978112ca1bbdca'); // SHA-256("a")
    expect(
      featureDistance('wasserstein', { sample: [], categories: {} }, numericBaseline([1, 2])!, { normalisation: 'std', smoothing: 0.5 }),
    ).toBeUndefined();
  });
});
