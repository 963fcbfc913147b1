// Where a note handed to an agent stands (`agent.deliveries`, then the
// `delivery` events): one badge per agent on the note's row and detail.

import type { Delivery } from "./protocol";

/** Deliveries by the note's id, one per agent. */
export class Deliveries {
  private by = new Map<string, Delivery[]>();

  load(list: Delivery[]): void {
    for (const d of list) this.apply(d);
  }

  /** Takes in a `delivery` event's object; returns whether it was news. */
  apply(d: Delivery): boolean {
    const list = this.by.get(d.entry) ?? [];
    const i = list.findIndex((x) => x.agent === d.agent);
    if (i >= 0 && list[i].updated_at > d.updated_at) return false;
    if (i >= 0) list[i] = d;
    else list.push(d);
    this.by.set(d.entry, list);
    return true;
  }

  of(entry: string): Delivery[] {
    return this.by.get(entry) ?? [];
  }

  /** Whether an agent's task waits for the answer to question `id`. */
  waitingOn(id: string): boolean {
    for (const list of this.by.values()) {
      if (list.some((d) => d.question === id && d.state === "waiting_for_you")) return true;
    }
    return false;
  }
}

/** "→ agent-zero: working", "→ helper: not delivered: cannot reach …". */
export function deliveryLabel(d: Delivery): string {
  const state: Record<Delivery["state"], string> = {
    pending: d.detail ?? "sending…",
    sent: "sent",
    working: "working",
    waiting_for_you: "waiting for you",
    done: "done",
    failed: d.detail ? `failed: ${d.detail}` : "failed",
  };
  return `→ ${d.agent}: ${state[d.state]}`;
}

/** The badge's classes: its state, and whether a try has failed. */
export function deliveryClass(d: Delivery): string {
  return `delivery delivery-${d.state}${d.state === "pending" && d.detail ? " delivery-undelivered" : ""}`;
}
