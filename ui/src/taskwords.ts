// One set of words for where a task stands, wherever the app shows it: the
// feed, the detail and the tasks view. The engine keeps a task's `status`
// (todo, doing, blocked, done, failed) and derives its plan state (ready,
// running, blocked, done, failed); the person sees one vocabulary:
//   ready    — to do, and nothing it waits on is unfinished
//   waiting  — to do, but it waits on tasks not done yet
//   running  — someone holds it (`doing`)
//   blocked  — an agent marked it blocked
//   done, failed
// Off the tasks view, where the plan is not at hand, a `todo` task with
// dependencies says `waiting` (they may be done; the tasks view knows).

import type { PlanStep } from "./protocol";
import { ago } from "./time";
import type { Entry } from "./types";

export type TaskWord = "ready" | "waiting" | "running" | "blocked" | "done" | "failed";

export function taskWord(e: Entry, step?: PlanStep): TaskWord | null {
  if (step) {
    if (step.state === "blocked") return step.waiting_on.length ? "waiting" : "blocked";
    return step.state;
  }
  switch (e.status) {
    case "todo": return e.depends_on.length ? "waiting" : "ready";
    case "doing": return "running";
    case null: return null;
    default: return e.status;
  }
}

/** "2 ready, 1 waiting, 1 running, 0 blocked, 3 done, 1 failed". */
export function planCounts(steps: PlanStep[]): string {
  const n: Record<TaskWord, number> = { ready: 0, waiting: 0, running: 0, blocked: 0, done: 0, failed: 0 };
  for (const s of steps) {
    const w = taskWord(s.entry, s);
    if (w) n[w] += 1;
  }
  return (Object.keys(n) as TaskWord[]).map((k) => `${n[k]} ${k}`).join(", ");
}

/** Who holds a task, in words around the holder's name (`who`, null when
 *  nobody does): a task back in the queue says why — its holder's lease
 *  ran out, or it failed for them — so a lapsed claim is seen, not lost. */
export interface Holding {
  lead: string;
  who: string | null;
  tail: string;
  /** It went back to the queue from `who`. */
  lapsed: boolean;
}

export function holding(e: Entry): Holding {
  if (!e.assignee) return { lead: "nobody holds it", who: null, tail: "", lapsed: false };
  if (e.status === "todo" && !e.error) return { lead: "back in the queue: the lease of", who: e.assignee, tail: "ran out", lapsed: true };
  if (e.status === "todo") return { lead: "back in the queue after failing for", who: e.assignee, tail: "", lapsed: true };
  return { lead: "held by", who: e.assignee, tail: "", lapsed: false };
}

/** Since when a task stands where it stands: a running task since its
 *  claim, a finished one since its finish (`since`, plan.order's; without
 *  it, the task's last change), "claimed 5m ago", "done 3m ago"; else from
 *  its last change (a lapse or a mark changes the task; a dependency
 *  finishing does not): "back 2m ago" (its lease ran out), "blocked 1h
 *  ago", or when it was added. */
export function taskSince(e: Entry, word: TaskWord, since: string | null, now = Date.now()): string {
  const [what, when] = sinceParts(e, word, since, now);
  return `${what} ${when}`;
}

/** Only the when of `taskSince` ("5m ago"): a plan box's head, where a
 *  "needs you" chip takes the room of the word (the box's label keeps it). */
export function taskAgo(e: Entry, word: TaskWord, since: string | null, now = Date.now()): string {
  return sinceParts(e, word, since, now)[1];
}

function sinceParts(e: Entry, word: TaskWord, since: string | null, now: number): [string, string] {
  switch (word) {
    case "done":
    case "failed":
      return [word, ago(since ?? e.updated_at, now)];
    case "running":
      return since ? ["claimed", ago(since, now)] : ["last heard", ago(e.updated_at, now)];
    case "blocked":
      return ["blocked", ago(e.updated_at, now)];
    default:
      return e.assignee ? ["back", ago(e.updated_at, now)] : ["added", ago(e.created_at, now)];
  }
}
