import { ago, human, until } from "./time";

const NOW = Date.parse("2026-11-23T12:00:00Z");
const at = (seconds: number) => new Date(NOW + seconds * 1000).toISOString();

describe("time labels", () => {
  it("rounds a time to come up, so an expiry is never shorter than said", () => {
    expect(until(at(1 * 3600 + 59 * 60), NOW)).toBe("2h");
    expect(until(at(3600), NOW)).toBe("1h");
    expect(until(at(3601), NOW)).toBe("2h");
    expect(until(at(61), NOW)).toBe("2m");
    expect(until(at(23 * 3600 + 59 * 60), NOW)).toBe("1d");
    expect(until(at(30), NOW)).toBe("30s");
    expect(ago(at(1 * 3600 + 59 * 60), NOW)).toBe("in 2h");
  });

  it("rounds a time past down", () => {
    expect(ago(at(-(1 * 3600 + 59 * 60)), NOW)).toBe("1h ago");
    expect(ago(at(-59 * 60), NOW)).toBe("59m ago");
    expect(ago(at(-30), NOW)).toBe("just now");
    expect(ago(at(-3 * 86400), NOW)).toBe("3d ago");
  });

  it("never says a negative duration", () => {
    expect(human(-5)).toBe("0s");
    expect(until(at(-10), NOW)).toBe("0s");
  });
});
