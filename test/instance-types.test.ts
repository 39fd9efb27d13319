// The instance catalog (lib/instance-types.ts).
import { SageMakerInstanceType } from '../lib';

describe('instance catalog', () => {
  test.each([
    ['ml.g4dn.xlarge', 4, 16, 1, 16, true],
    ['ml.g4dn.12xlarge', 48, 192, 4, 16, true],
    ['ml.g5.48xlarge', 192, 768, 8, 24, true],
    ['ml.m5.xlarge', 4, 16, 0, 0, false],
    ['ml.m5.24xlarge', 96, 384, 0, 0, false],
    ['ml.c5.9xlarge', 36, 72, 0, 0, false],
    ['ml.r5.large', 2, 16, 0, 0, false],
    ['ml.t2.medium', 2, 4, 0, 0, false],
  ])('%s has %d vCPU, %d GiB, %d GPU × %d GiB, NVMe=%s', (name, vcpu, mem, gpus, gpuMem, nvme) => {
    const t = SageMakerInstanceType.of(name);
    expect(t.specUnknown).toBe(false);
    expect(t.spec).toMatchObject({ vCpus: vcpu, memoryGiB: mem, gpuCount: gpus, gpuMemoryGiB: gpuMem });
    expect(t.hasLocalNvme).toBe(nvme);
  });

  test('every g4dn and m5 size of SageMaker hosting is in the catalog', () => {
    const names = SageMakerInstanceType.all().map(t => t.name);
    for (const s of ['xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge']) expect(names).toContain(`ml.g4dn.${s}`);
    for (const s of ['large', 'xlarge', '2xlarge', '4xlarge', '12xlarge', '24xlarge']) expect(names).toContain(`ml.m5.${s}`);
  });

  test('unknown types: spec from the caller, NVMe and burstable from the name', () => {
    const custom = SageMakerInstanceType.of('ml.p4d.24xlarge', { vCpus: 96, memoryGiB: 1152, gpuCount: 8, gpuMemoryGiB: 40 });
    expect(custom.specUnknown).toBe(false);
    expect(custom.hasLocalNvme).toBe(true);
    const bare = SageMakerInstanceType.of('ml.m6id.large');
    expect(bare.specUnknown).toBe(true);
    expect(bare.hasLocalNvme).toBe(true);
    expect(SageMakerInstanceType.of('ml.t3.medium').isBurstable).toBe(true);
    expect(SageMakerInstanceType.of('ml.m6i.large').hasLocalNvme).toBe(false);
  });
});
