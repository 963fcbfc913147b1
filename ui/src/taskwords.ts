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
