import * as fs from 'fs';
import * as path from 'path';
import {
  CfnResource,
  IPolicyValidationContext,
  IPolicyValidationPlugin,
  NestedStack,
  PolicyValidationPluginReport,
  PolicyViolation,
  Stack,
  Validations,
} from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { collectEndpoints } from './facts';
import { IReadinessRule, RuleLevel } from './rule';
import { AutoScaling } from './rules/auto-scaling';
import { BreakerLogRetention } from './rules/breaker-log-retention';
import { Budget } from './rules/budget';
import { CircuitBreaker } from './rules/circuit-breaker';
import { DataCapture } from './rules/data-capture';
import { DeploymentGuardrails } from './rules/deployment-guardrails';
import { Drift } from './rules/drift';
import { GpuPlacement } from './rules/gpu-placement';
import { GuardBudget } from './rules/guard-budget';
import { MemoryAlarm } from './rules/memory-alarm';
import { MultiInstance } from './rules/multi-instance';
import { Network } from './rules/network';
import { NoBurstable } from './rules/no-burstable';
import { NvmeStorage } from './rules/nvme-storage';
import { ProfiledMemory } from './rules/profiled-memory';
import { RequestSize } from './rules/request-size';
import { WorkerMemory } from './rules/worker-memory';

export { collectEndpoints, valueKey } from './facts';
export type { BreakerFacts, DataCaptureFacts, EndpointFacts, ScalingFacts, VariantFacts } from './facts';
export { RuleLevel } from './rule';
export type { IReadinessRule } from './rule';

/** Every rule of the pack. */
export const READINESS_RULES: IReadinessRule[] = [
  MultiInstance,
  AutoScaling,
  NoBurstable,
  MemoryAlarm,
  CircuitBreaker,
  DataCapture,
  RequestSize,
  WorkerMemory,
  DeploymentGuardrails,
  Network,
  BreakerLogRetention,
  NvmeStorage,
  ProfiledMemory,
  Drift,
  Budget,
  GpuPlacement,
  GuardBudget,
];

/** One finding. */
export interface ReadinessFinding {
  readonly ruleId: string;
  readonly level: RuleLevel;
  readonly stack: string;
  readonly resource: string;
  readonly message: string;
}

/** Pure: runs the rules over one template. */
export function checkTemplate(template: any, stack: string = 'template', rules: IReadinessRule[] = READINESS_RULES): ReadinessFinding[] {
  return collectEndpoints(template).flatMap(e =>
    rules.flatMap(r =>
      r.check(e).map(message => ({
        ruleId: r.id,
        level: r.level,
        stack,
        resource: e.endpointLogicalId ?? e.configLogicalId,
        message: `${message}. Why: ${r.why} Fix: ${r.fix}`,
      })),
    ),
  );
}

/**
 * Production-readiness checks for `cdk synth` in CI, registered like cdk-nag v3:
 * `Validations.of(app).addPlugins(new ProductionReadinessChecks())`. Errors make synth exit
 * non-zero; warnings are reported. A finding is acknowledged on the endpoint's construct (or any
 * parent) with `Validations.of(scope).acknowledge({ id: 'RE-MultiInstance', reason: '…' })`.
 */
export class ProductionReadinessChecks implements IPolicyValidationPlugin {
  /** The rules, in the order they run. */
  public static readonly RULES: IReadinessRule[] = READINESS_RULES;

  /**
   * Runs the rules over one synthesized template (its JSON, e.g. `Template.fromStack(stack).toJSON()`)
   * without registering a plugin: for tests and for checking templates made elsewhere.
   * @param template the template's JSON
   * @param stack a name for the template in findings; default 'template'
   * @param rules the rules to run; default all of `RULES`
   */
  public static checkTemplate(template: any, stack?: string, rules?: IReadinessRule[]): ReadinessFinding[] {
    return checkTemplate(template, stack, rules);
  }

  public readonly name = 'ProductionReadiness';
  public readonly version?: string = '0.1.0';
  public readonly ruleIds?: string[] = READINESS_RULES.map(r => r.id);

  public validate(context: IPolicyValidationContext): PolicyValidationPluginReport {
    const findings: { f: ReadinessFinding; templatePath: string; path?: string }[] = [];
    for (const st of templatesOf(context)) {
      const template = JSON.parse(fs.readFileSync(st.templatePath, 'utf8'));
      const stack = st.stack ?? context.appConstruct.node.findAll().find(c => c.node.path === st.stackConstructPath);
      for (const f of checkTemplate(template, st.stackConstructPath)) {
        const resource = stack ? findByLogicalId(stack, f.resource) : undefined;
        if (resource && isAcknowledged(resource, f.ruleId)) continue;
        findings.push({ f, templatePath: st.templatePath, path: resource?.node.path });
      }
    }
    const violations: PolicyViolation[] = findings.map(({ f, templatePath, path }) => ({
      ruleName: f.ruleId,
      description: f.message,
      severity: f.level,
      fix: READINESS_RULES.find(r => r.id === f.ruleId)?.fix,
      violatingResources: [{ resourceLogicalId: f.resource, templatePath, locations: ['Properties'], constructPath: path }],
    }));
    return { success: !findings.some(x => x.f.level === RuleLevel.ERROR), violations };
  }
}

/**
 * Every template to check: the stacks the validation context lists, and the nested stacks inside them
 * (a ResilientEndpointFleet's endpoints live in nested stacks). A nested stack's template is written
 * beside its top-level stack's, as `<id>.nested.template.json`, in that stack's cloud assembly (a
 * Stage's stacks are in the Stage's own `assembly-<stage>/` directory), so each is looked up by its
 * top-level stack; a nested stack whose top-level stack the context does not list is left out, as
 * that stack is (aws-cdk-lib decides which stacks a plugin sees).
 */
function templatesOf(context: IPolicyValidationContext): { templatePath: string; stackConstructPath: string; stack?: IConstruct }[] {
  const top = context.stackTemplates.map(st => ({ templatePath: st.templatePath, stackConstructPath: st.stackConstructPath }));
  const dirOf = new Map(top.map(st => [st.stackConstructPath, path.dirname(st.templatePath)]));
  const nested = context.appConstruct.node.findAll().flatMap(c => {
    if (!NestedStack.isNestedStack(c)) return [];
    let root: Stack = c;
    while (root.nestedStackParent) root = root.nestedStackParent;
    const dir = dirOf.get(root.node.path);
    return dir === undefined ? [] : [{ templatePath: path.join(dir, c.templateFile), stackConstructPath: c.node.path, stack: c as IConstruct }];
  });
  return [...top, ...nested];
}

function findByLogicalId(scope: IConstruct, logicalId: string): IConstruct | undefined {
  return scope.node.findAll().find(c => CfnResource.isCfnResource(c) && Stack.of(c).resolve((c as CfnResource).logicalId) === logicalId);
}

/** True when the rule was acknowledged on the resource's construct or a parent. */
function isAcknowledged(resource: IConstruct, ruleId: string): boolean {
  return resource.node.scopes.some(c =>
    c.node.metadata.some(
      m =>
        m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY &&
        Object.keys(m.data ?? {}).some(k => k.replace(/^(annotation|ProductionReadiness)::/i, '') === ruleId),
    ),
  );
}
