// The pad's actions beside the list that change pads: Clear (to the trash,
// with Undo) and New pad (its dialog shows the name the pad will get).

import { pads } from "../services";
import { count } from "../count";
import { $, fail, say } from "../dom";
import { padLabel, type Screen } from "../state";
import { fixPadName } from "../tags";
import { backToFeed, openPad } from "../views/feed";
import { confirmAction } from "./Dialogs";
import { loadPads } from "./PadList";
import { offerUndo } from "./Trash";

export async function clearPad(screen: Screen): Promise<void> {
  if (!screen.padOnScreen) return say("open a pad first: Clear acts on the pad on screen", true);
  const pad = screen.pad;
  const n = screen.pads.find((p) => p.name === pad)?.entries ?? screen.feed.entries.length;
  if (!(await confirmAction(`Clear pad “${pad}”: move ${n === 1 ? "its 1 entry" : `all ${n} entries`}, pinned ones too, to the trash?`, "Clear pad"))) {
    say("nothing deleted");
    return;
  }
  const r = await pads.clear({ name: pad });
  say(`deleted ${count(r.deleted, "entry", "entries")}`);
  offerUndo(`Cleared ${pad}: ${count(r.deleted, "entry", "entries")} in the trash.`, r.change ?? null, () => void backToFeed(screen).catch(fail));
  await backToFeed(screen);
}

/** The New pad dialog: as the person types, it shows the name the pad
 *  will get (lowercase, other characters as "-"), and creates that. */
export function newPad(): void {
  const dialog = $<HTMLDialogElement>("new-pad-dialog");
  const input = $<HTMLInputElement>("new-pad-name");
  input.value = "";
  drawNewPadHint();
  dialog.showModal();
  input.focus();
}

export function drawNewPadHint(): void {
  const raw = $<HTMLInputElement>("new-pad-name").value;
  const name = fixPadName(raw);
  const hint = $("new-pad-hint");
  const ok = $<HTMLButtonElement>("new-pad-ok");
  ok.disabled = name === "";
  if (!raw.trim()) hint.textContent = "a-z, 0-9, . _ : - (up to 64)";
  else if (name === raw.trim()) hint.textContent = `creates pad ${name}`;
  else if (name) hint.textContent = `pad names use a-z, 0-9, . _ : -: it will be “${name}”`;
  else hint.textContent = "nothing usable: use a-z, 0-9, . _ : -";
  ok.textContent = name ? `Create ${padLabel(name)}` : "Create";
}

export async function createPad(screen: Screen): Promise<void> {
  const name = fixPadName($<HTMLInputElement>("new-pad-name").value);
  if (!name) return;
  try {
    const r = await pads.configure({ name, ttl_seconds: screen.settings.default_ttl_seconds });
    await loadPads(screen);
    await openPad(screen, r.pad.name);
  } catch (e) {
    fail(e);
  }
}

/** The pad menu (⋯): Export and Clear, out of the toolbar's way; it
 *  closes on a choice, a click elsewhere, or Esc. */
export function wirePadMenu(): void {
  const btn = $("pad-menu-btn");
  const menu = $("pad-menu");
  const close = () => {
    menu.hidden = true;
    btn.setAttribute("aria-expanded", "false");
  };
  btn.addEventListener("click", (ev) => {
    ev.stopPropagation();
    const open = menu.hidden;
    menu.hidden = !open;
    btn.setAttribute("aria-expanded", String(open));
    if (open) menu.querySelector<HTMLElement>("button:not(:disabled)")?.focus();
  });
  // After the item's own handler (it bubbles here).
  menu.addEventListener("click", close);
  document.addEventListener("click", (ev) => {
    if (!menu.hidden && !menu.contains(ev.target as Node)) close();
  });
  menu.addEventListener("keydown", (ev) => {
    if (ev.key !== "Escape") return;
    ev.stopPropagation();
    close();
    btn.focus();
  });
}
