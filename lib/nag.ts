import { Stack, Validations } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';

/**
 * Acknowledges cdk-nag's `AwsSolutions-IAM5` finding for one wildcard (a resource ARN or an
 * action) on `scope`'s policies, with the reason. Only that exact finding is acknowledged, so a
 * new wildcard added later is still reported. The finding id is rendered the way cdk-nag renders
 * it (`<LogicalId.Arn>` for references), so it survives in any consumer's stack.
 */
export function acknowledgeWildcard(scope: IConstruct, kind: 'Resource' | 'Action', value: string, reason: string): void {
  const flat = kind === 'Action' ? value : flatten(Stack.of(scope).resolve(value));
  // The plain id form works both for `cdk synth` (Validations plugin) and cdk-nag's validateScope().
  Validations.of(scope).acknowledge({ id: `AwsSolutions-IAM5[${kind}::${flat}]`, reason });
}

function flatten(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\${/g, '<').replace(/}/g, '>');
  if (typeof node === 'object' && node !== null) {
    const o = node as Record<string, any>;
    if (o['Fn::Join']) {
      const [delimiter, items] = o['Fn::Join'];
      return (items as unknown[]).map(flatten).join(delimiter);
    }
    if (o['Fn::Sub']) return flatten(o['Fn::Sub']);
    if (o['Fn::GetAtt']) return `<${flatten(o['Fn::GetAtt'][0])}.${flatten(o['Fn::GetAtt'][1])}>`;
    if (o['Fn::ImportValue']) return flatten(o['Fn::ImportValue']);
    if (o.Ref !== undefined) return `<${flatten(o.Ref)}>`;
  }
  return JSON.stringify(node);
}
