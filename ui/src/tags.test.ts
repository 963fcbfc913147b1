import { fixPadName, parseQuickNote } from "./tags";

describe("parseQuickNote", () => {
  it("turns #words into tags and keeps the rest as content", () => {
    expect(parseQuickNote("ship it #release")).toEqual({ content: "ship it", tags: ["release"], to: [] });
    expect(parseQuickNote("#Deploy the #db-migration now")).toEqual({
      content: "the now",
      tags: ["deploy", "db-migration"],
      to: [],
    });
  });

  it("folds case, drops duplicates and keeps order", () => {
    expect(parseQuickNote("a #B #b #c").tags).toEqual(["b", "c"]);
  });

  it("leaves things that are not tags alone", () => {
    expect(parseQuickNote("issue#12 and C# and #")).toEqual({ content: "issue#12 and C# and #", tags: [], to: [] });
    expect(parseQuickNote("email a#b.com")).toEqual({ content: "email a#b.com", tags: [], to: [] });
    expect(parseQuickNote("#" + "x".repeat(33)).tags).toEqual([]);
  });

  it("accepts punctuation after a tag", () => {
    expect(parseQuickNote("done #ci, next #deploy.")).toEqual({ content: "done, next.", tags: ["ci", "deploy"], to: [] });
  });

  it("keeps the text when the note is only tags", () => {
    expect(parseQuickNote("#todo #later")).toEqual({ content: "#todo #later", tags: ["todo", "later"], to: [] });
  });

  it("takes at most ten tags, leaving the rest in the text", () => {
    const text = Array.from({ length: 12 }, (_, i) => `#t${i}`).join(" ") + " go";
    const q = parseQuickNote(text);
    expect(q.tags).toHaveLength(10);
    expect(q.content).toBe("#t10 #t11 go");
  });
});

describe("fixPadName", () => {
  it("offers the name the engine takes", () => {
    expect(fixPadName("Proj X!")).toBe("proj-x");
    expect(fixPadName("research/notes 2")).toBe("research-notes-2");
    expect(fixPadName("ok.name_1:a-b")).toBe("ok.name_1:a-b");
    expect(fixPadName("  ??  ")).toBe("");
    expect(fixPadName("x".repeat(80))).toHaveLength(64);
  });
});

describe("addressing a note", () => {
  it("takes the @names at the start as whom the note is for, and keeps the text", () => {
    expect(parseQuickNote("@agent-zero tidy the logs #ops")).toEqual({ content: "@agent-zero tidy the logs #ops", tags: ["ops"], to: ["agent-zero"] });
    expect(parseQuickNote("@Agent-Zero, @helper: both of you").to).toEqual(["agent-zero", "helper"]);
  });
  it("sends a handoff's text as typed: its #words become tags beside it, never cut", () => {
    const typed = "@agent-zero deploy the 5s timeout fix (PR #4821) to production";
    expect(parseQuickNote(typed)).toEqual({ content: typed, tags: ["4821"], to: ["agent-zero"] });
    // Not addressed: #words are tags and leave the text, as before.
    expect(parseQuickNote("deploy the fix #hotfix").content).toBe("deploy the fix");
  });

  it("leaves an @ further in the text alone", () => {
    expect(parseQuickNote("mail bob@example.com about @helper").to).toEqual([]);
    expect(parseQuickNote("plain note").to).toEqual([]);
  });
});
