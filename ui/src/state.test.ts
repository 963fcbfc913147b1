import { entry } from "./fixtures";
import { Screen } from "./state";
import type { Settings } from "./types";

const settings: Settings = {
  hotkey: "Ctrl+Shift+Space",
  author: "maria",
  notifications: true,
  default_ttl_seconds: null,
  pad: "inbox",
  metrics: null,
  agent_http: null,
  model: null,
};

describe("the window's store", () => {
  it("keeps the selection while it is shown, and drops it when it is not", () => {
    const s = new Screen();
    const [a, b, c] = [entry(), entry(), entry()];
    s.setShown([a, b]);
    s.setSelected(b.id);
    s.setShown([b, c]);
    expect(s.selected).toBe(b.id);
    s.setShown([a, c]);
    expect(s.selected).toBeNull();
  });

  it("takes a restored entry out of the trash's list and selects the first left", () => {
    const s = new Screen();
    const [a, b, c] = [entry(), entry(), entry()];
    s.setShown([a, b, c]);
    s.setSelected(a.id);
    s.drop(a.id);
    expect(s.shown.map((e) => e.id)).toEqual([b.id, c.id]);
    expect(s.selected).toBe(b.id);
  });

  it("tells the feed who the person is when it takes the settings", () => {
    const s = new Screen();
    s.useSettings(settings);
    expect(s.feed.me).toBe("maria");
    s.useSettings({ ...settings, author: "maria-k" });
    expect(s.settings.author).toBe("maria-k");
    expect(s.feed.me).toBe("maria-k");
  });

  it("says so when the settings or the app's info are read before they were loaded", () => {
    const s = new Screen();
    expect(() => s.settings).toThrow(/before the app loaded them/);
    expect(() => s.info).toThrow(/before the app loaded it/);
  });

  it("names the pad in the settings, whether a pad is on screen, and the selected entry while it is shown", () => {
    const s = new Screen();
    s.useSettings({ ...settings, pad: "proj-x" });
    expect(s.pad).toBe("proj-x");
    expect(s.padOnScreen).toBe(true);
    for (const [view, on] of [["tasks", true], ["trash", true], ["all", false], ["search", false], ["inbox", false], ["agents", false]] as const) {
      s.setView(view);
      expect(s.padOnScreen).toBe(on);
    }
    const [a, b] = [entry(), entry()];
    s.setShown([a, b]);
    expect(s.selectedEntry).toBeUndefined();
    s.setSelected(b.id);
    expect(s.selectedEntry).toBe(b);
    s.setSelected("gone");
    expect(s.selectedEntry).toBeUndefined();
  });

  it("follows which questions an ask waits on", () => {
    const s = new Screen();
    s.setWaiting(["q1", "q2"]);
    s.waitOn("q3", true);
    s.waitOn("q1", false);
    expect([...s.waiting].sort()).toEqual(["q2", "q3"]);
  });
});

// Never run: `tsc --noEmit` checks that the screen's fields change only
// through its methods (an `@ts-expect-error` over a line that compiles is
// itself an error).
export function illWritten(s: Screen, e: string): void {
  // @ts-expect-error: the view changes through setView
  s.view = "tasks";
  // @ts-expect-error: the settings are read-only; useSettings takes new ones
  s.settings.author = e;
  // @ts-expect-error: what is shown changes through setShown
  s.shown.push(entry());
}
