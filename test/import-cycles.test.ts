// No import circles in lib/, lambda/ or bin/ (type-only imports included): a module and the modules it
// imports form a tree, so each can be read, tested and changed without its importers.
import * as fs from 'fs';
import * as path from 'path';

const root = path.join(__dirname, '..');

/** Every .ts file under the folders, and the project modules each imports (relative specifiers). */
function importGraph(folders: string[]): Map<string, string[]> {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const f of fs.readdirSync(d)) {
      const p = path.join(d, f);
      if (fs.statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) files.push(p);
    }
  };
  folders.forEach(f => walk(path.join(root, f)));
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const src = fs.readFileSync(f, 'utf8');
    const deps = [...src.matchAll(/(?:from|import|require)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)]
      .map(m => path.join(path.dirname(f), m[1]))
      .map(base => [`${base}.ts`, path.join(base, 'index.ts')].find(x => fs.existsSync(x)))
      .filter((x): x is string => x !== undefined);
    graph.set(
      path.relative(root, f),
      deps.map(d => path.relative(root, d)),
    );
  }
  return graph;
}

/** The strongly connected components with more than one module (Tarjan): each is an import circle. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1) found.push(c.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('the detector finds a circle (two modules that import each other)', () => {
  const g = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['a.ts']],
    ['c.ts', ['a.ts']],
  ]);
  expect(circles(g)).toEqual([['a.ts', 'b.ts']]);
});

test('no import circles in lib/, lambda/ or bin/', () => {
  const graph = importGraph(['lib', 'lambda', 'bin']);
  expect(graph.get('lib/resilient-endpoint.ts')).toEqual(expect.arrayContaining(['lib/private/models.ts', 'lib/resilient-endpoint-props.ts']));
  expect(circles(graph)).toEqual([]);
});
