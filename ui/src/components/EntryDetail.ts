// The entry in detail: its facts, its actions, its content, its thread and
// the Reply box (`r` focuses it). A question shows whether it is answered
// and, while open, its choices as buttons beside a free-text answer.

import { rpc } from "../api";
import { $, el, fail, say } from "../dom";
import { renderMarkdown } from "../markdown";
import { app, selectedEntry } from "../state";
import { parseQuickNote } from "../tags";
import { ago } from "../time";
import type { Entry } from "../types";
import { confirmAction } from "./Dialogs";
import { forgetThread, loadThread, openThread, renderThread, repliesOf, threadVersion } from "./Thread";
import { deletedLine, historySection, inTrash, offerUndo, restoreEntry, trashed } from "./Trash";
import { welcome } from "./Welcome";

/** What the pane shows now; it is redrawn only when this changes, so a
 *  burst of events elsewhere never disturbs the person reading. */
let drawn = "";

/** Whether `e` is a question nobody else has answered yet. */
export const isOpenQuestion = (e: Entry): boolean => e.kind === "question" && e.answer === null;

export function drawDetail(): void {
  const e = selectedEntry();
  const key = e ? `${e.id}:${e.version}:${threadVersion}:${app.editing}:${app.view === "trash"}` : `none:${app.shown.length === 0}:${app.view}:${app.settings.pad}`;
  if (key === drawn) return;
  const entryChanged = !drawn.startsWith(e ? `${e.id}:` : "none:");
  drawn = key;
  const main = $("detail-main");
  const form = $<HTMLFormElement>("reply-form");
  if (!e) {
    forgetThread();
    form.hidden = true;
    $("thread").replaceChildren();
    main.replaceChildren(app.shown.length || app.view !== "feed" ? el("p", "hint", app.shown.length ? "Select an entry (j / k) to read it here." : "Nothing here.") : welcome());
    return;
  }
  if (inTrash()) {
    main.replaceChildren(...trashView(e));
    $("thread").replaceChildren();
    form.hidden = true;
    return;
  }
  if (entryChanged) {
    ($("reply-text") as HTMLTextAreaElement).value = "";
    if (!repliesOf(e.id)) void openThread(e.id, e.replies).then(drawDetail).catch(fail);
  }
  main.replaceChildren(...(app.editing ? editor(e) : view(e)));
  $("thread").replaceChildren(renderThread(e));
  drawReplyForm(e);
  form.hidden = app.editing;
}

function view(e: Entry): HTMLElement[] {
  const head = el("div", "detail-head");
  head.append(el("span", `kind kind-${e.kind}`, e.kind));
  if (e.kind === "question") head.append(el("span", `q-state ${isOpenQuestion(e) ? "q-open" : "q-answered"}`, isOpenQuestion(e) ? "open" : "answered"));
  head.append(el("span", "author", e.author), el("span", "pad-chip", e.pad), el("span", "time", `${ago(e.created_at)} · v${e.version}`));
  const facts = el("div", "facts");
  const fact = (label: string, value: string | null | undefined) => {
    if (value) facts.append(el("div", "fact", `${label}: ${value}`));
  };
  fact("id", e.id);
  fact("in reply to", e.reply_to);
  fact("status", e.status);
  fact("held by", e.assignee);
  fact("lease until", e.lease_until);
  fact("resume", e.resume);
  fact("last error", e.error);
  fact("category", e.category ? `${e.category}${e.confidence !== null ? ` (confidence ${e.confidence})` : ""}` : null);
  fact("waits on", e.depends_on.join(", "));
  fact("reminder", e.remind_at);
  if (e.choices.length) fact("choices", e.choices.join(" · "));
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
  body.innerHTML = renderMarkdown(e.content);
  return [head, facts, tags, actions, body, historySection(e)];
}

/** A deleted entry, read-only, with who deleted it and Restore. */
function trashView(e: Entry): HTMLElement[] {
  const v = trashed.get(e.id);
  const head = el("div", "detail-head");
  head.append(el("span", `kind kind-${e.kind}`, e.kind), el("span", "author", e.author), el("span", "pad-chip", e.pad), el("span", "time", `${ago(e.created_at)} · v${e.version}`));
  const line = el("div", "deleted-line", v ? deletedLine(v) : "deleted");
  const actions = el("div", "actions");
  const restore = el("button", "", "Restore");
  restore.id = "restore-btn";
  restore.addEventListener("click", () => {
    void restoreEntry(e.id)
      .then(() => {
        trashed.delete(e.id);
        app.shown = app.shown.filter((x) => x.id !== e.id);
        app.selected = app.shown[0]?.id ?? null;
        drawn = "";
        drawDetail();
      })
      .catch(fail);
  });
  actions.append(restore);
  const body = el("div", "markdown");
  body.innerHTML = renderMarkdown(e.content);
  return [head, line, actions, body];
}

function editor(e: Entry): HTMLElement[] {
  const ta = el("textarea", "edit");
  ta.value = e.content;
  ta.rows = 12;
  const save = el("button", "", "Save");
  const cancel = el("button", "", "Cancel");
  const stop = () => {
    app.editing = false;
    drawDetail();
  };
  save.addEventListener("click", () => void saveEdit(e, ta.value));
  cancel.addEventListener("click", stop);
  ta.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) void saveEdit(e, ta.value);
    if (ev.key === "Escape") stop();
  });
  const actions = el("div", "actions");
  actions.append(save, cancel);
  queueMicrotask(() => ta.focus());
  return [ta, actions];
}

/** The Reply box under the thread; for an open question, its choices. */
function drawReplyForm(e: Entry): void {
  const choices = $("reply-choices");
  const open = isOpenQuestion(e);
  choices.replaceChildren();
  if (open && e.choices.length) {
    choices.append(el("span", "hint", "Answer:"));
    for (const c of e.choices) {
      const b = el("button", "choice", c);
      b.type = "button";
      b.addEventListener("click", () => void reply(e, c));
      choices.append(b);
    }
    choices.append(el("span", "hint", "or write your own below"));
  }
  ($("reply-send") as HTMLButtonElement).textContent = open ? "Answer" : "Reply";
  ($("reply-text") as HTMLTextAreaElement).placeholder = `${open ? "Answer" : "Reply to"} ${e.author}… (r focuses, Ctrl+Enter sends, #words become tags)`;
}

/** Writes a reply to `e` as the person; the engine hands it to a waiting
 *  `ask` at once. */
export async function reply(e: Entry, text: string): Promise<boolean> {
  if (!text.trim()) return false;
  const { content, tags } = parseQuickNote(text);
  try {
    await rpc("entry.add", { pad: e.pad, reply_to: e.id, content, tags, author: app.settings.author });
    say(isOpenQuestion(e) ? `answered ${e.author}` : `replied to ${e.author}`);
    await loadThread(e.id);
    drawDetail();
    return true;
  } catch (err) {
    fail(err);
    return false;
  }
}

export async function sendReply(ev: Event): Promise<void> {
  ev.preventDefault();
  const e = selectedEntry();
  const ta = $<HTMLTextAreaElement>("reply-text");
  if (e && (await reply(e, ta.value))) ta.value = "";
}

export function focusReply(): boolean {
  if (!selectedEntry() || app.editing) return false;
  $("reply-text").focus();
  return true;
}

export async function togglePin(e: Entry): Promise<void> {
  await rpc("entry.update", { id: e.id, pinned: !e.pinned, if_version: e.version }).catch(fail);
}

export function startEdit(e: Entry): void {
  app.editing = true;
  app.selected = e.id;
  drawDetail();
}

async function saveEdit(e: Entry, content: string): Promise<void> {
  try {
    await rpc("entry.update", { id: e.id, content, if_version: e.version });
    app.editing = false;
    drawDetail();
    say("saved");
  } catch (err) {
    fail(err);
  }
}

async function seen(e: Entry): Promise<void> {
  await rpc("entry.update", { id: e.id, tags: e.tags.filter((t) => t !== "needs_eyes"), if_version: e.version }).catch(fail);
}

export async function remove(e: Entry): Promise<void> {
  if (inTrash()) return;
  if (!(await confirmAction(`Delete this ${e.kind} by ${e.author}? It goes to the pad's trash.`))) return;
  try {
    const r = await rpc<{ change: number | null }>("entry.delete", { id: e.id });
    offerUndo(`Deleted the ${e.kind} by ${e.author}.`, r.change, () => undefined);
  } catch (err) {
    fail(err);
  }
}
