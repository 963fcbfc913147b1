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

/** The pin, drawn (an emoji renders as a box without an emoji font). */
export function pinIcon(): SVGSVGElement {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("class", "pin");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "pinned");
  const path = document.createElementNS(ns, "path");
  path.setAttribute("d", "M5 1h6l-1 5 3 3H9l-1 6-1-6H3l3-3z");
  svg.append(path);
  return svg;
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
