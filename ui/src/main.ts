// The main window: pads, the live feed, search, the needs-eyes inbox,
// tasks in dependency order, and the entry in detail with its thread and
// Reply box. This file wires the components (components/) to the engine's
// events and the keyboard; state lives in one store (state.ts's Screen,
// made here and handed to what needs it). Nothing is trusted to be safe
// text unless it went through textContent or the markdown sanitizer.

import type { Kind } from "./protocol";
import { appInfo, getSettings, onEvent, onFocusEntry, onShowNeedsEyes, openLink, openQuick } from "./api";
import { engine, entries } from "./services";
import { $, fail, say } from "./dom";
import { Screen } from "./state";
import { parseQuickNote } from "./tags";
import { checkAddressed, handoffStatus } from "./handoff";
import { drawAddressed, wireAddressing } from "./components/Addressing";
import { exportPad, openSettings, wireDialogs } from "./components/Dialogs";
import { wireConnect } from "./components/Connect";
import { drawDetail, focusReply, onOpenEntry, remove, sendReply, startEdit, togglePin } from "./components/EntryDetail";
import { move, nearEnd, select } from "./components/List";
import { markSelected } from "./components/PlanGraph";
import { clearPad, createPad, drawNewPadHint, newPad, wirePadMenu } from "./components/PadActions";
import { focusEntry, loadMore, openPad, showAll } from "./views/feed";
import { FILTER_IDS, drawFilters, drawInboxCount, toggleFilters } from "./views/frame";
import { drawSoon, refilter, reload, wireTags } from "./views/index";
import { loadInbox, showInbox } from "./views/inbox";
import { showActivity, showAgents } from "./views/panes";
import { search } from "./views/search";
import { focusPicture, loadTasksSoon, showTasks, togglePlanForm } from "./views/tasks";
import { refreshTrash, showTrash } from "./views/trash";
import { loadPads, onOpenPad, refreshPadsSoon } from "./components/PadList";
import { loadThread, touches } from "./components/Thread";
import { onAgentsOpen } from "./components/Agents";
import { trashed } from "./components/Trash";
import { drawBanner, noteTrashed, recheckSoon } from "./components/Banner";

async function compose(screen: Screen, ev: Event): Promise<void> {
  ev.preventDefault();
  const ta = $<HTMLTextAreaElement>("compose-text");
  if (!ta.value.trim() || !screen.padOnScreen) return;
  const { content, tags, to } = parseQuickNote(ta.value);
  try {
    const warning = await checkAddressed(ta.value, to, screen.settings.author);
    if (warning) return say(warning, true);
    const r = await entries.add({ pad: screen.pad, content, tags, to, kind: ($("compose-kind") as HTMLSelectElement).value as Kind, author: screen.settings.author });
    if (to.length) screen.handedOff(r.entry.id);
    ta.value = "";
    drawAddressed($("compose-to"), "");
    say(to.length ? `saved to ${screen.pad}; handing to ${to.join(", ")}…` : `saved to ${screen.pad}`);
  } catch (e) {
    fail(e);
  }
}

/** Closes the entry in detail (the list, or the plan's picture, stays). */
function closeEntry(screen: Screen): void {
  select(screen, null);
  markSelected($("plan"), null);
}

let searchTimer = 0;

function wire(screen: Screen): void {
  wireDialogs(screen);
  wireConnect();
  onOpenPad((name) => void openPad(screen, name).catch(fail));
  $("compose").addEventListener("submit", (ev) => void compose(screen, ev));
  wireAddressing($<HTMLTextAreaElement>("compose-text"), $("compose-to"), $("compose-suggest"), () => screen.settings.author);
  $("compose-text").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) void compose(screen, ev);
    if (ev.key === "Escape") (ev.target as HTMLElement).blur();
  });
  $("reply-form").addEventListener("submit", (ev) => void sendReply(screen, ev));
  $("reply-text").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) void sendReply(screen, ev);
    if (ev.key === "Escape") (ev.target as HTMLElement).blur();
  });
  $("search").addEventListener("input", (ev) => {
    clearTimeout(searchTimer);
    const q = (ev.target as HTMLInputElement).value;
    searchTimer = window.setTimeout(() => void search(screen, q).catch(fail), 200);
  });
  $("search").addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") {
      (ev.target as HTMLInputElement).value = "";
      (ev.target as HTMLElement).blur();
      void search(screen, "").catch(fail);
    }
  });
  for (const id of FILTER_IDS) {
    $(id).addEventListener("change", () => {
      drawFilters();
      void refilter(screen).catch(fail);
    });
  }
  $("filter-btn").addEventListener("click", toggleFilters);
  $("filters-clear").addEventListener("click", () => {
    for (const id of FILTER_IDS) ($(id) as HTMLInputElement).value = "";
    drawFilters();
    void refilter(screen).catch(fail);
  });
  wirePadMenu();
  $("detail-close").addEventListener("click", () => closeEntry(screen));
  wireTags(screen);
  $("inbox-btn").addEventListener("click", () => void showInbox(screen).catch(fail));
  $("activity-btn").addEventListener("click", () => void showActivity(screen).catch(fail));
  $("agents-btn").addEventListener("click", () => void showAgents(screen).catch(fail));
  onAgentsOpen((pad) => void openPad(screen, pad).catch(fail), (pad, id) => void focusEntry(screen, pad, id).catch(fail));
  onOpenEntry((pad, id) => void focusEntry(screen, pad, id).catch(fail));
  $("tasks-btn").addEventListener("click", () => void showTasks(screen).catch(fail));
  $("all-btn").addEventListener("click", () => void showAll(screen).catch(fail));
  $("trash-btn").addEventListener("click", () => void showTrash(screen).catch(fail));
  $("export-btn").addEventListener("click", () => void exportPad(screen).catch(fail));
  $("clear-btn").addEventListener("click", () => void clearPad(screen).catch(fail));
  $("new-pad-btn").addEventListener("click", () => newPad());
  $("new-pad-name").addEventListener("input", drawNewPadHint);
  $("new-pad-form").addEventListener("submit", (ev) => {
    if ((ev as SubmitEvent).submitter?.getAttribute("value") === "create") void createPad(screen);
  });
  $("new-pad-name").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") {
      ev.preventDefault();
      $<HTMLDialogElement>("new-pad-dialog").close();
      void createPad(screen);
    }
  });
  $("settings-btn").addEventListener("click", () => openSettings(screen));
  $("quick-btn").addEventListener("click", () => void openQuick().catch(fail));
  $("feed").addEventListener("scroll", () => {
    if (nearEnd()) void loadMore(screen).catch(fail);
  });
  // Links in entries never navigate the app: they open in the browser.
  $("detail").addEventListener("click", (ev) => {
    const a = (ev.target as HTMLElement).closest("a");
    if (!a) return;
    ev.preventDefault();
    const href = a.getAttribute("href") ?? "";
    void openLink(href)
      .then(() => say(`opened ${href} in your browser`))
      .catch((e) => say(String(e), true));
  });
  document.addEventListener("keydown", (ev) => keys(screen, ev));
}

/** Moves the selection; near the end of the feed, loads older entries. */
function step(screen: Screen, by: number): void {
  if (move(screen, by) > screen.shown.length - 20) void loadMore(screen).catch(fail);
}

function keys(screen: Screen, ev: KeyboardEvent): void {
  const t = ev.target as HTMLElement;
  // Ctrl+K opens the quick box from anywhere in the window, even a field.
  if (ev.key.toLowerCase() === "k" && (ev.ctrlKey || ev.metaKey) && !ev.altKey) {
    ev.preventDefault();
    void openQuick().catch(fail);
    return;
  }
  if (t.closest("input, textarea, select") || document.querySelector("dialog[open]")) return;
  const e = screen.selectedEntry;
  // On the plan's picture with nothing focused, the moving keys go into it
  // (inside it, its own keys move; elsewhere, they do what they do there).
  const nowhere = t === document.body || t === $("plan");
  if (nowhere && ["j", "k", "ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight"].includes(ev.key) && focusPicture(screen)) {
    ev.preventDefault();
    return;
  }
  const handled = (() => {
    switch (ev.key) {
      case "/": $("search").focus(); return true;
      case "n": $("compose-text").focus(); return true;
      case "r": return focusReply(screen);
      case "j": case "ArrowDown": step(screen, 1); return true;
      case "k": case "ArrowUp": step(screen, -1); return true;
      case "v": togglePlanForm(screen); return screen.view === "tasks";
      case "p": if (e) void togglePin(e); return !!e;
      case "e": if (e) startEdit(screen, e); return !!e;
      case "Delete": case "Backspace": if (e) void remove(screen, e); return !!e;
      case "i": void showInbox(screen).catch(fail); return true;
      case "g": void showAll(screen).catch(fail); return true;
      case "a": void showActivity(screen).catch(fail); return true;
      case "w": void showAgents(screen).catch(fail); return true;
      case "t": if (screen.padOnScreen || screen.view === "tasks") void showTasks(screen).catch(fail); return true;
      case "d": if (screen.padOnScreen) void showTrash(screen).catch(fail); return true;
      case "x": void exportPad(screen).catch(fail); return true;
      case "C": if (ev.shiftKey) void clearPad(screen).catch(fail); return ev.shiftKey;
      case ",": openSettings(screen); return true;
      case "?": $<HTMLDialogElement>("help").showModal(); return true;
      // Esc closes the entry shown over the list (a narrow window).
      case "Escape": {
        const open = screen.selected !== null;
        if (open) closeEntry(screen);
        return open;
      }
      case "[": case "]": {
        const i = screen.pads.findIndex((p) => p.name === screen.pad);
        const next = screen.pads[(i + (ev.key === "]" ? 1 : -1) + screen.pads.length) % screen.pads.length];
        if (next) void openPad(screen, next.name).catch(fail);
        return true;
      }
      default: return false;
    }
  })();
  if (handled) ev.preventDefault();
}

async function main(): Promise<void> {
  // The one store of what the window shows, handed to every view and
  // component that reads or changes it.
  const screen = new Screen();
  wire(screen);
  screen.useSettings(await getSettings());
  screen.useInfo(await appInfo());
  $("engine-mode").textContent = `${screen.info.in_process ? "engine in this app" : "attached to pad serve"} · ${screen.info.version}`;
  $("engine-mode").title = `socket ${screen.info.socket}\ndata ${screen.info.data_dir}`;
  await onEvent((ev) => {
    if (ev.type === "disconnected") {
      const banner = $("engine-state");
      banner.hidden = false;
      banner.textContent = `The engine went away (${ev.socket ?? "its socket"}): what you see may be stale. Reconnecting — next try in ${Math.max(1, Math.round((ev.retry_in_ms ?? 0) / 1000))} s…`;
      return;
    }
    if (ev.type === "reconnected") {
      $("engine-state").hidden = true;
      say("reconnected to the engine");
      void Promise.all([reload(screen), loadPads(screen)]).catch(fail);
      return;
    }
    if (ev.type === "lagged") {
      void reload(screen).catch(fail);
      refreshPadsSoon(screen);
      return;
    }
    if ((ev.type === "waiting" || ev.type === "stopped_waiting") && ev.entry) {
      screen.waitOn(ev.entry.id, ev.type === "waiting");
      drawSoon(screen);
      drawDetail(screen);
      return;
    }
    if (ev.type === "delivery" && ev.delivery) {
      if (screen.deliveries.apply(ev.delivery)) {
        // What really happened to a note the person just handed over.
        if (screen.handoffs.has(ev.delivery.entry)) {
          const s = handoffStatus(ev.delivery);
          say(s.text, s.bad);
        }
        drawSoon(screen);
        drawDetail(screen);
      }
      return;
    }
    if (ev.type === "pad_expired" && ev.pad) {
      say(`pad ${ev.pad} was idle past its expiry and is archived: it is under Archived in the sidebar, with Restore (nothing in it is deleted for 7 days)`);
    }
    if (ev.type === "trashed" && ev.trashed && ev.pad && noteTrashed(ev.pad, ev.trashed, screen.settings.author)) drawBanner(screen);
    if (ev.type === "created" && ev.entry) {
      // A note handed over from the quick box: its news goes to the status line too.
      if (ev.entry.to.length && ev.entry.author === screen.settings.author) screen.handedOff(ev.entry.id);
      recheckSoon(screen, ev.entry.pad);
    }
    const c = screen.feed.apply(ev);
    if (c.pads) refreshPadsSoon(screen);
    if (touches(ev) && screen.selected) void loadThread(screen.selected).then(() => drawDetail(screen)).catch(fail);
    // The tasks view follows its tasks, and the questions that may wait on the person.
    if (screen.view === "tasks" && (ev.entry?.kind === "task" || ev.entry?.kind === "question") && ev.entry.pad === screen.pad) {
      loadTasksSoon(screen, ev.entry.kind === "question");
      return;
    }
    // The trash changes with a deletion, or with a listed entry restored.
    const trashChanged = ev.type === "trashed" || (ev.type === "created" && !!ev.entry && trashed.has(ev.entry.id));
    if (screen.view === "trash" && trashChanged && (ev.pad ?? ev.entry?.pad) === screen.pad) void refreshTrash(screen).catch(fail);
    if ((c.feed && (screen.view === "feed" || screen.view === "all")) || (c.inbox && screen.view === "inbox")) drawSoon(screen);
    else if (c.inbox) drawInboxCount(screen);
  });
  await onFocusEntry((entry) => void focusEntry(screen, entry.pad, entry.id).catch(fail));
  await onShowNeedsEyes(() => {
    if (screen.view !== "inbox") void showInbox(screen).catch(fail);
  });
  const stats = await engine.stats();
  screen.setWaiting(stats.waiting_questions ?? []);
  await loadInbox(screen);
  await loadPads(screen);
  await openPad(screen, screen.settings.pad);
  document.body.dataset.ready = "true";
}

void main().catch(fail);
