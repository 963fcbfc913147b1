// Quick notes: "#word" in the text becomes a tag, as the engine checks
// tags (1-32 of a-z 0-9 _ -, case-folded, at most 10).

export const MAX_TAGS = 10;
const TAG = /(^|\s)#([A-Za-z0-9_-]{1,32})(?=\s|$|[.,;:!?)])/g;

export interface QuickNote {
  content: string;
  tags: string[];
  /** Agents named with a leading "@agent-zero" (or several): the note is
   *  addressed to them (`to`), and sent to those registered over A2A. */
  to: string[];
}

/** "@agent-zero @helper do this": the names at the start of a note. */
const ADDRESS = /^(?:[\s,;:]*@([A-Za-z0-9._:-]{1,64})(?=\s|$|[,;:]))+/;
const ONE = /@([A-Za-z0-9._:-]{1,64})/g;

/** Splits "ship it #release" into content "ship it" and tags ["release"].
 *  Tags keep their first-seen order, folded and deduplicated; past ten the
 *  rest stay in the text. A note of only tags keeps its text. */
/** A pad name as the engine takes it: lowercase a-z, 0-9, `.`, `_`, `:`,
 *  `-`, up to 64 characters; anything else becomes `-` (as the engine's
 *  own suggestion does). Empty when nothing usable is left. */
export function fixPadName(raw: string): string {
  const cleaned = raw.trim().toLowerCase().replace(/[^a-z0-9._:-]/g, "-").replace(/-{2,}/g, "-");
  return cleaned.replace(/^[-.]+|[-.]+$/g, "").slice(0, 64);
}

/** A note addressed to agents (a handoff) keeps its text as typed: its
 *  #words are tags beside it, never cut from the instruction ("deploy the
 *  fix (PR #4821)" must reach the agent whole). */
export function parseQuickNote(text: string): QuickNote {
  const tags: string[] = [];
  const stripped = text.replace(TAG, (whole, lead: string, word: string) => {
    const tag = word.toLowerCase();
    if (tags.includes(tag)) return lead;
    if (tags.length >= MAX_TAGS) return whole;
    tags.push(tag);
    return lead;
  });
  const content = stripped
    .replace(/[ \t]{2,}/g, " ")
    .replace(/[ \t]+([,.;:!?])/g, "$1")
    .trim();
  const lead = ADDRESS.exec(text);
  const to = lead ? [...new Set([...lead[0].matchAll(ONE)].map((m) => m[1].replace(/[:.]+$/, "").toLowerCase()))].slice(0, 10) : [];
  const handoff = to.length > 0;
  return { content: handoff || content === "" ? text.trim() : content, tags, to };
}
