// The entry in detail: its facts, its actions, its content, its thread and
// the Reply box (`r` focuses it). A question shows whether it is answered
// and, while open, its choices as buttons beside a free-text answer.

import { EngineError } from "../api";
import { entries } from "../services";
import { $, el, fail, say } from "../dom";
import { authorChip } from "../authors";
import { choiceClass } from "../choices";
import { deliveryClass, deliveryLabel } from "../deliveries";
import { renderMarkdown } from "../markdown";
import type { Screen } from "../state";
import { parseQuickNote } from "../tags";
import { title, titleOf } from "../context";
import { doneLooking } from "../eyes";
import { checkAddressed } from "../handoff";
import type { Delivery } from "../protocol";
import { taskWord } from "../taskwords";
import { ago } from "../time";
import type { Entry } from "../types";
import { confirmAction } from "./Dialogs";
import { forgetThread, loadThread, openThread, renderThread, repliesOf, threadVersion } from "./Thread";
import { deletedLine, historySection, offerUndo, restoreEntry, trashed, undoChange } from "./Trash";
import { tagChip } from "./Tag";
import { bannerShown } from "./Banner";
import { whySection } from "./Why";
import { welcome } from "./Welcome";

/** What the pane shows now; it is redrawn only when this changes, so a
 *  burst of events elsewhere never disturbs the person reading. */
let drawn = "";

/** The entry as it was when the person began editing it: their save is
 *  made against this version, so an agent's change meanwhile is a conflict
 *  the person decides, never silently overwritten or lost. */
let editBase: Entry | null = null;

/** Whether the person is editing the selected entry (the pane shows the
 *  editor, not the Reply box). */
let editing = false;

/** Leaves the editor without saving (another entry was selected). */
export function endEditing(): void {
  editing = false;
}

/** The plan's open questions an agent asked the person, by the task they
 *  ask about (`plangraph.askedOn`, set by the tasks view): the Reply box
 *  answers them. */
let asks = new Map<string, Entry>();
export function answerOnPlan(asked: Map<string, Entry>): void {
  asks = asked;
}

/** Whether the editor writes a new note that replaces `editBase` (the
 *  older one is kept, marked superseded) rather than editing it. */
let replacing = false;

/** Whether `e` is a question nobody else has answered yet. */
export const isOpenQuestion = (e: Entry): boolean => e.kind === "question" && e.answer === null;

/** What the Reply box answers for `e`: on the plan, a task's open question
 *  (an agent asked the person in its thread and waits), else `e` itself. */
export const replyTarget = (screen: Screen, e: Entry): Entry => (screen.view === "tasks" ? asks.get(e.id) : undefined) ?? e;

export function drawDetail(screen: Screen): void {
  const e = screen.selectedEntry;
  const delivered = e ? screen.deliveries.of(e.id).map((d) => `${d.agent}=${d.state}@${d.updated_at}`).join(",") : "";
  const key = e ? `${e.id}:${e.version}:${threadVersion}:${editing}:${screen.view === "trash"}:${waitedOn(screen, e)}:${delivered}:${replyTarget(screen, e).id}` : `none:${screen.shown.length === 0}:${screen.view}:${screen.settings.pad}:${bannerShown(screen)}`;
  if (key === drawn) return;
  const entryChanged = !drawn.startsWith(e ? `${e.id}:` : "none:");
  drawn = key;
  const main = $("detail-main");
  const form = $<HTMLFormElement>("reply-form");
  // A narrow window shows the detail over the list: only with something in it.
  $("content").classList.toggle("detail-open", !!e || screen.shown.length === 0);
  if (!e) {
    forgetThread();
    form.hidden = true;
    $("thread").replaceChildren();
    main.replaceChildren(emptyPane(screen));
    return;
  }
  if (screen.view === "trash") {
    main.replaceChildren(...trashView(screen, e));
    $("thread").replaceChildren();
    form.hidden = true;
    return;
  }
  if (entryChanged) {
    ($("reply-text") as HTMLTextAreaElement).value = "";
    if (!repliesOf(e.id)) void openThread(e.id, e.replies).then(() => drawDetail(screen)).catch(fail);
  }
  if (editing && editBase?.id === e.id && main.querySelector("textarea.edit")) {
    // The person is typing: their editor stays as it is; a change by
    // someone else shows beside it.
    drawTheirs(screen, e);
  } else {
    main.replaceChildren(...(editing ? editor(screen, e) : view(screen, e)));
  }
  $("thread").replaceChildren(renderThread(e));
  drawReplyForm(screen, e);
  form.hidden = editing;
}

/** The pane with nothing selected: how to start in an empty pad — unless
 *  someone just emptied it (its banner offers Undo). */
function emptyPane(screen: Screen): HTMLElement {
  if (screen.shown.length) return el("p", "hint", "Select an entry (j / k) to read it here.");
  if (screen.view !== "feed") return el("p", "hint", "Nothing here.");
  if (bannerShown(screen)) return el("p", "hint", "Everything here was moved to the trash: Undo above brings it back, or Trash (d) lists it.");
  return welcome(screen);
}

function view(screen: Screen, e: Entry): HTMLElement[] {
  const head = el("div", "detail-head");
  head.append(el("span", `kind kind-${e.kind}`, e.kind));
  if (e.kind === "question") head.append(el("span", `q-state ${isOpenQuestion(e) ? "q-open" : "q-answered"}`, isOpenQuestion(e) ? "open" : "answered"));
  head.append(authorChip(e.author, screen.settings.author), el("span", "pad-chip", e.pad), el("span", "time", `${ago(e.created_at)} · v${e.version}`));

  const facts = el("div", "facts");
  const fact = (label: string, value: string | null | undefined) => {
    if (value) facts.append(el("div", "fact", `${label}: ${value}`));
  };
  fact("id", e.id);
  if (e.reply_to) facts.append(replyToLine(screen, e.reply_to));
  fact("replaces", e.supersedes ? `${e.supersedes} (the older note, kept)` : null);
  if (e.superseded_by) facts.append(el("div", "fact superseded", `superseded by ${e.superseded_by}: a newer note holds now`));
  fact("state", taskWord(e));
  fact("held by", e.assignee);
  fact("lease", e.lease_until ? `${Date.parse(e.lease_until) > Date.now() ? "runs out" : "ran out"} ${ago(e.lease_until)} (${clock(e.lease_until)})` : null);
  fact("resume", e.resume);
  fact("last error", e.error);
  fact("category", e.category ? `${e.category}${e.confidence !== null ? ` (confidence ${e.confidence})` : ""}` : null);
  if (e.depends_on.length) facts.append(waitsOnLine(screen, e.depends_on));
  fact("reminder", e.remind_at ? `${ago(e.remind_at)} (${clock(e.remind_at)})` : null);
  if (e.choices.length) fact("choices", e.choices.join(" · "));
  if (e.to.length) fact("for", e.to.join(", "));
  for (const d of screen.deliveries.of(e.id)) facts.append(deliveryLine(screen, e, d));
  const tags = el("div", "tags");
  for (const t of e.tags) tags.append(tagChip(t));
  const actions = el("div", "actions");
  const button = (label: string, title: string, fn: () => void, cls = "") => {
    const b = el("button", cls, label);
    b.title = title;
    b.addEventListener("click", fn);
    actions.append(b);
  };
  button(e.pinned ? "Unpin" : "Pin", "p", () => void togglePin(e));
  button("Edit", "e", () => startEdit(screen, e));
  if (!e.superseded_by) button("Replace…", "Write what holds now as a new note: this one is kept, marked superseded, and lists and searches show the new one", () => startEdit(screen, e, true));
  if (e.tags.includes("needs_eyes")) button("Done looking", "removes the needs_eyes tag", () => void seen(e));
  if (e.kind === "task") {
    for (const [label, status, title] of taskMoves(e)) button(label, title, () => void setStatus(e, status));
  }
  button("Delete", "Delete", () => void remove(screen, e), "danger");
  const body = el("div", "markdown");
  body.innerHTML = renderMarkdown(e.content);
  const waiting = isOpenQuestion(e) ? [waitingLine(screen, e)] : [];
  const why = screen.view === "search" ? whySection(e) : null;
  return [head, ...waiting, facts, tags, actions, ...(why ? [why] : []), body, historySection(e)];
}

/** Where the note stands with one agent; a failed handoff offers Retry
 *  (the engine asked whether to try again: the answer "retry") or Re-send
 *  (the agent failed it: the same note, handed over anew). */
function deliveryLine(screen: Screen, e: Entry, d: Delivery): HTMLElement {
  const line = el("div", `fact ${deliveryClass(d)}`, deliveryLabel(d));
  if (d.state !== "failed") return line;
  const b = el("button", "delivery-action", d.question ? "Retry now" : "Re-send");
  b.title = d.question ? `Try to deliver it to ${d.agent} again` : `Hand the same note to ${d.agent} again, as a new note`;
  b.addEventListener("click", () => {
    b.disabled = true;
    const params = d.question
      ? { pad: d.pad, reply_to: d.question, content: "retry", author: screen.settings.author }
      : { pad: e.pad, content: e.content, tags: e.tags, to: [d.agent], author: screen.settings.author };
    void entries.add(params)
      .then((r) => {
        if (!d.question) screen.handedOff(r.entry.id);
        say(d.question ? `retrying ${d.agent}…` : `sent again to ${d.agent} as a new note`);
      })
      .catch(fail);
  });
  line.append(" ", b);
  return line;
}

/** What the person can do with a task: finish it, fail it, unblock it,
 *  or reopen a finished one. */
function taskMoves(e: Entry): [string, "todo" | "done" | "failed", string][] {
  if (e.status === "done" || e.status === "failed") return [["Reopen", "todo", "Back to the queue, to do again"]];
  const moves: [string, "todo" | "done" | "failed", string][] = [
    ["Mark done", "done", "Done: tasks waiting on it can go"],
    ["Mark failed", "failed", "Failed: say why in a reply"],
  ];
  if (e.status === "blocked") moves.push(["Unblock", "todo", "Back to the queue: whoever takes tasks can claim it"]);
  return moves;
}

async function setStatus(e: Entry, status: "todo" | "done" | "failed"): Promise<void> {
  try {
    await entries.update({ id: e.id, status, if_version: e.version });
    say(status === "todo" ? "back in the queue" : `marked ${status}`);
  } catch (err) {
    fail(err);
  }
}

/** "14:03" for a time today, else "26 Nov 14:03": when, beside "in 4m". */
export function clock(t: string, now = new Date()): string {
  const d = new Date(t);
  const hm = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return d.toDateString() === now.toDateString() ? hm : `${d.toLocaleDateString([], { day: "numeric", month: "short" })} ${hm}`;
}

/** The tasks this one waits on, by their titles. */
function waitsOnLine(screen: Screen, ids: string[]): HTMLElement {
  const line = el("div", "fact waits-on", "waits on: …");
  void Promise.all(ids.map((id) => title(id, screen.shown))).then((ts) => (line.textContent = `waits on: ${ts.map((t) => `“${t}”`).join(", ")}`));
  return line;
}

/** What the entry replies to, by its title, and a button that opens it. */
function replyToLine(screen: Screen, parent: string): HTMLElement {
  const line = el("div", "fact reply-to");
  const text = el("span", "", "in reply to: …");
  void title(parent, screen.shown).then((t) => (text.textContent = `in reply to: “${t}”`));
  const open = el("button", "link", "Open");
  open.title = `Open the entry this replies to (${parent})`;
  open.addEventListener("click", () => void openParent(parent).catch(fail));
  line.append(text, " ", open);
  return line;
}

/** Shows entry `id` where it lives (its pad's feed). */
async function openParent(id: string): Promise<void> {
  const { entry } = await entries.get({ id });
  openEntry(entry.pad, entry.id);
}

let openEntry: (pad: string, id: string) => void = () => undefined;

/** How the detail opens another entry (main.ts: the feed's `focusEntry`). */
export function onOpenEntry(fn: (pad: string, id: string) => void): void {
  openEntry = fn;
}

/** Whether someone waits for the question's answer now: an `ask` call
 *  (`waiting` events), or an agent the person handed work to over A2A
 *  whose task waits on this question (its delivery). */
export function waitedOn(screen: Screen, e: Entry): boolean {
  return screen.waiting.has(e.id) || screen.deliveries.waitingOn(e.id);
}

/** Whether the agent that asked still waits for the answer. */
function waitingLine(screen: Screen, e: Entry): HTMLElement {
  const line = el("div", "waiting");
  line.id = "waiting-line";
  if (waitedOn(screen, e)) {
    line.textContent = `${e.author} is waiting for your answer`;
  } else {
    line.classList.add("gone");
    line.textContent = `${e.author} is not waiting now: your answer reaches its inbox when it next looks`;
  }
  return line;
}

/** A deleted entry, read-only, with who deleted it and Restore. */
function trashView(screen: Screen, e: Entry): HTMLElement[] {
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
        screen.drop(e.id);
        drawn = "";
        drawDetail(screen);
      })
      .catch(fail);
  });
  actions.append(restore);
  const together = v ? [...trashed.values()].filter((x) => x.change === v.change).length : 0;
  if (v && together > 1) {
    const all = el("button", "", `Restore all ${together} from this ${v.action === "clear" ? "clear" : "deletion"}`);
    all.id = "restore-all-btn";
    all.title = `Brings back every entry ${v.by} deleted in the same call`;
    all.addEventListener("click", () => {
      void undoChange(v.change)
        .then((n) => say(`restored ${n === 1 ? "1 entry" : `${n} entries`}`))
        .catch(fail);
    });
    actions.append(all);
  }
  const body = el("div", "markdown");
  body.innerHTML = renderMarkdown(e.content);
  return [head, line, actions, body];
}

function editor(screen: Screen, e: Entry): HTMLElement[] {
  editBase = e;
  const ta = el("textarea", "edit");
  ta.id = "edit-text";
  ta.value = e.content;
  ta.rows = 12;
  const tags = el("input", "edit-tags");
  tags.id = "edit-tags";
  tags.value = e.tags.map((t) => `#${t}`).join(" ");
  tags.placeholder = "#tags (space-separated)";
  tags.title = "Tags: words, with or without #";
  const save = el("button", "", "Save");
  save.id = "edit-save";
  const cancel = el("button", "", "Cancel");
  const stop = () => {
    editing = replacing = false;
    editBase = null;
    drawDetail(screen);
  };
  save.addEventListener("click", () => void saveEdit(screen, ta.value));
  tags.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") void saveEdit(screen, ta.value);
    if (ev.key === "Escape") stop();
  });
  cancel.addEventListener("click", stop);
  ta.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) void saveEdit(screen, ta.value);
    if (ev.key === "Escape") stop();
  });
  const actions = el("div", "actions");
  actions.append(save, cancel);
  const theirs = el("div", "theirs");
  theirs.id = "edit-theirs";
  theirs.hidden = true;
  queueMicrotask(() => ta.focus());
  if (!replacing) return [ta, tags, actions, theirs];
  save.textContent = "Save as the current note";
  const head = el("div", "replacing", `This replaces the ${e.kind} by ${e.author}: it is kept, marked superseded, and lists and searches show the new one.`);
  head.id = "replacing-line";
  return [head, ta, tags, actions];
}

/** Beside the person's editor: the entry as someone else changed it since
 *  they began, with what they can do about it. */
function drawTheirs(screen: Screen, now: Entry, conflict = false): void {
  const box = $("edit-theirs");
  if (!box || !editBase) return;
  if (now.version === editBase.version && !conflict) {
    box.hidden = true;
    return;
  }
  const ta = $<HTMLTextAreaElement>("edit-text");
  box.hidden = false;
  const head = conflict
    ? `Not saved: this ${now.kind} changed to v${now.version} while you edited (you started from v${editBase.version}). Your text is kept above.`
    : `Changed to v${now.version} while you edit (you started from v${editBase.version}). Your text is kept; theirs:`;
  const text = el("pre", "version-text", now.content);
  const mine = el("button", "", "Save mine over it");
  mine.id = "edit-overwrite";
  mine.addEventListener("click", () => {
    editBase = now;
    void saveEdit(screen, ta.value);
  });
  const take = el("button", "", "Take theirs");
  take.id = "edit-take";
  take.addEventListener("click", () => {
    editBase = now;
    ta.value = now.content;
    $<HTMLInputElement>("edit-tags").value = now.tags.map((t) => `#${t}`).join(" ");
    box.hidden = true;
  });
  const actions = el("div", "actions");
  actions.append(mine, take);
  box.replaceChildren(el("div", "theirs-head", head), text, actions);
}

/** The Reply box under the thread; for an open question, its choices. A
 *  task with an open question in its thread answers that question. */
export function drawReplyForm(screen: Screen, e: Entry): void {
  const choices = $("reply-choices");
  const target = replyTarget(screen, e);
  const open = isOpenQuestion(target);
  choices.replaceChildren();
  if (target !== e) choices.append(el("span", "hint asked", `${target.author} asks: ${titleOf(target.content)}`));
  if (open && target.choices.length) {
    choices.append(el("span", "hint", "Answer:"));
    for (const c of target.choices) {
      const b = el("button", choiceClass(c), c);
      b.type = "button";
      b.addEventListener("click", () => void reply(screen, target, c, e.id));
      choices.append(b);
    }
    choices.append(el("span", "hint", "or write your own below"));
  }
  ($("reply-send") as HTMLButtonElement).textContent = open ? "Answer" : "Reply";
  ($("reply-text") as HTMLTextAreaElement).placeholder = `${open ? "Answer" : "Reply to"} ${target.author}… (r focuses, Ctrl+Enter sends, #words become tags)`;
}

/** Writes a reply to `e` as the person; the engine hands it to a waiting
 *  `ask` at once. `thread`: the root of the thread on screen. */
export async function reply(screen: Screen, e: Entry, text: string, thread = e.id): Promise<boolean> {
  if (!text.trim()) return false;
  const { content, tags, to } = parseQuickNote(text);
  try {
    const warning = await checkAddressed(text, to, screen.settings.author);
    if (warning) {
      say(warning, true);
      return false;
    }
    await entries.add({ pad: e.pad, reply_to: e.id, content, tags, to, author: screen.settings.author });
    say(isOpenQuestion(e) ? `answered ${e.author}` : `replied to ${e.author}`);
    // Replying is looking: the note leaves Needs eyes (a question leaves
    // it when answered, by the engine).
    if (e.tags.includes("needs_eyes") && e.kind !== "question") await doneLooking(e.id);
    await loadThread(thread);
    drawDetail(screen);
    return true;
  } catch (err) {
    fail(err);
    return false;
  }
}

export async function sendReply(screen: Screen, ev: Event): Promise<void> {
  ev.preventDefault();
  const e = screen.selectedEntry;
  const ta = $<HTMLTextAreaElement>("reply-text");
  if (e && (await reply(screen, replyTarget(screen, e), ta.value, e.id))) ta.value = "";
}

export function focusReply(screen: Screen): boolean {
  if (!screen.selectedEntry || editing) return false;
  $("reply-text").focus();
  return true;
}

export async function togglePin(e: Entry): Promise<void> {
  await entries.update({ id: e.id, pinned: !e.pinned, if_version: e.version }).catch(fail);
}

export function startEdit(screen: Screen, e: Entry, replace = false): void {
  editBase = null;
  replacing = replace;
  editing = true;
  screen.setSelected(e.id);
  drawDetail(screen);
}

/** Saves the person's text against the version they started from: if
 *  someone changed it meanwhile the engine refuses (a conflict), and the
 *  person chooses, with both texts on screen. */
async function saveEdit(screen: Screen, content: string): Promise<void> {
  const base = editBase;
  if (!base) return;
  try {
    const tags = $<HTMLInputElement>("edit-tags").value.split(/[\s,]+/).map((t) => t.replace(/^#/, "").trim()).filter(Boolean);
    if (replacing) {
      const r = await entries.add({ pad: base.pad, kind: base.kind, content, tags, supersedes: base.id, author: screen.settings.author });
      editing = replacing = false;
      editBase = null;
      screen.setSelected(r.entry.id);
      drawDetail(screen);
      say("saved; the older note is kept, marked superseded");
      return;
    }
    await entries.update({ id: base.id, content, tags, if_version: base.version });
    editing = false;
    editBase = null;
    drawDetail(screen);
    say("saved");
  } catch (err) {
    if (err instanceof EngineError && err.code === -32002) {
      const now = await entries.get({ id: base.id });
      drawTheirs(screen, now.entry, true);
      say("not saved: it changed while you edited", true);
    } else {
      fail(err);
    }
  }
}

async function seen(e: Entry): Promise<void> {
  await doneLooking(e.id).catch(fail);
}

export async function remove(screen: Screen, e: Entry): Promise<void> {
  if (screen.view === "trash") return;
  if (!(await confirmAction(`Delete this ${e.kind} by ${e.author}? It goes to the pad's trash.`))) return;
  try {
    const r = await entries.delete({ id: e.id });
    offerUndo(`Deleted the ${e.kind} by ${e.author}.`, r.change, () => undefined);
  } catch (err) {
    fail(err);
  }
}
