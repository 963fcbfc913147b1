// "Why this result?": in the search view, the detail pane asks the engine
// to explain the search (`search {explain: true}`) and shows, for the
// selected hit, the words it holds and what they weigh, its place in each
// ranking, what its neighbours added, and what the query became.

import { entries } from "../services";
import { el, fail } from "../dom";
import type { Entry } from "../types";
import type { HitExplain, QueryExplain, SearchParams } from "../protocol";

/** The params of the search on screen, to ask again with `explain`. */
let shown: SearchParams | null = null;

export function searched(params: SearchParams | null): void {
  shown = params;
}

const f = (n: number, digits = 3): string => n.toFixed(digits);

const weights = (words: HitExplain["words"]): string =>
  words.map((w) => `${w.word} (weight ${f(w.weight, 2)}, in ${w.entries} notes)`).join(", ");

/** How the lists were fused: words, meaning and, with the sparse model,
 *  related words (each note's learned terms), each with its share. */
function fused(words: number, sparse: number): string {
  const meaning = 1 - words - sparse;
  const parts = [`${f(words, 2)} × words`, `${f(meaning, 2)} × meaning`];
  if (sparse > 0) parts.push(`${f(sparse, 2)} × related words`);
  return `fused: ${parts.join(" + ")}, each scaled 0–1 in its list`;
}

/** The explanation as lines a person reads. */
export function whyLines(hit: HitExplain, q: QueryExplain): string[] {
  const lines: string[] = [];
  const parts = [`score ${f(hit.score)}`];
  if (hit.text) parts.push(`words: #${hit.text.rank} (${f(hit.text.score)}${hit.text.scaled != null ? `, ${f(hit.text.scaled, 2)} of the best` : ""})`);
  if (hit.meaning) parts.push(`meaning: #${hit.meaning.rank} (similarity ${f(hit.meaning.score)})`);
  if (hit.sparse) parts.push(`related words: #${hit.sparse.rank} (${f(hit.sparse.score)}${hit.sparse.scaled != null ? `, ${f(hit.sparse.scaled, 2)} of the best` : ""})`);
  if (hit.author_named > 0) parts.push(`+${f(hit.author_named)}: the query names its author`);
  if (hit.neighbours > 0) parts.push(`+${f(hit.neighbours)} from the note beside it`);
  lines.push(parts.join(" · "));
  lines.push(hit.words.length ? `holds ${weights(hit.words)}` : "holds none of the query's ranked words");
  lines.push(`the query read as ${q.reads_as}${q.words.length ? `, ranked by ${weights(q.words)}` : ""}`);
  if (q.dropped_common.length) lines.push(`common words dropped: ${q.dropped_common.join(", ")}`);
  if (q.dropped_over_budget.length) lines.push(`too common to rank, dropped: ${q.dropped_over_budget.join(", ")}`);
  if (q.filter.length) lines.push(`narrowed by: ${q.filter.join("; ")}`);
  if (q.pieces_from) lines.push(`related words: ${q.pieces_from}`);
  if (q.pieces?.length) lines.push(`related words ranked by ${weights(q.pieces)}`);
  if (q.meaning_scores) lines.push(`meaning scored by: ${q.meaning_scores}`);
  if (q.pieces_left_out?.length) lines.push(`related words left out (in no note searched, or too common): ${q.pieces_left_out.join(", ")}`);
  if (q.words_weight != null) lines.push(fused(q.words_weight, q.sparse_weight ?? 0));
  if (q.meaning && q.meaning.below_floor > 0) lines.push(`${q.meaning.below_floor} meaning matches under ${q.meaning_floor} left out`);
  if (q.superseded_left_out > 0) lines.push(`${q.superseded_left_out} superseded notes left out`);
  if (q.copies_folded > 0) lines.push(`${q.copies_folded} copies folded into the first of their text`);
  return lines;
}

/** The "Why this result?" toggle for `e`, in the search view only. */
export function whySection(e: Entry): HTMLElement | null {
  if (!shown) return null;
  const asked = shown;
  const box = el("details", "why");
  box.id = "why";
  box.append(el("summary", "", "Why this result?"));
  const body = el("div", "why-body");
  box.append(body);
  box.addEventListener("toggle", () => {
    if (!box.open || body.childElementCount) return;
    body.append(el("p", "hint", "asking the engine…"));
    void entries.search({ ...asked, explain: true })
      .then((r) => {
        const hit = r.hits.find((h) => h.entry.id === e.id);
        body.replaceChildren(
          ...(hit?.explain && r.explain
            ? whyLines(hit.explain, r.explain).map((l) => el("div", "why-line", l))
            : [el("p", "hint", "This note is no longer among the hits.")]),
        );
      })
      .catch(fail);
  });
  return box;
}
