// Small loops the simulator's per-second step runs on every second of every run: what they return is
// what a sort, a filter or a scan would, without sorting, copying or scanning (a day's run makes 86,400 of each).

/**
 * The value a numeric sort of `values` would put at index `k` (0-based), found by selection (Hoare's
 * partition) in linear expected time. Reorders `values`; `k` must be an index of it.
 */
export function kthSmallest(values: Float64Array, k: number): number {
  let lo = 0;
  let hi = values.length - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i] < pivot) i++;
      while (values[j] > pivot) j--;
      if (i <= j) {
        const x = values[i];
        values[i] = values[j];
        values[j] = x;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return values[k];
}

/** The last element of `items` that `test` accepts (what `items.filter(test).at(-1)` is), scanning from the end. */
export function lastWhere<T>(items: readonly T[], test: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i])) return items[i];
  return undefined;
}

/**
 * The lowest-numbered of the smallest of n values, kept at hand as they change: a tournament tree over
 * them, so a change updates it in log2(n) steps instead of a scan of every value. `least` is what a scan
 * from index 0 keeping the first strictly smaller value finds.
 */
export class MinTree {
  private values = new Float64Array(0);
  /** tree[1] is the winner; node i's children are 2i and 2i+1; leaves from `width` hold indices (-1: none). */
  private tree = new Int32Array(2);
  private width = 1;
  private count = 0;

  constructor(values: ArrayLike<number> = []) {
    this.load(values);
  }

  /** How many values it holds. */
  get length(): number {
    return this.count;
  }

  /** Starts over with these values (reusing its arrays when they are large enough). */
  load(values: ArrayLike<number>): void {
    const count = values.length;
    let width = 1;
    while (width < count) width *= 2;
    if (width > this.values.length) {
      this.values = new Float64Array(width);
      this.tree = new Int32Array(2 * width);
    }
    this.width = width;
    this.count = count;
    for (let i = 0; i < count; i++) this.values[i] = values[i];
    for (let i = 0; i < width; i++) this.tree[width + i] = i < count ? i : -1;
    for (let i = width - 1; i >= 1; i--) this.tree[i] = this.better(this.tree[2 * i], this.tree[2 * i + 1]);
  }

  /** Value `i`. */
  at(i: number): number {
    return this.values[i];
  }

  /** The index of the lowest-numbered of the smallest values; -1 when it holds none. */
  get least(): number {
    return this.count === 0 ? -1 : this.tree[1];
  }

  /** Value `i` is now `value`. */
  set(i: number, value: number): void {
    this.values[i] = value;
    for (let n = (this.width + i) >> 1; n >= 1; n >>= 1) this.tree[n] = this.better(this.tree[2 * n], this.tree[2 * n + 1]);
  }

  /** Of two indices (the left one lower), the one with the smaller value; the left one on a tie. */
  private better(left: number, right: number): number {
    if (right < 0) return left;
    if (left < 0) return right;
    return this.values[right] < this.values[left] ? right : left;
  }
}

/**
 * When each of an instance's slots is next free, with the earliest-free slot kept at hand (a `MinTree`):
 * the earliest is the lowest-numbered of the slots free soonest, as a scan from slot 0 finds it.
 */
export class SlotClock {
  private readonly tree: MinTree;
  private readonly zeros: Float64Array;

  constructor(readonly length: number) {
    this.zeros = new Float64Array(length);
    this.tree = new MinTree(this.zeros);
  }

  /** When slot `s` is next free. */
  at(s: number): number {
    return this.tree.at(s);
  }

  /** The lowest-numbered of the slots free soonest. */
  get earliest(): number {
    return this.tree.least;
  }

  /** Slot `s` is busy until `until`. */
  set(s: number, until: number): void {
    this.tree.set(s, until);
  }

  /** Every slot free from 0 (a restarted instance). */
  reset(): void {
    this.tree.load(this.zeros);
  }
}
