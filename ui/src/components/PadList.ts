// The pad list in the sidebar: every pad with its count and expiry. The
// inbox and the pad being shown are always listed, even while empty.
// Pads that expired (archived after their idle time) are listed under
// Archived, each with Restore: nothing vanishes without a trace.

import { pads } from "../services";
import { showExport } from "./Dialogs";
import { $, el, fail, say } from "../dom";
import { INBOX, type Screen } from "../state";
import { ago, until } from "../time";
import type { Pad } from "../types";

let open: (name: string) => void = () => undefined;

/** What a click on a pad does (the feed opens it). */
export function onOpenPad(fn: (name: string) => void): void {
  open = fn;
}

/** Pads archived after their idle time, newest archive first. */
let archived: Pad[] = [];

export async function loadPads(screen: Screen): Promise<void> {
  const all = (await pads.list({ include_archived: true })).pads;
  screen.setPads(all.filter((p) => !p.archived));
  archived = all.filter((p) => p.archived).sort((a, b) => (b.archived_at ?? "").localeCompare(a.archived_at ?? ""));
  drawPads(screen);
}

/** Brings an archived pad back (its idle clock restarts) and opens it. */
async function restorePad(screen: Screen, name: string): Promise<void> {
  await pads.touch({ name });
  await loadPads(screen);
  say(`restored pad ${name}`);
  open(name);
}

let timer = 0;
/** Reloads the list soon: a burst of writes costs one reload. */
export function refreshPadsSoon(screen: Screen): void {
  clearTimeout(timer);
  timer = window.setTimeout(() => void loadPads(screen).catch(fail), 300);
}

const empty = (name: string): Pad => ({
  name, entries: 0, last_write_at: "", expires_at: null, ttl_seconds: null, max_entries: null, archived: false, archived_at: null,
});

/** The pads to list: the engine's, plus the inbox and the current pad
 *  when they hold nothing yet (the engine lists only pads with entries). */
export function listedPads(pads: readonly Pad[], current: string): Pad[] {
  const names = new Set(pads.map((p) => p.name));
  const extra = [...new Set([INBOX, current])].filter((n) => !names.has(n)).map(empty);
  // By name, so the list holds still under the cursor while agents write;
  // the inbox first: it is where the person's questions wait.
  const all = [...pads, ...extra].sort((a, b) => a.name.localeCompare(b.name));
  return [...all.filter((p) => p.name === INBOX), ...all.filter((p) => p.name !== INBOX)];
}

/** "expires in 2h if idle" — rounded up, so never sooner than said. */
export function expiryLabel(p: Pad, now = Date.now()): string | null {
  return p.expires_at ? `expires in ${until(p.expires_at, now)} if idle` : null;
}

export function drawPads(screen: Screen): void {
  const onPad = screen.view === "feed" || screen.view === "tasks";
  drawArchived(screen);
  $("pads").replaceChildren(
    ...listedPads(screen.pads, screen.pad).map((p) => {
      const b = el("button", "side-item pad");
      b.dataset.pad = p.name;
      b.classList.toggle("active", p.name === screen.pad && onPad);
      b.append(el("span", "pad-name", p.name), el("span", "count", String(p.entries)));
      const expiry = expiryLabel(p);
      b.title = expiry ?? "never expires";
      if (expiry) b.append(el("span", "expiry", expiry));
      b.addEventListener("click", () => open(p.name));
      return b;
    }),
  );
}

/** The Archived section under the pads: each with when it was archived
 *  and Restore. Hidden while there are none. */
function drawArchived(screen: Screen): void {
  const box = $("archived");
  box.hidden = archived.length === 0;
  const summary = el("summary", "", `Archived (${archived.length})`);
  summary.title = "Pads archived after their idle time: nothing in them is deleted until the retention period ends";
  const items = archived.map((p) => {
    const row = el("div", "side-item archived-pad");
    row.dataset.pad = p.name;
    row.append(el("span", "pad-name", p.name), el("span", "count", String(p.entries)));
    row.append(el("span", "expiry", `archived ${p.archived_at ? ago(p.archived_at) : ""}`));
    const read = el("button", "read", "Read");
    read.title = `Read ${p.name} as it is, without restoring it`;
    read.addEventListener("click", () => void showExport(p.name, `${p.name} (archived, read-only)`).catch(fail));
    const restore = el("button", "restore", "Restore");
    restore.title = `Bring ${p.name} back to the pad list with everything in it`;
    restore.addEventListener("click", () => void restorePad(screen, p.name).catch(fail));
    row.append(read, restore);
    return row;
  });
  const wasOpen = (box as HTMLDetailsElement).open;
  box.replaceChildren(summary, ...items);
  (box as HTMLDetailsElement).open = wasOpen;
}
