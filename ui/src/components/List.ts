// The list in the middle, shared by the views that list entries (feed, all
// pads, search, Needs eyes, tasks, trash): virtualised rows (virtual.ts),
// selection and the keys that move it. The selected entry opens in
// EntryDetail. Each view (views/) decides what the list holds.

import { authorChip, holderChips } from "../authors";
import { aboutChip } from "../context";
import { count } from "../count";
import { deliveryClass, deliveryLabel } from "../deliveries";
import { $, el, pinIcon } from "../dom";
import { plainPreview } from "../markdown";
import type { Screen } from "../state";
import { holding, taskWord } from "../taskwords";
import { ago } from "../time";
import type { PlanStep } from "../protocol";
import type { Entry } from "../types";
import { VirtualList } from "../virtual";
import { drawDetail, endEditing, isOpenQuestion } from "./EntryDetail";
import { tagChip } from "./Tag";

/** A row's height before it is measured (one line of text and its head). */
export const ROW_ESTIMATE = 64;

/** What a row's height depends on: when it changes, the row is measured again. */
const rowKey = (e: Entry): string =>
  `${e.id}:${e.version}:${e.replies}:${rowsOf().deliveries.of(e.id).length}:${rowsOf().view}:${layout.folded?.get(e.id)?.length ?? 0}`;
const list = new VirtualList<Entry>($("feed"), ROW_ESTIMATE, row, rowKey);
// A list a screen reader announces: each row an item, one tab stop (the
// selected row), arrows and j/k moving focus and selection together.
$("feed").setAttribute("role", "list");

/** How a view lays its rows out, beyond the rows themselves. */
export interface Layout {
  /** What goes above a row (Needs eyes: a group's head), if anything. */
  above?: (e: Entry, i: number) => HTMLElement | null;
  /** Each row's depth in its thread (the feed's open threads). */
  depth?: number[];
  /** Per thread root, the replies folded under it. */
  folded?: Map<string, Entry[]>;
  /** The thread roots whose replies show (the rest fold). */
  open?: ReadonlySet<string>;
  /** Opens or closes the thread of a root. */
  toggle?: (id: string) => void;
  /** What the view adds to a row's head (search: how strong a match). */
  badge?: (e: Entry) => HTMLElement | null;
  /** The tasks view: each row's step of the plan (who holds it, since when). */
  steps?: PlanStep[];
}
let layout: Layout = {};

/** The screen whose entries the rows show: the one `showEntries` was last
 *  given (the virtual list draws rows later, as they scroll into view). */
let shownOn: Screen | null = null;
function rowsOf(): Screen {
  if (!shownOn) throw new Error("a row is drawn before the list was given its entries: call showEntries first");
  return shownOn;
}

/** Shows `entries` (what `screen.shown` holds then), keeping the
 *  selection while it is among them, laid out as `how` says. */
export function showEntries(screen: Screen, entries: Entry[], how: Layout = {}): void {
  layout = how;
  shownOn = screen;
  screen.setShown(entries);
  list.setItems(entries);
  drawDetail(screen);
}

/** Whether the list is scrolled within 20 rows of its end. */
export function nearEnd(): boolean {
  const f = $("feed");
  return f.scrollTop + f.clientHeight > f.scrollHeight - ROW_ESTIMATE * 20;
}

/** Whether the list is too short to scroll (more should be loaded). */
export function notFull(): boolean {
  const f = $("feed");
  return f.scrollHeight <= f.clientHeight;
}

export function select(screen: Screen, id: string | null): void {
  screen.setSelected(id);
  endEditing();
  list.refresh();
  drawDetail(screen);
}

/** Moves the selection `by` rows; returns the index it landed on. */
export function move(screen: Screen, by: number): number {
  if (!screen.shown.length) return -1;
  const i = screen.shown.findIndex((e) => e.id === screen.selected);
  const next = Math.min(screen.shown.length - 1, Math.max(0, (i < 0 ? -1 : i) + by));
  select(screen, screen.shown[next].id);
  list.scrollToIndex(next);
  return next;
}

/** Scrolls to the entry `id` and selects it, if it is listed. */
export function reveal(screen: Screen, id: string): void {
  const i = screen.shown.findIndex((e) => e.id === id);
  if (i >= 0) {
    list.scrollToIndex(i);
    select(screen, id);
  }
}

/** Under a thread's root: how many replies fold under it, the latest's
 *  author and time, and a button that opens or closes the thread. */
function foldLine(e: Entry, replies: Entry[]): HTMLElement {
  const open = layout.open?.has(e.id) ?? false;
  const latest = replies[replies.length - 1];
  const line = el("div", "fold");
  const b = el("button", "fold-toggle", `${open ? "▾" : "▸"} ${count(replies.length, "reply", "replies")}`);
  b.setAttribute("aria-expanded", String(open));
  b.title = open ? "Fold the replies" : "Show the replies here";
  b.addEventListener("click", (ev) => {
    ev.stopPropagation();
    layout.toggle?.(e.id);
  });
  line.append(b, el("span", "fold-latest", `latest: ${latest.author} ${ago(latest.created_at)} · ${plainPreview(latest.content, 80)}`));
  return line;
}

/** One row: kind, state, author, time, tags; a question says open or
 *  answered, an entry with replies how many, a reply what it answers. */
function row(e: Entry, i: number): HTMLElement {
  const screen = rowsOf();
  const r = el("div", "row");
  r.dataset.id = e.id;
  const selected = e.id === screen.selected;
  r.classList.toggle("selected", selected);
  r.setAttribute("role", "listitem");
  r.setAttribute("aria-posinset", String(i + 1));
  r.setAttribute("aria-setsize", String(screen.shown.length));
  r.setAttribute("aria-label", `${e.kind} by ${e.author}, ${ago(e.created_at)}: ${plainPreview(e.content, 160)}`);
  if (selected) r.setAttribute("aria-current", "true");
  r.tabIndex = selected || (!screen.selected && i === 0) ? 0 : -1;
  r.addEventListener("focus", () => {
    if (screen.selected !== e.id) select(screen, e.id);
  });
  r.classList.toggle("eyes", e.tags.includes("needs_eyes"));
  const head = el("div", "row-head");
  head.append(el("span", `kind kind-${e.kind}`, e.kind));
  if (e.kind === "question") head.append(el("span", `q-state ${isOpenQuestion(e) ? "q-open" : "q-answered"}`, isOpenQuestion(e) ? "open" : "answered"));
  const word = taskWord(e, layout.steps?.[i]);
  if (word) head.append(el("span", `state state-${word}`, word));
  if (e.supersedes) head.append(el("span", "replaces", "replaces an older note"));
  if (e.superseded_by) head.append(el("span", "superseded", "superseded"));
  if (screen.view === "tasks") {
    // Who holds the task is what the tasks view is about; who wrote it is in the detail.
    head.append(...holderChips(holding(e), screen.settings.author));
  } else {
    head.append(authorChip(e.author, screen.settings.author));
  }
  if (screen.view !== "feed" || e.pad !== screen.pad) head.append(el("span", "pad-chip", e.pad));
  head.append(el("span", "time", ago(e.created_at)));
  if (e.replies > 0 && !layout.folded?.has(e.id)) head.append(el("span", "replies", count(e.replies, "reply", "replies")));
  if (e.pinned) head.append(pinIcon());
  for (const t of e.tags) head.append(tagChip(t));
  for (const d of screen.deliveries.of(e.id)) head.append(el("span", deliveryClass(d), deliveryLabel(d)));
  const badge = layout.badge?.(e);
  if (badge) head.append(badge);
  const body = el("div", "row-body", plainPreview(e.content));
  const over = layout.above?.(e, i);
  if (over) r.append(over);
  r.append(head);
  const about = aboutChip(e, screen.shown);
  if (about) r.append(about);
  r.append(body);
  const replies = layout.folded?.get(e.id);
  if (replies?.length) r.append(foldLine(e, replies));
  const depth = layout.depth?.[i] ?? 0;
  if (depth > 0) {
    r.classList.add("in-thread");
    r.style.paddingLeft = `${12 + Math.min(depth, 6) * 18}px`;
  }
  r.addEventListener("click", () => select(screen, e.id));
  return r;
}
