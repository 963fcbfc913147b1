// Authors told apart at a glance: each agent gets a stable colour and
// initials from its name; the person is always drawn the same, distinct
// from every agent (no agent hue comes near it).

import { el } from "./dom";

/** A stable hue for an agent's name (FNV-1a), kept out of the band around
 *  the person's colour. */
export function hue(name: string): number {
  let h = 0x811c9dc5;
  for (const ch of name.toLowerCase()) {
    h ^= ch.codePointAt(0) ?? 0;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  // 300 of the 360 degrees; the person's 30° band (195–225, blue) is skipped.
  const d = h % 300;
  return d < 195 ? d : d + 30;
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
  if (!mine) badge.style.setProperty("--hue", String(hue(name)));
  chip.append(badge, el("span", mine ? "author me" : "author", name));
  if (!mine) chip.style.setProperty("--hue", String(hue(name)));
  chip.title = mine ? `${name} (you)` : `${name} (an agent)`;
  return chip;
}
