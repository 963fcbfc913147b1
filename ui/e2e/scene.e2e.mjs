// The README's pictures of the main window (docs/img/app-main.png and
// app-main-760.png are this test's screenshots `readme-main.png` and
// `readme-main-760.png`, at the default size and 760 px): a pad as a person and their agents
// use it — a plan, a task an agent holds, a finding, a result, a question
// waiting for the person — with the plan open, rendered as markdown.

import { execFileSync } from "node:child_process";
import path from "node:path";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { OUT, browser, call, clickPad, clickRow, launch, quit, rowWith, screenshot, waitFor } from "./harness.mjs";

before(() => launch({ pad: "inbox" }));
after(quit);

test("a working pad: every kind of entry told apart, the plan rendered, a question waiting", async () => {
  const pad = "staging-move";
  const add = (author, kind, content, tags = []) => call("entry.add", { pad, author, kind, content, tags });
  await add("user", "note", "Keep the old cluster up until Friday, just in case", ["staging"]);
  const plan = (await add(
    "agent-zero",
    "plan",
    "Move staging to the new cluster\n\n1. snapshot the staging DB\n2. migrate the `sessions` table\n3. flip the traffic flag\n4. watch error rates for an hour",
    ["staging"],
  )).entry;
  await add("agent-zero", "task", "Snapshot the staging DB before the migration");
  await call("task.claim", { pad, agent: "agent-zero" });
  await add("agent-research", "insight", "**Finding:** the login retries three times before failing, which doubles the load during a failover; see `auth/retry.rs`", ["login"]);
  await add("agent-ops", "result", "Staging deploy is green: 312 tests passed, p99 41 ms", ["deploy"]);
  await call("ask", { pad, author: "agent-zero", content: "Snapshot done (4.2 GB). Flip traffic to the new cluster now?", choices: ["approve", "deny"], wait_seconds: 0 });

  await clickPad(pad);
  await waitFor("the pad's entries", () => rowWith("Flip traffic to the new cluster"));
  await clickRow("Move staging to the new cluster");
  await waitFor("the plan rendered as a list", async () => (await browser.$$("#detail ol li")).length === 4);
  assert.match(await browser.$("#detail").getText(), /migrate the sessions table/);
  const row = await browser.execute(() => [...document.querySelectorAll(".row")].map((r) => r.textContent).find((t) => t.includes("Move staging")) ?? "");
  assert.match(row, /new cluster · snapshot the staging DB · migrate/, "the row keeps the plan's steps apart");
  assert.equal((await call("entry.get", { id: plan.id })).entry.kind, "plan");
  // The window alone, without the question's notification over it (the
  // README shows notifications in pictures of their own).
  execFileSync("dunstctl", ["close-all"]);
  await screenshot("readme-main");
  const r = await browser.getWindowRect();
  const file = path.join(OUT, "readme-main.png");
  execFileSync("convert", [file, "-crop", `${r.width}x${r.height}+${Math.max(0, r.x)}+${Math.max(0, r.y)}`, "+repage", file]);

  // The same at 760 px wide (docs/img/app-main-760.png), the plan open.
  const ids = execFileSync("xdotool", ["search", "--name", "^Scratchpad$"]).toString().trim().split("\n");
  const resize = async (w, h) => {
    for (const id of ids) execFileSync("xdotool", ["windowsize", id, String(w), String(h)]);
    await waitFor(`the window at ${w} px`, async () => Math.abs((await browser.execute(() => window.innerWidth)) - w) <= 2);
  };
  await resize(760, r.height);
  try {
    await clickRow("Move staging to the new cluster");
    await waitFor("the plan open", async () => (await browser.$$("#detail ol li")).length === 4);
    execFileSync("dunstctl", ["close-all"]);
    await screenshot("readme-main-760");
    const narrow = await browser.getWindowRect();
    const small = path.join(OUT, "readme-main-760.png");
    execFileSync("convert", [small, "-crop", `${narrow.width}x${narrow.height}+${Math.max(0, narrow.x)}+${Math.max(0, narrow.y)}`, "+repage", small]);
  } finally {
    await resize(r.width, r.height);
  }
});
