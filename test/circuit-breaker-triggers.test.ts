/**
 * Which events start an evaluation (`isTrigger`), on the shapes EventBridge delivers: each condition of
 * each shape on its own, so an event that matches only part of one (the right source with another
 * detail-type, or a detail without the name the breaker needs) is never taken for a trigger.
 */
import { isTrigger } from '../lambda/circuit-breaker/evaluate';

const schedule = {
  version: '0',
  source: 'aws.events',
  'detail-type': 'Scheduled Event',
  resources: ['arn:aws:events:us-east-1:123456789012:rule/r'],
  detail: {},
};
const alarm = {
  version: '0',
  source: 'aws.cloudwatch',
  'detail-type': 'CloudWatch Alarm State Change',
  detail: { alarmName: 'rec-Primary-breaker-HostMemory', state: { value: 'ALARM' }, previousState: { value: 'OK' } },
};
const endpointState = {
  version: '0',
  source: 'aws.sagemaker',
  'detail-type': 'SageMaker Endpoint State Change',
  detail: { EndpointName: 'rec', EndpointStatus: 'IN_SERVICE' },
};
const deploymentState = { ...endpointState, 'detail-type': 'SageMaker Endpoint Deployment State Change' };

test.each([
  ['its schedule', schedule],
  ['an alarm state change', alarm],
  ['an endpoint state change', endpointState],
  ['an endpoint deployment state change (capacity updates)', deploymentState],
])('%s triggers an evaluation', (_, event) => {
  expect(isTrigger(event)).toBe(true);
});

test.each([
  ['nothing', undefined],
  ['a string', 'Scheduled Event'],
  ['a schedule-like detail-type from another source', { ...schedule, source: 'aws.s3' }],
  ['another aws.events detail-type', { ...schedule, 'detail-type': 'Object Created' }],
  ['an alarm detail-type from another source', { ...alarm, source: 'aws.events' }],
  ['another aws.cloudwatch detail-type', { ...alarm, 'detail-type': 'CloudWatch Alarm Configuration Change' }],
  ['an alarm change without an alarm name', { ...alarm, detail: { state: { value: 'ALARM' } } }],
  ['an alarm change without a detail', { source: alarm.source, 'detail-type': alarm['detail-type'] }],
  ['an endpoint detail-type from another source', { ...endpointState, source: 'aws.events' }],
  ['a SageMaker event of another kind', { ...endpointState, 'detail-type': 'SageMaker Training Job State Change' }],
  ['an endpoint change without an endpoint name', { ...endpointState, detail: { EndpointStatus: 'IN_SERVICE' } }],
  ['an endpoint change without a detail', { source: endpointState.source, 'detail-type': endpointState['detail-type'] }],
])('%s does not', (_, event) => {
  expect(isTrigger(event)).toBe(false);
});
