import { SageMakerInstanceType } from '../../instance-types';
import { IReadinessRule, RuleLevel } from '../rule';

/**
 * On a type with several GPUs, every worker lands on GPU 0 unless its handler places it: the inference
 * toolkit passes the worker's GPU only to `model_fn(model_dir, context)`, as
 * `context.system_properties["gpu_id"]`; `torch.device("cuda")` is GPU 0 for every worker (real-account.md
 * item 40: aws/sagemaker-inference-toolkit `transformer.py`; aws/sagemaker-huggingface-inference-toolkit
 * issue 66). Nothing in a template says what `inference.py` does, so this is a warning to acknowledge once
 * the handler places its workers.
 */
export const GpuPlacement: IReadinessRule = {
  id: 'RE-GpuPlacement',
  level: RuleLevel.WARNING,
  what: 'On a multi-GPU type, each worker is placed on its own GPU by model_fn(model_dir, context)',
  why: 'Without the context argument every worker loads its model on GPU 0: one GPU holds all the copies and runs out of memory while the others idle.',
  fix: 'Define model_fn(model_dir, context) and place the model on context.system_properties["gpu_id"] (torch.device(f"cuda:{gpu_id}")), pass context to MemoryGuard.from_environment, then acknowledge RE-GpuPlacement; or serve on a single-GPU type such as ml.g5.xlarge.',
  check: e =>
    e.variants.flatMap(v => {
      const t = SageMakerInstanceType.of(v.instanceType);
      return !t.specUnknown && t.spec.gpuCount > 1
        ? [`${v.variantName}: ${v.instanceType} has ${t.spec.gpuCount} GPUs; workers find theirs only through model_fn(model_dir, context)`]
        : [];
    }),
};
