import { Size, Stack, StackProps } from 'aws-cdk-lib';
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
  }
}
