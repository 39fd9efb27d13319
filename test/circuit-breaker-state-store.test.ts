/**
 * Reading back what DynamoDB and Parameter Store hold, in the shapes their APIs return (GetItem's
 * attribute-value map, GetParameter's string): a missing or damaged attribute reads as "nothing
 * stored" (the evaluation then rewrites it), never as an exception or a wrong version.
 */
import { ConditionalCheckFailedException, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { createClients } from '../lambda/circuit-breaker/settings';
import { itemFrom, publishedFrom, readItem, readPublished, writeItem } from '../lambda/circuit-breaker/state-store';
import { breakerSettings } from './breaker-settings';

describe('the state item (GetItem Item)', () => {
  test('no item: version 0, nothing stored', () => {
    expect(itemFrom(undefined)).toEqual({ version: 0, raw: undefined, capacity: undefined });
  });

  test('a complete item: its version, state and capacity', () => {
    const it = { pk: { S: 'breaker' }, version: { N: '7' }, state: { S: '{"state":"CLOSED"}' }, capacity: { S: '{"suspendPrimaryScaleIn":true}' } };
    expect(itemFrom(it)).toEqual({ version: 7, raw: '{"state":"CLOSED"}', capacity: { suspendPrimaryScaleIn: true } });
  });

  test('an item without version, state or capacity attributes (written by hand, or by an older release)', () => {
    expect(itemFrom({ pk: { S: 'breaker' } })).toEqual({ version: 0, raw: undefined, capacity: undefined });
    expect(itemFrom({ pk: { S: 'breaker' }, version: {}, state: {}, capacity: {} })).toEqual({ version: 0, raw: undefined, capacity: undefined });
  });

  test('a damaged capacity record is dropped (the plan is reapplied), the rest kept', () => {
    expect(itemFrom({ version: { N: '3' }, state: { S: 'x' }, capacity: { S: '{not json' } })).toEqual({ version: 3, raw: 'x', capacity: undefined });
  });

  test('a version that is not a number reads as 0', () => {
    expect(itemFrom({ version: { N: 'abc' } }).version).toBe(0);
  });
});

describe('the published level (GetParameter Value)', () => {
  test('the level and state the breaker wrote', () => {
    expect(publishedFrom('{"level":1,"state":"DEGRADED","since":5}')).toEqual({ level: 1, state: 'DEGRADED' });
  });

  test.each([
    ['no value', undefined],
    ['an empty value', ''],
    ['not JSON (a hand edit)', 'level=1'],
    ['JSON null', 'null'],
    ['a bare number', '1'],
    ['a string', '"DEGRADED"'],
  ])('%s reads as nothing published', (_, raw) => {
    expect(publishedFrom(raw)).toBeUndefined();
  });
});

describe('the reads and the conditional write, against the errors the services raise', () => {
  const ssm = mockClient(SSMClient);
  const ddb = mockClient(DynamoDBClient);
  const settings = breakerSettings('rec');
  const clients = createClients(1);
  const meta = { $metadata: {} };
  afterEach(() => {
    ssm.reset();
    ddb.reset();
  });

  test('the level parameter not created yet (ParameterNotFound) reads as nothing published; other errors are raised', async () => {
    ssm.on(GetParameterCommand, { Name: settings.parameterName }).rejects(new ParameterNotFound({ message: 'not found', ...meta }));
    await expect(readPublished(settings, clients)).resolves.toBeUndefined();
    ssm.reset();
    ssm.on(GetParameterCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    await expect(readPublished(settings, clients)).rejects.toThrow('Rate exceeded');
  });

  test('it reads its own parameter', async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Name: 'other', Value: '{"level":2,"state":"OPEN"}' } });
    ssm
      .on(GetParameterCommand, { Name: settings.parameterName })
      .resolves({ Parameter: { Name: settings.parameterName, Value: '{"level":1,"state":"DEGRADED"}' } });
    await expect(readPublished(settings, clients)).resolves.toEqual({ level: 1, state: 'DEGRADED' });
    ssm.reset();
    ssm.on(GetParameterCommand).resolves({});
    await expect(readPublished(settings, clients)).resolves.toBeUndefined();
  });

  test('the state item is read strongly consistent (the version the write is conditioned on must be the latest)', async () => {
    ddb.on(GetItemCommand).resolves({ Item: { version: { N: '4' } } });
    await expect(readItem(settings, clients)).resolves.toMatchObject({ version: 4 });
    expect(ddb.commandCalls(GetItemCommand)[0].args[0].input).toMatchObject({ TableName: settings.tableName, ConsistentRead: true });
  });

  test('a lost race (ConditionalCheckFailedException) is false; any other error is raised', async () => {
    ddb.on(PutItemCommand).rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', ...meta }));
    await expect(writeItem(settings, clients, 3, '{}')).resolves.toBe(false);
    ddb.reset();
    ddb
      .on(PutItemCommand)
      .rejects(Object.assign(new Error('Throughput exceeds the current capacity'), { name: 'ProvisionedThroughputExceededException' }));
    await expect(writeItem(settings, clients, 3, '{}')).rejects.toThrow('Throughput exceeds');
    ddb.reset();
    ddb.on(PutItemCommand).resolves({});
    await expect(writeItem(settings, clients, 3, '{}')).resolves.toBe(true);
  });
});
