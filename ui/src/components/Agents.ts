// The Agents view (w): who is working right now and on what — every author
// seen lately, connected or writing, with the task it holds, the question it
// waits on, its last note and (Agent Zero's plugin) the chats it runs, with
// Pause, Resume and Stop — and the agents the person can hand work to over
// A2A (register, remove; `@name` in the quick box sends them a note).

import { agents, entries } from "../services";
import { authorChip } from "../authors";
import { type Chat, chatLabel, chatsOf, controlParams, controlsFor } from "../chats";
import { openConnect } from "./Connect";
import { $, el, fail, say } from "../dom";
import type { AgentAddParams, AgentInfo, AgentListResult, Brief, SeenAuthor } from "../protocol";
import type { Screen } from "../state";
import { ago } from "../time";

let timer = 0;
let go: { pad: (name: string) => void; entry: (pad: string, id: string) => void } = {
  pad: () => undefined,
  entry: () => undefined,
};

/** Where clicks on a pad or an entry lead (the feed). */
export function onAgentsOpen(pad: (name: string) => void, entry: (pad: string, id: string) => void): void {
  go = { pad, entry };
}

/** Draws the view into `box`, and again every 3 s while it is shown. */
export async function renderAgents(box: HTMLElement, screen: Screen, shown: () => boolean): Promise<void> {
  clearInterval(timer);
  const refresh = async () => {
    const r = await agents.list({});
    draw(box, screen, r, await chats(r.seen));
  };
  await refresh();
  timer = window.setInterval(() => {
    if (shown()) void refresh().catch(fail);
    else clearInterval(timer);
  }, 3000);
}

/** Authors looked at for chats: the most recently seen (one call each). */
const CHAT_AUTHORS = 8;

/** The chats each recently seen author runs (Agent Zero's plugin keeps a
 *  status note per chat), from its notes of the last day. */
async function chats(seen: SeenAuthor[]): Promise<Map<string, Chat[]>> {
  const since = new Date(Date.now() - 86_400_000).toISOString();
  const by = new Map<string, Chat[]>();
  await Promise.all(seen.slice(0, CHAT_AUTHORS).map(async (s) => {
    const r = await entries.list({ author: s.author, since, limit: 200 });
    const found = chatsOf(r.entries);
    if (found.length) by.set(s.author, found);
  }));
  return by;
}

function draw(box: HTMLElement, screen: Screen, r: AgentListResult, running: Map<string, Chat[]> = new Map()): void {
  // Typing in the form survives a refresh: only the lists are redrawn.
  let form = box.querySelector<HTMLFormElement>("#agent-add");
  if (!form) {
    box.replaceChildren();
    box.append(el("div", "act-box wide", ""), el("div", "act-box wide", ""));
    form = addForm(screen);
    box.append(form);
  }
  const [seenBox, agentsBox] = [...box.querySelectorAll<HTMLElement>(".act-box")];
  seenBox.id = "roster";
  seenBox.replaceChildren(el("h3", "", "Working now"));
  if (!r.seen.length) seenBox.append(el("p", "hint", "nobody seen in the last day"));
  for (const s of r.seen) seenBox.append(seenRow(s, screen, running.get(s.author) ?? []));
  agentsBox.id = "agents-registered";
  agentsBox.replaceChildren(el("h3", "", "Agents you can hand work to"));
  const connect = el("button", "", "Connect Agent Zero…");
  connect.id = "agents-connect";
  connect.addEventListener("click", openConnect);
  agentsBox.append(el("p", "hint", "Agent Zero: its plugin puts the pad in its loop and takes notes addressed to @agent-zero. Any MCP client: `pad mcp` (the empty pad shows the entry). Others that serve A2A: register them below."), connect);
  if (!r.agents.length) {
    agentsBox.append(el("p", "hint", "None yet. Register one below — Agent Zero: Settings → MCP/A2A → A2A server gives its URL — then start a note with @its-name."));
  }
  for (const a of r.agents) agentsBox.append(agentRow(a, screen));
}

function brief(label: string, b: Brief, cls: string): HTMLElement {
  const line = el("div", `roster-line ${cls}`);
  const link = el("button", "link", b.content.split("\n")[0].slice(0, 120));
  link.title = `${b.pad} · ${ago(b.at)}`;
  link.addEventListener("click", () => go.entry(b.pad, b.id));
  line.append(el("span", "roster-label", label), link);
  return line;
}

function chatRow(c: Chat): HTMLElement {
  const line = el("div", `roster-line chat ${c.state}`);
  line.dataset.chat = c.chat;
  line.dataset.state = c.state;
  const link = el("button", "link", c.title ? `“${c.title.slice(0, 60)}”` : "its chat");
  link.title = `the chat's thread in ${c.status.pad} · ${ago(c.at)}`;
  link.addEventListener("click", () => go.entry(c.status.pad, c.root));
  line.append(el("span", "roster-label", "chat"), link, el("span", "chat-state", chatLabel(c).slice(0, 140)));
  for (const control of controlsFor(c.state)) {
    const b = el("button", control === "stop" ? "danger" : "", control[0].toUpperCase() + control.slice(1));
    b.dataset.control = control;
    b.title = control === "stop" ? "Halt this chat at its next step" : control === "pause" ? "Pause this chat at its next step" : "Let this chat go on";
    b.addEventListener("click", () => {
      b.disabled = true;
      void entries.add(controlParams(c, control))
        .then(() => say(`asked ${c.status.author} to ${control}`))
        .catch(fail);
    });
    line.append(b);
  }
  return line;
}

function seenRow(s: SeenAuthor, screen: Screen, running: Chat[] = []): HTMLElement {
  const row = el("div", "roster-row");
  row.dataset.author = s.author;
  const head = el("div", "roster-head");
  head.append(authorChip(s.author, screen.settings.author));
  const here = el("span", s.connected > 0 ? "presence on" : "presence", s.connected > 0 ? "connected" : s.last_seen ? `seen ${ago(s.last_seen)}` : "not seen");
  head.append(here);
  if (s.registered) head.append(el("span", "tag", "A2A"));
  if (s.pad) {
    const pad = el("button", "pad-chip", s.pad);
    pad.title = `last wrote in ${s.pad}`;
    pad.addEventListener("click", () => go.pad(s.pad ?? ""));
    head.append(pad);
  }
  row.append(head);
  for (const c of running) row.append(chatRow(c));
  for (const t of s.claimed) row.append(brief("running", t, "doing"));
  for (const q of s.open_questions) row.append(brief("asks", q, "asks"));
  if (s.last_note && !s.claimed.length && !s.open_questions.length) row.append(brief("last", s.last_note, "last"));
  return row;
}

function agentRow(a: AgentInfo, screen: Screen): HTMLElement {
  const row = el("div", "roster-row");
  row.dataset.agent = a.name;
  const head = el("div", "roster-head");
  head.append(authorChip(a.name, screen.settings.author));
  const reach = a.reachable === false ? `unreachable: ${a.error ?? ""}` : a.reachable ? "reachable" : "not tried";
  head.append(el("span", a.reachable === false ? "presence off" : "presence on", reach));
  if (a.active) head.append(el("span", "tag", `${a.active} active`));
  const remove = el("button", "", "Remove");
  remove.title = `Forget ${a.name} (its unfinished deliveries are dropped)`;
  remove.addEventListener("click", () => {
    void agents.remove({ name: a.name }).then(() => {
      say(`removed ${a.name}`);
      row.remove();
    }).catch(fail);
  });
  head.append(remove);
  row.append(head);
  if (a.card) {
    row.append(el("div", "roster-line", `${a.card.name}${a.card.description ? ` — ${a.card.description}` : ""}`));
    const skills = a.card.skills.map((k) => k.name).filter(Boolean);
    if (skills.length) row.append(el("div", "roster-line hint", `skills: ${skills.join(", ")}`));
  }
  row.append(el("div", "roster-line hint", `${a.url} · hand it work: @${a.name} … in the quick box`));
  return row;
}

function addForm(screen: Screen): HTMLFormElement {
  const form = el("form", "act-box wide");
  form.id = "agent-add";
  const name = el("input");
  name.id = "agent-name";
  name.placeholder = "name, e.g. agent-zero";
  const url = el("input");
  url.id = "agent-url";
  url.placeholder = "A2A URL, e.g. http://127.0.0.1:5000/a2a/t-TOKEN";
  const token = el("input");
  token.id = "agent-token";
  token.type = "password";
  token.placeholder = "bearer token (only if the URL has none)";
  const add = el("button", "", "Register");
  add.type = "submit";
  form.append(el("h3", "", "Register an agent"), name, url, token, add);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    add.disabled = true;
    const params: AgentAddParams = { name: name.value.trim(), url: url.value.trim() };
    if (token.value.trim()) params.token = token.value.trim();
    void agents.add(params)
      .then(async (r) => {
        say(`registered ${r.agent.name}${r.agent.card ? ` (${r.agent.card.name})` : ""}`);
        name.value = url.value = token.value = "";
        draw($("activity"), screen, await agents.list({}));
      })
      .catch(fail)
      .finally(() => {
        add.disabled = false;
      });
  });
  return form;
}
