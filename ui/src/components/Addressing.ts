// Addressing a note as it is typed, wherever a note is written (compose,
// the quick box): a "→ agent-zero" chip saying who the note will be handed
// to before it is saved, and the known names completing an "@ag…" being
// typed (Tab or a click takes the first).

import { el } from "../dom";
import { complete, completions, knownNames, typingName } from "../handoff";
import { parseQuickNote } from "../tags";

type Field = HTMLInputElement | HTMLTextAreaElement;

/** The known names, asked for when a field gains focus (not per key). */
let known: string[] = [];

/** Says who `text` is addressed to in `chip` ("→ agent-zero"), or nothing. */
export function drawAddressed(chip: HTMLElement, text: string): void {
  const { to } = parseQuickNote(text);
  chip.textContent = to.length ? `→ ${to.join(", ")}` : "";
  chip.title = to.length ? `Saving hands this note to ${to.join(", ")}` : "";
}

/** Wires a field: its chip and its completions; `me` is the person. */
export function wireAddressing(field: Field, chip: HTMLElement, suggest: HTMLElement, me: () => string): void {
  const names = (): string[] => {
    const at = typingName(field.value, field.selectionStart ?? field.value.length);
    return at ? completions(at.prefix, known) : [];
  };
  const take = (name: string) => {
    const at = typingName(field.value, field.selectionStart ?? field.value.length);
    if (!at) return;
    const done = complete(field.value, at, name);
    field.value = done.text;
    field.setSelectionRange(done.caret, done.caret);
    field.focus();
    draw();
  };
  const draw = () => {
    drawAddressed(chip, field.value);
    const list = names();
    suggest.replaceChildren(
      ...list.map((n, i) => {
        const b = el("button", "suggestion", `@${n}`);
        b.type = "button";
        b.title = i === 0 ? "Tab completes it" : "";
        b.addEventListener("mousedown", (ev) => ev.preventDefault());
        b.addEventListener("click", () => take(n));
        return b;
      }),
    );
    suggest.hidden = list.length === 0;
  };
  field.addEventListener("focus", () => {
    void knownNames(me())
      .then((k) => {
        known = k;
        draw();
      })
      .catch(() => undefined);
  });
  field.addEventListener("input", draw);
  field.addEventListener("keydown", (ev) => {
    const e = ev as KeyboardEvent;
    if (e.key !== "Tab" || e.shiftKey) return;
    const first = names()[0];
    if (!first) return;
    e.preventDefault();
    e.stopPropagation();
    take(first);
  });
}
