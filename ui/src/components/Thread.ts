// The replies under the entry in detail, at any depth, oldest first
// (`entry.thread`). Reloaded when an event touches one of its entries.

import { entries } from "../services";
import { count } from "../count";
import { el } from "../dom";
import { renderMarkdown } from "../markdown";
import { ago } from "../time";
import type { Entry, PadEvent } from "../types";

interface Loaded {
  id: string;
  replies: Entry[];
}

let loaded: Loaded | null = null;
/** Bumped on every load, so the detail knows to redraw. */
export let threadVersion = 0;

/** The replies loaded for `id`, if they are. */
export function repliesOf(id: string): Entry[] | null {
  return loaded?.id === id ? loaded.replies : null;
}

export async function loadThread(id: string): Promise<void> {
  const r = await entries.thread({ id });
  loaded = { id, replies: r.replies };
  threadVersion++;
}

/** Starts showing the thread of `id`: loads its replies, or knows without
 *  asking that it has none yet (so the first reply's event reloads it). */
export async function openThread(id: string, replies: number): Promise<void> {
  if (replies > 0) return loadThread(id);
  loaded = { id, replies: [] };
  threadVersion++;
}

export function forgetThread(): void {
  loaded = null;
}

/** Whether `ev` adds to, changes or removes part of the loaded thread. */
export function touches(ev: PadEvent): boolean {
  const e = ev.entry;
  if (!loaded || !e) return false;
  const ids = new Set([loaded.id, ...loaded.replies.map((r) => r.id)]);
  return ids.has(e.id) || (e.reply_to !== null && ids.has(e.reply_to));
}

/** How deep each reply sits under the root (1 for a direct reply). */
export function depths(rootId: string, replies: Entry[]): Map<string, number> {
  const depth = new Map<string, number>([[rootId, 0]]);
  // Oldest first, so a parent is always placed before its replies.
  for (const r of replies) depth.set(r.id, (depth.get(r.reply_to ?? "") ?? 0) + 1);
  depth.delete(rootId);
  return depth;
}

export function renderThread(root: Entry): HTMLElement {
  const box = el("div", "thread");
  const replies = repliesOf(root.id);
  if (!replies || replies.length === 0) return box;
  box.append(el("div", "thread-title", count(replies.length, "reply", "replies")));
  const depth = depths(root.id, replies);
  for (const r of replies) {
    const item = el("div", "reply");
    item.dataset.id = r.id;
    item.style.marginLeft = `${Math.min(depth.get(r.id) ?? 1, 6) * 14 - 14}px`;
    const head = el("div", "reply-head");
    head.append(el("span", "author", r.author), el("span", "time", ago(r.created_at)));
    if (root.kind === "question" && root.answer === r.id) head.append(el("span", "answer-chip", "answer"));
    const body = el("div", "markdown");
    body.innerHTML = renderMarkdown(r.content);
    item.append(head, body);
    box.append(item);
  }
  return box;
}
