// The tasks view: the pad's tasks in dependency order (`plan.order`), with
// who holds each; redrawn when one of them changes.

import { rpc } from "../api";
import { app, currentPad } from "../state";
import { planCounts } from "../taskwords";
import { showEntries } from "../components/List";
import { backToFeed } from "./feed";
import { frame } from "./frame";

/** The pad's tasks; again to go back to the feed. */
export async function showTasks(): Promise<void> {
  if (app.view === "tasks") return backToFeed();
  await loadTasks();
}

/** Reads the plan again and shows it (a task of the pad changed). */
export async function loadTasks(): Promise<void> {
  const r = await rpc("plan.order", { pad: currentPad() });
  app.plan = r.entries;
  app.view = "tasks";
  frame(`${currentPad()} · tasks in dependency order · ${planCounts(app.plan)}`);
  showEntries(app.plan.map((s) => s.entry));
}
