// doctor's drift check against CloudWatch-shaped answers (ListMetrics, GetMetricData with hourly
// buckets, newest first): the runs published in their window, or not, or read nothing.
import { CloudWatchClient, GetMetricDataCommand, ListMetricsCommand } from '@aws-sdk/client-cloudwatch';
import { mockClient } from 'aws-sdk-client-mock';
import { OpsClients } from '../bin/ops/aws';
import { driftRuns } from '../bin/ops/drift-check';

const cw = mockClient(CloudWatchClient);
const c = { cloudwatch: new CloudWatchClient({}) } as unknown as OpsClients;
const NOW = Date.parse('2026-12-02T06:30:00Z');
const listed = {
  Metrics: [
    {
      Namespace: 'ResilientEndpoint/Drift',
      MetricName: 'DriftRecords',
      Dimensions: [
        { Name: 'EndpointName', Value: 'clu' },
        { Name: 'Distance', Value: 'kl' },
      ],
    },
  ],
};
const result = (id: string, points: [string, number][]) => ({
  Id: id,
  Label: 'DriftRecords',
  StatusCode: 'Complete' as const,
  Timestamps: points.map(p => new Date(p[0])),
  Values: points.map(p => p[1]),
});

beforeEach(() => cw.reset());

test('no drift metric: SKIP (drift off)', async () => {
  cw.on(ListMetricsCommand).resolves({ Metrics: [] });
  const r = await driftRuns(c, 'clu', NOW);
  expect(r).toEqual([expect.objectContaining({ id: 'drift-runs', result: 'SKIP' })]);
  expect(cw.commandCalls(ListMetricsCommand)[0].args[0].input).toMatchObject({
    Namespace: 'ResilientEndpoint/Drift',
    MetricName: 'DriftRecords',
    Dimensions: [{ Name: 'EndpointName', Value: 'clu' }],
  });
});

test("both runs in their windows: PASS with the records read; the query asks for the last 170 hours' hourly sums", async () => {
  cw.on(ListMetricsCommand).resolves(listed);
  cw.on(GetMetricDataCommand).resolves({
    MetricDataResults: [result('kl', [['2026-12-02T03:00:00Z', 1200]]), result('wasserstein', [['2026-11-30T03:00:00Z', 8400]])],
  });
  const r = await driftRuns(c, 'clu', NOW);
  expect(r.map(x => [x.id, x.result])).toEqual([
    ['drift-runs-kl', 'PASS'],
    ['drift-runs-wasserstein', 'PASS'],
  ]);
  expect(r[1].saw).toMatch(/read 8400 captured records in the last 170 hours/);
  const input = cw.commandCalls(GetMetricDataCommand)[0].args[0].input;
  expect(input.StartTime).toEqual(new Date(NOW - 170 * 3_600_000));
  expect(input.MetricDataQueries![0].MetricStat).toMatchObject({ Period: 3600, Stat: 'Sum' });
  expect(input.MetricDataQueries![0].MetricStat!.Metric!.Dimensions).toEqual([
    { Name: 'EndpointName', Value: 'clu' },
    { Name: 'Distance', Value: 'kl' },
  ]);
});

test('a daily run older than 26 hours: FAIL; a run that read nothing: WARN', async () => {
  cw.on(ListMetricsCommand).resolves(listed);
  cw.on(GetMetricDataCommand).resolves({
    MetricDataResults: [result('kl', [['2026-12-01T03:00:00Z', 500]]), result('wasserstein', [['2026-11-30T03:00:00Z', 0]])],
  });
  const r = await driftRuns(c, 'clu', NOW);
  expect(r.map(x => [x.id, x.result])).toEqual([
    ['drift-runs-kl', 'FAIL'],
    ['drift-runs-wasserstein', 'WARN'],
  ]);
  expect(r[0].saw).toBe('the daily KL run published nothing in the last 26 hours');
  expect(r[0].fix).toMatch(/dead-letter queue/);
  // 27.5 hours before NOW is outside; 25.5 hours before is inside.
  cw.on(GetMetricDataCommand).resolves({ MetricDataResults: [result('kl', [['2026-12-01T05:00:00Z', 1]]), result('wasserstein', [])] });
  expect((await driftRuns(c, 'clu', NOW)).map(x => x.result)).toEqual(['PASS', 'FAIL']);
});
