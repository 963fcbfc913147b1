// The one door to the engine: the shell's `rpc` command and its
// `pad-event` channel (ARCHITECTURE.md, the `src-tauri/` row).

import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type { Method, Params, Results } from "./protocol";
import type { AppInfo, PadEvent, RpcError, Settings } from "./types";

export class EngineError extends Error {
  constructor(public code: number, message: string, public data?: unknown) {
    super(message);
  }
}

/** What `rpc` takes after the method: its params, which may be left out
 *  when every field of them may. */
type Args<M extends Method> = {} extends Params[M] ? [params?: Params[M]] : [params: Params[M]];

/** Calls `method` with its params and gives its result, each the method's
 *  own type (protocol.ts's `Params` and `Results`, generated from the
 *  engine's). The UI calls it through services.ts's named functions. */
export async function rpc<M extends Method>(method: M, ...args: Args<M>): Promise<Results[M]> {
  const params = args[0] ?? {};
  try {
    return await invoke<Results[M]>("rpc", { method, params });
  } catch (e) {
    const err = e as RpcError | string;
    if (typeof err === "object" && err && "code" in err) {
      throw new EngineError(err.code, err.message, err.data);
    }
    throw new EngineError(-32603, String(err));
  }
}

export function onEvent(cb: (ev: PadEvent) => void): Promise<UnlistenFn> {
  return listen<PadEvent>("pad-event", (e) => cb(e.payload));
}

export function onFocusEntry(cb: (entry: { id: string; pad: string }) => void): Promise<UnlistenFn> {
  return listen<{ id: string; pad: string }>("focus-entry", (e) => cb(e.payload));
}

/** A summary notification's Open: show Needs eyes. */
export function onShowNeedsEyes(cb: () => void): Promise<UnlistenFn> {
  return listen("show-needs-eyes", () => cb());
}

export const getSettings = () => invoke<Settings>("get_settings");
export const setSettings = (settings: Settings) => invoke<Settings>("set_settings", { settings });
export const appInfo = () => invoke<AppInfo>("app_info");
export const hideQuick = () => invoke<void>("hide_quick");
/** Shows the quick-note box (from the window: Ctrl+K, or its button). */
export const openQuick = () => invoke<void>("open_quick");
/** Opens a web or mail link in the person's browser. */
export const openLink = (url: string) => invoke<void>("open_link", { url });
/** Installs Agent Zero's plugin into `dir`; with `address`, for Docker: serves the engine there with a new token in the plugin's settings. */
export const connectAgentZero = (dir: string, address: string | null, zip = false) =>
  invoke<{ plugin: string; url: string | null; zip: boolean; restart: string }>("connect_agent_zero", { dir, address, zip });
