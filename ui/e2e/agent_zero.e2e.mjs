// Agent Zero and the person, in the real app under Xvfb: the Agents view
// shows the chat Agent Zero's plugin runs (its state and last step) and its
// Stop halts it — the plugin in a stand-in of Agent Zero's loop
// (clients/agent-zero/tests/standin_chat.py), its watcher on the app's
// engine; and "Connect Agent Zero" for Docker installs the plugin into a
// usr/ folder, serves the engine over HTTP with a token written into the
// plugin's settings, and waits until Agent Zero's first call comes.

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { NOTIFY_LOG, browser, call, clickNotificationButton, env, freePort, launch, notificationsShown, quit, screenshot, waitFor } from "./harness.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const target = process.env.CARGO_TARGET_DIR ?? path.join(root, "..", "scratchpad-target");
const python = process.env.A2A_PYTHON ?? path.join(target, "venv", "bin", "python");
const padBin = process.env.PAD_BIN ?? path.join(target, "debug", "pad");
let chat;

before(async () => {
  await launch();
});

after(async () => {
  chat?.kill();
  await quit();
});

const textOf = (id) => browser.execute((i) => document.getElementById(i)?.textContent ?? "", id);

test("the Agents view shows Agent Zero's chat, and its Stop halts the chat at the next step", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "a0-standin-"));
  chat = spawn(python, [path.join(root, "clients/agent-zero/tests/standin_chat.py"), dir, "deploy the release"], {
    env: { ...env, PAD_BIN: padBin }, stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  chat.stdout.on("data", (d) => { out += d; });
  await waitFor("the chat's thread", () => out.trim().length > 0, 30_000);
  await browser.$("#agents-btn").click();
  // Its last step, as the plugin's status note says it (at most every 5 s).
  const line = await waitFor("the chat, working on a step", async () => {
    const l = await browser.$('#roster .roster-line.chat[data-state="working"]');
    return (await l.isExisting()) && /“deploy the release”.*working: code_execution_tool: doing code_execution_tool/.test(await l.getText()) ? l : null;
  }, 30_000);
  await screenshot("agents-agent-zero-chat");
  await line.$('button[data-control="stop"]').click();
  await waitFor("the chat to halt", () => /halted/.test(out), 20_000);
  await waitFor("the view to say it stopped", async () => {
    const roster = await textOf("roster");
    return /stopped by user at step \d+/.test(roster);
  }, 20_000);
});

test("Connect Agent Zero for Docker installs the plugin, serves the engine with a token and sees the first call", async () => {
  const usr = mkdtempSync(path.join(os.tmpdir(), "a0-usr-"));
  mkdirSync(path.join(usr, "plugins"));
  const port = await freePort();
  if (!(await browser.$("#agents-connect").isDisplayed().catch(() => false))) await browser.$("#agents-btn").click();
  await (await waitFor("the Connect button", async () => {
    const b = await browser.$("#agents-connect");
    return (await b.isDisplayed().catch(() => false)) ? b : null;
  })).click();
  await browser.$('#connect-form input[value="docker"]').click();
  await browser.$("#connect-dir").setValue(usr);
  await browser.$("#connect-address").setValue(`127.0.0.1:${port}`);
  await browser.$("#connect-go").click();
  await waitFor("the flow to wait for Agent Zero", async () => /Waiting for Agent Zero's first call/.test(await textOf("connect-result")), 20_000);
  const config = path.join(usr, "plugins", "scratchpad", "config.json");
  assert.equal(statSync(config).mode & 0o777, 0o600);
  const saved = JSON.parse(readFileSync(config, "utf8"));
  // Served on loopback: Docker Desktop's containers reach it as host.docker.internal.
  assert.equal(saved.url, `http://host.docker.internal:${port}`);
  assert.match(saved.token, /^padt_/);
  assert.equal(saved.recall_enabled, true);
  const text = await textOf("connect-result");
  assert.ok(!text.includes(saved.token), "the token is shown nowhere");
  // Agent Zero's first call: its plugin's client, with the settings written.
  const first = spawn(python, ["-c", `
import json, sys
sys.path.insert(0, ${JSON.stringify(path.join(root, "clients/python"))})
import scratchpad
cfg = json.load(open(${JSON.stringify(config)}))
url = cfg["url"].replace("host.docker.internal", "127.0.0.1")  # Docker Desktop's forwarding, played here
c = scratchpad.HttpClient(url, cfg["token"], client="agent-zero-plugin")
print(c.server["author"], len(c.inbox(peek=True)["needs_eyes"]) >= 0)
`], { stdio: ["ignore", "pipe", "inherit"] });
  let said = "";
  first.stdout.on("data", (d) => { said += d; });
  await waitFor("the first call", () => /agent-zero True/.test(said), 20_000);
  await waitFor("the flow to see it", async () => /it is connected/.test(await textOf("connect-result")), 20_000);
  await screenshot("connect-agent-zero");
  const listed = await call("token.list");
  assert.ok(listed.tokens.some((t) => t.name === "agent-zero"));
});

test("Stop Agent Zero on a notification of its chat halts the chat", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "a0-standin-"));
  const notified = spawn(python, [path.join(root, "clients/agent-zero/tests/standin_chat.py"), dir, "ship the release"], {
    env: { ...env, PAD_BIN: padBin, STANDIN_NOTIFY: "the release build is green" }, stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  notified.stdout.on("data", (d) => { out += d; });
  try {
    await waitFor("the notification", () => readFileSync(NOTIFY_LOG, "utf8").includes("the release build is green") && notificationsShown() > 0, 30_000);
    clickNotificationButton("Stop Agent Zero", "agent-zero");
    await waitFor("the chat to halt", () => /halted/.test(out), 30_000);
  } finally {
    notified.kill();
  }
});
