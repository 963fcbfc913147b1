// Settings: a new quick-note hotkey replaces the old one at once, muting
// stops notifications, a hotkey the system cannot take is refused with a
// reason, and the choices are saved for the next start.

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { NOTIFY_LOG, browser, call, env, launch, quickVisible, quit, sleep, waitFor } from "./harness.mjs";

before(() => launch({}));
after(quit);

async function saveSettings(fields) {
  await browser.$("#settings-btn").click();
  const dialog = await browser.$("#settings-dialog");
  await waitFor("the settings dialog", () => dialog.getAttribute("open").then((v) => v !== null));
  await browser.execute((f) => {
    const form = document.getElementById("settings-form");
    for (const [name, value] of Object.entries(f)) {
      const input = form.elements.namedItem(name);
      if (input.type === "checkbox") input.checked = value;
      else input.value = value;
    }
  }, fields);
  await browser.$("#settings-save").click();
}


test("a hotkey the system cannot use is refused with the reason", async () => {
  await saveSettings({ hotkey: "Ctrl+Nonsense" });
  await waitFor("the error", async () => (await browser.$("#settings-error").getText()).includes("Ctrl+Nonsense"));
  const said = await browser.$("#settings-error").getText();
  assert.match(said, /is not a key combination: write modifiers and one key joined by \+, e\.g\. Ctrl\+Shift\+Space/);
  assert.doesNotMatch(said, /muda|report/i, "no library error asking to report a bug");
  assert.notEqual(await browser.$("#settings-dialog").getAttribute("open"), null, "the dialog stays open");
  await browser.keys("Escape");
});

test("a new hotkey replaces the old one, and muting stops notifications", async () => {
  await saveSettings({ hotkey: "Alt+N", notifications: false });
  await waitFor("the dialog to close", async () => (await browser.$("#settings-dialog").getAttribute("open")) === null);
  const saved = JSON.parse(readFileSync(path.join(env.PAD_HOME, "app-settings.json"), "utf8"));
  assert.equal(saved.hotkey, "Alt+N");
  assert.equal(saved.notifications, false);

  execFileSync("xdotool", ["key", "ctrl+shift+space"]);
  await sleep(1000);
  assert.equal(quickVisible(), false, "the old hotkey is gone");
  execFileSync("xdotool", ["key", "alt+n"]);
  await waitFor("the quick box on the new hotkey", async () => quickVisible());
  execFileSync("xdotool", ["key", "Escape"]);
  await waitFor("Esc to hide it", async () => !quickVisible());

  await call("entry.add", { pad: "ops", author: "agent-5", content: "muted: nobody should be told", tags: ["needs_eyes"] });
  await sleep(2000);
  if (NOTIFY_LOG) assert.ok(!readFileSync(NOTIFY_LOG, "utf8").includes("muted: nobody should be told"), "no notification while muted");
});

test("the meaning-search model is a setting, saved for the app's next start", async () => {
  await saveSettings({ model: "multilingual-e5-small" });
  await waitFor("the dialog to close", async () => (await browser.$("#settings-dialog").getAttribute("open")) === null);
  const saved = JSON.parse(readFileSync(path.join(env.PAD_HOME, "app-settings.json"), "utf8"));
  assert.equal(saved.model, "multilingual-e5-small");
  await browser.$("#settings-btn").click();
  assert.equal(await browser.execute(() => document.getElementById("settings-form").elements.namedItem("model").value), "multilingual-e5-small");
  await browser.keys("Escape");
  await saveSettings({ model: "" });
  await waitFor("back to the default", async () => JSON.parse(readFileSync(path.join(env.PAD_HOME, "app-settings.json"), "utf8")).model === null);
});
