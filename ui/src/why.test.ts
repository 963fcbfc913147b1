import { whyLines } from "./components/Why";
import type { HitExplain, QueryExplain } from "./protocol";

const query: QueryExplain = {
  reads_as: "question",
  words: [{ word: "staging", entries: 2, weight: 2.5 }, { word: "database", entries: 21, weight: 0.3 }],
  dropped_common: ["when", "did"],
  dropped_over_budget: [],
  newest_only: false,
  filter: ["pad = ops", "archived pads left out"],
  text: { asked: 40, found: 3, below_floor: 0 },
  meaning: { asked: 40, found: 12, below_floor: 4 },
  meaning_floor: 0.15,
  words_weight: 0.6,
  superseded_left_out: 1,
  copies_folded: 0,
};

describe("whyLines", () => {
  it("says each ranking's place, the words and their weights, and what the query became", () => {
    const hit: HitExplain = {
      words: [query.words[0]],
      text: { rank: 2, score: 3.1, scaled: 0.5 },
      meaning: { rank: 1, score: 0.61, scaled: 1 },
      neighbours: 0.2,
      author_named: 0.2,
      score: 1.05,
    };
    const lines = whyLines(hit, query);
    expect(lines[0]).toBe("score 1.050 · words: #2 (3.100, 0.50 of the best) · meaning: #1 (similarity 0.610) · +0.200: the query names its author · +0.200 from the note beside it");
    expect(lines[1]).toBe("holds staging (weight 2.50, in 2 notes)");
    expect(lines).toContain("common words dropped: when, did");
    expect(lines).toContain("narrowed by: pad = ops; archived pads left out");
    expect(lines).toContain("4 meaning matches under 0.15 left out");
    expect(lines).toContain("fused: 0.60 × words + 0.40 × meaning, each scaled 0–1 in its list");
    expect(lines).toContain("1 superseded notes left out");
  });

  it("names the related words list, its pieces and its share, when the engine ranked by it", () => {
    const three: QueryExplain = {
      ...query,
      words_weight: 0.35,
      sparse_weight: 0.4,
      sparse: { asked: 40, found: 9, below_floor: 0 },
      pieces: [{ word: "dog", entries: 3, weight: 1.9 }],
      pieces_left_out: ["the"],
      pieces_from: "the question encoded by the sparse model",
      meaning_scores: "cosine centred on the mean of the notes searched",
    };
    const hit: HitExplain = { words: [], sparse: { rank: 1, score: 2.5, scaled: 1 }, neighbours: 0, author_named: 0, score: 0.4 };
    const lines = whyLines(hit, three);
    expect(lines[0]).toBe("score 0.400 · related words: #1 (2.500, 1.00 of the best)");
    expect(lines).toContain("related words left out (in no note searched, or too common): the");
    expect(lines).toContain("related words ranked by dog (weight 1.90, in 3 notes)");
    expect(lines).toContain("related words: the question encoded by the sparse model");
    expect(lines).toContain("meaning scored by: cosine centred on the mean of the notes searched");
    expect(lines).toContain("fused: 0.35 × words + 0.25 × meaning + 0.40 × related words, each scaled 0–1 in its list");
  });

  it("says when a hit holds none of the ranked words", () => {
    const lines = whyLines({ words: [], meaning: { rank: 3, score: 0.4 }, neighbours: 0, author_named: 0, score: 0.4 }, query);
    expect(lines[0]).toBe("score 0.400 · meaning: #3 (similarity 0.400)");
    expect(lines[1]).toBe("holds none of the query's ranked words");
  });
});
