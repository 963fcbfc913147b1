// End-to-end tests of the real desktop app, driven through tauri-driver and
// WebKitWebDriver with WebdriverIO, under Xvfb with a real D-Bus session and
// a real notification daemon (dunst). Run by scripts/e2e (which sets up the
// display, the bus, the daemon and dbus-monitor), from ./scripts/test.

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  NOTIFY_LOG, OPENED_LOG, browser, call, clickPad, clickRow, freePort, launch, quickVisible, quit, rowWith, screenshot, toWindow, typeQuick, waitFor,
} from "./harness.mjs";

let metricsPort;

before(async () => {
  // Settings as a person saved them: metrics on, served by the app's engine.
  metricsPort = await freePort();
  await launch({ metrics: `127.0.0.1:${metricsPort}` });
});

after(quit);

test("the app started the engine in-process and serves the socket", async () => {
  const hello = await call("hello", { client: "e2e" });
  assert.equal(hello.server, "scratchpad");
  const mode = await browser.$("#engine-mode").getText();
  assert.match(mode, /engine in this app/);
});

test("an entry written over the socket appears in the feed within two seconds", async () => {
  const t0 = Date.now();
  await call("entry.add", { pad: "inbox", content: "agent finding: cache misses doubled", author: "agent-0" });
  await waitFor("the entry in the feed", () => rowWith("cache misses doubled"), 2_000);
  console.log(`# feed latency ${Date.now() - t0} ms`);
});

test("a note typed in the compose box is stored with author user", async () => {
  await browser.$("#compose-text").setValue("typed in the app #ui");
  await browser.$("#compose-save").click();
  const found = await waitFor("the note over the socket", async () => {
    const r = await call("entry.list", { pad: "inbox", tags: ["ui"] });
    return r.entries.find((e) => e.content === "typed in the app");
  });
  assert.equal(found.author, "user");
});

test("the global hotkey opens the quick-note box; Enter stores a tagged entry", async () => {
  assert.equal(quickVisible(), false, "hidden until asked for");
  execFileSync("xdotool", ["key", "ctrl+shift+space"]);
  await waitFor("the quick window on screen", async () => quickVisible());
  await toWindow("quick");
  const input = await browser.$("#quick-input");
  await waitFor("the quick box", () => input.isDisplayed());
  await screenshot("quick-note");
  // Both windows are drawn by one WebKit web process (the quick box is a
  // related view of the main window's): ~70 MiB less than one each.
  const webProcesses = execFileSync("pgrep", ["-c", "-f", "WebKitWebProcess"]).toString().trim();
  assert.equal(webProcesses, "1", "one web process for the main window and the quick box");
  await typeQuick("ship it #release");
  await browser.keys("Enter");
  const found = await waitFor("the quick note over the socket", async () => {
    const r = await call("entry.list", { tags: ["release"] });
    return r.entries[0];
  });
  assert.equal(found.content, "ship it");
  assert.deepEqual(found.tags, ["release"]);
  await waitFor("Enter to hide the box", async () => !quickVisible());
  await toWindow("main");
});

test("Ctrl+K (or the Quick note button) opens the quick box from the window; Shift+Enter writes a second line", async () => {
  assert.equal(quickVisible(), false);
  await browser.$("#search").click();
  await browser.keys(["Control", "k"]);
  await waitFor("the quick window on screen", async () => quickVisible());
  await toWindow("quick");
  const input = await browser.$("#quick-input");
  await waitFor("the quick box", () => input.isDisplayed());
  await typeQuick("plan for friday");
  await browser.keys(["Shift", "Enter"]);
  await browser.keys(["Shift"]);
  await input.addValue("- call the vendor #plans");
  assert.equal(quickVisible(), true, "Shift+Enter is a new line, not a save");
  await browser.keys("Enter");
  const found = await waitFor("the two-line note", async () => (await call("entry.list", { tags: ["plans"] })).entries[0]);
  assert.equal(found.content, "plan for friday\n- call the vendor");
  await waitFor("Enter to hide the box", async () => !quickVisible());
  await toWindow("main");
  await browser.$("#quick-btn").click();
  await waitFor("the quick window from its button", async () => quickVisible());
  await toWindow("quick");
  await browser.keys("Escape");
  await waitFor("Esc to hide it", async () => !quickVisible());
  await toWindow("main");
});

test("content with script or onerror HTML is shown as text and never runs", async () => {
  await call("entry.add", { pad: "inbox", author: "agent-x", content: "<script>window.__pwned = 1</script> and <img src=x onerror=\"window.__pwned = 2\"> here" });
  await waitFor("the hostile entry", () => rowWith("window.__pwned"));
  await clickRow("window.__pwned");
  const detail = await browser.$("#detail .markdown");
  await waitFor("the detail pane", async () => (await detail.getText()).includes("<script>"));
  assert.equal(await browser.execute(() => window.__pwned), null);
  assert.equal(await browser.$$("#detail img").length, 0);
  assert.equal(await browser.$$("#detail script").length, 0);
});

test("a link in an entry opens in the browser, never in the app; a script link is not a link", async () => {
  await call("entry.add", { pad: "inbox", author: "agent-x", content: "the run is at [run 42](https://ci.example.com/run/42) and [this](javascript:alert(1))" });
  await waitFor("the entry", () => rowWith("the run is at"));
  await clickRow("the run is at");
  await waitFor("the link in the detail", async () => (await browser.$$("#detail .markdown a").length) >= 1);
  const hrefs = await browser.execute(() => [...document.querySelectorAll("#detail .markdown a")].map((a) => a.getAttribute("href") ?? ""));
  assert.ok(!hrefs.some((h) => h.startsWith("javascript")), `no script link: ${hrefs}`);
  const at = await browser.execute(() => location.href);
  await browser.execute(() => [...document.querySelectorAll("#detail .markdown a")].find((a) => a.textContent === "run 42").click());
  await waitFor("the browser asked to open it", () => existsSync(OPENED_LOG) && readFileSync(OPENED_LOG, "utf8").includes("https://ci.example.com/run/42"));
  assert.match(await browser.$("#status").getText(), /opened https:\/\/ci\.example\.com\/run\/42 in your browser/);
  assert.equal(await browser.execute(() => location.href), at, "the app did not navigate");
});

test("an agent's needs_eyes entry raises a notification whose action opens it", async () => {
  execFileSync("dunstctl", ["close-all"]);
  const e = (await call("entry.add", { pad: "ops", author: "agent-0", content: "deploy blocked: please look", tags: ["needs_eyes"] })).entry;
  if (NOTIFY_LOG) {
    await waitFor("a Notify call on the session bus", () => readFileSync(NOTIFY_LOG, "utf8").includes("needs your eyes in ops"));
  }
  // The daemon's default action, as a click would fire it.
  await waitFor("dunst to show it", () => {
    try {
      return execFileSync("dunstctl", ["count", "displayed"]).toString().trim() !== "0";
    } catch {
      return false;
    }
  });
  execFileSync("dunstctl", ["action", "0"]);
  await waitFor("the app on the entry", async () => (await browser.$("#detail").getText()).includes(e.id));
  assert.match(await browser.$("#view-title").getText(), /^ops/);
});

test("search finds an entry; clearing a pad asks first", async () => {
  await call("entry.add", { pad: "scratch", content: "quarterly numbers look odd", author: "agent-1" });
  await call("entry.add", { pad: "scratch", content: "second scratch note", author: "agent-1" });
  const search = await browser.$("#search");
  await search.setValue("quarterly");
  await waitFor("a search hit", () => rowWith("quarterly numbers look odd"));
  // A hit says how strong a match it is and what found it.
  const hitRow = await browser.execute(() => [...document.querySelectorAll("#feed .row")].find((r) => r.textContent.includes("quarterly numbers look odd"))?.textContent ?? "");
  assert.match(hitRow, /strong · words/);
  // Why this result? asks the engine to explain the search, for this hit.
  await clickRow("quarterly numbers look odd");
  await waitFor("the toggle", () => browser.$("#why").isExisting());
  await browser.execute(() => { document.getElementById("why").open = true; });
  const why = await browser.$("#why");
  await waitFor("the explanation", async () => (await why.getText()).includes("holds quarterly"));
  const text = await why.getText();
  assert.match(text, /words: #1/);
  assert.match(text, /the query read as keywords, ranked by quarterly/);
  await browser.$("#search").click();
  await browser.keys("Escape");

  await clickPad("scratch");
  await waitFor("the scratch feed", () => rowWith("second scratch note"));
  // Clear is in the pad's menu, not among the toolbar's loudest controls.
  assert.equal(await browser.$("#clear-btn").isDisplayed(), false, "Clear hides in the pad menu");
  await browser.$("#pad-menu-btn").click();
  await browser.$("#clear-btn").click();
  const dialog = await browser.$("#confirm");
  // (No screenshot here: WebKitWebDriver hangs taking one over a modal dialog.)
  await waitFor("the confirmation", () => dialog.getAttribute("open").then((v) => v !== null));
  await browser.$("#confirm button[value=cancel]").click();
  assert.equal((await call("entry.list", { pad: "scratch" })).entries.length, 2, "cancel deletes nothing");
  await browser.$("#pad-menu-btn").click();
  await browser.$("#clear-btn").click();
  await browser.$("#confirm-ok").click();
  await waitFor("the pad to empty", async () => (await call("entry.list", { pad: "scratch" })).entries.length === 0);
});

test("the activity view shows the last hour, tags and pads from stats", async () => {
  await call("entry.add", { pad: "inbox", author: "agent-2", content: "tagged for the chart", tags: ["perf", "needs_eyes"] });
  await browser.$("#activity-btn").click();
  const stats = await call("stats", { activity: true });
  const lastHour = await browser.$("#act-last-hour .act-value");
  await waitFor("the hour's count", async () => (await lastHour.getText()) === String(stats.activity.entries_last_hour));
  assert.ok(stats.activity.entries_last_hour > 0);
  const text = await browser.execute(() => document.getElementById("activity").textContent);
  assert.match(text, /#perf/);
  assert.match(text, /Busiest pads\s*inbox/);
  assert.equal(await browser.$$("#activity svg rect").length, 60, "a bar per minute");
  await screenshot("activity");
  await browser.$("#activity-btn").click();
});

test("the app's engine serves Prometheus metrics when the settings ask", async () => {
  const url = `http://127.0.0.1:${metricsPort}/metrics`;
  assert.equal((await call("stats")).metrics, url);
  const r = await fetch(url);
  assert.equal(r.status, 200);
  const body = await r.text();
  assert.match(body, /^scratchpad_entries_total\{kind="note"\} \d+$/m);
  assert.match(body, /^scratchpad_active_pads \d+$/m);
  assert.equal((await fetch(url, { method: "POST" })).status, 405);
});

test("a note that supersedes another takes its place in the feed; Replace… writes the current one", async () => {
  await clickPad("inbox");
  const old = (await call("entry.add", { pad: "inbox", author: "agent-0", content: "staging db lives on db-1.internal" })).entry;
  await waitFor("the older note", () => rowWith("db-1.internal"));
  const current = (await call("entry.add", { pad: "inbox", author: "agent-0", content: "staging db moved to db-2.internal", supersedes: old.id })).entry;
  await waitFor("the current note, marked", () =>
    browser.execute(() => [...document.querySelectorAll(".row")].some((r) => r.textContent.includes("db-2.internal") && r.textContent.includes("replaces an older note"))));
  await waitFor("the older note gone from the feed", async () => !(await rowWith("db-1.internal")));
  await clickRow("db-2.internal");
  await waitFor("what it replaces, in the detail", async () => (await browser.$("#detail-main").getText()).includes(`replaces: ${old.id}`));
  const clicked = await browser.execute(() => {
    const b = [...document.querySelectorAll("#detail-main button")].find((x) => x.textContent === "Replace…");
    b?.click();
    return !!b;
  });
  assert.ok(clicked, "a Replace… button");
  await waitFor("the replacing editor", () => browser.$("#replacing-line").isDisplayed());
  await browser.$("#edit-text").setValue("staging db moved to db-3.internal");
  await browser.$("#edit-save").click();
  await waitFor("the person's current note", () => rowWith("db-3.internal"));
  await waitFor("the note it replaced gone from the feed", async () => !(await rowWith("db-2.internal")));
  const all = await call("entry.list", { pad: "inbox", include_superseded: true });
  const mine = all.entries.find((e) => e.content === "staging db moved to db-3.internal");
  assert.equal(mine.author, "user");
  assert.equal(mine.supersedes, current.id);
  assert.equal(all.entries.find((e) => e.id === current.id).superseded_by, mine.id, "kept, marked");
});

test("screenshot of the main window with a live feed", async () => {
  await clickPad("inbox");
  for (const [author, content, tags, kind] of [
    ["agent-research", "**Finding:** the login retries three times before failing; see `auth/retry.rs`", ["login"], "insight"],
    ["agent-0", "Plan: migrate the sessions table, then flip the flag", ["migration"], "plan"],
    ["agent-ops", "Deploy to staging is green ✅", ["deploy"], "result"],
  ]) {
    await call("entry.add", { pad: "inbox", author, content, tags, kind });
  }
  await waitFor("the finding", () => rowWith("Finding:"));
  await clickRow("Finding:");
  await screenshot("main-window");
});
