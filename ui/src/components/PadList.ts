// The pad list in the sidebar: every pad with its count and expiry. The
// inbox and the pad being shown are always listed, even while empty.

import { rpc } from "../api";
import { $, el, fail } from "../dom";
import { app, currentPad, INBOX } from "../state";
import { until } from "../time";
import type { Pad } from "../types";

let open: (name: string) => void = () => undefined;

/** What a click on a pad does (the feed opens it). */
export function onOpenPad(fn: (name: string) => void): void {
  open = fn;
}

export async function loadPads(): Promise<void> {
  app.pads = (await rpc<{ pads: Pad[] }>("pad.list")).pads;
  drawPads();
}

let timer = 0;
/** Reloads the list soon: a burst of writes costs one reload. */
export function refreshPadsSoon(): void {
  clearTimeout(timer);
  timer = window.setTimeout(() => void loadPads().catch(fail), 300);
}

const empty = (name: string): Pad => ({
  name, entries: 0, last_write_at: "", expires_at: null, ttl_seconds: null, max_entries: null, archived: false, archived_at: null,
});

/** The pads to list: the engine's, plus the inbox and the current pad
 *  when they hold nothing yet (the engine lists only pads with entries). */
export function listedPads(pads: Pad[], current: string): Pad[] {
  const names = new Set(pads.map((p) => p.name));
  const extra = [...new Set([INBOX, current])].filter((n) => !names.has(n)).map(empty);
  const all = [...pads, ...extra];
  // The inbox first: it is where the person's questions wait.
  return [...all.filter((p) => p.name === INBOX), ...all.filter((p) => p.name !== INBOX)];
}

/** "expires in 2h if idle" — rounded up, so never sooner than said. */
export function expiryLabel(p: Pad, now = Date.now()): string | null {
  return p.expires_at ? `expires in ${until(p.expires_at, now)} if idle` : null;
}

export function drawPads(): void {
  const onPad = app.view === "feed" || app.view === "tasks";
  $("pads").replaceChildren(
    ...listedPads(app.pads, currentPad()).map((p) => {
      const b = el("button", "side-item pad");
      b.dataset.pad = p.name;
      b.classList.toggle("active", p.name === currentPad() && onPad);
      b.append(el("span", "pad-name", p.name), el("span", "count", String(p.entries)));
      const expiry = expiryLabel(p);
      b.title = expiry ?? "never expires";
      if (expiry) b.append(el("span", "expiry", expiry));
      b.addEventListener("click", () => open(p.name));
      return b;
    }),
  );
}
