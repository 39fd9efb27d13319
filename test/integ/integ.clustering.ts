/**
 * Integration test of the clustering example in a real account, in the CDK convention
 * (@aws-cdk/integ-tests-alpha): deploy, invoke with the README's request and check the answer, run a
 * drill step (the override the breaker honours, written to its state item), check the level the breaker
 * publishes and the container applies, end the drill and check the level returns; then destroy.
 *
 * `npm test` synthesizes it (test/integ.test.ts). A maintainer with an account deploys it (integ-runner
 * cannot read current cloud assemblies, toolchain.md):
 *   npx cdk deploy --app 'npx tsx test/integ/integ.clustering.ts' --all --require-approval never
 *   npx cdk destroy --app 'npx tsx test/integ/integ.clustering.ts' --all --force
 * The assertions run as custom resources during the deploy of the assertions stack; a failed one fails it.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { ExpectedResult, IntegTest, Match } from '@aws-cdk/integ-tests-alpha';
import { ClusteringStack } from '../../lib/examples/clustering-stack';
import { exampleEnv } from '../../lib/examples/recommender-stack';
import { serializeState } from '../../lib/breaker/policy';

/** The README's request and the clusters its three points fall in (the example's fitted k-means). */
export const README_REQUEST = '{"instances": [[2, 2], [8, 3], [5, 8]]}';

export function buildIntegApp(app: App): { integ: IntegTest; stack: ClusteringStack; assertionStack: Stack } {
  const stack = new ClusteringStack(app, 'IntegClustering');
  const endpointName = stack.endpoint.endpointName;
  const breaker = stack.endpoint.circuitBreaker!;
  // The assertions live in the example's own account and Region (its stack has an env: cross-environment
  // references would need physical names).
  const assertionStack = new Stack(app, 'IntegClusteringAssertions', exampleEnv({}));
  const integ = new IntegTest(app, 'ClusteringInteg', { testCases: [stack], diffAssets: true, assertionStack });
  const invoke = () =>
    integ.assertions.awsApiCall('SageMakerRuntime', 'invokeEndpoint', {
      EndpointName: endpointName,
      ContentType: 'application/json',
      Body: README_REQUEST,
    });

  // 1. The README's request: three rows, three clusters, nothing truncated, level 0.
  const served = invoke().expect(
    ExpectedResult.objectLike({ Body: Match.stringLikeRegexp('"clusters": \\[0, 2, 1\\].*"truncated": 0.*"degradeLevel": 0') }),
  );

  // 2. A drill step: DEGRADED through the override (expiring in a day at the latest), the function run at once.
  const drill = (until: number) =>
    integ.assertions.awsApiCall('DynamoDB', 'putItem', {
      TableName: breaker.stateTable.tableName,
      Item: {
        pk: { S: 'breaker' },
        // Above any version an evaluation wrote: the breaker's next conditional write builds on it.
        version: { N: String(until === 1 ? 2_000_000 : 1_000_000) },
        state: {
          S: serializeState({ state: 'CLOSED', since: 0, share: 0, entryShare: 0, step: 0, drill: { to: 'DEGRADED', until, id: 'integ' } }, [
            'integ drill',
          ]),
        },
      },
    });
  const start = drill(Date.now() + 24 * 3_600_000);
  const run = () =>
    integ.assertions.invokeFunction({
      functionName: breaker.function.functionName,
      payload: JSON.stringify({ source: 'aws.events', 'detail-type': 'Scheduled Event', detail: { drill: true } }),
    });
  const level = (n: number) =>
    integ.assertions
      .awsApiCall('SSM', 'getParameter', { Name: breaker.parameter.parameterName })
      .expect(ExpectedResult.objectLike({ Parameter: { Value: Match.stringLikeRegexp(`"level":${n}`) } }))
      .waitForAssertions({ totalTimeout: Duration.minutes(3), interval: Duration.seconds(15) });
  // The container reads the level once per instance every 10 s ± 20 %.
  const applied = (n: number) =>
    invoke()
      .expect(ExpectedResult.objectLike({ Body: Match.stringLikeRegexp(`"degradeLevel": ${n}`) }))
      .waitForAssertions({ totalTimeout: Duration.minutes(2), interval: Duration.seconds(10) });

  // 3. End the drill (expired) and watch the level come back to 0 (the breaker's own recovery: minutes).
  const end = drill(1);
  const recovered = integ.assertions
    .awsApiCall('SSM', 'getParameter', { Name: breaker.parameter.parameterName })
    .expect(ExpectedResult.objectLike({ Parameter: { Value: Match.stringLikeRegexp('"level":0') } }))
    .waitForAssertions({ totalTimeout: Duration.minutes(30), interval: Duration.minutes(1) });

  served.next(start).next(run()).next(level(1)).next(applied(1)).next(end).next(run()).next(recovered);
  return { integ, stack, assertionStack };
}

if (require.main === module) {
  const app = new App();
  buildIntegApp(app);
  app.synth();
}
