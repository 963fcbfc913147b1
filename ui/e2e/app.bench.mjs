// The app's figures (not a test: it prints them): launch to first render,
// the feed taking a burst of 10,000 entries live, resident memory idle with
// 10,000 entries loaded, and frame times while scrolling through them.
// Run: ./scripts/e2e --bench

import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import net from "node:net";
import { APP, browser, launch, quit, socket, sleep, waitFor } from "./harness.mjs";

/** Writes `n` entries over one pipelined connection, as a busy agent would. */
function burst(n) {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(socket);
    let answered = 0;
    let buf = "";
    s.on("data", (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        buf = buf.slice(nl + 1);
        if (++answered === n) {
          s.end();
          resolve();
        }
      }
    });
    s.on("error", reject);
    let lines = "";
    for (let i = 0; i < n; i++) {
      const content = `entry ${i}: ${"lorem ipsum dolor sit amet ".repeat(1 + (i % 5))}`;
      lines += JSON.stringify({ jsonrpc: "2.0", id: i + 1, method: "entry.add", params: { pad: "inbox", author: `agent-${i % 4}`, content, tags: [`t${i % 12}`] } }) + "\n";
    }
    s.write(lines);
  });
}

/** Memory of the processes whose command line matches `pattern` (the app
 *  and its WebKit processes; tauri-driver's WebKitWebDriver left out), in
 *  MiB: the sum of their resident sets (shared libraries counted once per
 *  process) and of their proportional sets (shared pages split between the
 *  processes sharing them), and each process's proportional set. */
function memory(pattern = /scratchpad-app|WebKitWebProcess|WebKitNetworkProcess/) {
  const out = execFileSync("ps", ["-eo", "pid=,rss=,args="]).toString();
  let rssKb = 0;
  let pssKb = 0;
  const each = [];
  for (const line of out.split("\n")) {
    if (pattern.test(line) && !/tauri-driver|WebKitWebDriver/.test(line)) {
      const [pid, rss, cmd] = line.trim().split(/\s+/);
      rssKb += Number(rss) || 0;
      try {
        const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
        const pss = Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
        pssKb += pss;
        each.push(`${path.basename(cmd)} ${(pss / 1024).toFixed(0)}`);
      } catch {
        // the process ended meanwhile
      }
    }
  }
  return `${(rssKb / 1024).toFixed(0)} MiB resident, ${(pssKb / 1024).toFixed(0)} MiB proportional (${each.join(", ")})`;
}

/** WebKitGTK's floor on this machine: its own MiniBrowser (GTK 3, one
 *  view) on a blank page, measured as the app is. */
async function webkitFloor() {
  const mini = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";
  if (!existsSync(mini)) return "MiniBrowser not installed";
  const p = spawn(mini, ["about:blank"], { stdio: "ignore" });
  await sleep(8000);
  const m = memory(/MiniBrowser|WebKitWebProcess|WebKitNetworkProcess/);
  p.kill();
  await sleep(1000);
  return m;
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

process.on("unhandledRejection", async (e) => {
  console.error(e);
  await quit();
  process.exit(1);
});
console.log(`WebKitGTK's floor: MiniBrowser, about:blank        ${await webkitFloor()}`);
const launchMs = await launch({});
console.log(`launch to first render (window up, data loaded)   ${launchMs} ms`);
console.log(`app memory, empty store                           ${memory()}`);

const t0 = Date.now();
await burst(10_000);
const written = Date.now() - t0;
// A burst this size outruns the event ring (4,096): the app hears `lagged`
// and reloads its first page (1,000); scrolling loads the rest.
await waitFor("the feed to catch up", async () =>
  browser.execute(() => /^inbox · \d{4,}/.test(document.getElementById("view-title").textContent)), 120_000);
console.log(`10,000 entries written by an agent, feed caught up  ${Date.now() - t0} ms (engine took ${written} ms)`);

await sleep(2000); // let the burst's redraws settle
// Before scrolling: the feed holds its first page; what the burst's events
// cost shows here.
console.log(`app memory, after the burst, before scrolling     ${memory()}`);
const frames = await browser.executeAsync((done) => {
  const feed = document.getElementById("feed");
  const times = [];
  let last = performance.now();
  let n = 0;
  const step = () => {
    const now = performance.now();
    times.push(now - last);
    last = now;
    feed.scrollTop += 3000;
    const bottom = feed.scrollTop + feed.clientHeight >= feed.scrollHeight - 1;
    const all = document.getElementById("view-title").textContent.startsWith("inbox · 10000 ");
    if (++n < 600 && !(bottom && all)) requestAnimationFrame(step);
    else done(times.slice(1));
  };
  requestAnimationFrame(step);
});
const title = await browser.execute(() => document.getElementById("view-title").textContent);
console.log(`scrolling to the end (${title}), ${frames.length} frames of 3,000 px: frame p50 ${pct(frames, 50).toFixed(1)} ms, p95 ${pct(frames, 95).toFixed(1)} ms, max ${Math.max(...frames).toFixed(1)} ms`);
console.log(`rows in the DOM for 10,000 entries                ${await browser.execute(() => document.querySelectorAll("#feed .row").length)}`);
await sleep(3000);
console.log(`app memory, idle, 10,000 entries loaded           ${memory()} (${APP.includes("/release/") ? "release" : "debug"} build; app + WebKit processes)`);
// A window one forgets is open: what it holds once the scroll's garbage
// has had time to be collected and returned.
await sleep(60_000);
console.log(`app memory, a minute later                        ${memory()}`);
await quit();
