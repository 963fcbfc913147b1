import { foundBy, splitWeak, strength } from "./strength";
import { entry } from "./fixtures";

const hit = (score: number, found_by = ["semantic"]) => ({ entry: entry(), score, found_by });

describe("strength", () => {
  it("is strong, fair or weak beside the best hit, and says who found it", () => {
    expect(strength(0.9, 1)).toBe("strong");
    expect(strength(0.5, 1)).toBe("fair");
    expect(strength(0.2, 1)).toBe("weak");
    expect(foundBy({ found_by: ["text", "semantic"] })).toBe("words + meaning");
    expect(foundBy({ found_by: ["semantic"] })).toBe("meaning");
    expect(foundBy({ found_by: ["text"] })).toBe("words");
    expect(foundBy({ found_by: ["semantic", "sparse"] })).toBe("meaning + related words");
    expect(foundBy({ found_by: ["text", "semantic", "sparse"] })).toBe("words + meaning + related words");
  });

  it("folds the weak hits of a meaning search over a small pad away until asked", () => {
    const hits = [hit(0.62), hit(0.55), hit(0.2), hit(0.18), hit(0.17), hit(0.16)];
    const folded = splitWeak(hits, false);
    expect(folded.shown.map((h) => h.score)).toEqual([0.62, 0.55]);
    expect(folded.weak).toBe(4);
    expect(splitWeak(hits, true).shown).toHaveLength(6);
    expect(splitWeak([hit(1), hit(0.9)], false).weak).toBe(0);
  });
});
