import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';

/** One alarm, as the monitoring tiers and the circuit breaker describe theirs. */
export interface AlarmSpec {
  /** Construct id of the alarm under its scope. */
  readonly id: string;
  /** The alarm's name: every alarm here starts with `<endpointName>-` (the alarm topic's policy matches that prefix). */
  readonly alarmName: string;
  readonly description: string;
  /** The metric, with no unit (a unit filter makes an alarm on SageMaker's unit-less data INSUFFICIENT_DATA forever). */
  readonly metric: cloudwatch.IMetric;
  readonly threshold: number;
  /** @default GREATER_THAN_OR_EQUAL_TO_THRESHOLD */
  readonly comparison?: cloudwatch.ComparisonOperator;
  /** @default 1 */
  readonly evaluationPeriods?: number;
  /** @default evaluationPeriods */
  readonly datapointsToAlarm?: number;
  /** What a period without data counts as (no default: every caller decides). */
  readonly treatMissingData: cloudwatch.TreatMissingData;
}

/** The one place alarms are made. */
export function createAlarm(scope: Construct, spec: AlarmSpec): cloudwatch.Alarm {
  const periods = spec.evaluationPeriods ?? 1;
  return new cloudwatch.Alarm(scope, spec.id, {
    alarmName: spec.alarmName,
    alarmDescription: spec.description,
    metric: spec.metric,
    threshold: spec.threshold,
    comparisonOperator: spec.comparison ?? cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: periods,
    datapointsToAlarm: spec.datapointsToAlarm ?? periods,
    treatMissingData: spec.treatMissingData,
  });
}
