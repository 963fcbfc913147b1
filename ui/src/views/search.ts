// The search view: hits for what the person typed, with the filters, each
// saying how strong a match it is (strength.ts), the weak folded away; an
// empty query goes back to the feed.

import { entries } from "../services";
import { count, searchTitle } from "../count";
import { el } from "../dom";
import type { SearchHit, SearchParams } from "../protocol";
import { foundBy, splitWeak, strength } from "../strength";
import type { Screen } from "../state";
import { showEntries } from "../components/List";
import { searched } from "../components/Why";
import { backToFeed, filter } from "./feed";
import { frame } from "./frame";

/** Hits a search view asks for. */
const SEARCH_LIMIT = 100;

export async function search(screen: Screen, q: string): Promise<void> {
  searched(null);
  if (!q.trim()) return backToFeed(screen);
  screen.setView("search");
  const f = filter(screen);
  const p: SearchParams = { query: q, limit: SEARCH_LIMIT };
  if (f.tag) p.tags = [f.tag];
  if (f.kind) p.kind = f.kind;
  if (f.author) p.author = f.author;
  const r = await entries.search(p);
  searched(p);
  last = { hits: r.hits, query: q, mode: r.mode, all: false };
  screen.setSelected(r.hits[0]?.entry.id ?? null);
  draw(screen);
}

/** The search on screen: its hits, and whether the weak ones show. */
let last: { hits: SearchHit[]; query: string; mode: string; all: boolean } | null = null;

/** The hits, each saying how strong a match it is and what found it; the
 *  weak ones folded behind "Show N weaker matches". */
function draw(screen: Screen): void {
  if (!last) return;
  const { hits, query, mode, all } = last;
  const { shown, weak } = splitWeak(hits, all);
  const best = Math.max(0, ...hits.map((h) => h.score));
  const byId = new Map(hits.map((h) => [h.entry.id, h]));
  const title: Node[] = [document.createTextNode(searchTitle(hits.length, SEARCH_LIMIT, query, mode))];
  if (weak > 0 || all) {
    const more = el("button", "link", all ? "Hide the weaker matches" : `Show ${count(weak, "weaker match", "weaker matches")}`);
    more.id = "search-weaker";
    more.addEventListener("click", () => {
      if (last) last.all = !last.all;
      draw(screen);
    });
    title.push(document.createTextNode(" · "), more);
  }
  frame(screen, title);
  showEntries(
    screen,
    shown.map((h) => h.entry),
    {
      badge: (e) => {
        const h = byId.get(e.id);
        if (!h) return null;
        const s = strength(h.score, best);
        const b = el("span", `match match-${s}`, `${s} · ${foundBy(h)}`);
        b.title = `score ${h.score.toFixed(3)}: ${Math.round((h.score / (best || 1)) * 100)}% of the best match's`;
        return b;
      },
    },
  );
}
