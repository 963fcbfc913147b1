// The plan as a picture in the real app: a release of ten tasks written by
// several agents over the socket — two done, two running, one failed, one
// whose holder asks the person a question, one delegated from another —
// drawn with its arrows; a click and Enter open a task's thread; the arrow
// keys move along the arrows; then kept current as agents work: a task
// completes and what waited on it becomes ready, the person answers and
// the question no longer waits. The README's picture of a plan
// (docs/img/app-plan.png) is this test's screenshot `readme-plan.png`.

import { execFileSync } from "node:child_process";
import path from "node:path";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { OUT, browser, call, callAs, clickPad, launch, quit, screenshot, waitFor } from "./harness.mjs";

before(() => launch({ pad: "inbox" }));
after(quit);

const pad = "release-2-4";

/** A task by `author`; held by `holder` under a live lease when given. */
async function task(author, content, { depends_on = [], holder = null, reply_to = undefined } = {}) {
  const held = holder ? { status: "doing", assignee: holder } : {};
  const { entry } = await callAs(author, "entry.add", { pad, kind: "task", content, depends_on, reply_to, ...held });
  if (holder) await callAs(holder, "task.heartbeat", { id: entry.id, agent: holder, lease_seconds: 3600, resume: "started" });
  return entry;
}

/** What the picture shows now: each box's id, classes, text and name. */
const boxes = () =>
  browser.execute(() =>
    [...document.querySelectorAll("#plan .plan-node")].map((b) => ({
      id: b.dataset.id,
      cls: b.className,
      text: b.textContent,
      label: b.getAttribute("aria-label"),
      tab: b.tabIndex,
    })),
  );
const box = async (id) => (await boxes()).find((b) => b.id === id);

test("a plan of ten tasks drawn as a picture, opened from it, and kept current", async () => {
  const freeze = await task("agent-planner", "Freeze the release branch 2.4", { holder: "agent-zero" });
  const suite = await task("agent-planner", "Run the full test suite on 2.4", { depends_on: [freeze.id], holder: "agent-ci" });
  const debs = await task("agent-planner", "Build the Debian packages", { depends_on: [suite.id] });
  const image = await task("agent-planner", "Build the Docker image", { depends_on: [suite.id], holder: "agent-docker" });
  const notes = await task("agent-planner", "Write the release notes", { depends_on: [freeze.id], holder: "agent-writer" });
  const sign = await task("agent-planner", "Sign the packages", { depends_on: [debs.id] });
  const push = await task("agent-planner", "Push the image to the registry", { depends_on: [image.id] });
  const publish = await task("agent-planner", "Publish 2.4 on the website", { depends_on: [notes.id, sign.id] });
  const announce = await task("agent-planner", "Announce 2.4 on the mailing list", { depends_on: [publish.id] });
  const mirrors = await task("agent-planner", "Check the download mirrors", { reply_to: publish.id });
  await callAs("agent-zero", "task.complete", { id: freeze.id, agent: "agent-zero", resume: "branch 2.4 cut at 9f3c2e1" });
  await callAs("agent-ci", "task.complete", { id: suite.id, agent: "agent-ci", resume: "1,412 tests passed" });
  // The packages claimed the usual way (the others were written running, as Agent Zero writes its delegations).
  const claimed = await callAs("agent-build", "task.claim", { pad, agent: "agent-build", lease_seconds: 3600 });
  assert.equal(claimed.entry?.id, debs.id);
  await callAs("agent-docker", "task.fail", { id: image.id, agent: "agent-docker", error: "registry unreachable: timed out after 30 s" });
  const question = (await callAs("agent-writer", "entry.add", {
    pad,
    kind: "question",
    reply_to: notes.id,
    content: "Say in the notes that Python 3.8 is no longer supported?",
    choices: ["yes", "no"],
    tags: ["needs_eyes"],
  })).entry;

  await clickPad(pad);
  await browser.$("#tasks-btn").click();
  await waitFor("ten boxes", async () => (await boxes()).length === 10);
  const title = await browser.$("#view-title").getText();
  assert.match(title, /1 ready, 4 waiting, 2 running, 0 blocked, 2 done, 1 failed/, title);

  // Where each stands, who holds it, since when; the failed and the waiting stand out.
  const failed = await box(image.id);
  assert.match(failed.cls, /word-failed/);
  assert.match(failed.text, /registry unreachable/);
  assert.match(failed.label, /failed: registry unreachable: timed out after 30 s\. held by agent-docker\. failed just now/);
  const asks = await box(notes.id);
  assert.match(asks.cls, /needs-you/);
  assert.match(asks.text, /needs you/);
  assert.match(asks.label, /needs you: agent-writer asks “Say in the notes that Python 3\.8 is no longer supported\?”/);
  assert.match((await box(debs.id)).label, /running\. held by agent-build\. claimed just now/);
  assert.match((await box(notes.id)).label, /held by agent-writer\. claimed just now/);
  assert.match((await box(sign.id)).label, /waiting\. nobody holds it\. added just now\. comes after “Build the Debian packages”/);
  assert.match((await box(mirrors.id)).label, /delegated from “Publish 2\.4 on the website”/);
  const others = (await boxes()).filter((b) => b.id !== notes.id && b.id !== image.id);
  assert.ok(others.every((b) => !/needs-you|word-failed/.test(b.cls)), "only those two stand out");
  const edges = await browser.execute(() => [...document.querySelectorAll("#plan .plan-edge")].map((p) => `${p.dataset.from}>${p.dataset.to}:${p.classList.contains("edge-delegated")}`));
  assert.equal(edges.length, 10);
  assert.ok(edges.includes(`${publish.id}>${mirrors.id}:true`) && edges.includes(`${notes.id}>${publish.id}:false`), edges.join(" "));
  // The layers run top to bottom: what waits sits below what it waits on.
  const top = (id) => browser.execute((i) => document.querySelector(`#plan .plan-node[data-id="${i}"]`).offsetTop, id);
  assert.ok((await top(freeze.id)) < (await top(suite.id)) && (await top(suite.id)) < (await top(image.id)) && (await top(image.id)) < (await top(push.id)));

  // A screen reader hears the plan as a named group of buttons.
  const group = await browser.execute(() => document.querySelector("#plan .plan-canvas").getAttribute("aria-label"));
  assert.match(group, /^Plan of release-2-4: 10 tasks, 1 failed, 1 needs you\./);

  execFileSync("dunstctl", ["close-all"]);
  await browser.execute((id) => document.querySelector(`#plan .plan-node[data-id="${id}"]`).click(), notes.id);
  await waitFor("the task's thread with the question", async () => {
    const t = await browser.$("#detail").getText();
    return t.includes("Write the release notes") && t.includes("Python 3.8 is no longer supported");
  });
  // Nothing cut: each box's time fits beside its chips, and the task's
  // buttons wrap inside the pane at the window's default width.
  const cut = await browser.execute(() => [...document.querySelectorAll("#plan .plan-time")]
    .filter((t) => t.getBoundingClientRect().right > t.closest(".plan-node").getBoundingClientRect().right - 2)
    .map((t) => t.textContent));
  assert.deepEqual(cut, [], "time labels cut short");
  const outside = await browser.execute(() => {
    const pane = document.querySelector("#detail").getBoundingClientRect();
    return [...document.querySelectorAll("#detail .actions button")]
      .filter((b) => b.getBoundingClientRect().right > pane.right + 1).map((b) => b.textContent);
  });
  assert.deepEqual(outside, [], "buttons past the detail pane's edge");
  await screenshot("readme-plan");
  const r = await browser.getWindowRect();
  const file = path.join(OUT, "readme-plan.png");
  execFileSync("convert", [file, "-crop", `${r.width}x${r.height}+${Math.max(0, r.x)}+${Math.max(0, r.y)}`, "+repage", file]);

  // The keyboard: the box opened holds the tab stop; Down follows its
  // arrow to what waits on it; Enter opens that one.
  await browser.execute((id) => document.querySelector(`#plan .plan-node[data-id="${id}"]`).focus(), notes.id);
  await browser.keys("ArrowDown");
  await waitFor("the focus on what waits on the notes", async () => (await browser.execute(() => document.activeElement?.dataset?.id)) === publish.id);
  assert.equal((await box(publish.id)).tab, 0);
  assert.equal((await box(notes.id)).tab, -1);
  await browser.keys("Enter");
  await waitFor("the published task open", async () => (await browser.$("#detail-main").getText()).includes("Publish 2.4 on the website"));

  // Agents work: the picture follows, the focus stays where it was.
  await callAs("agent-build", "task.complete", { id: debs.id, agent: "agent-build", resume: "12 packages built" });
  await waitFor("the packages done", async () => /word-done/.test((await box(debs.id)).cls));
  await waitFor("signing ready", async () => /word-ready/.test((await box(sign.id)).cls));
  assert.equal(await browser.execute(() => document.activeElement?.dataset?.id), publish.id, "the focus survives a redraw");
  // The person answers the question from the picture: the box opens the
  // task, whose Reply box offers the question's choices and answers it.
  await browser.execute((id) => document.querySelector(`#plan .plan-node[data-id="${id}"]`).click(), notes.id);
  await waitFor("the question's choices", async () => (await browser.$("#reply-choices").getText()).includes("agent-writer asks: Say in the notes"));
  assert.equal(await browser.$("#reply-send").getText(), "Answer");
  await browser.$("#reply-choices").$("button=yes").click();
  await waitFor("the question answered", async () => !/needs-you/.test((await box(notes.id)).cls));
  const answered = (await call("entry.get", { id: question.id })).entry;
  assert.ok(answered.answer, "the reply answers the question, not the task");
  assert.equal((await call("entry.get", { id: answered.answer })).entry.content, "yes");
  await waitFor("the Reply box back to the task", async () => (await browser.$("#reply-send").getText()) === "Reply");
  await callAs("agent-docker", "entry.update", { id: image.id, status: "todo" });
  await waitFor("the image task back to ready", async () => /word-ready/.test((await box(image.id)).cls));
  const group2 = await browser.execute(() => document.querySelector("#plan .plan-canvas").getAttribute("aria-label"));
  assert.match(group2, /^Plan of release-2-4: 10 tasks\./);
  await screenshot("plan-kept-current");

  // The same tasks as a list, and back.
  await browser.keys("v");
  await waitFor("the list", async () => (await browser.$$("#feed .row")).length === 10 && (await browser.$("#plan").getAttribute("hidden")) !== null);
  await browser.keys("v");
  await waitFor("the picture again", async () => (await boxes()).length === 10);
  assert.equal(await browser.execute(() => localStorage.getItem("plan-form")), "picture");
  assert.match((await box(announce.id)).label, /^Task 9 of 10: Announce 2\.4 on the mailing list\. waiting\./);
});
