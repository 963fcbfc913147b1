// The quick-note box: shown by the global hotkey over whatever the person
// is doing. Enter saves to the current pad (#words become tags; a leading
// "@agent-zero" hands the note to that agent), Esc hides.
// While an agent's question is open, the box offers to answer the newest
// one ("replying to: …"); Tab switches between that answer and a plain
// note. A notification's Reply opens it on that entry.

import { listen } from "@tauri-apps/api/event";
import { LogicalSize, getCurrentWindow } from "@tauri-apps/api/window";
import { EngineError, getSettings, hideQuick } from "../api";
import { entries } from "../services";
import { choiceClass } from "../choices";
import { title } from "../context";
import { doneLooking } from "../eyes";
import { checkAddressed } from "../handoff";
import { drawAddressed, wireAddressing } from "./Addressing";
import { newestOpenQuestion } from "../store";
import { parseQuickNote } from "../tags";
import type { Entry, Settings } from "../types";

const $ = (id: string) => document.getElementById(id) as HTMLElement;
const form = $("quick-form") as HTMLFormElement;
const input = $("quick-input") as HTMLTextAreaElement;

/** The entry the box offers to answer, and whether it is answering it. */
let offered: Entry | null = null;
let replying = false;
let settings: Settings;

function drawMode(): void {
  const line = $("quick-reply");
  if (replying && offered) {
    $("quick-reply-label").textContent = "↩ replying to";
    $("quick-reply-who").textContent = `${offered.author}:`;
    $("quick-reply-text").textContent = offered.content.trim();
    $("quick-reply-hint").textContent = "Tab: plain note instead";
    input.placeholder = offered.choices.length ? `Your answer: ${offered.choices.join(" / ")} or your own words · Enter sends` : "Your answer · Enter sends · Esc hides";
    $("quick-pad").textContent = "↩ answer";
  } else {
    $("quick-reply-label").textContent = "";
    $("quick-reply-who").textContent = "";
    $("quick-reply-text").textContent = offered ? `(open question from ${offered.author})` : "";
    $("quick-reply-hint").textContent = offered ? "Tab: answer it" : "";
    input.placeholder = "A thought… #tags · @agent hands it over · Enter saves, Shift+Enter a new line · Esc hides";
    $("quick-pad").textContent = `→ ${settings.pad}`;
  }
  line.classList.toggle("replying", replying && !!offered);
  drawAbout();
  const choices = $("quick-choices");
  choices.replaceChildren();
  if (replying && offered) {
    for (const c of offered.choices) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = choiceClass(c);
      b.textContent = c;
      b.addEventListener("click", () => void send(c));
      choices.append(b);
    }
  }
  fit();
}

/** What the question answered is about: the note or task it replies to. */
function drawAbout(): void {
  const about = $("quick-about");
  about.textContent = "";
  const parent = replying ? offered?.reply_to : null;
  if (!parent) return;
  void title(parent).then((t) => {
    if (replying && offered?.reply_to === parent) {
      about.textContent = `about “${t}”`;
      fit();
    }
  });
}

/** The box as tall as its lines (up to eight), the window with it. */
function grow(): void {
  input.style.height = "auto";
  input.style.height = `${Math.min(input.scrollHeight, 8 * 26)}px`;
  fit();
}

/** The window as tall as what it shows: the whole question, its choices. */
function fit(): void {
  const h = Math.min(420, Math.max(110, Math.ceil($("quick-status").getBoundingClientRect().bottom) + 14));
  void getCurrentWindow().setSize(new LogicalSize(600, h)).catch(() => undefined);
}

/** Shown: offer the newest open question, or `entry` when a
 *  notification's Reply asked for it. */
async function ready(entry: Entry | null = null): Promise<void> {
  settings = await getSettings();
  $("quick-status").textContent = "";
  if (entry) {
    offered = entry;
  } else {
    const r = await entries.list({ kind: "question", tags: ["needs_eyes"], limit: 20 }).catch(() => ({ entries: [] }));
    offered = newestOpenQuestion(r.entries, settings.author);
  }
  replying = offered !== null;
  drawMode();
  input.focus();
  input.select();
}

form.addEventListener("submit", (ev) => {
  ev.preventDefault();
  void send(input.value);
});

async function send(text: string): Promise<void> {
  if (!text.trim()) return;
  const { content, tags, to } = parseQuickNote(text);
  const warning = await checkAddressed(text, to, settings.author);
  if (warning) {
    $("quick-status").textContent = warning;
    fit();
    return;
  }
  const target = replying ? offered : null;
  const params = target
    ? { pad: target.pad, reply_to: target.id, content, tags, to, author: settings.author }
    : { pad: settings.pad, content, tags, to, author: settings.author };
  try {
    await entries.add(params);
    // Replying is looking: a flagged note leaves Needs eyes (a question
    // leaves it when answered, by the engine).
    if (target && target.kind !== "question" && target.tags.includes("needs_eyes")) await doneLooking(target.id);
    input.value = "";
    grow();
    drawAddressed($("quick-to"), "");
    $("quick-status").textContent = "";
    offered = null;
    replying = false;
    await hideQuick();
  } catch (e) {
    $("quick-status").textContent = e instanceof EngineError ? e.message : String(e);
  }
}

document.addEventListener("keydown", (ev) => {
  if (ev.key === "Escape") {
    ev.preventDefault();
    void hideQuick();
  } else if (ev.key === "Tab" && offered) {
    ev.preventDefault();
    replying = !replying;
    drawMode();
  }
});

wireAddressing(input, $("quick-to"), $("quick-suggest"), () => settings.author);
input.addEventListener("input", grow);
// Enter saves; Shift+Enter is a new line (a note may be a list, a plan).
input.addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    form.requestSubmit();
  }
});
void listen("quick-shown", () => void ready());
void listen<Entry>("quick-reply", (e) => void ready(e.payload));
void listen("settings-changed", () => void ready(replying ? offered : null));
window.addEventListener("focus", () => input.focus());
void ready();
