// Baselines that last: the capture bucket's lifecycle as synthesized, applied to a bucket the drift function
// writes to (S3's rule semantics: a rule with a prefix filter expires only the keys under it, one without a
// filter every key), across months; a run without a baseline says so (a metric, an alarm, the run status);
// the learned baselines' place, grants and the warning on a capture bucket whose own rule would expire them.
import { S3Client } from '@aws-sdk/client-s3';
import { Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { runDrift } from '../lambda/drift/run';
import { ContainerImage, DriftFeatures, DriftMonitor, ResilientEndpoint, SageMakerInstanceType } from '../lib';
import { DRIFT_CONFIG_ENV, DriftFunctionConfig, driftStatusKey } from '../lib/drift/contract';
import { BUCKET, json, record, serveBucket } from './drift-s3';
import { newStack, synthError, warnings } from './util';

const IMAGE = ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1');
const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 5); // a Monday

/** The endpoint with `drift: {}` (no memory profile: the bytes, learned), its template and the function's configuration. */
function endpoint(id: string, dataCapture = {}) {
  const { app, stack } = newStack(id);
  const e = new ResilientEndpoint(stack, 'E', {
    endpointName: 'rec',
    model: { image: IMAGE },
    instanceType: SageMakerInstanceType.ML_M5_XLARGE,
    instanceCount: 2,
    dataCapture,
    drift: {},
  });
  return { app, stack, e };
}
const t = (() => {
  const { stack } = endpoint('Baselines');
  return Template.fromStack(stack);
})();
function functionConfig(): DriftFunctionConfig {
  const fn = Object.values(t.findResources('AWS::Lambda::Function')).find((f: any) => f.Properties.Environment?.Variables?.[DRIFT_CONFIG_ENV]) as any;
  const parts: unknown[] = fn.Properties.Environment.Variables[DRIFT_CONFIG_ENV]['Fn::Join'][1];
  return JSON.parse(parts.map(p => (typeof p === 'string' ? p : JSON.stringify(p).includes('Bucket') ? BUCKET : 'rec-model-1')).join(''));
}
/** The capture bucket's lifecycle rules as synthesized. */
const captureRules = (tpl: Template) =>
  (Object.values(tpl.findResources('AWS::S3::Bucket')).find((b: any) => b.Properties.LoggingConfiguration) as any).Properties.LifecycleConfiguration
    .Rules;

// ---- a bucket with S3's lifecycle semantics ----
const s3mock = mockClient(S3Client);
const store = new Map<string, Buffer>();
const written = new Map<string, number>(); // key → when it was last written (ms)
let clock = START;
function serve(): void {
  serveBucket(s3mock, store);
}
/** Puts an object as SageMaker would, stamped with the clock. */
function put(key: string, body: string): void {
  store.set(key, Buffer.from(body));
  written.set(key, clock);
}
/**
 * Applies lifecycle rules as S3 does (S3 user guide, "Lifecycle configuration elements": a rule's Filter
 * or legacy Prefix limits it to keys with that prefix, no filter applies it to every object; Expiration Days
 * counts from the object's creation), at the clock's time.
 */
function expire(rules: any[]): void {
  for (const key of [...store.keys()]) {
    const at = written.get(key) ?? clock;
    for (const r of rules) {
      const prefix: string = r.Prefix ?? r.Filter?.Prefix ?? '';
      if (r.Status === 'Enabled' && key.startsWith(prefix) && r.ExpirationInDays !== undefined && clock - at >= r.ExpirationInDays * DAY) {
        store.delete(key);
        written.delete(key);
      }
    }
  }
}
/** A day of capture: recommender requests of the given sequence lengths, in the window the next run reads. */
function day(lengths: number[]): void {
  const d = new Date(clock);
  const p = (n: number) => String(n).padStart(2, '0');
  const key = `data-capture/rec/Primary/${d.getUTCFullYear()}/${p(d.getUTCMonth() + 1)}/${p(d.getUTCDate())}/06/part.jsonl`;
  put(key, lengths.map(n => record(json({ events: Array(n).fill(7), profile: Array(20).fill(0.1) }))).join('\n') + '\n');
}
/** The function, as the daily rule runs it at 03:00 the next day; the S3 writes it makes are stamped. */
async function run(config: DriftFunctionConfig, distance: 'kl' | 'wasserstein' = 'kl') {
  const logs: any[] = [];
  const before = new Set(store.keys());
  const r = await runDrift({ distance, windowHours: 24 }, config, {
    s3: new S3Client({}),
    now: new Date(clock + DAY + 3 * 3_600_000),
    remainingMs: () => 600_000,
    log: o => logs.push(o),
    random: () => 0.5,
  });
  for (const k of store.keys()) if (!before.has(k) || k.endsWith('status.json') || k.endsWith('.json')) written.set(k, written.get(k) ?? clock);
  return { r, logs };
}
const lengths = (scale: number) =>
  Array.from({ length: 400 }, (_, i) => Math.max(1, Math.round((scale * 1) / ((i + 0.5) / 400 / 3000 + (1 - (i + 0.5) / 400) / 5))));

beforeEach(() => {
  store.clear();
  written.clear();
  clock = START;
  serve();
});

describe('the capture expires, the learned baselines stay', () => {
  test('the capture bucket expires only its prefix: one rule, filtered', () => {
    const rules = captureRules(t);
    expect(rules).toEqual([{ Id: 'ExpireCapture', Prefix: 'data-capture/', ExpirationInDays: 30, Status: 'Enabled' }]);
    expect(functionConfig().learnedPrefix).toBe('drift-baselines/rec'); // not under data-capture/
  });

  test('slow drift over months is measured against the first week, not absorbed every 30 days', async () => {
    const config = functionConfig();
    const rules = captureRules(t);
    // Day 1 after deployment: the baseline is learned.
    day(lengths(1));
    const first = await run(config);
    expect(first.r.learned).toBe(true);
    const learnedKey = [...store.keys()].find(k => /^drift-baselines\/rec\/[0-9a-f]{16}\.json$/.test(k))!;
    expect(learnedKey).toBeDefined();
    // Then the inputs grow 15 % over 90 days (incident A's mobile clients, slowly); the lifecycle runs daily.
    const seen: number[] = [];
    for (let d = 1; d <= 90; d++) {
      clock = START + d * DAY;
      expire(rules);
      day(lengths(1 + (0.15 * d) / 90));
      if (d % 30 === 0) {
        const { r } = await run(config, 'wasserstein');
        expect([d, r.learned, r.missingBaselines]).toEqual([d, false, []]);
        expect(r.baselineSources.RequestBytes).toBe(`s3://${BUCKET}/${learnedKey}`);
        seen.push(r.distances.RequestBytes!);
      }
    }
    // The capture older than 30 days is gone; the baseline learned on day 1 is not.
    expect([...store.keys()].filter(k => k.startsWith('data-capture/')).length).toBeLessThanOrEqual(31);
    expect(store.has(learnedKey)).toBe(true);
    expect(JSON.parse(store.get(learnedKey)!.toString()).createdAt).toBe(new Date(START + DAY + 3 * 3_600_000).toISOString());
    // So the growth accumulates: each month reads further from the first week, three months' growth two
    // and three times one month's (a baseline expired and re-learned every 30 days reads one month's at most).
    // Measured: 0.042, 0.072, 0.100 (the bytes grow less than the sequences: the profile's part is fixed).
    expect(seen[0]).toBeGreaterThan(0.02);
    expect(seen[1] / seen[0]).toBeGreaterThan(1.5);
    expect(seen[2] / seen[0]).toBeGreaterThan(2.2);
  });
});

describe('a run without its baseline says so', () => {
  test('DriftBaselineMissing: the features compared with nothing, published on every run with the records, 0 included', async () => {
    const config = functionConfig();
    day(lengths(1));
    const learning = await run(config);
    const line = (logs: any[]) => logs.find(l => l._aws && 'DriftBaselineMissing' in l);
    expect(line(learning.logs)).toMatchObject({ EndpointName: 'rec', Distance: 'kl', DriftRecords: 400, DriftBaselineMissing: 1 });
    expect(line(learning.logs)._aws.CloudWatchMetrics[0]).toEqual({
      Namespace: 'ResilientEndpoint/Drift',
      Dimensions: [['EndpointName', 'Distance']],
      Metrics: [
        { Name: 'DriftRecords', Unit: 'Count' },
        { Name: 'DriftBaselineMissing', Unit: 'Count' },
      ],
    });
    clock += DAY;
    day(lengths(1));
    expect(line((await run(config)).logs)).toMatchObject({ DriftBaselineMissing: 0 });
    // A learned baseline deleted (a lifecycle rule on the whole bucket, as the capture bucket had): no data
    // yet to learn from → it says so instead of publishing nothing.
    for (const k of [...store.keys()]) store.delete(k);
    clock += DAY;
    const empty = await run(config);
    expect(line(empty.logs)).toMatchObject({ DriftRecords: 0, DriftBaselineMissing: 1 });
    expect(empty.logs.filter(l => l.Feature)).toEqual([]);
  });

  test('the run status beside the baselines: each feature’s source and age, for doctor', async () => {
    const config = { ...functionConfig(), baselineUri: 's3://training/rec/baseline.json', features: [...functionConfig().features] };
    store.set(
      'rec/baseline.json',
      Buffer.from(JSON.stringify({ format: 1, modelVersion: 'any', source: 'training data', createdAt: '2025-12-01T00:00:00Z', features: {} })),
    );
    // The file's bucket is another bucket in reality; the fake serves every bucket from one store.
    day(lengths(1));
    await run(config);
    const status = JSON.parse(store.get(driftStatusKey('rec'))!.toString());
    expect(status).toMatchObject({ format: 1, endpointName: 'rec', modelVersion: 'rec-model-1', distance: 'kl', records: 400 });
    expect(status.features.RequestBytes).toEqual({
      source: 'learned',
      from: expect.stringMatching(/^s3:\/\/capture-bucket\/drift-baselines\/rec\/[0-9a-f]{16}\.json$/),
      createdAt: status.at,
      learnedNow: true,
    });
    clock += DAY;
    day(lengths(1));
    await run(config);
    const next = JSON.parse(store.get(driftStatusKey('rec'))!.toString());
    expect(next.features.RequestBytes).toEqual({ source: 'learned', from: status.features.RequestBytes.from, createdAt: status.at });
  });

  test('the alarm: two daily runs in a row without a baseline, in the drift tier; a dashboard line', () => {
    const alarm = Object.values(t.findResources('AWS::CloudWatch::Alarm'))
      .map((a: any) => a.Properties)
      .find(a => a.AlarmName === 'rec-drift-baseline-missing');
    expect(alarm).toMatchObject({
      Namespace: 'ResilientEndpoint/Drift',
      MetricName: 'DriftBaselineMissing',
      Dimensions: [
        { Name: 'Distance', Value: 'kl' },
        { Name: 'EndpointName', Value: 'rec' },
      ],
      Statistic: 'Maximum',
      Period: 86400,
      EvaluationPeriods: 2,
      DatapointsToAlarm: 2,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    const tier = Object.values(t.findResources('AWS::CloudWatch::CompositeAlarm')).find((c: any) => c.Properties.AlarmName === 'rec-drift') as any;
    expect(JSON.stringify(tier.Properties.AlarmRule)).toContain('BaselineMissing');
    expect(JSON.stringify(t.findResources('AWS::CloudWatch::Dashboard'))).toContain('DriftBaselineMissing');
  });
});

describe("a capture bucket of the app's own whose rule would expire the baselines", () => {
  const alone = (rules: s3.LifecycleRule[]) => {
    const { app, stack } = newStack('OwnBucket');
    const bucket = new s3.Bucket(stack, 'Capture', { lifecycleRules: rules, enforceSSL: true });
    new DriftMonitor(stack, 'D', { endpointName: 'rec', captureBucket: bucket, capturePrefix: 'capture', features: [DriftFeatures.requestBytes()] });
    return { app, stack };
  };

  test('a rule on every object: a warning naming the rule and the fix', () => {
    const { app, stack } = alone([{ id: 'All', expiration: Duration.days(30) }]);
    expect(synthError(app)).toBe('');
    expect(warnings(stack).join('\n')).toMatch(
      /the capture bucket's lifecycle rule 'All' expires every object, the learned drift baselines \(drift-baselines\/rec\/\) included.*Fix: filter the rule to the capture prefix/,
    );
  });

  test('a rule on the capture prefix, or one that only moves objects: no warning', () => {
    const quiet = (rules: s3.LifecycleRule[]) => warnings(alone(rules).stack).filter(w => /RE-DriftBaselineExpiry|learned drift baselines/.test(w));
    expect(quiet([{ prefix: 'capture/', expiration: Duration.days(30) }])).toEqual([]);
    expect(quiet([{ prefix: 'drift', expiration: Duration.days(30) }])).toHaveLength(1); // 'drift' is a prefix of 'drift-baselines/'
    expect(quiet([{ abortIncompleteMultipartUploadAfter: Duration.days(7) }])).toEqual([]);
    expect(quiet([{ expiration: Duration.days(30), enabled: false }])).toEqual([]);
  });

  test('the bucket ResilientEndpoint creates, with a retention of its own: no warning', () => {
    const { stack } = endpoint('Retention', { retention: Duration.days(7) });
    expect(warnings(stack).filter(w => /learned drift baselines/.test(w))).toEqual([]);
    expect(captureRules(Template.fromStack(stack))).toEqual([
      { Id: 'ExpireCapture', Prefix: 'data-capture/', ExpirationInDays: 7, Status: 'Enabled' },
    ]);
  });
});
