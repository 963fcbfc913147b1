import { entry } from "./fixtures";
import { planCounts, taskWord } from "./taskwords";
import type { PlanStep } from "./protocol";

const step = (state: PlanStep["state"], waiting_on: string[] = []): PlanStep =>
  ({ entry: entry({ kind: "task", status: "todo" }), state, waiting_on } as PlanStep);

describe("task words", () => {
  it("says a task's status in the plan's words", () => {
    expect(taskWord(entry({ kind: "task", status: "todo" }))).toBe("ready");
    expect(taskWord(entry({ kind: "task", status: "todo", depends_on: ["x"] }))).toBe("waiting");
    expect(taskWord(entry({ kind: "task", status: "doing" }))).toBe("running");
    expect(taskWord(entry({ kind: "task", status: "failed" }))).toBe("failed");
    expect(taskWord(entry({ status: null }))).toBeNull();
  });
  it("tells waiting on tasks from marked blocked in the plan", () => {
    expect(taskWord(step("blocked").entry, step("blocked", ["a"]))).toBe("waiting");
    expect(taskWord(step("blocked").entry, step("blocked"))).toBe("blocked");
    expect(planCounts([step("ready"), step("blocked", ["a"]), step("running"), step("done")]))
      .toBe("1 ready, 1 waiting, 1 running, 0 blocked, 1 done, 0 failed");
  });
});
