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

/** Whether a path matches one of package.json's `files` patterns (`*` within a folder, `**` across folders). */
function shipped(file: string): boolean {
  const files: string[] = JSON.parse(read('package.json')).files;
  return files.some(glob => {
    const re = glob
      .split('/')
      .map(part => (part === '**' ? '(?:.*/)?' : `${part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}/`))
      .join('')
      .replace(/\/$/, '')
      .replace(/\(\?:\.\*\/\)\?\//g, '(?:.*/)?');
    return new RegExp(`^${re}$`).test(file);
  });
}

test('docs that travel: the package ships every page and file the README reaches, link by link (issue 40: 19 dead links)', () => {
  const reached = new Set<string>();
  const queue = ['README.md'];
  while (queue.length) {
    const page = queue.shift()!;
    if (reached.has(page)) continue;
    reached.add(page);
    const text = read(page).replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const linked = target.split('#')[0];
      const file = linked ? path.normalize(path.join(path.dirname(page), linked)) : page;
      if (file.endsWith('.md')) queue.push(file);
      else reached.add(file);
    }
  }
  expect(reached.size).toBeGreaterThan(15);
  expect([...reached].filter(f => !shipped(f))).toEqual([]);
  // (scripts/check-package.mjs follows the same links in the unpacked tarball.)
});

test('no page of the package cites a file that is not in the repository (the working notes): AWS sources instead', () => {
  const cites = ['README.md', 'API.md', ...pages.filter(p => p !== 'README.md')].filter(p => /\b(real-account|incidents)\.md\b/.test(read(p)));
  expect(cites).toEqual([]);
});

test('the README tells where the package comes from today: unpublished, so the tarball first; never a registry install that 404s', () => {
  const pkg = JSON.parse(read('package.json'));
  const install = readme.slice(readme.indexOf('## Install'), readme.indexOf('\n## ', readme.indexOf('## Install') + 1));
  const unpublished = /example\.invalid/.test(pkg.repository?.url ?? '');
  expect(unpublished).toBe(true); // when it is published, this test changes with the README
  expect(install).toMatch(/not published on any registry/);
  const commands = /```bash\n([\s\S]*?)```/.exec(install)![1];
  expect(commands).toMatch(/npm pack/);
  expect(commands).not.toMatch(/npm install sagemaker-resilient-endpoint\b/);
  expect(commands).toMatch(/npm install \S+\.tgz/);
  // npm publish stops while the repository is the placeholder (prepublishOnly; never run on install).
  expect(pkg.scripts.prepublishOnly).toBe('node scripts/prepublish.mjs');
});

test('a bare `npx cdk synth` after `npm ci` builds what the app needs first (no install script does it)', () => {
  const app: string = JSON.parse(read('cdk.json')).app;
  expect(app).toMatch(/^node scripts\/build\.mjs bundle && npx tsx bin\/app\.ts$/);
  const scripts = JSON.parse(read('package.json')).scripts;
  expect(Object.keys(scripts).filter(s => ['preinstall', 'install', 'postinstall', 'prepare'].includes(s))).toEqual([]);
  // (scripts/check-package.mjs runs `cdk synth` in a copy of a fresh clone that has no bundles.)
});
