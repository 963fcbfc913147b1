// The feed's state, kept in step with the engine's events. Pure logic, no
// DOM and no Tauri, so it is unit-tested (store.test.ts).

import type { Entry, PadEvent, Status, Kind } from "./types";

export interface Filter {
  pad: string | null;
  tag: string | null;
  kind: Kind | null;
  author: string | null;
  status: Status | null;
}

export const NO_FILTER: Filter = { pad: null, tag: null, kind: null, author: null, status: null };

/** Whether `e` belongs in a list under filter `f`. A note a newer one
 *  supersedes is left out, as the engine's lists leave it out. */
export function matches(e: Entry, f: Filter): boolean {
  return (
    !e.superseded_by &&
    (f.pad === null || e.pad === f.pad) &&
    (f.tag === null || e.tags.includes(f.tag)) &&
    (f.kind === null || e.kind === f.kind) &&
    (f.author === null || e.author === f.author) &&
    (f.status === null || e.status === f.status)
  );
}

/** Newest first: ids sort by time (docs/protocol.md), so compare them. */
function newerFirst(a: Entry, b: Entry): number {
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** Whether `e` is a question nobody has answered yet. */
export const openQuestion = (e: Entry): boolean => e.kind === "question" && e.answer === null;

/** Who wrote a Needs-eyes note where: the notes of one agent in one pad
 *  are one group, so a burst of alarms does not bury a note from elsewhere. */
export const eyesGroup = (e: Entry): string => `${e.author}\u0000${e.pad}`;

/** Sorts `list` into Needs eyes' order: open questions first — an agent
 *  may be waiting on one — newest first; then the notes in their groups
 *  (`eyesGroup`), the group with the newest note first, newest first in
 *  each. Returns `list`. */
export function eyesSort(list: Entry[]): Entry[] {
  const newest = new Map<string, string>();
  for (const e of list) {
    const k = eyesGroup(e);
    if (!openQuestion(e) && (newest.get(k) ?? "") < e.id) newest.set(k, e.id);
  }
  const rank = (e: Entry): string => (openQuestion(e) ? e.id : (newest.get(eyesGroup(e)) ?? e.id));
  const questionsFirst = (e: Entry): number => (openQuestion(e) ? 0 : 1);
  return list.sort((a, b) => {
    const ra = rank(a);
    const rb = rank(b);
    return questionsFirst(a) - questionsFirst(b) || (ra < rb ? 1 : ra > rb ? -1 : 0) || newerFirst(a, b);
  });
}

/** The feed as threads (`threaded`): the rows in order, each row's depth,
 *  and per thread root the replies folded under it, oldest first. */
export interface Threads {
  rows: Entry[];
  depth: number[];
  folded: Map<string, Entry[]>;
}

/** The first listed entry up the chain of `e`'s replies-to: the root of
 *  its thread among `byId`, or null when it replies to nothing listed. */
function rootIn(byId: Map<string, Entry>, e: Entry): { root: string; depth: number } | null {
  let found: { root: string; depth: number } | null = null;
  const seen = new Set<string>();
  for (let p = e.reply_to, depth = 1; p && byId.has(p) && !seen.has(p); p = byId.get(p)!.reply_to ?? null, depth++) {
    seen.add(p);
    found = { root: p, depth };
  }
  return found;
}

/** The feed (`entries`, newest first) as threads: a reply whose thread's
 *  root is listed folds under it, and shows after it, oldest first at its
 *  depth, only while the thread is `open`. An open question stays a row
 *  of its own until it is answered: what waits on the person never hides. */
export function threaded(entries: Entry[], open: ReadonlySet<string>): Threads {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const folded = new Map<string, Entry[]>();
  const depthOf = new Map<string, number>();
  const top: Entry[] = [];
  for (const e of entries) {
    const at = openQuestion(e) ? null : rootIn(byId, e);
    if (!at) {
      top.push(e);
      continue;
    }
    depthOf.set(e.id, at.depth);
    const list = folded.get(at.root);
    if (list) list.unshift(e);
    else folded.set(at.root, [e]);
  }
  const rows: Entry[] = [];
  const depth: number[] = [];
  for (const e of top) {
    rows.push(e);
    depth.push(0);
    if (!open.has(e.id)) continue;
    for (const r of folded.get(e.id) ?? []) {
      rows.push(r);
      depth.push(depthOf.get(r.id) ?? 1);
    }
  }
  return { rows, depth, folded };
}

/** The root of the thread `id` folds under in `entries`, if it folds. */
export function foldedUnder(entries: Entry[], id: string): string | null {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const e = byId.get(id);
  return e && !openQuestion(e) ? (rootIn(byId, e)?.root ?? null) : null;
}

/** Puts `e` into `list` (newest first) where it belongs: a binary search,
 *  so a burst of new entries costs O(log n) each, not a sort. */
function insertSorted(list: Entry[], e: Entry): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid].id > e.id) lo = mid + 1;
    else hi = mid;
  }
  list.splice(lo, 0, e);
}

/** What an event changed for the view, so it redraws only when needed. */
export interface Change {
  feed: boolean;
  pads: boolean;
  inbox: boolean;
}

export class FeedStore {
  entries: Entry[] = [];
  filter: Filter = { ...NO_FILTER };
  /** needs_eyes entries by others, in Needs eyes' order (`eyesSort`). */
  inbox: Entry[] = [];
  me = "user";

  /** Replaces the feed with a freshly loaded page (newest first). */
  /** Starts showing `filter`, before its first page arrives: events from
   *  now on are applied to it, so none written while the page loads is lost. */
  expect(filter: Filter): void {
    this.filter = { ...filter };
    this.entries = [];
  }

  /** Takes the first page for `filter`, merged with what events brought in
   *  since `expect` (by id; the higher version wins). */
  load(entries: Entry[], filter: Filter): void {
    const same = JSON.stringify(filter) === JSON.stringify(this.filter);
    const byId = new Map<string, Entry>();
    for (const e of [...(same ? this.entries : []), ...entries]) {
      const had = byId.get(e.id);
      if (!had || had.version < e.version) byId.set(e.id, e);
    }
    this.filter = { ...filter };
    this.entries = [...byId.values()].sort(newerFirst);
  }

  /** Appends an older page (pagination); entries already present are skipped. */
  append(older: Entry[]): void {
    const have = new Set(this.entries.map((e) => e.id));
    this.entries.push(...older.filter((e) => !have.has(e.id)));
    this.entries.sort(newerFirst);
  }

  loadInbox(entries: Entry[]): void {
    this.inbox = eyesSort(entries.filter((e) => e.author !== this.me));
  }

  dismiss(id: string): void {
    this.inbox = this.inbox.filter((e) => e.id !== id);
  }

  /** Applies one engine event. */
  apply(ev: PadEvent): Change {
    const change: Change = { feed: false, pads: false, inbox: false };
    const e = ev.entry;
    switch (ev.type) {
      case "created":
        change.pads = true;
        if (e && matches(e, this.filter) && !this.entries.some((x) => x.id === e.id)) {
          insertSorted(this.entries, e);
          change.feed = true;
        }
        break;
      case "updated":
        if (e) {
          const i = this.entries.findIndex((x) => x.id === e.id);
          const keep = matches(e, this.filter);
          if (i >= 0 && keep) this.entries[i] = e;
          else if (i >= 0) this.entries.splice(i, 1);
          else if (keep) insertSorted(this.entries, e);
          change.feed = i >= 0 || keep;
          const j = this.inbox.findIndex((x) => x.id === e.id);
          if (j >= 0) {
            if (e.tags.includes("needs_eyes")) this.inbox[j] = e;
            else this.inbox.splice(j, 1);
            eyesSort(this.inbox);
            change.inbox = true;
          }
        }
        break;
      case "deleted":
        change.pads = true;
        if (e) {
          const before = this.entries.length;
          this.entries = this.entries.filter((x) => x.id !== e.id);
          change.feed = this.entries.length !== before;
          const inboxBefore = this.inbox.length;
          this.dismiss(e.id);
          change.inbox = this.inbox.length !== inboxBefore;
        } else if (ev.pad && this.filter.pad === ev.pad) {
          // pad.clear: everything on the pad went at once.
          this.entries = this.entries.filter((x) => x.pinned);
          change.feed = true;
        }
        break;
      case "needs_eyes":
        if (e && e.author !== this.me && !this.inbox.some((x) => x.id === e.id)) {
          this.inbox.unshift(e);
          eyesSort(this.inbox);
          change.inbox = true;
        }
        break;
      case "pad_expired":
        change.pads = true;
        break;
      case "lagged":
        // Events were missed: the caller reloads everything.
        change.feed = change.pads = change.inbox = true;
        break;
      case "reminder":
        change.inbox = true;
        break;
    }
    return change;
  }
}


/** The newest question by someone other than `me` that nobody has
 *  answered: what the quick box offers to answer. */
export function newestOpenQuestion(entries: Entry[], me: string): Entry | null {
  return entries.filter((e) => e.kind === "question" && e.answer === null && e.author !== me).sort(newerFirst)[0] ?? null;
}
