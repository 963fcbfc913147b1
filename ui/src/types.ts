// The wire types the UI uses. The engine's own are generated from its Rust
// types (protocol.ts, by src/typescript.rs); those below are the app
// shell's (src-tauri) or exist only in the UI.

export type { Action, Category, Entry, EventType, Kind, Pad, Status, ThreadResult, AskResult, Trashed, Version } from "./protocol";
import type { Delivery, Entry, EventType, Trashed } from "./protocol";

/** What the shell forwards on `pad-event`: an engine event, or `lagged`
 *  when the app fell behind and must reload. */
export interface PadEvent {
  subscription: number;
  type: EventType | "lagged" | "disconnected" | "reconnected";
  pad?: string;
  entry?: Entry;
  /** `trashed` events: who moved how many of whose entries to the trash. */
  trashed?: Trashed;
  /** `delivery` events: where a note handed to an agent stands. */
  delivery?: Delivery;
  missed?: number;
  /** `disconnected` (from the app's shell): the socket, and when it tries again. */
  socket?: string;
  retry_in_ms?: number;
}

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** The app's settings (src-tauri/src/settings.rs). */
export interface Settings {
  hotkey: string;
  author: string;
  notifications: boolean;
  default_ttl_seconds: number | null;
  pad: string;
  metrics: string | null;
  /** Serve the engine here for Agent Zero in Docker (e.g. 172.17.0.1:8765), or null. */
  agent_http: string | null;
  /** The meaning-search model when the app runs the engine (next start). */
  model: string | null;
}

/** What the shell says about itself (`app_info`). */
export interface AppInfo {
  version: string;
  in_process: boolean;
  socket: string;
  data_dir: string;
  /** The `pad` CLI agents run (`pad mcp`), by its full path when found. */
  pad: string;
}
