// The feed view: a pad's entries, newest first, live, replies folded under
// the note they answer (opened in place); and All pads, every pad's at
// once. Filters (kind, #tag, author, status) narrow both; older entries
// load as the list scrolls. Every other view goes back here.

import { setSettings } from "../api";
import { agents, entries } from "../services";
import { count } from "../count";
import { $ } from "../dom";
import type { Screen } from "../state";
import { foldedUnder, threaded, type Filter } from "../store";
import type { ListParams } from "../protocol";
import type { Kind, Status } from "../types";
import { nearEnd, notFull, reveal, showEntries } from "../components/List";
import { drawPads } from "../components/PadList";
import { frame } from "./frame";

const PAGE = 1000;

/** The next page of the feed, if any. */
let cursor: string | null = null;
let loadingMore = false;

/** Threads the person opened in the feed (their roots' ids). */
const open = new Set<string>();

/** The filters as the person set them, for the pad on screen. */
export function filter(screen: Screen): Filter {
  const v = (id: string) => ($(id) as HTMLInputElement).value.trim();
  const tag = v("f-tag").replace(/^#/, "").toLowerCase();
  return {
    pad: screen.pad,
    tag: tag || null,
    kind: (v("f-kind") || null) as Kind | null,
    author: v("f-author").toLowerCase() || null,
    status: (v("f-status") || null) as Status | null,
  };
}

function listParams(f: Filter): ListParams {
  const p: ListParams = { limit: PAGE };
  if (f.pad) p.pad = f.pad;
  if (f.tag) p.tags = [f.tag];
  if (f.kind) p.kind = f.kind;
  if (f.author) p.author = f.author;
  if (f.status) p.status = f.status;
  return p;
}

/** Opens `name`'s feed (remembered in the settings), selecting `select`. */
export async function openPad(screen: Screen, name: string, select: string | null = null): Promise<void> {
  if (name !== screen.settings.pad) {
    screen.useSettings({ ...screen.settings, pad: name });
    void setSettings(screen.settings).catch(() => undefined);
  }
  screen.setView("feed");
  ($("search") as HTMLInputElement).value = "";
  screen.setSelected(select);
  await loadFeed(screen);
  drawPads(screen);
}

/** Opens `pad` on the entry `id` (a notification's Open, say). */
export async function focusEntry(screen: Screen, pad: string, id: string): Promise<void> {
  await openPad(screen, pad, id);
  const root = foldedUnder(screen.feed.entries, id);
  if (root && !open.has(root)) toggleThread(screen, root);
  reveal(screen, id);
}

/** Back to the feed of the pad on screen (from another view). */
export function backToFeed(screen: Screen): Promise<void> {
  screen.setView("feed");
  return loadFeed(screen);
}

/** Loads the feed (or All pads) afresh with the filters and draws it. */
export async function loadFeed(screen: Screen): Promise<void> {
  const f = screen.view === "all" ? { ...filter(screen), pad: null } : filter(screen);
  screen.feed.expect(f);
  const [r, d] = await Promise.all([
    entries.list(listParams(f)),
    agents.deliveries(f.pad ? { pad: f.pad } : {}).catch(() => ({ deliveries: [] })),
  ]);
  screen.deliveries.load(d.deliveries);
  screen.feed.load(r.entries, f);
  cursor = r.next_cursor;
  draw(screen);
}

/** Every pad's entries, newest first, live; again to go back to the pad. */
export async function showAll(screen: Screen): Promise<void> {
  screen.setView(screen.view === "all" ? "feed" : "all");
  screen.setSelected(null);
  await loadFeed(screen);
  drawPads(screen);
}

/** Loads the next page of older entries; again while the view is still
 *  near the end (a fast scroll can outrun a page). */
export async function loadMore(screen: Screen): Promise<void> {
  if (!cursor || loadingMore || (screen.view !== "feed" && screen.view !== "all")) return;
  loadingMore = true;
  try {
    const r = await entries.list({ ...listParams(screen.feed.filter), cursor });
    screen.feed.append(r.entries);
    cursor = r.next_cursor;
    draw(screen);
  } finally {
    loadingMore = false;
  }
  if (nearEnd()) await loadMore(screen);
}

export function draw(screen: Screen): void {
  const where = screen.view === "all" ? "All pads" : screen.pad;
  frame(screen, `${where} · ${count(screen.feed.entries.length, "entry", "entries", !!cursor)}`);
  const t = threaded(screen.feed.entries, open);
  showEntries(screen, t.rows, { depth: t.depth, folded: t.folded, open, toggle: (id) => toggleThread(screen, id) });
  if (cursor && notFull()) void loadMore(screen);
}

/** Opens or folds the thread under root `id`, in place. */
function toggleThread(screen: Screen, id: string): void {
  if (!open.delete(id)) open.add(id);
  draw(screen);
}
