import { hasNvme, IReadinessRule, RuleLevel } from '../rule';
export const NvmeStorage: IReadinessRule = {
  id: 'RE-NvmeStorage',
  level: RuleLevel.ERROR,
  what: 'No VolumeSizeInGB on local-NVMe instance types (production and shadow variants)',
  why: 'SageMaker rejects VolumeSizeInGB on g4dn, g5 and *d types ("VolumeSize parameter is not allowed for the selected Instance type"), so the deploy fails after the synth passed. (A KmsKeyId is accepted there but does not encrypt the local NVMe, per the current CreateEndpointConfig API text.)',
  fix: 'Remove volumeSize, or use an EBS-only type such as ml.m5.',
  check: e =>
    e.variants
      .filter(v => hasNvme(v.instanceType) && v.volumeSizeInGb !== undefined)
      .map(v => `${v.variantName} (${v.instanceType}) sets VolumeSizeInGB`),
};
