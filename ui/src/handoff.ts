// Handing a note to agents ("@agent-zero …"): who can be addressed — the
// agents registered over A2A and the authors seen lately (`agent.list`) —
// completing a name as it is typed, and a warning before a note goes to a
// name nobody answers to ("@agent-zreo"), with the nearest known name.

import { agents } from "./services";
import type { Delivery } from "./protocol";

/** The names a note can be addressed to, registered agents first. */
export async function knownNames(me: string): Promise<string[]> {
  const r = await agents.list({});
  const names = [...r.agents.map((a) => a.name), ...r.seen.map((s) => s.author)].map((n) => n.toLowerCase());
  return [...new Set(names)].filter((n) => n !== me.toLowerCase());
}

/** The names of `to` that nobody registered or seen answers to. */
export function unknownNames(to: string[], known: string[]): string[] {
  return to.filter((n) => !known.includes(n.toLowerCase()));
}

/** Edit distance between two names (insert, delete, substitute, swap). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The known name nearest to `name`, when it is near (a typo's worth). */
export function nearest(name: string, known: string[]): string | null {
  let best: string | null = null;
  let bestD = Math.max(2, Math.floor(name.length / 4)) + 1;
  for (const k of known) {
    const d = distance(name.toLowerCase(), k);
    if (d < bestD) [best, bestD] = [k, d];
  }
  return best;
}

/** What to say before sending to `unknown` names: nobody is called so,
 *  perhaps a typo, and that sending again sends it as it is. */
export function unknownWarning(unknown: string[], known: string[]): string {
  const parts = unknown.map((n) => {
    const near = nearest(n, known);
    return near ? `@${n} (did you mean @${near}?)` : `@${n}`;
  });
  const who = known.length ? ` Known: ${known.slice(0, 6).map((k) => `@${k}`).join(", ")}.` : " No agent is registered or has written yet.";
  return `Nobody answers to ${parts.join(", ")}: the note would reach no one.${who} Send again to save it anyway.`;
}

/** The "@name" being typed at `caret` in `text`, when the note is still
 *  in its addressing words (a leading run of "@names"). */
export function typingName(text: string, caret: number): { start: number; prefix: string } | null {
  const before = text.slice(0, caret);
  const m = /^(?:\s*@[A-Za-z0-9._:-]+[\s,;]+)*\s*@([A-Za-z0-9._:-]*)$/.exec(before);
  if (!m) return null;
  return { start: caret - m[1].length, prefix: m[1].toLowerCase() };
}

/** Known names that complete `prefix`, the closest first. */
export function completions(prefix: string, known: string[]): string[] {
  return known.filter((k) => k.startsWith(prefix) && k !== prefix).slice(0, 5);
}

/** `text` with the name being typed at `at` completed to `name`, and the
 *  caret after it and a space. */
export function complete(text: string, at: { start: number; prefix: string }, name: string): { text: string; caret: number } {
  const end = at.start + at.prefix.length;
  const rest = text.slice(end).replace(/^[A-Za-z0-9._:-]*/, "");
  const spaced = rest.startsWith(" ") ? rest : ` ${rest}`;
  return { text: `${text.slice(0, at.start)}${name}${spaced}`, caret: at.start + name.length + 1 };
}

/** The text last warned about: sending it again sends it as it is. */
let warned = "";

/** Null when a note addressed `to` may go — every name is known, or the
 *  person sends it again after the warning; else the warning to show. */
export async function checkAddressed(text: string, to: string[], me: string): Promise<string | null> {
  if (!to.length) return null;
  const known = await knownNames(me).catch(() => null);
  if (!known) return null; // the engine will say what is wrong
  const unknown = unknownNames(to, known);
  if (!unknown.length || warned === text) {
    warned = "";
    return null;
  }
  warned = text;
  return unknownWarning(unknown, known);
}

/** What a handoff's delivery means for the person, and whether it is bad
 *  news: "handed to agent-zero", "agent-zero not reached: … — queued,
 *  retrying". */
export function handoffStatus(d: Delivery): { text: string; bad: boolean } {
  const a = d.agent;
  switch (d.state) {
    case "pending":
      return d.detail ? { text: `${a} not reached (${d.detail.replace(/^not delivered: /, "")}) — the note is queued and retried`, bad: true } : { text: `handing to ${a}…`, bad: false };
    case "sent":
      return { text: `handed to ${a}`, bad: false };
    case "working":
      return { text: `${a} is working on it`, bad: false };
    case "waiting_for_you":
      return { text: `${a} asks you something about it`, bad: false };
    case "done":
      return { text: `${a} finished`, bad: false };
    case "failed":
      return { text: `${a}: ${d.detail ?? "failed"}${d.question ? " — Retry is on the note" : " — Re-send is on the note"}`, bad: true };
  }
}
