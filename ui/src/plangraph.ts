// The plan as a picture: a pad's tasks as a graph, laid out in layers.
// Pure (no DOM), so it is unit-tested (plangraph.test.ts); the picture
// itself is drawn by components/PlanGraph.ts.
//
// Edges run from what comes first to what follows: a task's dependencies
// (`depends_on`) to it, and a task to the tasks delegated from it (a task
// whose `reply_to` is another task of the plan: Agent Zero's nested
// delegations, any agent's sub-tasks). A task's layer is one past the
// deepest of the tasks it comes after; layers are rows, top to bottom, so
// every edge points down. Within a layer, tasks sit near the tasks they
// connect to (barycentres, swept both ways), which keeps edges short and
// crossings few; a layer wider than the room wraps onto more rows (an
// agent's ten delegations side by side would not fit).
//
// A task "needs you" when the person has something to do for it, while it
// is not finished (done or failed): an open question in its thread by
// someone else (an agent asked and waits), or the tag `needs_eyes`.

import type { PlanStep } from "./protocol";
import { taskWord, type TaskWord } from "./taskwords";
import type { Entry } from "./types";

export type EdgeKind = "waits" | "delegated";

export interface PlanNode {
  entry: Entry;
  word: TaskWord;
  /** Since when it stands where it stands, where the engine knows (plan.order's `since`). */
  since: string | null;
  /** The open question the person is asked in its thread, if any (none
   *  once the task is finished). */
  asks: Entry | null;
  /** Whether the person has something to do for it (`asks`, or `needs_eyes`). */
  needsYou: boolean;
  /** Its place in the plan's dependency order, from 0. */
  order: number;
  layer: number;
  /** Its place in its layer, from 0 (top). */
  slot: number;
  x: number;
  y: number;
}

export interface PlanEdge {
  from: string;
  to: string;
  kind: EdgeKind;
}

export interface PlanPicture {
  nodes: PlanNode[];
  edges: PlanEdge[];
  /** Each layer's tasks' ids, top to bottom. */
  layers: string[][];
  width: number;
  height: number;
}

/** A node's size and the gaps between them, in pixels: between boxes
 *  side by side, between the wrapped rows of one layer, between layers
 *  (room for the arrows). */
export const NODE_W = 236;
export const NODE_H = 82;
export const GAP_X = 14;
export const GAP_ROW = 10;
export const GAP_LAYER = 26;
export const MARGIN = 12;

/** How many boxes fit side by side in `width` pixels (at least one). */
export const columnsIn = (width: number): number => Math.max(1, Math.floor((width - 2 * MARGIN + GAP_X) / (NODE_W + GAP_X)));

const FINISHED: ReadonlySet<string> = new Set(["done", "failed"]);

/** The open questions by someone other than `me`, by the task they ask
 *  about (the entry they reply to), newest last. */
export function askedOn(questions: Entry[], me: string): Map<string, Entry> {
  const asked = new Map<string, Entry>();
  const byAge = [...questions].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const q of byAge) {
    if (q.kind === "question" && q.answer === null && q.author !== me && q.reply_to) asked.set(q.reply_to, q);
  }
  return asked;
}

/** Past this many tasks, the picture leaves the done ones out unless the
 *  person asks for them: a plan that big is mostly history, and each box
 *  costs on every live update. */
export const FOLD_DONE_ABOVE = 300;

/** The steps the picture draws: all of them, or, in a plan of more than
 *  `FOLD_DONE_ABOVE` tasks and unless `showDone`, all but the done ones;
 *  `folded`: how many were left out. */
export function drawnSteps(steps: PlanStep[], showDone: boolean): { steps: PlanStep[]; folded: number } {
  if (showDone || steps.length <= FOLD_DONE_ABOVE) return { steps, folded: 0 };
  const open = steps.filter((s) => s.entry.status !== "done");
  return { steps: open, folded: steps.length - open.length };
}

/** The graph of `steps` (plan.order's tasks, in its order) and what waits
 *  on the person among `questions` (the pad's questions), laid out at most
 *  `columns` boxes wide. */
export function planPicture(steps: PlanStep[], questions: Entry[], me: string, columns = Infinity): PlanPicture {
  const asked = askedOn(questions, me);
  const ids = new Set(steps.map((s) => s.entry.id));
  const edges: PlanEdge[] = [];
  for (const s of steps) {
    const e = s.entry;
    if (e.reply_to && ids.has(e.reply_to) && e.reply_to !== e.id) edges.push({ from: e.reply_to, to: e.id, kind: "delegated" });
    for (const d of new Set(e.depends_on)) {
      if (ids.has(d) && d !== e.id) edges.push({ from: d, to: e.id, kind: "waits" });
    }
  }
  const nodes: PlanNode[] = steps.map((s, order) => {
    // A finished task's question waits on no one any more.
    const open = !FINISHED.has(s.entry.status ?? "");
    const asks = open ? (asked.get(s.entry.id) ?? null) : null;
    return {
      entry: s.entry,
      word: taskWord(s.entry, s) ?? "ready",
      since: s.since ?? null,
      asks,
      needsYou: asks !== null || (open && s.entry.tags.includes("needs_eyes")),
      order,
      layer: 0,
      slot: 0,
      x: 0,
      y: 0,
    };
  });
  const layers = arrange(nodes, edges);
  return { nodes, edges, layers, ...place(nodes, layers, columns) };
}

/** Gives each node its layer and its slot in the layer; returns the layers. */
function arrange(nodes: PlanNode[], edges: PlanEdge[]): string[][] {
  const byId = new Map(nodes.map((n) => [n.entry.id, n]));
  const before = new Map<string, string[]>();
  const after = new Map<string, string[]>();
  for (const e of edges) {
    before.set(e.to, [...(before.get(e.to) ?? []), e.from]);
    after.set(e.from, [...(after.get(e.from) ?? []), e.to]);
  }
  // The layer: one past the deepest task it comes after. The engine
  // refuses dependency cycles, but a reply and a dependency could still
  // close one: a task met again on the walk counts as layer 0 there.
  const layerOf = new Map<string, number>();
  const walking = new Set<string>();
  const layer = (id: string): number => {
    const known = layerOf.get(id);
    if (known !== undefined) return known;
    if (walking.has(id)) return 0;
    walking.add(id);
    const l = Math.max(-1, ...(before.get(id) ?? []).map(layer)) + 1;
    walking.delete(id);
    layerOf.set(id, l);
    return l;
  };
  // Layers numbered without gaps (a loop can leave one empty).
  const used = [...new Set(nodes.map((n) => layer(n.entry.id)))].sort((a, b) => a - b);
  const layers: string[][] = used.map(() => []);
  for (const n of nodes) {
    n.layer = used.indexOf(layerOf.get(n.entry.id)!);
    layers[n.layer].push(n.entry.id);
  }
  // Each layer starts in plan order; then, twice, each task moves toward
  // the mean slot of the tasks it comes after (sweeping top down) and of
  // those after it (bottom up). A task with none there keeps its slot.
  const slotOf = new Map<string, number>();
  const number = (layer: string[]) => layer.forEach((id, i) => slotOf.set(id, i));
  layers.forEach(number);
  const sweep = (layer: string[], neighbours: Map<string, string[]>) => {
    const centre = (id: string): number => {
      const ns = neighbours.get(id) ?? [];
      return ns.length ? ns.reduce((sum, n) => sum + slotOf.get(n)!, 0) / ns.length : slotOf.get(id)!;
    };
    const key = new Map(layer.map((id) => [id, centre(id)]));
    layer.sort((a, b) => key.get(a)! - key.get(b)! || byId.get(a)!.order - byId.get(b)!.order);
    number(layer);
  };
  for (let round = 0; round < 2; round++) {
    for (let i = 1; i < layers.length; i++) sweep(layers[i], before);
    for (let i = layers.length - 2; i >= 0; i--) sweep(layers[i], after);
  }
  for (const n of nodes) n.slot = slotOf.get(n.entry.id)!;
  return layers;
}

/** Positions: a layer a band of rows, `columns` boxes a row at most,
 *  each row centred on the widest. Returns the picture's size. */
function place(nodes: PlanNode[], layers: string[][], columns: number): { width: number; height: number } {
  const across = Math.max(1, Math.min(columns, Math.max(0, ...layers.map((l) => l.length))));
  const rowWidth = (boxes: number) => boxes * NODE_W + (boxes - 1) * GAP_X;
  const top: number[] = [];
  let y = MARGIN;
  for (const l of layers) {
    top.push(y);
    const rows = Math.ceil(l.length / across);
    y += rows * NODE_H + (rows - 1) * GAP_ROW + GAP_LAYER;
  }
  for (const n of nodes) {
    const row = Math.floor(n.slot / across);
    const inRow = Math.min(across, layers[n.layer].length - row * across);
    const col = n.slot - row * across;
    n.x = MARGIN + (rowWidth(across) - rowWidth(inRow)) / 2 + col * (NODE_W + GAP_X);
    n.y = top[n.layer] + row * (NODE_H + GAP_ROW);
  }
  return {
    width: layers.length ? MARGIN * 2 + rowWidth(across) : 0,
    height: layers.length ? y - GAP_LAYER + MARGIN : 0,
  };
}

/** An edge's path, from the bottom of `a` to the top of `b`: a curve to
 *  the next layer; an edge that passes layers between goes down a lane
 *  clear of their boxes (`lane`), so it never runs behind a task it does
 *  not touch. From a box above more rows of its own wrapped layer, it
 *  first goes down beside them, to below the layer's last row. */
export function edgePath(p: PlanPicture, a: PlanNode, b: PlanNode): string {
  let x1 = a.x + NODE_W / 2;
  let y1 = a.y + NODE_H;
  const own = p.layers[a.layer];
  const bottom = nodeOf(p, own[own.length - 1])!.y + NODE_H;
  let start = `M${x1},${y1}`;
  if (y1 < bottom) {
    const x = lane(p, a.layer, a.layer, x1);
    const r = GAP_ROW / 2;
    start = `M${x1},${y1} L${x1},${y1 + r} L${x},${y1 + r} L${x},${bottom}`;
    x1 = x;
    y1 = bottom;
  }
  const x2 = b.x + NODE_W / 2;
  const y2 = b.y;
  if (b.layer <= a.layer + 1) {
    const bend = Math.max(12, (y2 - y1) / 2);
    return `${start} C${x1},${y1 + bend} ${x2},${y2 - bend} ${x2},${y2}`;
  }
  const x = lane(p, a.layer + 1, b.layer - 1, (x1 + x2) / 2);
  const g = GAP_LAYER;
  return `${start} C${x1},${y1 + g / 2} ${x},${y1 + g / 2} ${x},${y1 + g} L${x},${y2 - g} C${x},${y2 - g / 2} ${x2},${y2 - g / 2} ${x2},${y2}`;
}

/** The x nearest `near` that no box of layers `from`…`to` covers: a gap
 *  between two boxes side by side, or the picture's side margin. */
export function lane(p: PlanPicture, from: number, to: number, near: number): number {
  const clear = lanes(p, from, to);
  // The first lane at or right of `near`, or the one left of it.
  let lo = 0;
  let hi = clear.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (clear[mid] < near) lo = mid + 1;
    else hi = mid;
  }
  const right = clear[lo];
  const left = clear[lo - 1];
  if (left === undefined) return right ?? MARGIN / 2;
  if (right === undefined) return left;
  return near - left <= right - near ? left : right;
}

/** Each picture's clear lanes by layer range, worked out once a range. */
const lanesOf = new WeakMap<PlanPicture, Map<string, number[]>>();

/** The x positions no box of layers `from`…`to` covers, in order: the
 *  side margins and the gaps beside each box. Boxes share columns (a
 *  wrapped layer's rows line up), so the range's distinct box positions
 *  are few, and a gap is checked against its nearest box on the left. */
function lanes(p: PlanPicture, from: number, to: number): number[] {
  let cache = lanesOf.get(p);
  if (!cache) lanesOf.set(p, (cache = new Map()));
  const key = `${from}:${to}`;
  const known = cache.get(key);
  if (known) return known;
  const xs = new Set<number>();
  for (let l = from; l <= to; l++) for (const id of p.layers[l] ?? []) xs.add(xOf(p, id));
  const boxes = [...xs].sort((a, b) => a - b);
  const covered = (x: number): boolean => {
    // The rightmost box starting left of x: only it can reach over x.
    let lo = 0;
    let hi = boxes.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (boxes[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 && x < boxes[lo - 1] + NODE_W;
  };
  const candidates = [MARGIN / 2, p.width - MARGIN / 2, ...boxes.flatMap((b) => [b - GAP_X / 2, b + NODE_W + GAP_X / 2])];
  const clear = [...new Set(candidates.filter((x) => x > 0 && x < p.width && !covered(x)))].sort((a, b) => a - b);
  cache.set(key, clear);
  return clear;
}

/** A node by its id, from a per-picture index. */
const indexOf = new WeakMap<PlanPicture, Map<string, PlanNode>>();
export function nodeOf(p: PlanPicture, id: string): PlanNode | undefined {
  let index = indexOf.get(p);
  if (!index) indexOf.set(p, (index = new Map(p.nodes.map((n) => [n.entry.id, n]))));
  return index.get(id);
}
const xOf = (p: PlanPicture, id: string): number => nodeOf(p, id)!.x;

/** The edges into a node (what it comes after), from a per-picture index. */
const intoOf = new WeakMap<PlanPicture, Map<string, PlanEdge[]>>();
export function edgesInto(p: PlanPicture, id: string): PlanEdge[] {
  let index = intoOf.get(p);
  if (!index) {
    index = new Map();
    for (const e of p.edges) index.set(e.to, [...(index.get(e.to) ?? []), e]);
    intoOf.set(p, index);
  }
  return index.get(id) ?? [];
}

/** Where the arrow keys go from `id`: left and right along its layer,
 *  up to a task it comes after and down to one that comes after it (the
 *  nearest), else the layer above's or below's nearest task. */
export function neighbour(p: PlanPicture, id: string, key: "ArrowUp" | "ArrowDown" | "ArrowLeft" | "ArrowRight"): string | null {
  const n = nodeOf(p, id);
  if (!n) return null;
  const layer = p.layers[n.layer];
  if (key === "ArrowLeft") return layer[n.slot - 1] ?? null;
  if (key === "ArrowRight") return layer[n.slot + 1] ?? null;
  const down = key === "ArrowDown";
  const linked = p.edges.filter((e) => (down ? e.from === id : e.to === id)).map((e) => (down ? e.to : e.from));
  const candidates = linked.length ? linked : (p.layers[n.layer + (down ? 1 : -1)] ?? []);
  const far = (m: PlanNode) => Math.abs(m.x - n.x) + Math.abs(m.y - n.y);
  let best: PlanNode | null = null;
  for (const c of candidates) {
    const m = nodeOf(p, c)!;
    if (!best || far(m) < far(best)) best = m;
  }
  return best?.entry.id ?? null;
}
