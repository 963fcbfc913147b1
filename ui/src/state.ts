// The one store of the main window: what the person is looking at. main.ts
// makes one and hands it to the views and components that need it (no
// module holds it by import); they read it through its getters and change
// it only through its named methods, so every change to what is on screen
// is one call to find; the entries themselves live in the FeedStore
// (store.ts), kept in step with the engine's events, and what one view
// alone uses lives in that view (the feed's paging, the plan, the editor).

import { Deliveries } from "./deliveries";
import { FeedStore } from "./store";
import type { AppInfo, Entry, Pad, Settings } from "./types";

export type View = "feed" | "all" | "search" | "inbox" | "tasks" | "activity" | "trash" | "agents";

export class Screen {
  /** The entries of the view's pad (or all pads), applied event by event. */
  readonly feed = new FeedStore();
  /** Where notes handed to agents stand (`agent.deliveries`, `delivery` events). */
  readonly deliveries = new Deliveries();
  private _settings: Settings | null = null;
  private _info: AppInfo | null = null;
  private _pads: Pad[] = [];
  private _view: View = "feed";
  private _shown: Entry[] = [];
  private _selected: string | null = null;
  private _waiting = new Set<string>();
  private _handoffs = new Set<string>();

  /** The app's settings (the shell's file), read once at start. */
  get settings(): Readonly<Settings> {
    if (!this._settings) throw new Error("the settings are read before the app loaded them: call useSettings first");
    return this._settings;
  }

  /** Takes `settings` as the app's; the feed learns who the person is. */
  useSettings(settings: Settings): void {
    this._settings = settings;
    this.feed.me = settings.author;
  }

  /** The engine the app runs or attached to (`app_info`), read once at start. */
  get info(): AppInfo {
    if (!this._info) throw new Error("the app's info is read before the app loaded it: call useInfo first");
    return this._info;
  }

  useInfo(info: AppInfo): void {
    this._info = info;
  }

  /** The pads listed in the sidebar (not archived). */
  get pads(): readonly Pad[] {
    return this._pads;
  }

  setPads(pads: Pad[]): void {
    this._pads = pads;
  }

  get view(): View {
    return this._view;
  }

  setView(view: View): void {
    this._view = view;
  }

  /** The entries the list shows now, in order. */
  get shown(): readonly Entry[] {
    return this._shown;
  }

  /** What the list shows now: the selection is kept while it is among them. */
  setShown(entries: Entry[]): void {
    this._shown = entries;
    if (this._selected && !entries.some((e) => e.id === this._selected)) this._selected = null;
  }

  /** Takes `id` out of what is shown (restored from the trash) and selects the first left. */
  drop(id: string): void {
    this._shown = this._shown.filter((e) => e.id !== id);
    this._selected = this._shown[0]?.id ?? null;
  }

  /** The selected entry's id, if any. */
  get selected(): string | null {
    return this._selected;
  }

  setSelected(id: string | null): void {
    this._selected = id;
  }

  /** Questions an agent's `ask` is waiting on now (stats, then the
   *  `waiting` and `stopped_waiting` events). */
  get waiting(): ReadonlySet<string> {
    return this._waiting;
  }

  setWaiting(ids: Iterable<string>): void {
    this._waiting = new Set(ids);
  }

  /** An `ask` began (`waits`) or stopped waiting on the question `id`. */
  waitOn(id: string, waits: boolean): void {
    if (waits) this._waiting.add(id);
    else this._waiting.delete(id);
  }

  /** Notes the person handed to agents lately: their deliveries' news
   *  goes to the status line. */
  get handoffs(): ReadonlySet<string> {
    return this._handoffs;
  }

  handedOff(id: string): void {
    this._handoffs.add(id);
  }

  /** The pad the feed shows (saved in the settings). */
  get pad(): string {
    return this.settings.pad;
  }

  /** Whether the list shows one pad (its feed, tasks or trash): only then
   *  do the pad's actions (compose, export, clear, tasks, trash) apply. */
  get padOnScreen(): boolean {
    return this._view === "feed" || this._view === "tasks" || this._view === "trash";
  }

  /** The entry selected in the list, if it is shown. */
  get selectedEntry(): Entry | undefined {
    return this._shown.find((e) => e.id === this._selected);
  }
}

/** A pad's name for a button: shortened past 18 characters. */
export const padLabel = (name: string): string => (name.length > 18 ? `${name.slice(0, 17)}…` : name);

/** The pad that is always listed: where the person's notes and agents'
 *  questions go by default. */
export const INBOX = "inbox";
