// The views, one controller each (feed.ts: a pad's feed and All pads;
// search.ts; inbox.ts: Needs eyes; tasks.ts; trash.ts; panes.ts: Activity
// and Agents), and what applies to whichever is on screen: a redraw after
// events, the filters changing, a tag clicked.

import { $, fail } from "../dom";
import type { Screen } from "../state";
import { TAG_FILTER } from "../components/Tag";
import * as feed from "./feed";
import { drawFilters, drawInboxCount } from "./frame";
import * as inbox from "./inbox";
import { search } from "./search";
import { loadTasks } from "./tasks";
import { refreshTrash } from "./trash";

/** Redraws the view at the next frame, if it follows events (the feed, All
 *  pads, Needs eyes): a burst of events costs one redraw. */
let drawFrame = 0;
export function drawSoon(screen: Screen): void {
  if (drawFrame) return;
  drawFrame = requestAnimationFrame(() => {
    drawFrame = 0;
    if (screen.view === "feed" || screen.view === "all") feed.draw(screen);
    else if (screen.view === "inbox") inbox.draw(screen);
  });
}

/** Reads what is on screen afresh (the app fell behind the events, or the
 *  engine came back): the view stays what it is. */
export async function reload(screen: Screen): Promise<void> {
  await inbox.loadInbox(screen);
  switch (screen.view) {
    case "feed":
    case "all":
      return feed.loadFeed(screen);
    case "inbox":
      return inbox.draw(screen);
    case "tasks":
      return loadTasks(screen);
    case "trash":
      return refreshTrash(screen);
    default:
      // Search, Activity and Agents read afresh on their own.
      return drawInboxCount(screen);
  }
}

/** The filters changed: the search again, else the feed. */
export function refilter(screen: Screen): Promise<void> {
  return screen.view === "search" ? search(screen, ($("search") as HTMLInputElement).value) : feed.backToFeed(screen);
}

/** A tag chip clicked anywhere filters the list to its tag. */
export function wireTags(screen: Screen): void {
  document.addEventListener(TAG_FILTER, (ev) => {
    ($("f-tag") as HTMLInputElement).value = (ev as CustomEvent<string>).detail;
    drawFilters();
    void refilter(screen).catch(fail);
  });
}
