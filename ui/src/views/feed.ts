// The feed view: a pad's entries, newest first, live, replies folded under
// the note they answer (opened in place); and All pads, every pad's at
// once. Filters (kind, #tag, author, status) narrow both; older entries
// load as the list scrolls. Every other view goes back here.

import { setSettings } from "../api";
import { agents, entries } from "../services";
import { count } from "../count";
import { $ } from "../dom";
import { app, currentPad } from "../state";
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
export function filter(): Filter {
  const v = (id: string) => ($(id) as HTMLInputElement).value.trim();
  const tag = v("f-tag").replace(/^#/, "").toLowerCase();
  return {
    pad: currentPad(),
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
export async function openPad(name: string, select: string | null = null): Promise<void> {
  if (name !== app.settings.pad) {
    app.useSettings({ ...app.settings, pad: name });
    void setSettings(app.settings).catch(() => undefined);
  }
  app.setView("feed");
  ($("search") as HTMLInputElement).value = "";
  app.setSelected(select);
  await loadFeed();
  drawPads();
}

/** Opens `pad` on the entry `id` (a notification's Open, say). */
export async function focusEntry(pad: string, id: string): Promise<void> {
  await openPad(pad, id);
  const root = foldedUnder(app.feed.entries, id);
  if (root && !open.has(root)) toggleThread(root);
  reveal(id);
}

/** Back to the feed of the pad on screen (from another view). */
export function backToFeed(): Promise<void> {
  app.setView("feed");
  return loadFeed();
}

/** Loads the feed (or All pads) afresh with the filters and draws it. */
export async function loadFeed(): Promise<void> {
  const f = app.view === "all" ? { ...filter(), pad: null } : filter();
  app.feed.expect(f);
  const [r, d] = await Promise.all([
    entries.list(listParams(f)),
    agents.deliveries(f.pad ? { pad: f.pad } : {}).catch(() => ({ deliveries: [] })),
  ]);
  app.deliveries.load(d.deliveries);
  app.feed.load(r.entries, f);
  cursor = r.next_cursor;
  draw();
}

/** Every pad's entries, newest first, live; again to go back to the pad. */
export async function showAll(): Promise<void> {
  app.setView(app.view === "all" ? "feed" : "all");
  app.setSelected(null);
  await loadFeed();
  drawPads();
}

/** Loads the next page of older entries; again while the view is still
 *  near the end (a fast scroll can outrun a page). */
export async function loadMore(): Promise<void> {
  if (!cursor || loadingMore || (app.view !== "feed" && app.view !== "all")) return;
  loadingMore = true;
  try {
    const r = await entries.list({ ...listParams(app.feed.filter), cursor });
    app.feed.append(r.entries);
    cursor = r.next_cursor;
    draw();
  } finally {
    loadingMore = false;
  }
  if (nearEnd()) await loadMore();
}

export function draw(): void {
  const where = app.view === "all" ? "All pads" : currentPad();
  frame(`${where} · ${count(app.feed.entries.length, "entry", "entries", !!cursor)}`);
  const t = threaded(app.feed.entries, open);
  showEntries(t.rows, { depth: t.depth, folded: t.folded, open, toggle: toggleThread });
  if (cursor && notFull()) void loadMore();
}

/** Opens or folds the thread under root `id`, in place. */
function toggleThread(id: string): void {
  if (!open.delete(id)) open.add(id);
  draw();
}
