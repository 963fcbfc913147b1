// Agent Zero and the person, in the real app under Xvfb: the Agents view
// shows the chat Agent Zero's plugin runs (its state and last step) and its
// Stop halts it — the plugin in a stand-in of Agent Zero's loop
// (clients/agent-zero/tests/standin_chat.py), its watcher on the app's
// engine; and "Connect Agent Zero" for Docker installs the plugin into a
// usr/ folder (or saves it as a ZIP for Agent Zero's Plugins dialog), serves
// the engine over HTTP with a token written into the plugin's settings, and
// waits until Agent Zero's first call comes — from a real container when
// scripts/test made one (PAD_CONTAINER_IMAGE).

import { spawn, spawnSync } from "node:child_process";
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

// Agent Zero's first call with the settings Connect wrote into `usr`: from a
// real container (the image scripts/test makes, PAD_CONTAINER_IMAGE; the app
// then serves on docker0), else from a process here playing Docker Desktop.
const image = process.env.PAD_CONTAINER_IMAGE;
const docker0 = () => {
  const out = spawnSync("ip", ["-4", "-o", "addr", "show", "docker0"], { encoding: "utf8" }).stdout;
  return out.split(" inet ")[1].split("/")[0];
};
const serveOn = (port) => `${image ? docker0() : "127.0.0.1"}:${port}`;
const urlFor = (port) => image ? `http://${docker0()}:${port}` : `http://host.docker.internal:${port}`;

async function firstCall(usr) {
  const code = `
import json, sys
sys.path.insert(0, "/a0/usr/plugins/scratchpad/helpers")
import scratchpad_client as sp
cfg = json.load(open("/a0/usr/plugins/scratchpad/config.json"))
url = cfg["url"] if ${image ? "True" : "False"} else cfg["url"].replace("host.docker.internal", "127.0.0.1")
c = sp.HttpClient(url, cfg["token"], client="agent-zero-plugin")
print(c.server["author"], len(c.inbox(peek=True)["needs_eyes"]) >= 0)
`;
  const first = image
    ? spawn("docker", ["run", "--rm", "--add-host=host.docker.internal:host-gateway", "-v", `${usr}:/a0/usr:ro`,
      image, "python3", "-c", code], { stdio: ["ignore", "pipe", "inherit"] })
    : spawn(python, ["-c", code.replaceAll("/a0/usr", usr)], { stdio: ["ignore", "pipe", "inherit"] });
  if (!image) console.log("# no container image (PAD_CONTAINER_IMAGE): Agent Zero's first call is played on this machine");
  let said = "";
  first.stdout.on("data", (d) => { said += d; });
  await waitFor("the first call", () => /agent-zero True/.test(said), 60_000);
}

async function openConnect(how) {
  if (!(await browser.$("#agents-connect").isDisplayed().catch(() => false))) await browser.$("#agents-btn").click();
  await (await waitFor("the Connect button", async () => {
    const b = await browser.$("#agents-connect");
    return (await b.isDisplayed().catch(() => false)) ? b : null;
  })).click();
  await browser.$(`#connect-form input[value="${how}"]`).click();
}

test("Connect Agent Zero for Docker installs the plugin, serves the engine with a token and sees the container's first call", async () => {
  const usr = mkdtempSync(path.join(os.tmpdir(), "a0-usr-"));
  mkdirSync(path.join(usr, "plugins"));
  const port = await freePort();
  await openConnect("docker");
  await browser.$("#connect-dir").setValue(usr);
  await browser.$("#connect-address").setValue(serveOn(port));
  await browser.$("#connect-go").click();
  await waitFor("the flow to wait for Agent Zero", async () => {
    assert.equal(await textOf("connect-error"), "");
    return /Waiting for Agent Zero's first call/.test(await textOf("connect-result"));
  }, 20_000);
  const config = path.join(usr, "plugins", "scratchpad", "config.json");
  assert.equal(statSync(config).mode & 0o777, 0o600);
  const saved = JSON.parse(readFileSync(config, "utf8"));
  // On docker0 the URL is the gateway's; on loopback, Docker Desktop's name for the host.
  assert.equal(saved.url, urlFor(port));
  assert.match(saved.token, /^padt_/);
  assert.equal(saved.recall_enabled, true);
  const text = await textOf("connect-result");
  assert.ok(!text.includes(saved.token), "the token is shown nowhere");
  await firstCall(usr);
  await waitFor("the flow to see it", async () => /it is connected/.test(await textOf("connect-result")), 20_000);
  await screenshot("connect-agent-zero");
  const listed = await call("token.list");
  assert.ok(listed.tokens.some((t) => t.name === "agent-zero"));
  await browser.$("#connect-form button[value=cancel]").click();
});

test("Connect Agent Zero can save the plugin as a ZIP for Agent Zero's Plugins dialog", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "a0-zip-"));
  const file = path.join(dir, "scratchpad.zip");
  const port = await freePort();
  await openConnect("zip");
  assert.match(await textOf("connect-dir-label"), /Save the ZIP as/);
  await browser.$("#connect-dir").setValue(file);
  await browser.$("#connect-address").setValue(serveOn(port));
  await browser.$("#connect-go").click();
  await waitFor("the ZIP to be saved", async () => {
    assert.equal(await textOf("connect-error"), "");
    return /Saved the plugin as .*scratchpad\.zip/.test(await textOf("connect-result"));
  }, 20_000);
  assert.match(await textOf("connect-result"), /Plugins → Install → ZIP/);
  assert.equal(statSync(file).mode & 0o777, 0o600, "it holds the token");
  // What Agent Zero's installer does with it: extract, move the folder
  // holding plugin.yaml into usr/plugins/, run its install hook.
  const usr = path.join(dir, "usr");
  const installed = spawnSync(python, ["-c", `
import importlib.util, os, shutil, sys, zipfile
os.makedirs(sys.argv[2] + "/plugins", exist_ok=True)
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2] + "/x")
shutil.move(sys.argv[2] + "/x/scratchpad", sys.argv[2] + "/plugins/scratchpad")
spec = importlib.util.spec_from_file_location("hooks", sys.argv[2] + "/plugins/scratchpad/hooks.py")
hooks = importlib.util.module_from_spec(spec); spec.loader.exec_module(hooks); hooks.install()
`, file, usr], { encoding: "utf8" });
  assert.equal(installed.status, 0, installed.stderr);
  const config = path.join(usr, "plugins", "scratchpad", "config.json");
  assert.equal(statSync(config).mode & 0o777, 0o600);
  assert.equal(JSON.parse(readFileSync(config, "utf8")).url, urlFor(port));
  await firstCall(usr);
  await waitFor("the flow to see it", async () => /it is connected/.test(await textOf("connect-result")), 20_000);
  await browser.$("#connect-form button[value=cancel]").click();
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
