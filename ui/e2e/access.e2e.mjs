// Accessibility, checked by a tool in the real app under Xvfb: axe-core
// (the engine behind Lighthouse's and most CI accessibility checks) runs
// in the webview over every view with entries in it, in the light theme
// and in the dark one (the stylesheet's own dark values applied), for
// WCAG 2 A and AA: contrast computed from the rendered styles, named
// controls and fields, the feed a list of focusable items.

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { browser, call, callAs, clickPad, launch, quit, rowWith, screenshot, waitFor } from "./harness.mjs";

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

before(() => launch());
after(quit);

/** axe's WCAG 2 A/AA violations on the page as it is now, one line each. */
async function violations() {
  const loaded = await browser.execute(() => typeof window.axe !== "undefined");
  if (!loaded) await browser.execute(`${axeSource}; return true;`);
  const found = await browser.executeAsync((done) => {
    window.axe
      .run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] }, resultTypes: ["violations"] })
      .then((r) => done(r.violations.flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(" ")} — ${(n.failureSummary ?? "").replace(/\s+/g, " ").slice(0, 200)}`))))
      .catch((e) => done([`axe failed: ${e}`]));
  });
  return found;
}

/** Applies the stylesheet's own dark rules (every `prefers-color-scheme:
 *  dark` block, as the system's dark mode would); `false` takes them off. */
function dark(on) {
  return browser.execute((on) => {
    document.getElementById("force-dark")?.remove();
    if (on) {
      const rules = [];
      for (const sheet of document.styleSheets) {
        for (const rule of sheet.cssRules) {
          if (rule instanceof CSSMediaRule && rule.conditionText.includes("prefers-color-scheme: dark")) {
            for (const inner of rule.cssRules) rules.push(inner.cssText);
          }
        }
      }
      const style = document.createElement("style");
      style.id = "force-dark";
      style.textContent = rules.join("\n");
      document.head.append(style);
    }
    return getComputedStyle(document.documentElement).getPropertyValue("--bg").trim();
  }, on);
}

async function views() {
  const out = [];
  const check = async (name) => {
    for (const theme of ["light", "dark"]) {
      const bg = await dark(theme === "dark");
      assert.ok(theme === "light" || bg !== "#fbfaf7", `the dark values applied (${bg})`);
      for (const v of await violations()) out.push(`[${name}, ${theme}] ${v}`);
    }
    await dark(false);
  };
  await clickPad("access");
  await waitFor("the feed", () => rowWith("deploy the 5s timeout fix"));
  await browser.execute(() => document.querySelector("#feed .row")?.click());
  await check("feed");
  await browser.$("#inbox-btn").click();
  await waitFor("Needs eyes", async () => /Needs eyes/.test(await browser.$("#view-title").getText()));
  await browser.execute(() => document.querySelector("#feed .row")?.click());
  await check("needs eyes");
  await browser.$("#inbox-btn").click();
  await browser.$("#tasks-btn").click();
  await waitFor("Tasks", async () => /tasks in dependency order/.test(await browser.$("#view-title").getText()));
  await waitFor("the plan's picture", async () => (await browser.$$("#plan .plan-node")).length > 0);
  await check("tasks, the picture");
  await browser.$("#plan-form-btn").click();
  await waitFor("the plan's list", async () => (await browser.$$("#feed .row")).length > 0);
  await check("tasks, the list");
  await browser.$("#plan-form-btn").click();
  await browser.$("#tasks-btn").click();
  await browser.$("#agents-btn").click();
  await check("agents");
  await browser.$("#agents-btn").click();
  await browser.$("#activity-btn").click();
  await check("activity");
  await browser.$("#activity-btn").click();
  return out;
}

test("axe finds no WCAG 2 A/AA violation in any view, light or dark", async () => {
  const handoff = (await call("entry.add", { pad: "access", author: "user", content: "@agent-zero deploy the 5s timeout fix (PR #4821)", tags: ["ops"], to: ["agent-zero"] })).entry;
  await callAs("agent-zero", "entry.add", { pad: "access", kind: "question", reply_to: handoff.id, content: "Which region?", choices: ["eu-west", "us-east"], tags: ["needs_eyes"] });
  await callAs("agent-1", "entry.add", { pad: "access", kind: "task", content: "rotate the staging keys", tags: ["security"] });
  await callAs("agent-2", "entry.add", { pad: "access", kind: "result", content: "**deployed** to eu-west, see https://example.com/run/1", tags: ["needs_eyes", "deploy"] });
  await callAs("agent-3", "entry.add", { pad: "access", kind: "insight", content: "the timeout was the proxy's, not ours" });
  const found = await views();
  await screenshot("access-checked");
  assert.deepEqual(found, [], `axe's violations:\n${found.join("\n")}`);
});

test("the feed is a list of focusable items a screen reader announces; moving focus selects", async () => {
  await clickPad("access");
  await waitFor("the feed", () => rowWith("deploy the 5s timeout fix"));
  const tree = await browser.execute(() => {
    const feed = document.getElementById("feed");
    const rows = [...feed.querySelectorAll(".row")];
    return {
      role: feed.getAttribute("role"),
      label: feed.getAttribute("aria-label"),
      rows: rows.map((r) => ({ role: r.getAttribute("role"), tabindex: r.getAttribute("tabindex"), name: r.getAttribute("aria-label") ?? "" })),
    };
  });
  assert.equal(tree.role, "list");
  assert.ok(tree.label);
  assert.ok(tree.rows.length >= 3);
  for (const r of tree.rows) {
    assert.equal(r.role, "listitem");
    assert.ok(r.tabindex === "0" || r.tabindex === "-1", "focusable");
    assert.match(r.name, /^(note|question|task|result|insight|plan) by /, `announced as what and by whom: ${r.name}`);
  }
  // One row takes Tab; arrows move focus and selection together.
  assert.equal(tree.rows.filter((r) => r.tabindex === "0").length, 1, "one tab stop in the list");
  await browser.execute(() => document.querySelector('#feed .row[tabindex="0"]').focus());
  await browser.keys("ArrowDown");
  const focused = await browser.execute(() => ({ id: document.activeElement?.dataset?.id, selected: document.querySelector("#feed .row.selected")?.dataset.id }));
  assert.ok(focused.id, "focus is on a row");
  assert.equal(focused.id, focused.selected, "the focused row is the selected one");
  // A row focused directly (a screen reader's cursor, a click) keeps the
  // focus once it is selected and the list redrawn.
  const other = await browser.execute(() => {
    const r = [...document.querySelectorAll("#feed .row")].find((x) => !x.classList.contains("selected"));
    r.focus();
    return r.dataset.id;
  });
  await waitFor("the focused row selected", async () =>
    (await browser.execute(() => document.querySelector("#feed .row.selected")?.dataset.id)) === other);
  const kept = await browser.execute(() => document.activeElement?.dataset?.id);
  assert.equal(kept, other, "focus stays on the row that was focused");
  // The export's text has a name: the dialog's title.
  const named = await browser.execute(() => {
    const t = document.getElementById("export-text");
    const by = t.getAttribute("aria-labelledby");
    return by && document.getElementById(by)?.textContent;
  });
  assert.ok(named, "the export's text is named by its title");
});

/** Resizes the main window (X, through xdotool) and waits for the page to see it. */
async function resize(width, height) {
  const ids = execFileSync("xdotool", ["search", "--name", "^Scratchpad$"]).toString().trim().split("\n");
  for (const id of ids) execFileSync("xdotool", ["windowsize", id, String(width), String(height)]);
  await waitFor(`the window at ${width} px`, async () => Math.abs((await browser.execute(() => window.innerWidth)) - width) <= 2);
}

test("a layout a person keeps open: one toolbar row, filters behind Filter, Clear in the pad menu, no list tools on Agents; at 760 px nothing scrolls sideways and an entry opens over the list", async () => {
  await clickPad("access");
  await waitFor("the feed", () => rowWith("deploy the 5s timeout fix"));
  const layout = () => browser.execute(() => {
    const bar = document.getElementById("toolbar");
    const boxes = [...bar.children].map((c) => c.getBoundingClientRect()).filter((b) => b.height > 0);
    const firstRow = Math.min(...boxes.map((b) => b.bottom));
    return {
      // A control starting below the first row's bottom has wrapped.
      rows: boxes.some((b) => b.top >= firstRow - 1) ? 2 : 1,
      sideways: document.documentElement.scrollWidth - window.innerWidth,
      mainSideways: document.querySelector("main").scrollWidth - document.querySelector("main").clientWidth,
    };
  });
  const at = await layout();
  assert.equal(at.rows, 1, "the toolbar is one row at the default size");
  // One place lit in the sidebar at a time, whichever view is on screen.
  const lit = () => browser.execute(() => document.querySelectorAll("#sidebar .active").length);
  assert.equal(await lit(), 1, "the pad alone is lit");
  // A view switches after its list loads: wait for the button's own view
  // before counting what is lit.
  const litIs = (b) => browser.execute((sel) => document.querySelector(sel).classList.contains("active"), b);
  for (const b of ["#inbox-btn", "#all-btn", "#activity-btn", "#agents-btn"]) {
    await browser.$(b).click();
    await waitFor(`${b}'s view`, () => litIs(b));
    assert.equal(await lit(), 1, `one sidebar item lit in ${b}'s view`);
    await browser.$(b).click();
  }
  assert.equal(await browser.$("#filters").isDisplayed(), false, "filters hide behind Filter");
  assert.equal(await browser.$("#clear-btn").isDisplayed(), false, "Clear is in the pad menu");
  await browser.$("#filter-btn").click();
  assert.equal(await browser.$("#filters").isDisplayed(), true);
  assert.equal(await browser.$("#filter-btn").getAttribute("aria-expanded"), "true");
  await browser.$("#filter-btn").click();
  assert.equal(await browser.$("#filters").isDisplayed(), false);
  await browser.$("#pad-menu-btn").click();
  assert.equal(await browser.$("#clear-btn").isDisplayed(), true);
  await browser.keys("Escape");
  await waitFor("the menu closed", async () => !(await browser.$("#clear-btn").isDisplayed()));
  await browser.execute(() => document.querySelector("#feed .row")?.click());
  await screenshot("layout-default");
  await browser.$("#agents-btn").click();
  await waitFor("Agents", async () => await browser.$("#activity").isDisplayed());
  assert.equal(await browser.$("#toolbar").isDisplayed(), false, "no search or filters on Agents");
  assert.equal(await browser.$("#compose").isDisplayed(), false, "no compose on Agents");
  await browser.$("#agents-btn").click();

  await resize(760, 780);
  try {
    await waitFor("the feed", () => rowWith("deploy the 5s timeout fix"));
    await browser.execute(() => document.getElementById("detail-close")?.click());
    const narrow = await layout();
    assert.ok(narrow.sideways <= 0 && narrow.mainSideways <= 0, `nothing scrolls sideways at 760 px: ${JSON.stringify(narrow)}`);
    assert.equal(await browser.$("#detail").isDisplayed(), false, "the list has the room");
    await browser.execute(() => [...document.querySelectorAll("#feed .row")].find((r) => r.textContent.includes("deploy the 5s timeout fix")).click());
    await waitFor("the entry over the list", () => browser.$("#detail").isDisplayed());
    assert.equal(await browser.$("#detail-close").isDisplayed(), true);
    await screenshot("layout-760");
    await browser.$("#detail-close").click();
    await waitFor("back to the list", async () => !(await browser.$("#detail").isDisplayed()));
  } finally {
    await resize(1180, 780);
  }
});
