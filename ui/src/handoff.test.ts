import { complete, completions, nearest, typingName, unknownNames, unknownWarning } from "./handoff";

const known = ["agent-zero", "helper", "agent-x"];

describe("handoff", () => {
  it("warns on a name nobody answers to, offering the nearest known one", () => {
    expect(unknownNames(["agent-zreo", "helper"], known)).toEqual(["agent-zreo"]);
    expect(nearest("agent-zreo", known)).toBe("agent-zero");
    expect(nearest("somebody-else", known)).toBe(null);
    expect(unknownWarning(["agent-zreo"], known)).toBe(
      "Nobody answers to @agent-zreo (did you mean @agent-zero?): the note would reach no one. Known: @agent-zero, @helper, @agent-x. Send again to save it anyway.",
    );
    expect(unknownWarning(["x"], [])).toMatch(/No agent is registered or has written yet/);
  });

  it("completes the name being typed while the note is still addressing", () => {
    expect(typingName("@ag", 3)).toEqual({ start: 1, prefix: "ag" });
    expect(typingName("@helper @agent-z", 16)).toEqual({ start: 9, prefix: "agent-z" });
    expect(typingName("deploy @ag", 10)).toBe(null);
    expect(completions("ag", known)).toEqual(["agent-zero", "agent-x"]);
    expect(complete("@ag", { start: 1, prefix: "ag" }, "agent-zero")).toEqual({ text: "@agent-zero ", caret: 12 });
    expect(complete("@ag deploy it", { start: 1, prefix: "ag" }, "agent-zero")).toEqual({ text: "@agent-zero deploy it", caret: 12 });
  });
});
