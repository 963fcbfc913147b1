import { describe, expect, it } from "vitest";
import { count, searchTitle } from "./count";

describe("counts", () => {
  it("agrees with its number", () => {
    expect(count(1, "entry", "entries")).toBe("1 entry");
    expect(count(0, "entry", "entries")).toBe("0 entries");
    expect(count(2, "entry", "entries")).toBe("2 entries");
    expect(count(1, "entry", "entries", true)).toBe("1+ entries");
  });
  it("says a search's cap is a cap", () => {
    expect(searchTitle(100, 100, "x", "hybrid")).toBe("the best 100 matches for “x” in every pad (hybrid)");
    expect(searchTitle(1, 100, "x", "text")).toBe("1 match for “x” in every pad (text)");
    expect(searchTitle(0, 100, "x", "text")).toBe("nothing found for “x” in every pad (text)");
  });
});
