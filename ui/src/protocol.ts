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
 * The id of another note, as an answer or an event names it: written
 * through the seal, so a caller who may not read that note sees `null`.
 */
export type NoteRef = string;

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
error: string | null, category: Category | null, confidence: number | null, depends_on: Array<NoteRef>, 
/**
 * The id of the entry this one answers (threads).
 */
reply_to: NoteRef | null, 
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
answer: NoteRef | null, 
/**
 * The authors this note is addressed to: it reaches their inbox, and
 * agents registered with an A2A endpoint are sent it (`agent.add`).
 */
to: Array<string>, 
/**
 * The id of the older note this one replaces: it holds now, the older
 * one is kept and found with `include_superseded`.
 */
supersedes: NoteRef | null, 
/**
 * The id of the newest live note that supersedes this one, if any
 * (read from theirs: nothing is written on this note).
 */
superseded_by: NoteRef | null, remind_at: string | null, pinned: boolean, meta: Record<string, unknown> | null, created_at: string, updated_at: string, version: number, };

/**
 * A pad as listed by `pad.list` and returned by `pad.configure`.
 */
export type Pad = { name: string, entries: number, last_write_at: string, expires_at: string | null, ttl_seconds: number | null, max_entries: number | null, archived: boolean, archived_at: string | null, };

export type EventType = "created" | "updated" | "deleted" | "needs_eyes" | "reminder" | "pad_expired" | "waiting" | "stopped_waiting" | "trashed" | "delivery";

export type ListResult = { entries: Array<Entry>, next_cursor: string | null, };

export type SearchMode = "hybrid" | "text" | "semantic";

export type ExportFormat = "markdown" | "json";

export type WordWeight = { word: string, 
/**
 * How many live entries hold it (within the filter).
 */
entries: number, 
/**
 * Its BM25 weight (inverse document frequency).
 */
weight: number, };

export type Candidates = { asked: number, found: number, below_floor: number, };

export type Ranked = { rank: number, score: number, scaled?: number | null, };

/**
 * What the query became before any note was scored.
 */
export type QueryExplain = { 
/**
 * `keywords` (one word, or up to three with no common word among
 * them: every word required, then word beginnings and substrings) or
 * `question` (any of its uncommon words, ranked by BM25).
 */
reads_as: string, 
/**
 * The words ranked by, rarest first: how many entries hold each and
 * its BM25 weight (idf over the store's live entries).
 */
words: Array<WordWeight>, 
/**
 * Common words a question left out ("the", "when", "did" …).
 */
dropped_common: Array<string>, 
/**
 * Words left out because ranking every note holding them would pass
 * the postings budget (the most common go first).
 */
dropped_over_budget: Array<string>, 
/**
 * Every word was too common to rank all its matches: only the newest
 * matches of the rarest word were ranked.
 */
newest_only: boolean, 
/**
 * The conditions that narrowed the candidates, as applied: the
 * filters given, a token's pads, archived pads and (unless asked)
 * superseded notes left out.
 */
filter: Array<string>, 
/**
 * The word side: how many hits it was asked for (the candidates'
 * budget) and how many it found. Absent in `semantic` mode.
 */
text?: Candidates | null, 
/**
 * The meaning side, the same; `below_floor` counts its matches under
 * the hybrid's cosine floor, left out. Absent in `text` mode.
 */
meaning?: Candidates | null, 
/**
 * Hybrid: the cosine under which meaning matches are left out.
 */
meaning_floor?: number | null, 
/**
 * Hybrid: what the meaning list's scores are — the cosine centred on
 * the mean of the notes searched, of the plain cosine's best 200.
 */
meaning_scores?: string | null, 
/**
 * Hybrid: the word side's share of a fused score (the meaning side
 * has the rest, less the sparse list's share).
 */
words_weight?: number | null, 
/**
 * Hybrid with the sparse model: the sparse list (the notes holding the
 * question's encoded terms among their learned terms) — how many hits it
 * was asked for and found.
 */
sparse?: Candidates | null, 
/**
 * The sparse list's share of a fused score.
 */
sparse_weight?: number | null, 
/**
 * Where the sparse list's terms came from: the question encoded by
 * the sparse model (each term's weight its model weight × its idf),
 * or its own word pieces (each its idf) when encoding failed.
 */
pieces_from?: string | null, 
/**
 * The terms the sparse list ranked by ("##s" ends a word; an encoded
 * question's include words it means): how many notes hold each among
 * their terms, and its weight (its weight in the question × its idf).
 */
pieces?: Array<WordWeight>, 
/**
 * Pieces the sparse list left out: in no note's terms, or past the
 * postings budget (the most common go first).
 */
pieces_left_out?: Array<string>, 
/**
 * Hits left out of the page because a newer note supersedes them.
 */
superseded_left_out: number, 
/**
 * Hits folded into an earlier hit with exactly their text (its
 * `copies`).
 */
copies_folded: number, };

/**
 * Why one hit ranked where it did.
 */
export type HitExplain = { 
/**
 * The query's ranked words this note holds, with their weight.
 */
words: Array<WordWeight>, 
/**
 * Its place in the word side's list: rank (from 1), score (BM25, or
 * the keyword tier's), and the score scaled 0–1 in that list.
 */
text?: Ranked | null, 
/**
 * Its place in the meaning side's list; `score` is the cosine
 * similarity of its vector and the query's.
 */
meaning?: Ranked | null, 
/**
 * Its place in the sparse list; `score` is the sum of its terms'
 * weights for the query's pieces times their idf.
 */
sparse?: Ranked | null, 
/**
 * Hybrid: what the note next to it in its pad (or the one it replies
 * to), a hit too, added to its score.
 */
neighbours: number, 
/**
 * Hybrid: what the query naming its author added ("what did caroline
 * say…" for a note by `caroline`; 0 when it does not).
 */
author_named: number, 
/**
 * The score it ranked by (the hit's `score`).
 */
score: number, };

export type SearchHit = { entry: Entry, score: number, 
/**
 * Which lists found it: `text`, `semantic`, and in hybrid with the
 * sparse model `sparse` (the related words), in that order.
 */
found_by: Array<string>, 
/**
 * Other live entries with exactly this text, shown once as this hit.
 */
copies?: Array<NoteRef>, 
/**
 * With `explain`: why it ranked here.
 */
explain?: HitExplain, };

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
not_embedded?: number, 
/**
 * With `explain`: what the query became and what narrowed it.
 */
explain?: QueryExplain, };

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
 * What a reply in an Agent Zero chat's (or a delegated task's) thread asks
 * of it, as its `meta.control`: the plugin pauses, resumes or halts that
 * chat (or subordinate) at its next step. The UI's `Control` is generated
 * from this; the plugin's `CONTROLS` is checked against it.
 */
export type Control = "pause" | "resume" | "stop";

/**
 * One addressed note's conversation with one agent.
 */
export type Delivery = { 
/**
 * The addressed note: in the delivery's own pad, so whoever sees the
 * delivery may read it (a plain id, not a `NoteRef`; deleted, it is
 * still the id the delivery was for).
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
question: NoteRef | null, 
/**
 * Failed sends so far.
 */
attempts: number, updated_at: string, };

export type HelloResult = { server: string, version: string, protocol: number, pid: number, author: string | null, 
/**
 * What this connection may do: `owner`, or the token's name and pads.
 */
access: string, 
/**
 * The name of the access token this connection presented, if any.
 */
token?: string | null, };

export type EntryResult = { entry: Entry, 
/**
 * Only for `entry.add` with `check_duplicates`: the live note of the
 * same pad this one repeats.
 */
looks_like?: LooksLike | null, };

/**
 * A note a new one repeats (`entry.add` with `check_duplicates`).
 */
export type LooksLike = { id: NoteRef, 
/**
 * Its first 120 characters.
 */
preview: string, 
/**
 * `text` (the same), `words` (nearly the same words) or `meaning`
 * (nearly the same meaning).
 */
same: string, 
/**
 * 1 for the same text; the words' overlap (Jaccard) or the cosine.
 */
similarity: number, };

export type DeleteResult = { deleted: boolean, id: string, 
/**
 * The change that moved it to the trash: `entry.restore {change}` undoes it.
 */
change: number | null, };

export type TagCount = { tag: string, count: number, };

export type TagsResult = { tags: Array<TagCount>, };

export type PadListResult = { pads: Array<Pad>, };

export type PadResult = { pad: Pad, };

export type ClearResult = { deleted: number, 
/**
 * The change that moved them to the trash: `entry.restore {change}`
 * brings them all back.
 */
change: number | null, };

export type ExportResult = { text: string, 
/**
 * Entries in the text.
 */
entries: number, 
/**
 * Entries a budget left out.
 */
left_out: number, };

export type SubscribeResult = { subscription: number, };

export type OkResult = { ok: boolean, };

/**
 * What has been happening, for the activity view and `pad stats`.
 */
export type Activity = { 
/**
 * Entries written in each minute of the last hour, oldest first (60
 * numbers; entries deleted since are not counted).
 */
entries_per_minute: Array<number>, 
/**
 * Entries written in the last hour.
 */
entries_last_hour: number, 
/**
 * The 10 most used tags on live pads.
 */
top_tags: Array<TagCount>, 
/**
 * The 5 live pads with the most entries.
 */
busiest_pads: Array<PadActivity>, 
/**
 * The 5 live pads idle the longest.
 */
stalest_pads: Array<PadActivity>, 
/**
 * Mean size of an entry's content on live pads, in bytes.
 */
avg_entry_bytes: number, };

export type PadActivity = { name: string, entries: number, last_write_at: string, idle_seconds: number, 
/**
 * When it expires if nobody writes (`null`: never).
 */
expires_at: string | null, };

export type StatsResult = { version: string, pid: number, uptime_seconds: number, entries: number, pads: number, archived_pads: number, tags: number, db_bytes: number, connections: number, subscribers: number, 
/**
 * `ask` calls waiting for an answer.
 */
waiting_asks: number, 
/**
 * The questions those calls wait for (ids).
 */
waiting_questions: Array<NoteRef>, 
/**
 * New entries acknowledged but still only in the insert journal.
 */
journal_queue: number, 
/**
 * Changes written but not yet in the text index.
 */
index_queue: number, 
/**
 * Entries written or edited but not yet embedded (0 without semantic search).
 */
embed_queue: number, semantic: SemanticInfo, data_dir: string, durability: string, 
/**
 * With `activity: true`.
 */
activity?: Activity | null, 
/**
 * Where the metrics endpoint listens, when it does.
 */
metrics?: string | null, };

/**
 * The state of semantic search, in `stats`.
 */
export type SemanticInfo = { 
/**
 * `ready`, `loading`, `unavailable` or `off`.
 */
status: string, 
/**
 * The model in use, e.g. `all-MiniLM-L6-v2/int8`.
 */
model?: string | null, 
/**
 * The learned sparse model giving hybrid search its related words
 * (`splade-tiny`), once loaded; absent without one.
 */
sparse_model?: string | null, 
/**
 * The ONNX Runtime library loaded.
 */
runtime?: string | null, 
/**
 * When unavailable or off: what is missing and how to fix it.
 */
reason?: string | null, 
/**
 * Vectors in the index.
 */
vectors: number, 
/**
 * Memory the vector index uses.
 */
index_bytes: number, 
/**
 * Entries embedded since the engine started, and how fast.
 */
embedded: number, embed_per_second: number, 
/**
 * The batches they were encoded in: a burst of notes is gathered
 * into one, not a batch per note.
 */
runs: number, };

export type ReindexResult = { 
/**
 * Entries queued to be embedded again.
 */
queued: number, };

export type InboxResult = { author: string, 
/**
 * New entries by others tagged `needs_eyes`, oldest first.
 */
needs_eyes: Array<Entry>, 
/**
 * New entries by others that reply to one of this author's entries.
 */
replies: Array<Entry>, 
/**
 * New notes by others addressed to this author (`to`).
 */
addressed: Array<Entry>, 
/**
 * This author's entries whose reminder came due since the last read.
 */
reminders: Array<Entry>, };

/**
 * Where a task stands in its plan.
 */
export type StepState = "ready" | "running" | "blocked" | "done" | "failed";

export type PlanStep = { entry: Entry, state: StepState, 
/**
 * Dependencies not yet done.
 */
waiting_on: Array<NoteRef>, 
/**
 * Since when it stands where it stands, RFC 3339: a `doing` task's
 * start (`task.claim`, or `doing` written by `entry.add` or
 * `entry.update`), a done or failed task's finish (`task.complete`,
 * `task.fail`, or the status written); `null` for the others.
 */
since: string | null, };

export type PlanCounts = { ready: number, running: number, blocked: number, done: number, failed: number, };

export type PlanResult = { pad: string, 
/**
 * Entries of kind `plan` (the goal and the approach), newest first.
 */
plans: Array<Entry>, 
/**
 * The pad's tasks, each after everything it depends on.
 */
entries: Array<PlanStep>, counts: PlanCounts, };

export type ClaimResult = { 
/**
 * The task now held, or `null` when nothing is ready.
 */
entry: Entry | null, 
/**
 * When nothing is ready: where the pad's tasks stand (are others still
 * running, is everything done?).
 */
counts?: PlanCounts | null, };

export type ShareResult = { 
/**
 * One copy per pad, each with `meta.shared_from` = {pad, id, author}.
 */
copies: Array<Entry>, };

export type AuthorReport = { author: string, 
/**
 * Entries written (of any kind).
 */
entries: number, 
/**
 * Tasks this author finished, as their holder.
 */
tasks_done: number, tasks_failed: number, 
/**
 * Claims beyond the first of the tasks this author holds or held last.
 */
retries: number, 
/**
 * Sum of `meta.tokens` over this author's entries.
 */
tokens: number, };

export type TaskReport = { id: string, pad: string, 
/**
 * The task's first line, shortened.
 */
title: string, status: Status | null, assignee: string | null, attempts: number, retries: number, error: string | null, 
/**
 * From the last claim to completion (done or failed).
 */
duration_seconds: number | null, tokens: number, };

export type ReportResult = { pad: string | null, authors: Array<AuthorReport>, 
/**
 * The newest 1,000 tasks; `tasks_total` counts them all.
 */
tasks: Array<TaskReport>, tasks_total: number, totals: AuthorReport, };

export type TokenInfo = { name: string, pads: Array<string>, read_only: boolean, 
/**
 * Registered agents it may hand work to (`*`: any).
 */
agents: Array<string>, 
/**
 * It may remove, clear, hide or reword notes others wrote in its pads.
 */
others: boolean, created_at: string, };

export type TokenCreateResult = { token: TokenInfo, 
/**
 * The secret, shown this once: the engine keeps only its hash.
 */
secret: string, };

export type TokenListResult = { tokens: Array<TokenInfo>, };

export type TokenRevokeResult = { revoked: boolean, };

export type HistoryResult = { id: string, 
/**
 * The entry now; `null` while it is deleted.
 */
entry: Entry | null, 
/**
 * Kept versions, oldest first.
 */
versions: Array<Version>, };

export type TrashResult = { 
/**
 * Deleted entries not brought back, newest deletion first.
 */
entries: Array<Version>, next_cursor: string | null, };

export type Skipped = { id: string, reason: string, };

export type RestoreResult = { restored: Array<Entry>, 
/**
 * What could not be undone, and why (already back, edited since, a pad
 * the caller cannot write).
 */
skipped: Array<Skipped>, };

export type PurgeResult = { 
/**
 * Kept versions erased for good.
 */
purged: number, };

/**
 * One thing an author did to an entry.
 */
export type Change = { at: string, by: string, 
/**
 * `created`, `restored`, or the kept version's action (`edit`,
 * `delete`, `clear`, `window`, `expire`).
 */
what: string, id: string, pad: string, 
/**
 * The change to pass to `entry.restore` to undo it (edits and deletions).
 */
change: number | null, 
/**
 * The entry's first line, shortened (for an edit: as it was before).
 */
preview: string, };

export type ChangesResult = { 
/**
 * Newest first.
 */
changes: Array<Change>, 
/**
 * More changes matched than `limit`.
 */
truncated: boolean, };

export type AgentResult = { agent: AgentInfo, };

export type AgentRemoveResult = { removed: boolean, 
/**
 * Deliveries to it that were dropped.
 */
dropped: number, };

export type DeliveriesResult = { deliveries: Array<Delivery>, };

export type HelloParams = { author?: string, client?: string, token?: string, };

export type AddParams = { pad: string, content: string, author?: string, kind?: Kind, tags?: Array<string>, status?: Status, assignee?: string, resume?: string, category?: Category, confidence?: number, depends_on?: Array<string>, 
/**
 * The id (or unique prefix) of the entry this one answers.
 */
reply_to?: string, 
/**
 * Questions: the answers offered (implies kind `question`).
 */
choices?: Array<string>, 
/**
 * The authors (agents) this note is addressed to: it reaches their
 * inbox, and agents registered with an A2A endpoint are sent it.
 */
to?: Array<string>, 
/**
 * The id (or unique prefix) of an older note this one replaces: the
 * older one is kept, and left out of lists and searches unless they
 * ask for `include_superseded`.
 */
supersedes?: string, remind_in?: number, remind_at?: string, pinned?: boolean, meta?: Record<string, unknown>, 
/**
 * Say in the answer (`looks_like`) when a live note of the pad has the
 * same text, nearly the same words, or nearly the same meaning. The
 * note is stored either way. Costs a search (~1 ms), so off by default.
 */
check_duplicates?: boolean, 
/**
 * A key naming this write, e.g. a fresh UUID, sent again only when
 * retrying it: the same key from the same caller within a day writes
 * once and answers as the first call did.
 */
idempotency_key?: string, };

export type IdParams = { id: string, };

export type UpdateParams = { id: string, content?: string, tags?: Array<string>, kind?: Kind, status?: Status | null, assignee?: string | null, resume?: string | null, category?: Category | null, confidence?: number | null, pinned?: boolean, depends_on?: Array<string>, remind_at?: string | null, meta?: Record<string, unknown> | null, 
/**
 * The older note this one replaces (`null`: none).
 */
supersedes?: string | null, if_version?: number, };

export type DeleteParams = { id: string, if_version?: number, };

export type HistoryParams = { id: string, };

export type TrashParams = { pad?: string, 
/**
 * Only what this author (or token) deleted.
 */
by?: string, limit?: number, cursor?: string, };

export type RestoreParams = { 
/**
 * A deleted entry to bring back, or (with `version`) a live one to take
 * back to an earlier version.
 */
id?: string, version?: number, 
/**
 * Undo one change: bring back every entry it deleted, or take every
 * entry it edited back to before it.
 */
change?: number, };

export type PurgeParams = { 
/**
 * One deleted entry (its whole history goes).
 */
id?: string, 
/**
 * Everything in this pad's trash.
 */
pad?: string, 
/**
 * The whole trash.
 */
all?: boolean, };

export type ChangesParams = { 
/**
 * Whose changes (an author or a token's name); all when absent.
 */
by?: string, pad?: string, since?: string, until?: string, limit?: number, 
/**
 * List entries created too (default); `false`: only edits, deletions
 * and restores.
 */
include_created?: boolean, };

export type ListParams = { pad?: string, tags?: Array<string>, author?: string, kind?: Kind, status?: Status, category?: Category, min_confidence?: number, since?: string, limit?: number, cursor?: string, 
/**
 * Also list notes a newer note supersedes (each says which).
 */
include_superseded?: boolean, };

export type SearchParams = { query: string, mode?: SearchMode, pad?: string, tags?: Array<string>, kind?: Kind, author?: string, category?: Category, min_confidence?: number, limit?: number, 
/**
 * Also find notes a newer note supersedes (each says which).
 */
include_superseded?: boolean, 
/**
 * Say why: the query's words, weights and filter (`explain` on the
 * result) and each hit's place in each ranking (`explain` on the hit).
 */
explain?: boolean, };

export type TagsParams = { pad?: string, };

export type PadListParams = { include_archived?: boolean, };

export type ConfigureParams = { name: string, ttl_seconds?: number | null, max_entries?: number | null, };

export type PadNameParams = { name: string, };

export type ClearParams = { name: string, keep_pinned?: boolean, };

export type ExportParams = { name: string, format?: ExportFormat, 
/**
 * Markdown only: the most characters the text may have; pinned and
 * `important` entries go in first, then the newest.
 */
budget?: number, 
/**
 * Also export notes a newer note supersedes (each marked).
 */
include_superseded?: boolean, };

export type SubscribeParams = { pads?: Array<string>, tags?: Array<string>, kinds?: Array<Kind>, };

export type UnsubscribeParams = { subscription: number, };

export type StatsParams = { 
/**
 * Also report `activity`: write rate, top tags, busiest and stalest pads.
 */
activity?: boolean, };

export type ReindexParams = Record<symbol, never>;

export type InboxParams = { 
/**
 * Whose inbox; defaults to the connection's `hello` author.
 */
author?: string, 
/**
 * Look without moving the cursor.
 */
peek?: boolean, };

export type PlanParams = { pad: string, };

export type ClaimParams = { pad: string, 
/**
 * Who takes the task; defaults to the connection's `hello` author.
 */
agent?: string, lease_seconds?: number, 
/**
 * A key naming this write, e.g. a fresh UUID, sent again only when
 * retrying it: the same key from the same caller within a day writes
 * once and answers as the first call did.
 */
idempotency_key?: string, };

export type HeartbeatParams = { id: string, 
/**
 * The holder; when given, the call fails if someone else holds the task.
 */
agent?: string, resume?: string, lease_seconds?: number, };

export type CompleteParams = { id: string, agent?: string, resume?: string, };

export type FailParams = { id: string, agent?: string, error?: string, resume?: string, 
/**
 * Put the task back in the queue for the next claimant instead of
 * leaving it `failed`.
 */
retry?: boolean, };

export type ShareParams = { id: string, to: Array<string>, 
/**
 * Who shares; defaults to the connection's `hello` author, else the
 * entry's author.
 */
author?: string, };

export type AskParams = { 
/**
 * The question. Leave it out and give `id` to wait for the answer to a
 * question asked before.
 */
content?: string, 
/**
 * An existing question (an id or unique prefix) to wait on instead of
 * asking a new one.
 */
id?: string, 
/**
 * Where the question goes; default `inbox`, the person's own pad.
 */
pad?: string, choices?: Array<string>, 
/**
 * How long to wait for the answer: 0 to not wait, at most 110.
 */
wait_seconds?: number, author?: string, 
/**
 * Who besides the person may answer: agents' names, or `*` for anyone.
 * By default a reply written with an access token is a reply in the
 * thread, not the answer (the question keeps `needs_eyes`).
 */
answer_from?: Array<string>, 
/**
 * A key naming this question, sent again only when retrying it: the
 * same key from the same caller within a day asks once (a retry waits
 * for that question's answer).
 */
idempotency_key?: string, };

export type ReportParams = { pad?: string, };

export type TokenCreateParams = { name: string, pads: Array<string>, read_only?: boolean, 
/**
 * Registered agents (`agent.add`) it may hand work to with `to`;
 * `["*"]` for any. None by default.
 */
agents?: Array<string>, 
/**
 * It may also remove, clear or hide (supersede, restore over) notes
 * others wrote in its pads; by default only its own.
 */
others?: boolean, };

export type TokenListParams = Record<symbol, never>;

export type TokenRevokeParams = { name: string, };

export type AgentAddParams = { 
/**
 * The author name the agent's replies carry, and what notes address.
 */
name: string, 
/**
 * The agent's A2A endpoint, e.g. Agent Zero's `http://HOST:PORT/a2a/t-TOKEN`.
 */
url: string, 
/**
 * A bearer token the endpoint wants (when the URL does not carry one).
 */
token?: string, 
/**
 * Replace an agent already registered under this name.
 */
replace?: boolean, };

export type AgentListParams = { 
/**
 * Authors seen within this many seconds are listed (default one day).
 */
seen_within?: number, };

export type AgentNameParams = { name: string, 
/**
 * Remove it even with notes not yet delivered to it, which are then
 * dropped; without, such a removal is refused and says how many wait.
 */
drop_pending?: boolean, };

export type DeliveriesParams = { pad?: string, 
/**
 * One note's deliveries.
 */
entry?: string, };

/**
 * What each method is sent (`rpc` in api.ts takes it).
 */
export interface Params {
  "hello": HelloParams;
  "entry.add": AddParams;
  "entry.get": IdParams;
  "entry.update": UpdateParams;
  "entry.delete": DeleteParams;
  "entry.history": HistoryParams;
  "entry.trash": TrashParams;
  "entry.restore": RestoreParams;
  "entry.purge": PurgeParams;
  "entry.changes": ChangesParams;
  "entry.list": ListParams;
  "search": SearchParams;
  "tags.list": TagsParams;
  "pad.list": PadListParams;
  "pad.configure": ConfigureParams;
  "pad.touch": PadNameParams;
  "pad.clear": ClearParams;
  "pad.export": ExportParams;
  "subscribe": SubscribeParams;
  "unsubscribe": UnsubscribeParams;
  "stats": StatsParams;
  "reindex": ReindexParams;
  "inbox": InboxParams;
  "plan.order": PlanParams;
  "task.claim": ClaimParams;
  "task.heartbeat": HeartbeatParams;
  "task.complete": CompleteParams;
  "task.fail": FailParams;
  "entry.share": ShareParams;
  "entry.thread": IdParams;
  "ask": AskParams;
  "report": ReportParams;
  "token.create": TokenCreateParams;
  "token.list": TokenListParams;
  "token.revoke": TokenRevokeParams;
  "agent.add": AgentAddParams;
  "agent.list": AgentListParams;
  "agent.remove": AgentNameParams;
  "agent.deliveries": DeliveriesParams;
}

/**
 * What each method answers (`rpc` in api.ts returns it).
 */
export interface Results {
  "hello": HelloResult;
  "entry.add": EntryResult;
  "entry.get": EntryResult;
  "entry.update": EntryResult;
  "entry.delete": DeleteResult;
  "entry.history": HistoryResult;
  "entry.trash": TrashResult;
  "entry.restore": RestoreResult;
  "entry.purge": PurgeResult;
  "entry.changes": ChangesResult;
  "entry.list": ListResult;
  "search": SearchResult;
  "tags.list": TagsResult;
  "pad.list": PadListResult;
  "pad.configure": PadResult;
  "pad.touch": PadResult;
  "pad.clear": ClearResult;
  "pad.export": ExportResult;
  "subscribe": SubscribeResult;
  "unsubscribe": OkResult;
  "stats": StatsResult;
  "reindex": ReindexResult;
  "inbox": InboxResult;
  "plan.order": PlanResult;
  "task.claim": ClaimResult;
  "task.heartbeat": EntryResult;
  "task.complete": EntryResult;
  "task.fail": EntryResult;
  "entry.share": ShareResult;
  "entry.thread": ThreadResult;
  "ask": AskResult;
  "report": ReportResult;
  "token.create": TokenCreateResult;
  "token.list": TokenListResult;
  "token.revoke": TokenRevokeResult;
  "agent.add": AgentResult;
  "agent.list": AgentListResult;
  "agent.remove": AgentRemoveResult;
  "agent.deliveries": DeliveriesResult;
}

export type Method = keyof Results;
