// How strongly a search hit matches, for the person: strong, fair or weak
// beside the best hit of the same search (scores are only comparable
// within one search), and which lists found it — the words, the meaning,
// the related words (the sparse list), or several. A meaning search ranks every note of a small pad; the weak
// ones fold away behind "Show N weaker matches".

import type { SearchHit } from "./protocol";

export type Strength = "strong" | "fair" | "weak";

/** At least this share of the best hit's score is strong; at least
 *  `FAIR` fair; below it, weak. */
export const STRONG = 0.6;
export const FAIR = 0.35;

export function strength(score: number, best: number): Strength {
  const share = best > 0 ? score / best : 1;
  return share >= STRONG ? "strong" : share >= FAIR ? "fair" : "weak";
}

/** "words + meaning", "meaning", "words", … "related words" (the sparse
 *  list: words a note means, learned), joined by " + ". */
export function foundBy(hit: Pick<SearchHit, "found_by">): string {
  const names: [string, string][] = [["text", "words"], ["semantic", "meaning"], ["sparse", "related words"]];
  const by = names.filter(([side]) => hit.found_by.includes(side)).map(([, name]) => name);
  return by.length ? by.join(" + ") : "words";
}

/** The hits split: those shown, and the weak ones folded away (all shown
 *  when `all`, or when every hit is weak but the first). */
export function splitWeak(hits: SearchHit[], all: boolean): { shown: SearchHit[]; weak: number } {
  const best = Math.max(0, ...hits.map((h) => h.score));
  const strongEnough = hits.filter((h) => strength(h.score, best) !== "weak");
  if (all || strongEnough.length === hits.length) return { shown: hits, weak: 0 };
  return { shown: strongEnough, weak: hits.length - strongEnough.length };
}
