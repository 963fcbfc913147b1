// The tasks view: the pad's tasks in dependency order (`plan.order`) —
// drawn as a picture (components/PlanGraph.ts: what waits on what, who
// holds what, what failed and what waits on the person), or as a list with
// who holds each (`v` or the title's button switches, and the choice is
// kept); redrawn when a task or a question of the pad changes.

import { entries, tasks } from "../services";
import { $, el, fail } from "../dom";
import type { Screen } from "../state";
import { askedOn, columnsIn, drawnSteps, planPicture } from "../plangraph";
import { planCounts } from "../taskwords";
import { answerOnPlan } from "../components/EntryDetail";
import { select, showEntries } from "../components/List";
import { drawPlan } from "../components/PlanGraph";
import type { PlanStep } from "../protocol";
import type { Entry } from "../types";
import { backToFeed } from "./feed";
import { frame } from "./frame";

/** The questions of the pad on screen (`questionsOf`), for what waits on
 *  the person. */
let questions: Entry[] = [];
let questionsOf: string | null = null;

/** The pad's tasks in dependency order, as `plan.order` answered last. */
let plan: PlanStep[] = [];

/** Whether the plan is drawn as a picture (else as a list): the person's
 *  choice, kept. */
let asPicture = localStorage.getItem("plan-form") !== "list";

/** The pad's tasks; again to go back to the feed. */
export async function showTasks(screen: Screen): Promise<void> {
  if (screen.view === "tasks") return backToFeed(screen);
  await loadTasks(screen);
}

/** Reads the plan again and shows it; the pad's questions too when
 *  `questionsToo` (or they are another pad's). A live update (`live`)
 *  whose answer comes after the person left the tasks is dropped, and so
 *  is any answer for a pad no longer on screen. */
export async function loadTasks(screen: Screen, questionsToo = true, live = false): Promise<void> {
  const pad = screen.pad;
  const [r, q] = await Promise.all([
    tasks.order({ pad }),
    questionsToo || questionsOf !== pad ? entries.list({ pad, kind: "question", limit: 1000 }) : null,
  ]);
  if (screen.pad !== pad || (live && screen.view !== "tasks")) return;
  plan = r.entries;
  if (q) {
    questions = q.entries;
    questionsOf = pad;
    answerOnPlan(askedOn(questions, screen.settings.author));
  }
  screen.setView("tasks");
  draw(screen);
}

/** Draws the plan in its form, from what was read last. */
function draw(screen: Screen): void {
  const pad = screen.pad;
  const other = asPicture ? "Show as a list" : "Show as a picture";
  const form = el("button", "link plan-form", other);
  form.id = "plan-form-btn";
  form.title = `${other} (v)`;
  form.addEventListener("click", () => togglePlanForm(screen));
  frame(screen, [document.createTextNode(`${pad} · tasks in dependency order · ${planCounts(plan)} · `), form], asPicture ? "picture" : "list");
  showEntries(screen, plan.map((s) => s.entry), { steps: plan });
  if (asPicture) {
    watchWidth(screen);
    const { steps, folded } = drawnSteps(plan, doneShownOn === pad);
    drawPlan($("plan"), planPicture(steps, questions, screen.settings.author, columnsIn($("plan").clientWidth)), {
      pad,
      me: screen.settings.author,
      selected: screen.selected,
      open: (id) => select(screen, id),
      folded: { count: folded, show: () => showDone(screen) },
    });
  }
}

/** The pad whose big plan the person asked to see with its done tasks. */
let doneShownOn: string | null = null;
function showDone(screen: Screen): void {
  doneShownOn = screen.pad;
  draw(screen);
  focusPicture(screen);
}

/** The picture is drawn as many boxes wide as fit: a window made wider or
 *  narrower draws it again. */
let watching: ResizeObserver | null = null;
function watchWidth(screen: Screen): void {
  if (watching) return;
  let columns = columnsIn($("plan").clientWidth);
  watching = new ResizeObserver(() => {
    const now = columnsIn($("plan").clientWidth);
    if (now === columns || $("plan").hidden) return;
    columns = now;
    if (screen.view === "tasks" && asPicture) draw(screen);
  });
  watching.observe($("plan"));
}

/** Switches the tasks view between the picture and the list (`v`). */
export function togglePlanForm(screen: Screen): void {
  if (screen.view !== "tasks") return;
  asPicture = !asPicture;
  localStorage.setItem("plan-form", asPicture ? "picture" : "list");
  draw(screen);
  if (!focusPicture(screen)) $("feed").focus();
}

/** Moves the focus into the plan's picture, if it is on screen. */
export function focusPicture(screen: Screen): boolean {
  const stop = screen.view === "tasks" && asPicture ? $("plan").querySelector<HTMLElement>(".plan-node[tabindex='0']") : null;
  stop?.focus();
  return !!stop;
}

/** A task or question of the pad changed: one reload for a burst (the
 *  questions read again only when one of them changed, `question`). */
let reloading: Promise<void> | null = null;
let again = false;
let questionsChanged = false;
export function loadTasksSoon(screen: Screen, question: boolean): void {
  questionsChanged ||= question;
  if (reloading) {
    again = true;
    return;
  }
  reloading = new Promise<void>((done) => setTimeout(done, 100))
    .then(() => {
      const withQuestions = questionsChanged;
      questionsChanged = false;
      return screen.view === "tasks" ? loadTasks(screen, withQuestions, true) : undefined;
    })
    .catch(fail)
    .finally(() => {
      reloading = null;
      const more = again;
      again = false;
      if (more && screen.view === "tasks") loadTasksSoon(screen, false);
    });
}
