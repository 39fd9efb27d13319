// aws-cdk-lib (2.273 and later) checks every synthesized template against CloudFormation's resource
// schemas with a WASM engine, on every `app.synth()` and every `Template.fromStack`. The suites
// synthesize hundreds of apps; with that check on each, jest took twice as long. So the suites turn it
// off here, and test/cfn-validation.test.ts turns it back on, with errors and warnings failing, for
// every shape of stack the library ships (the example stacks, a fleet, a shared breaker, an endpoint
// with every option). `npm run synth` runs it on the example app as well (cdk.json sets
// @aws-cdk/core:validateAgainstDefaultRules). CDK_VALIDATION is the switch aws-cdk-lib documents for it.
process.env.CDK_VALIDATION ??= 'false';
