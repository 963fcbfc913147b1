// The quick-note box: shown by the global hotkey over whatever the person
// is doing. Enter saves to the current pad (#words become tags), Esc hides.

import { listen } from "@tauri-apps/api/event";
import { getSettings, hideQuick, rpc, EngineError } from "./api";
import { parseQuickNote } from "./tags";

const form = document.getElementById("quick-form") as HTMLFormElement;
const input = document.getElementById("quick-input") as HTMLInputElement;
const padLabel = document.getElementById("quick-pad") as HTMLElement;
const status = document.getElementById("quick-status") as HTMLElement;

async function ready(): Promise<void> {
  const s = await getSettings();
  padLabel.textContent = `→ ${s.pad}`;
  status.textContent = "";
  input.focus();
  input.select();
}

form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const text = input.value;
  if (!text.trim()) return;
  const { content, tags } = parseQuickNote(text);
  const s = await getSettings();
  try {
    await rpc("entry.add", { pad: s.pad, content, tags, author: s.author });
    input.value = "";
    status.textContent = "";
    await hideQuick();
  } catch (e) {
    status.textContent = e instanceof EngineError ? e.message : String(e);
  }
});

document.addEventListener("keydown", (ev) => {
  if (ev.key === "Escape") {
    ev.preventDefault();
    void hideQuick();
  }
});

void listen("quick-shown", () => void ready());
void listen("settings-changed", () => void ready());
window.addEventListener("focus", () => input.focus());
void ready();
