// Under a compositing manager (picom on the Xvfb display, as a desktop's
// compositor would be): after an answer typed in the quick box, the main
// window's pixels on screen change with no mouse motion or other input.
// (Seen once on a first day with the app: the window kept its old picture
// until the mouse moved. Not reproduced here in 5 of 5 rounds; this keeps
// watching for it.)
import { execFileSync, spawn } from "node:child_process";
import path from "node:path";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { OUT, browser, call, launch, quit, quickVisible, rowWith, screenshot, sleep, toWindow, typeQuick, waitFor } from "./harness.mjs";

let picom;
before(async () => {
  picom = spawn("picom", ["--backend", "xrender", "--no-fading-openclose"], { stdio: "inherit" });
  await sleep(1500);
  await launch();
});
after(async () => {
  await quit();
  picom?.kill();
});

async function rowRect(text) {
  const r = await browser.execute((t) => {
    const row = [...document.querySelectorAll(".row")].find((x) => x.textContent.includes(t));
    const b = row.getBoundingClientRect();
    return { x: b.x, y: b.y, w: b.width, h: b.height };
  }, text);
  const win = await browser.getWindowRect();
  return { x: Math.round(win.x + r.x), y: Math.round(win.y + r.y), w: Math.round(r.w), h: Math.round(r.h) };
}

for (let round = 1; round <= 3; round++) {
  test(`round ${round}: the main window repaints after a quick-box answer, no input`, async () => {
    const text = `Restart worker ${round}?`;
    const q = (await call("ask", { content: text, author: "agent-4", choices: ["approve", "deny"], wait_seconds: 0 })).question;
    await waitFor("the question row", () => rowWith(text));
    await sleep(800);
    const rect = await rowRect(text);
    await screenshot(`comp-${round}-before`);
    execFileSync("xdotool", ["key", "ctrl+shift+space"]);
    await waitFor("the quick window", async () => quickVisible());
    await toWindow("quick");
    await typeQuick("approve");
    await browser.keys("Enter");
    await waitFor("the box hidden", async () => !quickVisible());
    // The engine has the answer (the app is told by an event)…
    await waitFor("the answer stored", async () => (await call("entry.get", { id: q.id })).entry.answer !== null);
    const crop = (name) => {
      const f = path.join(OUT, `${name}.png`);
      const c = path.join(OUT, `${name}-row.png`);
      execFileSync("convert", [f, "-crop", `${rect.w}x${rect.h}+${rect.x}+${rect.y}`, "+repage", c]);
      return c;
    };
    const before = crop(`comp-${round}-before`);
    // …and the screen shows it, with no input: the row's pixels change.
    let diff = "0";
    await waitFor("the row on screen to change", async () => {
      await screenshot(`comp-${round}-after`);
      try {
        execFileSync("compare", ["-metric", "AE", before, crop(`comp-${round}-after`), "null:"], { stdio: ["ignore", "ignore", "pipe"] });
      } catch (e) {
        diff = e.stderr.toString().trim();
      }
      return diff !== "0";
    }, 20_000);
    console.log(`# round ${round}: ${diff} pixels of the row changed on screen`);
    await toWindow("main");
  });
}
