// Two small loops the simulator's per-second step runs on every second of every run: what they return is
// what a sort or a filter would, without sorting or copying (a day's run makes 86,400 of each).

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
 * When each of an instance's slots is next free, with the earliest-free slot kept at hand: a tournament
 * tree over the slots, so a start updates it in log2(slots) steps instead of a scan of every slot. The
 * earliest is the lowest-numbered of the slots free soonest, as a scan from slot 0 finds it.
 */
export class SlotClock {
  private readonly free: Float64Array;
  /** tree[1] is the winner; node i's children are 2i and 2i+1; leaves from `width` hold slot numbers (-1: none). */
  private readonly tree: Int32Array;
  private readonly width: number;

  constructor(readonly length: number) {
    this.free = new Float64Array(length);
    let width = 1;
    while (width < length) width *= 2;
    this.width = width;
    this.tree = new Int32Array(2 * width);
    this.reset();
  }

  /** When slot `s` is next free. */
  at(s: number): number {
    return this.free[s];
  }

  /** The lowest-numbered of the slots free soonest. */
  get earliest(): number {
    return this.tree[1];
  }

  /** Slot `s` is busy until `until`. */
  set(s: number, until: number): void {
    this.free[s] = until;
    for (let i = (this.width + s) >> 1; i >= 1; i >>= 1) this.tree[i] = this.better(this.tree[2 * i], this.tree[2 * i + 1]);
  }

  /** Every slot free from 0 (a restarted instance). */
  reset(): void {
    this.free.fill(0);
    for (let i = 0; i < this.width; i++) this.tree[this.width + i] = i < this.length ? i : -1;
    for (let i = this.width - 1; i >= 1; i--) this.tree[i] = this.better(this.tree[2 * i], this.tree[2 * i + 1]);
  }

  /** Of two slots (the left one numbered lower), the one free sooner; the left one on a tie. */
  private better(left: number, right: number): number {
    if (right < 0) return left;
    if (left < 0) return right;
    return this.free[right] < this.free[left] ? right : left;
  }
}
