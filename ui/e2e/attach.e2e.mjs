// The app attaches to an engine that already serves the socket (`pad
// serve`) instead of starting a second one, and leaves it running on quit.

import { spawn } from "node:child_process";
import path from "node:path";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { APP, browser, call, env, launch, quit, rowWith, screenshot, waitFor } from "./harness.mjs";

let engine;

before(async () => {
  engine = spawn(path.join(path.dirname(APP), "pad"), ["serve"], { env, stdio: "ignore" });
  await waitFor("pad serve", () => call("hello").then(() => true), 20_000);
  await launch({});
});

after(async () => {
  await quit();
  engine?.kill("SIGTERM");
});

test("the app attaches to the running engine and shows its entries live", async () => {
  assert.match(await browser.$("#engine-mode").getText(), /attached to pad serve/);
  const pid = (await call("hello")).pid;
  assert.equal(pid, engine.pid, "the engine answering is pad serve");
  await call("entry.add", { pad: "inbox", author: "agent-9", content: "written to pad serve" });
  await waitFor("the entry in the feed", () => rowWith("written to pad serve"), 2_000);
  assert.equal((await call("stats")).connections >= 1, true);
});

test("when pad serve restarts, the app says so, reconnects by itself and shows new entries live", async () => {
  engine.kill("SIGTERM");
  await new Promise((r) => engine.once("exit", r));
  await waitFor("the banner", async () => /The engine went away/.test(await browser.execute(() => document.getElementById("engine-state").hidden ? "" : document.getElementById("engine-state").textContent)), 15_000);
  await screenshot("engine-away");
  engine = spawn(path.join(path.dirname(APP), "pad"), ["serve"], { env, stdio: "ignore" });
  await waitFor("pad serve again", () => call("hello").then(() => true, () => false), 20_000);
  await waitFor("the banner gone", () => browser.execute(() => document.getElementById("engine-state").hidden), 20_000);
  await call("entry.add", { pad: "inbox", author: "agent-9", content: "written after the restart" });
  await waitFor("the new entry in the feed", () => rowWith("written after the restart"), 5_000);
});

test("quitting the app leaves pad serve running", async () => {
  await quit();
  await new Promise((r) => setTimeout(r, 500));
  const hello = await call("hello");
  assert.equal(hello.pid, engine.pid);
  assert.equal(engine.exitCode, null);
});
