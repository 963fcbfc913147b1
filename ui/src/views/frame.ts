// What every view shares around the list: the title, which sidebar and
// toolbar buttons are lit, the pad's actions (on only while a pad is on
// screen), the Needs eyes count, the pad's banner, the filters, and which
// pane shows — the list or the activity pane (Activity, Agents).

import { drawBanner } from "../components/Banner";
import { $ } from "../dom";
import { padLabel, type Screen } from "../state";

/** What a view shows under its title: the list, the plan's picture in the
 *  list's place (the tasks view), or the activity pane (Activity, Agents). */
export type Shows = "list" | "picture" | "pane";

/** Shows the list (or what `shows` says) under `title`, with the buttons
 *  lit for the view on screen. */
export function frame(screen: Screen, title: string | Node[], shows: Shows = "list"): void {
  const pane = shows === "pane";
  $("content").hidden = pane;
  const picture = shows === "picture";
  $("plan").hidden = !picture;
  $("feed").hidden = picture;
  $("content").classList.toggle("picture", picture);
  $("activity").hidden = !pane;
  // Search and filters act on lists, compose on a pad's feed: elsewhere
  // they take no room.
  $("toolbar").hidden = pane;
  drawFilters(pane);
  $("compose").hidden = screen.view !== "feed";
  const t = $("view-title");
  if (typeof title === "string") t.textContent = title;
  else t.replaceChildren(...title);
  for (const [id, view] of [
    ["inbox-btn", "inbox"],
    ["tasks-btn", "tasks"],
    ["trash-btn", "trash"],
    ["all-btn", "all"],
    ["activity-btn", "activity"],
    ["agents-btn", "agents"],
  ] as const) {
    $(id).classList.toggle("active", screen.view === view);
  }
  drawInboxCount(screen);
  drawActions(screen);
  drawBanner(screen);
}

export function drawInboxCount(screen: Screen): void {
  $("inbox-count").textContent = screen.feed.inbox.length ? String(screen.feed.inbox.length) : "";
}

/** The pad's actions name the pad they act on, and are off while the list
 *  shows something else (Needs eyes, search, activity): then there is no
 *  pad on screen to act on. */
export function drawActions(screen: Screen): void {
  const on = screen.padOnScreen;
  const pad = padLabel(screen.pad);
  const set = (id: string, label: string, title: string) => {
    const b = $<HTMLButtonElement>(id);
    b.textContent = label;
    b.disabled = !on;
    b.title = on ? title : "Open a pad first: this acts on the pad on screen";
  };
  set("tasks-btn", "Tasks", `Tasks of ${screen.pad} in dependency order (t)`);
  set("trash-btn", "Trash", `Deleted entries of ${screen.pad}, to restore (d)`);
  set("export-btn", `Export ${pad}`, `Export ${screen.pad} as markdown (x)`);
  set("clear-btn", `Clear ${pad}…`, `Move every entry of ${screen.pad} to the trash (Shift+C)`);
  set("pad-menu-btn", "⋯", `${screen.pad}'s actions: export, clear`);
  const ta = $<HTMLTextAreaElement>("compose-text");
  ta.disabled = !on;
  $<HTMLButtonElement>("compose-save").disabled = !on;
  ta.placeholder = on
    ? `Write a note to ${screen.pad}… (n to focus, Ctrl+Enter to save, #words become tags, @agent hands it over)`
    : "Open a pad to write to it";
}

/** The filters opened by the person (the Filter button). */
let filtersOpen = false;

/** The fields that filter the list (kind, #tag, author, status). */
export const FILTER_IDS = ["f-kind", "f-tag", "f-author", "f-status"];

/** How many filters narrow the list now. */
function activeFilters(): number {
  return FILTER_IDS.filter((id) => ($(id) as HTMLInputElement).value.trim() !== "").length;
}

/** The Filter button says how many filters are on; the filters show while
 *  opened or while any is on (so nothing narrows the list unseen). */
export function drawFilters(pane = !$("activity").hidden): void {
  const n = activeFilters();
  const b = $("filter-btn");
  b.textContent = n ? `Filter · ${n}` : "Filter";
  b.classList.toggle("on", n > 0);
  const shown = !pane && (filtersOpen || n > 0);
  b.setAttribute("aria-expanded", String(shown));
  $("filters").hidden = !shown;
}

/** The Filter button: opens or closes the filters. */
export function toggleFilters(): void {
  filtersOpen = !filtersOpen;
  drawFilters();
  if (filtersOpen) $("f-kind").focus();
}
