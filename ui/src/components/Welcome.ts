// What an empty pad shows: how to write from anywhere (the hotkey), how to
// connect an agent (Agent Zero's Connect flow; the MCP entry, with a copy
// button, for others), and how an agent's question will look when it arrives.

import { el } from "../dom";
import type { Screen } from "../state";
import { choiceClass } from "../choices";
import { openConnect } from "./Connect";
import { copy } from "./Dialogs";

/** The MCP servers entry for Agent Zero (or any stdio MCP client) on this
 *  machine: the `pad` CLI by its full path, so PATH does not matter, and
 *  the pad it was copied from as the agent's pad. */
export function mcpEntry(pad: string, padName: string): string {
  return JSON.stringify({ mcpServers: { scratchpad: { command: pad, args: ["mcp"], env: { PAD_AUTHOR: "agent-zero", PAD_PAD: padName } } } }, null, 2);
}

export function welcome(screen: Screen): HTMLElement {
  const box = el("div", "welcome");
  const p = (...parts: (string | HTMLElement)[]) => {
    const e = el("p");
    e.append(...parts);
    return e;
  };
  box.append(
    el("h2", "", `“${screen.pad}” is empty`),
    p("Jot a thought from anywhere: press ", el("kbd", "", screen.settings.hotkey), " — Enter saves to this pad, ", el("code", "", "#words"), " become tags. Or write above (", el("kbd", "", "n"), ")."),
    el("h3", "", "Connect an agent"),
  );
  const connect = el("button", "primary", "Connect Agent Zero…");
  connect.id = "welcome-connect";
  connect.type = "button";
  connect.addEventListener("click", openConnect);
  box.append(
    p(connect, " — on this machine or in Docker: installs its plugin, so the pad is in its loop."),
    p("Any other MCP client (or Agent Zero without the plugin, on this machine): paste this entry into its MCP servers:"),
  );
  const entry = el("pre", "mcp-entry", mcpEntry(screen.info.pad, screen.pad));
  entry.id = "welcome-mcp";
  const copyBtn = el("button", "", "Copy");
  copyBtn.id = "welcome-copy";
  copyBtn.type = "button";
  copyBtn.addEventListener("click", () => void copy(entry.textContent ?? ""));
  box.append(
    entry,
    copyBtn,
    p("Agents that serve A2A (Agent Zero's A2A server too): register them in the Agents view (", el("kbd", "", "w"), "), then start a note with @their-name to hand them work."),
    p("From a shell or a script: ", el("code", "", `${screen.info.pad} note -p ${screen.pad} "a note"`), " and ", el("code", "", `${screen.info.pad} --help`), "."),
    el("h3", "", "When an agent asks"),
    p("Before anything it cannot undo, an agent asks you (", el("code", "", "ask_person"), "). The question appears under Needs eyes and as a desktop notification whose buttons answer it:"),
  );
  const sample = el("div", "welcome-question");
  sample.append(el("div", "reply-head", "agent-zero asks · inbox"), el("div", "", "I am about to drop the staging database. OK to proceed?"));
  const choices = el("div", "choices");
  for (const c of ["approve", "deny"]) {
    const b = el("button", choiceClass(c), c);
    b.disabled = true;
    choices.append(b);
  }
  sample.append(choices);
  box.append(sample, p("Your answer goes straight back to the agent, which is waiting for it."));
  return box;
}
