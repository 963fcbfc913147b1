// The Needs eyes view: what agents flagged for the person, open questions
// first, then notes grouped by agent and pad; "Done looking" takes the
// flag off a group's notes, or every note at once.

import { entries } from "../services";
import { count } from "../count";
import { el, fail, say } from "../dom";
import type { Screen } from "../state";
import { eyesGroup } from "../store";
import type { Entry } from "../types";
import { isOpenQuestion } from "../components/EntryDetail";
import { doneLooking } from "../eyes";
import { showEntries } from "../components/List";
import { drawPads } from "../components/PadList";
import { backToFeed } from "./feed";
import { frame } from "./frame";

export async function loadInbox(screen: Screen): Promise<void> {
  const r = await entries.list({ tags: ["needs_eyes"], limit: 200 });
  screen.feed.loadInbox(r.entries);
}

/** Needs eyes; again to go back to the feed. */
export async function showInbox(screen: Screen): Promise<void> {
  if (screen.view === "inbox") return backToFeed(screen);
  screen.setView("inbox");
  await loadInbox(screen);
  drawPads(screen);
  draw(screen);
}

export function draw(screen: Screen): void {
  const shown = screen.feed.inbox;
  const open = shown.filter(isOpenQuestion).length;
  const title: Node[] = [
    document.createTextNode(
      `Needs eyes · ${count(shown.length, "entry", "entries")}${open ? ` · ${count(open, "open question", "open questions")} first` : ""}`,
    ),
  ];
  const notes = shown.length - open;
  if (notes > 0) {
    const all = el("button", "", `Done looking at ${notes === 1 ? "the note" : `all ${notes} notes`}`);
    all.id = "eyes-done";
    all.title = "Takes needs_eyes off every note here; open questions stay until answered";
    all.addEventListener("click", () => void doneLookingAll(screen).catch(fail));
    title.push(document.createTextNode(" "), all);
  }
  frame(screen, title);
  showEntries(screen, shown, { above: (e, i) => groupHead(screen, e, i) });
}

/** Above the first note of a group (one agent's notes in one pad): who,
 *  where, how many, and Done looking for the group. */
function groupHead(screen: Screen, e: Entry, i: number): HTMLElement | null {
  const shown = screen.feed.inbox;
  if (isOpenQuestion(e)) return null;
  const prev = shown[i - 1];
  if (prev && !isOpenQuestion(prev) && eyesGroup(prev) === eyesGroup(e)) return null;
  const members = shown.filter((x) => !isOpenQuestion(x) && eyesGroup(x) === eyesGroup(e));
  const head = el("div", "eyes-group");
  head.append(el("span", "eyes-group-name", `${e.author} in ${e.pad} · ${count(members.length, "note", "notes")}`));
  if (members.length > 1) {
    const done = el("button", "link", `Done looking at these ${members.length}`);
    done.title = `Takes needs_eyes off ${e.author}'s ${members.length} notes in ${e.pad}`;
    done.addEventListener("click", (ev) => {
      ev.stopPropagation();
      void doneLookingAt(members).catch(fail);
    });
    head.append(done);
  }
  return head;
}

/** Done looking at every note in Needs eyes; open questions stay. */
function doneLookingAll(screen: Screen): Promise<void> {
  return doneLookingAt(screen.feed.inbox.filter((e) => !isOpenQuestion(e)));
}

async function doneLookingAt(notes: Entry[]): Promise<void> {
  for (const e of notes) await doneLooking(e.id);
  say(`done looking at ${count(notes.length, "note", "notes")}`);
}
