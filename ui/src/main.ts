// The main window: pads, the live feed, search, the needs-eyes inbox,
// tasks in dependency order, and the entry in detail. Everything goes
// through `rpc` and `pad-event`; nothing here is trusted to be safe text
// unless it went through textContent or the markdown sanitizer.

import { appInfo, getSettings, onEvent, onFocusEntry, rpc, setSettings, EngineError } from "./api";
import { renderActivity } from "./activity";
import { renderMarkdown } from "./markdown";
import { FeedStore, type Filter, type PlanStep } from "./store";
import { parseQuickNote } from "./tags";
import type { Entry, Kind, Pad, Settings, Status } from "./types";
import { VirtualList } from "./virtual";

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

const ROW = 88;
const PAGE = 1000;

type View = "feed" | "search" | "inbox" | "tasks" | "activity";

const store = new FeedStore();
let settings: Settings;
let pads: Pad[] = [];
let view: View = "feed";
let shown: Entry[] = [];
let selected: string | null = null;
let cursor: string | null = null;
let loadingMore = false;
let editing = false;
let plan: PlanStep[] = [];

const list = new VirtualList<Entry>($("feed"), ROW, row);

// ---------------------------------------------------------------- helpers

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function ago(t: string): string {
  const s = Math.round((Date.now() - Date.parse(t)) / 1000);
  if (s < -59) return `in ${human(-s)}`;
  if (s < 60) return "just now";
  return `${human(s)} ago`;
}

function human(s: number): string {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

function say(text: string, error = false): void {
  const s = $("status");
  s.textContent = text;
  s.classList.toggle("error", error);
}

function fail(e: unknown): void {
  say(e instanceof EngineError ? e.message : String(e), true);
}

function currentPad(): string {
  return settings.pad;
}

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

async function confirmAction(text: string, ok = "Delete"): Promise<boolean> {
  const d = $<HTMLDialogElement>("confirm");
  $("confirm-text").textContent = text;
  $("confirm-ok").textContent = ok;
  d.returnValue = "";
  d.showModal();
  return new Promise((resolve) => d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true }));
}

// ------------------------------------------------------------------- pads

async function loadPads(): Promise<void> {
  pads = (await rpc<{ pads: Pad[] }>("pad.list")).pads;
  drawPads();
}

let padsTimer = 0;
function refreshPadsSoon(): void {
  clearTimeout(padsTimer);
  padsTimer = window.setTimeout(() => void loadPads().catch(fail), 300);
}

function drawPads(): void {
  const nav = $("pads");
  const names = new Set(pads.map((p) => p.name));
  const all = names.has(currentPad()) ? pads : [...pads, { name: currentPad(), entries: 0, expires_at: null } as Pad];
  nav.replaceChildren(
    ...all.map((p) => {
      const b = el("button", "side-item pad");
      b.dataset.pad = p.name;
      b.classList.toggle("active", p.name === currentPad() && (view === "feed" || view === "tasks"));
      b.append(el("span", "pad-name", p.name), el("span", "count", String(p.entries)));
      b.title = p.expires_at ? `expires ${ago(p.expires_at)} if idle` : "never expires";
      if (p.expires_at) b.append(el("span", "expiry", `expires ${ago(p.expires_at).replace(" ago", "")} if idle`));
      b.addEventListener("click", () => void openPad(p.name));
      return b;
    }),
  );
}

async function openPad(name: string, select: string | null = null): Promise<void> {
  if (name !== settings.pad) {
    settings = { ...settings, pad: name };
    void setSettings(settings).catch(() => undefined);
  }
  view = "feed";
  ($("search") as HTMLInputElement).value = "";
  selected = select;
  await loadFeed();
  drawPads();
}

// ------------------------------------------------------------------- feed

async function loadFeed(): Promise<void> {
  const f = filter();
  store.expect(f);
  const r = await rpc<{ entries: Entry[]; next_cursor: string | null }>("entry.list", listParams(f));
  store.load(r.entries, f);
  cursor = r.next_cursor;
  draw();
}

/** Whether the feed is scrolled within 20 rows of its end. */
function nearEnd(): boolean {
  const f = $("feed");
  return f.scrollTop + f.clientHeight > f.scrollHeight - ROW * 20;
}

/** Loads the next page of older entries; again while the view is still
 *  near the end (a fast scroll can outrun a page). */
async function loadMore(): Promise<void> {
  if (!cursor || loadingMore || view !== "feed") return;
  loadingMore = true;
  try {
    const r = await rpc<{ entries: Entry[]; next_cursor: string | null }>("entry.list", { ...listParams(store.filter), cursor });
    store.append(r.entries);
    cursor = r.next_cursor;
    draw();
  } finally {
    loadingMore = false;
  }
  if (nearEnd()) await loadMore();
}

function showPanes(activity: boolean): void {
  $("content").hidden = activity;
  $("activity").hidden = !activity;
  $("activity-btn").classList.toggle("active", activity);
}

function draw(): void {
  showPanes(false);
  const title = $("view-title");
  if (view === "feed") {
    shown = store.entries;
    title.textContent = `${currentPad()} · ${shown.length}${cursor ? "+" : ""} entries`;
  } else if (view === "inbox") {
    shown = store.inbox;
    title.textContent = `Needs eyes · ${shown.length}`;
  } else if (view === "tasks") {
    shown = plan.map((s) => s.entry);
    const n = plan.reduce<Record<string, number>>((m, s) => ((m[s.state] = (m[s.state] ?? 0) + 1), m), {});
    title.textContent = `${currentPad()} · tasks in dependency order · ${n.ready ?? 0} ready, ${n.running ?? 0} running, ${n.blocked ?? 0} blocked, ${n.done ?? 0} done`;
  }
  $("inbox-count").textContent = store.inbox.length ? String(store.inbox.length) : "";
  $("inbox-btn").classList.toggle("active", view === "inbox");
  $("tasks-btn").classList.toggle("active", view === "tasks");
  list.setItems(shown);
  if (selected && !shown.some((e) => e.id === selected)) selected = null;
  drawDetail();
  const feed = $("feed");
  if (view === "feed" && cursor && feed.scrollHeight <= feed.clientHeight) void loadMore();
}

/** Redraws at the next frame: a burst of events costs one redraw. */
let drawFrame = 0;
function drawSoon(): void {
  if (drawFrame) return;
  drawFrame = requestAnimationFrame(() => {
    drawFrame = 0;
    if (view === "feed" || view === "inbox") draw();
  });
}

function row(e: Entry, i: number): HTMLElement {
  const r = el("div", "row");
  r.dataset.id = e.id;
  r.classList.toggle("selected", e.id === selected);
  r.classList.toggle("eyes", e.tags.includes("needs_eyes"));
  const head = el("div", "row-head");
  head.append(el("span", `kind kind-${e.kind}`, e.kind));
  if (view === "tasks") {
    const step = plan[i];
    if (step) head.append(el("span", `state state-${step.state}`, step.state));
  } else if (e.status) {
    head.append(el("span", `state state-${e.status}`, e.status));
  }
  head.append(el("span", "author", e.author));
  if (view !== "feed" || e.pad !== currentPad()) head.append(el("span", "pad-chip", e.pad));
  head.append(el("span", "time", ago(e.created_at)));
  if (e.pinned) head.append(el("span", "pin", "📌"));
  for (const t of e.tags) head.append(el("span", "tag", `#${t}`));
  const body = el("div", "row-body", e.content.replace(/\s+/g, " ").slice(0, 300));
  r.append(head, body);
  r.addEventListener("click", () => select(e.id));
  return r;
}

function select(id: string | null): void {
  selected = id;
  editing = false;
  list.refresh();
  drawDetail();
}

function move(by: number): void {
  if (!shown.length) return;
  const i = shown.findIndex((e) => e.id === selected);
  const next = Math.min(shown.length - 1, Math.max(0, (i < 0 ? -1 : i) + by));
  select(shown[next].id);
  list.scrollToIndex(next);
  if (next > shown.length - 20) void loadMore();
}

function drawDetail(): void {
  const d = $("detail");
  const e = shown.find((x) => x.id === selected);
  if (!e) {
    d.replaceChildren(el("p", "hint", shown.length ? "Select an entry (j / k) to read it here." : "Nothing here yet."));
    return;
  }
  const head = el("div", "detail-head");
  head.append(el("span", `kind kind-${e.kind}`, e.kind), el("span", "author", e.author), el("span", "pad-chip", e.pad), el("span", "time", `${ago(e.created_at)} · v${e.version}`));
  const facts = el("div", "facts");
  const fact = (label: string, value: string | null | undefined) => {
    if (value) facts.append(el("div", "fact", `${label}: ${value}`));
  };
  fact("id", e.id);
  fact("status", e.status);
  fact("held by", e.assignee);
  fact("lease until", e.lease_until);
  fact("resume", e.resume);
  fact("last error", e.error);
  fact("category", e.category ? `${e.category}${e.confidence !== null ? ` (confidence ${e.confidence})` : ""}` : null);
  fact("waits on", e.depends_on.join(", "));
  fact("reminder", e.remind_at);
  const tags = el("div", "tags");
  for (const t of e.tags) tags.append(el("span", "tag", `#${t}`));
  const actions = el("div", "actions");
  const button = (label: string, title: string, fn: () => void, cls = "") => {
    const b = el("button", cls, label);
    b.title = title;
    b.addEventListener("click", fn);
    actions.append(b);
  };
  button(e.pinned ? "Unpin" : "Pin", "p", () => void togglePin(e));
  button("Edit", "e", () => startEdit(e));
  if (e.tags.includes("needs_eyes")) button("Done looking", "removes the needs_eyes tag", () => void seen(e));
  button("Delete", "Delete", () => void remove(e), "danger");
  const body = el("div", "markdown");
  if (editing) {
    const ta = el("textarea", "edit");
    ta.value = e.content;
    ta.rows = 12;
    const save = el("button", "", "Save");
    const cancel = el("button", "", "Cancel");
    save.addEventListener("click", () => void saveEdit(e, ta.value));
    cancel.addEventListener("click", () => select(e.id));
    ta.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) void saveEdit(e, ta.value);
      if (ev.key === "Escape") select(e.id);
    });
    body.append(ta, el("div", "actions"));
    (body.lastChild as HTMLElement).append(save, cancel);
    d.replaceChildren(head, facts, tags, body);
    ta.focus();
    return;
  }
  body.innerHTML = renderMarkdown(e.content);
  d.replaceChildren(head, facts, tags, actions, body);
}

async function togglePin(e: Entry): Promise<void> {
  await rpc("entry.update", { id: e.id, pinned: !e.pinned, if_version: e.version }).catch(fail);
}

function startEdit(e: Entry): void {
  editing = true;
  selected = e.id;
  drawDetail();
}

async function saveEdit(e: Entry, content: string): Promise<void> {
  try {
    await rpc("entry.update", { id: e.id, content, if_version: e.version });
    editing = false;
    say("saved");
  } catch (err) {
    fail(err);
  }
}

async function seen(e: Entry): Promise<void> {
  await rpc("entry.update", { id: e.id, tags: e.tags.filter((t) => t !== "needs_eyes"), if_version: e.version }).catch(fail);
}

async function remove(e: Entry): Promise<void> {
  if (!(await confirmAction(`Delete this ${e.kind} by ${e.author}? It cannot be undone.`))) return;
  await rpc("entry.delete", { id: e.id }).catch(fail);
}

// ----------------------------------------------------------------- views

let searchTimer = 0;
async function search(q: string): Promise<void> {
  if (!q.trim()) {
    view = "feed";
    return loadFeed();
  }
  view = "search";
  const f = filter();
  const p: Record<string, unknown> = { query: q, limit: 100 };
  if (f.tag) p.tags = [f.tag];
  if (f.kind) p.kind = f.kind;
  if (f.author) p.author = f.author;
  const r = await rpc<{ hits: { entry: Entry }[]; mode: string }>("search", p);
  shown = r.hits.map((h) => h.entry);
  $("view-title").textContent = `${shown.length} found for “${q}” in every pad (${r.mode})`;
  list.setItems(shown);
  selected = shown[0]?.id ?? null;
  list.refresh();
  drawDetail();
}

async function showTasks(): Promise<void> {
  if (view === "tasks") {
    view = "feed";
    return loadFeed();
  }
  const r = await rpc<{ entries: PlanStep[] }>("plan.order", { pad: currentPad() });
  plan = r.entries;
  view = "tasks";
  draw();
}

let activityTimer = 0;
async function showActivity(): Promise<void> {
  clearInterval(activityTimer);
  if (view === "activity") {
    view = "feed";
    return loadFeed();
  }
  view = "activity";
  showPanes(true);
  drawPads();
  $("view-title").textContent = "Activity";
  const refresh = () => renderActivity($("activity"), (pad) => {
    clearInterval(activityTimer);
    void openPad(pad).catch(fail);
  });
  await refresh();
  activityTimer = window.setInterval(() => {
    if (view === "activity") void refresh().catch(fail);
    else clearInterval(activityTimer);
  }, 5000);
}

async function showInbox(): Promise<void> {
  view = view === "inbox" ? "feed" : "inbox";
  if (view === "feed") return loadFeed();
  const r = await rpc<{ entries: Entry[] }>("entry.list", { tags: ["needs_eyes"], limit: 200 });
  store.loadInbox(r.entries);
  drawPads();
  draw();
}

async function exportPad(): Promise<void> {
  const r = await rpc<{ text: string }>("pad.export", { name: currentPad(), format: "markdown" });
  $("export-title").textContent = `Export of ${currentPad()}`;
  ($("export-text") as HTMLTextAreaElement).value = r.text;
  $<HTMLDialogElement>("export-dialog").showModal();
}

async function clearPad(): Promise<void> {
  const pad = currentPad();
  const n = pads.find((p) => p.name === pad)?.entries ?? store.entries.length;
  if (!(await confirmAction(`Clear pad “${pad}”: delete all ${n} entries, pinned ones too? This cannot be undone.`, "Clear pad"))) {
    say("nothing deleted");
    return;
  }
  const r = await rpc<{ deleted: number }>("pad.clear", { name: pad });
  say(`deleted ${r.deleted} entries`);
  await loadFeed();
}

async function newPad(): Promise<void> {
  const name = window.prompt("Name of the new pad (a-z, 0-9, . _ : -)");
  if (!name) return;
  try {
    const r = await rpc<{ pad: Pad }>("pad.configure", { name, ttl_seconds: settings.default_ttl_seconds });
    await loadPads();
    await openPad(r.pad.name);
  } catch (e) {
    fail(e);
  }
}

function openSettings(): void {
  const f = $<HTMLFormElement>("settings-form");
  const field = (n: string) => f.elements.namedItem(n) as HTMLInputElement;
  field("hotkey").value = settings.hotkey;
  field("author").value = settings.author;
  field("notifications").checked = settings.notifications;
  field("ttl_hours").value = settings.default_ttl_seconds === null ? "" : String(settings.default_ttl_seconds / 3600);
  field("metrics").value = settings.metrics ?? "";
  $("settings-error").textContent = "";
  $<HTMLDialogElement>("settings-dialog").showModal();
}

async function saveSettings(ev: Event): Promise<void> {
  ev.preventDefault();
  const f = $<HTMLFormElement>("settings-form");
  const field = (n: string) => f.elements.namedItem(n) as HTMLInputElement;
  const hours = field("ttl_hours").value.trim();
  try {
    settings = await setSettings({
      ...settings,
      hotkey: field("hotkey").value.trim(),
      author: field("author").value.trim().toLowerCase(),
      notifications: field("notifications").checked,
      default_ttl_seconds: hours === "" ? null : Math.max(1, Math.round(Number(hours) * 3600)),
      metrics: field("metrics").value.trim() || null,
    });
    store.me = settings.author;
    $<HTMLDialogElement>("settings-dialog").close();
    say("settings saved");
  } catch (e) {
    $("settings-error").textContent = String(e);
  }
}

// ---------------------------------------------------------------- compose

async function compose(ev: Event): Promise<void> {
  ev.preventDefault();
  const ta = $<HTMLTextAreaElement>("compose-text");
  if (!ta.value.trim()) return;
  const { content, tags } = parseQuickNote(ta.value);
  try {
    await rpc("entry.add", { pad: currentPad(), content, tags, kind: ($("compose-kind") as HTMLSelectElement).value, author: settings.author });
    ta.value = "";
    say("saved");
  } catch (e) {
    fail(e);
  }
}

// ----------------------------------------------------------------- events

function wire(): void {
  $("compose").addEventListener("submit", (ev) => void compose(ev));
  $("compose-text").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) void compose(ev);
    if (ev.key === "Escape") (ev.target as HTMLElement).blur();
  });
  $("search").addEventListener("input", (ev) => {
    clearTimeout(searchTimer);
    const q = (ev.target as HTMLInputElement).value;
    searchTimer = window.setTimeout(() => void search(q).catch(fail), 200);
  });
  $("search").addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") {
      (ev.target as HTMLInputElement).value = "";
      (ev.target as HTMLElement).blur();
      void search("").catch(fail);
    }
  });
  for (const id of ["f-kind", "f-tag", "f-author", "f-status"]) {
    $(id).addEventListener("change", () => void (view === "search" ? search(($("search") as HTMLInputElement).value) : loadFeed()).catch(fail));
  }
  $("inbox-btn").addEventListener("click", () => void showInbox().catch(fail));
  $("activity-btn").addEventListener("click", () => void showActivity().catch(fail));
  $("tasks-btn").addEventListener("click", () => void showTasks().catch(fail));
  $("export-btn").addEventListener("click", () => void exportPad().catch(fail));
  $("clear-btn").addEventListener("click", () => void clearPad().catch(fail));
  $("new-pad-btn").addEventListener("click", () => void newPad());
  $("settings-btn").addEventListener("click", openSettings);
  $("settings-form").addEventListener("submit", (ev) => {
    if ((ev as SubmitEvent).submitter?.getAttribute("value") === "save") void saveSettings(ev);
  });
  $("export-copy").addEventListener("click", () => void navigator.clipboard.writeText(($("export-text") as HTMLTextAreaElement).value).then(() => say("copied")));
  $("feed").addEventListener("scroll", () => {
    if (nearEnd()) void loadMore().catch(fail);
  });
  // Links in entries never navigate the app: show where they point.
  $("detail").addEventListener("click", (ev) => {
    const a = (ev.target as HTMLElement).closest("a");
    if (a) {
      ev.preventDefault();
      say(`link: ${a.getAttribute("href") ?? ""}`);
    }
  });
  document.addEventListener("keydown", keys);
}

function keys(ev: KeyboardEvent): void {
  const t = ev.target as HTMLElement;
  if (t.closest("input, textarea, select") || document.querySelector("dialog[open]")) return;
  const e = shown.find((x) => x.id === selected);
  const handled = (() => {
    switch (ev.key) {
      case "/": $("search").focus(); return true;
      case "n": $("compose-text").focus(); return true;
      case "j": case "ArrowDown": move(1); return true;
      case "k": case "ArrowUp": move(-1); return true;
      case "p": if (e) void togglePin(e); return !!e;
      case "e": if (e) startEdit(e); return !!e;
      case "Delete": case "Backspace": if (e) void remove(e); return !!e;
      case "i": void showInbox().catch(fail); return true;
      case "a": void showActivity().catch(fail); return true;
      case "t": void showTasks().catch(fail); return true;
      case "x": void exportPad().catch(fail); return true;
      case "C": if (ev.shiftKey) void clearPad().catch(fail); return ev.shiftKey;
      case ",": openSettings(); return true;
      case "?": $<HTMLDialogElement>("help").showModal(); return true;
      case "[": case "]": {
        const i = pads.findIndex((p) => p.name === currentPad());
        const next = pads[(i + (ev.key === "]" ? 1 : -1) + pads.length) % pads.length];
        if (next) void openPad(next.name).catch(fail);
        return true;
      }
      default: return false;
    }
  })();
  if (handled) ev.preventDefault();
}

async function main(): Promise<void> {
  wire();
  settings = await getSettings();
  store.me = settings.author;
  const info = await appInfo();
  $("engine-mode").textContent = `${info.in_process ? "engine in this app" : "attached to pad serve"} · ${info.version}`;
  $("engine-mode").title = `socket ${info.socket}\ndata ${info.data_dir}`;
  await onEvent((ev) => {
    if (ev.type === "lagged") {
      void loadFeed().catch(fail);
      refreshPadsSoon();
      return;
    }
    const c = store.apply(ev);
    if (c.pads) refreshPadsSoon();
    if (view === "tasks" && ev.entry?.kind === "task" && ev.entry.pad === currentPad()) {
      view = "feed";
      void showTasks().catch(fail);
      return;
    }
    if ((c.feed && view === "feed") || (c.inbox && view === "inbox")) drawSoon();
    else if (c.inbox) $("inbox-count").textContent = store.inbox.length ? String(store.inbox.length) : "";
  });
  await onFocusEntry((entry) => void openPad(entry.pad, entry.id).then(() => {
    const i = shown.findIndex((e) => e.id === entry.id);
    if (i >= 0) {
      list.scrollToIndex(i);
      select(entry.id);
    }
  }).catch(fail));
  const inbox = await rpc<{ entries: Entry[] }>("entry.list", { tags: ["needs_eyes"], limit: 200 });
  store.loadInbox(inbox.entries);
  await loadPads();
  await openPad(settings.pad);
  document.body.dataset.ready = "true";
}

void main().catch(fail);
