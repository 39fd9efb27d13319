import { Size, Stack, StackProps, Validations } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { SageMakerInstanceType } from '../instance-types';
import { ContainerImage, ModelData } from '../model-artifacts';
import { ResilientEndpoint } from '../resilient-endpoint';
import { ExampleModelSource } from './recommender-stack';

/** Props of the clustering example. */
export interface ClusteringStackProps extends StackProps, ExampleModelSource {}

/**
 * Incident B, fixed: a K-Means clustering model on ml.m5.xlarge (4 vCPU, 16 GiB) instead of a
 * demo-grade ml.t2.medium, with workers sized from vCPUs and the model's 2.1 GB peak.
 */
export class ClusteringStack extends Stack {
  public readonly endpoint: ResilientEndpoint;

  constructor(scope: Construct, id: string, props: ClusteringStackProps = {}) {
    super(scope, id, props);
    this.endpoint = new ResilientEndpoint(this, 'Clustering', {
      model: {
        image: ContainerImage.fromImageUri(props.imageUri
          ?? '683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3'),
        modelData: ModelData.fromS3Uri(props.modelDataUrl ?? 's3://example-models-placeholder/clustering/model.tar.gz'),
        // 2.1 GB peak per copy (StandardScaler, no per-request copies).
        memoryFootprint: { host: Size.mebibytes(2100) },
      },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      instanceCount: 2,
    });
    // The example's containers read the breaker's degrade level from SSM and publish stage metrics, so
    // they need network access; a production account runs them in a VPC with SSM and CloudWatch
    // interface endpoints (model.vpc), which this self-contained example does not create.
    Validations.of(this.endpoint).acknowledge({
      id: 'RE-Network',
      reason: 'Example stack: the container needs SSM and CloudWatch; production runs it in a VPC with interface endpoints (model.vpc).',
    });
  }
}
