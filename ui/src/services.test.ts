// The named services, through the modules that use them: the engine is
// faked at the IPC boundary only (Tauri's `mockIPC`), so each module, its
// service, `rpc` and `invoke` run as in the app, and the test sees the
// methods and params that would cross to Rust and what the module made of
// the answers.
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { entry } from "./fixtures";
import { doneLooking } from "./eyes";
import { title } from "./context";
import { checkAddressed } from "./handoff";
import { loadTrash, trashed } from "./components/Trash";
import { loadPads } from "./components/PadList";
import { Screen } from "./state";
import type { Pad, Version } from "./protocol";

type Call = { method: string; params: Record<string, unknown> };

/** An engine that answers each `rpc` with `answer(method, params)` (or
 *  throws what it throws), recording every call. */
function engine(answer: (method: string, params: Record<string, unknown>) => unknown): Call[] {
  const calls: Call[] = [];
  mockIPC((cmd, args) => {
    if (cmd !== "rpc") throw new Error(`unexpected command ${cmd}`);
    const { method, params } = args as Call;
    calls.push({ method, params });
    return answer(method, params);
  });
  return calls;
}

const conflict = { code: -32002, message: "version conflict" };

afterEach(() => clearMocks());

describe("Done looking (eyes.ts over entries.get and entries.update)", () => {
  it("takes needs_eyes off the entry as it is now, keeping its other tags", async () => {
    const e = entry({ tags: ["needs_eyes", "deploy"], version: 3 });
    const calls = engine((method) => (method === "entry.get" ? { entry: e } : { entry: { ...e, tags: ["deploy"], version: 4 } }));
    await doneLooking(e.id);
    expect(calls).toEqual([
      { method: "entry.get", params: { id: e.id } },
      { method: "entry.update", params: { id: e.id, tags: ["deploy"], if_version: 3 } },
    ]);
  });

  it("reads the entry again after a conflict and saves against the newer version", async () => {
    const e = entry({ tags: ["needs_eyes"], version: 3 });
    let version = 3;
    const calls = engine((method) => {
      if (method === "entry.get") return { entry: { ...e, version } };
      if (version === 3) {
        version = 4; // an agent changed it meanwhile
        throw conflict;
      }
      return { entry: { ...e, tags: [], version: 5 } };
    });
    await doneLooking(e.id);
    expect(calls.map((c) => [c.method, c.params.if_version])).toEqual([
      ["entry.get", undefined],
      ["entry.update", 3],
      ["entry.get", undefined],
      ["entry.update", 4],
    ]);
  });

  it("changes nothing when the tag is already off, and passes on other errors", async () => {
    const calls = engine(() => ({ entry: entry({ tags: ["deploy"] }) }));
    await doneLooking("a1");
    expect(calls.map((c) => c.method)).toEqual(["entry.get"]);
    engine((method) => {
      if (method === "entry.get") return { entry: entry({ tags: ["needs_eyes"] }) };
      throw { code: -32602, message: "no such entry" };
    });
    await expect(doneLooking("a1")).rejects.toMatchObject({ code: -32602 });
  });
});

describe("a reply's title (context.ts over entries.get)", () => {
  it("asks the engine once per parent, however many ask at once, and not for an entry on hand", async () => {
    const parent = entry({ content: "**Deploy** the 5s timeout fix\nthen tell me" });
    const shown = entry({ content: "Which region?" });
    const calls = engine(() => ({ entry: parent }));
    const [a, b] = await Promise.all([title(parent.id), title(parent.id)]);
    expect([a, b]).toEqual(["Deploy the 5s timeout fix", "Deploy the 5s timeout fix"]);
    expect(await title(shown.id, [shown])).toBe("Which region?");
    expect(await title(parent.id)).toBe("Deploy the 5s timeout fix");
    expect(calls).toEqual([{ method: "entry.get", params: { id: parent.id } }]);
  });

  it("names a parent the engine no longer has a deleted entry", async () => {
    engine(() => {
      throw { code: -32001, message: "not found" };
    });
    expect(await title("1jkqgone0001")).toBe("a deleted entry");
  });
});

describe("addressing a note (handoff.ts over agents.list)", () => {
  const roster = { agents: [{ name: "agent-zero" }], seen: [{ author: "Helper" }, { author: "maria" }] };

  it("warns once about a name nobody answers to, with the nearest known one; sent again, it goes", async () => {
    const calls = engine(() => roster);
    const text = "@agent-zreo deploy it";
    const warning = await checkAddressed(text, ["agent-zreo"], "maria");
    expect(warning).toBe(
      "Nobody answers to @agent-zreo (did you mean @agent-zero?): the note would reach no one. Known: @agent-zero, @helper. Send again to save it anyway.",
    );
    expect(await checkAddressed(text, ["agent-zreo"], "maria")).toBeNull();
    expect(await checkAddressed("@helper look", ["helper"], "maria")).toBeNull();
    expect(calls.map((c) => c.method)).toEqual(["agent.list", "agent.list", "agent.list"]);
  });

  it("lets the note go when the engine cannot say who is known (the engine will say what is wrong)", async () => {
    engine(() => {
      throw "the engine's connection is closed";
    });
    expect(await checkAddressed("@anyone hi", ["anyone"], "maria")).toBeNull();
  });
});

describe("the pad's trash (components/Trash.ts over entries.trash)", () => {
  it("lists the pad's deleted entries and keeps each one's deletion for its Restore", async () => {
    const [a, b] = [entry({ pad: "ops" }), entry({ pad: "ops" })];
    const version = (e: typeof a, change: number): Version => ({ entry: e, at: "2026-11-21T05:00:00Z", by: "agent-x", action: "clear", change, restored_at: null });
    const calls = engine(() => ({ entries: [version(a, 7), version(b, 7)] }));
    const listed = await loadTrash("ops");
    expect(calls).toEqual([{ method: "entry.trash", params: { pad: "ops", limit: 1000 } }]);
    expect(listed.map((e) => e.id)).toEqual([a.id, b.id]);
    expect([...trashed.keys()]).toEqual([a.id, b.id]);
    expect(trashed.get(b.id)?.change).toBe(7);
  });
});

describe("the pad list (components/PadList.ts over pads.list)", () => {
  const pad = (name: string, over: Partial<Pad> = {}): Pad => ({
    name, entries: 2, last_write_at: "", expires_at: null, ttl_seconds: null, max_entries: null, archived: false, archived_at: null, ...over,
  });

  it("keeps the live pads on the screen and lists the archived under Archived, newest first", async () => {
    document.body.innerHTML = `<nav id="pads"></nav><details id="archived" hidden></details>`;
    const screen = new Screen();
    screen.useSettings({ hotkey: "", author: "maria", notifications: false, default_ttl_seconds: null, pad: "ops", metrics: null, agent_http: null, model: null });
    const calls = engine(() => ({
      pads: [
        pad("ops"),
        pad("old", { archived: true, archived_at: "2026-11-01T00:00:00Z" }),
        pad("older", { archived: true, archived_at: "2026-10-01T00:00:00Z" }),
        pad("newer", { archived: true, archived_at: "2026-11-20T00:00:00Z" }),
      ],
    }));
    await loadPads(screen);
    expect(calls).toEqual([{ method: "pad.list", params: { include_archived: true } }]);
    expect(screen.pads.map((p) => p.name)).toEqual(["ops"]);
    const listed = [...document.querySelectorAll<HTMLElement>("#pads .pad")].map((b) => b.dataset.pad);
    expect(listed).toEqual(["inbox", "ops"]);
    expect(document.querySelector("#pads .pad[data-pad='ops']")?.classList.contains("active")).toBe(true);
    const archived = [...document.querySelectorAll<HTMLElement>("#archived .archived-pad")].map((r) => r.dataset.pad);
    expect(archived).toEqual(["newer", "old", "older"]);
    expect(document.getElementById("archived")?.hidden).toBe(false);
  });
});
