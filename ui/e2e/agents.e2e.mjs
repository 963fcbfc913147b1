// The person reaches the agents, in the real app under Xvfb, D-Bus and
// dunst: the Agents view shows an agent connected right now (and what it
// holds) and an agent registered over A2A; "@agent-zero …" in the quick box
// hands it the note; its answer lands in the thread with a notification.
// The A2A agent is FastA2A exactly as Agent Zero ships it (tests/a2a/
// agents.py), run by the tests' Python ($CARGO_TARGET_DIR/venv, which
// scripts/test builds before it runs these).

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  NOTIFY_LOG, browser, call, clickPad, freePort, launch, notificationsShown, quickVisible, quit, screenshot, sleep, socket, toWindow, typeQuick, waitFor,
} from "./harness.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const python = process.env.A2A_PYTHON ?? path.join(process.env.CARGO_TARGET_DIR ?? path.join(root, "..", "scratchpad-target"), "venv", "bin", "python");
const port = await freePort();
const url = `http://127.0.0.1:${port}/a2a/t-s3cr3t-a0-token`;
const helperPort = await freePort();
// Each run's agents log into a folder of their own: a log named by port alone
// outlives the run in /tmp, and a later run handed the same port counted the
// earlier run's messages as its own.
const logs = mkdtempSync(path.join(os.tmpdir(), "a2a-e2e-"));
const logOf = (p) => path.join(logs, `${p}.log`);
let agent;
let helper;
let present;

const listening = (p) => () => new Promise((resolve) => {
  const s = net.createConnection(p, "127.0.0.1");
  s.on("connect", () => { s.end(); resolve(true); });
  s.on("error", () => resolve(false));
});

before(async () => {
  agent = spawn(python, [path.join(root, "tests/a2a/agents.py"), "agent-zero", String(port), logOf(port)], { stdio: "inherit" });
  // A second agent, on FastA2A, that asks before it works ("… ask …").
  helper = spawn(python, [path.join(root, "tests/a2a/agents.py"), "fasta2a", String(helperPort), logOf(helperPort)], { stdio: "inherit" });
  await waitFor("the A2A agent to listen", listening(port), 30_000);
  await waitFor("the asking A2A agent to listen", listening(helperPort), 30_000);
  await launch();
});

after(async () => {
  present?.end();
  agent?.kill();
  helper?.kill();
  // The next file's tests count and click dunst's notifications: leave none.
  execFileSync("dunstctl", ["close-all"]);
  await quit();
  rmSync(logs, { recursive: true, force: true });
});

const textOf = (id) => browser.execute((i) => document.getElementById(i)?.textContent ?? "", id);

test("the Agents view shows who is connected, what it holds, and a registered A2A agent", async () => {
  const added = await call("agent.add", { name: "agent-zero", url });
  assert.equal(added.agent.card.name, "Agent Zero");
  // An agent connected right now (its connection stays open), holding a task.
  present = net.createConnection(socket);
  present.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "hello", params: { author: "agent-x" } }) + "\n");
  present.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "entry.add", params: { pad: "proj", kind: "task", content: "migrate the staging db" } }) + "\n");
  present.write(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "task.claim", params: { pad: "proj", agent: "agent-x" } }) + "\n");
  await browser.$("#agents-btn").click();
  await waitFor("the roster", async () => {
    const roster = await textOf("roster");
    return /agent-x/.test(roster) && /connected/.test(roster) && /migrate the staging db/.test(roster);
  });
  await waitFor("the registered agent", async () => {
    const reg = await textOf("agents-registered");
    return /agent-zero/.test(reg) && /Agent Zero/.test(reg) && /reachable/.test(reg) && !/s3cr3t/.test(reg);
  });
  await screenshot("agents-view");
  await browser.$("#agents-btn").click();
});

test("@agent-zero in the quick box hands the note over; the answer lands in the thread with a notification", async () => {
  execFileSync("dunstctl", ["close-all"]);
  assert.equal(quickVisible(), false);
  execFileSync("xdotool", ["key", "ctrl+shift+space"]);
  await waitFor("the quick window on screen", async () => quickVisible());
  await toWindow("quick");
  const input = await browser.$("#quick-input");
  await waitFor("the quick box", () => input.isDisplayed());
  // A handoff reaches the agent as typed: its #words are tags beside it.
  await typeQuick("@agent-zero tidy the staging logs (PR #4821) #ops");
  await browser.keys("Enter");
  await waitFor("Enter to hide the box", async () => !quickVisible());
  await toWindow("main");
  const note = await waitFor("the note, addressed", async () =>
    (await call("entry.list", { pad: "inbox", author: "user" })).entries.find((e) => e.to.includes("agent-zero")));
  const result = await waitFor("agent zero's answer", async () =>
    (await call("entry.thread", { id: note.id })).replies.find((r) => r.author === "agent-zero" && r.kind === "result"), 30_000);
  assert.equal(result.content, "agent zero says: @agent-zero tidy the staging logs (PR #4821) #ops", "byte for byte at the agent");
  assert.deepEqual(note.tags, ["4821", "ops"]);
  await waitFor("the notification", () => notificationsShown() >= 1);
  if (NOTIFY_LOG) await waitFor("its text", () => /agent-zero finished in inbox/.test(readFileSync(NOTIFY_LOG, "utf8")));
  await clickPad("inbox");
  // The answer quotes the note: pick the note's own row.
  const row = () => browser.$(`.row[data-id="${note.id}"]`);
  await waitFor("the note in the feed", async () => (await row()).isExisting());
  await (await row()).click();
  await waitFor("the delivery state and the answer in the detail", async () => {
    const text = await browser.$("#detail").getText();
    return /→ agent-zero: done/.test(text) && /agent zero says/.test(text);
  }, 15_000);
  await screenshot("agent-result-thread");
});

test("an agent's question says what it is about in Needs eyes, its detail, the quick box and the notification, which outlives dunst's timeout; the detail says truly that the agent waits", async () => {
  execFileSync("dunstctl", ["close-all"]);
  await call("agent.add", { name: "helper", url: `http://127.0.0.1:${helperPort}/` });
  const about = "ask about the nightly backup window";
  const note = (await call("entry.add", { pad: "ops", author: "user", content: `${about}\nand keep it under an hour`, to: ["helper"] })).entry;
  const q = await waitFor("the helper's question", async () =>
    (await call("entry.thread", { id: note.id })).replies.find((r) => r.kind === "question"), 30_000);
  assert.equal(q.reply_to, note.id);

  await browser.$("#inbox-btn").click();
  const row = () => browser.$(`.row[data-id="${q.id}"]`);
  const rowText = () => browser.execute((id) => document.querySelector(`.row[data-id="${id}"]`)?.textContent ?? "", q.id);
  await waitFor("the question in Needs eyes, with what it is about", async () => (await rowText()).includes(`asks about “${about}”`));
  await (await row()).click();
  await waitFor("what it replies to, and that the agent waits", async () => {
    const t = await browser.$("#detail-main").getText();
    return t.includes(`in reply to: “${about}”`) && /helper is waiting for your answer/.test(t);
  });
  await screenshot("question-context");

  await waitFor("the question's notification", () => notificationsShown() >= 1);
  if (NOTIFY_LOG) {
    const log = readFileSync(NOTIFY_LOG, "utf8");
    const notify = log.slice(log.lastIndexOf("helper asks in ops"));
    assert.ok(notify.includes(`about “${about}”`), "the notification says what the question is about");
    assert.match(notify, /string "urgency"\s+variant\s+byte 2/, "sent as critical");
    assert.match(notify, /string "resident"\s+variant\s+boolean true/, "sent as resident");
  }
  // dunst closes a normal notification after 10 s; the agent may wait far longer.
  await sleep(12_000);
  assert.ok(notificationsShown() >= 1, "the question is still on screen after dunst's default timeout");

  execFileSync("xdotool", ["key", "ctrl+shift+space"]);
  await waitFor("the quick window on screen", async () => quickVisible());
  await toWindow("quick");
  await waitFor("the quick box says what the question is about", async () =>
    (await browser.execute(() => document.getElementById("quick-about")?.textContent ?? "")) === `about “${about}”`);
  await typeQuick("staging");
  await browser.keys("Enter");
  await waitFor("Enter to hide the box", async () => !quickVisible());
  await toWindow("main");
  await waitFor("the helper's result", async () =>
    (await call("entry.thread", { id: note.id })).replies.some((r) => r.kind === "result" && r.content === "done: used staging"), 30_000);
  await waitFor("the answered question's notification withdrawn", () => notificationsShown() === 0);
  await browser.$("#inbox-btn").click();
});

test("a handoff is addressed as typed: @ completes known agents, a chip says who, an unknown name is held with the nearest one; the status says what really happened; a failed handoff offers Re-send", async () => {
  await clickPad("inbox");
  const compose = await browser.$("#compose-text");
  const text = (sel) => browser.execute((s) => document.querySelector(s)?.textContent ?? "", sel);
  const mine = async (words) => (await call("entry.list", { pad: "inbox", author: "user", limit: 200 })).entries.filter((e) => e.content.includes(words));

  // A typo is held, with the name it probably meant.
  await compose.click();
  await compose.setValue("@agent-zreo rotate the staging keys");
  await waitFor("the chip", async () => (await text("#compose-to")) === "→ agent-zreo");
  await browser.$("#compose-save").click();
  await waitFor("the warning", async () => /Nobody answers to @agent-zreo \(did you mean @agent-zero\?\)/.test(await text("#status")));
  assert.equal((await mine("rotate the staging keys")).length, 0, "nothing sent to nobody");

  // @ completes a registered agent; Tab takes it.
  await compose.setValue("@agent-z");
  await waitFor("the completion", async () => (await text("#compose-suggest")).includes("@agent-zero"));
  await browser.keys("Tab");
  await waitFor("the name completed", async () => (await compose.getValue()) === "@agent-zero ");
  await compose.addValue("rotate the staging keys");
  await waitFor("the chip", async () => (await text("#compose-to")) === "→ agent-zero");
  await screenshot("handoff-chip");
  await browser.$("#compose-save").click();
  await waitFor("the note, addressed", async () => (await mine("rotate the staging keys")).some((e) => e.to.includes("agent-zero")));
  await waitFor("the status says what happened", async () => /handed to agent-zero|agent-zero is working on it|agent-zero finished/.test(await text("#status")), 15_000);

  // An agent that is down: the note is queued, and the status says so (not "handed").
  const sleepyPort = await freePort();
  const sleepy = spawn(python, [path.join(root, "tests/a2a/agents.py"), "fasta2a", String(sleepyPort), logOf(sleepyPort)], { stdio: "inherit" });
  await waitFor("the sleepy agent to listen", listening(sleepyPort), 30_000);
  await call("agent.add", { name: "sleepy", url: `http://127.0.0.1:${sleepyPort}/` });
  sleepy.kill();
  await waitFor("the sleepy agent gone", async () => !(await listening(sleepyPort)()));
  await compose.setValue("@sleepy archive last week's logs");
  await browser.$("#compose-save").click();
  await waitFor("the status: queued, retried", async () => /sleepy not reached \(.*\) — the note is queued and retried/.test(await text("#status")), 20_000);

  // A handoff the agent failed offers Re-send: the same note goes again.
  const log = logOf(port);
  const received = () => readFileSync(log, "utf8").split("\n").filter((l) => l.includes("make it fail on purpose")).length;
  await compose.setValue("@agent-zero make it fail on purpose");
  await browser.$("#compose-save").click();
  const failed = await waitFor("the failed handoff", async () => (await mine("make it fail on purpose"))[0], 15_000);
  // A timeout says what the agent got and where the delivery stands.
  const told = (id) => async (e) => {
    const { deliveries } = await call("agent.deliveries", { entry: id });
    throw new Error(`${e.message} (the agent got it ${received()} times; the deliveries: ${JSON.stringify(deliveries)})`);
  };
  await waitFor("the agent got it once", () => received() === 1, 15_000).catch(told(failed.id));
  await deliveryAction(failed.id, "Re-send");
  await waitFor("the agent got it again", () => received() === 2, 20_000).catch(told(failed.id));
  assert.equal((await mine("make it fail on purpose")).length, 2, "sent again as a new note");

  // An agent that refuses the note (a stale token): the engine asks at
  // once whether to keep trying; Retry now answers "retry" and it tries again.
  const gatePort = await freePort();
  const gate = (token) => spawn(python, [path.join(root, "tests/a2a/agents.py"), "agent-zero", String(gatePort), logOf(gatePort)],
    { stdio: "inherit", env: { ...process.env, A2A_AGENT_TOKEN: token } });
  let gateServer = gate("gate-one");
  try {
    await waitFor("the gatekeeper to listen", listening(gatePort), 30_000);
    await call("agent.add", { name: "gatekeeper", url: `http://127.0.0.1:${gatePort}/a2a/t-gate-one` });
    // Its token changes (as Agent Zero's does with its login): the registered URL is refused.
    gateServer.kill();
    await waitFor("the gatekeeper gone", async () => !(await listening(gatePort)()));
    gateServer = gate("gate-two");
    await waitFor("the gatekeeper back, with a new token", listening(gatePort), 30_000);
    await refusedThenRetried();
  } finally {
    gateServer.kill();
  }
});

/** Opens the note's row and clicks its delivery's action, once it reads `label`. */
async function deliveryAction(id, label) {
  const row = () => browser.$(`.row[data-id="${id}"]`);
  await waitFor(`the row of ${id}`, async () => (await row()).isExisting());
  await (await row()).click();
  const action = await browser.$("#detail-main .delivery-action");
  await waitFor(`${label} on the handoff`, async () => (await action.isExisting()) && (await action.getText()) === label, 20_000);
  await action.click();
}

async function refusedThenRetried() {
  const refused = (await call("entry.add", { pad: "inbox", author: "user", content: "@gatekeeper open the gate", to: ["gatekeeper"] })).entry;
  const asked = async () => (await call("entry.thread", { id: refused.id })).replies.filter((r) => r.kind === "question");
  await waitFor("the engine asks whether to keep trying", async () => (await asked()).length >= 1, 20_000);
  await deliveryAction(refused.id, "Retry now");
  await waitFor("retry answered, and a fresh try refused and asked again", async () => {
    const t = (await call("entry.thread", { id: refused.id })).replies;
    return t.some((r) => r.author === "user" && r.content === "retry") && t.filter((r) => r.kind === "question").length >= 2;
  }, 30_000);
}
