import * as fs from 'fs';
import * as path from 'path';
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ClusteringStack } from '../lib/examples/clustering-stack';
import { RecommenderStack } from '../lib/examples/recommender-stack';

/** A fresh app + stack with asset bundling skipped and a fixed environment. */
export function newStack(id = 'Test'): { app: App; stack: Stack } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, id, { env: { account: '123456789012', region: 'us-east-1' } });
  return { app, stack };
}

/** Synthesizes and returns the template. Throws the validation errors, if any. */
export function template(stack: Stack): Template {
  return Template.fromStack(stack);
}

/** cdk-nag AwsSolutions findings (rule ids with construct paths) for a scope. */
export function nagFindings(stack: Stack): string[] {
  const report = new AwsSolutionsChecks().validateScope(stack);
  return report.violations.flatMap(v => v.violatingResources.map(r => `${v.ruleName} @ ${r.constructPath}`));
}

/** Warning messages (text) on a stack. */
export function warnings(stack: Stack): string[] {
  return Annotations.fromStack(stack)
    .findWarning('*', Match.anyValue())
    .map(w => String(w.entry.data));
}

/** Synthesis error text of an app (validation errors), or '' when it synthesizes. */
export function synthError(app: App): string {
  try {
    app.synth();
    return '';
  } catch (e) {
    return (e as Error).message;
  }
}

/** The example app's context from cdk.json (feature flags), so tests see what `cdk synth` sees. */
export function appContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'cdk.json'), 'utf8'));
  return { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] };
}

/** The two example stacks in one app (with cdk.json's context), synthesized once per test file. */
export function exampleStacks(): { recommender: RecommenderStack; clustering: ClusteringStack; rec: Template; clu: Template } {
  // Once per test file (jest loads this module once per file): a second call returns the same stacks, so a
  // suite that calls it in two places does not synthesize both example apps twice. Read them; do not add to them.
  if (!examples) {
    const app = new App({ context: appContext() });
    const recommender = new RecommenderStack(app, 'Rec');
    const clustering = new ClusteringStack(app, 'Clu');
    examples = { recommender, clustering, rec: Template.fromStack(recommender), clu: Template.fromStack(clustering) };
  }
  return examples;
}
let examples: ReturnType<typeof exampleStacks> | undefined;

/** Every IAM policy statement of a template (a Template, or its JSON), in template order. */
export function iamStatements(t: Template | { Resources?: Record<string, any> }): any[] {
  const json = t instanceof Template ? t.toJSON() : t;
  return Object.values(json.Resources ?? {})
    .filter((r: any) => r.Type === 'AWS::IAM::Policy')
    .flatMap((r: any) => r.Properties.PolicyDocument.Statement);
}

/** What a test says its references deploy as (a `Ref`'s logical id; a `Fn::GetAtt`'s logical id and attribute). */
export interface Resolvers {
  readonly ref: (logicalId: string) => string;
  readonly getAtt?: (logicalId: string, attribute: string) => string;
}

/**
 * A CloudFormation value as the string it deploys as: strings as they are, `Fn::Join` joined, `Ref` and
 * `Fn::GetAtt` as the test's resolvers say. Anything else (or a `Fn::GetAtt` without a resolver) is an error,
 * so a template that starts using another intrinsic shows in the test.
 */
export function deployedValue(v: unknown, r: Resolvers): string {
  if (typeof v === 'string') return v;
  const o = v as Record<string, any> | undefined;
  if (o?.Ref !== undefined) return r.ref(o.Ref);
  if (o?.['Fn::GetAtt'] && r.getAtt) return r.getAtt(o['Fn::GetAtt'][0], o['Fn::GetAtt'][1]);
  if (o?.['Fn::Join']) return (o['Fn::Join'][1] as unknown[]).map(x => deployedValue(x, r)).join(o['Fn::Join'][0]);
  throw new Error(`unexpected CloudFormation value ${JSON.stringify(v)}`);
}
