// The search view: hits for what the person typed, with the filters; an
// empty query goes back to the feed.

import { rpc } from "../api";
import { searchTitle } from "../count";
import { app } from "../state";
import { showEntries } from "../components/List";
import { searched } from "../components/Why";
import { backToFeed, filter } from "./feed";
import { frame } from "./frame";

/** Hits a search view asks for. */
const SEARCH_LIMIT = 100;

export async function search(q: string): Promise<void> {
  searched(null);
  if (!q.trim()) return backToFeed();
  app.view = "search";
  const f = filter();
  const p: Record<string, unknown> = { query: q, limit: SEARCH_LIMIT };
  if (f.tag) p.tags = [f.tag];
  if (f.kind) p.kind = f.kind;
  if (f.author) p.author = f.author;
  const r = await rpc("search", p);
  searched(p);
  const hits = r.hits.map((h) => h.entry);
  frame(searchTitle(hits.length, SEARCH_LIMIT, q, r.mode));
  app.selected = hits[0]?.id ?? null;
  showEntries(hits);
}
