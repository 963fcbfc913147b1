// The tray, clicked the way a desktop panel clicks it: sni_host.py plays the
// panel (a StatusNotifierWatcher on the session bus); the app registers its
// icon there and exports its menu over dbusmenu, and the test clicks the
// entries through it. Show/hide, the quick note, mute (with the settings file
// and notifications following) and Quit, which stops the app and the engine
// it runs.

import { spawn, execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { NOTIFY_LOG, call, env, launch, quickVisible, quit, sleep, socket, waitFor } from "./harness.mjs";

let host;
let lines;

/** The next JSON line from the panel (within 15 seconds). */
async function next() {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error("the panel said nothing for 15 s")), 15_000);
  });
  try {
    const { value, done } = await Promise.race([lines.next(), late]);
    assert.ok(!done, "the panel process ended");
    return JSON.parse(value);
  } finally {
    clearTimeout(timer);
  }
}

async function send(command) {
  host.stdin.write(command + "\n");
  const reply = await next();
  assert.equal(reply.error, undefined, `panel: ${reply.error}`);
  return reply;
}

const menu = async () => (await send("menu")).menu;
const click = (label) => send(`click ${label}`);

function mainVisible() {
  try {
    execFileSync("xdotool", ["search", "--onlyvisible", "--name", "^Scratchpad$"], { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}

const settings = () => JSON.parse(readFileSync(path.join(env.PAD_HOME, "app-settings.json"), "utf8"));
const notified = (text) => NOTIFY_LOG && readFileSync(NOTIFY_LOG, "utf8").includes(text);

before(async () => {
  host = spawn("/usr/bin/python3", [path.join(import.meta.dirname, "sni_host.py")], {
    env,
    stdio: ["pipe", "pipe", "inherit"],
  });
  lines = readline.createInterface({ input: host.stdout })[Symbol.asyncIterator]();
  assert.deepEqual(await next(), { ready: true });
  await launch({});
  const registered = await next();
  assert.ok(registered.registered, `the app's tray icon registers with the panel: ${JSON.stringify(registered)}`);
});

after(async () => {
  // Quit ended the app already; ending the WebDriver session may fail.
  await quit().catch(() => {});
  host?.kill();
});

test("the tray menu has show/hide, quick note, mute and quit", async () => {
  const labels = (await menu()).map((e) => e.label);
  assert.deepEqual(labels, ["Show / hide Scratchpad", "Quick note…", "Mute notifications", "Quit"]);
});

test("show / hide hides the main window and brings it back", async () => {
  assert.ok(mainVisible());
  await click("Show / hide Scratchpad");
  await waitFor("the main window to hide", async () => !mainVisible());
  await click("Show / hide Scratchpad");
  await waitFor("the main window to come back", async () => mainVisible());
});

test("quick note opens the quick box, and again closes it", async () => {
  await click("Quick note…");
  await waitFor("the quick box", async () => quickVisible());
  await click("Quick note…");
  await waitFor("the quick box to hide", async () => !quickVisible());
});

test("mute silences needs_eyes notifications and saves it; unmute brings them back", async () => {
  await click("Mute notifications");
  await waitFor("the setting saved", async () => settings().notifications === false);
  assert.equal((await menu()).find((e) => e.label === "Mute notifications").toggle_state, 1, "the switch shows muted");
  await call("entry.add", { pad: "ops", author: "agent-7", content: "tray-muted: nobody should be told", tags: ["needs_eyes"] });
  await sleep(2000);
  assert.ok(!notified("tray-muted"), "no notification while muted");

  await click("Mute notifications");
  await waitFor("the setting saved", async () => settings().notifications === true);
  assert.equal((await menu()).find((e) => e.label === "Mute notifications").toggle_state, 0);
  await call("entry.add", { pad: "ops", author: "agent-7", content: "tray-unmuted: look at this", tags: ["needs_eyes"] });
  if (NOTIFY_LOG) await waitFor("the notification after unmuting", async () => notified("tray-unmuted"));
});

test("quit stops the app and the engine it runs", async () => {
  assert.ok(existsSync(socket), "the app's engine serves the socket");
  await click("Quit");
  await waitFor("the engine to stop and remove its socket", async () => !existsSync(socket), 15_000);
  await assert.rejects(call("hello"), "nothing answers on the socket");
});
