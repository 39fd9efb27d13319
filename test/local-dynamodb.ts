// A DynamoDB that evaluates ConditionExpression as AWS does (dynalite, in-process on 127.0.0.1), for the
// breaker's compare-and-swap: a stale `version = :v` write gets ConditionalCheckFailedException from the
// engine, not from a fake that re-states the handler's expectation.
import {
  AttributeValue,
  CreateTableCommand,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import type { AddressInfo } from 'net';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- dynalite ships no types
const dynalite = require('dynalite') as (o: object) => import('http').Server;

type Item = Record<string, AttributeValue>;

export class LocalDynamoDb {
  /** Starts a server with one table (partition key `pk`, as the breaker's state table; names of 3–255 characters, as AWS checks). */
  public static async start(tableName = 'state'): Promise<LocalDynamoDb> {
    const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    const db = new LocalDynamoDb(server, tableName);
    await db.createTable().catch(async e => {
      await db.stop();
      throw e;
    });
    return db;
  }

  private async createTable(): Promise<void> {
    await this.client.send(
      new CreateTableCommand({
        TableName: this.tableName,
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  }

  /** A client of this server (one attempt: a retried conditional write would hide what happened). */
  public readonly client: DynamoDBClient;
  /** The server's URL, for a client in another process (e.g. as its AWS_ENDPOINT_URL_DYNAMODB). */
  public readonly endpoint: string;
  /** Command names the client sent, in order (e.g. 'PutItemCommand'). */
  public readonly calls: string[] = [];

  private constructor(
    private readonly server: import('http').Server,
    public readonly tableName: string,
  ) {
    const { port } = server.address() as AddressInfo;
    this.endpoint = `http://127.0.0.1:${port}`;
    this.client = new DynamoDBClient({
      endpoint: this.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    this.client.middlewareStack.add(
      (next, context) => async args => {
        this.calls.push(String(context.commandName));
        return next(args);
      },
      { step: 'initialize', name: 'recordCalls' },
    );
  }

  /** The item with this key, as GetItem returns it (consistent read). */
  public async get(pk: string): Promise<Item | undefined> {
    return (await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: { pk: { S: pk } }, ConsistentRead: true }))).Item;
  }

  /** Writes an item unconditionally (a state a previous evaluation left). */
  public async put(item: Item): Promise<void> {
    await this.client.send(new PutItemCommand({ TableName: this.tableName, Item: item }));
  }

  /** Deletes every item and forgets the recorded calls. */
  public async clear(): Promise<void> {
    const items = (await this.client.send(new ScanCommand({ TableName: this.tableName }))).Items ?? [];
    for (const it of items) await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: { pk: it.pk } }));
    this.calls.length = 0;
  }

  /**
   * A client that answers like this one but holds every call after the first GetItem until `resume()`:
   * an evaluation that has read the state, and writes only after another evaluation has acted.
   */
  public pausedAfterRead(): { client: DynamoDBClient; read: Promise<void>; resume: () => void } {
    let resume!: () => void;
    let signalRead!: () => void;
    const resumed = new Promise<void>(r => (resume = r));
    const read = new Promise<void>(r => (signalRead = r));
    const real = this.client;
    const client = {
      send: async (command: { constructor: { name: string } }) => {
        const out = await real.send(command as never);
        if (command.constructor.name === 'GetItemCommand' || command.constructor.name === 'BatchGetItemCommand') {
          signalRead();
          await resumed;
        }
        return out;
      },
    } as unknown as DynamoDBClient;
    return { client, read, resume };
  }

  public async stop(): Promise<void> {
    this.client.destroy();
    await new Promise<void>(resolve => this.server.close(() => resolve()));
  }
}
