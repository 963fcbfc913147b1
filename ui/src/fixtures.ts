// Test fixtures: an entry as the engine sends it, with fields to override.

import type { Entry } from "./types";

let n = 0;
export function entry(over: Partial<Entry> = {}): Entry {
  n += 1;
  return {
    id: `1jkq${String(n).padStart(8, "0")}`,
    pad: "p",
    author: "agent-0",
    kind: "note",
    content: `entry ${n}`,
    tags: [],
    status: null,
    assignee: null,
    resume: null,
    lease_until: null,
    attempts: 0,
    error: null,
    category: null,
    confidence: null,
    depends_on: [],
    reply_to: null,
    choices: [],
    to: [],
    supersedes: null,
    superseded_by: null,
    replies: 0,
    answer: null,
    remind_at: null,
    pinned: false,
    meta: null,
    created_at: "2026-11-21T04:00:00.000Z",
    updated_at: "2026-11-21T04:00:00.000Z",
    version: 1,
    ...over,
  };
}
