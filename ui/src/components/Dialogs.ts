// The dialogs: confirm, settings, export and the keyboard help.

import { setSettings } from "../api";
import { pads } from "../services";
import { $, say } from "../dom";
import type { Screen } from "../state";

export async function confirmAction(text: string, ok = "Delete"): Promise<boolean> {
  const d = $<HTMLDialogElement>("confirm");
  $("confirm-text").textContent = text;
  $("confirm-ok").textContent = ok;
  d.returnValue = "";
  d.showModal();
  return new Promise((resolve) => d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true }));
}

export async function exportPad(screen: Screen): Promise<void> {
  if (!screen.padOnScreen) return say("open a pad first: Export acts on the pad on screen", true);
  return showExport(screen.pad, `Export of ${screen.pad}`);
}

/** The pad as markdown, read-only, with Copy: an export, or an archived
 *  pad read without restoring it. */
export async function showExport(pad: string, title: string): Promise<void> {
  const r = await pads.export({ name: pad, format: "markdown" });
  $("export-title").textContent = title;
  ($("export-text") as HTMLTextAreaElement).value = r.text;
  $<HTMLDialogElement>("export-dialog").showModal();
}

const field = (n: string) => $<HTMLFormElement>("settings-form").elements.namedItem(n) as HTMLInputElement;

export function openSettings(screen: Screen): void {
  const s = screen.settings;
  field("hotkey").value = s.hotkey;
  field("author").value = s.author;
  field("notifications").checked = s.notifications;
  field("ttl_hours").value = s.default_ttl_seconds === null ? "" : String(s.default_ttl_seconds / 3600);
  field("metrics").value = s.metrics ?? "";
  field("model").value = s.model ?? "";
  field("agent_http").value = s.agent_http ?? "";
  $("settings-error").textContent = "";
  $<HTMLDialogElement>("settings-dialog").showModal();
}

export async function saveSettings(screen: Screen, ev: Event): Promise<void> {
  ev.preventDefault();
  const hours = field("ttl_hours").value.trim();
  try {
    const saved = await setSettings({
      ...screen.settings,
      hotkey: field("hotkey").value.trim(),
      author: field("author").value.trim().toLowerCase(),
      notifications: field("notifications").checked,
      default_ttl_seconds: hours === "" ? null : Math.max(1, Math.round(Number(hours) * 3600)),
      metrics: field("metrics").value.trim() || null,
      model: field("model").value || null,
      agent_http: field("agent_http").value.trim() || null,
    });
    screen.useSettings(saved);
    $<HTMLDialogElement>("settings-dialog").close();
    say("settings saved");
  } catch (e) {
    $("settings-error").textContent = String(e);
  }
}

export function wireDialogs(screen: Screen): void {
  $("settings-form").addEventListener("submit", (ev) => {
    if ((ev as SubmitEvent).submitter?.getAttribute("value") === "save") void saveSettings(screen, ev);
  });
  $("export-copy").addEventListener("click", () => void copy(($("export-text") as HTMLTextAreaElement).value));
}

export async function copy(text: string): Promise<void> {
  await navigator.clipboard.writeText(text);
  say("copied");
}
