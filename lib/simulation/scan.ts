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
