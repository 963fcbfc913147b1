import { FeedStore, NO_FILTER, foldedUnder, matches, newestOpenQuestion, threaded } from "./store";
import { entry } from "./fixtures";
import type { Entry, PadEvent } from "./types";

const ev = (type: PadEvent["type"], e?: Entry, pad?: string): PadEvent => ({ subscription: 1, type, entry: e, pad: pad ?? e?.pad });

describe("FeedStore", () => {
  it("adds created entries of the shown pad at the top, once", () => {
    const s = new FeedStore();
    const old = entry();
    s.load([old], { ...NO_FILTER, pad: "p" });
    const fresh = entry();
    expect(s.apply(ev("created", fresh))).toEqual({ feed: true, pads: true, inbox: false });
    expect(s.apply(ev("created", fresh)).feed).toBe(false);
    expect(s.entries.map((e) => e.id)).toEqual([fresh.id, old.id]);
    expect(s.apply(ev("created", entry({ pad: "other" }))).feed).toBe(false);
    expect(s.entries).toHaveLength(2);
  });

  it("applies filters to live entries", () => {
    const s = new FeedStore();
    s.load([], { ...NO_FILTER, pad: "p", tag: "db", kind: "task" });
    expect(s.apply(ev("created", entry({ tags: ["db"], kind: "task" }))).feed).toBe(true);
    expect(s.apply(ev("created", entry({ tags: ["web"], kind: "task" }))).feed).toBe(false);
    expect(s.apply(ev("created", entry({ tags: ["db"] }))).feed).toBe(false);
    expect(matches(entry({ author: "x" }), { ...NO_FILTER, author: "y" })).toBe(false);
  });

  it("replaces updated entries and drops those that stop matching", () => {
    const s = new FeedStore();
    const e = entry({ status: "todo", kind: "task" });
    s.load([e], { ...NO_FILTER, pad: "p", status: "todo" });
    s.apply(ev("updated", { ...e, content: "changed", version: 2 }));
    expect(s.entries[0].content).toBe("changed");
    s.apply(ev("updated", { ...e, status: "done", version: 3 }));
    expect(s.entries).toHaveLength(0);
  });

  it("drops a note when a newer one supersedes it, and brings it back when that one goes", () => {
    const s = new FeedStore();
    const old = entry();
    s.load([old], { ...NO_FILTER, pad: "p" });
    const current = entry({ supersedes: old.id });
    s.apply(ev("created", current));
    expect(s.apply(ev("updated", { ...old, superseded_by: current.id })).feed).toBe(true);
    expect(s.entries.map((e) => e.id)).toEqual([current.id]);
    s.apply(ev("deleted", current));
    s.apply(ev("updated", old));
    expect(s.entries.map((e) => e.id)).toEqual([old.id]);
  });

  it("removes deleted entries, and everything unpinned on pad.clear", () => {
    const s = new FeedStore();
    const a = entry();
    const b = entry({ pinned: true });
    const c = entry();
    s.load([a, b, c], { ...NO_FILTER, pad: "p" });
    s.apply(ev("deleted", a));
    expect(s.entries.map((e) => e.id)).toEqual([c.id, b.id]);
    expect(s.apply(ev("deleted", undefined, "p")).feed).toBe(true);
    expect(s.entries.map((e) => e.id)).toEqual([b.id]);
  });

  it("keeps a needs-eyes inbox of others' entries", () => {
    const s = new FeedStore();
    s.me = "user";
    const theirs = entry({ tags: ["needs_eyes"] });
    const mine = entry({ tags: ["needs_eyes"], author: "user" });
    expect(s.apply(ev("needs_eyes", theirs)).inbox).toBe(true);
    expect(s.apply(ev("needs_eyes", mine)).inbox).toBe(false);
    expect(s.apply(ev("needs_eyes", theirs)).inbox).toBe(false);
    expect(s.inbox.map((e) => e.id)).toEqual([theirs.id]);
    s.apply(ev("updated", { ...theirs, tags: [], version: 2 }));
    expect(s.inbox).toHaveLength(0);
  });

  it("puts open questions at the top of Needs eyes, however many notes come after", () => {
    const s = new FeedStore();
    const question = entry({ kind: "question", tags: ["needs_eyes"], content: "$1,900/month: approve?" });
    s.apply(ev("needs_eyes", question));
    const later = Array.from({ length: 8 }, () => entry({ tags: ["needs_eyes"] }));
    for (const e of later) s.apply(ev("needs_eyes", e));
    expect(s.inbox[0].id).toBe(question.id);
    expect(s.inbox.slice(1).map((e) => e.id)).toEqual(later.map((e) => e.id).reverse());
    // Answered, it takes its place by time among the rest.
    s.apply(ev("updated", { ...question, answer: "1jkqzzzzzzzz", version: 2 }));
    expect(s.inbox[s.inbox.length - 1].id).toBe(question.id);
  });

  it("groups Needs eyes' notes by agent and pad, so a burst of alarms does not bury another note", () => {
    const s = new FeedStore();
    const ci = entry({ tags: ["needs_eyes"], author: "ci", pad: "builds", content: "CI failed on main" });
    s.apply(ev("needs_eyes", ci));
    const alarms = Array.from({ length: 8 }, () => entry({ tags: ["needs_eyes"], author: "monitor", pad: "ops" }));
    for (const e of alarms.slice(0, 7)) s.apply(ev("needs_eyes", e));
    const question = entry({ kind: "question", tags: ["needs_eyes"], author: "monitor", pad: "ops" });
    s.apply(ev("needs_eyes", question));
    s.apply(ev("needs_eyes", alarms[7]));
    // The question first; then the alarms together, newest first; the CI note stays a group of its own.
    expect(s.inbox.map((e) => e.id)).toEqual([question.id, ...alarms.map((e) => e.id).reverse(), ci.id]);
    // A newer CI note brings its group up, above the alarms.
    const again = entry({ tags: ["needs_eyes"], author: "ci", pad: "builds" });
    s.apply(ev("needs_eyes", again));
    expect(s.inbox.map((e) => e.id)).toEqual([question.id, again.id, ci.id, ...alarms.map((e) => e.id).reverse()]);
  });

  it("keeps what events bring while a pad's first page is loading", () => {
    const s = new FeedStore();
    const f = { ...NO_FILTER, pad: "p" };
    const old = entry();
    const edited = entry();
    s.expect(f);
    // Written (and edited) after the page was read, before it arrived.
    const fresh = entry();
    s.apply(ev("created", fresh));
    s.apply(ev("updated", { ...edited, content: "edited", version: 2 }));
    s.apply(ev("created", entry({ pad: "other" })));
    s.load([edited, old], f);
    expect(s.entries.map((e) => e.id)).toEqual([fresh.id, edited.id, old.id]);
    expect(s.entries[1].content).toBe("edited");
  });

  it("pages older entries in without repeats, newest first", () => {
    const s = new FeedStore();
    const [a, b, c] = [entry(), entry(), entry()];
    s.load([c, b], NO_FILTER);
    s.append([b, a]);
    expect(s.entries.map((e) => e.id)).toEqual([c.id, b.id, a.id]);
  });

  it("asks for a full reload when events were missed", () => {
    expect(new FeedStore().apply({ subscription: 1, type: "lagged", missed: 10 })).toEqual({ feed: true, pads: true, inbox: true });
  });
});

describe("FeedStore under a burst", () => {
  it("keeps 10,000 live entries arriving out of order in order", () => {
    const s = new FeedStore();
    s.load([], { ...NO_FILTER, pad: "p" });
    const all = Array.from({ length: 10_000 }, () => entry());
    // Out of order, as interleaved writers may deliver them.
    const shuffled = all.map((_, i) => all[(i * 7919) % all.length]);
    for (const e of shuffled) s.apply(ev("created", e));
    expect(s.entries).toHaveLength(10_000);
    expect(s.entries.map((e) => e.id)).toEqual(all.map((e) => e.id).reverse());
  });
});

describe("newestOpenQuestion", () => {
  it("offers the newest question by someone else that nobody answered", () => {
    const old = entry({ kind: "question", author: "agent-0" });
    const answered = entry({ kind: "question", author: "agent-1", answer: "1jkqxxxxxxxx" });
    const mine = entry({ kind: "question", author: "user" });
    const newest = entry({ kind: "question", author: "agent-2", choices: ["approve", "deny"] });
    const note = entry({ kind: "note", author: "agent-3" });
    expect(newestOpenQuestion([old, answered, newest, mine, note], "user")?.id).toBe(newest.id);
    expect(newestOpenQuestion([answered, mine, note], "user")).toBeNull();
  });
});

describe("threaded", () => {
  it("folds replies under the note they answer, opened in place oldest first at their depth; an open question stays a row", () => {
    const handoff = entry({ author: "user", content: "@agent-zero deploy the fix" });
    const sent = entry({ reply_to: handoff.id, content: "working on it" });
    const question = entry({ kind: "question", reply_to: handoff.id, content: "Which region?" });
    const other = entry({ content: "unrelated" });
    const orphan = entry({ reply_to: "1jkqnotlisted", content: "replies to an older page" });
    const feed = [orphan, other, question, sent, handoff];
    const ids = (es: { id: string }[]) => es.map((e) => e.id);

    const closed = threaded(feed, new Set());
    expect(ids(closed.rows)).toEqual([orphan.id, other.id, question.id, handoff.id]);
    expect(ids(closed.folded.get(handoff.id) ?? [])).toEqual([sent.id]);

    const answer = entry({ author: "user", reply_to: question.id, content: "eu-west" });
    const answered = { ...question, answer: answer.id };
    const done = entry({ kind: "result", reply_to: handoff.id, content: "deployed" });
    const later = [done, answer, orphan, other, answered, sent, handoff];
    const open = threaded(later, new Set([handoff.id]));
    expect(ids(open.rows)).toEqual([orphan.id, other.id, handoff.id, sent.id, answered.id, answer.id, done.id]);
    expect(open.depth).toEqual([0, 0, 0, 1, 1, 2, 1]);
    expect(foldedUnder(later, answer.id)).toBe(handoff.id);
    expect(foldedUnder(later, other.id)).toBe(null);
  });
});
