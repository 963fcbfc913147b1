// Authors told apart at a glance: each agent gets a colour of its own —
// the ten of the palette (style.css `.c0`…`.c9`) given in order of first
// appearance, so the first agents never share one — and initials from its
// name; the person is always drawn the same, apart from every agent. The
// colours given are kept (localStorage), so an agent keeps its colour.

import { el } from "./dom";
import type { Holding } from "./taskwords";

/** How many colours the palette has. */
export const COLOURS = 10;

const KEY = "agent-colours";

/** The colours given so far: agent name → place in the palette. */
function given(): Record<string, number> {
  try {
    return JSON.parse(localStorage.getItem(KEY) ?? "{}") as Record<string, number>;
  } catch {
    return {};
  }
}

/** The agent's colour: the one it was given, or the next one. */
export function colour(name: string): number {
  const key = name.toLowerCase();
  const all = given();
  if (all[key] === undefined) {
    all[key] = Object.keys(all).length % COLOURS;
    try {
      localStorage.setItem(KEY, JSON.stringify(all));
    } catch {
      // no storage: the colour holds for this session only
    }
  }
  return all[key];
}

/** Up to two letters: "agent-zero" → "AZ", "claude" → "CL". */
export function initials(name: string): string {
  const parts = name.split(/[-_.:\s]+/).filter(Boolean);
  const letters = parts.length >= 2 ? parts[0][0] + parts[1][0] : name.replace(/[^\p{L}\p{N}]/gu, "").slice(0, 2);
  return letters.toUpperCase() || "?";
}

/** The author's badge and name, coloured; `me` marks the person. */
export function authorChip(name: string, me: string): HTMLElement {
  const chip = el("span", "who");
  const mine = name.toLowerCase() === me.toLowerCase();
  const badge = el("span", mine ? "avatar me" : "avatar", mine ? "you" : initials(name));
  chip.append(badge, el("span", mine ? "author me" : "author", name));
  if (!mine) chip.classList.add(`c${colour(name)}`);
  chip.title = mine ? `${name} (you)` : `${name} (an agent)`;
  return chip;
}

/** Who holds a task (`holding`): the holder's chip in the words around it. */
export function holderChips(h: Holding, me: string): HTMLElement[] {
  const cls = h.lapsed ? "holder lapsed" : "holder";
  const out = [el("span", cls, h.lead)];
  if (h.who) out.push(authorChip(h.who, me));
  if (h.tail) out.push(el("span", cls, h.tail));
  return out;
}
