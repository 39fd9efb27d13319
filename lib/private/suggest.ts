/**
 * "Did you mean …?" for names given with a typo: the closest of the known names by edit distance
 * (Levenshtein: insertions, deletions and substitutions of one character each), case-insensitive.
 */

/** The number of one-character edits that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length];
}

/**
 * The known name closest to `word` (the first of equally close ones), if at most `maxDistance` edits
 * away and not `word` itself.
 */
export function closest(word: string, known: readonly string[], maxDistance = 2): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = maxDistance + 1;
  for (const k of known) {
    const d = editDistance(w, k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best !== undefined && best !== word ? best : undefined;
}
