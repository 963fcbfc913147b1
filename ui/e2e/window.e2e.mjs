// The window a person keeps open all day, in the real app under Xvfb,
// D-Bus and dunst: an agent's edit never wipes the person's; actions name
// the pad they act on and are off where there is none; a waiting question
// stays on top of Needs eyes, shows whether the agent still waits, and its
// choices read by meaning; replying or "done looking" empties Needs eyes;
// agents and the person are told apart.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  browser, call, callAs, clickPad, clickRow, launch, mcpCall, quit, rowWith, screenshot, waitFor,
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
  await call("entry.add", { pad: "colours", author: "agent-zero", content: "from agent zero" });
  await call("entry.add", { pad: "colours", author: "claude", content: "from claude" });
  await call("entry.add", { pad: "colours", author: "user", content: "from me" });
  await clickPad("colours");
  await waitFor("the three notes", () => rowWith("from me"));
  const chips = await browser.execute(() =>
    [...document.querySelectorAll("#feed .row")].map((r) => {
      const a = r.querySelector(".avatar");
      return [a?.textContent, getComputedStyle(a).backgroundColor];
    }),
  );
  const byText = Object.fromEntries(chips);
  assert.deepEqual(Object.keys(byText).sort(), ["AZ", "CL", "you"]);
  assert.equal(new Set(Object.values(byText)).size, 3, "three different colours");
  await screenshot("authors");
});
