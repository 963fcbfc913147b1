// The one store of the main window: what the person is looking at. Every
// component reads and writes it here; the entries themselves live in the
// FeedStore (store.ts), kept in step with the engine's events.

import { Deliveries } from "./deliveries";
import { FeedStore } from "./store";
import type { AppInfo, Entry, Pad, Settings } from "./types";

export type View = "feed" | "all" | "search" | "inbox" | "tasks" | "activity" | "trash" | "agents";

export const app = {
  feed: new FeedStore(),
  settings: undefined as unknown as Settings,
  info: undefined as unknown as AppInfo,
  pads: [] as Pad[],
  view: "feed" as View,
  /** The entries the list shows now, in order. */
  shown: [] as Entry[],
  selected: null as string | null,
  /** Questions an agent's `ask` is waiting on now (stats, then the
   *  `waiting` and `stopped_waiting` events). */
  waiting: new Set<string>(),
  /** Notes the person handed to agents lately: their deliveries' news
   *  goes to the status line. */
  handoffs: new Set<string>(),
  /** Where notes handed to agents stand (`agent.deliveries`, `delivery` events). */
  deliveries: new Deliveries(),
};

/** The pad the feed shows (saved in the settings). */
export const currentPad = (): string => app.settings.pad;

/** Whether the list shows one pad (its feed, tasks or trash): only then
 *  do the pad's actions (compose, export, clear, tasks, trash) apply. */
export const padOnScreen = (): boolean => app.view === "feed" || app.view === "tasks" || app.view === "trash";

/** A pad's name for a button: shortened past 18 characters. */
export const padLabel = (name: string): string => (name.length > 18 ? `${name.slice(0, 17)}…` : name);

/** The entry selected in the list, if it is shown. */
export const selectedEntry = (): Entry | undefined => app.shown.find((e) => e.id === app.selected);

/** The pad that is always listed: where the person's notes and agents'
 *  questions go by default. */
export const INBOX = "inbox";
