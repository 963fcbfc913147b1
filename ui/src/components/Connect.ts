// "Connect Agent Zero": one flow for Agent Zero on this machine or in Docker.
// It installs the plugin (the shell's `connect_agent_zero`) — or saves it as
// a ZIP for Agent Zero's own Plugins dialog (Install → ZIP) — for Docker also
// serves this app's engine on the docker0 gateway with a token written into
// the plugin's settings, then says "waiting for Agent Zero's first call…"
// until Agent Zero is seen (its plugin says hello as agent-zero).

import { connectAgentZero } from "../api";
import { agents } from "../services";
import { seenSince } from "../chats";
import { $, el } from "../dom";

const AUTHOR = "agent-zero";
let waiting = 0;

const form = () => $<HTMLFormElement>("connect-form");
const how = () => (form().elements.namedItem("how") as RadioNodeList).value;
const zip = () => how() === "zip";
const docker = () => how() === "docker" || zip();

function showHow(): void {
  $("connect-address-row").hidden = !docker();
  $("connect-dir-label").textContent = zip()
    ? "Save the ZIP as"
    : docker()
      ? "Its usr/ folder (the volume mounted at /a0/usr)"
      : "Its folder (holding agent.py)";
  $<HTMLInputElement>("connect-dir").placeholder = zip() ? "~/scratchpad.zip" : docker() ? "~/a0-data/usr" : "~/agent-zero";
  // Set only when it changes: "change" fires as a field loses focus to a
  // click on this very button, and replacing its text mid-click loses the click.
  const label = zip() ? "Save the ZIP" : "Connect";
  if ($("connect-go").textContent !== label) $("connect-go").textContent = label;
}

export function openConnect(): void {
  $("connect-error").textContent = "";
  $("connect-result").textContent = "";
  showHow();
  $<HTMLDialogElement>("connect-dialog").showModal();
}

async function connect(): Promise<void> {
  const go = $<HTMLButtonElement>("connect-go");
  const result = $("connect-result");
  $("connect-error").textContent = "";
  go.disabled = true;
  const since = new Date().toISOString();
  try {
    const dir = $<HTMLInputElement>("connect-dir").value.trim();
    const address = docker() ? $<HTMLInputElement>("connect-address").value.trim() : null;
    const r = await connectAgentZero(dir, address, zip());
    const a2aUrl = $<HTMLInputElement>("connect-a2a").value.trim();
    let a2a = "";
    if (a2aUrl) {
      const added = await agents.add({ name: AUTHOR, url: a2aUrl, replace: true });
      a2a = `Registered its A2A server (${added.agent.url}): notes to @${AUTHOR} go there. `;
      $<HTMLInputElement>("connect-a2a").value = "";
    }
    result.replaceChildren(
      el("span", "", r.zip ? `Saved the plugin as ${r.plugin} (private: it holds the token). ` : `Installed the plugin in ${r.plugin}. `),
      el("span", "", r.url ? `Its settings reach this engine at ${r.url} with a token made for it. ` : ""),
      el("span", "", a2a),
      r.zip
        ? el("strong", "", "In Agent Zero: Settings → Plugins → Install → ZIP, choose it, then restart Agent Zero; delete the ZIP once installed. ")
        : el("strong", "", `Restart Agent Zero (${r.restart}). `),
    );
    const wait = el("span", "connect-wait", "Waiting for Agent Zero's first call…");
    wait.id = "connect-waiting";
    result.append(wait);
    clearInterval(waiting);
    waiting = window.setInterval(() => {
      void agents.list({ seen_within: 3600 }).then((list) => {
        if (seenSince(list, AUTHOR, since)) {
          clearInterval(waiting);
          wait.textContent = "Agent Zero called: it is connected. Hand it work with @agent-zero in the quick box.";
          wait.classList.add("done");
        }
      }).catch(() => undefined);
    }, 1000);
  } catch (e) {
    $("connect-error").textContent = String(e);
  } finally {
    go.disabled = false;
  }
}

export function wireConnect(): void {
  form().addEventListener("change", showHow);
  form().addEventListener("submit", (ev) => {
    if ((ev as SubmitEvent).submitter?.getAttribute("value") !== "go") {
      clearInterval(waiting);
      return;
    }
    ev.preventDefault();
    void connect();
  });
}
