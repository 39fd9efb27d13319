import * as fs from 'fs';
import * as path from 'path';
import { Size, Stack, StackProps, Validations } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { SageMakerInstanceType } from '../instance-types';
import { ContainerImage, ModelData } from '../model-artifacts';
import { MemoryProfile } from '../memory-profile';
import { MonitoringOptions } from '../monitoring/endpoint-monitoring';
import { ResilientEndpoint } from '../resilient-endpoint';

/** Where the example's model comes from. */
export interface ExampleModelSource {
  /**
   * Container image URI.
   * @default - AWS's framework image for the stack's region (`ContainerImage.fromDlc`)
   */
  readonly imageUri?: string;
  /**
   * Model artifact S3 URI.
   * @default - the model.tar.gz this repo builds (`npm run bundle`), uploaded as a CDK asset
   */
  readonly modelDataUrl?: string;
  /**
   * E-mail addresses the alarm topic notifies (`cdk deploy -c alarmEmail=you@example.com`).
   * @default - nobody: the example acknowledges the unsubscribed-topic warning, saying so
   */
  readonly alarmEmails?: string[];
}

/**
 * What the example stacks acknowledge, with why: the containers need a network (no VPC here), and
 * without `alarmEmails` the alarm topic notifies nobody.
 */
export function exampleAcknowledgements(endpoint: ResilientEndpoint, props: ExampleModelSource): void {
  // The example's containers read the breaker's degrade level from SSM and publish stage metrics, so
  // they need network access; a production account runs them in a VPC with SSM and CloudWatch
  // interface endpoints (model.vpc), which this self-contained example does not create.
  Validations.of(endpoint).acknowledge({
    id: 'RE-Network',
    reason: 'Example stack: the container needs SSM and CloudWatch; production runs it in a VPC with interface endpoints (model.vpc).',
  });
  // Incident B's checklist items the example leaves to its owner (docs/drift.md maps them all).
  Validations.of(endpoint).acknowledge(
    {
      id: 'RE-Drift',
      reason:
        "Example stack: a drift baseline comes from the model's training data; turn on drift: { features: DriftFeatures.clusteringExample() } (or recommenderExample()) with it.",
    },
    { id: 'RE-Budget', reason: "Example stack: the monthly budget is the account owner's figure (monitoring.monthlyBudgetUsd)." },
  );
  if (!props.alarmEmails?.length) {
    Validations.of(endpoint).acknowledge({
      id: 'RE-AlarmTopicUnsubscribed',
      reason: 'Example stack deployed without -c alarmEmail=you@example.com: its alarms notify nobody.',
    });
  }
}

/** The example's monitoring: e-mail notifications when addresses are given. */
export function exampleMonitoring(props: ExampleModelSource): MonitoringOptions | undefined {
  return props.alarmEmails?.length ? { notify: { emails: props.alarmEmails } } : undefined;
}

/**
 * The example stacks' environment when none is given: the Region the CDK CLI resolved (`cdk deploy`
 * sets CDK_DEFAULT_REGION from the profile or AWS_REGION), else us-east-1, as the CLI does. A Region is
 * needed because `ContainerImage.fromDlc` refuses a region-agnostic stack that could land in a Region
 * without the image.
 */
export function exampleEnv(props: StackProps): StackProps {
  return { ...props, env: props.env ?? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION ?? 'us-east-1' } };
}

/** The model.tar.gz `scripts/build-models.py` builds for an example (source tree or packed library). */
export function exampleModelArtifact(name: string, file = 'model.tar.gz'): string {
  const candidates = [
    path.join(__dirname, '..', '..', 'models', name, file), // dist/lib/examples → dist/models
    path.join(__dirname, '..', '..', 'dist', 'models', name, file), // lib/examples → dist/models
  ];
  return candidates.find(p => fs.existsSync(p)) ?? candidates[candidates.length - 1];
}

/**
 * Where an example's memory profile is read: in the packed library, beside its model archive (dist/models);
 * in the source tree, the file itself (examples/models/<name>/memory-profile.json, which
 * `npm run profile:examples` writes), never a build's copy of it, which may be stale or not built yet.
 */
export function exampleMemoryProfilePath(name: string): string {
  const file = 'memory-profile.json';
  const candidates = [
    path.join(__dirname, '..', '..', 'models', name, file), // dist/lib/examples → dist/models (the package)
    path.join(__dirname, '..', '..', 'examples', 'models', name, file), // lib/examples → examples/models
    path.join(__dirname, '..', '..', '..', 'examples', 'models', name, file), // dist/lib/examples → examples/models
  ];
  return candidates.find(p => fs.existsSync(p)) ?? candidates[0];
}

/**
 * The example's memory profile, measured on its real inference code (`npm run profile:examples` writes
 * examples/models/<name>/memory-profile.json; `npm run bundle` copies it beside the model archive).
 */
export function exampleMemoryProfile(name: string): MemoryProfile {
  return MemoryProfile.fromFile(exampleMemoryProfilePath(name));
}

/**
 * The recommender example's traffic (incident A): 100 requests a second off-peak (the launch day's), a normal
 * day's peak of 300 (8 instances at the per-instance target), and the QPS target of each primary and fallback instance.
 */
export const RECOMMENDER_TRAFFIC = { offPeakQps: 100, nominalPeakQps: 300, qpsPerInstance: 40, fallbackQpsPerInstance: 500 } as const;

/** Props of the recommender example. */
export interface RecommenderStackProps extends StackProps, ExampleModelSource {}

/**
 * Incident A, fixed: a multi-task Transformer recommender on ml.g4dn.2xlarge (one T4, 16 GiB, 8 vCPUs,
 * 32 GiB), 2 instances off-peak, autoscaled at 40 QPS an instance up to 8 at peak,
 * the input capped by the incident's length tiers (≤ 512 normal, 512–1024 degraded, > 1024
 * rejected), with a lighter fallback variant for the breaker. Deploys as is: AWS's PyTorch GPU
 * image for the stack's region (TorchServe) and this repo's inference code (its small model is
 * generated at load time).
 */
export class RecommenderStack extends Stack {
  public readonly endpoint: ResilientEndpoint;

  constructor(scope: Construct, id: string, props: RecommenderStackProps = {}) {
    super(scope, id, exampleEnv(props));
    const image = props.imageUri
      ? ContainerImage.fromImageUri(props.imageUri)
      : ContainerImage.fromDlc('pytorch-inference', '2.3.0-gpu-py311-cu121-ubuntu20.04-sagemaker');
    const modelData = props.modelDataUrl ? ModelData.fromS3Uri(props.modelDataUrl) : ModelData.fromAsset(exampleModelArtifact('recommender'));

    this.endpoint = new ResilientEndpoint(this, 'Recommender', {
      model: {
        image,
        modelData,
        // Measured at 512 tokens, full batch: 4 GiB of GPU memory, 3 GiB of host memory per copy.
        memoryFootprint: { gpu: Size.gibibytes(4), host: Size.gibibytes(3) },
        // The memory guard's curve: measured by the profiler on this inference code (on CPU here; re-run
        // it on the GPU type before launch: the CUDA allocator's peak is what the guard judges there).
        memoryProfile: exampleMemoryProfile('recommender'),
        // Incident A's tiers: sequences over 1024 events are rejected (4XX) and logged; at degrade
        // level 1 the container truncates to 512, at level 2 it rejects anything over 512.
        environment: { MAX_SEQ_LEN: '1024', DEGRADED_MAX_SEQ_LEN: '512' },
      },
      instanceType: SageMakerInstanceType.ML_G4DN_2XLARGE,
      instanceCount: 2,
      // 2 instances off-peak (incident A's post-mortem), up to 8 at its 300-QPS peak, each at 40 QPS: the load at
      // which padded batches of the long tail stop meeting the container's budget on a normal day (the simulator's
      // footprint model, days at 300 QPS, 4 seeds: 150 QPS an instance degrades it most of the day; 50 leaves one or
      // two requests a day refused by the guard; 40 none). The target must add capacity at the example's own
      // nominal load, not only during an incident.
      autoScaling: { capacity: { min: 2, max: 8 }, qpsPerInstance: RECOMMENDER_TRAFFIC.qpsPerInstance },
      monitoring: exampleMonitoring(props),
      fallback: {
        // Same model, degraded mode: shorter sequences, secondary heads off.
        model: {
          image,
          modelData,
          memoryFootprint: { gpu: Size.gibibytes(2), host: Size.gibibytes(2) },
          environment: { MAX_SEQ_LEN: '256', DEGRADED_MAX_SEQ_LEN: '256', DEGRADED_MODE: 'true' },
        },
        instanceCount: 1,
        // What one fallback instance carries (the breaker never shifts it more: its share is capped by the fallback's
        // instances × this against the endpoint's measured traffic). Half its size and at most 256 events, it serves
        // far more than the primary: 600 QPS at under 50 % of the T4 in the simulator's footprint model.
        autoScaling: { qpsPerInstance: RECOMMENDER_TRAFFIC.fallbackQpsPerInstance },
      },
    });
    exampleAcknowledgements(this.endpoint, props);
    // The example's profile was measured on the CPU (this repository's CI has no GPU): the guard's GPU
    // curve is then an estimate. Before launch, re-profile on a g4dn and pass that memory-profile.json.
    Validations.of(this.endpoint).acknowledge({
      id: 'PrimaryCpuProfileOnGpu',
      reason: 'Example stack: profiled on the CPU (CI has no GPU); re-run the profiler on the GPU type before launch (docs/container.md).',
    });
  }
}
