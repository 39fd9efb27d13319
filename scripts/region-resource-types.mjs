#!/usr/bin/env node
// Which CloudFormation resource types the library creates are missing in which Region, as AWS's own offline
// validator knows it: writes lib/region-resource-types.data.ts, which lib/region-resource-types.ts reads
// (the synth error in a Region-bound stack, the Rules assertion of an environment-agnostic one).
//
//     node scripts/region-resource-types.mjs [AWS::Service::Type …]
//
// The source is @aws/cloudformation-validate, the validator aws-cdk-lib runs during synthesis (a dependency
// of aws-cdk-lib, loaded from there). Its per-Region resource-type sets are inside its WebAssembly module;
// it answers through its schema validator: a template with one resource of each type, validated for a
// Region, gets "Resource type 'T' does not exist in 'R'" (rule F3006) for each type that Region lacks.
//
// Which Regions it has data of its own for is not in its API, so it is measured the same way, with every
// resource type aws-cdk-lib has an L1 class for (about 1,900): a Region whose set of missing types is
// empty (no data: the validator judges nothing there), or identical to us-east-1's (the validator falls
// back to us-east-1's set there: the isolated partitions and the European Sovereign Cloud in 1.14.0) has
// no data of its own and is listed as unchecked; the library does not judge types there. The Region names
// come from the list the module carries (the one string of concatenated Region names in it), checked
// against every Region aws-cdk-lib knows.
//
// The types: those already in the data file, plus any given on the command line (test/region-resource-types.test.ts
// fails, naming the command, when the library creates a type the data file lacks).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'package.json'));
const cdkMain = require.resolve('aws-cdk-lib');
const cdkRequire = createRequire(cdkMain);
const validatorMain = cdkRequire.resolve('@aws/cloudformation-validate');
const validator = cdkRequire('@aws/cloudformation-validate');
const validatorVersion = JSON.parse(fs.readFileSync(path.join(path.dirname(validatorMain), 'package.json'), 'utf8')).version;
const cdkVersion = JSON.parse(fs.readFileSync(path.join(path.dirname(cdkMain), 'package.json'), 'utf8')).version;
const { RegionInfo } = cdkRequire('./region-info');
const target = path.join(root, 'lib', 'region-resource-types.data.ts');
const MARK = 'export const RESOURCE_TYPE_DATA: ResourceTypeData = ';

/** The object literal the data file holds (written by this script), or undefined. */
function previous() {
  if (!fs.existsSync(target)) return undefined;
  const text = fs.readFileSync(target, 'utf8');
  const start = text.indexOf(MARK);
  if (start < 0) throw new Error(`${target}: no '${MARK}'`);
  const body = text.slice(start + MARK.length, text.lastIndexOf('};') + 1);
  return Function(`return (${body});`)();
}

/** The Region names the validator's module carries: one run of concatenated names, e.g. 'af-south-1ap-east-1…'. */
function validatorRegions() {
  const wasm = fs.readFileSync(path.join(path.dirname(validatorMain), 'bindings_wasm_bg.wasm')).toString('latin1');
  const runs = (wasm.match(/(?:[a-z]{2,4}(?:-[a-z]+)+-\d+){10,}/g) ?? []).filter(r => r.includes('us-east-1'));
  if (runs.length !== 1) throw new Error(`expected one list of Regions in the validator's module, found ${runs.length}`);
  return runs[0].match(/[a-z]{2,4}(?:-[a-z]+)+-\d+/g);
}

/** Every resource type aws-cdk-lib has an L1 class for (`CFN_RESOURCE_TYPE_NAME`). */
function cdkTypes() {
  const cdk = cdkRequire(cdkMain);
  const types = new Set();
  const seen = new Set();
  const walk = (o, depth) => {
    if (!o || seen.has(o) || depth > 2) return;
    seen.add(o);
    for (const k of Object.keys(o)) {
      let x;
      try {
        x = o[k];
      } catch {
        continue;
      }
      if (typeof x === 'function' && typeof x.CFN_RESOURCE_TYPE_NAME === 'string') types.add(x.CFN_RESOURCE_TYPE_NAME);
      else if (x && typeof x === 'object') walk(x, depth + 1);
    }
  };
  walk(cdk, 0);
  return [...types].sort();
}

const schemas = new validator.SchemaValidator();
/** The types of `types` the validator says do not exist in `region`. */
function missingIn(types, region) {
  const template = { Resources: Object.fromEntries(types.map((type, i) => [`R${i}`, { Type: type, Properties: {} }])) };
  const out = new Set();
  for (const d of schemas.validate(new validator.TemplateContent(JSON.stringify(template)), region)) {
    const m = /^Resource type '(.+)' does not exist in '(.+)'$/.exec(d.message);
    if (m && m[2] === region) out.add(m[1]);
  }
  return out;
}

function partitionOf(region) {
  const p = RegionInfo.get(region).partition;
  if (!p) throw new Error(`aws-cdk-lib ${cdkVersion} knows no partition for ${region}`);
  return p;
}

const wanted = [...new Set([...Object.keys(previous()?.missing ?? {}), ...process.argv.slice(2)])].sort();
if (!wanted.length) throw new Error('no resource types: give them on the command line (AWS::Service::Type …)');
const regions = validatorRegions();
const known = RegionInfo.regions.map(r => r.name);
const all = cdkTypes();
const reference = [...missingIn(all, 'us-east-1')].sort().join();
const own = [];
const unchecked = [];
for (const r of regions) {
  const m = missingIn(all, r);
  if (r === 'us-east-1' || (m.size > 0 && [...m].sort().join() !== reference)) own.push(r);
  else unchecked.push(r);
}
const missing = {};
for (const type of wanted) missing[type] = [];
for (const r of own) for (const type of missingIn(wanted, r)) missing[type].push(r);
const unknownTypes = wanted.filter(t => !all.includes(t));
if (unknownTypes.length) throw new Error(`not a type aws-cdk-lib ${cdkVersion} knows: ${unknownTypes.join(', ')}`);

const data = {
  source: `@aws/cloudformation-validate ${validatorVersion} (with aws-cdk-lib ${cdkVersion})`,
  read: new Date().toISOString().slice(0, 10),
  regions: Object.fromEntries(own.map(r => [r, partitionOf(r)])),
  unchecked: Object.fromEntries(unchecked.map(r => [r, partitionOf(r)])),
  missing,
};
const text = `// Generated by scripts/region-resource-types.mjs from AWS's offline CloudFormation validator: do not edit.
// source: the validator and the aws-cdk-lib it came with; read: the date this script ran; regions: the
// Regions it has resource-type data of its own for (with their partition); unchecked: Regions it names but
// judges with no data or with us-east-1's; missing: per resource type the library creates, the Regions (of
// \`regions\`) whose CloudFormation does not have it. Read by lib/region-resource-types.ts.

/** The shape of {@link RESOURCE_TYPE_DATA}. */
export interface ResourceTypeData {
  readonly source: string;
  readonly read: string;
  readonly regions: Readonly<Record<string, string>>;
  readonly unchecked: Readonly<Record<string, string>>;
  readonly missing: Readonly<Record<string, readonly string[]>>;
}

${MARK}${JSON.stringify(data, null, 2)};
`;
fs.writeFileSync(target, text);
execFileSync(process.execPath, [require.resolve('prettier/bin/prettier.cjs'), '--write', '--log-level', 'warn', target], { stdio: 'inherit' });
const notInValidator = known.filter(r => !regions.includes(r));
console.log(`${path.relative(root, target)}: ${wanted.length} types, ${own.length} Regions with data, unchecked: ${unchecked.join(', ')}`);
if (notInValidator.length) console.log(`Regions aws-cdk-lib knows and the validator does not (unchecked too): ${notInValidator.join(', ')}`);
for (const [type, rs] of Object.entries(missing)) if (rs.length) console.log(`  ${type}: missing in ${rs.length}: ${rs.join(' ')}`);
