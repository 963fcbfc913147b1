// The pad's banner: when someone else deletes or clears entries of a pad,
// the pad itself says so — "agent-x cleared 14 entries · Undo" — until the
// person undoes it, dismisses it, or the entries come back another way
// (the notification's Undo, `pad restore` in a terminal): Undo is offered
// only while something of it is still in the trash.

import { entries } from "../services";
import { count } from "../count";
import { $, el, fail, say } from "../dom";
import type { Trashed } from "../protocol";
import type { Screen } from "../state";

/** What one author took from a pad, gathered over their calls. */
export interface Taken {
  by: string;
  cleared: boolean;
  count: number;
  changes: number[];
}

/** Per pad, who took what, in the order it happened. */
const taken = new Map<string, Taken[]>();

/** Records a `trashed` event: someone other than `me` deleting or clearing
 *  entries (retention and the rolling window are the pad's own rules, not
 *  news). Returns whether the banner changed. */
export function noteTrashed(pad: string, t: Trashed, me: string): boolean {
  if (t.by.toLowerCase() === me.toLowerCase() || (t.action !== "delete" && t.action !== "clear") || t.count === 0) return false;
  const list = taken.get(pad) ?? [];
  const have = list.find((x) => x.by === t.by);
  if (have) {
    have.count += t.count;
    have.cleared ||= t.action === "clear";
    have.changes.push(t.change);
  } else {
    list.push({ by: t.by, cleared: t.action === "clear", count: t.count, changes: [t.change] });
  }
  taken.set(pad, list);
  return true;
}

/** "agent-x cleared 14 entries" or "agent-x deleted 1 entry". */
export function bannerText(t: Taken): string {
  return `${t.by} ${t.cleared ? "cleared" : "deleted"} ${count(t.count, "entry", "entries")} of this pad`;
}

/** Whether the pad on screen shows a banner. */
export function bannerShown(screen: Screen): boolean {
  return screen.view === "feed" && taken.has(screen.pad);
}

/** Draws the banner of the pad on screen (its feed), or hides it. */
export function drawBanner(screen: Screen): void {
  const box = $("pad-banner");
  const list = screen.view === "feed" ? (taken.get(screen.pad) ?? []) : [];
  box.hidden = list.length === 0;
  box.replaceChildren(
    ...list.map((t) => {
      const line = el("div", "banner-line");
      const undo = el("button", "", "Undo");
      undo.title = `Bring back what ${t.by} moved to the trash`;
      undo.addEventListener("click", () => void undoTaken(screen, screen.pad, t).catch(fail));
      const dismiss = el("button", "link", "Dismiss");
      dismiss.title = "Hide this; the entries stay in the pad's Trash";
      dismiss.addEventListener("click", () => forget(screen, screen.pad, t));
      line.append(el("span", "", bannerText(t)), undo, dismiss);
      return line;
    }),
  );
}

function forget(screen: Screen, pad: string, t: Taken): void {
  const list = (taken.get(pad) ?? []).filter((x) => x !== t);
  if (list.length) taken.set(pad, list);
  else taken.delete(pad);
  drawBanner(screen);
}

async function undoTaken(screen: Screen, pad: string, t: Taken): Promise<void> {
  let n = 0;
  for (const change of t.changes) n += (await entries.restore({ change })).restored.length;
  forget(screen, pad, t);
  say(n ? `restored ${count(n, "entry", "entries")} ${t.by} took` : "nothing to restore: they were brought back already");
}

let recheckTimer = 0;

/** After entries come back to `pad` (any restore), keeps only what still
 *  has something in the trash to undo. */
export function recheckSoon(screen: Screen, pad: string): void {
  if (!taken.has(pad)) return;
  clearTimeout(recheckTimer);
  recheckTimer = window.setTimeout(() => void recheck(screen, pad).catch(fail), 300);
}

async function recheck(screen: Screen, pad: string): Promise<void> {
  const r = await entries.trash({ pad, limit: 1000 });
  const left = new Set(r.entries.filter((v) => !v.restored_at).map((v) => v.change));
  const list = (taken.get(pad) ?? []).filter((t) => t.changes.some((c) => left.has(c)));
  if (list.length) taken.set(pad, list);
  else taken.delete(pad);
  drawBanner(screen);
}
