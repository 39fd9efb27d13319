/**
 * Reading SageMaker's data capture, pure: the object layout, one JSON Lines record, its body in each
 * encoding, and the feature selectors. The layout and the record are SageMaker's (developer guide,
 * "Capture data from real-time endpoint" → "View captured data", model-monitor-data-capture-endpoint):
 * objects at `s3://<bucket>/<prefix>/<endpoint-name>/<variant-name>/yyyy/mm/dd/hh/<file>.jsonl`, one
 * record per line:
 *
 *     {"captureData": {"endpointInput": {"observedContentType": "text/csv", "mode": "INPUT",
 *       "data": "69,0,153.7", "encoding": "CSV"}, "endpointOutput": {…, "encoding": "CSV"}},
 *      "eventMetadata": {"eventId": "…", "inferenceTime": "2026-12-01T08:24:40Z"}, "eventVersion": "0"}
 *
 * `encoding` is JSON or CSV for the content types listed in the endpoint config's
 * `CaptureContentTypeHeader`, and BASE64 for every other ("If no headers are specified SageMaker will
 * by default base64 encode when capturing the data": API reference, CaptureContentTypeHeader).
 */

/** Which side of the invocation a feature is read from. */
export enum CaptureSide {
  /** The request (`endpointInput`). */
  INPUT = 'input',
  /** The response (`endpointOutput`): e.g. the cluster a request was assigned to. */
  OUTPUT = 'output',
}

/** The key prefix of one hour of one variant's capture: `<prefix>/<endpoint>/<variant>/yyyy/mm/dd/hh/`. */
export function hourPrefix(prefix: string, endpointName: string, variantName: string, hour: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const base = [prefix.replace(/^\/+|\/+$/g, ''), endpointName, variantName].filter(s => s.length > 0).join('/');
  return `${base}/${hour.getUTCFullYear()}/${p(hour.getUTCMonth() + 1)}/${p(hour.getUTCDate())}/${p(hour.getUTCHours())}/`;
}

/** The UTC hours whose capture folders cover [start, end): from start's hour to the hour before end (end exclusive). */
export function windowHours(start: Date, end: Date): Date[] {
  const hours: Date[] = [];
  const t = new Date(start.getTime());
  t.setUTCMinutes(0, 0, 0);
  for (; t.getTime() < end.getTime(); t.setUTCHours(t.getUTCHours() + 1)) hours.push(new Date(t.getTime()));
  return hours;
}

/** A parsed body: JSON as parsed, CSV as rows of cells (numbers where a cell is one), anything else as text. */
export type Body = unknown;

/** One side of a record, decoded. */
export interface DecodedSide {
  /** The parsed body (a CSV body is parsed on first use: its row count needs no cells, `csvRows`). */
  readonly body: Body;
  /** The body's size in bytes, as the client sent it (after base64 decoding). */
  readonly bytes: number;
  /** How the body was read: CSV bodies are rows of cells, whatever their encoding. */
  readonly format: 'json' | 'csv' | 'text';
}

/** One record's input and output, decoded (undefined: the side was not captured or not readable). */
export interface DecodedRecord {
  readonly input?: DecodedSide;
  readonly output?: DecodedSide;
  /** `eventMetadata.inferenceTime`, when present. */
  readonly inferenceTime?: string;
}

/** Space, tab, vertical tab, form feed, CR (and LF): the ASCII that `String.prototype.trim` removes. */
const blankAscii = (c: number) => c === 32 || (c >= 9 && c <= 13);

/**
 * The rows of CSV text (its non-blank lines, blank as `trim` reads it) without parsing a cell: what
 * `parseCsv(text).length` is.
 */
export function csvRows(text: string): number {
  let rows = 0;
  for (let start = 0; start < text.length;) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    let i = start;
    while (i < end && blankAscii(text.charCodeAt(i))) i++;
    // The first other character: ASCII is a row; beyond it, Unicode's blanks (a no-break space…) are not.
    if (i < end && (text.charCodeAt(i) < 128 || text.slice(i, end).trim().length > 0)) rows++;
    start = end + 1;
  }
  return rows;
}

/**
 * `csvRows` of the UTF-8 bytes of a text, counted in the bytes (a base64 body as decoded, no text made): the
 * same count, since every byte of a multi-byte character is 128 or more.
 */
export function csvRowsOfBytes(bytes: Buffer): number {
  let rows = 0;
  for (let start = 0; start < bytes.length;) {
    let end = bytes.indexOf(10, start);
    if (end < 0) end = bytes.length;
    let i = start;
    while (i < end && blankAscii(bytes[i])) i++;
    if (i < end && (bytes[i] < 128 || bytes.toString('utf8', i, end).trim().length > 0)) rows++;
    start = end + 1;
  }
  return rows;
}

/** A CSV side whose rows are counted without parsing a cell (`$.length()`, the default size selector's). */
export interface CsvSide extends DecodedSide {
  readonly format: 'csv';
  /** Its rows (non-blank lines), counted on first use from its text or its bytes. */
  readonly rows: number;
}

/**
 * A CSV side: its text (or, base64, its bytes) kept; its rows counted and its cells parsed only when asked
 * (counting rows needs no cell, and for a base64 body no text).
 */
function csvSide(source: string | Buffer, bytes: number): CsvSide {
  let cells: unknown[][] | undefined;
  let rows: number | undefined;
  const text = () => (typeof source === 'string' ? source : source.toString('utf8'));
  return {
    format: 'csv',
    bytes,
    get rows() {
      return (rows ??= typeof source === 'string' ? csvRows(source) : csvRowsOfBytes(source));
    },
    get body() {
      return (cells ??= parseCsv(text()));
    },
  };
}

/** CSV text as rows of cells; a cell that is a number becomes one. */
export function parseCsv(text: string): unknown[][] {
  return text
    .split(/\r?\n/)
    .filter(line => line.trim().length > 0)
    .map(line =>
      line.split(',').map(cell => {
        const c = cell.trim();
        const n = Number(c);
        return c.length > 0 && Number.isFinite(n) ? n : c;
      }),
    );
}

/** The format of a content type: JSON for `…json…`, CSV for `…csv…`, text otherwise. */
export function formatOf(contentType: string | undefined): DecodedSide['format'] {
  const type = (contentType ?? '').toLowerCase();
  if (type.includes('json')) return 'json';
  if (type.includes('csv')) return 'csv';
  return 'text';
}

/** Parses decoded text in its format. */
export function parseAs(text: string, format: DecodedSide['format']): Body {
  if (format === 'json') return JSON.parse(text);
  if (format === 'csv') return parseCsv(text);
  return text;
}

/** One side (`endpointInput` / `endpointOutput`) decoded by its `encoding`; undefined when it cannot be. */
export function decodeSide(side: any): DecodedSide | undefined {
  if (!side || typeof side !== 'object' || side.data === undefined || side.data === null) return undefined;
  const encoding = String(side.encoding ?? '').toUpperCase();
  try {
    if (encoding === 'BASE64') {
      const raw = Buffer.from(String(side.data), 'base64');
      const format = formatOf(side.observedContentType);
      if (format === 'csv') return csvSide(raw, raw.length);
      return { body: parseAs(raw.toString('utf8'), format), bytes: raw.length, format };
    }
    if (encoding === 'CSV') {
      const text = String(side.data);
      return csvSide(text, Buffer.byteLength(text, 'utf8'));
    }
    if (encoding === 'JSON') {
      // The JSON body as text (SageMaker's form); an already-parsed value is taken as it is.
      const text = typeof side.data === 'string' ? side.data : JSON.stringify(side.data);
      return { body: JSON.parse(text), bytes: Buffer.byteLength(text, 'utf8'), format: 'json' };
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** One line of a capture file, decoded; undefined for a line that is not a capture record. */
export function decodeRecord(line: string): DecodedRecord | undefined {
  const trimmed = line.trim();
  if (!trimmed) return undefined;
  let o: any;
  try {
    o = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  const data = o?.captureData;
  if (!data || typeof data !== 'object') return undefined;
  return { input: decodeSide(data.endpointInput), output: decodeSide(data.endpointOutput), inferenceTime: o.eventMetadata?.inferenceTime };
}

/** One step of a selector. */
type Step = { key: string } | { index: number } | { all: true } | { length: true };

/** The selector that reads the body's size in bytes (the request-size signal for any payload). */
export const BYTES_SELECTOR = 'bytes()';

/**
 * Parses a JSONPath-like selector: `$`, then `.name`, `['name']`, `[n]`, `[*]`, and a last `.length()`
 * (the number of items of an array, Jayway JsonPath's function). E.g. `$.instances[*][0]` (the first
 * column of every row), `$.events.length()` (a sequence's length), `$[*][1]` (CSV: the second column).
 * Throws with the position of the first thing it cannot read.
 */
export function parseSelector(selector: string): Step[] {
  if (!selector.startsWith('$')) throw new Error(`a selector starts with '$' (got '${selector}')`);
  const steps: Step[] = [];
  let i = 1;
  while (i < selector.length) {
    const rest = selector.slice(i);
    let m: RegExpExecArray | null;
    if ((m = /^\.length\(\)$/.exec(rest))) {
      steps.push({ length: true });
    } else if ((m = /^\.([A-Za-z_][A-Za-z0-9_-]*)/.exec(rest))) {
      steps.push({ key: m[1] });
    } else if ((m = /^\[\*\]/.exec(rest))) {
      steps.push({ all: true });
    } else if ((m = /^\[(\d+)\]/.exec(rest))) {
      steps.push({ index: Number(m[1]) });
    } else if ((m = /^\['([^']*)'\]/.exec(rest))) {
      steps.push({ key: m[1] });
    } else {
      throw new Error(`cannot read '${rest}' at position ${i} of selector '${selector}'`);
    }
    i += m[0].length;
  }
  return steps;
}

/** The values a selector picks from a body (none when the path is absent). */
export function select(body: Body, steps: readonly Step[]): unknown[] {
  let current: unknown[] = [body];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of current) {
      if ('key' in step) {
        if (v !== null && typeof v === 'object' && !Array.isArray(v) && step.key in (v as object)) next.push((v as any)[step.key]);
      } else if ('index' in step) {
        if (Array.isArray(v) && step.index < v.length) next.push(v[step.index]);
      } else if ('all' in step) {
        if (Array.isArray(v)) next.push(...v);
      } else if (Array.isArray(v)) {
        next.push(v.length);
      } else if (typeof v === 'string') {
        next.push(v.length);
      }
    }
    current = next;
  }
  return current;
}

/** Numbers among selected values (numeric strings included). */
export function numbers(values: readonly unknown[]): number[] {
  const out: number[] = [];
  for (const v of values) {
    const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    if (Number.isFinite(n)) out.push(n);
  }
  return out;
}
