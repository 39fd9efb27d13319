// Shared by the drift tests: capture records as SageMaker writes them, and a capture bucket served through
// the AWS SDK by aws-sdk-client-mock (ListObjectsV2 pages with continuation tokens and delimiters, real
// streams split mid-line as bodies, the SDK's own NoSuchKey for a missing key).
import { Readable } from 'stream';
import { GetObjectCommand, ListObjectsV2Command, NoSuchKey, PutObjectCommand } from '@aws-sdk/client-s3';
import { AwsStub } from 'aws-sdk-client-mock';

/** One side of a captured invocation: its observed content type, data and encoding. */
export interface CapturedSide {
  readonly type: string;
  readonly data: string;
  readonly encoding: string;
}

/** A capture record as SageMaker writes it (developer guide, "View captured data"). */
export function record(input: CapturedSide, output?: CapturedSide): string {
  const side = (mode: string, s: CapturedSide) => ({ observedContentType: s.type, mode, data: s.data, encoding: s.encoding });
  return JSON.stringify({
    captureData: { endpointInput: side('INPUT', input), ...(output ? { endpointOutput: side('OUTPUT', output) } : {}) },
    eventMetadata: { eventId: '3ff4e0f6-2a8a-4b8b-9e1d-0b5e7a1c2d3e', inferenceTime: '2026-12-01T08:24:40Z' },
    eventVersion: '0',
  });
}
/** A JSON body as captured for a content type listed in CaptureContentTypeHeader.JsonContentTypes. */
export const json = (o: unknown): CapturedSide => ({ type: 'application/json', data: JSON.stringify(o), encoding: 'JSON' });
/** CSV rows as captured for a content type listed in CsvContentTypes. */
export const csv = (rows: number[][]): CapturedSide => ({ type: 'text/csv', data: rows.map(r => r.join(',')).join('\n'), encoding: 'CSV' });
/** A body of a content type not listed: base64 ("If no headers are specified SageMaker will by default base64 encode"). */
export const b64 = (type: string, text: string): CapturedSide => ({ type, data: Buffer.from(text).toString('base64'), encoding: 'BASE64' });

/** The fake bucket's name. */
export const BUCKET = 'capture-bucket';
/** Small pages: every listing goes through continuation tokens. */
const PAGE = 2;

/** Serves `store` (key → object) to every S3Client through the mock. */
export function serveBucket(s3mock: AwsStub<any, any, any>, store: Map<string, Buffer>): void {
  s3mock.reset();
  s3mock.on(ListObjectsV2Command).callsFake((input: any) => {
    const prefix = input.Prefix ?? '';
    const keys = [...store.keys()].filter(k => k.startsWith(prefix)).sort();
    if (input.Delimiter) {
      const folders = [
        ...new Set(
          keys
            .map(k => k.slice(prefix.length))
            .filter(r => r.includes(input.Delimiter))
            .map(r => prefix + r.split(input.Delimiter)[0] + input.Delimiter),
        ),
      ];
      return { CommonPrefixes: folders.map(Prefix => ({ Prefix })), KeyCount: folders.length, IsTruncated: false };
    }
    const start = input.ContinuationToken ? Number(input.ContinuationToken) : 0;
    const page = keys.slice(start, start + PAGE);
    const more = start + PAGE < keys.length;
    return {
      Contents: page.map(Key => ({ Key, Size: store.get(Key)!.length })),
      KeyCount: page.length,
      IsTruncated: more,
      NextContinuationToken: more ? String(start + PAGE) : undefined,
    };
  });
  s3mock.on(GetObjectCommand).callsFake((input: any) => {
    const body = store.get(input.Key);
    if (!body) throw new NoSuchKey({ message: 'The specified key does not exist.', $metadata: { httpStatusCode: 404 } });
    return { Body: Readable.from([body.subarray(0, 7), body.subarray(7)]), ContentLength: body.length }; // chunks split mid-line
  });
  s3mock.on(PutObjectCommand).callsFake((input: any) => {
    store.set(input.Key, Buffer.from(input.Body as string));
    return { ETag: '"x"' };
  });
}
