// aws-cdk-lib (2.273 and later) checks every synthesized template against CloudFormation's resource
// schemas with a WASM engine, on every `app.synth()` and every `Template.fromStack`. The suites
// synthesize hundreds of apps; with that check on each, jest took twice as long. So the suites turn it
// off here, and test/cfn-validation.test.ts turns it back on, with errors and warnings failing, for
// every shape of stack the library ships (the example stacks, a fleet, a shared breaker, an endpoint
// with every option). `npm run synth` runs it on the example app as well (cdk.json sets
// @aws-cdk/core:validateAgainstDefaultRules). CDK_VALIDATION is the switch aws-cdk-lib documents for it.
process.env.CDK_VALIDATION ??= 'false';
// aws-cdk-lib records a stack trace for every CloudFormation element it creates and every annotation
// (debugging metadata in the cloud assembly's manifest, never in a template). Under jest each trace
// goes through its source-map support, frame by frame: a quarter of the template suites' CPU. The
// suites turn both off with the context keys aws-cdk-lib defines for it (cx-api's
// DISABLE_CREATION_STACK_TRACES and DISABLE_METADATA_STACK_TRACE), read by every App, also the
// implicit one of a bare `new Stack()`, from CDK_CONTEXT_JSON. `cdk synth` (npm run synth) keeps them.
process.env.CDK_CONTEXT_JSON ??= JSON.stringify({ 'aws:cdk:disable-creation-stack-traces': true, 'aws:cdk:disable-stack-trace': true });
