import { Size, Stack, StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { SageMakerInstanceType } from '../instance-types';
import { ContainerImage, ModelData } from '../model-artifacts';
import { ResilientEndpoint } from '../resilient-endpoint';
import {
  exampleAcknowledgements,
  exampleEnv,
  exampleMemoryProfile,
  ExampleModelSource,
  exampleModelArtifact,
  exampleMonitoring,
} from './recommender-stack';

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
    this.endpoint = new ResilientEndpoint(this, 'Clustering', {
      model: {
        image: props.imageUri ? ContainerImage.fromImageUri(props.imageUri) : ContainerImage.fromDlc('sagemaker-scikit-learn', '1.2-1-cpu-py3'),
        modelData: props.modelDataUrl ? ModelData.fromS3Uri(props.modelDataUrl) : ModelData.fromAsset(exampleModelArtifact('clustering')),
        // 2.1 GB peak per copy (StandardScaler, no per-request copies).
        memoryFootprint: { host: Size.mebibytes(2100) },
        // What a request adds by its rows, measured on this inference code (npm run profile:examples).
        memoryProfile: exampleMemoryProfile('clustering'),
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
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      instanceCount: 2,
      // Incident B's fix: scale out on memory as well as on requests (the QPS target never sees a fleet
      // short of memory); 2–24 instances: in the simulator's footprint model a peak needs ~12 (17×) to ~23 (25×).
      autoScaling: { capacity: { min: 2, max: 24 }, memoryTargetPercent: 70 },
      monitoring: exampleMonitoring(props),
    });
    exampleAcknowledgements(this.endpoint, props);
  }
}
