// The window a person keeps open all day, in the real app under Xvfb,
// D-Bus and dunst: an agent's edit never wipes the person's; actions name
// the pad they act on and are off where there is none; a waiting question
// stays on top of Needs eyes, shows whether the agent still waits, and its
// choices read by meaning; replying or "done looking" empties Needs eyes,
// which groups notes by agent and pad; replies fold under the note they
// answer; agents and the person are told apart.

import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  APP, NOTIFY_LOG, browser, env, call, callAs, clickNotificationButton, clickPad, clickRow, launch, mcpCall, notificationsShown, quit, rowWith,
  screenshot, sleep, waitFor,
} from "./harness.mjs";

before(() => launch());
after(quit);

const text = (sel) => browser.execute((s) => document.querySelector(s)?.textContent ?? "", sel);

test("an agent's edit and reply while the person edits keep the person's text; saving is a conflict the person decides", async () => {
  const e = (await call("entry.add", { pad: "edits", author: "user", content: "draft: the launch is on Friday" })).entry;
  await clickPad("edits");
  await waitFor("the draft in the feed", () => rowWith("draft: the launch"));
  await clickRow("draft: the launch");
  await browser.keys("e");
  const ta = await browser.$("#edit-text");
  await ta.waitForExist();
  await ta.setValue("draft: the launch is on Friday, after the review");
  await callAs("agent-x", "entry.add", { pad: "edits", reply_to: e.id, content: "noted" });
  await callAs("agent-x", "entry.update", { id: e.id, content: "draft: the launch moved to Monday" });
  await waitFor("their change beside the editor", async () => /moved to Monday/.test(await text("#edit-theirs")));
  assert.equal(await browser.$("#edit-text").getValue(), "draft: the launch is on Friday, after the review", "the person's typing is kept");
  await screenshot("edit-kept");
  await browser.$("#edit-save").click();
  await waitFor("the conflict said", async () => /Not saved/.test(await text("#edit-theirs")));
  assert.equal((await call("entry.get", { id: e.id })).entry.content, "draft: the launch moved to Monday", "nothing overwritten silently");
  await browser.$("#edit-overwrite").click();
  await waitFor("the person's text saved", async () => (await call("entry.get", { id: e.id })).entry.content === "draft: the launch is on Friday, after the review");
});

test("actions name the pad they act on, and are off in Needs eyes and Activity", async () => {
  await call("entry.add", { pad: "proj-actions", author: "agent-1", content: "a note in proj-actions" });
  await clickPad("proj-actions");
  await waitFor("the pad's feed", () => rowWith("a note in proj-actions"));
  assert.match(await text("#clear-btn"), /Clear proj-actions/);
  assert.match(await text("#export-btn"), /Export proj-actions/);
  assert.equal(await browser.$("#compose-text").isEnabled(), true);
  await browser.$("#compose-text").setValue("written in proj-actions");
  await browser.keys(["Control", "Enter"]);
  await waitFor("saved, saying where", async () => /saved to proj-actions/.test(await text("#status")));
  await browser.$("#inbox-btn").click();
  await waitFor("Needs eyes", async () => /Needs eyes/.test(await text("#view-title")));
  for (const id of ["#clear-btn", "#export-btn", "#compose-text", "#trash-btn"]) {
    assert.equal(await browser.$(id).isEnabled(), false, `${id} is off in Needs eyes`);
  }
  await browser.keys(["Shift", "C"]);
  assert.equal(await browser.$("#confirm").getAttribute("open"), null, "Shift+C asks nothing off a pad");
  await browser.$("#activity-btn").click();
  assert.equal(await browser.$("#clear-btn").isEnabled(), false, "off in Activity");
  await browser.$("#activity-btn").click();
});

test("a waiting question stays on top of Needs eyes, reads its choices by meaning, and says when the agent stopped waiting", async () => {
  const asked = mcpCall("ask_person", { question: "The staging cluster costs $1,900/month. Approve the upgrade?", choices: ["approve", "deny"], wait_seconds: 4 });
  asked.catch(() => undefined);
  await waitFor("the question", async () => (await call("entry.list", { kind: "question", tags: ["needs_eyes"] })).entries.some((e) => e.content.includes("$1,900")));
  for (let i = 0; i < 8; i++) await call("entry.add", { pad: "inbox", author: "agent-2", content: `later note ${i}`, tags: ["needs_eyes"] });
  await browser.$("#inbox-btn").click();
  await waitFor("the question first", async () => /\$1,900/.test(await text("#feed .row")));
  await clickRow("$1,900");
  await waitFor("it says the agent waits", async () => /is waiting for your answer/.test(await text("#waiting-line")));
  const classes = await browser.execute(() => [...document.querySelectorAll("#reply-choices button")].map((b) => `${b.textContent}:${b.className}`));
  assert.deepEqual(classes, ["approve:choice choice-go", "deny:choice choice-stop"]);
  await screenshot("needs-eyes-question");
  await asked;
  await waitFor("it says the agent stopped waiting", async () => /not waiting now/.test(await text("#waiting-line")));

  // Done looking at all: the notes go, the open question stays.
  await browser.$("#eyes-done").click();
  await waitFor("only the question left", async () => {
    const left = (await call("entry.list", { tags: ["needs_eyes"] })).entries.filter((e) => e.author !== "user");
    return left.length === 1 && left[0].kind === "question";
  });
  // Replying to a needs_eyes note takes it out of Needs eyes.
  const note = (await call("entry.add", { pad: "inbox", author: "agent-3", content: "look at the flaky test", tags: ["needs_eyes"] })).entry;
  await waitFor("the note listed", () => rowWith("look at the flaky test"));
  await clickRow("look at the flaky test");
  await browser.$("#reply-text").setValue("on it");
  await browser.$("#reply-send").click();
  await waitFor("the note left Needs eyes", async () => !(await call("entry.get", { id: note.id })).entry.tags.includes("needs_eyes"));
  await browser.$("#inbox-btn").click();
});

test("agents and the person are told apart: a colour and initials per agent, 'you' for the person", async () => {
  // Colours are given in order of first appearance and wrap after ten
  // (authors.ts): the agents of earlier tests would decide which these get.
  await browser.execute(() => localStorage.removeItem("agent-colours"));
  await call("entry.add", { pad: "colours", author: "agent-zero", content: "from agent zero" });
  await call("entry.add", { pad: "colours", author: "claude", content: "from claude" });
  for (const a of ["codex", "gemini", "agent-9", "helper"]) await call("entry.add", { pad: "colours", author: a, content: `from ${a}` });
  await call("entry.add", { pad: "colours", author: "user", content: "from me" });
  await clickPad("colours");
  await waitFor("the notes", () => rowWith("from me"));
  const chips = await browser.execute(() =>
    [...document.querySelectorAll("#feed .row")].map((r) => {
      const a = r.querySelector(".avatar");
      return [a?.textContent, getComputedStyle(a).backgroundColor];
    }),
  );
  const byText = Object.fromEntries(chips);
  assert.deepEqual(Object.keys(byText).sort(), ["A9", "AZ", "CL", "CO", "GE", "HE", "you"]);
  assert.equal(new Set(Object.values(byText)).size, 7, "six agents, six colours, and the person's own");
  await screenshot("authors");
});

test("a burst of an agent's needs_eyes notes is one notification, and its Done looking clears them all", async () => {
  await sleep(2000); // what earlier tests raised is gathered, then shown: let it come, then clear it
  execFileSync("dunstctl", ["close-all"]);
  const ids = [];
  for (let i = 0; i < 8; i++) {
    ids.push((await call("entry.add", { pad: "flood", author: "agent-9", content: `flood note ${i}`, tags: ["needs_eyes"] })).entry.id);
  }
  const ci = (await call("entry.add", { pad: "builds", author: "ci", content: "CI failed on main", tags: ["needs_eyes"] })).entry;
  await waitFor("a notification", () => notificationsShown() >= 1);
  await sleep(2500);
  assert.equal(notificationsShown(), 2, "one notification for eight notes, one for the CI note");
  if (NOTIFY_LOG) assert.match(readFileSync(NOTIFY_LOG, "utf8"), /agent-9: 8 notes need your eyes in flood/);
  await screenshot("eyes-summary");
  // Needs eyes groups by agent and pad: the CI failure is not buried among the alarms.
  await browser.$("#inbox-btn").click();
  const heads = () => browser.execute(() => [...document.querySelectorAll("#feed .eyes-group-name")].map((h) => h.textContent));
  await waitFor("the groups", async () => {
    const h = await heads();
    return h.includes("agent-9 in flood · 8 notes") && h.includes("ci in builds · 1 note");
  });
  await screenshot("eyes-groups");
  await browser.$("#inbox-btn").click();
  await call("entry.update", { id: ci.id, tags: [] });
  clickNotificationButton("Done looking", "agent-9");
  await waitFor("all eight done", async () => {
    for (const id of ids) if ((await call("entry.get", { id })).entry.tags.includes("needs_eyes")) return false;
    return true;
  });
});

test("replies fold under the note they answer: the note says how many and the latest, and opens them in place", async () => {
  const root = (await call("entry.add", { pad: "threads", author: "user", content: "@agent-x draft the release notes" })).entry;
  const first = (await callAs("agent-x", "entry.add", { pad: "threads", reply_to: root.id, content: "on it: reading the changelog" })).entry;
  await callAs("agent-x", "entry.add", { pad: "threads", reply_to: first.id, content: "the changelog is missing 3 PRs" });
  await callAs("agent-x", "entry.add", { pad: "threads", reply_to: root.id, kind: "result", content: "release notes drafted" });
  await call("entry.add", { pad: "threads", author: "user", content: "a note of its own" });
  await clickPad("threads");
  await waitFor("the thread's root", () => rowWith("draft the release notes"));
  const rowTexts = () => browser.execute(() => [...document.querySelectorAll("#feed .row")].map((r) => r.textContent));
  let rows = await rowTexts();
  assert.equal(rows.length, 2, "one row per thread, not one per reply");
  const rootRow = rows.find((t) => t.includes("draft the release notes"));
  assert.match(rootRow, /▸ 3 replies/);
  assert.match(rootRow, /latest: agent-x .* release notes drafted/);
  await screenshot("thread-folded");
  await browser.execute(() => document.querySelector("#feed .fold-toggle").click());
  await waitFor("the replies in place", async () => (await rowTexts()).length === 5);
  rows = await rowTexts();
  assert.ok(rows[1].includes("draft the release notes") || rows[0].includes("draft the release notes"));
  const inThread = await browser.execute(() => [...document.querySelectorAll("#feed .row.in-thread")].map((r) => r.textContent));
  assert.equal(inThread.length, 3);
  assert.match(inThread[0], /on it: reading the changelog/, "oldest first");
  assert.match(inThread[1], /missing 3 PRs/);
  assert.match(inThread[1], /↳ re “on it: reading the changelog”/, "a reply says what it answers");
  assert.match(await browser.execute(() => document.querySelector("#feed .fold-toggle").textContent), /▾ 3 replies/);
  await screenshot("thread-open");
  await browser.execute(() => document.querySelector("#feed .fold-toggle").click());
  await waitFor("folded again", async () => (await rowTexts()).length === 2);
});

test("a pad that expires while the app is open moves to Archived, with a notice, Read and Restore", async () => {
  await call("entry.add", { pad: "short-lived", author: "agent-4", content: "a note that outlives its pad" });
  await call("pad.configure", { name: "short-lived", ttl_seconds: 1 });
  // The engine sweeps every 30 s.
  await waitFor("the pad under Archived", async () => /short-lived/.test(await text("#archived")), 45_000);
  assert.match(await text("#status"), /short-lived was idle past its expiry and is archived/);
  assert.ok(!(await browser.$('#pads .pad[data-pad="short-lived"]').isExisting()), "gone from the live pads");
  await browser.execute(() => {
    document.getElementById("archived").open = true;
  });
  await screenshot("archived");
  // Read without restoring: the pad as it is, read-only.
  await browser.execute(() => document.querySelector('#archived .archived-pad[data-pad="short-lived"] .read').click());
  await waitFor("the archived pad, read-only", async () =>
    /short-lived \(archived, read-only\)/.test(await text("#export-title")) && (await browser.$("#export-text").getValue()).includes("a note that outlives its pad"));
  assert.equal(await browser.$("#export-text").getAttribute("readonly"), "true");
  await browser.$("#export-dialog button[value=close]").click();
  await browser.execute(() => document.querySelector('#archived .archived-pad[data-pad="short-lived"] .restore').click());
  await waitFor("the pad live again", async () => (await call("pad.list")).pads.some((p) => p.name === "short-lived"));
  await waitFor("its note in the feed", () => rowWith("a note that outlives its pad"));
  await call("pad.configure", { name: "short-lived", ttl_seconds: null });
});

/** The ids of the app's main window on the X screen (visible ones only
 *  with `visible`). */
function mainWindows(visible = false) {
  const args = ["search", ...(visible ? ["--onlyvisible"] : []), "--name", "^Scratchpad$"];
  try {
    return execFileSync("xdotool", args, { stdio: "pipe" }).toString().trim().split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

test("a second launch shows the running app and exits; with no tray, closing the window keeps it reachable", async () => {
  assert.equal(mainWindows(true).length, 1);
  const second = spawnSync(APP, [], { env, timeout: 30_000, encoding: "utf8" });
  assert.equal(second.status, 0, `the second launch exits at once: ${second.stderr}`);
  assert.match(second.stderr, /already running/);
  assert.equal(mainWindows().length, 1, "still one main window");
  // A note needing eyes notifies once, not once per instance.
  const before = NOTIFY_LOG ? readFileSync(NOTIFY_LOG, "utf8").split("single-instance ping").length : 0;
  await call("entry.add", { pad: "inbox", author: "agent-5", content: "single-instance ping", tags: ["needs_eyes"] });
  await sleep(3000);
  if (NOTIFY_LOG) assert.equal(readFileSync(NOTIFY_LOG, "utf8").split("single-instance ping").length - before, 1, "one Notify call");

  // No StatusNotifierWatcher runs in this session: a close request must not
  // hide the window where nothing could bring it back.
  const [win] = mainWindows(true);
  execFileSync("python3", [new URL("./wm_close.py", import.meta.url).pathname, win]);
  await sleep(1500);
  assert.equal(mainWindows(true).length, 1, "the window is still on screen (minimised at most)");
  assert.equal((await call("stats")).version.length > 0, true, "the app and its engine still run");
});

test("New pad is a dialog that offers the name the engine takes", async () => {
  await browser.$("#new-pad-btn").click();
  const input = await browser.$("#new-pad-name");
  await input.waitForDisplayed();
  await input.setValue("Client Work / Q4");
  await waitFor("the fixed name offered", async () => /client-work-q4/.test(await text("#new-pad-hint")));
  assert.match(await text("#new-pad-ok"), /Create client-work-q4/);
  await browser.keys("Enter");
  await waitFor("the new pad open", async () => /client-work-q4/.test(await text("#view-title")));
  const made = (await call("pad.touch", { name: "client-work-q4" })).pad;
  assert.equal(made.name, "client-work-q4", "the engine has it");
  assert.equal(made.ttl_seconds, null, "the person's own pad is kept: it never expires");
  assert.equal(made.expires_at, null);
});

test("tags are editable, and clicking one filters the feed to it; a pin is drawn, not an emoji", async () => {
  const e = (await call("entry.add", { pad: "tagging", author: "user", content: "tag me", tags: ["draft"] })).entry;
  await call("entry.add", { pad: "tagging", author: "agent-1", content: "untagged neighbour" });
  await call("entry.update", { id: e.id, pinned: true });
  await clickPad("tagging");
  await waitFor("both notes", () => rowWith("untagged neighbour"));
  assert.ok(await browser.$('#feed .row svg.pin').isExisting(), "the pin is an SVG");
  await clickRow("tag me");
  await browser.keys("e");
  const tags = await browser.$("#edit-tags");
  await tags.waitForExist();
  await tags.setValue("#draft #review");
  await browser.$("#edit-save").click();
  await waitFor("the tags saved", async () => (await call("entry.get", { id: e.id })).entry.tags.join(",") === "draft,review");
  await waitFor("the tag in the detail", async () => /#review/.test(await text("#detail-main .tags")));
  await browser.execute(() => [...document.querySelectorAll("#detail-main .tags .tag")].find((t) => t.textContent === "#review").click());
  await waitFor("the feed filtered to #review", async () => !(await rowWith("untagged neighbour")) && (await rowWith("tag me")));
  assert.equal(await browser.$("#f-tag").getValue(), "review");
  await browser.$("#f-tag").clearValue();
  await browser.keys("Enter");
});

test("the tasks view says who holds each task and counts failed ones; rows read as text, not markdown; pads hold still", async () => {
  await call("entry.add", { pad: "work", author: "planner", kind: "task", content: "## Port\n**the handlers** to `clap 5`" });
  await call("entry.add", { pad: "work", author: "planner", kind: "task", content: "a task that fails" });
  await callAs("worker-1", "task.claim", { pad: "work", agent: "worker-1" });
  const second = await callAs("worker-2", "task.claim", { pad: "work", agent: "worker-2" });
  await callAs("worker-2", "task.fail", { id: second.entry.id, agent: "worker-2", error: "no network" });
  await clickPad("work");
  await waitFor("the feed", () => rowWith("the handlers"));
  const row = await browser.execute(() => [...document.querySelectorAll("#feed .row")].map((r) => r.textContent).find((t) => t.includes("the handlers")));
  assert.ok(!/##|\*\*|`/.test(row), `no markdown syntax in the row: ${row}`);
  // One vocabulary for where a task stands, in the feed as in the tasks view.
  assert.ok(/running/.test(row) && !/doing/.test(row), `a held task reads "running": ${row}`);
  await browser.$("#tasks-btn").click();
  await waitFor("the tasks view", async () => /tasks in dependency order/.test(await text("#view-title")));
  assert.match(await text("#view-title"), /\d+ ready, \d+ waiting, 1 running, \d+ blocked, \d+ done, 1 failed/);
  // The list form (the picture is plan.e2e.mjs's).
  await browser.$("#plan-form-btn").click();
  await waitFor("the list", async () => (await browser.$$("#feed .row")).length > 0);
  const rows = await browser.execute(() => [...document.querySelectorAll("#feed .row")].map((r) => r.textContent));
  assert.ok(rows.some((t) => /held by.*worker-1/.test(t) && t.includes("the handlers")), rows.join("\n"));
  // A claim whose lease runs out is seen to go back, not silently.
  await call("entry.add", { pad: "work", author: "planner", kind: "task", content: "a task whose worker vanishes" });
  await callAs("worker-3", "task.claim", { pad: "work", agent: "worker-3", lease_seconds: 1 });
  await waitFor("the lapsed lease shown", async () => {
    const now = await browser.execute(() => [...document.querySelectorAll("#feed .row")].map((r) => r.textContent));
    return now.some((t) => /the lease of.*worker-3.*ran out/.test(t) && t.includes("worker vanishes"));
  }, 15_000);
  await browser.$("#plan-form-btn").click();
  await browser.$("#tasks-btn").click();

  // Agents writing to pads do not reorder the list under the cursor.
  const order = () => browser.execute(() => [...document.querySelectorAll("#pads .pad")].map((b) => b.dataset.pad));
  const before = await order();
  await call("entry.add", { pad: before[before.length - 1], author: "agent-1", content: "a write to the last pad" });
  await sleep(1000);
  assert.deepEqual(await order(), before);
});

test("a task reads as titles and times, and the person can mark it done, fail it, unblock it or reopen it", async () => {
  const migrate = (await call("entry.add", { pad: "chores", author: "planner", kind: "task", content: "migrate the billing db\nstep by step" })).entry;
  const swap = (await call("entry.add", { pad: "chores", author: "planner", kind: "task", content: "switch traffic to the new db", depends_on: [migrate.id] })).entry;
  const stuck = (await call("entry.add", { pad: "chores", author: "planner", kind: "task", content: "renew the TLS certificate" })).entry;
  await callAs("worker-7", "entry.update", { id: stuck.id, status: "blocked" });
  await callAs("worker-7", "task.claim", { pad: "chores", agent: "worker-7", lease_seconds: 600 });
  await clickPad("chores");
  await waitFor("the feed", () => rowWith("switch traffic"));
  await clickRow("switch traffic");
  await waitFor("what it waits on, by title", async () => (await text("#detail-main")).includes("waits on: “migrate the billing db”"));
  assert.ok(!(await text("#detail-main")).includes(migrate.id), "no raw id for what it waits on");
  await clickRow("migrate the billing db");
  await waitFor("the lease in words", async () => /lease: runs out in (10m|9m)/.test(await text("#detail-main")));
  const buttonIn = (label) => browser.execute((l) => {
    const b = [...document.querySelectorAll("#detail-main .actions button")].find((x) => x.textContent === l);
    b?.click();
    return !!b;
  }, label);
  assert.ok(await buttonIn("Mark done"));
  await waitFor("done", async () => (await call("entry.get", { id: migrate.id })).entry.status === "done");
  await waitFor("Reopen offered", async () => (await text("#detail-main .actions")).includes("Reopen"));
  await clickRow("renew the TLS certificate");
  await waitFor("Unblock offered", async () => (await text("#detail-main .actions")).includes("Unblock"));
  assert.ok(await buttonIn("Unblock"));
  await waitFor("back in the queue", async () => (await call("entry.get", { id: stuck.id })).entry.status === "todo");
  await clickRow("switch traffic");
  await waitFor("its actions", async () => (await text("#detail-main .actions")).includes("Mark failed"));
  assert.ok(await buttonIn("Mark failed"));
  await waitFor("failed", async () => (await call("entry.get", { id: swap.id })).entry.status === "failed");
});

test("All pads is one live feed across every pad", async () => {
  await call("entry.add", { pad: "pad-one", author: "agent-1", content: "from pad one" });
  await call("entry.add", { pad: "pad-two", author: "agent-2", content: "from pad two" });
  await browser.$("#all-btn").click();
  await waitFor("both pads' notes", async () => (await rowWith("from pad one")) && (await rowWith("from pad two")));
  assert.match(await text("#view-title"), /^All pads/);
  assert.equal(await browser.$("#clear-btn").isEnabled(), false, "no single pad to clear");
  await call("entry.add", { pad: "pad-three", author: "agent-3", content: "live from pad three" });
  await waitFor("the new pad's note, live", () => rowWith("live from pad three"), 3_000);
  await browser.$("#all-btn").click();
});

test("rows are as tall as their content: a one-liner is short, a long note shows more lines, and none overlap", async () => {
  await call("entry.add", { pad: "rows", author: "agent-1", content: "short one" });
  const long = Array.from({ length: 8 }, (_, i) => `line ${i + 1} of a long note that says a good deal about the deploy`).join("\n");
  await call("entry.add", { pad: "rows", author: "agent-1", content: long });
  await call("entry.add", { pad: "rows", author: "agent-2", content: "another short one" });
  await clickPad("rows");
  await waitFor("the three rows", async () => (await rowWith("short one")) && (await rowWith("line 1 of a long")) && (await rowWith("another short one")));
  const boxes = await browser.execute(() =>
    [...document.querySelectorAll("#feed .row")].map((r) => ({ text: r.textContent, top: r.offsetTop, height: r.offsetHeight })).sort((a, b) => a.top - b.top));
  const short = boxes.find((b) => b.text.includes("another short one"));
  const tall = boxes.find((b) => b.text.includes("line 1 of a long"));
  assert.ok(tall.height > short.height * 1.8, `the long note's row (${tall.height}px) is taller than a one-liner's (${short.height}px)`);
  assert.ok(short.height < 88, `a one-liner's row is ${short.height}px, less than the old fixed 88`);
  for (let i = 1; i < boxes.length; i++) {
    assert.ok(boxes[i].top >= boxes[i - 1].top + boxes[i - 1].height - 1, `row ${i} starts after row ${i - 1} ends`);
  }
  // Measuring settles: an idle list does not redraw (no scrollbar and
  // row heights chasing each other).
  const draws = () => browser.execute(() => Number(document.getElementById("feed").dataset.draws));
  await sleep(500);
  const settled = await draws();
  await sleep(1500);
  assert.equal(await draws(), settled, "the idle feed drew again");
  await screenshot("rows-as-tall-as-content");
});
