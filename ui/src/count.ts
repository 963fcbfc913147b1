/** Counts in words a person reads: "1 entry", "2 entries", "20+ entries". */

/** `n` and the noun that fits it; `more` says there are more than `n`. */
export function count(n: number, one: string, many: string, more = false): string {
  return `${n}${more ? "+" : ""} ${n === 1 && !more ? one : many}`;
}

/** A search view's title: the cap said as such, not as a total. */
export function searchTitle(found: number, limit: number, query: string, mode: string): string {
  const what =
    found === 0 ? "nothing found" : found >= limit ? `the best ${found} matches` : `${count(found, "match", "matches")}`;
  return `${what} for “${query}” in every pad (${mode})`;
}
