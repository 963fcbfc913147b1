// History, trash and undo in the window: the pad's Trash view (deleted
// entries, each with Restore), an entry's History (its earlier versions,
// each with "Restore this version"), and the undo bar that follows the
// person's own deletes.

import { entries } from "../services";
import { $, el, fail, say } from "../dom";
import { ago } from "../time";
import type { Entry, Version } from "../types";

/** The deleted entries the Trash view lists, by id. */
export const trashed = new Map<string, Version>();

/** Loads `pad`'s trash into the list (the caller draws). */
export async function loadTrash(pad: string): Promise<Entry[]> {
  const r = await entries.trash({ pad, limit: 1000 });
  trashed.clear();
  for (const v of r.entries) trashed.set(v.entry.id, v);
  return r.entries.map((v) => v.entry);
}

/** "deleted by agent-x 3 min ago (pad cleared)" for a trashed entry. */
export function deletedLine(v: Version): string {
  const how: Record<string, string> = { delete: "", clear: " (pad cleared)", window: " (rolling window)", expire: " (retention)" };
  return `deleted by ${v.by} ${ago(v.at)}${how[v.action] ?? ""}`;
}

/** Restores one deleted entry; says so with where it went. */
export async function restoreEntry(id: string): Promise<void> {
  const r = await entries.restore({ id });
  if (r.restored.length) say(`restored to ${r.restored[0].pad}`);
  else say(r.skipped[0]?.reason ?? "nothing restored", true);
}

/** Undoes a whole change (a delete or a clear). */
export async function undoChange(change: number): Promise<number> {
  const r = await entries.restore({ change });
  return r.restored.length;
}

/** The History section of an entry's detail: a button that loads the
 *  versions kept, each with who changed it, when, its text, and a button
 *  that takes the entry back to it. */
export function historySection(e: Entry): HTMLElement {
  const box = el("details", "history");
  box.id = "history";
  const summary = el("summary", "", `History · v${e.version}`);
  box.append(summary);
  box.addEventListener("toggle", () => {
    if (box.open) void fillHistory(box, e).catch(fail);
  });
  return box;
}

async function fillHistory(box: HTMLElement, e: Entry): Promise<void> {
  const r = await entries.history({ id: e.id });
  box.querySelectorAll(".version, .hint").forEach((n) => n.remove());
  const edits = r.versions.filter((v) => v.action === "edit").reverse();
  if (!edits.length) box.append(el("p", "hint", "No earlier versions: nobody has changed it."));
  for (const v of edits) {
    const row = el("div", "version");
    row.append(el("div", "version-head", `v${v.entry.version} · changed by ${v.by} ${ago(v.at)}`));
    row.append(el("pre", "version-text", v.entry.content));
    const back = el("button", "", "Restore this version");
    back.addEventListener("click", () => {
      void entries.restore({ id: e.id, version: v.entry.version })
        .then((res) => say(`back to v${v.entry.version}'s text, as v${res.restored[0]?.version}`))
        .catch(fail);
    });
    row.append(back);
    box.append(row);
  }
}

let undoTimer = 0;

/** Offers to undo a change the person just made, for ten seconds. */
export function offerUndo(text: string, change: number | null, after: () => void): void {
  const bar = $("undo");
  if (change === null) return;
  clearTimeout(undoTimer);
  $("undo-text").textContent = text;
  bar.hidden = false;
  const btn = $<HTMLButtonElement>("undo-btn");
  btn.onclick = () => {
    bar.hidden = true;
    void undoChange(change)
      .then((n) => {
        say(`restored ${n === 1 ? "1 entry" : `${n} entries`}`);
        after();
      })
      .catch(fail);
  };
  undoTimer = window.setTimeout(() => (bar.hidden = true), 10_000);
}
