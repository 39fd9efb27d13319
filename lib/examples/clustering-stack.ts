import { Size, Stack, StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { SageMakerInstanceType } from '../instance-types';
import { ContainerImage, ModelData } from '../model-artifacts';
import { CapacityPlan } from '../capacity-plan';
import { QPS_TARGET_UTILISATION, ResilientEndpoint } from '../resilient-endpoint';
import {
  exampleAcknowledgements,
  exampleEnv,
  exampleMemoryProfile,
  ExampleModelSource,
  exampleModelArtifact,
  exampleMonitoring,
} from './recommender-stack';

/**
 * The clustering example's traffic (incident B): 40 requests a second off-peak, peaks at 17× that, and on a
 * normal day a peak of 200 (the post-mortem's sizing example: 50 ms × 200 QPS).
 */
export const CLUSTERING_TRAFFIC = { offPeakQps: 40, peakFactor: 17, nominalPeakQps: 200 } as const;

/** Props of the clustering example. */
export interface ClusteringStackProps extends StackProps, ExampleModelSource {}

/**
 * Incident B, fixed: a K-Means clustering model on ml.m5.xlarge (4 vCPU, 16 GiB) instead of a
 * demo-grade ml.t2.medium, with workers sized from vCPUs and the model's 2.1 GB peak. Deploys as is:
 * AWS's scikit-learn image for the stack's region, and a real model this repo builds (centroids
 * fitted on examples/models/clustering/data, packed with its inference code by `npm run bundle`).
 */
export class ClusteringStack extends Stack {
  public readonly endpoint: ResilientEndpoint;

  constructor(scope: Construct, id: string, props: ClusteringStackProps = {}) {
    super(scope, id, exampleEnv(props));
    const profile = exampleMemoryProfile('clustering');
    // Sized by the library's planner for incident B's traffic: peaks at 17× its 40 QPS off-peak, reached within
    // minutes — faster than target tracking can add a CPU instance (3 one-minute datapoints, CloudWatch's delay,
    // then the instance's start), so the fleet's minimum must carry the peak. The planner's latency is the
    // profile's mean (2.1 ms, measured on a quiet machine): with a long tail the median understates the work a vCPU
    // does per request. At incident B's 680-QPS peak that is 2 busy vCPUs: the planner's minimum of 2 instances.
    const meanLatencyMs = profile.meanLatencyMs() ?? 50;
    const plan = CapacityPlan.compute({
      p50LatencyMs: meanLatencyMs,
      peakQps: CLUSTERING_TRAFFIC.offPeakQps * CLUSTERING_TRAFFIC.peakFactor,
      modelMemory: Size.mebibytes(2100),
      candidates: [SageMakerInstanceType.ML_M5_XLARGE],
    });
    // What one instance serves (its busy vCPUs over the mean latency), and the QPS target at 70 % of it.
    const served = (Math.min(plan.workersPerInstance, SageMakerInstanceType.ML_M5_XLARGE.spec.vCpus) * 1000) / meanLatencyMs;
    this.endpoint = new ResilientEndpoint(this, 'Clustering', {
      model: {
        image: props.imageUri ? ContainerImage.fromImageUri(props.imageUri) : ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3'),
        modelData: props.modelDataUrl ? ModelData.fromS3Uri(props.modelDataUrl) : ModelData.fromAsset(exampleModelArtifact('clustering')),
        // 2.1 GB peak per copy (StandardScaler, no per-request copies).
        memoryFootprint: { host: Size.mebibytes(2100) },
        // What a request adds by its rows, measured on this inference code (npm run profile:examples).
        memoryProfile: profile,
        environment: {
          // The inference code travels inside model.tar.gz (code/), as the SageMaker Python SDK packs it.
          SAGEMAKER_PROGRAM: 'inference.py',
          SAGEMAKER_SUBMIT_DIRECTORY: '/opt/ml/model/code',
          // Incident B: bounded requests (rows per request: 200,000 is about what 6 MiB of CSV holds);
          // 20,000 when degraded, longer ones refused when critical.
          MAX_SEQ_LEN: '200000',
          DEGRADED_MAX_SEQ_LEN: '20000',
        },
      },
      instanceType: plan.instanceType,
      instanceCount: plan.instanceCount,
      // Incident B's fix: scale out on memory as well as on requests (the QPS target never sees a fleet
      // short of memory); up to 24 instances: in the simulator's footprint (stress) model a 25× peak needs ~23.
      autoScaling: {
        capacity: { min: plan.instanceCount, max: 24 },
        qpsPerInstance: Math.floor(QPS_TARGET_UTILISATION * served),
        memoryTargetPercent: 70,
      },
      monitoring: exampleMonitoring(props),
    });
    exampleAcknowledgements(this.endpoint, props);
  }
}
