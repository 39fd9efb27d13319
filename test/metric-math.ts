// Evaluates a synthesized alarm's metric-math expression the way CloudWatch does for one period, on
// the statistics of the metrics it uses: the subset the library's alarms use (IF, AND, OR, FILL with a
// number, PERIOD, comparisons, + − × ÷, numbers, metric ids, ids of other expressions). No datapoint is NaN:
// an IF without a false value whose condition is false, and a division by zero (CloudWatch's metric math:
// "If the value of a data point causes a function to attempt to divide by zero, the data point is dropped"). Values are CloudWatch's
// per-period statistics (e.g. the 5-minute Sum of InvocationModelErrors), so an alarm is judged on data
// shaped as CloudWatch aggregates it; a metric left out of `values` has no datapoint in the period (only
// FILL can use it).

/** One `AWS::CloudWatch::Alarm`'s `Metrics` entries, as synthesized. */
interface AlarmMetric {
  Id: string;
  Expression?: string;
  MetricStat?: { Metric: { MetricName: string }; Stat: string; Period: number };
  ReturnData?: boolean;
}

/**
 * The value of the alarm's returned expression for one period, given each metric's statistic by metric
 * name (`{ Invocations: 1000, ... }`). Throws on an expression outside the subset.
 */
export function evaluateAlarm(metrics: AlarmMetric[], values: Record<string, number>): number {
  return evaluate(metrics, values, metrics.find(m => m.Expression && m.ReturnData !== false)!.Expression!);
}

function evaluate(metrics: AlarmMetric[], values: Record<string, number>, expr: string): number {
  const byId = new Map(metrics.filter(m => m.MetricStat).map(m => [m.Id, values[m.MetricStat!.Metric.MetricName]]));
  const expressions = new Map(metrics.filter(m => m.Expression).map(m => [m.Id, m.Expression!]));
  const tokens = expr.match(/[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|>=|<=|[-+*/(),<>]/g) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const next = () => tokens[i++];
  const expect = (t: string) => {
    if (next() !== t) throw new Error(`expected ${t} in ${expr}`);
  };
  const primary = (): number => {
    const t = next();
    if (t === '(') {
      const v = or();
      expect(')');
      return v;
    }
    if (t === 'IF') {
      expect('(');
      const c = or();
      expect(',');
      const a = or();
      let b = NaN; // "is an empty time series … if scalar3/metric3 is omitted from the expression"
      if (peek() === ',') {
        next();
        b = or();
      }
      expect(')');
      return c ? a : b;
    }
    if (t === 'FILL') {
      expect('(');
      const id = next();
      expect(',');
      const filler = or();
      expect(')');
      const v = byId.get(id);
      return v === undefined ? filler : v;
    }
    if (t === 'PERIOD') {
      expect('(');
      const id = next();
      expect(')');
      const m = metrics.find(x => x.Id === id && x.MetricStat);
      if (!m) throw new Error(`PERIOD of ${id}: not a metric of ${expr}`);
      return m.MetricStat!.Period;
    }
    if (t === '-') return -primary();
    if (/^\d/.test(t)) return Number(t);
    if (byId.has(t)) {
      const v = byId.get(t);
      if (v === undefined) throw new Error(`no value for metric ${t} outside FILL`);
      return v;
    }
    if (expressions.has(t)) return evaluate(metrics, values, expressions.get(t)!);
    throw new Error(`unsupported token ${t} in ${expr}`);
  };
  const term = (): number => {
    let v = primary();
    while (peek() === '*' || peek() === '/') {
      if (next() === '*') v *= primary();
      else {
        const d = primary();
        v = d === 0 ? NaN : v / d;
      }
    }
    return v;
  };
  const sum = (): number => {
    let v = term();
    while (peek() === '+' || peek() === '-') v = next() === '+' ? v + term() : v - term();
    return v;
  };
  const compare = (): number => {
    const a = sum();
    const op = peek();
    if (!['>', '<', '>=', '<='].includes(op)) return a;
    next();
    const b = sum();
    return Number(op === '>' ? a > b : op === '<' ? a < b : op === '>=' ? a >= b : a <= b);
  };
  const and = (): number => {
    let v = compare();
    while (peek() === 'AND') {
      next();
      v = Number(compare() && v);
    }
    return v;
  };
  const or = (): number => {
    let v = and();
    while (peek() === 'OR') {
      next();
      v = Number(and() || v);
    }
    return v;
  };
  const v = or();
  if (i !== tokens.length) throw new Error(`trailing tokens in ${expr}`);
  return v;
}
