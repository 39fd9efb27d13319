/**
 * Every CloudFormation resource type the library creates must exist in the Region the stack deploys to:
 * CloudFormation refuses a template with a type its Region does not have ("Unrecognized resource types",
 * at change-set creation). Judged by AWS's own data, the per-Region resource-type sets of the offline
 * validator aws-cdk-lib runs (`@aws/cloudformation-validate`: lib/region-resource-types.data.ts, written by
 * scripts/region-resource-types.mjs), for the library's own resources whatever the app's feature flags
 * (aws-cdk-lib reports the same finding as a warning only, unless `@aws-cdk/core:validateAgainstDefaultRules`).
 *
 * - A Region-bound stack: a synth error per missing type, naming the type, the Region, what creates it and
 *   the fix. A Region the data does not cover: a warning (`RE-RegionTypesUnchecked`) with the command that checks.
 * - An environment-agnostic stack: a `Rules` assertion refuses, before any resource is created, the Regions
 *   whose CloudFormation lacks a type the stack creates (one assertion per set of such Regions, naming the
 *   types and the fix). Regions the data does not cover are not refused: if a type is missing there, the
 *   change set fails just as early, with CloudFormation's own message.
 * - A resource made only in some partitions (`createdOnlyInPartitions`: the budget of an agnostic stack, on
 *   `AWS::Partition`) is judged in those partitions' Regions only.
 */
import { Aspects, Aws, CfnResource, CfnRule, Fn, Stack, Token, Validations } from 'aws-cdk-lib';
import { Construct, IConstruct } from 'constructs';
import { RESOURCE_TYPE_DATA } from './region-resource-types.data';
import { stackLabel, stackPartitions } from './validation';

/** Where the per-Region data comes from (the validator, its version, when it was read). */
export const RESOURCE_TYPE_SOURCE = `AWS's CloudFormation validator ${RESOURCE_TYPE_DATA.source.split(' (')[0]}, as of ${RESOURCE_TYPE_DATA.read}`;

/**
 * Whether CloudFormation in `region` lacks `type`: true or false where the data says, undefined where it
 * cannot tell (a Region without data of its own, or a type the data file does not list).
 */
export function typeMissing(type: string, region: string): boolean | undefined {
  const missing = RESOURCE_TYPE_DATA.missing[type];
  if (!missing || RESOURCE_TYPE_DATA.regions[region] === undefined) return undefined;
  return missing.includes(region);
}

/** The Regions (with data) of `partitions` (all when undefined) where `type` exists, in the data's order. */
export function regionsWith(type: string, partitions?: readonly string[]): string[] {
  const missing = RESOURCE_TYPE_DATA.missing[type] ?? [];
  return Object.entries(RESOURCE_TYPE_DATA.regions)
    .filter(([r, p]) => (!partitions || partitions.includes(p)) && !missing.includes(r))
    .map(([r]) => r);
}

/** What to do when `type` is missing where the stack deploys (after "Fix: "). */
export function fixFor(type: string, partition?: string): string {
  if (type === 'AWS::Budgets::Budget') {
    const where = regionsWith(type, partition ? [partition] : undefined);
    const example = where.includes('us-east-1') ? 'us-east-1' : (where[0] ?? 'us-east-1');
    return (
      `remove monitoring.monthlyBudgetUsd from this stack and create the budget from a stack in a Region that has ${type} (e.g. ${example}): ` +
      "budgets belong to the account, so a budget made there sees this endpoint's costs too (filter it on the resilient-endpoint tag, as this one does)"
    );
  }
  if (type === 'AWS::SageMaker::DataQualityJobDefinition' || type === 'AWS::SageMaker::MonitoringSchedule')
    return "turn Model Monitor off (remove drift.modelMonitor: the library's own drift detection does not need it), or deploy the stack to a Region that has it";
  if (type.startsWith('AWS::SageMaker::')) return "deploy the stack to a Region that has it: this Region's CloudFormation cannot create the endpoint";
  return 'deploy the stack to a Region that has it, or turn off the feature that creates it';
}

/** The construct id (and logical id) of the agnostic stack's assertion. */
const RULE_ID = 'ResilientEndpointResourceTypes';

const roots = new WeakSet<IConstruct>();
const onlyIn = new WeakMap<CfnResource, readonly string[]>();
const stacksWithAspect = new WeakSet<Stack>();

/**
 * Puts the library construct `root` (one that creates resources, used alone or inside another) under the
 * check: its resources, and those of library constructs inside it, are judged once, by the outermost one.
 */
export function guardResourceTypes(root: Construct): void {
  roots.add(root);
  root.node.addValidation({ validate: () => (outermost(root) ? regionErrors(root) : []) });
  const top = topStack(Stack.of(root));
  if (stacksWithAspect.has(top)) return;
  stacksWithAspect.add(top);
  // Once the app is complete (aspects run at synthesis, after every construct is added): the agnostic
  // stack's assertion, the unchecked-Region warning.
  Aspects.of(top).add({
    visit: (node: IConstruct) => {
      if (node === top) atSynthesis(top);
    },
  });
}

/**
 * Says that `resource` is made only in `partitions` (a condition on `AWS::Partition` the caller set): the
 * agnostic stack's assertion then refuses only those partitions' Regions that lack its type.
 */
export function createdOnlyInPartitions(resource: CfnResource, partitions: readonly string[]): void {
  onlyIn.set(resource, partitions);
}

function topStack(stack: Stack): Stack {
  let s = stack;
  while (s.nestedStackParent) s = s.nestedStackParent;
  return s;
}

/** No library construct above it: it judges for everything below it. */
function outermost(c: IConstruct): boolean {
  for (let s = c.node.scope; s; s = s.node.scope) if (roots.has(s)) return false;
  return true;
}

/** The library's resources under `root`. */
function resourcesOf(root: IConstruct): CfnResource[] {
  return root.node.findAll().filter((c): c is CfnResource => CfnResource.isCfnResource(c));
}

/** 'A/B/C' or 'A/B/C, D/E and 3 more'. */
function paths(resources: CfnResource[]): string {
  const all = resources.map(r => r.node.path);
  return all.length <= 2 ? all.join(' and ') : `${all.slice(0, 2).join(', ')} and ${all.length - 2} more`;
}

/** Per type, its resources. */
function byType(resources: CfnResource[]): Map<string, CfnResource[]> {
  const out = new Map<string, CfnResource[]>();
  for (const r of resources) out.set(r.cfnResourceType, [...(out.get(r.cfnResourceType) ?? []), r]);
  return out;
}

/** The synth errors of a Region-bound stack: one per type its Region's CloudFormation lacks. */
function regionErrors(root: IConstruct): string[] {
  const errors: string[] = [];
  const perStack = new Map<Stack, CfnResource[]>();
  for (const r of resourcesOf(root)) perStack.set(Stack.of(r), [...(perStack.get(Stack.of(r)) ?? []), r]);
  for (const [stack, resources] of perStack) {
    const region = stack.region;
    if (Token.isUnresolved(region)) continue;
    const partition = RESOURCE_TYPE_DATA.regions[region];
    for (const [type, list] of byType(resources)) {
      if (typeMissing(type, region) !== true) continue;
      const allowed = regionsWith(type, [partition]);
      errors.push(
        `${type} (${paths(list)}) in ${stackLabel(stack)}: got Region ${region}, whose CloudFormation does not have ${type} (${RESOURCE_TYPE_SOURCE}); ` +
          `allowed: a Region whose CloudFormation has it (in the ${partition} partition: ${allowed.length ? allowed.join(', ') : 'none'}). Fix: ${fixFor(type, partition)}`,
      );
    }
  }
  return errors;
}

/** The outermost library constructs in `top` and its nested stacks. */
function rootsIn(top: Stack): IConstruct[] {
  return top.node.findAll().filter(c => roots.has(c) && outermost(c) && topStack(Stack.of(c)) === top);
}

function atSynthesis(top: Stack): void {
  const owners = rootsIn(top);
  if (!owners.length) return;
  const resources = owners.flatMap(resourcesOf);
  if (!Token.isUnresolved(top.region)) {
    warnIfUnchecked(top, owners[0], resources);
    return;
  }
  agnosticRule(top, owners[0], resources);
}

function warnIfUnchecked(top: Stack, owner: IConstruct, resources: CfnResource[]): void {
  const region = top.region;
  if (RESOURCE_TYPE_DATA.regions[region] !== undefined) return;
  const types = [...byType(resources).keys()].sort();
  Validations.of(owner).addWarning(
    'RE-RegionTypesUnchecked',
    `${stackLabel(top)} deploys to ${region}, which the per-Region resource types of ${RESOURCE_TYPE_SOURCE}, do not cover ` +
      `(${RESOURCE_TYPE_DATA.unchecked[region] !== undefined ? 'it judges that Region with no data of its own' : 'a Region it does not name'}): ` +
      `whether CloudFormation there has the ${types.length} types this stack creates is not checked. ` +
      `Check each with: aws cloudformation describe-type --type RESOURCE --region ${region} --type-name <type> (${types.join(', ')}); then acknowledge this warning.`,
  );
}

/**
 * The agnostic stack's `Rules` assertion: per set of Regions that lack some of its types, one assertion
 * refusing them, naming those types and the fix. A type missing in every Region of the target partitions
 * that the data covers (and no uncovered Region there) is a synth error instead.
 */
function agnosticRule(top: Stack, owner: IConstruct, resources: CfnResource[]): void {
  const partitions = stackPartitions(top);
  const inPartitions = (p: string) => !partitions || partitions.includes(p);
  const covered = Object.entries(RESOURCE_TYPE_DATA.regions).filter(([, p]) => inPartitions(p));
  const uncovered = Object.values(RESOURCE_TYPE_DATA.unchecked).some(inPartitions);
  const groups = new Map<string, { regions: string[]; types: string[]; resources: CfnResource[] }>();
  const nowhere: string[] = [];
  for (const [type, list] of [...byType(resources)].sort(([a], [b]) => a.localeCompare(b))) {
    const missing = RESOURCE_TYPE_DATA.missing[type] ?? [];
    // The Regions where a resource of this type would be made and its type is missing.
    const bad = covered.filter(([r, p]) => missing.includes(r) && list.some(res => (onlyIn.get(res) ?? [p]).includes(p))).map(([r]) => r);
    if (!bad.length) continue;
    if (bad.length === covered.length && !uncovered) {
      nowhere.push(
        `${type} (${paths(list)}) in the environment-agnostic ${stackLabel(top)}: got the target partitions ${partitions!.join(', ')} (@aws-cdk/core:target-partitions), ` +
          `where no Region's CloudFormation has ${type} (${RESOURCE_TYPE_SOURCE}); allowed: partitions with a Region that has it (${regionsWith(type).join(', ')}). ` +
          `Fix: ${fixFor(type)}, or give the stack such a Region (env: { region })`,
      );
      continue;
    }
    const key = bad.join();
    const g = groups.get(key) ?? { regions: bad, types: [], resources: [] };
    g.types.push(type);
    g.resources.push(...list);
    groups.set(key, g);
  }
  if (nowhere.length) (owner as Construct).node.addValidation({ validate: () => nowhere });
  if (!groups.size || top.node.tryFindChild(RULE_ID)) return;
  new CfnRule(top, RULE_ID, {
    assertions: [...groups.values()].map(g => ({
      assert: Fn.conditionNot(Fn.conditionContains(g.regions, Aws.REGION)),
      assertDescription:
        `${stackLabel(top)} creates ${g.types.join(', ')} (${paths(g.resources)}), which this Region's CloudFormation does not have ` +
        `(${RESOURCE_TYPE_SOURCE}; the Regions without ${g.types.length > 1 ? 'them' : 'it'} are listed in this rule). Fix: ${fixFor(g.types[0])}; ` +
        'giving the stack a Region (env: { region }) has this checked at synth.',
    })),
  });
}
