// The door to the engine, faked at the IPC boundary only: Tauri's own
// `mockIPC` stands where the shell's `rpc` command would, so `api.ts` and
// `invoke` run as in the app and the test sees what would cross to Rust.
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import { EngineError, onEvent, rpc } from "./api";
import type { PadEvent } from "./types";

type Sent = { cmd: string; args: unknown };

/** Answers every command with `answer` (or throws what it throws) and
 *  records what was sent. */
function engine(answer: (cmd: string, args: unknown) => unknown): Sent[] {
  const sent: Sent[] = [];
  mockIPC(
    (cmd, args) => {
      sent.push({ cmd, args });
      return answer(cmd, args);
    },
    { shouldMockEvents: true },
  );
  return sent;
}

afterEach(() => clearMocks());

describe("rpc", () => {
  it("sends the method and its params to the shell's rpc command and gives back the result", async () => {
    const sent = engine(() => ({ entries: [], next_cursor: null }));
    const r = await rpc("entry.list", { pad: "inbox", tags: ["needs_eyes"], limit: 20 });
    expect(sent).toEqual([{ cmd: "rpc", args: { method: "entry.list", params: { pad: "inbox", tags: ["needs_eyes"], limit: 20 } } }]);
    expect(r.next_cursor).toBeNull();
  });

  it("sends empty params for a method called without any", async () => {
    const sent = engine(() => ({ pads: 1 }));
    await rpc("stats");
    expect(sent[0].args).toEqual({ method: "stats", params: {} });
  });

  it("turns the engine's error object into an EngineError with its code and data", async () => {
    engine(() => {
      throw { code: -32002, message: "version conflict: entry is at 4", data: { version: 4 } };
    });
    const err = await rpc("entry.update", { id: "a1", pinned: true, if_version: 3 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ code: -32002, message: "version conflict: entry is at 4", data: { version: 4 } });
  });

  it("gives a shell failure without a code the internal error's code", async () => {
    engine(() => {
      throw "the engine's connection is closed";
    });
    const err = await rpc("entry.get", { id: "a1" }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: -32603, message: "the engine's connection is closed" });
  });
});

describe("onEvent", () => {
  it("hands each pad-event's payload to the callback", async () => {
    engine(() => undefined);
    const got: PadEvent[] = [];
    await onEvent((ev) => got.push(ev));
    const ev: PadEvent = { subscription: 1, type: "reconnected" };
    await emit("pad-event", ev);
    expect(got).toEqual([ev]);
  });
});

// What `tsc --noEmit` proves (never run: it only has to type-check): each
// call below is a compile error, so a method renamed on the engine, a param
// it no longer takes or a field of its result that is gone fails the build;
// and an `@ts-expect-error` over a line that compiles is itself an error,
// so a looser `rpc` fails here too.
export function illTyped(): void {
  // @ts-expect-error: no such method
  void rpc("entry.lst", {});
  // @ts-expect-error: entry.add needs its content
  void rpc("entry.add", { pad: "inbox" });
  // @ts-expect-error: entry.list takes no `pads`
  void rpc("entry.list", { pads: "inbox" });
  // @ts-expect-error: a limit is a number
  void rpc("entry.list", { limit: "20" });
  // @ts-expect-error: a status is one of the protocol's
  void rpc("entry.update", { id: "a1", status: "finished" });
  // @ts-expect-error: entry.get needs its params
  void rpc("entry.get");
  void rpc("pad.list").then((r) => {
    // @ts-expect-error: pad.list answers pads, not entries
    void r.entries;
  });
}
