import { hasNvme, ReadinessRule, RuleLevel } from '../rule';
export const NvmeStorage: ReadinessRule = {
  id: 'RE-NvmeStorage', level: RuleLevel.ERROR,
  what: 'No KmsKeyId or VolumeSizeInGB with local-NVMe instance types',
  why: 'SageMaker rejects both on g4dn, g5 and *d types, so the deploy fails after the synth passed.',
  fix: 'Remove volumeKmsKey / volumeSize, or use an EBS-only type such as ml.m5.',
  check: e => {
    const nvme = e.variants.filter(v => hasNvme(v.instanceType));
    const out = nvme.filter(v => v.volumeSizeInGb !== undefined).map(v => `${v.variantName} (${v.instanceType}) sets VolumeSizeInGB`);
    if (e.kmsKeyId && nvme.length) out.push(`KmsKeyId with ${nvme.map(v => v.instanceType).join(', ')}`);
    return out;
  },
};
