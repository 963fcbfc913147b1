import { chart, idle, stillDeleted } from "./activity";
import type { Change } from "./protocol";

describe("activity view helpers", () => {
  it("draws one bar per minute, scaled to the busiest", () => {
    const svg = chart([0, 2, 4, 1], 400, 100);
    const bars = [...svg.querySelectorAll("rect")];
    expect(bars).toHaveLength(4);
    const heights = bars.map((b) => Number(b.getAttribute("height")));
    expect(heights[2]).toBeGreaterThan(heights[1]);
    expect(heights[1]).toBeGreaterThan(heights[3]);
    expect(bars[0].getAttribute("class")).toBe("bar empty");
    expect(bars[2].querySelector("title")?.textContent).toBe("2 min ago: 4 entries");
  });

  it("says idle times in the largest unit", () => {
    expect([idle(5), idle(90), idle(7300), idle(200000)]).toEqual(["5s", "1m", "2h", "2d"]);
  });

  it("offers a deletion's Undo only while something it took is still in the trash", () => {
    const row = (what: string, id: string, at: string, change: number | null): Change => ({ at, by: "agent-x", what, id, pad: "p", change, preview: "" });
    const cleared = [row("clear", "a", "2026-11-26T10:00:00Z", 5), row("clear", "b", "2026-11-26T10:00:00Z", 5)];
    expect(stillDeleted(cleared, 5)).toBe(true);
    const oneBack = [row("restored", "a", "2026-11-26T10:01:00Z", null), ...cleared];
    expect(stillDeleted(oneBack, 5)).toBe(true);
    const allBack = [row("restored", "b", "2026-11-26T10:02:00Z", null), ...oneBack];
    expect(stillDeleted(allBack, 5)).toBe(false);
    // Brought back, then deleted again by a later change: that one is still undoable.
    expect(stillDeleted([row("delete", "a", "2026-11-26T10:03:00Z", 6), ...allBack], 6)).toBe(true);
  });
});
