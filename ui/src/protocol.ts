// Generated from the engine's Rust types by src/typescript.rs: do not edit.
// `UPDATE_TS=1 cargo test --lib typescript` rewrites it after a change.

/**
 * What an entry is.
 */
export type Kind = "note" | "plan" | "task" | "result" | "insight" | "question";

/**
 * Where a task stands.
 */
export type Status = "todo" | "doing" | "done" | "failed" | "blocked";

/**
 * What sort of insight an entry records.
 */
export type Category = "pattern" | "gotcha" | "discovery" | "learning";

/**
 * One item on a pad, as it travels on the wire.
 */
export type Entry = { id: string, pad: string, author: string, kind: Kind, content: string, tags: Array<string>, status: Status | null, assignee: string | null, resume: string | null, lease_until: string | null, 
/**
 * Tasks: how many times claimed; every claim after the first is a retry.
 */
attempts: number, 
/**
 * Tasks: the error of the last `task.fail`.
 */
error: string | null, category: Category | null, confidence: number | null, depends_on: Array<string>, 
/**
 * The id of the entry this one answers (threads).
 */
reply_to: string | null, 
/**
 * Questions: the answers offered, e.g. `["approve", "deny"]`.
 */
choices: Array<string>, 
/**
 * How many entries reply to this one.
 */
replies: number, 
/**
 * The id of the first reply by someone other than the author: the
 * answer, for a question.
 */
answer: string | null, 
/**
 * The authors this note is addressed to: it reaches their inbox, and
 * agents registered with an A2A endpoint are sent it (`agent.add`).
 */
to: Array<string>, remind_at: string | null, pinned: boolean, meta: Record<string, unknown> | null, created_at: string, updated_at: string, version: number, };

/**
 * A pad as listed by `pad.list` and returned by `pad.configure`.
 */
export type Pad = { name: string, entries: number, last_write_at: string, expires_at: string | null, ttl_seconds: number | null, max_entries: number | null, archived: boolean, archived_at: string | null, };

export type EventType = "created" | "updated" | "deleted" | "needs_eyes" | "reminder" | "pad_expired" | "waiting" | "stopped_waiting" | "trashed" | "delivery";

export type ListResult = { entries: Array<Entry>, next_cursor: string | null, };

export type SearchMode = "hybrid" | "text" | "semantic";

export type SearchHit = { entry: Entry, score: number, 
/**
 * Which searches found it: `text`, `semantic`, or both.
 */
found_by: Array<string>, 
/**
 * Other live entries with exactly this text, shown once as this hit.
 */
copies?: Array<string>, };

export type SearchResult = { hits: Array<SearchHit>, 
/**
 * The mode that actually ran (`hybrid` answers as `text` without embeddings).
 */
mode: SearchMode, 
/**
 * Entries (and edits) written before this search that meaning search
 * could not see yet: the embedding backlog was a flood, so the search
 * did not wait for it. Text search sees them. Absent when 0.
 */
not_embedded?: number, };

export type ThreadResult = { entry: Entry, 
/**
 * Every reply under the entry, at any depth, oldest first; each names
 * its parent in `reply_to`.
 */
replies: Array<Entry>, };

export type AskResult = { 
/**
 * The question entry (kind `question`, tagged `needs_eyes`).
 */
question: Entry, 
/**
 * The first reply by someone other than the asker, or `null` when the
 * wait ran out: the question stays open, and a later answer reaches the
 * asker's inbox.
 */
answer: Entry | null, 
/**
 * How long the call waited, in seconds.
 */
waited_seconds: number, };

/**
 * Why a version was kept: the change that replaced or removed it.
 */
export type Action = "edit" | "delete" | "clear" | "window" | "expire";

/**
 * An entry as it was before a change, with who changed it and when.
 */
export type Version = { 
/**
 * The change this version belongs to: every entry one call removed or
 * edited shares it; `entry.restore {change}` undoes them together.
 */
change: number, action: Action, 
/**
 * Who made the change (an author, a token's name, or `engine` for
 * retention).
 */
by: string, at: string, 
/**
 * Deletions only: when and by whom the entry was brought back.
 */
restored_at?: string | null, restored_by?: string | null, 
/**
 * The entry as it was (for an edit: the version the edit replaced).
 */
entry: Entry, };

/**
 * What one call moved to the trash (`trashed` events).
 */
export type Trashed = { change: number, by: string, action: Action, count: number, 
/**
 * How many of them each author wrote.
 */
authors: { [key in string]: number }, };

/**
 * One skill from an agent's card.
 */
export type AgentSkill = { id: string, name: string, description: string, };

/**
 * What the agent's card says about it.
 */
export type AgentCard = { name: string, description: string, version: string, skills: Array<AgentSkill>, };

/**
 * A registered agent as answers show it: never its token, and its URL
 * with any secret in it (Agent Zero's `t-TOKEN`, a query) masked.
 */
export type AgentInfo = { name: string, url: string, card: AgentCard | null, 
/**
 * Whether the last call to the agent got through (`null`: not tried).
 */
reachable: boolean | null, 
/**
 * Why the last call failed.
 */
error: string | null, added_at: string, added_by: string, 
/**
 * Notes being worked on by the agent right now.
 */
active: number, };

/**
 * An entry in brief, for the roster.
 */
export type Brief = { id: string, pad: string, content: string, at: string, };

/**
 * An author seen recently: connected, or writing.
 */
export type SeenAuthor = { author: string, 
/**
 * The last call or write.
 */
last_seen: string, 
/**
 * Connections saying hello as this author right now.
 */
connected: number, 
/**
 * Registered with an A2A endpoint (`agent.add`).
 */
registered: boolean, 
/**
 * The pad it last wrote to.
 */
pad: string | null, last_note: Brief | null, 
/**
 * Tasks it holds (`doing`).
 */
claimed: Array<Brief>, 
/**
 * Its questions nobody has answered yet.
 */
open_questions: Array<Brief>, };

export type AgentListResult = { agents: Array<AgentInfo>, 
/**
 * Authors seen recently, the most recent first (the person too).
 */
seen: Array<SeenAuthor>, };

/**
 * Where an addressed note stands with one agent.
 */
export type DeliveryState = "pending" | "sent" | "working" | "waiting_for_you" | "done" | "failed";

/**
 * One addressed note's conversation with one agent.
 */
export type Delivery = { 
/**
 * The addressed note.
 */
entry: string, pad: string, agent: string, state: DeliveryState, 
/**
 * "not delivered: …", the agent's status line, or its failure.
 */
detail: string | null, 
/**
 * The A2A task being followed.
 */
task: string | null, 
/**
 * The open question the agent asked, when it waits for the person.
 */
question: string | null, 
/**
 * Failed sends so far.
 */
attempts: number, updated_at: string, };
