// The views drawn in the activity pane instead of the list: Activity (what
// has been happening, refreshed every 5 s while shown) and Agents (who is
// working on what; agents to hand work to).

import { renderActivity } from "../activity";
import { $, fail } from "../dom";
import { app } from "../state";
import { renderAgents } from "../components/Agents";
import { drawPads } from "../components/PadList";
import { backToFeed, openPad } from "./feed";
import { frame } from "./frame";

let activityTimer = 0;

/** The Agents view; again to go back to the feed. */
export async function showAgents(): Promise<void> {
  clearInterval(activityTimer);
  if (app.view === "agents") return backToFeed();
  app.setView("agents");
  $("activity").replaceChildren();
  frame("Agents", "pane");
  drawPads();
  await renderAgents($("activity"), () => app.view === "agents");
}

/** The Activity view; again to go back to the feed. */
export async function showActivity(): Promise<void> {
  clearInterval(activityTimer);
  if (app.view === "activity") return backToFeed();
  app.setView("activity");
  frame("Activity", "pane");
  drawPads();
  const refresh = () =>
    renderActivity($("activity"), (pad) => {
      clearInterval(activityTimer);
      void openPad(pad).catch(fail);
    });
  await refresh();
  activityTimer = window.setInterval(() => {
    if (app.view === "activity") void refresh().catch(fail);
    else clearInterval(activityTimer);
  }, 5000);
}
