// Nothing an agent does is final, in the real app under Xvfb, D-Bus and
// dunst: an agent's clear of the person's notes raises one notification
// whose Undo brings them all back, and the pad itself says so with Undo;
// the person's own delete offers Undo;
// the Trash view restores what an agent deleted; History takes an agent's
// edit back.

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  NOTIFY_LOG, browser, call, callAs, clickNotificationButton, clickPad, clickRow, launch, notificationsShown, quit, rowWith, screenshot, sleep, waitFor,
} from "./harness.mjs";

before(() => launch());
after(quit);

const ids = async (pad) => (await call("entry.list", { pad, limit: 1000 })).entries.map((e) => e.id).sort();
const notifyLog = () => (NOTIFY_LOG ? readFileSync(NOTIFY_LOG, "utf8") : "");

test("an agent clears 40 of the person's notes: one notification, and its Undo brings them all back", async () => {
  execFileSync("dunstctl", ["close-all"]);
  for (let i = 0; i < 40; i++) await call("entry.add", { pad: "proj-x", author: "user", content: `my note ${i}` });
  await call("entry.add", { pad: "proj-x", author: "agent-x", content: "the agent's own note" });
  const before = await ids("proj-x");
  const cleared = await callAs("agent-x", "pad.clear", { name: "proj-x" });
  assert.equal(cleared.deleted, 41);
  await waitFor("dunst to show it", () => notificationsShown() === 1);
  if (NOTIFY_LOG) assert.match(notifyLog(), /agent-x deleted 40 of your notes in proj-x/);
  await screenshot("undo-notification");
  const t0 = Date.now();
  clickNotificationButton("Undo");
  await waitFor("every note back", async () => (await ids("proj-x")).length === 41);
  await waitFor("the used notification gone", () => notificationsShown() === 0);
  console.log(`# Undo click -> 41 entries back ${Date.now() - t0} ms`);
  assert.deepEqual(await ids("proj-x"), before);
  const trash = await call("entry.trash", { pad: "proj-x" });
  assert.equal(trash.entries.length, 0);

  // The activity view is the audit: who cleared what, and who restored it.
  await browser.$("#activity-btn").click();
  await waitFor("the changes in the activity view", async () => {
    const text = await browser.execute(() => document.getElementById("act-changes")?.textContent ?? "");
    return /agent-x cleared 41 entries in proj-x/.test(text) && /user restored 41 entries/.test(text);
  });
  // Undone already: the clear is no longer offered to undo.
  const clearLine = await browser.execute(() =>
    [...document.querySelectorAll("#act-changes .act-change")].find((r) => /cleared 41 entries/.test(r.textContent))?.textContent ?? "");
  assert.match(clearLine, /brought back/);
  assert.doesNotMatch(clearLine, /Undo/);
  await screenshot("activity-changes");
  await browser.$("#activity-btn").click();
});

test("an agent clears the pad on screen: the pad says so with Undo; Trash restores the whole clear; Undo leaves once nothing is left to undo", async () => {
  for (let i = 0; i < 3; i++) await call("entry.add", { pad: "proj-z", author: "user", content: `z note ${i}` });
  await clickPad("proj-z");
  await waitFor("the pad's notes", () => rowWith("z note 2"));
  const banner = () => browser.$("#pad-banner");
  assert.equal(await (await banner()).isDisplayed(), false, "no banner before anything happened");
  await callAs("agent-z", "pad.clear", { name: "proj-z" });
  await waitFor("the banner in the pad", async () => (await (await banner()).isDisplayed()) && /agent-z cleared 3 entries of this pad/.test(await (await banner()).getText()));
  await waitFor("the emptied pad says where its notes went, not how to start", async () =>
    /moved to the trash: Undo above brings it back/.test(await browser.$("#detail-main").getText()));
  await screenshot("pad-banner");
  await browser.execute(() => [...document.querySelectorAll("#pad-banner button")].find((b) => b.textContent === "Undo").click());
  await waitFor("the three back", async () => (await ids("proj-z")).length === 3);
  await waitFor("the banner gone", async () => !(await (await banner()).isDisplayed()));
  await waitFor("the notes back in the feed", () => rowWith("z note 0"));

  await callAs("agent-z", "pad.clear", { name: "proj-z" });
  await waitFor("the banner again", async () => await (await banner()).isDisplayed());
  await browser.$("#trash-btn").click();
  await waitFor("the trash lists the clear", () => rowWith("z note 1"));
  await clickRow("z note 1");
  const all = await browser.$("#restore-all-btn");
  await waitFor("Restore all", () => all.isDisplayed());
  assert.match(await all.getText(), /Restore all 3 from this clear/);
  await all.click();
  await waitFor("the three back again", async () => (await ids("proj-z")).length === 3);
  await browser.$("#trash-btn").click();
  await waitFor("the banner gone once nothing is left to undo", async () => !(await (await banner()).isDisplayed()));
  // The clears' notifications are gathered, then shown: let them come, then clear them for the next test.
  await sleep(2500);
  execFileSync("dunstctl", ["close-all"]);
});

test("a burst of an agent's single deletes is one notification, not five", async () => {
  execFileSync("dunstctl", ["close-all"]);
  const mine = [];
  for (let i = 0; i < 5; i++) mine.push((await call("entry.add", { pad: "proj-y", author: "user", content: `burst note ${i}` })).entry.id);
  for (const id of mine) await callAs("agent-y", "entry.delete", { id });
  await waitFor("the notification", () => notificationsShown() === 1);
  await sleep(2000);
  assert.equal(notificationsShown(), 1, "one notification for the burst");
  if (NOTIFY_LOG) assert.match(notifyLog(), /agent-y deleted 5 of your notes in proj-y/);
  clickNotificationButton("Undo");
  await waitFor("all five back", async () => (await ids("proj-y")).length === 5);
});

test("the person's delete offers Undo; the Trash view restores an agent's delete; History takes an edit back", async () => {
  await call("entry.add", { pad: "notes", author: "user", content: "keep this one" });
  const plan = (await call("entry.add", { pad: "notes", author: "user", content: "the plan: ship Friday" })).entry;
  await clickPad("notes");
  await waitFor("the note in the feed", () => rowWith("keep this one"));
  await clickRow("keep this one");
  await browser.keys("Delete");
  await browser.$("#confirm-ok").click();
  await waitFor("the undo bar", () => browser.$("#undo").isDisplayed());
  assert.match(await browser.$("#undo-text").getText(), /Deleted the note by user/);
  await browser.$("#undo-btn").click();
  const kept = async () => (await call("entry.list", { pad: "notes" })).entries.find((e) => e.content === "keep this one");
  await waitFor("the note back", async () => !!(await kept()));

  await callAs("agent-x", "entry.delete", { id: (await kept()).id });
  await browser.$("#trash-btn").click();
  await waitFor("the trash lists it", () => rowWith("keep this one"));
  const later = (await call("entry.add", { pad: "notes", author: "user", content: "a note deleted while the trash is open" })).entry;
  await callAs("agent-x", "entry.delete", { id: later.id });
  await waitFor("the open trash to list it live", () => rowWith("deleted while the trash is open"));
  await clickRow("keep this one");
  await waitFor("who deleted it", async () => /deleted by agent-x/.test(await browser.$("#detail-main").getText()));
  await screenshot("trash");
  await browser.$("#restore-btn").click();
  await waitFor("restored", async () => !!(await kept()));

  await callAs("agent-x", "entry.update", { id: plan.id, content: "the plan: ship Monday" });
  await browser.$("#trash-btn").click();
  await waitFor("the edited plan in the feed", () => rowWith("ship Monday"));
  await clickRow("ship Monday");
  await browser.$("#history summary").click();
  await waitFor("the earlier version", async () => /changed by agent-x/.test(await browser.$("#history").getText()));
  await screenshot("history");
  await browser.$("#history .version button").click();
  await waitFor("the person's text back", async () => (await call("entry.get", { id: plan.id })).entry.content === "the plan: ship Friday");
});
