// "Connect Agent Zero": one flow for Agent Zero on this machine or in Docker.
// It installs the plugin (the shell's `connect_agent_zero`), for Docker also
// serves this app's engine on the docker0 gateway with a token written into
// the plugin's settings, then says "waiting for Agent Zero's first call…"
// until Agent Zero is seen (its plugin says hello as agent-zero).

import { connectAgentZero, rpc } from "../api";
import { seenSince } from "../chats";
import { $, el } from "../dom";

const AUTHOR = "agent-zero";
let waiting = 0;

const form = () => $<HTMLFormElement>("connect-form");
const docker = () => (form().elements.namedItem("how") as RadioNodeList).value === "docker";

function showHow(): void {
  $("connect-address-row").hidden = !docker();
  $("connect-dir-label").textContent = docker()
    ? "Its usr/ folder (the volume mounted at /a0/usr)"
    : "Its folder (holding agent.py)";
  $<HTMLInputElement>("connect-dir").placeholder = docker() ? "~/a0-data/usr" : "~/agent-zero";
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
    const r = await connectAgentZero(dir, address);
    const a2aUrl = $<HTMLInputElement>("connect-a2a").value.trim();
    let a2a = "";
    if (a2aUrl) {
      const added = await rpc("agent.add", { name: AUTHOR, url: a2aUrl, replace: true });
      a2a = `Registered its A2A server (${added.agent.url}): notes to @${AUTHOR} go there. `;
      $<HTMLInputElement>("connect-a2a").value = "";
    }
    result.replaceChildren(
      el("span", "", `Installed the plugin in ${r.plugin}. `),
      el("span", "", r.url ? `Its settings reach this engine at ${r.url} with a token made for it. ` : ""),
      el("span", "", a2a),
      el("strong", "", `Restart Agent Zero (${r.restart}). `),
    );
    const wait = el("span", "connect-wait", "Waiting for Agent Zero's first call…");
    wait.id = "connect-waiting";
    result.append(wait);
    clearInterval(waiting);
    waiting = window.setInterval(() => {
      void rpc("agent.list", { seen_within: 3600 }).then((list) => {
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
