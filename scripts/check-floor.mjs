// Proves the peer-dependency floor: with the lowest versions package.json's peerDependencies allow
// (aws-cdk-lib and constructs, installed once under node_modules/.floor by scripts/jsii-floor.mjs),
// synthesizes every shape of stack the library ships, and apps it must refuse or warn about, once at the
// floor and once at the developed version (scripts/floor-synth.cjs, on the compiled dist/), and requires
// the same templates and the same messages. A template equal to the developed version's is one every
// template assertion of the suites already holds for; this replaced running those suites against the
// floor (same guarantee for these shapes, a tenth of the CPU). Needs `tsc` and the bundle to have run.
// The type-check at the floor (lib/, bin/, lambda/, bench/ and test/template-shapes.ts against the floor's
// declarations) is scripts/check-jsii.mjs's: jsii compiles them there, with tsconfig.build.json's options,
// in one TypeScript program that also makes the jsii assembly (this check ran a second program for it).
// The floor is where this passes: 2.273.0 is the first aws-cdk-lib that renders
// `Tags` on AWS::ApplicationAutoScaling::ScalableTarget, which the breaker's tag-scoped IAM needs
// (2.269–2.271 drop them; 2.268 also rejects '::' in acknowledgement ids; 2.272 is not in our registry).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeFloor, peerFloor } from './jsii-floor.mjs';

const root = process.cwd();
const started = Date.now();
const { versions, modules } = peerFloor(root);

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
    `floor check: ${describeFloor(versions)}: ${files(currentOut).length - 1} templates and the refusal and warning messages equal the developed version's` +
      ` (allowed: ${[...seen].join(', ') || 'none'}) (${((Date.now() - started) / 1000).toFixed(1)} s; the type-check at the floor is check-jsii's)`,
  );
  rmSync(work, { recursive: true, force: true });
} catch (e) {
  process.exitCode = 1;
  console.error(e.message);
}
