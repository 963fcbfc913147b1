import { Heights } from "./virtual";

describe("row heights", () => {
  it("places rows by the running sum of their heights", () => {
    const h = new Heights([64, 64, 64]);
    expect([h.top(0), h.top(1), h.top(2), h.total]).toEqual([0, 64, 128, 192]);
    expect(h.set(1, 140)).toBe(76);
    expect([h.top(2), h.total]).toEqual([204, 268]);
    expect(h.set(1, 140)).toBe(0);
  });
  it("finds the row at a pixel", () => {
    const h = new Heights([40, 200, 40]);
    expect([h.at(0), h.at(39), h.at(40), h.at(239), h.at(240), h.at(5000)]).toEqual([0, 0, 1, 1, 2, 2]);
    expect(new Heights([]).at(10)).toBe(0);
  });
});
