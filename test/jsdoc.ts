/** Reading the library's JSDoc from its sources, for the tests that hold the documentation to the code. */
import * as fs from 'fs';
import * as path from 'path';

const root = path.join(__dirname, '..');

/** Every TypeScript source under lib/ (relative paths) with its text. */
let sources: Array<[string, string]> | undefined;
export function libSources(): Array<[string, string]> {
  return (sources ??= (fs.readdirSync(path.join(root, 'lib'), { recursive: true }) as string[])
    .filter(f => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map(f => [`lib/${f}`, fs.readFileSync(path.join(root, 'lib', f), 'utf8')]));
}

/** The text of every `/** … *\/` comment in a source, each comment's `*` margins removed. */
export function docComments(src: string): string[] {
  return [...src.matchAll(/\/\*\*([\s\S]*?)\*\//g)].map(m => m[1].replace(/\s*\n\s*\*\s?/g, ' ').trim());
}

/** A prop's JSDoc: its whole text, its `@default` (or undefined), whether it is optional, and its type. */
export interface PropDoc {
  readonly text: string;
  readonly default?: string;
  readonly optional: boolean;
  readonly type: string;
}

/** The JSDoc of `prop` in `export interface name` (looked up in every file under lib/). */
export function propDoc(name: string, prop: string): PropDoc | undefined {
  for (const [, src] of libSources()) {
    const start = src.search(new RegExp(`export interface ${name}\\b[^{]*\\{`));
    if (start < 0) continue;
    const body = src.slice(start, src.indexOf('\n}', start));
    const m = new RegExp(`/\\*\\*((?:(?!\\*/)[\\s\\S])*)\\*/\\s*readonly ${prop}(\\??):\\s*([^;]+);`).exec(body);
    if (!m) return undefined;
    const text = m[1].replace(/\s*\n\s*\*\s?/g, ' ').trim();
    return { text, default: /@default (.*?)(?= @\w+ |$)/.exec(text)?.[1], optional: m[2] === '?', type: m[3].trim() };
  }
  return undefined;
}

/** Every prop of `export interface name` with its JSDoc (own props only, in source order). */
export function interfaceProps(name: string): Array<[string, PropDoc]> {
  for (const [, src] of libSources()) {
    const start = src.search(new RegExp(`export interface ${name}\\b[^{]*\\{`));
    if (start < 0) continue;
    const body = src.slice(start, src.indexOf('\n}', start));
    return [...body.matchAll(/readonly (\w+)\??:/g)].map(m => [m[1], propDoc(name, m[1])!]);
  }
  return [];
}
