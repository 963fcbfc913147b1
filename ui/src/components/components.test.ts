// The components' pure parts: which pads are listed, expiry labels, how
// deep replies sit in a thread, the MCP entry the welcome pane offers, what
// a tag chip asks for, what a pad's banner says, a reply's title; what the
// Reply box answers on a task an agent asked the person about.

import { entry } from "../fixtures";
import type { Pad } from "../types";
import { expiryLabel, listedPads } from "./PadList";
import { depths } from "./Thread";
import { mcpEntry } from "./Welcome";
import { TAG_FILTER, tagChip } from "./Tag";
import { bannerText, noteTrashed } from "./Banner";
import { titleOf } from "../context";
import { Screen } from "../state";
import { answerOnPlan, drawReplyForm, replyTarget } from "./EntryDetail";

const pad = (name: string, over: Partial<Pad> = {}): Pad => ({
  name, entries: 1, last_write_at: "", expires_at: null, ttl_seconds: null, max_entries: null, archived: false, archived_at: null, ...over,
});

describe("PadList", () => {
  it("always lists the inbox, first, even when it is empty", () => {
    expect(listedPads([pad("proj-x")], "proj-x").map((p) => p.name)).toEqual(["inbox", "proj-x"]);
    expect(listedPads([pad("a"), pad("inbox")], "a").map((p) => p.name)).toEqual(["inbox", "a"]);
    expect(listedPads([], "inbox").map((p) => p.name)).toEqual(["inbox"]);
  });

  it("lists the pad being shown even before it holds anything", () => {
    const names = listedPads([pad("a")], "new-pad").map((p) => p.name);
    expect(names).toEqual(["inbox", "a", "new-pad"]);
  });

  it("rounds the time left up: 1 h 59 m left says 2h", () => {
    const now = Date.parse("2026-11-23T12:00:00Z");
    const p = pad("x", { expires_at: new Date(now + (119 * 60) * 1000).toISOString() });
    expect(expiryLabel(p, now)).toBe("expires in 2h if idle");
    expect(expiryLabel(pad("y"), now)).toBeNull();
  });
});

describe("Thread", () => {
  it("places each reply one deeper than its parent", () => {
    const a = entry({ reply_to: "root" });
    const b = entry({ reply_to: a.id });
    const c = entry({ reply_to: "root" });
    const d = depths("root", [a, b, c]);
    expect([d.get(a.id), d.get(b.id), d.get(c.id)]).toEqual([1, 2, 1]);
  });
});

describe("Welcome", () => {
  it("offers an MCP servers entry that runs pad mcp by its full path, on the pad it was copied from", () => {
    const parsed = JSON.parse(mcpEntry("/usr/bin/pad", "proj-x"));
    expect(parsed.mcpServers.scratchpad).toEqual({ command: "/usr/bin/pad", args: ["mcp"], env: { PAD_AUTHOR: "agent-zero", PAD_PAD: "proj-x" } });
  });
});

describe("Tag", () => {
  it("a clicked chip asks for its tag as a filter, without the row's click", () => {
    const asked: string[] = [];
    const listen = (ev: Event) => asked.push((ev as CustomEvent<string>).detail);
    document.addEventListener(TAG_FILTER, listen);
    const row = document.createElement("div");
    let rowClicked = false;
    row.addEventListener("click", () => (rowClicked = true));
    const chip = tagChip("deploy");
    row.append(chip);
    chip.click();
    document.removeEventListener(TAG_FILTER, listen);
    expect(chip.textContent).toBe("#deploy");
    expect(asked).toEqual(["deploy"]);
    expect(rowClicked).toBe(false);
  });
});

describe("Banner", () => {
  const trashed = (by: string, action: "delete" | "clear" | "expire", n: number, change: number) => ({ change, by, action, count: n, authors: { user: n } });

  it("says who took how many from the pad, gathering one author's calls", () => {
    expect(noteTrashed("ops", trashed("agent-x", "delete", 2, 7), "user")).toBe(true);
    expect(noteTrashed("ops", trashed("agent-x", "clear", 12, 8), "user")).toBe(true);
    expect(noteTrashed("ops", trashed("User", "clear", 5, 9), "user")).toBe(false);
    expect(noteTrashed("ops", trashed("engine", "expire", 5, 10), "user")).toBe(false);
    expect(bannerText({ by: "agent-x", cleared: true, count: 14, changes: [7, 8] })).toBe("agent-x cleared 14 entries of this pad");
    expect(bannerText({ by: "helper", cleared: false, count: 1, changes: [3] })).toBe("helper deleted 1 entry of this pad");
  });
});

describe("titleOf", () => {
  it("is the first line as plain text, cut at sixty characters", () => {
    expect(titleOf("**deploy** the fix (PR #4821)\nthen tell me")).toBe("deploy the fix (PR #4821)");
    const t = titleOf("word ".repeat(40));
    expect([...t]).toHaveLength(60);
    expect(t.endsWith("…")).toBe(true);
    expect(titleOf("  ")).toBe("(empty)");
  });
});

describe("the Reply box on a task an agent asked about", () => {
  const form = () => {
    document.body.innerHTML = `<form id="reply-form"><div id="reply-choices"></div><textarea id="reply-text"></textarea><button id="reply-send">Reply</button></form>`;
  };
  const task = entry({ kind: "task", status: "doing", content: "Write the release notes", author: "agent-planner" });
  const question = entry({ kind: "question", content: "Drop Python 3.8 from the notes?", author: "agent-writer", reply_to: task.id, choices: ["yes", "no"] });
  const screen = new Screen();
  afterEach(() => {
    screen.setView("feed");
    answerOnPlan(new Map());
  });

  it("answers the open question, with its choices, in the plan", () => {
    form();
    screen.setView("tasks");
    answerOnPlan(new Map([[task.id, question]]));
    expect(replyTarget(screen, task)).toBe(question);
    drawReplyForm(screen, task);
    const choices = document.getElementById("reply-choices")!;
    expect(choices.textContent).toContain("agent-writer asks: Drop Python 3.8 from the notes?");
    expect([...choices.querySelectorAll("button")].map((b) => b.textContent)).toEqual(["yes", "no"]);
    expect(document.getElementById("reply-send")!.textContent).toBe("Answer");
    expect((document.getElementById("reply-text") as HTMLTextAreaElement).placeholder).toMatch(/^Answer agent-writer/);
  });

  it("replies to the task itself when nothing is asked, or away from the plan", () => {
    form();
    screen.setView("tasks");
    answerOnPlan(new Map([[question.id, question]]));
    expect(replyTarget(screen, task)).toBe(task);
    drawReplyForm(screen, task);
    expect(document.getElementById("reply-choices")!.children).toHaveLength(0);
    expect(document.getElementById("reply-send")!.textContent).toBe("Reply");
    screen.setView("feed");
    answerOnPlan(new Map([[task.id, question]]));
    expect(replyTarget(screen, task)).toBe(task);
  });
});
