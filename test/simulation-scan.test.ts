// The simulator's per-second loops return what a sort or a filter would (lib/simulation/scan.ts), on any input.
import * as fc from 'fast-check';
import { kthSmallest, lastWhere, MinTree, SlotClock } from '../lib/simulation/scan';

const latencies = fc.array(fc.oneof(fc.double({ min: 0, max: 120, noNaN: true }), fc.constantFrom(0, 0.1, 1, 60)), { minLength: 1, maxLength: 300 });

test('kthSmallest is the value a numeric sort puts at k, for every k, with ties and repeats', () => {
  fc.assert(
    fc.property(latencies, xs => {
      const sorted = Float64Array.from(xs).sort();
      for (let k = 0; k < xs.length; k++) expect(kthSmallest(Float64Array.from(xs), k)).toBe(sorted[k]);
    }),
  );
  // The simulator's index: the 99th percentile of a window.
  const window = Float64Array.from({ length: 1000 }, (_, i) => ((i * 7919) % 1000) / 10);
  expect(kthSmallest(window, 989)).toBe(98.9);
});

test('lastWhere is filter(test).at(-1), also when nothing or everything passes', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 50 })), fc.integer({ min: 0, max: 50 }), (xs, bound) => {
      const points = xs.map((availableAt, i) => ({ availableAt, i }));
      expect(lastWhere(points, p => p.availableAt <= bound)).toBe(points.filter(p => p.availableAt <= bound).at(-1));
    }),
  );
  expect(lastWhere([], () => true)).toBeUndefined();
});

test('SlotClock.earliest is the slot a scan from slot 0 finds (the first of the soonest free), through starts and restarts', () => {
  const op = fc.oneof(
    fc.record({ slot: fc.nat(63), until: fc.oneof(fc.double({ min: 0, max: 100, noNaN: true }), fc.constantFrom(0, 1, 2, 1.5)) }),
    fc.constant('reset' as const),
  );
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 48 }), fc.array(op, { maxLength: 200 }), (length, ops) => {
      const clock = new SlotClock(length);
      const free = new Array<number>(length).fill(0);
      const scan = () => {
        let s = 0;
        for (let j = 1; j < length; j++) if (free[j] < free[s]) s = j;
        return s;
      };
      expect(clock.earliest).toBe(0);
      for (const o of ops) {
        if (o === 'reset') {
          clock.reset();
          free.fill(0);
        } else {
          clock.set(o.slot % length, o.until);
          free[o.slot % length] = o.until;
        }
        expect(clock.earliest).toBe(scan());
        expect(clock.at(clock.earliest)).toBe(free[scan()]);
      }
    }),
    { numRuns: 400 },
  );
  // Each slot in turn the only free one, then all busy but one, on a width that is not a power of two.
  const clock = new SlotClock(5);
  for (let s = 0; s < 5; s++) clock.set(s, 10);
  for (let s = 4; s >= 0; s--) {
    clock.set(s, 1);
    expect(clock.earliest).toBe(s);
    clock.set(s, 10 + s);
  }
  expect(clock.earliest).toBe(0);
  clock.reset();
  clock.set(0, 3);
  clock.set(1, 2);
  expect(clock.earliest).toBe(2);
});

test("MinTree.least is the index the simulator's scan for the least busy instance finds (the first of the least), through reloads of any length and increments", () => {
  // A reload (a second's instances in service, their loads) or one more request on an instance.
  const op = fc.oneof(fc.array(fc.nat(6), { maxLength: 40 }), fc.nat(63));
  fc.assert(
    fc.property(fc.array(op, { maxLength: 120 }), ops => {
      const tree = new MinTree();
      let loads: number[] = [];
      const scan = () => {
        let best = -1;
        let bestLoad = Infinity;
        loads.forEach((l, i) => {
          if (l < bestLoad) {
            best = i;
            bestLoad = l;
          }
        });
        return best;
      };
      expect(tree.least).toBe(-1);
      for (const o of ops) {
        if (Array.isArray(o)) {
          loads = [...o];
          tree.load(o);
        } else if (loads.length > 0) {
          const i = o % loads.length;
          loads[i]++;
          tree.set(i, tree.at(i) + 1);
        }
        expect([tree.length, tree.least]).toEqual([loads.length, scan()]);
        if (loads.length) expect(tree.at(tree.least)).toBe(Math.min(...loads));
      }
    }),
    { numRuns: 400 },
  );
  // A long list, then a shorter one in the same arrays: the leaves past the new end take no part.
  const tree = new MinTree([5, 5, 5, 5, 5, 0, 0, 0]);
  expect(tree.least).toBe(5);
  tree.load([3, 2, 2]);
  expect([tree.length, tree.least]).toEqual([3, 1]);
  tree.set(1, 3);
  expect(tree.least).toBe(2);
  tree.set(2, 4);
  expect(tree.least).toBe(0);
  tree.load([]);
  expect([tree.length, tree.least]).toEqual([0, -1]);
});
