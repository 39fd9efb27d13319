/**
 * The README a newcomer reads, and the docs/ pages it links to: the README stays short, its set-up
 * lines are exactly what CI runs, every in-repo link and anchor resolves, and every row of its
 * defaults table names a prop that exists, with that default in the prop's JSDoc.
 */
import * as fs from 'fs';
import * as path from 'path';
import { PropDoc, propDoc } from './jsdoc';

const root = path.join(__dirname, '..');
const read = (f: string) => fs.readFileSync(path.join(root, f), 'utf8');
const readme = read('README.md');
const pages = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter(f => f.endsWith('.md'))
    .map(f => `docs/${f}`),
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const prose = markdown.replace(/```[\s\S]*?```/g, '');
  for (const [, heading] of prose.matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n ? `${slug}-${n}` : slug);
  }
  return out;
}

test('the README is read in minutes: at most 30,000 bytes', () => {
  expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(30_000);
});

test("CI runs exactly the README's set-up lines: the two commands and the frameworks line", () => {
  const setup = readme.slice(readme.indexOf('## Set-up'));
  const block = /```bash\n([\s\S]*?)```/.exec(setup)![1];
  const commands = block
    .split('\n')
    .map(l => l.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
  const frameworks = /`(apt-get install -y [^`]+)`/.exec(setup)![1];
  const ci = read('.ci/run')
    .split('\n')
    .filter(l => l && !l.startsWith('#') && !/^(set|cd) /.test(l));
  expect(commands).toEqual(['npm ci && npm run synth', 'npm test']);
  expect(ci).toEqual([frameworks, 'npm ci --no-audit --no-fund && npm run synth', 'npm test']);
});

test('every in-repo link of the README and docs/ resolves, anchors included', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of pages) {
    const text = read(page).replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
      const [file, anchor] = target.split('#');
      const resolved = file ? path.normalize(path.join(path.dirname(page), file)) : page;
      checked++;
      if (!fs.existsSync(path.join(root, resolved))) broken.push(`${page}: ${target} (no ${resolved})`);
      else if (anchor && resolved.endsWith('.md') && !anchors(read(resolved)).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor})`);
    }
  }
  expect(broken).toEqual([]);
  expect(checked).toBeGreaterThan(20);
});

test('the docs/ pages hold the sections the README used to: each concern has its page', () => {
  for (const [page, heading] of [
    ['docs/breaker.md', '## The memory circuit breaker (`circuitBreaker`)'],
    ['docs/container.md', '## The container protects itself'],
    ['docs/fleets.md', '## Fleets'],
    ['docs/operations.md', '## Before launch day'],
    ['docs/readiness-checks.md', '## Production-readiness checks in CI'],
    ['docs/simulator.md', '## Simulator'],
    ['docs/capacity-planner.md', '## Capacity planner'],
    ['docs/performance.md', '## Performance'],
    ['docs/contributing.md', '### Mutation testing'],
  ])
    expect([page, read(page).includes(heading)]).toEqual([page, true]);
});

/** Follows `monitoring.memoryThresholdPercent` from ResilientEndpointProps, or `CapacityPlanProps.x` from the type. */
function resolveProp(propPath: string): string | undefined {
  const parts = propPath.split('.');
  let iface = /^[A-Z]/.test(parts[0]) ? parts.shift()! : 'ResilientEndpointProps';
  let found: PropDoc | undefined;
  for (const part of parts) {
    found = propDoc(iface, part);
    // an optional prop must state its default; a required one has none
    if (!found || (found.optional && found.default === undefined)) return undefined;
    iface = found.type;
  }
  return found?.text;
}

test("the README's defaults table: every prop exists with a JSDoc @default, and its JSDoc states the README's figure", () => {
  const section = readme.slice(readme.indexOf('## Defaults'), readme.indexOf('## Documentation'));
  const rows = [...section.matchAll(/^\| (.+?) \| `([\w.]+)` \| (.+) \|$/gm)];
  expect(rows.length).toBeGreaterThanOrEqual(25);
  const wrong: string[] = [];
  for (const [, figure, propPath, source] of rows) {
    const jsdoc = resolveProp(propPath);
    if (!jsdoc) {
      wrong.push(`${propPath}: no such prop`);
      continue;
    }
    if (!source.trim()) wrong.push(`${propPath}: no source`);
    const first = /\d+(?:\.\d+)?/.exec(figure.replace(/⌊vCPU × /, ''))?.[0];
    // model.environment carries the tiers: there is no single default to compare
    if (first && propPath !== 'model.environment' && !new RegExp(`(^|[^\\d.])${first.replace('.', '\\.')}([^\\d]|$)`).test(jsdoc))
      wrong.push(`${propPath}: README says ${first}, JSDoc says "${jsdoc}"`);
  }
  expect(wrong).toEqual([]);
});
