// The activity view: what has been happening, from the engine's `stats`
// (with `activity: true`), refreshed while shown.

import { engine, entries } from "./services";
import { count } from "./count";
import type { Change, PadActivity, StatsResult } from "./protocol";
import { ago } from "./time";

const DID: Record<string, string> = {
  edit: "edited",
  delete: "deleted",
  clear: "cleared",
  window: "rolled out",
  expire: "expired",
  restored: "restored",
};

/** Who changed or deleted what in the last hour, newest first, each
 *  deletion and edit with Undo (a deletion only while something it took is
 *  still in the trash); a change that touched many entries (a clear) is
 *  one line. */
async function changesBox(): Promise<HTMLElement> {
  const since = new Date(Date.now() - 3600_000).toISOString();
  const r = await entries.changes({ since, include_created: false, limit: 200 });
  const box = el("div", "act-box wide");
  box.id = "act-changes";
  box.append(el("h3", "", "Edits and deletions, last hour"));
  const seen = new Map<string, { c: Change; n: number }>();
  for (const c of r.changes) {
    // One call's entries share its change (a restore: its time and who).
    const key = c.change === null ? `${c.what}:${c.by}:${c.at}` : `${c.what}:${c.change}`;
    const have = seen.get(key);
    if (have) have.n += 1;
    else seen.set(key, { c, n: 1 });
  }
  if (!seen.size) box.append(el("p", "hint", "nothing edited or deleted"));
  for (const { c, n } of seen.values()) {
    const row = el("div", "act-change");
    const what = n > 1 ? `${DID[c.what] ?? c.what} ${n} entries` : `${DID[c.what] ?? c.what} “${c.preview}”`;
    row.append(el("span", "author", c.by), el("span", "", ` ${what} in `), el("span", "pad-chip", c.pad), el("span", "time", ` ${ago(c.at)}`));
    if (c.change !== null && c.what !== "edit" && !stillDeleted(r.changes, c.change)) {
      row.append(el("span", "hint", " · brought back"));
    } else if (c.change !== null) {
      const change = c.change;
      const undo = el("button", "", "Undo");
      undo.addEventListener("click", () => {
        undo.disabled = true;
        void entries.restore({ change }).then((res) => {
          undo.textContent = `restored ${res.restored.length}`;
        });
      });
      row.append(undo);
    }
    box.append(row);
  }
  return box;
}

/** Whether deletion `change` still has an entry in the trash: one it took
 *  that no later `restored` row among `changes` brought back. */
export function stillDeleted(changes: Change[], change: number): boolean {
  const back = new Map<string, string>();
  for (const c of changes) {
    if (c.what === "restored" && (back.get(c.id) ?? "") < c.at) back.set(c.id, c.at);
  }
  return changes.some((c) => c.change === change && c.what !== "edit" && (back.get(c.id) ?? "") < c.at);
}

const SVG = "http://www.w3.org/2000/svg";

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

export function idle(s: number): string {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** Bars for entries per minute, oldest left, scaled to the busiest minute. */
export function chart(perMinute: number[], width = 600, height = 90): SVGSVGElement {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("aria-label", `Entries per minute over the last ${perMinute.length} minutes: ${perMinute.reduce((a, b) => a + b, 0)} in all, at most ${Math.max(0, ...perMinute)} in a minute`);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  const max = Math.max(1, ...perMinute);
  const w = width / Math.max(1, perMinute.length);
  perMinute.forEach((n, i) => {
    const h = n === 0 ? 1 : Math.max(2, (n / max) * (height - 4));
    const r = document.createElementNS(SVG, "rect");
    r.setAttribute("x", String(i * w + 1));
    r.setAttribute("y", String(height - h));
    r.setAttribute("width", String(Math.max(1, w - 2)));
    r.setAttribute("height", String(h));
    r.setAttribute("class", n === 0 ? "bar empty" : "bar");
    const title = document.createElementNS(SVG, "title");
    title.textContent = `${perMinute.length - i} min ago: ${count(n, "entry", "entries")}`;
    r.append(title);
    svg.append(r);
  });
  return svg;
}

function padList(title: string, pads: PadActivity[], open: (pad: string) => void): HTMLElement {
  const box = el("div", "act-box");
  box.append(el("h3", "", title));
  if (!pads.length) box.append(el("p", "hint", "no pads"));
  for (const p of pads) {
    const b = el("button", "act-pad");
    b.append(el("span", "pad-name", p.name), el("span", "count", `${count(p.entries, "entry", "entries")} · idle ${idle(p.idle_seconds)}`));
    b.addEventListener("click", () => open(p.name));
    box.append(b);
  }
  return box;
}

/** Fills `root` with the activity view. */
export async function renderActivity(root: HTMLElement, open: (pad: string) => void): Promise<StatsResult> {
  const s = await engine.stats({ activity: true });
  const a = s.activity;
  if (!a) throw new Error("the engine answered stats without its activity");
  const head = el("div", "act-figures");
  const figure = (label: string, value: string, id: string) => {
    const f = el("div", "act-figure");
    f.id = id;
    f.append(el("div", "act-value", value), el("div", "act-label", label));
    head.append(f);
  };
  figure("entries in the last hour", String(a.entries_last_hour), "act-last-hour");
  figure("entries stored", String(s.entries), "act-entries");
  figure("live pads", `${s.pads}${s.archived_pads ? ` (+${s.archived_pads} archived)` : ""}`, "act-pads");
  figure("embedding backlog", String(s.embed_queue), "act-backlog");
  figure("average entry", `${Math.round(a.avg_entry_bytes)} B`, "act-size");
  const rate = el("div", "act-box wide");
  rate.append(el("h3", "", "Entries per minute, last hour"), chart(a.entries_per_minute));
  const tags = el("div", "act-box");
  tags.append(el("h3", "", "Top tags"));
  const max = Math.max(1, ...a.top_tags.map((t) => t.count));
  for (const t of a.top_tags) {
    const row = el("div", "act-tag");
    const bar = el("span", "act-tag-bar");
    bar.style.width = `${(t.count / max) * 100}%`;
    row.append(el("span", "tag", `#${t.tag}`), bar, el("span", "count", String(t.count)));
    tags.append(row);
  }
  if (!a.top_tags.length) tags.append(el("p", "hint", "no tags yet"));
  const semantic = el(
    "p",
    "hint",
    `semantic search: ${s.semantic.status}${s.semantic.model ? ` (${s.semantic.model})` : ""}${s.semantic.reason ? ` — ${s.semantic.reason}` : ""}; text index queue ${s.index_queue}${s.metrics ? `; metrics at ${s.metrics}` : ""}`,
  );
  const grid = el("div", "act-grid");
  grid.append(rate, tags, padList("Busiest pads", a.busiest_pads, open), padList("Stalest pads", a.stalest_pads, open), await changesBox());
  root.replaceChildren(head, grid, semantic);
  return s;
}
