/**
 * The breaker's state in DynamoDB (one item per endpoint, versioned for compare-and-swap) and the level
 * published in SSM for the container.
 */
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetParameterCommand } from '@aws-sdk/client-ssm';
import { CapacityPlan } from '../../lib/breaker/policy';
import { Clients, HandlerSettings } from './settings';

/** The DynamoDB item: the breaker state, its version (for compare-and-swap), the capacity settings last applied. */
export interface StoredItem {
  readonly version: number;
  readonly raw?: string;
  readonly capacity?: CapacityPlan;
}

/** The state item's key: one item per endpoint (a fleet's endpoints share a table). */
export const keyOf = (s: HandlerSettings) => ({ pk: { S: s.stateKey ?? 'breaker' } });

export async function readItem(s: HandlerSettings, c: Clients): Promise<StoredItem> {
  const out = await c.dynamodb.send(new GetItemCommand({ TableName: s.tableName, Key: keyOf(s), ConsistentRead: true }));
  return itemFrom(out.Item);
}

export function itemFrom(it: Record<string, any> | undefined): StoredItem {
  if (!it) return { version: 0 };
  let capacity: CapacityPlan | undefined;
  try {
    capacity = it.capacity?.S ? JSON.parse(it.capacity.S) : undefined;
  } catch {
    capacity = undefined;
  }
  return { version: Number(it.version?.N ?? '0') || 0, raw: it.state?.S, capacity };
}

/** Conditional write of version + 1; false when another evaluation wrote first. */
export async function writeItem(s: HandlerSettings, c: Clients, version: number, state: string, capacity?: CapacityPlan): Promise<boolean> {
  try {
    await c.dynamodb.send(
      new PutItemCommand({
        TableName: s.tableName,
        Item: {
          ...keyOf(s),
          version: { N: String(version + 1) },
          state: { S: state },
          ...(capacity ? { capacity: { S: JSON.stringify(capacity) } } : {}),
        },
        ConditionExpression: version === 0 ? 'attribute_not_exists(pk)' : 'version = :v',
        ExpressionAttributeValues: version === 0 ? undefined : { ':v': { N: String(version) } },
      }),
    );
    return true;
  } catch (e: any) {
    if (e?.name === 'ConditionalCheckFailedException') return false;
    throw e;
  }
}

export async function readPublished(s: HandlerSettings, c: Clients): Promise<{ level?: number; state?: string } | undefined> {
  try {
    return publishedFrom((await c.ssm.send(new GetParameterCommand({ Name: s.parameterName }))).Parameter?.Value);
  } catch (e: any) {
    if (e?.name === 'ParameterNotFound') return undefined;
    throw e;
  }
}

export function publishedFrom(raw: string | undefined): { level?: number; state?: string } | undefined {
  try {
    const o = raw ? JSON.parse(raw) : undefined;
    return o && typeof o === 'object' ? { level: o.level, state: o.state } : undefined;
  } catch {
    return undefined;
  }
}
