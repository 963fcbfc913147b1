// The list in the middle: a pad's live feed, search hits, the needs-eyes
// inbox or the pad's tasks in dependency order; the activity view in its
// place. Rows are virtualised (virtual.ts); the selected entry opens in
// EntryDetail.

import { rpc, setSettings } from "../api";
import { renderActivity } from "../activity";
import { deliveryClass, deliveryLabel } from "../deliveries";
import { renderAgents } from "./Agents";
import { count, searchTitle } from "../count";
import { $, el, fail, pinIcon, say } from "../dom";
import { authorChip } from "../authors";
import { app, currentPad, padLabel, padOnScreen } from "../state";
import { fixPadName } from "../tags";
import type { Filter } from "../store";
import { plainPreview } from "../markdown";
import { ago } from "../time";
import type { Entry, Kind, Status } from "../types";
import { planCounts, taskWord } from "../taskwords";
import { VirtualList } from "../virtual";
import { confirmAction } from "./Dialogs";
import { doneLooking, drawDetail, isOpenQuestion } from "./EntryDetail";
import { drawPads, loadPads } from "./PadList";
import { loadTrash, offerUndo } from "./Trash";

/** A row's height before it is measured (one line of text and its head). */
const ROW_ESTIMATE = 64;
const PAGE = 1000;

/** What a row's height depends on: when it changes, the row is measured again. */
const rowKey = (e: Entry): string => `${e.id}:${e.version}:${e.replies}:${app.deliveries.of(e.id).length}:${app.view}`;
const list = new VirtualList<Entry>($("feed"), ROW_ESTIMATE, row, rowKey);

function filter(): Filter {
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

function listParams(f: Filter): Record<string, unknown> {
  const p: Record<string, unknown> = { pad: f.pad, limit: PAGE };
  if (f.tag) p.tags = [f.tag];
  if (f.kind) p.kind = f.kind;
  if (f.author) p.author = f.author;
  if (f.status) p.status = f.status;
  return p;
}

export async function openPad(name: string, select: string | null = null): Promise<void> {
  if (name !== app.settings.pad) {
    app.settings = { ...app.settings, pad: name };
    void setSettings(app.settings).catch(() => undefined);
  }
  app.view = "feed";
  ($("search") as HTMLInputElement).value = "";
  app.selected = select;
  await loadFeed();
  drawPads();
}

export async function loadFeed(): Promise<void> {
  const f = app.view === "all" ? { ...filter(), pad: null } : filter();
  app.feed.expect(f);
  const [r, d] = await Promise.all([
    rpc("entry.list", listParams(f)),
    rpc("agent.deliveries", f.pad ? { pad: f.pad } : {}).catch(() => ({ deliveries: [] })),
  ]);
  app.deliveries.load(d.deliveries);
  app.feed.load(r.entries, f);
  app.cursor = r.next_cursor;
  draw();
}

/** Whether the feed is scrolled within 20 rows of its end. */
export function nearEnd(): boolean {
  const f = $("feed");
  return f.scrollTop + f.clientHeight > f.scrollHeight - ROW_ESTIMATE * 20;
}

/** Loads the next page of older entries; again while the view is still
 *  near the end (a fast scroll can outrun a page). */
export async function loadMore(): Promise<void> {
  if (!app.cursor || app.loadingMore || (app.view !== "feed" && app.view !== "all")) return;
  app.loadingMore = true;
  try {
    const r = await rpc("entry.list", { ...listParams(app.feed.filter), cursor: app.cursor });
    app.feed.append(r.entries);
    app.cursor = r.next_cursor;
    draw();
  } finally {
    app.loadingMore = false;
  }
  if (nearEnd()) await loadMore();
}

/** The pad's actions name the pad they act on, and are off while the list
 *  shows something else (Needs eyes, search, activity): then there is no
 *  pad on screen to act on. */
export function drawActions(): void {
  const on = padOnScreen();
  const pad = padLabel(currentPad());
  const set = (id: string, label: string, title: string) => {
    const b = $<HTMLButtonElement>(id);
    b.textContent = label;
    b.disabled = !on;
    b.title = on ? title : "Open a pad first: this acts on the pad on screen";
  };
  set("tasks-btn", "Tasks", `Tasks of ${currentPad()} in dependency order (t)`);
  set("trash-btn", "Trash", `Deleted entries of ${currentPad()}, to restore (d)`);
  set("export-btn", `Export ${pad}`, `Export ${currentPad()} as markdown (x)`);
  set("clear-btn", `Clear ${pad}`, `Move every entry of ${currentPad()} to the trash (Shift+C)`);
  const ta = $<HTMLTextAreaElement>("compose-text");
  ta.disabled = !on;
  $<HTMLButtonElement>("compose-save").disabled = !on;
  ta.placeholder = on
    ? `Write a note to ${currentPad()}… (n to focus, Ctrl+Enter to save, #words become tags, @agent hands it over)`
    : "Open a pad to write to it";
}

function showPanes(activity: boolean): void {
  $("content").hidden = activity;
  $("activity").hidden = !activity;
  $("activity-btn").classList.toggle("active", activity && app.view === "activity");
  $("agents-btn").classList.toggle("active", activity && app.view === "agents");
}

export function drawInboxCount(): void {
  $("inbox-count").textContent = app.feed.inbox.length ? String(app.feed.inbox.length) : "";
}

export function draw(): void {
  showPanes(false);
  const title = $("view-title");
  if (app.view === "feed" || app.view === "all") {
    app.shown = app.feed.entries;
    const where = app.view === "all" ? "All pads" : currentPad();
    title.textContent = `${where} · ${count(app.shown.length, "entry", "entries", !!app.cursor)}`;
  } else if (app.view === "inbox") {
    app.shown = app.feed.inbox;
    const open = app.shown.filter(isOpenQuestion).length;
    title.textContent = `Needs eyes · ${count(app.shown.length, "entry", "entries")}${open ? ` · ${count(open, "open question", "open questions")} first` : ""}`;
    const notes = app.shown.length - open;
    if (notes > 0) {
      const all = el("button", "", `Done looking at ${notes === 1 ? "the note" : `all ${notes} notes`}`);
      all.id = "eyes-done";
      all.title = "Takes needs_eyes off every note here; open questions stay until answered";
      all.addEventListener("click", () => void doneLookingAll().catch(fail));
      title.append(" ", all);
    }
  } else if (app.view === "trash") {
    title.textContent = `${currentPad()} · trash · ${count(app.shown.length, "deleted entry", "deleted entries")} (restorable for 30 days)`;
  } else if (app.view === "tasks") {
    app.shown = app.plan.map((s) => s.entry);
    title.textContent = `${currentPad()} · tasks in dependency order · ${planCounts(app.plan)}`;
  }
  drawInboxCount();
  $("inbox-btn").classList.toggle("active", app.view === "inbox");
  $("tasks-btn").classList.toggle("active", app.view === "tasks");
  $("trash-btn").classList.toggle("active", app.view === "trash");
  $("all-btn").classList.toggle("active", app.view === "all");
  drawActions();
  list.setItems(app.shown);
  if (app.selected && !app.shown.some((e) => e.id === app.selected)) app.selected = null;
  drawDetail();
  const feed = $("feed");
  if ((app.view === "feed" || app.view === "all") && app.cursor && feed.scrollHeight <= feed.clientHeight) void loadMore();
}

/** Redraws at the next frame: a burst of events costs one redraw. */
let drawFrame = 0;
export function drawSoon(): void {
  if (drawFrame) return;
  drawFrame = requestAnimationFrame(() => {
    drawFrame = 0;
    if (app.view === "feed" || app.view === "all" || app.view === "inbox") draw();
  });
}

/** One row: kind, state, author, time, tags; a question says open or
 *  answered, an entry with replies how many, a reply that it is one. */
function row(e: Entry, i: number): HTMLElement {
  const r = el("div", "row");
  r.dataset.id = e.id;
  r.classList.toggle("selected", e.id === app.selected);
  r.classList.toggle("eyes", e.tags.includes("needs_eyes"));
  const head = el("div", "row-head");
  head.append(el("span", `kind kind-${e.kind}`, e.kind));
  if (e.kind === "question") head.append(el("span", `q-state ${isOpenQuestion(e) ? "q-open" : "q-answered"}`, isOpenQuestion(e) ? "open" : "answered"));
  const word = taskWord(e, app.view === "tasks" ? app.plan[i] : undefined);
  if (word) head.append(el("span", `state state-${word}`, word));
  if (e.reply_to) head.append(el("span", "is-reply", "↳ reply"));
  if (app.view === "tasks") {
    // Who holds the task is what the tasks view is about; who wrote it is in the detail.
    if (e.assignee && e.status === "todo" && !e.error) {
      // Back in the queue with a last holder and no error: its lease ran out.
      head.append(el("span", "holder lapsed", "back in the queue: the lease of"), authorChip(e.assignee, app.settings.author), el("span", "holder lapsed", "ran out"));
    } else if (e.assignee && e.status === "todo") {
      head.append(el("span", "holder lapsed", "back in the queue after failing for"), authorChip(e.assignee, app.settings.author));
    } else if (e.assignee) {
      head.append(el("span", "holder", "held by"), authorChip(e.assignee, app.settings.author));
    } else {
      head.append(el("span", "holder", "nobody holds it"));
    }
  } else {
    head.append(authorChip(e.author, app.settings.author));
  }
  if (app.view !== "feed" || e.pad !== currentPad()) head.append(el("span", "pad-chip", e.pad));
  head.append(el("span", "time", ago(e.created_at)));
  if (e.replies > 0) head.append(el("span", "replies", count(e.replies, "reply", "replies")));
  if (e.pinned) head.append(pinIcon());
  for (const t of e.tags) head.append(tagChip(t));
  for (const d of app.deliveries.of(e.id)) head.append(el("span", deliveryClass(d), deliveryLabel(d)));
  const body = el("div", "row-body", plainPreview(e.content));
  r.append(head, body);
  r.addEventListener("click", () => select(e.id));
  return r;
}

/** A tag: clicking it filters the feed to it. */
export function tagChip(t: string): HTMLElement {
  const chip = el("button", "tag", `#${t}`);
  chip.type = "button";
  chip.title = `Show only #${t}`;
  chip.addEventListener("click", (ev) => {
    ev.stopPropagation();
    ($("f-tag") as HTMLInputElement).value = t;
    if (app.view === "search") void search(($("search") as HTMLInputElement).value).catch(fail);
    else {
      app.view = "feed";
      void loadFeed().catch(fail);
    }
  });
  return chip;
}

export function select(id: string | null): void {
  app.selected = id;
  app.editing = false;
  list.refresh();
  drawDetail();
}

export function move(by: number): void {
  if (!app.shown.length) return;
  const i = app.shown.findIndex((e) => e.id === app.selected);
  const next = Math.min(app.shown.length - 1, Math.max(0, (i < 0 ? -1 : i) + by));
  select(app.shown[next].id);
  list.scrollToIndex(next);
  if (next > app.shown.length - 20) void loadMore();
}

/** Opens `pad` on the entry `id` (a notification's Open, say). */
export async function focusEntry(pad: string, id: string): Promise<void> {
  await openPad(pad, id);
  const i = app.shown.findIndex((e) => e.id === id);
  if (i >= 0) {
    list.scrollToIndex(i);
    select(id);
  }
}

// ----------------------------------------------------------------- views

/** Hits a search view asks for. */
const SEARCH_LIMIT = 100;

export async function search(q: string): Promise<void> {
  if (!q.trim()) {
    app.view = "feed";
    return loadFeed();
  }
  app.view = "search";
  drawActions();
  const f = filter();
  const p: Record<string, unknown> = { query: q, limit: SEARCH_LIMIT };
  if (f.tag) p.tags = [f.tag];
  if (f.kind) p.kind = f.kind;
  if (f.author) p.author = f.author;
  const r = await rpc("search", p);
  app.shown = r.hits.map((h) => h.entry);
  $("view-title").textContent = searchTitle(app.shown.length, SEARCH_LIMIT, q, r.mode);
  list.setItems(app.shown);
  app.selected = app.shown[0]?.id ?? null;
  list.refresh();
  drawDetail();
}

export async function showTasks(): Promise<void> {
  if (app.view === "tasks") {
    app.view = "feed";
    return loadFeed();
  }
  const r = await rpc("plan.order", { pad: currentPad() });
  app.plan = r.entries;
  app.view = "tasks";
  draw();
}

/** Every pad's entries, newest first, live; again to go back to the pad. */
export async function showAll(): Promise<void> {
  app.view = app.view === "all" ? "feed" : "all";
  app.selected = null;
  await loadFeed();
  drawPads();
}

/** The pad's trash in the list; again to go back to the feed. */
export async function showTrash(): Promise<void> {
  if (app.view === "trash") {
    app.view = "feed";
    return loadFeed();
  }
  app.shown = await loadTrash();
  app.view = "trash";
  app.selected = app.shown[0]?.id ?? null;
  draw();
}

let trashLoading = false;
let trashStale = false;
/** The open Trash view again, after something of its pad was deleted or
 *  restored elsewhere (an agent, another window): the trash is live. A
 *  burst of events while it loads is one more load, not one each. */
export async function refreshTrash(): Promise<void> {
  if (trashLoading) {
    trashStale = true;
    return;
  }
  trashLoading = true;
  try {
    do {
      trashStale = false;
      const shown = await loadTrash();
      if (app.view !== "trash") return;
      app.shown = shown;
      draw();
    } while (trashStale);
  } finally {
    trashLoading = false;
  }
}

let activityTimer = 0;
/** The Agents view: who is working now, on what; agents to hand work to. */
export async function showAgents(): Promise<void> {
  clearInterval(activityTimer);
  if (app.view === "agents") {
    app.view = "feed";
    return loadFeed();
  }
  app.view = "agents";
  $("activity").replaceChildren();
  showPanes(true);
  drawActions();
  drawPads();
  $("view-title").textContent = "Agents";
  await renderAgents($("activity"), () => app.view === "agents");
}

export async function showActivity(): Promise<void> {
  clearInterval(activityTimer);
  if (app.view === "activity") {
    app.view = "feed";
    return loadFeed();
  }
  app.view = "activity";
  showPanes(true);
  drawActions();
  drawPads();
  $("view-title").textContent = "Activity";
  const refresh = () => renderActivity($("activity"), (pad) => {
    clearInterval(activityTimer);
    void openPad(pad).catch(fail);
  });
  await refresh();
  activityTimer = window.setInterval(() => {
    if (app.view === "activity") void refresh().catch(fail);
    else clearInterval(activityTimer);
  }, 5000);
}

export async function loadInbox(): Promise<void> {
  const r = await rpc("entry.list", { tags: ["needs_eyes"], limit: 200 });
  app.feed.loadInbox(r.entries);
}

/** Done looking at every note in Needs eyes; open questions stay. */
async function doneLookingAll(): Promise<void> {
  const notes = app.feed.inbox.filter((e) => !isOpenQuestion(e));
  for (const e of notes) await doneLooking(e.id);
  say(`done looking at ${count(notes.length, "note", "notes")}`);
}

export async function showInbox(): Promise<void> {
  app.view = app.view === "inbox" ? "feed" : "inbox";
  if (app.view === "feed") return loadFeed();
  await loadInbox();
  drawPads();
  draw();
}

export async function clearPad(): Promise<void> {
  if (!padOnScreen()) return say("open a pad first: Clear acts on the pad on screen", true);
  const pad = currentPad();
  const n = app.pads.find((p) => p.name === pad)?.entries ?? app.feed.entries.length;
  if (!(await confirmAction(`Clear pad “${pad}”: move ${n === 1 ? "its 1 entry" : `all ${n} entries`}, pinned ones too, to the trash?`, "Clear pad"))) {
    say("nothing deleted");
    return;
  }
  const r = await rpc("pad.clear", { name: pad });
  say(`deleted ${count(r.deleted, "entry", "entries")}`);
  offerUndo(`Cleared ${pad}: ${count(r.deleted, "entry", "entries")} in the trash.`, r.change, () => void loadFeed().catch(fail));
  await loadFeed();
}

/** The New pad dialog: as the person types, it shows the name the pad
 *  will get (lowercase, other characters as "-"), and creates that. */
export function newPad(): void {
  const dialog = $<HTMLDialogElement>("new-pad-dialog");
  const input = $<HTMLInputElement>("new-pad-name");
  input.value = "";
  drawNewPadHint();
  dialog.showModal();
  input.focus();
}

export function drawNewPadHint(): void {
  const raw = $<HTMLInputElement>("new-pad-name").value;
  const name = fixPadName(raw);
  const hint = $("new-pad-hint");
  const ok = $<HTMLButtonElement>("new-pad-ok");
  ok.disabled = name === "";
  if (!raw.trim()) hint.textContent = "a-z, 0-9, . _ : - (up to 64)";
  else if (name === raw.trim()) hint.textContent = `creates pad ${name}`;
  else if (name) hint.textContent = `pad names use a-z, 0-9, . _ : -: it will be “${name}”`;
  else hint.textContent = "nothing usable: use a-z, 0-9, . _ : -";
  ok.textContent = name ? `Create ${padLabel(name)}` : "Create";
}

export async function createPad(): Promise<void> {
  const name = fixPadName($<HTMLInputElement>("new-pad-name").value);
  if (!name) return;
  try {
    const r = await rpc("pad.configure", { name, ttl_seconds: app.settings.default_ttl_seconds });
    await loadPads();
    await openPad(r.pad.name);
  } catch (e) {
    fail(e);
  }
}
