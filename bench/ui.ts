// Bench of the dashboard (not run by the tests): how long from a publish to the page's DOM
// showing it, next to how long the same publish takes to wake a waiter (lib waitSlots) in the
// same run; and the page with 10,000 slots: time to the first rendered snapshot, and the
// update time with that many rows. Needs /usr/bin/chromium and playwright-core.
//
//   bun bench/ui.ts [--rounds N] [--slots N]
//
// Times: the publish starts at t0 (wall clock, ms with fractions); the waiter's wake and the
// page's MutationObserver (performance.timeOrigin + now) stamp their own ends, same clock.
import { loadavg } from "node:os";
import { ensureBinary } from "../tests/build";
import { BIN, tempDir } from "../tests/harness/run";
import { browserMissing, launchBrowser, startUi } from "../tests/harness/ui";
import { openStore } from "../lib/engine/open";
import { closeWatches } from "../lib/fs/watch";
import { publishSlot } from "../lib/slots/slot";
import { waitSlots } from "../lib/slots/wait";

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const ROUNDS = arg("--rounds", 100);
const SLOTS = arg("--slots", 10_000);

const why = browserMissing();
if (why) {
  console.log(`bench/ui.ts: skipped: ${why}`);
  process.exit(0);
}
ensureBinary(BIN);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(2)} ms  p99 ${pct(xs, 99).toFixed(2)} ms  (n=${xs.length})`;
const wall = () => performance.timeOrigin + performance.now();

// Records, in the page, when each row first shows each version.
const RECORDER = `(() => {
  window.__seen = {};
  const note = (tr) => { const k = tr.dataset.name + ":" + tr.dataset.version; if (tr.dataset.name && !(k in window.__seen)) window.__seen[k] = performance.timeOrigin + performance.now(); };
  const obs = new MutationObserver((ms) => { for (const m of ms) { if (m.type === "attributes") note(m.target); else m.addedNodes.forEach((n) => n.dataset && note(n)); } });
  const start = () => obs.observe(document.getElementById("slots"), { subtree: true, childList: true, attributes: true, attributeFilter: ["data-version"] });
  if (document.getElementById("slots")) start(); else document.addEventListener("DOMContentLoaded", start);
  new MutationObserver(() => { if (document.body && document.body.dataset.ready && !window.__readyAt) window.__readyAt = performance.now(); })
    .observe(document, { subtree: true, attributes: true, attributeFilter: ["data-ready"] });
})()`;

async function latency(page: import("playwright-core").Page, store: ReturnType<typeof openStore>, name: string, rounds: number) {
  const wake: number[] = [];
  const dom: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const before = (await (await import("../lib/slots/read")).getSlot(store, name))?.version ?? 0;
    let woke = 0;
    const waiter = waitSlots(store, [name], { afterVersion: before, timeoutMs: 20_000 }).then(() => (woke = wall()));
    const t0 = wall();
    const rec = await publishSlot(store, name, `round ${i}`);
    await waiter;
    const key = `${name}:${rec.version}`;
    // A function, not a string: the page's CSP forbids eval, which string predicates need.
    const seen = (await (await page.waitForFunction((k) => (globalThis as any).__seen[k], key, { timeout: 20_000 })).jsonValue()) as number;
    wake.push(woke - t0);
    dom.push(seen - t0);
  }
  return { wake, dom };
}

using d = tempDir("a2a-bench-ui-");
const store = openStore({ dir: d.path, env: {} });
await publishSlot(store, "probe", "start");
const ui = await startUi([], { dir: d.path });
const browser = await launchBrowser();
try {
  console.log(`load average before: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
  const page = await browser.ctx.newPage();
  await page.addInitScript(RECORDER);
  await page.goto(ui.url);
  await page.waitForSelector("body[data-ready]");
  await latency(page, store, "probe", 5); // warm-up
  const small = await latency(page, store, "probe", ROUNDS);
  console.log(`publish -> slot wake (lib waitSlots): ${fmt(small.wake)}`);
  console.log(`publish -> page DOM updated:          ${fmt(small.dom)}`);
  await page.close();

  const t = wall();
  for (let i = 0; i < SLOTS; i++) await publishSlot(store, `s${String(i).padStart(5, "0")}`, `result ${i}`);
  console.log(`(${SLOTS} slots written in ${((wall() - t) / 1000).toFixed(1)} s)`);
  const big = await browser.ctx.newPage();
  await big.addInitScript(RECORDER);
  const t1 = wall();
  await big.goto(ui.url);
  await big.waitForSelector("body[data-ready]", { timeout: 120_000 });
  const readyAt = (await big.evaluate("window.__readyAt")) as number;
  const rows = (await big.evaluate(`document.querySelectorAll("#slots tr").length`)) as number;
  console.log(`${rows} rows: snapshot rendered ${readyAt.toFixed(0)} ms after navigation start (goto -> ready ${(wall() - t1).toFixed(0)} ms)`);
  const upd = await latency(big, store, "s00042", Math.min(ROUNDS, 30));
  console.log(`with ${SLOTS} slots: publish -> slot wake ${fmt(upd.wake)}`);
  console.log(`with ${SLOTS} slots: publish -> DOM updated ${fmt(upd.dom)}`);
  const t2 = wall();
  await big.evaluate("new Promise((r) => requestAnimationFrame(() => r(0)))");
  console.log(`with ${SLOTS} slots: a frame round trip ${(wall() - t2).toFixed(1)} ms (interactive)`);
  console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
} finally {
  await browser.close();
  ui.proc.kill("SIGINT");
  await ui.proc.exited;
  closeWatches(store);
}
