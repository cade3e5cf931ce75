// `bun bench/mcp.ts [--quick] [-n N]`: how fast agent_wait in an `a2a mcp` process ($A2A_BIN,
// default dist/a2a) wakes when a slot is published, and what the server costs at rest.
//
// Each trial: the SDK client sends agent_wait(NAME) for a fresh name, waits 15-30 ms so the
// server is blocked in its watch, publishes NAME, and stops the clock when the client holds
// the result. Three publishers, interleaved at random so drift hits all alike:
//   rename   this process writes the record to tmp/ and the clock starts just before the
//            rename(2) into slots/: the publish instant itself (lib/fs/atomic.ts step 3)
//   lib      this process calls lib publishSlot (lock, temp write, fsync, rename, unlock)
//   cli      this process spawns `a2a publish NAME RESULT`: what a shell script pays
// Both clocks are read in this process (performance.now), so no cross-process clock is
// involved. A trial whose wait did not block (the publish beat the request) is reported as
// "early", not counted. Also: 20 concurrent agent_wait on one name woken by one publish
// (until the last result), and the server's RSS idle after start-up and after the trials
// (with how much of it is pages of the binary, shared by every a2a process, and how much its
// own), next to the same binary as a blocked `a2a wait` and to the smallest server on the same
// SDK (bench/fixtures/mcp-floor.ts, built with a2a's flags).
// Nothing asserts on time; the exit status is 1 only if a measurement failed.

import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { connect } from "../tests/harness/mcp";
import { BIN, childEnv } from "../tests/harness/run";
import { openStore } from "../lib/engine/open";
import { ensureDir } from "../lib/fs/guard";
import { slotFile, slotsDir, tmpDir } from "../lib/fs/paths";
import { nowSec } from "../lib/core/time";
import { encodeRecord } from "../lib/slots/record";
import { publishSlot } from "../lib/slots/slot";
import { buildReference, freshCopy } from "./lib/reference";
import { fmtMs, randBetween, shuffle, summarize } from "./lib/stats";
import { textTable } from "./lib/table";
import { LIST_BUDGET, MODEL_BUDGET, modelView } from "../cli/mcp/toolsets";

const { values: opt } = parseArgs({
  args: Bun.argv.slice(2),
  options: { quick: { type: "boolean", default: false }, n: { type: "string", short: "n" } },
});
const N = Number(opt.n ?? (opt.quick ? 40 : 150));
const FANOUT = 20;
const FANOUT_TRIALS = opt.quick ? 10 : 40;
const log = (s: string) => process.stderr.write(s + "\n");

const dir = mkdtempSync(join(tmpdir(), "a2a-bench-mcp-"));
const store = openStore({ dir, env: {} });
ensureDir(store, slotsDir(store));
ensureDir(store, tmpDir(store));

const { client, pid } = await connect(dir, {}, { stderr: "inherit", name: "a2a-bench" });
await client.listTools();

// VmRSS and its parts: RssFile is pages of the binary itself (shared by every a2a process on
// the machine and with the page cache), RssAnon this process's own memory.
interface Rss {
  total: number;
  anon: number;
  file: number;
}
const rssOf = (p: number): Rss => {
  const st = readFileSync(`/proc/${p}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(st)![1]) / 1024;
  return { total: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") + kb("RssShmem") };
};
const fmtRss = (r: Rss) => `${r.total.toFixed(1)} MiB (own ${r.anon.toFixed(1)}, binary pages ${r.file.toFixed(1)})`;
await Bun.sleep(1000);
const idleRss = rssOf(pid);

// The reference: the same binary as a CLI waiter (`a2a wait`, blocked), which loads no MCP SDK.
const cliWaiter = Bun.spawn({ cmd: [BIN, "wait", "never-published"], env: childEnv({ dir }), stdout: "ignore", stderr: "ignore" });
await Bun.sleep(1000);
const cliRss = rssOf(cliWaiter.pid);
cliWaiter.kill();
await cliWaiter.exited;

// The floor: the smallest server on the same SDK and zod (bench/fixtures/mcp-floor.ts), idle
// after the same initialize and tools/list. Any MCP server on this stack holds at least this.
const floorRss = await (async () => {
  const transport = new StdioClientTransport({ command: freshCopy(buildReference("mcp-floor"), "mcp-floor"), stderr: "inherit" });
  const floorClient = new Client({ name: "a2a-bench", version: "1.0.0" });
  await floorClient.connect(transport);
  await floorClient.listTools();
  await Bun.sleep(1000);
  const r = rssOf(transport.pid!);
  await floorClient.close();
  return r;
})();

type Publisher = (name: string, result: string) => Promise<number>; // returns the clock start
const publishers: Record<string, Publisher> = {
  rename: async (name, result) => {
    const now = nowSec();
    const rec = { a2a: 1 as const, name, state: "done" as const, task: "", result, size: 0, version: 1, started_at: now, published_at: now, updated_at: now, expires_at: null, chunks: 0, host: store.host, pid: process.pid };
    const temp = join(tmpDir(store), `bench.${name}.tmp`);
    writeFileSync(temp, encodeRecord(rec), { mode: 0o600 });
    const t0 = performance.now();
    renameSync(temp, slotFile(store, name));
    return t0;
  },
  lib: async (name, result) => {
    const t0 = performance.now();
    await publishSlot(store, name, result);
    return t0;
  },
  cli: async (name, result) => {
    const t0 = performance.now();
    const p = Bun.spawn({ cmd: [BIN, "publish", name, result], env: childEnv({ dir }), stdout: "ignore", stderr: "inherit" });
    void p.exited;
    return t0;
  },
};

let waits = 0; // agent_wait calls answered
const call = (name: string) => (waits++, client.callTool({ name: "agent_wait", arguments: { name, timeout: 60 } }, undefined, { timeout: 120_000 }));

async function trial(method: string, i: number): Promise<{ ms: number; early: boolean }> {
  const name = `${method}-${i}`;
  const waiting = call(name).then((r) => ({ r, t1: performance.now() }));
  await Bun.sleep(randBetween(15, 30));
  const t0 = await publishers[method](name, `result ${i}`);
  const { r, t1 } = await waiting;
  const body = JSON.parse((r.content as { text: string }[])[0].text);
  if (!body.ok || body.result !== `result ${i}`) throw new Error(`${method} trial ${i}: unexpected result ${JSON.stringify(body)}`);
  return { ms: t1 - t0, early: body.waited_secs < 0.005 }; // a blocked wait lasted >= ~10 ms
}

const samples: Record<string, number[]> = { rename: [], lib: [], cli: [] };
const early: Record<string, number> = { rename: 0, lib: 0, cli: 0 };
const WARMUP = 5;
let failed = false;
try {
  const order = shuffle(Object.keys(samples).flatMap((m) => Array.from({ length: N + WARMUP }, () => m)));
  const seen: Record<string, number> = { rename: 0, lib: 0, cli: 0 };
  for (const m of order) {
    const i = seen[m]++;
    const t = await trial(m, i);
    if (i < WARMUP) continue;
    if (t.early) early[m]++;
    else samples[m].push(t.ms);
  }
  log(`wake trials done (${order.length})`);

  // One publish wakes FANOUT waiters in one server: they share its one directory watch.
  samples.fanout = [];
  for (let i = 0; i < FANOUT_TRIALS; i++) {
    const name = `fan-${i}`;
    const waits = Array.from({ length: FANOUT }, () => call(name).then(() => performance.now()));
    await Bun.sleep(randBetween(40, 60));
    const t0 = await publishers.rename(name, "fan");
    const ends = await Promise.all(waits);
    samples.fanout.push(Math.max(...ends) - t0);
  }
} catch (e) {
  failed = true;
  log(`bench/mcp.ts: ${(e as Error).message}`);
}
const afterRss = rssOf(pid);
await client.close();
rmSync(dir, { recursive: true, force: true });

const label: Record<string, string> = {
  rename: "agent_wait woken by rename (clock: just before rename)",
  lib: "agent_wait woken by lib publishSlot (in-process publisher)",
  cli: "agent_wait woken by `a2a publish` (clock: before spawn)",
  fanout: `${FANOUT} concurrent agent_wait, one publish (until the last result)`,
};
const rows = [["method", "n", "p50", "p90", "p99", "max", "mean", "early"]];
for (const [m, xs] of Object.entries(samples)) {
  const s = summarize(xs);
  rows.push([label[m], String(s.n), fmtMs(s.p50), fmtMs(s.p90), fmtMs(s.p99), fmtMs(s.max), fmtMs(s.mean), m in early ? String(early[m]) : "-"]);
}
process.stdout.write(textTable(rows, 1));
process.stdout.write(`times in ms; "early" = trials where the publish landed before the wait blocked (not counted)\n`);
const grown = afterRss.total - idleRss.total;
process.stdout.write(`server RSS (VmRSS): idle after start-up ${fmtRss(idleRss)}; after ${waits} agent_wait calls ${fmtRss(afterRss)}, +${grown.toFixed(1)} MiB\n`);
process.stdout.write(`reference: the same binary as a blocked \`a2a wait\` (no MCP SDK): ${fmtRss(cliRss)}\n`);
process.stdout.write(`floor: the smallest server on the same SDK and zod, one tool (bench/fixtures/mcp-floor.ts): ${fmtRss(floorRss)}; a2a mcp is ${(idleRss.total - floorRss.total).toFixed(1)} MiB above it\n`);
// What each tool set costs a model's context (issue 37): tools/list's `tools` as JSON, and what a
// model is shown of it (name, description, input schema), at about 4 bytes a token.
for (const set of Object.keys(LIST_BUDGET)) {
  const s = await connect(dir, {}, { tools: set, name: "a2a-bench" });
  const { tools } = await s.client.listTools();
  await s.close();
  const bytes = JSON.stringify(tools).length;
  const shown = JSON.stringify(tools.map(modelView)).length;
  process.stdout.write(`tools/list --tools ${set}: ${tools.length} tools, ${bytes} bytes (budget ${LIST_BUDGET[set]}: ${bytes <= LIST_BUDGET[set] ? "met" : "MISSED"}); a model is shown ${shown} bytes, ~${Math.round(shown / 4)} tokens (budget ${MODEL_BUDGET[set]}: ${shown <= MODEL_BUDGET[set] ? "met" : "MISSED"})\n`);
}
process.stdout.write(`goals (issue 10): idle <= 45 MiB: ${idleRss.total <= 45 ? "met" : "MISSED"}; after >= 1,000 waits <= +15 MiB: ${waits < 1000 ? "not measured (fewer waits)" : grown <= 15 ? "met" : "MISSED"}\n`);
process.exit(failed ? 1 : 0);
