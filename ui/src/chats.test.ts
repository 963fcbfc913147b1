import { chatLabel, chatsOf, controlParams, controlsFor, seenSince } from "./chats";
import { entry } from "./fixtures";

const status = (id: string, state: string, at: string, step = "") =>
  entry({ id, pad: "agent-zero", author: "agent-zero", reply_to: `root-${id}`,
          meta: { agent_zero: { chat: `c-${id}`, role: "status", title: `job ${id}`, state, step, at } } });

describe("Agent Zero's chats", () => {
  it("shows the live chats, newest first, else the last one that ended", () => {
    const notes = [
      entry({ id: "plain" }),
      status("a", "done", "2026-11-25T10:00:00.000Z"),
      status("b", "working", "2026-11-25T10:01:00.000Z", "code_execution_tool: make test"),
      status("c", "paused", "2026-11-25T10:02:00.000Z"),
      entry({ id: "not-status", meta: { agent_zero: { chat: "x", role: "chat" } } }),
    ];
    expect(chatsOf(notes).map((c) => `${c.chat}:${c.state}`)).toEqual(["c-c:paused", "c-b:working"]);
    expect(chatsOf([status("a", "done", "t1"), status("d", "stopped", "t2")]).map((c) => c.chat)).toEqual(["c-d"]);
    expect(chatsOf([entry({})])).toEqual([]);
  });
  it("says the state in words and offers the controls that apply", () => {
    const [working] = chatsOf([status("b", "working", "t", "code_execution_tool: make test")]);
    expect(chatLabel(working)).toBe("working: code_execution_tool: make test");
    expect(chatLabel(chatsOf([status("w", "waiting_for_you", "t", "Drop it?")])[0])).toBe("waiting for you");
    expect(controlsFor("working")).toEqual(["pause", "stop"]);
    expect(controlsFor("paused")).toEqual(["resume", "stop"]);
    expect(controlsFor("done")).toEqual([]);
    expect(controlParams(working, "stop")).toEqual({ pad: "agent-zero", reply_to: "b", content: "stop", meta: { control: "stop" } });
    expect(working.root).toBe("root-b");
    expect(working.title).toBe("job b");
  });
});

describe("waiting for Agent Zero's first call", () => {
  const seen = (author: string, connected: number, last_seen: string) => ({
    author, connected, last_seen, registered: false, pad: null, last_note: null, claimed: [], open_questions: [],
  });
  it("is over when it is connected, or called since the flow began", () => {
    const since = "2026-11-25T10:00:00.000Z";
    expect(seenSince({ agents: [], seen: [seen("agent-zero", 0, "2026-11-25T09:59:59.000Z")] }, "agent-zero", since)).toBe(false);
    expect(seenSince({ agents: [], seen: [seen("agent-zero", 0, "2026-11-25T10:00:01.000Z")] }, "agent-zero", since)).toBe(true);
    expect(seenSince({ agents: [], seen: [seen("agent-zero", 1, "2026-11-25T09:00:00.000Z")] }, "agent-zero", since)).toBe(true);
    expect(seenSince({ agents: [], seen: [seen("helper", 1, "2026-11-25T10:00:05.000Z")] }, "agent-zero", since)).toBe(false);
  });
});
