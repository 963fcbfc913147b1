// The two-way conversation in the real app under Xvfb, D-Bus and dunst:
// an agent asks through `pad mcp` and the person answers from the
// notification, from the entry's Reply box, or from the quick box.

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  NOTIFY_LOG, browser, call, clickNotificationButton, clickPad, clickRow, launch, mcpCall, notificationsShown, quickVisible, quit, rowWith, sleep, typeQuick,
  screenshot, toWindow, waitFor,
} from "./harness.mjs";

before(() => launch());
after(quit);

const detailText = () => browser.$("#detail").getText();
/** An element's text, read in the page (WebDriver's getText reads nothing
 *  in the undecorated quick window). */
const textOf = (id) => browser.execute((i) => document.getElementById(i)?.textContent ?? "", id);

async function openQuickBox() {
  assert.equal(quickVisible(), false, "the quick box starts hidden");
  execFileSync("xdotool", ["key", "ctrl+shift+space"]);
  await waitFor("the quick window on screen", async () => quickVisible());
  await toWindow("quick");
}

test("a first run shows what to do: the hotkey, the MCP entry for Agent Zero, how a question looks", async () => {
  const text = await detailText();
  assert.match(text, /“inbox” is empty/);
  assert.match(text, /Ctrl\+Shift\+Space/i);
  const entry = JSON.parse(await browser.$("#welcome-mcp").getText());
  const server = entry.mcpServers.scratchpad;
  assert.deepEqual(server.args, ["mcp"]);
  assert.equal(server.env.PAD_PAD, "inbox", "an agent connected from this pad's welcome writes to it");
  assert.match(text, /pad note -p inbox "a note"/, "the welcome names the command that exists");
  assert.match(server.command, /\/pad$/, "the pad CLI by its full path");
  assert.ok(await browser.$("#welcome-copy").isExisting());
  assert.match(text, /approve/);
  await screenshot("first-run");
});

test("the inbox stays in the pad list after opening another pad", async () => {
  await call("entry.add", { pad: "proj-x", author: "agent-1", content: "proj-x started" });
  await clickPad("proj-x");
  await waitFor("the proj-x feed", () => rowWith("proj-x started"));
  assert.ok(await browser.$('#pads .pad[data-pad="inbox"]').isExisting(), "the empty inbox is still listed");
  await clickPad("inbox");
});

test("an agent asks through pad mcp; approve on the notification answers it; the app shows it answered", async () => {
  execFileSync("dunstctl", ["close-all"]);
  const asked = mcpCall("ask_person", { question: "I am about to drop the staging database. OK to proceed?", choices: ["approve", "deny"], wait_seconds: 60 });
  asked.catch(() => undefined);
  await waitFor("the question in the feed", () => rowWith("drop the staging database"));
  if (NOTIFY_LOG) {
    await waitFor("a Notify call for the question", () => readFileSync(NOTIFY_LOG, "utf8").includes("agent-zero asks in inbox"));
  }
  await waitFor("dunst to show it", () => notificationsShown() > 0);
  await clickRow("drop the staging database");
  await waitFor("the choices in the detail", async () => (await browser.$$("#reply-choices button.choice").length) === 2);
  assert.match(await detailText(), /open/);
  await screenshot("question");

  const t0 = Date.now();
  clickNotificationButton("approve");
  const text = await asked;
  console.log(`# notification click -> tool result ${Date.now() - t0} ms`);
  assert.match(text, /^Answer from user: approve \(the choice "approve" of approve, deny\)/);

  await waitFor("the question answered in the app", async () => /answered/.test(await browser.$("#detail-main").getText()));
  await waitFor("the answer in its thread", async () => /user[\s\S]*answer[\s\S]*approve/.test(await browser.$("#thread").getText()));
  assert.equal(await browser.$$("#reply-choices button.choice").length, 0, "an answered question offers no choices");
  const inbox = await call("entry.list", { tags: ["needs_eyes"] });
  assert.ok(!inbox.entries.some((e) => e.kind === "question"), "the answered question left needs-eyes");
});

test("an answer given in the agent's client reaches the thread and withdraws the notification", async () => {
  execFileSync("dunstctl", ["close-all"]);
  let form;
  const asked = mcpCall("ask_person", { question: "Merge the release branch now?", choices: ["approve", "deny"], wait_seconds: 60 }, "agent-form", {
    elicit: async (params) => {
      form = params;
      await waitFor("the question's notification", () => notificationsShown() > 0);
      return { action: "accept", content: { choice: "deny" } };
    },
  });
  asked.catch(() => undefined);
  const text = await asked;
  assert.match(text, /^Answer from user: deny/);
  assert.match(form.message, /Merge the release branch now\?/);
  // Withdrawn takes milliseconds; dunst would drop it by itself only after
  // its 10 s default timeout.
  await waitFor("the notification withdrawn", () => notificationsShown() === 0, 3000);
  const q = (await call("entry.list", { pad: "inbox", kind: "question", author: "agent-form" })).entries[0];
  const thread = await call("entry.thread", { id: q.id });
  assert.deepEqual(thread.replies.map((r) => [r.author, r.content]), [["user", "deny"]]);
});

test("an answer given on the desktop ends the client's form", async () => {
  execFileSync("dunstctl", ["close-all"]);
  let withdrawn = null;
  const asked = mcpCall("ask_person", { question: "Restart the staging cluster?", choices: ["approve", "deny"], wait_seconds: 60 }, "agent-form2", {
    elicit: () => new Promise(() => undefined),
    cancelled: (id) => { withdrawn = id; },
  });
  asked.catch(() => undefined);
  await waitFor("the question's notification", () => notificationsShown() > 0);
  clickNotificationButton("approve");
  const text = await asked;
  assert.match(text, /^Answer from user: approve/);
  await waitFor("the client's form withdrawn", () => withdrawn !== null);
});

test("the person replies from the detail view's Reply box (r focuses it)", async () => {
  const note = (await call("entry.add", { pad: "inbox", author: "agent-2", content: "migration plan ready for review", tags: ["needs_eyes"] })).entry;
  await waitFor("the note in the feed", () => rowWith("migration plan ready"));
  await clickRow("migration plan ready");
  await waitFor("the note in detail", async () => (await detailText()).includes(note.id));
  await browser.keys("r");
  assert.equal(await browser.execute(() => document.activeElement?.id), "reply-text");
  await browser.$("#reply-text").setValue("looks good, go ahead #review");
  await browser.keys(["Control", "Enter"]);
  const thread = await waitFor("the reply in the thread", async () => {
    const t = await call("entry.thread", { id: note.id });
    return t.replies.length === 1 && t;
  });
  assert.equal(thread.replies[0].content, "looks good, go ahead");
  assert.equal(thread.replies[0].author, "user");
  assert.deepEqual(thread.replies[0].tags, ["review"]);
  await waitFor("the reply under the note", async () => (await browser.$("#thread").getText()).includes("looks good, go ahead"));
  await waitFor("the feed marks the note", () => rowWith("1 reply"));
});

test("the quick box offers to answer the newest open question; Enter answers it", async () => {
  const asked = call("ask", { content: "Deploy the hotfix to production now?", author: "agent-3", wait_seconds: 60 });
  asked.catch(() => undefined);
  await waitFor("the question in the feed", () => rowWith("Deploy the hotfix"));
  await openQuickBox();
  await waitFor("the replying-to line", async () => (await textOf("quick-reply")).includes("Deploy the hotfix"));
  assert.match(await textOf("quick-reply"), /replying to\s+agent-3/);
  await screenshot("quick-reply");
  await typeQuick("yes, ship it");
  await browser.keys("Enter");
  const r = await asked;
  assert.equal(r.answer.content, "yes, ship it");
  assert.equal(r.answer.author, "user");
  await waitFor("Enter to hide the box", async () => !quickVisible());
  await toWindow("main");
});

test("Tab in the quick box switches from answering to a plain note", async () => {
  const q = (await call("ask", { content: "Which region first?", author: "agent-4", wait_seconds: 0 })).question;
  await openQuickBox();
  await waitFor("the replying-to line", async () => (await textOf("quick-reply")).includes("Which region first?"));
  await browser.keys("Tab");
  await waitFor("plain-note mode", async () => (await textOf("quick-pad")) === "→ inbox");
  await typeQuick("remember the region list #later");
  await browser.keys("Enter");
  const found = await waitFor("the plain note", async () => (await call("entry.list", { tags: ["later"] })).entries[0]);
  assert.equal(found.reply_to, null);
  assert.equal((await call("entry.get", { id: q.id })).entry.answer, null, "the question is still open");
  await waitFor("Enter to hide the box", async () => !quickVisible());
  await toWindow("main");
});

test("a needs_eyes note's notification offers Reply, which opens the quick box on it; the reply takes it out of Needs eyes", async () => {
  execFileSync("dunstctl", ["close-all"]);
  const note = (await call("entry.add", { pad: "ops", author: "agent-ops", content: "disk at 91% on db-2", tags: ["needs_eyes"] })).entry;
  // The question of the test before may still be notified late beside it:
  // click Reply on this note's notification, until dunst shows it.
  await waitFor("its notification's Reply to open the quick window", async () => {
    if (notificationsShown() > 0) clickNotificationButton("Reply", "agent-ops needs your eyes in ops");
    await sleep(300);
    return quickVisible();
  });
  await toWindow("quick");
  await waitFor("the replying-to line", async () => (await textOf("quick-reply")).includes("disk at 91%"));
  await typeQuick("I will clean the logs");
  await browser.keys("Enter");
  const t = await waitFor("the reply", async () => {
    const r = await call("entry.thread", { id: note.id });
    return r.replies.length === 1 && r;
  });
  assert.equal(t.replies[0].content, "I will clean the logs");
  assert.equal(t.replies[0].pad, "ops");
  await waitFor("the note out of Needs eyes: replying is looking", async () =>
    !(await call("entry.get", { id: note.id })).entry.tags.includes("needs_eyes"));
  await waitFor("Enter to hide the box", async () => !quickVisible());
  await toWindow("main");
});
