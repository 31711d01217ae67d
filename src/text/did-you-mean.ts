/**
 * "Did you mean": the known name nearest to a mistyped one by edit distance (Levenshtein, case-insensitive),
 * or undefined when nothing is close enough to be a likely typo.
 */

export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      row[j] = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + (x[i - 1] === y[j - 1] ? 0 : 1),
      );
    }
    prev = row;
  }
  return prev[y.length] as number;
}

/** The nearest known name if it is within a third of the name's length (at least 2 edits allowed). */
export function nearestName(name: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(name, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/** ` (did you mean "x"?)` or the empty string. */
export function didYouMean(name: string, known: Iterable<string>, quote = (s: string) => `"${s}"`): string {
  const n = nearestName(name, known);
  return n === undefined ? "" : ` (did you mean ${quote(n)}?)`;
}
