// What a reply is about: the entry it answers, named by its first words
// wherever the reply shows (a row, the detail, Needs eyes, the quick box),
// so "Which region?" reads as a question about "deploy the 5s timeout fix".
// Titles come from the entries on hand, or one `entry.get` per parent,
// kept for the session; a parent that is gone reads "a deleted entry".

import { entries } from "./services";
import { el } from "./dom";
import { plainPreview } from "./markdown";
import type { Entry } from "./types";

/** The longest title, in characters, before it is cut with "…". */
export const TITLE_CHARS = 60;

const titles = new Map<string, string>();
const asking = new Map<string, Promise<string>>();

/** An entry's title: its first line as plain text, at most `TITLE_CHARS`. */
export function titleOf(content: string): string {
  const first = content.trim().split("\n", 1)[0] ?? "";
  const plain = plainPreview(first, 10_000).replace(/^\s*·\s*/, "").trim();
  const chars = [...plain];
  return chars.length > TITLE_CHARS ? `${chars.slice(0, TITLE_CHARS - 1).join("").trimEnd()}…` : plain || "(empty)";
}

/** The title of entry `id`, when it is known now: one of the entries on
 *  hand (`shown`, as they are now: the list's), or one asked for before. */
export function knownTitle(id: string, shown: readonly Entry[] = []): string | undefined {
  const have = shown.find((e) => e.id === id);
  if (!have) return titles.get(id);
  const t = titleOf(have.content);
  titles.set(id, t);
  return t;
}

/** The title of entry `id`: known (among `shown` too), or asked for once. */
export function title(id: string, shown: readonly Entry[] = []): Promise<string> {
  const have = knownTitle(id, shown);
  if (have !== undefined) return Promise.resolve(have);
  let pending = asking.get(id);
  if (!pending) {
    pending = entries.get({ id })
      .then((r) => titleOf(r.entry.content))
      .catch(() => "a deleted entry")
      .then((t) => {
        titles.set(id, t);
        asking.delete(id);
        return t;
      });
    asking.set(id, pending);
  }
  return pending;
}

/** What a reply says it is about: "asks about “…”" for a question, "↳ re
 *  “…”" for any other reply; the title is filled in when it arrives. */
export function aboutChip(e: Entry, shown: readonly Entry[]): HTMLElement | null {
  if (!e.reply_to) return null;
  const lead = e.kind === "question" ? "asks about" : "↳ re";
  const chip = el("div", "about");
  const say = (t: string) => (chip.textContent = `${lead} “${t}”`);
  const have = knownTitle(e.reply_to, shown);
  if (have !== undefined) say(have);
  else {
    chip.textContent = lead === "↳ re" ? "↳ reply" : "asks about…";
    void title(e.reply_to, shown).then(say);
  }
  return chip;
}
