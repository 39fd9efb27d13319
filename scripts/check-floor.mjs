// Proves the peer-dependency floor: installs the lowest versions package.json's peerDependencies
// allow (aws-cdk-lib and constructs, cached under node_modules/.floor), type-checks the code that
// ships (lib/ and bin/: what a consumer compiles against) against them, then synthesizes every shape
// of stack the library ships, and apps it must refuse or warn about, once at the floor and once at the
// developed version (scripts/floor-synth.cjs, on the compiled dist/), and requires the same templates
// and the same messages. A template equal to the developed version's is one every template assertion
// of the suites already holds for; this replaced running those suites against the floor (same
// guarantee for these shapes, a tenth of the CPU). Needs `tsc` and the bundle to have run.
// The floor is where this passes: 2.273.0 is the first aws-cdk-lib that renders
// `Tags` on AWS::ApplicationAutoScaling::ScalableTarget, which the breaker's tag-scoped IAM needs
// (2.269–2.271 drop them; 2.268 also rejects '::' in acknowledgement ids; 2.272 is not in our registry).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = process.cwd();
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const floorOf = range =>
  /^\^?(\d+\.\d+\.\d+)$/.exec(range)?.[1] ??
  (() => {
    throw new Error(`unsupported peer range ${range}`);
  })();
const versions = Object.fromEntries(Object.entries(pkg.peerDependencies).map(([n, r]) => [n, floorOf(r)]));
const dir = join(
  root,
  'node_modules',
  '.floor',
  Object.entries(versions)
    .map(([n, v]) => `${n}@${v}`)
    .join('+'),
);
const modules = join(dir, 'node_modules');
const started = Date.now();
if (!existsSync(join(modules, 'aws-cdk-lib', 'package.json'))) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'floor', private: true }));
  execFileSync(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent', ...Object.entries(versions).map(([n, v]) => `${n}@${v}`)],
    { cwd: dir, stdio: 'inherit' },
  );
}
for (const [n, v] of Object.entries(versions)) {
  const got = JSON.parse(readFileSync(join(modules, n, 'package.json'), 'utf8')).version;
  if (got !== v) throw new Error(`floor install has ${n}@${got}, wanted ${v}`);
}

const tsconfig = join(dir, 'tsconfig.json');
writeFileSync(
  tsconfig,
  JSON.stringify({
    extends: join(root, 'tsconfig.json'),
    compilerOptions: {
      noEmit: true,
      baseUrl: root,
      typeRoots: [join(root, 'node_modules', '@types')],
      paths: {
        'aws-cdk-lib': [join(modules, 'aws-cdk-lib')],
        'aws-cdk-lib/*': [join(modules, 'aws-cdk-lib', '*')],
        constructs: [join(modules, 'constructs')],
      },
    },
    include: [...['lib', 'bin'].map(d => join(root, d, '**', '*.ts')), join(root, 'test', 'template-shapes.ts')],
  }),
);
// Incremental (its state beside the floor install): a rerun re-checks only what changed.
execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', tsconfig, '--incremental', '--tsBuildInfoFile', join(dir, 'floor.tsbuildinfo')], {
  stdio: 'inherit',
});

// Differences in what the two versions render that change nothing deployed, each with its reason.
const knownDifferences = [
  {
    // A dashboard's text widgets: 2.276.0 writes CloudWatch's "transparent" background, 2.273.0 leaves it
    // out (the section headers then get CloudWatch's default background; cosmetic).
    pattern: /,\\"background\\":\\"transparent\\"/g,
    why: "dashboard text widgets' background",
  },
  // Asset hashes follow from the templates they name (a nested stack's template is an asset).
  { pattern: /[0-9a-f]{64}/g, why: 'asset hashes' },
];
const work = mkdtempSync(join(tmpdir(), 'floor-'));
try {
  const synth = (name, ...extra) => {
    const out = join(work, name);
    execFileSync(process.execPath, [join(root, 'scripts', 'floor-synth.cjs'), out, ...extra], { stdio: ['ignore', 'ignore', 'inherit'] });
    return out;
  };
  const floorOut = synth('floor', modules);
  const currentOut = synth('current');
  const differ = [];
  const seen = new Set();
  const files = dir => readdirSync(dir).filter(f => f.endsWith('.template.json') || f === 'messages.json');
  for (const f of new Set([...files(floorOut), ...files(currentOut)])) {
    const read = d => (existsSync(join(d, f)) ? readFileSync(join(d, f), 'utf8') : '(missing)');
    let a = read(floorOut);
    let b = read(currentOut);
    for (const k of knownDifferences) {
      if (a.replace(k.pattern, '') !== a || b.replace(k.pattern, '') !== b) seen.add(k.why);
      a = a.replace(k.pattern, '');
      b = b.replace(k.pattern, '');
    }
    if (a !== b) differ.push(f);
  }
  if (differ.length) {
    throw new Error(
      `at the peer floor (${JSON.stringify(versions)}) the library renders differently: ${differ.join(', ')} ` +
        `(compare ${floorOut} with ${currentOut}). Fix the library, raise the floor, or list a harmless difference in knownDifferences with its reason`,
    );
  }
  console.log(
    `floor check: ${Object.entries(versions)
      .map(([n, v]) => `${n} ${v}`)
      .join(', ')}: type-check passes; ${files(currentOut).length - 1} templates and the refusal and warning messages equal the developed version's` +
      ` (allowed: ${[...seen].join(', ') || 'none'}) (${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
  rmSync(work, { recursive: true, force: true });
} catch (e) {
  process.exitCode = 1;
  console.error(e.message);
}
