// The footprint model holds a variant to its caps in its own unit (issue 28: the clustering example's row caps
// were compared with the footprint workload's events). A suite of its own: fast, so that mutation testing can run it per mutant.
import * as fs from 'fs';
import * as path from 'path';
import { Stack } from 'aws-cdk-lib';
import { exampleEndpoint } from '../bin/simulate';
import { ContainerImage, MemoryProfile, ResilientEndpoint, SageMakerInstanceType } from '../lib';
import { refusedOrFailedPercent } from '../lib/simulation/matrix';
import * as simulation from '../lib/simulation';

const { pulseTrace, runSimulation, simVariantsFrom } = simulation;

describe("request sizes in the variant's own unit", () => {
  test('a cap in another unit is moved to the same quantile of the footprint workload: 20,000 of 100–200,000 rows is about 812 events', () => {
    const rows = { min: 100, max: 200_000, alpha: 1 };
    const events = { min: 5, max: 3000, alpha: 1 };
    // By hand: q = (1 − 100/20,000) / (1 − 100/200,000) = 0.995498; x = 5 / (1 − q·(1 − 5/3,000)) = 5 / 0.006161 = 811.6.
    expect(simulation.translateCap(20_000, rows, events)).toBe(812);
    // The distribution's top (and above) is the other's top; at or below its bottom, the other's bottom.
    expect(simulation.translateCap(200_000, rows, events)).toBe(3000);
    expect(simulation.translateCap(10 ** 9, rows, events)).toBe(3000);
    expect(simulation.translateCap(100, rows, events)).toBe(5);
    // Below the bottom too (the formula alone would give 5 / (1 + 1.0005 · 0.99833) = 2.5).
    expect(simulation.translateCap(50, rows, events)).toBe(5);
    // Onto a steeper target (α 2): x = 5 / √(1 − 0.995498 · (1 − (5/3,000)²)) = 5 / 0.067118 = 74.49.
    expect(simulation.translateCap(20_000, rows, { ...events, alpha: 2 })).toBe(74);
    // The same distribution leaves a cap where it is; a steeper law (α 2) puts the same cap above more requests:
    // q = (1 − (100/20,000)²) / (1 − (100/200,000)²) = 0.999975; x = 5 / (1 − q·(1 − 5/3,000)) = 5 / 0.0016917 = 2955.6.
    expect(simulation.translateCap(512, events, events)).toBe(512);
    expect(simulation.translateCap(20_000, { ...rows, alpha: 2 }, events)).toBe(2956);
    // The profile's exponent is read from its distribution (powerlaw:LO:HI:ALPHA), 1 when it states none.
    const clustering = simVariantsFrom(exampleEndpoint('clustering')).primary;
    expect(clustering.profile).toMatchObject({ sizeMin: 100, sizeMax: 200_000 });
    expect(clustering.profile!.sizeAlpha).toBeUndefined();
  });

  test("the footprint model holds a row-capped model to its caps: the clustering example's degraded cap cuts the workload's tail", () => {
    const endpoint = exampleEndpoint('clustering');
    const v = simVariantsFrom(endpoint);
    // A 25× pulse held 15 minutes (the matrix holds 30): long enough for the breaker to reach level 2.
    const footprint = runSimulation(pulseTrace(40, 25, { before: 300, ramp: 300, hold: 900, after: 300 }), {
      ...v,
      autoscaling: true,
      breaker: endpoint.circuitBreaker!.config,
      metricPeriodS: 10,
      seed: 1,
      assumptions: { memoryModel: 'footprint' },
    });
    // Its caps (200,000 and 20,000 rows) are the footprint workload's 3,000 and ~812 events: the level-2 tier refuses
    // the longest requests (307 here) and the guard refuses few (measured 0.006 %); compared raw, no tier ever
    // applies, an instance runs out of memory and 2.7 % are refused or failed (2.3 % on the matrix's pulse: issue 28's table).
    expect(footprint.oomEvents).toBe(0);
    expect(footprint.rejectedAtLevel2).toBeGreaterThan(0);
    expect(refusedOrFailedPercent(footprint)).toBeLessThan(1);
  });

  test("a variant keeps its caps without a profile or on the workload's own distribution; a profile's ALPHA counts", () => {
    const events = { min: 5, max: 3000, alpha: 1 };
    const bare = { maxSeqLen: 1024, degradedMaxSeqLen: 512 };
    expect(simulation.inWorkloadUnits(bare, events)).toBe(bare);
    const same = { ...bare, profile: { sizeMin: 5, sizeMax: 3000 } };
    expect(simulation.inWorkloadUnits(same, events)).toBe(same);
    // The same bounds with another exponent is another distribution: moved.
    // 512 of α 2 → 5 / (1 − ((1 − (5/512)²) / (1 − (5/3,000)²)) · (1 − 5/3,000)) = 2,842.4 events of α 1.
    expect(simulation.inWorkloadUnits({ ...same, profile: { ...same.profile, sizeAlpha: 2 } }, events).degradedMaxSeqLen).toBe(2842);
    // Only the bottom differs (1–3,000): 512 → 5 / (1 − ((1 − 1/512) / (1 − 1/3,000)) · (1 − 5/3,000)) = 1,522.4;
    // only the top (5–6,000): 512 → 5 / (1 − ((1 − 5/512) / (1 − 5/6,000)) · (1 − 5/3,000)) = 472.1.
    expect(simulation.inWorkloadUnits({ ...bare, maxSeqLen: 512, profile: { sizeMin: 1, sizeMax: 3000 } }, events).maxSeqLen).toBe(1522);
    expect(simulation.inWorkloadUnits({ ...bare, maxSeqLen: 512, profile: { sizeMin: 5, sizeMax: 6000 } }, events).maxSeqLen).toBe(472);
    // Bounds only partly stated: nothing to map from.
    const half = { ...bare, profile: { sizeMin: 100 } };
    expect(simulation.inWorkloadUnits(half, events)).toBe(half);
    const rows = { maxSeqLen: 200_000, degradedMaxSeqLen: 20_000, profile: { sizeMin: 100, sizeMax: 200_000 } };
    expect(simulation.inWorkloadUnits(rows, events)).toMatchObject({ maxSeqLen: 3000, degradedMaxSeqLen: 812 });
    // α 2 stated by the profile (powerlaw:100:200000:2): 20,000 rows → 2,956 events (as computed above).
    expect(simulation.inWorkloadUnits({ ...rows, profile: { ...rows.profile, sizeAlpha: 2 } }, events).degradedMaxSeqLen).toBe(2956);
  });

  test("simVariantsFrom reads the profile's distribution: bounds and ALPHA (powerlaw:LO:HI:ALPHA)", () => {
    const file = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'examples', 'models', 'clustering', 'memory-profile.json'), 'utf8'));
    const variant = (distribution: string) =>
      simVariantsFrom(
        new ResilientEndpoint(new Stack(), 'E', {
          model: {
            image: ContainerImage.fromImageUri('123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1'),
            memoryProfile: MemoryProfile.fromJson(JSON.stringify({ ...file, distribution })),
          },
          instanceType: SageMakerInstanceType.ML_M5_XLARGE,
        }),
      ).primary.profile;
    expect(variant('powerlaw:100:200000:2.5')).toMatchObject({ sizeMin: 100, sizeMax: 200_000, sizeAlpha: 2.5 });
    expect(variant('powerlaw:100:200000')!.sizeAlpha).toBeUndefined();
  });
});
