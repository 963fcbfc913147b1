import { Deliveries, deliveryLabel } from "./deliveries";
import type { Delivery } from "./protocol";

const d = (over: Partial<Delivery>): Delivery => ({
  entry: "n1", pad: "p", agent: "agent-zero", state: "sent", detail: null, task: null, question: null,
  attempts: 0, updated_at: "2026-11-24T10:00:00.000Z", ...over,
});

describe("deliveries", () => {
  it("keeps the newest state per note and agent", () => {
    const all = new Deliveries();
    all.load([d({}), d({ agent: "helper", state: "working", updated_at: "2026-11-24T10:00:01.000Z" })]);
    expect(all.apply(d({ state: "done", updated_at: "2026-11-24T10:00:02.000Z" }))).toBe(true);
    expect(all.apply(d({ state: "working", updated_at: "2026-11-24T10:00:01.500Z" }))).toBe(false);
    expect(all.of("n1").map((x) => `${x.agent}:${x.state}`)).toEqual(["agent-zero:done", "helper:working"]);
    expect(all.of("other")).toEqual([]);
  });
  it("says where a note stands in words", () => {
    expect(deliveryLabel(d({ state: "waiting_for_you" }))).toBe("→ agent-zero: waiting for you");
    expect(deliveryLabel(d({ state: "pending", detail: "not delivered: cannot reach http://h:1" }))).toBe("→ agent-zero: not delivered: cannot reach http://h:1");
    expect(deliveryLabel(d({ state: "failed", detail: "the disk is full" }))).toBe("→ agent-zero: failed: the disk is full");
  });
});
