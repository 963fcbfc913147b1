// The plan as a picture: the layout (layers, slots, positions, arrows, the
// arrow keys' moves) and each task's state as the picture tells it
// (failed, waiting on the person, held, since when), drawn into the DOM
// with its roles, names and keys.

import { entry } from "./fixtures";
import { FOLD_DONE_ABOVE, GAP_LAYER, GAP_ROW, GAP_X, MARGIN, NODE_H, NODE_W, askedOn, columnsIn, drawnSteps, edgePath, lane, neighbour, planPicture, type PlanPicture } from "./plangraph";
import type { PlanStep } from "./protocol";
import { holding, taskAgo, taskSince } from "./taskwords";
import type { Entry } from "./types";
import { titleOf } from "./context";
import { drawPlan, markSelected, nodeLabel, summary } from "./components/PlanGraph";

const task = (content: string, over: Partial<Entry> = {}): Entry => entry({ kind: "task", status: "todo", content, ...over });
const step = (e: Entry, state: PlanStep["state"] = "ready", waiting_on: string[] = [], since: string | null = null): PlanStep =>
  ({ entry: e, state, waiting_on, since } as PlanStep);
const at = (p: PlanPicture, e: Entry) => p.nodes.find((n) => n.entry.id === e.id)!;
/** No two boxes overlap. */
function apart(p: PlanPicture): void {
  const boxes = p.nodes.map((n) => [n.x, n.y]);
  for (const [i, [x, y]] of boxes.entries()) {
    for (const [x2, y2] of boxes.slice(i + 1)) expect(Math.abs(x - x2) >= NODE_W || Math.abs(y - y2) >= NODE_H).toBe(true);
  }
}

describe("the plan's layout", () => {
  it("puts each task one layer past the deepest it comes after, dependencies and delegations alike", () => {
    const a = task("a");
    const b = task("b", { depends_on: [a.id] });
    const c = task("c", { depends_on: [a.id, b.id] });
    const d = task("d", { reply_to: c.id });
    const lone = task("lone");
    const p = planPicture([a, b, c, d, lone].map((e) => step(e)), [], "user");
    expect([a, b, c, d, lone].map((e) => at(p, e).layer)).toEqual([0, 1, 2, 3, 0]);
    expect(p.layers).toEqual([[a.id, lone.id], [b.id], [c.id], [d.id]]);
    expect(p.edges).toEqual([
      { from: a.id, to: b.id, kind: "waits" },
      { from: a.id, to: c.id, kind: "waits" },
      { from: b.id, to: c.id, kind: "waits" },
      { from: c.id, to: d.id, kind: "delegated" },
    ]);
  });

  it("draws no arrow to what is not a task of the plan, nor one twice", () => {
    const a = task("a", { depends_on: ["1jkqnotinplan"], reply_to: "1jkqsomenote0" });
    const b = task("b", { depends_on: [a.id, a.id] });
    const p = planPicture([step(a), step(b)], [], "user");
    expect(p.edges).toEqual([{ from: a.id, to: b.id, kind: "waits" }]);
  });

  it("survives a loop (a reply and a dependency closing one) without hanging", () => {
    const a = task("a");
    const b = task("b", { reply_to: a.id });
    a.depends_on = [b.id];
    const p = planPicture([step(a), step(b)], [], "user");
    expect(p.nodes).toHaveLength(2);
    expect(new Set(p.nodes.map((n) => `${n.layer}:${n.slot}`)).size).toBe(2);
  });

  it("places layers as rows top to bottom, each centred on the widest, with room for every box", () => {
    const root = task("root");
    const kids = [0, 1, 2].map((i) => task(`kid ${i}`, { depends_on: [root.id] }));
    const p = planPicture([root, ...kids].map((e) => step(e)), [], "user");
    expect(at(p, root).y).toBe(MARGIN);
    expect(kids.map((k) => at(p, k).y)).toEqual([1, 1, 1].map(() => MARGIN + NODE_H + GAP_LAYER));
    // The root sits above the middle child.
    expect(at(p, root).x).toBe(at(p, kids[1]).x);
    expect(p.width).toBe(MARGIN * 2 + 3 * NODE_W + 2 * GAP_X);
    expect(p.height).toBe(MARGIN * 2 + 2 * NODE_H + GAP_LAYER);
    apart(p);
  });

  it("wraps a layer wider than the room onto more rows, the layers below pushed down", () => {
    const flat = [0, 1, 2, 3, 4].map((i) => task(`delegation ${i}`));
    const after = task("after", { depends_on: [flat[0].id] });
    const p = planPicture([...flat, after].map((e) => step(e)), [], "user", 2);
    expect(flat.map((t) => at(p, t).y)).toEqual([0, 0, 1, 1, 2].map((r) => MARGIN + r * (NODE_H + GAP_ROW)));
    expect(at(p, after).y).toBe(MARGIN + 3 * NODE_H + 2 * GAP_ROW + GAP_LAYER);
    expect(p.width).toBe(MARGIN * 2 + 2 * NODE_W + GAP_X);
    expect(p.height).toBe(at(p, after).y + NODE_H + MARGIN);
    apart(p);
    expect(columnsIn(MARGIN * 2 + 2 * NODE_W + GAP_X)).toBe(2);
    expect(columnsIn(MARGIN * 2 + 2 * NODE_W + GAP_X - 1)).toBe(1);
    expect(columnsIn(10)).toBe(1);
  });

  it("orders a layer by where its tasks' predecessors sit, so arrows do not cross", () => {
    // Two chains: a1 → a2 and b1 → b2, with the second layer listed crosswise in plan order.
    const a1 = task("a1");
    const b1 = task("b1");
    const b2 = task("b2", { depends_on: [b1.id] });
    const a2 = task("a2", { depends_on: [a1.id] });
    const p = planPicture([a1, b1, b2, a2].map((e) => step(e)), [], "user");
    expect(p.layers[1]).toEqual([a2.id, b2.id]);
    expect(at(p, a2).x).toBe(at(p, a1).x);
    expect(at(p, b2).x).toBe(at(p, b1).x);
  });

  it("draws an arrow from the bottom of one box to the top of the next", () => {
    const a = task("a");
    const b = task("b", { depends_on: [a.id] });
    const p = planPicture([step(a), step(b)], [], "user");
    const d = edgePath(p, at(p, a), at(p, b));
    expect(d.startsWith(`M${MARGIN + NODE_W / 2},${MARGIN + NODE_H} `)).toBe(true);
    expect(d.endsWith(` ${MARGIN + NODE_W / 2},${MARGIN + NODE_H + GAP_LAYER}`)).toBe(true);
  });

  it("takes an arrow from a wrapped layer's upper row down beside its lower rows first", () => {
    // Three tasks in a layer two boxes wide: the first row's arrows to the
    // next layer must not run behind the box of the second row.
    const root = task("root");
    const mids = ["m1", "m2", "m3"].map((c) => task(c, { depends_on: [root.id] }));
    const end = task("end", { depends_on: [mids[0].id] });
    const p = planPicture([root, ...mids, end].map((e) => step(e)), [], "user", 2);
    const from = at(p, mids[0]);
    const under = p.nodes.find((n) => n.layer === from.layer && n.y > from.y)!;
    const d = edgePath(p, from, at(p, end));
    const down = [...d.matchAll(/L([\d.]+),([\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
    const [x, y] = down[down.length - 1];
    expect(y).toBe(under.y + NODE_H);
    expect(x <= under.x || x >= under.x + NODE_W).toBe(true);
    expect(d.endsWith(` ${at(p, end).x + NODE_W / 2},${at(p, end).y}`)).toBe(true);
  });

  it("runs an edge that passes a layer down a lane clear of that layer's boxes", () => {
    // notes → publish passes the layer of debs and image, two boxes wide.
    const freeze = task("freeze");
    const notes = task("notes", { depends_on: [freeze.id] });
    const suite = task("suite", { depends_on: [freeze.id] });
    const debs = task("debs", { depends_on: [suite.id] });
    const image = task("image", { depends_on: [suite.id] });
    const publish = task("publish", { depends_on: [notes.id, debs.id] });
    const p = planPicture([freeze, notes, suite, debs, image, publish].map((e) => step(e)), [], "user");
    expect(at(p, publish).layer - at(p, notes).layer).toBe(2);
    const d = edgePath(p, at(p, notes), at(p, publish));
    const x = Number(/ L([\d.]+),/.exec(d)![1]);
    for (const n of [at(p, debs), at(p, image)]) expect(x <= n.x || x >= n.x + NODE_W).toBe(true);
    // Between the two boxes, the lane nearest the edge's ends.
    expect(x).toBe(Math.min(at(p, debs).x, at(p, image).x) + NODE_W + GAP_X / 2);
    // A layer with one box: past its side.
    const q = planPicture([step(freeze), step(task("mid", { depends_on: [freeze.id] }))], [], "user");
    expect(lane(q, 1, 1, MARGIN + NODE_W / 2)).toBe(MARGIN / 2);
  });

  it("lays out and routes a plan of two thousand tasks quickly (a live redraw)", () => {
    // 2,001 tasks, each after one or two earlier ones some layers up: about
    // 4,000 arrows, many passing wrapped layers (6 s when each lane looked
    // at every box of the layers it passes).
    const tasks: Entry[] = [];
    for (let i = 0; i <= 2000; i++) {
      const deps = i === 0 ? [] : [tasks[Math.floor(i / 2)].id, tasks[Math.max(0, i - 7)].id];
      tasks.push(task(`t${i}`, { depends_on: deps }));
    }
    const started = performance.now();
    const p = planPicture(tasks.map((e) => step(e)), [], "user", 6);
    const byId = new Map(p.nodes.map((n) => [n.entry.id, n]));
    const paths = p.edges.map((e) => edgePath(p, byId.get(e.from)!, byId.get(e.to)!));
    const took = performance.now() - started;
    expect(p.edges.length).toBeGreaterThan(3900);
    expect(paths.filter((d) => d.includes(" L")).length).toBeGreaterThan(1800);
    expect(took).toBeLessThan(2000);
  });

  it("leaves a big plan's done tasks out unless asked, and says how many", () => {
    const many = Array.from({ length: FOLD_DONE_ABOVE + 1 }, (_, i) => step(task(`t${i}`, { status: i % 2 ? "done" : "todo" })));
    const { steps, folded } = drawnSteps(many, false);
    expect(folded).toBe(FOLD_DONE_ABOVE / 2);
    expect(steps.every((s) => s.entry.status !== "done")).toBe(true);
    expect(drawnSteps(many, true)).toEqual({ steps: many, folded: 0 });
    expect(drawnSteps(many.slice(1), false).folded).toBe(0);
    const root = document.createElement("div");
    let shown = 0;
    drawPlan(root, planPicture(steps, [], "user"), { pad: "big", me: "user", selected: null, open: () => undefined, folded: { count: folded, show: () => shown++ } });
    expect(root.querySelector(".plan-legend")!.textContent).toContain(`${FOLD_DONE_ABOVE / 2} done tasks not drawn (a big plan): show them`);
    root.querySelector<HTMLButtonElement>(".plan-show-done")!.click();
    expect(shown).toBe(1);
  });

  it("moves the arrow keys along the arrows and along a layer", () => {
    const a = task("a");
    const b = task("b", { depends_on: [a.id] });
    const c = task("c", { depends_on: [a.id] });
    const lone = task("lone");
    const p = planPicture([a, lone, b, c].map((e) => step(e)), [], "user");
    expect(neighbour(p, a.id, "ArrowRight")).toBe(lone.id);
    expect(neighbour(p, lone.id, "ArrowLeft")).toBe(a.id);
    expect(neighbour(p, a.id, "ArrowLeft")).toBeNull();
    expect([b.id, c.id]).toContain(neighbour(p, a.id, "ArrowDown"));
    expect(neighbour(p, c.id, "ArrowUp")).toBe(a.id);
    // No arrow out of it: the next layer's nearest task.
    expect([b.id, c.id]).toContain(neighbour(p, lone.id, "ArrowDown"));
    expect(neighbour(p, b.id, "ArrowDown")).toBeNull();
  });
});

describe("a task's state in the picture", () => {
  const now = Date.parse("2026-11-21T04:10:00.000Z");

  it("needs the person when someone else's question in its thread is open, or it is tagged needs_eyes and unfinished", () => {
    const asked = task("deploy", { status: "doing", assignee: "agent-1" });
    const eyes = task("look at this", { tags: ["needs_eyes"] });
    const eyesDone = task("seen", { status: "done", tags: ["needs_eyes"] });
    const answered = task("answered one");
    const mine = task("my own question");
    const q = entry({ kind: "question", author: "agent-1", reply_to: asked.id, content: "Flip traffic now?" });
    const qa = entry({ kind: "question", author: "agent-1", reply_to: answered.id, answer: "1jkqanswer00" });
    const qm = entry({ kind: "question", author: "user", reply_to: mine.id });
    const failed = task("gave up", { status: "failed" });
    const qf = entry({ kind: "question", author: "agent-1", reply_to: failed.id, content: "Retry?" });
    const p = planPicture([asked, eyes, eyesDone, answered, mine, failed].map((e) => step(e)), [q, qa, qm, qf], "user");
    expect(p.nodes.map((n) => n.needsYou)).toEqual([true, true, false, false, false, false]);
    expect(at(p, failed).asks).toBeNull();
    expect(at(p, asked).asks?.content).toBe("Flip traffic now?");
    expect(askedOn([q, qa, qm], "user").size).toBe(1);
  });

  it("says a long error in a box's name as short as the box shows it", () => {
    const long = `${"connection refused by the registry ".repeat(20)}\nstack: frame 1`;
    const failed = task("push", { status: "failed", error: long });
    const p = planPicture([step(failed, "failed")], [], "user");
    const label = nodeLabel(p.nodes[0], p);
    expect(label).toContain(`failed: ${titleOf(long)}.`);
    expect(label).not.toContain("stack: frame 1");
    expect(label.length).toBeLessThan(300);
  });

  it("tells failed, running, waiting and done apart, with holder and since when", () => {
    const failed = task("port the handlers", { status: "failed", assignee: "worker-2", error: "no network", updated_at: "2026-11-21T04:07:00.000Z" });
    const running = task("migrate", { status: "doing", assignee: "worker-1", updated_at: "2026-11-21T04:09:30.000Z" });
    const waiting = task("switch traffic", { depends_on: [running.id], created_at: "2026-11-21T03:10:00.000Z" });
    const lapsed = task("renew the cert", { assignee: "worker-3", updated_at: "2026-11-21T04:08:00.000Z" });
    const p = planPicture([step(failed, "failed"), step(running, "running", [], "2026-11-21T04:04:00.000Z"), step(waiting, "blocked", [running.id]), step(lapsed)], [], "user");
    expect(p.nodes.map((n) => n.word)).toEqual(["failed", "running", "waiting", "ready"]);
    expect(taskSince(failed, "failed", null, now)).toBe("failed 3m ago");
    // Running: since its claim (plan.order's `since`), not its last heartbeat; without it, the heartbeat.
    expect(taskSince(running, "running", "2026-11-21T04:04:00.000Z", now)).toBe("claimed 6m ago");
    expect(taskSince(running, "running", null, now)).toBe("last heard just now");
    expect(taskAgo(running, "running", "2026-11-21T04:04:00.000Z", now)).toBe("6m ago");
    expect(taskSince(waiting, "waiting", null, now)).toBe("added 1h ago");
    expect(taskSince(lapsed, "ready", null, now)).toBe("back 2m ago");
    // Done: since its finish, not a later edit.
    const edited = task("x", { status: "done", updated_at: "2026-11-21T04:09:00.000Z" });
    expect(taskSince(edited, "done", "2026-11-21T03:10:00.000Z", now)).toBe("done 1h ago");
    expect(taskSince(edited, "done", null, now)).toBe("done 1m ago");
    expect(taskSince(task("y", { status: "blocked", updated_at: "2026-11-21T04:05:00.000Z" }), "blocked", null, now)).toBe("blocked 5m ago");
    expect(holding(lapsed)).toEqual({ lead: "back in the queue: the lease of", who: "worker-3", tail: "ran out", lapsed: true });
    expect(holding(failed).who).toBe("worker-2");
    expect(nodeLabel(at(p, failed), p, now)).toBe("Task 1 of 4: port the handlers. failed: no network. held by worker-2. failed 3m ago.");
    expect(nodeLabel(at(p, waiting), p, now)).toBe("Task 3 of 4: switch traffic. waiting. nobody holds it. added 1h ago. comes after “migrate”.");
    expect(nodeLabel(at(p, running), p, now)).toBe("Task 2 of 4: migrate. running. held by worker-1. claimed 6m ago.");
    expect(summary(p, "work")).toMatch(/^Plan of work: 4 tasks, 1 failed\. /);
  });
});

describe("the picture in the page", () => {
  const a = task("snapshot the db", { status: "done", assignee: "agent-1" });
  const b = task("migrate", { status: "failed", assignee: "agent-2", error: "disk full", depends_on: [a.id] });
  const c = task("flip traffic", { depends_on: [a.id], status: "doing", assignee: "agent-3" });
  const q = entry({ kind: "question", author: "agent-3", reply_to: c.id, content: "Flip now?" });
  const draw = (root: HTMLElement, opened: string[] = [], selected: string | null = null) =>
    drawPlan(root, planPicture([step(a, "done"), step(b, "failed"), step(c, "running")], [q], "user"), {
      pad: "staging",
      me: "user",
      selected,
      open: (id) => opened.push(id),
    });

  it("is a named group of buttons, one tab stop, the failed and the waiting marked", () => {
    const root = document.createElement("div");
    document.body.append(root);
    draw(root);
    const group = root.querySelector(".plan-canvas")!;
    expect(group.getAttribute("role")).toBe("group");
    expect(group.getAttribute("aria-label")).toMatch(/^Plan of staging: 3 tasks, 1 failed, 1 needs you\./);
    const nodes = [...root.querySelectorAll<HTMLButtonElement>("button.plan-node")];
    expect(nodes.map((n) => n.tabIndex)).toEqual([0, -1, -1]);
    expect(nodes.every((n) => n.getAttribute("aria-label")!.startsWith("Task "))).toBe(true);
    expect(nodes[1].classList.contains("word-failed")).toBe(true);
    expect(nodes[1].textContent).toContain("disk full");
    expect(nodes[2].classList.contains("needs-you")).toBe(true);
    expect(nodes[2].textContent).toContain("asks: Flip now?");
    expect(nodes[2].getAttribute("aria-label")).toContain("needs you: agent-3 asks “Flip now?”");
    // Its head has room for the chip: the time without its word (the label keeps it).
    expect(nodes[2].querySelector(".plan-time")!.textContent).toMatch(/^(just now|\d+[smhd] ago)$/);
    expect(nodes[1].querySelector(".plan-time")!.textContent).toMatch(/^failed /);
    expect(root.querySelectorAll("svg.plan-edges path.plan-edge")).toHaveLength(2);
    expect(root.querySelector("svg.plan-edges")!.getAttribute("aria-hidden")).toBe("true");
    root.remove();
  });

  it("opens a task on a click, moves with the arrow keys, and keeps the focus through a redraw", () => {
    const root = document.createElement("div");
    document.body.append(root);
    const opened: string[] = [];
    draw(root, opened);
    const node = (id: string) => root.querySelector<HTMLButtonElement>(`.plan-node[data-id="${id}"]`)!;
    node(a.id).focus();
    node(a.id).dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowDown", bubbles: true }));
    const right = document.activeElement as HTMLElement;
    expect([b.id, c.id]).toContain(right.dataset.id);
    expect(right.tabIndex).toBe(0);
    expect(node(a.id).tabIndex).toBe(-1);
    right.click();
    expect(opened).toEqual([right.dataset.id]);
    expect(right.getAttribute("aria-current")).toBe("true");
    right.dispatchEvent(new KeyboardEvent("keydown", { key: "k", bubbles: true }));
    expect((document.activeElement as HTMLElement).dataset.id).toBe(a.id);
    node(a.id).dispatchEvent(new KeyboardEvent("keydown", { key: "j", bubbles: true }));
    expect((document.activeElement as HTMLElement).dataset.id).toBe(right.dataset.id);
    right.dispatchEvent(new KeyboardEvent("keydown", { key: "Home", bubbles: true }));
    expect((document.activeElement as HTMLElement).dataset.id).toBe(a.id);
    // An event redraws the picture: the focus stays on the same task.
    draw(root, opened, right.dataset.id!);
    expect((document.activeElement as HTMLElement).dataset.id).toBe(a.id);
    expect(node(right.dataset.id!).classList.contains("selected")).toBe(true);
    // Esc closes the task: no box is marked open.
    markSelected(root, null);
    expect(root.querySelectorAll(".plan-node.selected, .plan-node[aria-current]")).toHaveLength(0);
    root.remove();
  });

  it("changes only what differs on a live redraw, in the same boxes", () => {
    const root = document.createElement("div");
    document.body.append(root);
    draw(root);
    const node = (id: string) => root.querySelector<HTMLButtonElement>(`.plan-node[data-id="${id}"]`)!;
    const before = [a, b, c].map((e) => node(e.id));
    node(b.id).focus();
    const changed: string[] = [];
    const watch = new MutationObserver((records) => {
      for (const r of records) changed.push(`${(r.target as HTMLElement).closest?.(".plan-node")?.getAttribute("data-id") ?? "?"}:${r.type}:${r.attributeName ?? ""}`);
    });
    watch.observe(root, { subtree: true, attributes: true, childList: true, characterData: true });
    // The same plan again (an event that changed nothing here): nothing moves.
    draw(root);
    expect(watch.takeRecords()).toHaveLength(0);
    // One task changes hands: only its box changes, the focus stays put.
    const on = { ...c, assignee: "agent-4" };
    drawPlan(root, planPicture([step(a, "done"), step(b, "failed"), step(on, "running")], [q], "user"), { pad: "staging", me: "user", selected: null, open: () => undefined });
    const touched = new Set(watch.takeRecords().map((r) => (r.target as Element).closest?.(".plan-node")?.getAttribute("data-id") ?? "canvas"));
    expect([...touched]).toEqual([c.id]);
    expect([a, b, c].map((e) => node(e.id))).toEqual(before);
    expect(node(c.id).textContent).toContain("agent-4");
    expect((document.activeElement as HTMLElement).dataset.id).toBe(b.id);
    watch.disconnect();
    root.remove();
  });

  it("says so when the pad has no tasks", () => {
    const root = document.createElement("div");
    drawPlan(root, planPicture([], [], "user"), { pad: "empty", me: "user", selected: null, open: () => undefined });
    expect(root.textContent).toMatch(/No tasks in empty yet/);
  });
});
