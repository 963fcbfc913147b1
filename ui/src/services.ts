// The engine's methods the UI calls, named and grouped by what they act on:
// `entries.add(params)` rather than `rpc("entry.add", params)` in place, so
// what the UI asks of the engine is one file to read. Each is one method,
// typed by protocol.ts's `Params` and `Results` (generated from the
// engine's); `rpc` in api.ts stays the one transport under them all.

import { rpc } from "./api";
import type { Params } from "./protocol";

/** Notes, tasks and questions: written, read, changed, deleted, restored. */
export const entries = {
  /** Writes an entry (a note, a reply, a task, a replacement). */
  add: (params: Params["entry.add"]) => rpc("entry.add", params),
  get: (params: Params["entry.get"]) => rpc("entry.get", params),
  /** Changes an entry's text, tags, status or pin, against `if_version`. */
  update: (params: Params["entry.update"]) => rpc("entry.update", params),
  /** Moves an entry to its pad's trash; the answer's `change` undoes it. */
  delete: (params: Params["entry.delete"]) => rpc("entry.delete", params),
  /** Entries by pad, tags, kind, author, status, time; a page at a time. */
  list: (params: Params["entry.list"]) => rpc("entry.list", params),
  /** An entry and its replies, each with its depth. */
  thread: (params: Params["entry.thread"]) => rpc("entry.thread", params),
  /** An entry's versions kept (its edits). */
  history: (params: Params["entry.history"]) => rpc("entry.history", params),
  /** A pad's deleted entries, restorable. */
  trash: (params: Params["entry.trash"]) => rpc("entry.trash", params),
  /** Brings back a deleted entry, an earlier version, or a whole change. */
  restore: (params: Params["entry.restore"]) => rpc("entry.restore", params),
  /** What changed since a time (edits, deletes, restores), newest first. */
  changes: (params: Params["entry.changes"]) => rpc("entry.changes", params),
  /** Hits for a query, with the filters; with `explain`, why each matched. */
  search: (params: Params["search"]) => rpc("search", params),
};

/** Pads: listed, created or configured, restored from archive, cleared, exported. */
export const pads = {
  list: (params?: Params["pad.list"]) => rpc("pad.list", params),
  /** Creates the pad if need be and sets its expiry. */
  configure: (params: Params["pad.configure"]) => rpc("pad.configure", params),
  /** Restarts an archived pad's idle clock: it is listed again. */
  touch: (params: Params["pad.touch"]) => rpc("pad.touch", params),
  /** Moves every entry of the pad to its trash. */
  clear: (params: Params["pad.clear"]) => rpc("pad.clear", params),
  export: (params: Params["pad.export"]) => rpc("pad.export", params),
};

/** Agents: who was seen, and the A2A agents notes are handed to. */
export const agents = {
  /** Authors seen lately and the registered agents. */
  list: (params?: Params["agent.list"]) => rpc("agent.list", params),
  /** Registers an A2A agent (reading its card). */
  add: (params: Params["agent.add"]) => rpc("agent.add", params),
  remove: (params: Params["agent.remove"]) => rpc("agent.remove", params),
  /** Where notes handed to agents stand. */
  deliveries: (params?: Params["agent.deliveries"]) => rpc("agent.deliveries", params),
};

/** Tasks: a pad's in dependency order (`plan.order`), with who holds each. */
export const tasks = {
  order: (params: Params["plan.order"]) => rpc("plan.order", params),
};

/** The engine as a whole. */
export const engine = {
  /** Its counts, the questions an `ask` waits on; with `activity`, per pad. */
  stats: (params?: Params["stats"]) => rpc("stats", params),
};
