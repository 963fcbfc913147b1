// The harness of the app's end-to-end tests and benchmark: a temp data dir
// and socket, the real app launched through tauri-driver (WebKitWebDriver)
// and driven with WebdriverIO, and an agent's view of the engine (JSON-RPC
// over the socket). scripts/e2e provides the display, the bus and dunst.
//
// Environment: APP (the app binary), TAURI_DRIVER, E2E_OUT (screenshots and
// logs), NOTIFY_LOG (dbus-monitor's output).

import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, existsSync, chmodSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import assert from "node:assert/strict";
import { remote } from "webdriverio";

export const APP = process.env.APP;
export const OUT = process.env.E2E_OUT ?? mkdtempSync(path.join(os.tmpdir(), "pad-e2e-out-"));
export const NOTIFY_LOG = process.env.NOTIFY_LOG;
mkdirSync(OUT, { recursive: true });

const home = mkdtempSync(path.join(os.tmpdir(), "pad-e2e-"));
const runDir = path.join(home, "run");
mkdirSync(runDir, { mode: 0o700 });
chmodSync(runDir, 0o700);
export const socket = path.join(runDir, "pad.sock");
// The desktop's link opener, as the app calls it: it notes the link in
// OUT/opened.log (there is no browser under Xvfb).
const bin = path.join(home, "bin");
mkdirSync(bin);
writeFileSync(path.join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$1" >> '${path.join(OUT, "opened.log")}'\n`, { mode: 0o755 });
export const OPENED_LOG = path.join(OUT, "opened.log");
export const env = {
  ...process.env,
  PATH: `${bin}:${process.env.PATH}`,
  PAD_HOME: path.join(home, "data"),
  PAD_SOCKET: socket,
  PAD_NO_SEMANTIC: "1",
  PAD_LOG: "info",
  WEBKIT_DISABLE_DMABUF_RENDERER: "1",
};

let driver;
/** The WebdriverIO session on the app, once launched. */
export let browser;

/** A TCP port nobody listens on now. */
export function freePort() {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One JSON-RPC call over the engine's socket, as an agent makes it. */
export function call(method, params = {}) {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(socket);
    let buf = "";
    s.on("data", (d) => {
      buf += d;
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        const msg = JSON.parse(buf.slice(0, nl));
        s.end();
        msg.error ? reject(new Error(msg.error.message)) : resolve(msg.result);
      }
    });
    s.on("error", reject);
    s.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) + "\n");
  });
}

/** `call` as `author` (a `hello` first), as an agent's client makes it:
 *  the engine records that author as who made the change. */
export function callAs(author, method, params = {}) {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(socket);
    let buf = "";
    s.on("data", (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const msg = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        if (msg.id !== 2) continue;
        s.end();
        msg.error ? reject(new Error(msg.error.message)) : resolve(msg.result);
      }
    });
    s.on("error", reject);
    s.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "hello", params: { author } }) + "\n");
    s.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method, params }) + "\n");
  });
}

export async function waitFor(what, fn, ms = 10_000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(100);
  }
  try {
    execFileSync("import", ["-window", "root", path.join(OUT, `failed-${what.replace(/\W+/g, "-")}.png`)]);
  } catch {
    // no screen to capture
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ""}`);
}

export async function toWindow(label) {
  for (const h of await browser.getWindowHandles()) {
    await browser.switchToWindow(h);
    const url = await browser.getUrl();
    if ((label === "quick") === url.includes("quick.html")) return;
  }
  throw new Error(`no ${label} window`);
}

/** Whether a feed row's text includes `text` (read from the DOM, so rows
 *  scrolled partly out of view count too). */
export async function rowWith(text) {
  return browser.execute(
    (t) => [...document.querySelectorAll(".row")].some((r) => r.textContent.includes(t)),
    text,
  );
}

// The feed and the pad list are redrawn on every event, so an element found
// a moment ago may be gone by the time WebDriver clicks it: these click in
// the page, on the element found at that instant.
export async function clickRow(text) {
  const done = await browser.execute((t) => {
    const row = [...document.querySelectorAll(".row")].find((r) => r.textContent.includes(t));
    row?.click();
    return !!row;
  }, text);
  assert.ok(done, `no row with ${text}`);
}

export async function clickPad(name) {
  await waitFor(`pad ${name} in the list`, () =>
    browser.execute((n) => {
      const b = document.querySelector(`#pads .pad[data-pad="${n}"]`);
      b?.click();
      return !!b;
    }, name),
  );
}

/** Whether the quick-note window is mapped on the X screen (WebDriver's
 *  isDisplayed looks at the page, not at whether its window is shown). */
export function quickVisible() {
  try {
    execFileSync("xdotool", ["search", "--onlyvisible", "--name", "^Quick note$"], { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}

/** One tool call through a fresh `pad mcp`, as Agent Zero makes it: a new
 *  process and session per call (initialize, initialized, tools/call over
 *  stdio). Resolves with the result's text; rejects on a tool error.
 *  `client.elicit(params)`, when given, makes it a client with form
 *  elicitation (as Claude Code, VS Code and Cursor are): it answers the
 *  server's `elicitation/create` with what the promise resolves to (a
 *  promise that never resolves leaves the form open), and
 *  `client.cancelled(requestId)` hears a withdrawn form. */
export function mcpCall(tool, args, author = "agent-zero", client = {}) {
  const pad = path.join(path.dirname(APP), "pad");
  const child = spawn(pad, ["mcp"], {
    env: { ...env, PAD_AUTHOR: author, PAD_NO_AUTOSTART: "1" },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const send = (msg) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
  return new Promise((resolve, reject) => {
    let buf = "";
    child.stdout.on("data", (d) => {
      buf += d;
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const msg = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        if (msg.method === "elicitation/create" && client.elicit) {
          client.elicit(msg.params).then((result) => send({ id: msg.id, result }));
        } else if (msg.method === "notifications/cancelled") {
          client.cancelled?.(msg.params.requestId);
        } else if (msg.id === 1) {
          send({ method: "notifications/initialized" });
          send({ id: 2, method: "tools/call", params: { name: tool, arguments: args } });
        } else if (msg.id === 2) {
          child.stdin.end();
          const text = msg.result?.content?.map((c) => c.text).join("\n") ?? JSON.stringify(msg.error);
          msg.result && !msg.result.isError ? resolve(text) : reject(new Error(text));
        }
      }
    });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`pad mcp exited (${code}) before answering`)));
    const capabilities = client.elicit ? { elicitation: { form: {} } } : {};
    send({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities, clientInfo: { name: "e2e", version: "1" } } });
  });
}

/** How many notifications dunst shows now. */
export function notificationsShown() {
  try {
    return Number(execFileSync("dunstctl", ["count", "displayed"]).toString().trim());
  } catch {
    return 0;
  }
}

/** Clicks the button labelled `label` on a shown notification, through
 *  dunst's context menu (scripts/e2e points its dmenu at dmenu_pick.sh);
 *  with `summary`, only on the notification whose summary begins so (a late
 *  notification from an earlier test may be on screen too). */
export function clickNotificationButton(label, summary = "") {
  writeFileSync(path.join(OUT, "dmenu-pick"), `#${label} (${summary}`);
  execFileSync("dunstctl", ["context"]);
}

/** The real screen (ImageMagick on the Xvfb display): WebKitWebDriver's
 *  own screenshots can hang, and miss windows drawn over the app. */
export async function screenshot(name) {
  await sleep(500);
  execFileSync("import", ["-window", "root", path.join(OUT, `${name}.png`)]);
}


/** Launches the app with these saved settings and waits until it has
 *  loaded; returns the milliseconds from launch to ready. */
export async function launch(settings = {}) {
  assert.ok(APP && existsSync(APP), `APP must point at the built app (got ${APP})`);
  mkdirSync(env.PAD_HOME, { recursive: true });
  writeFileSync(path.join(env.PAD_HOME, "app-settings.json"), JSON.stringify(settings));
  driver = spawn(process.env.TAURI_DRIVER ?? "tauri-driver", [], { env, stdio: ["ignore", "inherit", "inherit"] });
  await waitFor("tauri-driver", () => new Promise((r) => {
    const s = net.createConnection(4444, "127.0.0.1");
    s.on("connect", () => { s.end(); r(true); });
    s.on("error", () => r(false));
  }));
  const launched = Date.now();
  browser = await remote({
    hostname: "127.0.0.1",
    port: 4444,
    logLevel: "warn",
    capabilities: {
      browserName: "wry",
      "wdio:enforceWebDriverClassic": true,
      "tauri:options": { application: APP },
    },
  });
  await toWindow("main");
  await waitFor("the app to load", async () => (await browser.$("body").getAttribute("data-ready")) === "true", 30_000);
  return Date.now() - launched;
}

/** Whether an app of this build is still running (exiting). */
function appRunning() {
  try {
    execFileSync("pgrep", ["-f", `^${APP}`], { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}

/** Ends the session and stops tauri-driver, then waits for the app to be
 *  gone: an app still shutting down its engine holds the global hotkey, and
 *  the next file's app would start without it (seen beside stress-ng). */
export async function quit() {
  try {
    await browser?.deleteSession();
  } finally {
    browser = undefined;
    driver?.kill();
    driver = undefined;
  }
  const end = Date.now() + 30_000;
  while (appRunning() && Date.now() < end) await sleep(100);
  if (appRunning()) {
    console.log("# the app was still running 30 s after quit: killed");
    try {
      execFileSync("pkill", ["-KILL", "-f", `^${APP}`]);
    } catch {
      // gone meanwhile
    }
  }
}

/** Types into the quick box. Its window has just been mapped, and on a
 *  busy machine WebKit may call the input "not interactable" for a moment
 *  after it shows (once in CI beside stress-ng): a few tries, as a person
 *  would simply type again. */
export async function typeQuick(text) {
  const input = await browser.$("#quick-input");
  for (let i = 0; ; i++) {
    try {
      await input.setValue(text);
      return;
    } catch (e) {
      if (i >= 10) throw e;
      await sleep(300);
    }
  }
}
