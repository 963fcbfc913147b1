// A tag chip: clicking it filters the list to the tag. It only says so
// (a `tag-filter` event on the document); the views decide what that means
// for what is on screen (views/index.ts).

import { el } from "../dom";

export const TAG_FILTER = "tag-filter";

export function tagChip(t: string): HTMLElement {
  const chip = el("button", "tag", `#${t}`);
  chip.type = "button";
  chip.title = `Show only #${t}`;
  chip.addEventListener("click", (ev) => {
    ev.stopPropagation();
    document.dispatchEvent(new CustomEvent<string>(TAG_FILTER, { detail: t }));
  });
  return chip;
}
