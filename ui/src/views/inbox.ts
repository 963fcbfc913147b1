// The Needs eyes view: what agents flagged for the person, open questions
// first; "Done looking" takes the flag off every note at once.

import { rpc } from "../api";
import { count } from "../count";
import { el, fail, say } from "../dom";
import { app } from "../state";
import { doneLooking, isOpenQuestion } from "../components/EntryDetail";
import { showEntries } from "../components/List";
import { drawPads } from "../components/PadList";
import { backToFeed } from "./feed";
import { frame } from "./frame";

export async function loadInbox(): Promise<void> {
  const r = await rpc("entry.list", { tags: ["needs_eyes"], limit: 200 });
  app.feed.loadInbox(r.entries);
}

/** Needs eyes; again to go back to the feed. */
export async function showInbox(): Promise<void> {
  if (app.view === "inbox") return backToFeed();
  app.view = "inbox";
  await loadInbox();
  drawPads();
  draw();
}

export function draw(): void {
  const shown = app.feed.inbox;
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
    all.addEventListener("click", () => void doneLookingAll().catch(fail));
    title.push(document.createTextNode(" "), all);
  }
  frame(title);
  showEntries(shown);
}

/** Done looking at every note in Needs eyes; open questions stay. */
async function doneLookingAll(): Promise<void> {
  const notes = app.feed.inbox.filter((e) => !isOpenQuestion(e));
  for (const e of notes) await doneLooking(e.id);
  say(`done looking at ${count(notes.length, "note", "notes")}`);
}
