// The Trash view: the pad's deleted entries, restorable; live while shown
// (a deletion or restore elsewhere loads it again).

import { count } from "../count";
import type { Screen } from "../state";
import type { Entry } from "../types";
import { showEntries } from "../components/List";
import { loadTrash } from "../components/Trash";
import { backToFeed } from "./feed";
import { frame } from "./frame";

/** The pad's trash in the list; again to go back to the feed. */
export async function showTrash(screen: Screen): Promise<void> {
  if (screen.view === "trash") return backToFeed(screen);
  const shown = await loadTrash(screen.pad);
  screen.setView("trash");
  screen.setSelected(shown[0]?.id ?? null);
  draw(screen, shown);
}

function draw(screen: Screen, shown: Entry[]): void {
  frame(screen, `${screen.pad} · trash · ${count(shown.length, "deleted entry", "deleted entries")} (restorable for 30 days)`);
  showEntries(screen, shown);
}

let loading = false;
let stale = false;
/** The open Trash view again, after something of its pad was deleted or
 *  restored elsewhere (an agent, another window): the trash is live. A
 *  burst of events while it loads is one more load, not one each. */
export async function refreshTrash(screen: Screen): Promise<void> {
  if (loading) {
    stale = true;
    return;
  }
  loading = true;
  try {
    do {
      stale = false;
      const shown = await loadTrash(screen.pad);
      if (screen.view !== "trash") return;
      draw(screen, shown);
    } while (stale);
  } finally {
    loading = false;
  }
}
