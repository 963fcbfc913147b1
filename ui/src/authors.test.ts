import { authorChip, hue, initials } from "./authors";

describe("authors", () => {
  it("gives each name a stable hue outside the person's band", () => {
    expect(hue("agent-zero")).toBe(hue("Agent-Zero"));
    const hues = ["agent-0", "agent-1", "agent-2", "claude", "codex", "gemini"].map(hue);
    expect(new Set(hues).size).toBeGreaterThan(4);
    for (let i = 0; i < 500; i++) {
      const h = hue(`agent-${i}`);
      expect(h < 195 || h >= 225).toBe(true);
      expect(h).toBeLessThan(360);
    }
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
    expect(agent.style.getPropertyValue("--hue")).toBe(String(hue("agent-zero")));
  });
});
