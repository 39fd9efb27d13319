// docs/breaker.md says what the breaker is made of: its cost paragraph's counts (high-resolution alarms,
// the metric-math alarm's metrics, metrics read per evaluation, on GPU and CPU types) and its IAM sentence
// (every action the breaker's role is granted on SageMaker, CloudWatch and Application Auto Scaling, and the
// wildcard resources) are read from the synthesized breaker, not restated. One stack, three endpoints.
import * as fs from 'fs';
import * as path from 'path';
import { App, Stack } from 'aws-cdk-lib';
import { metricQueries } from '../lambda/circuit-breaker/metrics';
import { settingsFromEnv } from '../lambda/circuit-breaker/settings';
import { ContainerImage, ResilientEndpoint, SageMakerInstanceType } from '../lib';
import { BREAKER_ALARM_MARK } from '../lib/breaker/contract';
import { deployedValue } from './util';

const doc = fs.readFileSync(path.join(__dirname, '..', 'docs', 'breaker.md'), 'utf8');
const paragraph = (start: string) => {
  const from = doc.indexOf(start);
  expect(from).toBeGreaterThanOrEqual(0);
  return doc.slice(from, doc.indexOf('\n', from));
};
const number = (text: string, re: RegExp): number[] => {
  const m = re.exec(text);
  if (!m) throw new Error(`docs/breaker.md: nothing matches ${re} in: ${text}`);
  return m.slice(1).map(Number);
};

/** The breaker of each endpoint: its alarms and the metrics one evaluation reads. */
interface Breaker {
  readonly highResolution: number;
  readonly math: number[];
  readonly insights: number;
  readonly metricsPerEvaluation: number;
  readonly perGpuQuery: boolean;
}
let breakers: Record<'cpu' | 'gpu' | 'multiGpu', Breaker>;
let statements: any[];

beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Cost', { env: { account: '123456789012', region: 'us-east-1' } });
  const image = ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/model:1');
  const types = { cpu: SageMakerInstanceType.ML_M5_XLARGE, gpu: SageMakerInstanceType.ML_G5_XLARGE, multiGpu: SageMakerInstanceType.ML_G5_12XLARGE };
  for (const [name, instanceType] of Object.entries(types))
    new ResilientEndpoint(stack, name, { endpointName: name, model: { image }, instanceType });
  const resources = Object.entries<any>(app.synth().getStackByName('Cost').template.Resources);
  const deployed = (v: unknown) => deployedValue(v, { ref: id => `<${id}>`, getAtt: id => `<${id}>` });
  breakers = Object.fromEntries(
    Object.keys(types).map(name => {
      const alarms = resources
        .map(([, r]) => r)
        .filter(
          r =>
            r.Type === 'AWS::CloudWatch::Alarm' &&
            String(r.Properties.AlarmName).startsWith(`${name}-`) &&
            r.Properties.AlarmName.includes(BREAKER_ALARM_MARK),
        )
        .map(r => r.Properties);
      const expressions = (a: any) => (a.Metrics ?? []).filter((m: any) => m.Expression);
      const insights = alarms.filter(a => expressions(a).some((m: any) => /^SELECT /.test(m.Expression)));
      const math = alarms.filter(a => expressions(a).length && !insights.includes(a));
      const fn = resources.find(([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.ENDPOINT_NAME === name)![1];
      const env = Object.fromEntries(Object.entries<unknown>(fn.Properties.Environment.Variables).map(([k, v]) => [k, deployed(v)]));
      const settings = settingsFromEnv(env);
      return [
        name,
        {
          highResolution: alarms.filter(a => a.Period !== undefined && a.Period < 60).length,
          math: math.map(a => a.Metrics.filter((m: any) => m.MetricStat).length),
          insights: insights.length,
          metricsPerEvaluation: metricQueries(settings, '').length,
          perGpuQuery: settings.perGpuMetrics && settings.gpuCount > 1,
        },
      ];
    }),
  ) as typeof breakers;
  statements = resources
    .filter(([id, r]) => r.Type === 'AWS::IAM::Policy' && id.startsWith('gpuCircuitBreaker'))
    .flatMap(([, r]) => r.Properties.PolicyDocument.Statement);
});

describe("docs/breaker.md's cost paragraph is the synthesized breaker's", () => {
  const cost = () => paragraph('**Cost per month**');

  test('metrics per evaluation: GPU and CPU types (and the per-GPU query on multi-GPU types)', () => {
    const [gpu, cpu] = number(cost(), /GetMetricData ≈ \*\*(\d+) metrics per evaluation on GPU types \((\d+) on CPU types\)\*\*/);
    expect({
      gpu: breakers.gpu.metricsPerEvaluation,
      multiGpu: breakers.multiGpu.metricsPerEvaluation,
      cpu: breakers.cpu.metricsPerEvaluation,
    }).toEqual({ gpu, multiGpu: gpu, cpu });
    expect([breakers.gpu.perGpuQuery, breakers.multiGpu.perGpuQuery]).toEqual([false, true]);
    expect(cost()).toContain('plus the per-GPU Metrics Insights query on multi-GPU types');
    // The dollars follow: metrics × 44,000 evaluations × $0.01 per 1,000.
    const [gpuUsd, cpuUsd] = number(cost(), /× 44,000 × \$0\.01\/1,000 ≈ \$(\d+\.\d) \(\$(\d+\.\d)\)/);
    expect([gpuUsd, cpuUsd]).toEqual([gpu, cpu].map(n => Math.round(n * 0.44 * 10) / 10));
  });

  test('high-resolution (10-s) alarms, the metric-math alarm and its metrics, the Metrics Insights alarm', () => {
    const [gpu, cpu] = number(cost(), /\*\*(\d+) high-resolution alarms \(10-s periods: [^;]*; (\d+) on CPU types\)\*\*/);
    expect({ gpu: breakers.gpu.highResolution, multiGpu: breakers.multiGpu.highResolution, cpu: breakers.cpu.highResolution }).toEqual({
      gpu,
      multiGpu: gpu,
      cpu,
    });
    const [alarms, metrics] = number(cost(), /\*\*(\d+) metric-math alarm over (\d+) metrics\*\*/);
    for (const b of Object.values(breakers)) expect(b.math).toEqual(Array(alarms).fill(metrics));
    expect([breakers.cpu.insights, breakers.gpu.insights, breakers.multiGpu.insights]).toEqual([0, 0, 1]);
    expect(cost()).toContain('plus the hottest-GPU Metrics Insights alarm on multi-GPU types');
    const [hiUsd, hiCpuUsd] = number(cost(), /high-resolution alarms[^*]*\*\* × \$0\.30 ≈ \$(\d+\.\d) \(\$(\d+\.\d)\)/);
    expect([hiUsd, hiCpuUsd]).toEqual([gpu * 0.3, cpu * 0.3].map(x => Math.round(x * 10) / 10));
    const [mathUsd] = number(cost(), /over \d+ metrics\*\* \([^)]*\) × \$0\.10 ≈ \$(\d+\.\d)/);
    expect(mathUsd).toBeCloseTo(alarms * metrics * 0.1, 5);
  });

  test('the totals add up', () => {
    const [lambda] = number(cost(), /≈ \$(\d+\.\d+) of Lambda/);
    const [ddb] = number(cost(), /a few writes ≈ \$(\d+\.\d+)/);
    const [metricsGpu, metricsCpu] = number(cost(), /≈ \$(\d+\.\d) \(\$(\d+\.\d)\), plus the per-GPU/);
    const [hiGpu, hiCpu] = number(cost(), /× \$0\.30 ≈ \$(\d+\.\d) \(\$(\d+\.\d)\)/);
    const [math] = number(cost(), /× \$0\.10 ≈ \$(\d+\.\d)/);
    const [gpuTotal, cpuTotal] = number(cost(), /\*\*≈ \$(\d+\.\d) per endpoint on GPU types, \$(\d+\.\d) on CPU types\*\*/);
    expect([lambda, ddb]).toEqual([0.06, 0.02]);
    expect(gpuTotal).toBeCloseTo(lambda + metricsGpu + hiGpu + math + ddb, 1);
    expect(cpuTotal).toBeCloseTo(lambda + metricsCpu + hiCpu + math + ddb, 1);
  });
});

test("docs/breaker.md's IAM sentence names every SageMaker, CloudWatch and Application Auto Scaling action of the breaker's role, and its wildcard resources", () => {
  const iam = paragraph('Wiring:');
  const text = iam.slice(iam.indexOf('IAM:'));
  const granted = statements.flatMap(s => [s.Action].flat().map((a: string) => ({ action: a, resource: JSON.stringify(s.Resource) })));
  const relevant = granted.filter(g => /^(sagemaker|cloudwatch|application-autoscaling):/.test(g.action));
  expect(relevant.map(g => g.action)).toEqual(expect.arrayContaining(['sagemaker:DescribeEndpointConfig', 'cloudwatch:DescribeAlarms']));
  for (const g of relevant) expect([g.action, text.includes(g.action.split(':')[1])]).toEqual([g.action, true]);
  // The wildcard resources, by their distinctive part.
  for (const [pattern, words] of [
    [/endpoint-config\/\*/, '`endpoint-config/*`'],
    [/alarm:TargetTracking\*/, '`alarm:TargetTracking*`'],
  ] as const) {
    expect(relevant.some(g => pattern.test(g.resource))).toBe(true);
    expect(text).toContain(words);
  }
  expect(text).not.toMatch(/SageMaker actions on this endpoint's ARN only/);
});
