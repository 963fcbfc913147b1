// The views drawn in the activity pane instead of the list: Activity (what
// has been happening, refreshed every 5 s while shown) and Agents (who is
// working on what; agents to hand work to).

import { renderActivity } from "../activity";
import { $, fail } from "../dom";
import type { Screen } from "../state";
import { renderAgents } from "../components/Agents";
import { drawPads } from "../components/PadList";
import { backToFeed, openPad } from "./feed";
import { frame } from "./frame";

let activityTimer = 0;

/** The Agents view; again to go back to the feed. */
export async function showAgents(screen: Screen): Promise<void> {
  clearInterval(activityTimer);
  if (screen.view === "agents") return backToFeed(screen);
  screen.setView("agents");
  $("activity").replaceChildren();
  frame(screen, "Agents", "pane");
  drawPads(screen);
  await renderAgents($("activity"), screen, () => screen.view === "agents");
}

/** The Activity view; again to go back to the feed. */
export async function showActivity(screen: Screen): Promise<void> {
  clearInterval(activityTimer);
  if (screen.view === "activity") return backToFeed(screen);
  screen.setView("activity");
  frame(screen, "Activity", "pane");
  drawPads(screen);
  const refresh = () =>
    renderActivity($("activity"), (pad) => {
      clearInterval(activityTimer);
      void openPad(screen, pad).catch(fail);
    });
  await refresh();
  activityTimer = window.setInterval(() => {
    if (screen.view === "activity") void refresh().catch(fail);
    else clearInterval(activityTimer);
  }, 5000);
}
