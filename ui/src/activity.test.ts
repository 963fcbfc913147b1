import { chart, idle } from "./activity";

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
});
