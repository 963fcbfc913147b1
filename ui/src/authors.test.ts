import { COLOURS, authorChip, colour, initials } from "./authors";

describe("authors", () => {
  it("gives agents colours in order of first appearance, each kept", () => {
    localStorage.clear();
    const six = ["agent-0", "agent-1", "agent-2", "claude", "codex", "gemini"].map(colour);
    expect(new Set(six).size).toBe(6);
    expect(six).toEqual([0, 1, 2, 3, 4, 5]);
    expect(colour("Agent-1")).toBe(1);
    for (let i = 0; i < 30; i++) expect(colour(`more-${i}`)).toBeLessThan(COLOURS);
    expect(colour("claude")).toBe(3);
  });

  it("makes initials from names", () => {
    expect(initials("agent-zero")).toBe("AZ");
    expect(initials("claude")).toBe("CL");
    expect(initials("x")).toBe("X");
  });

  it("marks the person apart from agents", () => {
    const me = authorChip("user", "user");
    expect(me.querySelector(".avatar")?.textContent).toBe("you");
    expect(me.querySelector(".author")?.classList.contains("me")).toBe(true);
    const agent = authorChip("agent-zero", "user");
    expect(agent.querySelector(".avatar")?.textContent).toBe("AZ");
    expect(agent.classList.contains(`c${colour("agent-zero")}`)).toBe(true);
  });
});
