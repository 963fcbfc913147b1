// The plan as a picture (the tasks view's default form): each task a box
// at its place in the layout (plangraph.ts) — where it stands, who holds
// it, since when, and what it asks of the person — and arrows from what
// comes first to what follows. Failed tasks and tasks waiting on the
// person stand out. One tab stop (the task last focused, else the one
// selected, else the first); the arrow keys (and j, k) follow the arrows and the
// layers, Home and End go to the first and last task; Enter, Space or a
// click opens the task with its thread. A live update changes the boxes
// in place.

import { holderChips } from "../authors";
import { titleOf } from "../context";
import { count } from "../count";
import { el } from "../dom";
import { NODE_H, NODE_W, edgePath, edgesInto, neighbour, nodeOf, type PlanNode, type PlanPicture } from "../plangraph";
import { holding, taskAgo, taskSince } from "../taskwords";

export interface PlanDrawing {
  pad: string;
  /** The person's name (their own chip says "you"). */
  me: string;
  selected: string | null;
  /** Opens a task in the detail, with its thread. */
  open: (id: string) => void;
  /** Done tasks left out of a big plan (`drawnSteps`), and how to show them. */
  folded?: { count: number; show: () => void };
  now?: number;
}

const SVG = "http://www.w3.org/2000/svg";

/** The task the picture's tab stop was last on. */
let focused: string | null = null;

/** The picture each canvas shows now (its keys move on it). */
const shown = new WeakMap<HTMLElement, PlanPicture>();

/** Draws `p` into `root`, over what was there: the boxes already drawn
 *  stay (a live update changes only what differs, so a screen reader does
 *  not hear the whole plan again and the focus does not move); `root`
 *  keeps its scroll. */
export function drawPlan(root: HTMLElement, p: PlanPicture, how: PlanDrawing): void {
  const ids = new Set(p.nodes.map((n) => n.entry.id));
  if (!p.nodes.length) {
    root.replaceChildren(el("p", "hint", `No tasks in ${how.pad} yet. A task is an entry of kind task; an agent's delegations and claims show here as they happen.`));
    return;
  }
  let canvas = root.querySelector<HTMLElement>(":scope > .plan-canvas");
  if (!canvas) {
    canvas = el("div", "plan-canvas");
    canvas.setAttribute("role", "group");
    const c = canvas;
    canvas.addEventListener("keydown", (ev) => keys(ev, shown.get(c)!, c));
    root.replaceChildren(legend(how), canvas);
  } else {
    const was = root.querySelector(":scope > .plan-legend");
    const now = legend(how);
    if (was?.outerHTML !== now.outerHTML) was?.replaceWith(now);
  }
  shown.set(canvas, p);
  const hadFocus = canvas.contains(document.activeElement);
  const stop = [focused, how.selected, p.nodes[0]?.entry.id].find((id) => id && ids.has(id)) ?? null;
  canvas.style.width = `${p.width}px`;
  canvas.style.height = `${p.height}px`;
  setAttr(canvas, "aria-label", summary(p, how.pad));
  const byId = new Map(p.nodes.map((n) => [n.entry.id, n]));
  const svg = edges(p, byId);
  const oldSvg = canvas.querySelector(":scope > svg.plan-edges");
  if (!oldSvg) canvas.prepend(svg);
  else if (oldSvg.outerHTML !== svg.outerHTML) oldSvg.replaceWith(svg);
  const drawn = new Map([...canvas.querySelectorAll<HTMLElement>(":scope > .plan-node")].map((b) => [b.dataset.id!, b]));
  for (const [id, b] of drawn) if (!ids.has(id)) b.remove();
  for (const n of p.nodes) {
    const fresh = node(n, p, how, n.entry.id === stop);
    const old = drawn.get(n.entry.id);
    if (old) update(old, fresh);
    else canvas.append(fresh);
  }
  if (hadFocus && stop && !canvas.contains(document.activeElement)) nodeEl(canvas, stop)?.focus({ preventScroll: true });
}

/** Sets an attribute only when it differs (a screen reader hears a change). */
function setAttr(target: Element, name: string, value: string | null): void {
  if (target.getAttribute(name) === value) return;
  if (value === null) target.removeAttribute(name);
  else target.setAttribute(name, value);
}

/** Makes the box `old` say what `fresh` says, touching only what differs. */
function update(old: HTMLElement, fresh: HTMLElement): void {
  for (const name of ["class", "style", "tabindex", "aria-label", "title", "aria-current"]) setAttr(old, name, fresh.getAttribute(name));
  if (old.innerHTML !== fresh.innerHTML) old.replaceChildren(...fresh.childNodes);
}

/** "Plan of proj-x: 10 tasks, 1 failed, 1 needs you." and how to move. */
export function summary(p: PlanPicture, pad: string): string {
  const failed = p.nodes.filter((n) => n.word === "failed").length;
  const you = p.nodes.filter((n) => n.needsYou).length;
  const parts = [count(p.nodes.length, "task", "tasks")];
  if (failed) parts.push(`${failed} failed`);
  if (you) parts.push(`${you} ${you === 1 ? "needs" : "need"} you`);
  return `Plan of ${pad}: ${parts.join(", ")}. Arrow keys move along the arrows and between tasks side by side; Enter opens a task's thread.`;
}

function legend(how: PlanDrawing): HTMLElement {
  const l = el("p", "plan-legend");
  l.append(
    el("span", "plan-key key-waits", "solid arrow: comes after"),
    el("span", "plan-key key-delegated", "dashed arrow: delegated from"),
    el("span", "plan-key key-you", "needs you: a question or needs_eyes"),
    el("span", "plan-key key-failed", "failed"),
  );
  if (how.folded?.count) {
    const show = el("button", "link plan-show-done", "show them");
    show.type = "button";
    show.addEventListener("click", how.folded.show);
    const note = el("span", "plan-folded", `${count(how.folded.count, "done task", "done tasks")} not drawn (a big plan): `);
    note.append(show);
    l.append(note);
  }
  return l;
}

/** The arrows, under the boxes (not read out: each box says its links). */
function edges(p: PlanPicture, byId: Map<string, PlanNode>): SVGSVGElement {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "plan-edges");
  svg.setAttribute("width", String(p.width));
  svg.setAttribute("height", String(p.height));
  svg.setAttribute("aria-hidden", "true");
  const defs = document.createElementNS(SVG, "defs");
  const marker = document.createElementNS(SVG, "marker");
  marker.setAttribute("id", "plan-arrow");
  marker.setAttribute("viewBox", "0 0 8 8");
  marker.setAttribute("refX", "8");
  marker.setAttribute("refY", "4");
  marker.setAttribute("markerWidth", "8");
  marker.setAttribute("markerHeight", "8");
  marker.setAttribute("orient", "auto");
  const tip = document.createElementNS(SVG, "path");
  tip.setAttribute("d", "M0,0 L8,4 L0,8 z");
  tip.setAttribute("class", "plan-arrowhead");
  marker.append(tip);
  defs.append(marker);
  svg.append(defs);
  for (const e of p.edges) {
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", edgePath(p, byId.get(e.from)!, byId.get(e.to)!));
    path.setAttribute("class", `plan-edge edge-${e.kind}`);
    path.setAttribute("marker-end", "url(#plan-arrow)");
    path.dataset.from = e.from;
    path.dataset.to = e.to;
    svg.append(path);
  }
  return svg;
}

/** What a box says, for a screen reader: the whole of it in one sentence. */
export function nodeLabel(n: PlanNode, p: PlanPicture, now = Date.now()): string {
  const title = (id: string) => `“${titleOf(nodeOf(p, id)?.entry.content ?? "")}”`;
  const e = n.entry;
  const parts = [`Task ${n.order + 1} of ${p.nodes.length}: ${titleOf(e.content)}`];
  let state = n.word as string;
  if (n.word === "failed" && e.error) state += `: ${titleOf(e.error)}`;
  if (n.asks) state += `; needs you: ${n.asks.author} asks “${titleOf(n.asks.content)}”`;
  else if (n.needsYou) state += "; needs you";
  parts.push(state);
  const h = holding(e);
  parts.push([h.lead, h.who, h.tail].filter(Boolean).join(" "));
  parts.push(taskSince(e, n.word, n.since, now));
  const into = edgesInto(p, e.id);
  const waits = into.filter((x) => x.kind === "waits").map((x) => title(x.from));
  if (waits.length) parts.push(`comes after ${waits.join(", ")}`);
  const from = into.find((x) => x.kind === "delegated");
  if (from) parts.push(`delegated from ${title(from.from)}`);
  return `${parts.join(". ")}.`;
}

function node(n: PlanNode, p: PlanPicture, how: PlanDrawing, stop: boolean): HTMLElement {
  const e = n.entry;
  const b = el("button", `plan-node word-${n.word}`);
  b.type = "button";
  b.dataset.id = e.id;
  b.classList.toggle("needs-you", n.needsYou);
  b.classList.toggle("selected", e.id === how.selected);
  if (e.id === how.selected) b.setAttribute("aria-current", "true");
  b.style.left = `${n.x}px`;
  b.style.top = `${n.y}px`;
  b.style.width = `${NODE_W}px`;
  b.style.height = `${NODE_H}px`;
  b.tabIndex = stop ? 0 : -1;
  const label = nodeLabel(n, p, how.now);
  b.setAttribute("aria-label", label);
  b.title = label;
  const head = el("span", "plan-head");
  head.append(el("span", `state state-${n.word}`, n.word));
  if (n.needsYou) head.append(el("span", "plan-you", "needs you"));
  const when = n.needsYou ? taskAgo(e, n.word, n.since, how.now) : taskSince(e, n.word, n.since, how.now);
  head.append(el("span", "plan-time", when));
  const who = el("span", "plan-holder");
  who.append(...holderChips(holding(e), how.me));
  const last = el("span", "plan-last");
  if (n.asks) last.textContent = `asks: ${titleOf(n.asks.content)}`;
  else if (n.word === "failed" && e.error) last.textContent = e.error;
  else if (e.resume) last.textContent = e.resume.split("\n").filter((l) => l.trim()).pop() ?? "";
  b.append(head, el("span", "plan-title", titleOf(e.content)), who, last);
  b.addEventListener("focus", () => {
    focused = e.id;
    for (const other of b.parentElement?.querySelectorAll<HTMLElement>(".plan-node") ?? []) other.tabIndex = other === b ? 0 : -1;
  });
  b.addEventListener("click", () => {
    markSelected(b.closest(".plan-canvas") ?? b, e.id);
    how.open(e.id);
  });
  return b;
}

/** Marks the box of `id` as the task open in the detail (none: `null`). */
export function markSelected(root: Element, id: string | null): void {
  for (const b of root.querySelectorAll<HTMLElement>(".plan-node")) {
    const on = b.dataset.id === id;
    b.classList.toggle("selected", on);
    if (on) b.setAttribute("aria-current", "true");
    else b.removeAttribute("aria-current");
  }
}

function nodeEl(canvas: HTMLElement, id: string): HTMLElement | null {
  return canvas.querySelector<HTMLElement>(`.plan-node[data-id="${id}"]`);
}

function keys(ev: KeyboardEvent, p: PlanPicture, canvas: HTMLElement): void {
  const at = (ev.target as HTMLElement).closest<HTMLElement>(".plan-node")?.dataset.id;
  if (!at) return;
  let next: string | null = null;
  switch (ev.key) {
    case "ArrowUp":
    case "ArrowDown":
    case "ArrowLeft":
    case "ArrowRight":
      next = neighbour(p, at, ev.key);
      break;
    // The list's keys for next and previous: along the arrows here.
    case "j":
      next = neighbour(p, at, "ArrowDown");
      break;
    case "k":
      next = neighbour(p, at, "ArrowUp");
      break;
    case "Home":
      next = p.nodes[0].entry.id;
      break;
    case "End":
      next = p.nodes[p.nodes.length - 1].entry.id;
      break;
    default:
      return;
  }
  // The picture's own keys: the list's (j/k, arrows) must not see them.
  ev.preventDefault();
  ev.stopPropagation();
  if (next) nodeEl(canvas, next)?.focus();
}
