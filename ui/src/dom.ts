// DOM helpers shared by the components. Text always goes in through
// textContent; only the markdown sanitizer produces HTML.

import { EngineError } from "./api";

export const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A line in the status bar. */
export function say(text: string, error = false): void {
  const s = $("status");
  s.textContent = text;
  s.classList.toggle("error", error);
}

export function fail(e: unknown): void {
  say(e instanceof EngineError ? e.message : String(e), true);
}
