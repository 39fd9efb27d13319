// The endpoint's prop checks one by one (lib/private/prop-checks.ts): each problem's exact message and
// the stand-in that lets synthesis go on to report the others. test/bad-input.test.ts checks the same
// rules through ResilientEndpoint, one row per bad prop; this pins their bounds and stand-ins.
import { App, Aws, Duration, NestedStack, Size, Stack, Token } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { ContainerImage, SageMakerInstanceType } from '../lib';
import {
  duplicateEndpointNames,
  MISSING_IMAGE,
  publishingSettings,
  requireProps,
  storageSettings,
  validateEndpointName,
  validateGuardBudgetOrder,
  validateInstanceType,
  validateVariantName,
} from '../lib/private/prop-checks';
import type { VariantInfo } from '../lib/resilient-endpoint-props';
import { isInstanceSize, nearestCatalogType } from '../lib/instance-types';
import { closest, editDistance } from '../lib/private/suggest';
import { fractionWarning, PropErrors } from '../lib/validation';
import { checkUnitProps, UNIT_PROPS } from '../lib/private/unit-props';
import { interfaceProps, libSources } from './jsdoc';
import { warnings } from './util';

const NAME_RULE = 'letters, digits and hyphens, 1–63 characters, starting and ending with a letter or digit';

describe('endpoint and variant names (SageMaker: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62})', () => {
  test.each(['a', '7', 'A1', 'rank-v2', 'a--b', 'a'.repeat(63)])('%s is accepted as it is', name => {
    const e = new PropErrors();
    expect(validateEndpointName(e, name)).toBe(name);
    expect(validateVariantName(e, 'variantName', name)).toBe(name);
    expect(e.all).toEqual([]);
  });

  test.each(['', '-a', 'a-', 'a_b', 'a b', 'a.b', 'a'.repeat(64)])('%j is refused, with a stand-in so synthesis goes on', name => {
    const e = new PropErrors();
    expect(validateEndpointName(e, name)).toBe('invalid-endpoint-name');
    expect(validateVariantName(e, 'fallback.variantName', name)).toBe('InvalidfallbackvariantName');
    expect(e.all).toEqual([
      `endpointName: got '${name}'; allowed: ${NAME_RULE}. Fix: rename the endpoint, e.g. 'recommender-prod', or omit endpointName for a generated one`,
      `fallback.variantName: got '${name}'; allowed: ${NAME_RULE}. Fix: use e.g. 'Primary'`,
    ]);
  });

  test('a name that is a token is known only at deploy: passed through unchecked', () => {
    const e = new PropErrors();
    const name = `${Aws.STACK_NAME}_x`;
    expect(validateEndpointName(e, name)).toBe(name);
    expect(validateVariantName(e, 'variantName', name)).toBe(name);
    expect(e.all).toEqual([]);
  });
});

describe('required props a plain-JavaScript caller may leave out', () => {
  const image = ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1');

  test('both given: returned as they are, no error', () => {
    const e = new PropErrors();
    const props = { model: { image }, instanceType: SageMakerInstanceType.ML_G4DN_XLARGE, endpointName: 'x' };
    expect(requireProps(e, props)).toEqual(props);
    expect(e.all).toEqual([]);
  });

  test('nothing at all: both named, with stand-ins (a placeholder image, ml.m5.xlarge)', () => {
    const e = new PropErrors();
    const p = requireProps(e, undefined);
    expect(e.all).toEqual([
      "model: got nothing; allowed: a model with a container image. Fix: pass model: { image: ContainerImage.fromImageUri('…'), modelData: ModelData.fromS3Uri('s3://…/model.tar.gz') }",
      "instanceType: got nothing; allowed: a SageMakerInstanceType. Fix: pass e.g. SageMakerInstanceType.ML_M5_XLARGE, or SageMakerInstanceType.of('ml.m5.xlarge')",
    ]);
    expect(p.model.image).toEqual(ContainerImage.fromImageUri(MISSING_IMAGE));
    expect(p.instanceType).toBe(SageMakerInstanceType.ML_M5_XLARGE);
  });

  test('a model without an image, and an instance type given as a string: each named, the string kept as the type', () => {
    const e = new PropErrors();
    const p = requireProps(e, { model: { environment: { A: '1' } } as any, instanceType: 'ml.c5.2xlarge' as any });
    expect(e.all).toEqual([
      "model.image: got nothing; allowed: a model with a container image. Fix: pass model: { image: ContainerImage.fromImageUri('…'), modelData: ModelData.fromS3Uri('s3://…/model.tar.gz') }",
      "instanceType: got 'ml.c5.2xlarge'; allowed: a SageMakerInstanceType. Fix: pass e.g. SageMakerInstanceType.ML_M5_XLARGE, or SageMakerInstanceType.of('ml.m5.xlarge')",
    ]);
    expect(p.model).toEqual({ environment: { A: '1' }, image: ContainerImage.fromImageUri(MISSING_IMAGE) });
    expect(p.instanceType.name).toBe('ml.c5.2xlarge');
  });
});

describe("metric publishing (the endpoint config's MetricsConfig)", () => {
  const settings = (o?: Parameters<typeof publishingSettings>[1]) => {
    const e = new PropErrors();
    return { s: publishingSettings(e, o), errors: e.all };
  };

  test('by default: every 10 s with enhanced (per-GPU) metrics, detailed observability off', () => {
    expect(settings()).toEqual({ s: { configured: true, frequencySeconds: 10, enhancedMetrics: true, detailedObservability: false }, errors: [] });
  });

  test.each([10, 30, 60, 120, 180, 240, 300])('every %i s is a frequency SageMaker accepts', f => {
    expect(settings({ frequency: Duration.seconds(f) })).toEqual({
      s: { configured: true, frequencySeconds: f, enhancedMetrics: true, detailedObservability: false },
      errors: [],
    });
  });

  test('another frequency is refused; 60 s stands in', () => {
    expect(settings({ frequency: Duration.seconds(45) })).toEqual({
      s: { configured: true, frequencySeconds: 60, enhancedMetrics: true, detailedObservability: false },
      errors: [
        'metricPublishing.frequency (s): got 45; allowed: 10, 30, 60, 120, 180, 240, 300. Fix: use e.g. Duration.seconds(10) or Duration.minutes(1)',
      ],
    });
  });

  test('the switches are used as given', () => {
    expect(settings({ enhancedMetrics: false, detailedObservability: true }).s).toEqual({
      configured: true,
      frequencySeconds: 10,
      enhancedMetrics: false,
      detailedObservability: true,
    });
  });

  test("off: SageMaker's defaults (60 s, no per-GPU series); off with a setting is a contradiction", () => {
    const off = { configured: false, frequencySeconds: 60, enhancedMetrics: false, detailedObservability: false };
    expect(settings({ enabled: false })).toEqual({ s: off, errors: [] });
    const contradiction =
      'metricPublishing: got enabled: false with frequency, enhancedMetrics or detailedObservability; allowed: either MetricsConfig (enabled) or none at all. Fix: drop the other settings, or leave enabled on';
    for (const o of [{ frequency: Duration.seconds(10) }, { enhancedMetrics: true }, { detailedObservability: true }]) {
      expect(settings({ enabled: false, ...o })).toEqual({ s: off, errors: [contradiction] });
    }
    expect(settings({ enabled: false, enhancedMetrics: false, detailedObservability: false }).errors).toEqual([]);
  });
});

describe('storage: the volume size and key against the variants’ instance types', () => {
  const variant = (t: SageMakerInstanceType) => ({ variantName: 'V', instanceType: t, instanceCount: 1, initialWeight: 1 }) as VariantInfo;
  const run = (props: { volumeSize?: Size; volumeKmsKey?: unknown }, types: SageMakerInstanceType[]) => {
    const stack = new Stack(new App(), 'S');
    const scope = new Construct(stack, 'E');
    const e = new PropErrors();
    const s = storageSettings(scope, e, props, types.map(variant));
    return {
      s,
      errors: e.all,
      warnings: warnings(stack),
    };
  };

  test('EBS-only types: the size in GiB, a key warns of nothing', () => {
    expect(run({ volumeSize: Size.gibibytes(100), volumeKmsKey: {} }, [SageMakerInstanceType.ML_M5_XLARGE])).toEqual({
      s: { volumeGiB: 100, ebsOnly: true },
      errors: [],
      warnings: [],
    });
    expect(run({}, [SageMakerInstanceType.ML_M5_XLARGE]).s).toEqual({ volumeGiB: undefined, ebsOnly: true });
  });

  test('a local-NVMe type: a volume size is refused (SageMaker rejects VolumeSizeInGB), a key warns that it does not reach the NVMe', () => {
    const r = run({ volumeSize: Size.gibibytes(100), volumeKmsKey: {} }, [SageMakerInstanceType.ML_M5_XLARGE, SageMakerInstanceType.ML_G4DN_XLARGE]);
    expect(r.s).toEqual({ volumeGiB: 100, ebsOnly: false });
    expect(r.errors).toEqual([
      'volumeSize: got 100 GiB; allowed: no volume size on instance types with local NVMe storage (ml.g4dn.xlarge). Fix: remove volumeSize: those types use their local NVMe disk and SageMaker rejects VolumeSizeInGB',
    ]);
    expect(r.warnings).toEqual([
      expect.stringMatching(
        /^volumeKmsKey does not encrypt the local NVMe storage of ml\.g4dn\.xlarge: that storage is encrypted by a hardware module on the instance\. The key is still set on the endpoint config\. \[ack: Annotation::VolumeKmsKeyOnNvme\]$/,
      ),
    ]);
    expect(run({}, [SageMakerInstanceType.ML_G4DN_XLARGE])).toEqual({ s: { volumeGiB: undefined, ebsOnly: false }, errors: [], warnings: [] });
    // Several local-NVMe types are each named once.
    const two = run({ volumeSize: Size.gibibytes(50), volumeKmsKey: {} }, [
      SageMakerInstanceType.ML_G4DN_XLARGE,
      SageMakerInstanceType.ML_G4DN_XLARGE,
      SageMakerInstanceType.ML_G4DN_12XLARGE,
    ]);
    expect(two.errors[0]).toContain('(ml.g4dn.xlarge, ml.g4dn.12xlarge)');
    expect(two.warnings[0]).toContain('local NVMe storage of ml.g4dn.xlarge, ml.g4dn.12xlarge:');
  });

  test.each([
    [Size.gibibytes(1), []],
    [Size.gibibytes(512), []],
    [Size.mebibytes(512), ['volumeSize (GiB): got 0.5; allowed: an integer from 1 to 512. Fix: use Size.gibibytes(1..512)']],
    [Size.gibibytes(513), ['volumeSize (GiB): got 513; allowed: an integer from 1 to 512. Fix: use Size.gibibytes(1..512)']],
  ])('volume size %s', (size, expected) => {
    expect(run({ volumeSize: size }, [SageMakerInstanceType.ML_M5_XLARGE]).errors).toEqual(expected);
  });
});

describe('instance types: the name and, when given, the hardware', () => {
  const run = (t: SageMakerInstanceType) => {
    const stack = new Stack(new App(), 'S');
    const scope = new Construct(stack, 'E');
    const e = new PropErrors();
    validateInstanceType(scope, e, 'instanceType', t);
    return {
      errors: e.all,
      warnings: warnings(stack),
    };
  };

  test('a catalog type: nothing to say', () => {
    expect(run(SageMakerInstanceType.ML_G5_12XLARGE)).toEqual({ errors: [], warnings: [] });
  });

  test('a name that is not ml.<family>.<size>: the catalog type it was probably meant to be, when one is that close', () => {
    const shape = "allowed: an ml.* instance type such as 'ml.m5.xlarge'";
    for (const name of ['m5.xlarge', 'ml.M5.xlarge', 'ml.m5.xlarge ']) {
      expect(run(SageMakerInstanceType.of(name, { vCpus: 4, memoryGiB: 16 })).errors).toEqual([
        `instanceType: got '${name}'; ${shape}. Fix: did you mean ml.m5.xlarge? Use SageMakerInstanceType.ML_M5_XLARGE`,
      ]);
    }
    for (const name of ['ml.m5', 'xml.m5.xlarge']) {
      expect(run(SageMakerInstanceType.of(name, { vCpus: 4, memoryGiB: 16 })).errors).toEqual([
        `instanceType: got '${name}'; ${shape}. Fix: use a SageMakerInstanceType constant or SageMakerInstanceType.of(name, spec)`,
      ]);
    }
  });

  test("a size AWS does not use is a typo, spec or not: 'ml.g4dn.xlarg' → did you mean ml.g4dn.xlarge?", () => {
    const sizes = 'an instance type whose size AWS uses (medium, large, xlarge, 2xlarge … 48xlarge)';
    expect(run(SageMakerInstanceType.of('ml.g4dn.xlarg')).errors).toEqual([
      `instanceType: got 'ml.g4dn.xlarg'; allowed: ${sizes}. Fix: did you mean ml.g4dn.xlarge? Use SageMakerInstanceType.ML_G4DN_XLARGE`,
    ]);
    // The closest of several: one edit to ml.g5.12xlarge, two to ml.g5.2xlarge.
    expect(run(SageMakerInstanceType.of('ml.g5.12xlarg', { vCpus: 48, memoryGiB: 192 })).errors).toEqual([
      `instanceType: got 'ml.g5.12xlarg'; allowed: ${sizes}. Fix: did you mean ml.g5.12xlarge? Use SageMakerInstanceType.ML_G5_12XLARGE`,
    ]);
    // Nothing in the catalog that close: where to look instead.
    expect(run(SageMakerInstanceType.of('ml.inf2.huge')).errors).toEqual([
      `instanceType: got 'ml.inf2.huge'; allowed: ${sizes}. Fix: check the name against the SageMaker AI pricing page, e.g. ml.m5.xlarge`,
    ]);
    // A size must be one of them as a whole, not contain one.
    for (const size of ['superxlarge', 'xlarges', 'metal-xl', 'metal-48', '0xlarge']) {
      expect(run(SageMakerInstanceType.of(`ml.c7i.${size}`, { vCpus: 4, memoryGiB: 8 })).errors[0]).toContain(`allowed: ${sizes}`);
    }
    expect(isInstanceSize('ml.m5.x.xlarge')).toBe(false); // (four parts)
    // Every size AWS uses is accepted.
    for (const size of ['medium', 'large', 'xlarge', '2xlarge', '48xlarge', 'metal', 'metal-48xl', 'small']) {
      expect(run(SageMakerInstanceType.of(`ml.c7i.${size}`, { vCpus: 4, memoryGiB: 8 })).errors).toEqual([]);
    }
  });

  test('a given spec: each field in its range', () => {
    expect(run(SageMakerInstanceType.of('ml.x9.large', { vCpus: 2, memoryGiB: 0.5 })).errors).toEqual([]);
    expect(
      run(SageMakerInstanceType.of('ml.x9.large', { vCpus: 0, memoryGiB: 0.4, gpuCount: 1.5, gpuMemoryGiB: 0.5, localNvmeGB: -1 })).errors,
    ).toEqual([
      'instanceType (ml.x9.large) spec.vCpus: got 0; allowed: an integer from 1 to 1000000. Fix: give the whole number of vCPUs, e.g. 4',
      'instanceType (ml.x9.large) spec.gpuCount: got 1.5; allowed: an integer from 0 to 1000000. Fix: give the whole number of GPUs (0 for CPU types)',
      'instanceType (ml.x9.large) spec.localNvmeGB: got -1; allowed: an integer from 0 to 1000000. Fix: give the local NVMe size in whole GB (0 for EBS-only types)',
      'instanceType (ml.x9.large) spec.memoryGiB: got 0.4; allowed: a number from 0.5 to 1000000. Fix: give the host memory in GiB, e.g. 16',
      'instanceType (ml.x9.large) spec.gpuMemoryGiB: got 0.5; allowed: a number from 1 to 10000. Fix: give the memory of one GPU in GiB, e.g. 16',
    ]);
    // A GPU type needs the memory of its GPUs; a CPU type may leave it at 0.
    expect(run(SageMakerInstanceType.of('ml.x9.large', { vCpus: 4, memoryGiB: 16, gpuCount: 1 })).errors).toEqual([
      'instanceType (ml.x9.large) spec.gpuMemoryGiB: got 0; allowed: a number from 1 to 10000. Fix: give the memory of one GPU in GiB, e.g. 16',
    ]);
    expect(run(SageMakerInstanceType.of('ml.x9.large', { vCpus: 4, memoryGiB: 16, gpuMemoryGiB: -1 })).errors).toEqual([
      'instanceType (ml.x9.large) spec.gpuMemoryGiB: got -1; allowed: a number from 0 to 10000. Fix: give 0 for CPU types',
    ]);
  });

  test('an unknown type without a spec is not range-checked (its spec is a guess, warned about elsewhere)', () => {
    expect(run(SageMakerInstanceType.of('ml.x9.large')).errors).toEqual([]);
  });

  test('a burstable type warns, naming it and why', () => {
    expect(run(SageMakerInstanceType.ML_T2_MEDIUM)).toEqual({
      errors: [],
      warnings: [
        expect.stringMatching(
          /^instanceType is ml\.t2\.medium, a burstable demo-grade type \(incident B: 4 GiB, 110 s cold start, CPU credits run out, cannot autoscale\)\. Use e\.g\. ml\.m5\.xlarge for production\. \[ack: Annotation::BurstableInstance\]$/,
        ),
      ],
    });
  });
});

describe('did you mean …? (lib/private/suggest.ts)', () => {
  test.each([
    ['', '', 0],
    ['xlarge', 'xlarg', 1], // a deletion
    ['xlarg', 'xlarge', 1], // an insertion
    ['g4dn', 'g4dm', 1], // a substitution
    ['g4dn', 'g5', 3],
    ['abc', '', 3],
    ['kitten', 'sitting', 3],
  ])('%j → %j: %i edits', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
    expect(editDistance(b, a)).toBe(d);
  });

  test('the closest known name within the distance, case-insensitive; none for the name itself or a distant one', () => {
    const known = ['ml.m5.xlarge', 'ml.m5.2xlarge', 'ml.g4dn.xlarge'];
    expect(closest('ml.m5.xlarg', known)).toBe('ml.m5.xlarge');
    expect(closest('ML.M5.2XLARGE', known)).toBe('ml.m5.2xlarge');
    expect(closest('ml.m5.xlarge', known)).toBeUndefined();
    expect(closest('ml.g4dn.xlar', known)).toBe('ml.g4dn.xlarge'); // two edits: the default limit
    expect(closest('ml.g4dn.xla', known)).toBeUndefined(); // three
    expect(closest('ml.g4d.xlarge', known, 0)).toBeUndefined();
    expect(closest('ml.p4d.24xlarge', known)).toBeUndefined();
    // Equally close: the first.
    expect(closest('ab', ['ac', 'ad'])).toBe('ac');
  });

  test('nearestCatalogType: the catalog name and its constant; none for a catalog name or a distant one', () => {
    expect(nearestCatalogType('ml.g4dn.xlarg')).toEqual({ name: 'ml.g4dn.xlarge', constant: 'ML_G4DN_XLARGE' });
    expect(nearestCatalogType('g4dn.xlarge')).toEqual({ name: 'ml.g4dn.xlarge', constant: 'ML_G4DN_XLARGE' });
    expect(nearestCatalogType('ml.m4.xlarge')).toEqual({ name: 'ml.m5.xlarge', constant: 'ML_M5_XLARGE' });
    expect(nearestCatalogType('ml.g4dn.xlarge')).toBeUndefined();
    expect(nearestCatalogType('ml.p4d.24xlarge')).toBeUndefined();
  });
});

describe('a percent prop given as a fraction (PropErrors.fraction, fractionWarning)', () => {
  const fraction = (v: number | undefined, from: number, inclusive: boolean, max?: number) => {
    const e = new PropErrors();
    return { reported: e.fraction('p', v, from, inclusive, max), errors: e.all };
  };

  test('0.85 where no percentage that small makes sense: the percentage probably meant', () => {
    expect(fraction(0.85, 1, false)).toEqual({
      reported: true,
      errors: [
        'p: got 0.85 (0.85 %: a fraction given for 85 %?); allowed: a percentage above 1 and at most 100, in percent (not a fraction). Fix: give 85 for 85 %',
      ],
    });
    // 1 itself is 100 % written as a fraction where 1 % makes no sense.
    expect(fraction(1, 1, false).errors).toEqual([
      'p: got 1 (1 %: a fraction given for 100 %?); allowed: a percentage above 1 and at most 100, in percent (not a fraction). Fix: give 100 for 100 %',
    ]);
    // Floating point: 0.07 × 100 is 7.000000000000001, shown as 7.
    expect(fraction(0.07, 1, false).errors[0]).toContain('Fix: give 7 for 7 %');
  });

  test('where 1 % is allowed (inclusive), only values below it; the meant percentage outside the range is not offered', () => {
    expect(fraction(1, 1, true)).toEqual({ reported: false, errors: [] });
    expect(fraction(0.5, 1, true).errors).toEqual([
      'p: got 0.5 (0.5 %: a fraction given for 50 %?); allowed: a percentage from 1 to 100, in percent (not a fraction). Fix: give 50 for 50 %',
    ]);
    expect(fraction(0.75, 5, true, 50).errors).toEqual([
      'p: got 0.75 (0.75 %: a fraction given for 75 %?); allowed: a percentage from 5 to 50, in percent (not a fraction). Fix: give a percentage from 5 to 50 (0.75 means 0.75 %, not 75 %)',
    ]);
    expect(fraction(0.5, 5, true, 50).errors[0]).toContain('Fix: give 50 for 50 %'); // 50 is in the range
    expect(fraction(0.05, 5, true, 50).errors[0]).toContain('Fix: give 5 for 5 %'); // 5, the lowest allowed
    expect(fraction(0.02, 5, true, 50).errors[0]).toContain('Fix: give a percentage from 5 to 50 (0.02 means 0.02 %, not 2 %)'); // 2: below it
  });

  test('anything else is left to the range check: above 1, at most 0, unset, a token', () => {
    for (const v of [1.5, 85, 0, -0.5, undefined, Token.asNumber({ Ref: 'P' })]) {
      expect(fraction(v, 1, false)).toEqual({ reported: false, errors: [] });
    }
    expect(fraction(0.5, 0.1, false)).toEqual({ reported: false, errors: [] }); // allowed that small
  });

  test('a legal but suspicious value below 1 warns with both readings; from 1 up, nothing', () => {
    expect(fractionWarning('monitoring.errorRateThresholdPercent', 0.05, 'the 5XX alarm fires')).toBe(
      'monitoring.errorRateThresholdPercent is 0.05: the 5XX alarm fires at 0.05 % (1 in 2,000). The prop is in percent: if 0.05 was a fraction for 5 %, give 5; if 0.05 % is meant, acknowledge this warning.',
    );
    for (const v of [1, 5, 0, -1, undefined, Token.asNumber({ Ref: 'P' })]) expect(fractionWarning('p', v, 'x')).toBeUndefined();
  });
});

describe('duplicateEndpointNames: one name per account and Region across the app', () => {
  const MARK = Symbol('endpoint');
  const isEndpoint = (x: unknown): x is Construct & { endpointName: string } => typeof x === 'object' && x !== null && MARK in x;
  const endpoint = (scope: Construct, id: string, endpointName: string) => Object.assign(new Construct(scope, id), { endpointName, [MARK]: true });
  const app = new App();
  const env = (region: string) => ({ env: { account: '123456789012', region } });
  const a = new Stack(app, 'A', env('us-east-1'));
  const b = new Stack(app, 'B', env('us-east-1'));
  const eu = new Stack(app, 'Eu', env('eu-west-1'));
  const otherAccount = new Stack(app, 'Other', { env: { account: '210987654321', region: 'us-east-1' } });
  const agnostic1 = new Stack(app, 'Any1');
  const agnostic2 = new Stack(app, 'Any2');
  const nested = new NestedStack(b, 'Nested');
  const one = endpoint(a, 'One', 'x');
  const two = endpoint(nested, 'Two', 'x'); // a nested stack deploys where its parent does
  const europe = endpoint(eu, 'Europe', 'x');
  const elsewhere = endpoint(otherAccount, 'Elsewhere', 'x');
  const free = endpoint(a, 'Free', 'y');
  new Construct(a, 'NotAnEndpoint'); // (ignored: no mark)
  Object.assign(new Construct(a, 'Unmarked'), { endpointName: 'x' });
  const any1 = endpoint(agnostic1, 'Any', 'z');
  const any2 = endpoint(agnostic2, 'Any', 'z');
  const rule =
    "allowed: a name no other endpoint of the app has in the same account and Region (SageMaker's endpoint names are unique there, and the endpoint's alarms, parameters and rules are named after it). Fix: give each endpoint its own endpointName, or omit endpointName for generated ones";

  test('same account and Region, in another stack or a nested one: each names the other', () => {
    expect(duplicateEndpointNames(one, isEndpoint)).toEqual([`endpointName: got 'x', also the name of B/Nested/Two; ${rule}`]);
    expect(duplicateEndpointNames(two, isEndpoint)).toEqual([`endpointName: got 'x', also the name of A/One; ${rule}`]);
  });

  test('another Region, another account, another name, or a construct that is not an endpoint: nothing', () => {
    expect(duplicateEndpointNames(europe, isEndpoint)).toEqual([]);
    expect(duplicateEndpointNames(elsewhere, isEndpoint)).toEqual([]);
    expect(duplicateEndpointNames(free, isEndpoint)).toEqual([]);
  });

  test('env-agnostic stacks deploy to the same account and Region as each other', () => {
    expect(duplicateEndpointNames(any1, isEndpoint)).toEqual([`endpointName: got 'z', also the name of Any2/Any; ${rule}`]);
    expect(duplicateEndpointNames(any2, isEndpoint)).toEqual([`endpointName: got 'z', also the name of Any1/Any; ${rule}`]);
  });
});

describe("the guard budget against the breaker's trigger (issue 40: 75 with the default 80 was accepted without a word)", () => {
  const model = (guardBudgetPercent?: number) => ({
    image: ContainerImage.fromImageUri('x.dkr.ecr.us-east-1.amazonaws.com/m:1'),
    guardBudgetPercent,
  });
  const check = (props: Record<string, unknown>) => {
    const e = new PropErrors();
    validateGuardBudgetOrder(e, { instanceType: SageMakerInstanceType.ML_M5_XLARGE, ...props } as any);
    return e.all;
  };

  test.each([
    [
      75,
      undefined,
      '75, at or below circuitBreaker.degradeAtPercent (80, the default)',
      'from 81 to 99',
      'raise model.guardBudgetPercent to 90 or more, or lower circuitBreaker.degradeAtPercent below 75',
    ],
    [
      85,
      90,
      '85, at or below circuitBreaker.degradeAtPercent (90)',
      'from 91 to 99',
      'raise model.guardBudgetPercent to 91 or more, or lower circuitBreaker.degradeAtPercent below 85',
    ],
    [
      80,
      80,
      '80, at or below circuitBreaker.degradeAtPercent (80)',
      'from 81 to 99',
      'raise model.guardBudgetPercent to 90 or more, or lower circuitBreaker.degradeAtPercent below 80',
    ],
    [
      undefined,
      92,
      '90 (the default), at or below circuitBreaker.degradeAtPercent (92)',
      'from 93 to 99',
      'raise model.guardBudgetPercent to 93 or more, or lower circuitBreaker.degradeAtPercent below 90',
    ],
    [
      99,
      99.5,
      '99, at or below circuitBreaker.degradeAtPercent (99.5)',
      "which leaves none at 99.5 (the budget's maximum is 99)",
      'lower circuitBreaker.degradeAtPercent below 99',
    ],
  ])('budget %p, trigger %p: an error naming both props', (budget, degrade, got, allowed, fix) => {
    expect(check({ model: model(budget), circuitBreaker: { degradeAtPercent: degrade } })).toEqual([
      `model.guardBudgetPercent: got ${got}; allowed: a budget above the breaker's trigger${allowed.startsWith('from') ? ': ' : ', '}${allowed}. Fix: the guard would refuse requests before the breaker shifts traffic and holds capacity: ${fix}`,
    ]);
  });

  test.each([
    ['the defaults (90 over 80)', { model: model() }],
    ['one above the trigger', { model: model(81) }],
    ['95 over a trigger of 90', { model: model(95), circuitBreaker: { degradeAtPercent: 90 } }],
    ['no breaker: nothing to order against', { model: model(60), circuitBreaker: { enabled: false } }],
    ['a budget bad on its own is reported by its own check', { model: model(0.75) }],
    ['a trigger bad on its own is reported by its own check', { model: model(75), circuitBreaker: { degradeAtPercent: 0.8 } }],
    ['a token is known only at deploy', { model: model(Token.asNumber(Aws.ACCOUNT_ID)) }],
  ])('%s: no error', (_, props) => {
    expect(check(props)).toEqual([]);
  });
});

/** An interface's props, its own and those of the interfaces it extends (each interface read once). */
const propsCache = new Map<string, ReturnType<typeof interfaceProps>>();
function allProps(name: string): ReturnType<typeof interfaceProps> {
  if (!propsCache.has(name)) propsCache.set(name, readAllProps(name));
  return propsCache.get(name)!;
}
function readAllProps(name: string): ReturnType<typeof interfaceProps> {
  const bases = libSources()
    .map(([, src]) => new RegExp(`export interface ${name} extends ([\\w, ]+)\\{`).exec(src)?.[1])
    .find(Boolean);
  return [...interfaceProps(name), ...(bases ?? '').split(',').flatMap(b => (b.trim() ? allProps(b.trim()) : []))];
}

/** Every prop path under `name` whose type is one of `types`, following the library's own interfaces. */
function propPathsOfType(name: string, types: string[], prefix = '', depth = 0): string[] {
  if (depth > 5) return [];
  return allProps(name).flatMap(([prop, doc]) => {
    const type = doc.type.replace(/\[\]$/, '');
    if (types.includes(type)) return [`${prefix}${prop}`];
    return propPathsOfType(type, types, `${prefix}${prop}.`, depth + 1);
  });
}

describe('Duration and Size props from JavaScript (issue 40: latencyP99Threshold: 500 threw a TypeError with a stack)', () => {
  test.each(Object.keys(UNIT_PROPS))('the run-time list holds every Duration and Size prop of %s, as the interfaces declare them', name => {
    const list: readonly (readonly [string, string, string])[] = UNIT_PROPS[name as keyof typeof UNIT_PROPS];
    const declared = propPathsOfType(name, ['Duration', 'Size']).sort();
    expect(declared.length).toBeGreaterThan(0);
    expect(list.map(([p]) => p).sort()).toEqual(declared);
    for (const [p, kind] of list) expect([p, kind]).toEqual([p, propTypeAt(name, p.split('.'))]);
  });

  test('a number, a string or the other unit: the prop named with the fix, the value dropped (its default applies)', () => {
    const e = new PropErrors();
    const props = {
      model: {
        image: ContainerImage.fromImageUri('x.dkr.ecr.us-east-1.amazonaws.com/m:1'),
        memoryFootprint: { host: Duration.seconds(1), gpu: Size.gibibytes(1) },
      },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      monitoring: { latencyP99Threshold: 500, enabled: true },
      volumeSize: '100',
      circuitBreaker: { minDwell: Duration.minutes(5), maxProbeWait: { hours: 1 } },
    } as any;
    const out = checkUnitProps(e, props, UNIT_PROPS.ResilientEndpointProps);
    expect(e.all).toEqual([
      "model.memoryFootprint.host: got a Duration; allowed: a Size (aws-cdk-lib). Fix: pass Size.gibibytes(1) or another unit of Size (import { Size } from 'aws-cdk-lib'); a bare number has no unit",
      "volumeSize: got '100' (a string); allowed: a Size (aws-cdk-lib). Fix: pass Size.gibibytes(100) or another unit of Size (import { Size } from 'aws-cdk-lib'); a bare number has no unit",
      "monitoring.latencyP99Threshold: got 500 (a number: no unit); allowed: a Duration (aws-cdk-lib). Fix: pass Duration.millis(500) or another unit of Duration (import { Duration } from 'aws-cdk-lib'); a bare number has no unit",
      "circuitBreaker.maxProbeWait: got an object (hours); allowed: a Duration (aws-cdk-lib). Fix: pass Duration.hours(1) or another unit of Duration (import { Duration } from 'aws-cdk-lib'); a bare number has no unit",
    ]);
    expect(out.model.memoryFootprint).toEqual({ gpu: props.model.memoryFootprint.gpu });
    expect(out.model.image).toBe(props.model.image);
    expect(out.monitoring).toEqual({ enabled: true });
    expect('volumeSize' in out).toBe(false);
    expect(out.circuitBreaker).toEqual({ minDwell: props.circuitBreaker.minDwell });
    // The caller's objects are not changed.
    expect(props.monitoring.latencyP99Threshold).toBe(500);
  });

  test('right values pass as they are (the same object back)', () => {
    const e = new PropErrors();
    const props = {
      model: { image: ContainerImage.fromImageUri('x.dkr.ecr.us-east-1.amazonaws.com/m:1'), memoryFootprint: { host: Size.gibibytes(2) } },
      instanceType: SageMakerInstanceType.ML_M5_XLARGE,
      monitoring: { latencyP99Threshold: Duration.millis(500) },
      deployment: { waitInterval: Duration.minutes(5) },
    };
    expect(checkUnitProps(e, props, UNIT_PROPS.ResilientEndpointProps)).toBe(props);
    expect(e.all).toEqual([]);
  });
});

/** The declared type of a prop path (the last segment's type), following the library's interfaces. */
function propTypeAt(name: string, path: string[]): string | undefined {
  const [head, ...rest] = path;
  const doc = allProps(name).find(([p]) => p === head)?.[1];
  if (!doc) return undefined;
  return rest.length ? propTypeAt(doc.type, rest) : doc.type;
}
