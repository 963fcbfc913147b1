import { choiceClass, tone } from "./choices";

describe("choice tones", () => {
  it("tells approving, refusing and destroying apart", () => {
    expect(["approve", "yes", "Proceed", "ok, ship it"].map(tone)).toEqual(["go", "go", "go", "go"]);
    expect(["deny", "no", "Cancel", "not now"].map(tone)).toEqual(["stop", "stop", "stop", "stop"]);
    expect(["drop the table", "force push", "yes, delete it"].map(tone)).toEqual(["danger", "danger", "danger"]);
    expect(tone("eu-west-1")).toBe("");
  });

  it("names a button class per tone", () => {
    expect(choiceClass("approve")).toBe("choice choice-go");
    expect(choiceClass("deny")).toBe("choice choice-stop");
    expect(choiceClass("blue")).toBe("choice");
  });
});
