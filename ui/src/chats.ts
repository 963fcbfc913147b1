// Agent Zero's chats as its plugin tells them (clients/agent-zero): each
// chat keeps a *status note* in its pad thread, whose `meta.agent_zero`
// says its state and last step. The Agents view shows the live ones beside
// the author, with Pause, Resume and Stop — each a reply in the chat's
// thread carrying `meta.control`, which the plugin turns into Agent Zero's
// own pause and a halt at its next step.

import type { AddParams, AgentListResult, Control, Entry } from "./protocol";

export type ChatState = "working" | "waiting_for_you" | "paused" | "stopped" | "done" | "idle";

export type Chat = {
  /** The status note (what Pause/Resume/Stop reply to). */
  status: Entry;
  /** The note that began the chat's thread (what a click opens). */
  root: string;
  chat: string;
  /** What it was asked (the start of the message that began the chat). */
  title: string;
  state: ChatState;
  step: string;
  at: string;
};

const LIVE: ChatState[] = ["working", "waiting_for_you", "paused"];

/** The chats among `entries` (an author's recent notes), live ones first,
 *  newest first; ended ones only if nothing is live (the last one). */
export function chatsOf(entries: Entry[]): Chat[] {
  const chats: Chat[] = [];
  for (const e of entries) {
    const a = (e.meta as { agent_zero?: Record<string, unknown> } | null)?.agent_zero;
    if (!a || a.role !== "status" || !e.reply_to) continue;
    chats.push({
      status: e,
      root: e.reply_to,
      chat: String(a.chat ?? ""),
      title: String(a.title ?? ""),
      state: (String(a.state ?? "idle") as ChatState),
      step: String(a.step ?? ""),
      at: String(a.at ?? e.updated_at),
    });
  }
  chats.sort((x, y) => (x.at < y.at ? 1 : x.at > y.at ? -1 : 0));
  const live = chats.filter((c) => LIVE.includes(c.state));
  return live.length ? live : chats.slice(0, 1);
}

/** "working: code_execution_tool: running the tests", "waiting for you". */
export function chatLabel(c: Chat): string {
  const words: Record<ChatState, string> = {
    working: "working",
    waiting_for_you: "waiting for you",
    paused: "paused",
    stopped: "stopped",
    done: "done",
    idle: "idle",
  };
  return c.step && c.state !== "waiting_for_you" ? `${words[c.state]}: ${c.step}` : words[c.state];
}

/** The controls a chat in this state offers. */
export function controlsFor(state: ChatState): Control[] {
  if (state === "paused") return ["resume", "stop"];
  if (state === "working" || state === "waiting_for_you") return ["pause", "stop"];
  return [];
}

/** `entry.add` params of a control: a reply to the chat's status note. */
export function controlParams(c: Chat, control: Control): AddParams {
  return { pad: c.status.pad, reply_to: c.status.id, content: control, meta: { control } };
}

/** Whether `author` was seen at or after `since` — connected now, or a call
 *  since (the Connect flow's "waiting for Agent Zero's first call…"). */
export function seenSince(r: AgentListResult, author: string, since: string): boolean {
  return r.seen.some((s) => s.author === author && (s.connected > 0 || s.last_seen >= since));
}
