// `bun bench/pg-load.ts [--tasks 2000] [--pending 100000] [--agents 100] [--messages 100] [--trials 200]`:
// the PostgreSQL engine under load, each figure next to the file engine's in the same run where
// the issue asks for one (issue 22, "Measured"). One throwaway server (tests/harness/pg.ts).
//
//   claims   a queue of --tasks tasks drained by 1, 4 and 8 claimer processes, each looping
//            claim + done through the bus until nothing is claimable; tasks per second from
//            "go" (every claimer connected and ready) to the last claimer's end; on a
//            directory store and on PostgreSQL. Goal (PostgreSQL, issue 34): 4 claimers over
//            one at least the file engine's ratio in the same run.
//   depth    claim + done in this process with 100 and with --pending tasks pending (one task
//            added back per trial, so the depth holds); p50 of the claim alone. Goal: within
//            2x of each other.
//   soak     --agents agents in 10 processes, each agent sending --messages messages (agent i's
//            j-th to agent (i + j + 1) mod agents), then every agent receiving until it holds
//            as many as were sent to it: lost and duplicated messages counted (goal: 0 and 0).
// Nothing asserts on time; the exit status is 1 when the soak lost or duplicated a message.
// Run it alone: the machine's other work moves every figure.

import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openBus } from "../lib/bus";
import { freshDatabase, pgServer, pgSkipReason } from "../tests/harness/pg";
import { mono } from "./lib/clock";
import { lineReader } from "./lib/proc";
import { summarize } from "./lib/stats";

const role = process.argv[2];

// ---- children ------------------------------------------------------------------------------
const say = (s: string) => process.stdout.write(s + "\n");
if (role === "claimer") {
  const bus = openBus({ dir: process.argv[3], env: {} });
  await bus.tasks.queueExists("load"); // connected before "go"
  say("ready");
  for await (const _ of console) break; // "go"
  let n = 0;
  for (;;) {
    const c = (await bus.tasks.claim("load", { as: `c${process.pid}`, leaseSec: 600 }).catch(() => undefined))?.value;
    if (!c) break; // nothing claimable: drained
    await bus.tasks.complete(c.id, c.token, "ok");
    n++;
  }
  say(`end ${mono()} ${n}`);
  await bus.close();
  process.exit(0);
}
if (role === "agents") {
  // argv: dir, first agent, count, agents in all, messages each
  const [dir, first, count, all, m] = [process.argv[3], ...process.argv.slice(4, 8).map(Number)];
  const bus = openBus({ dir, env: {} });
  const mine = Array.from({ length: count }, (_, k) => first + k);
  await Promise.all(mine.map((i) => bus.mail.ensureInbox(`a${i}`)));
  say("ready");
  for await (const _ of console) break; // "go"
  await Promise.all(mine.map(async (i) => {
    for (let j = 0; j < m; j++) await bus.mail.send(`a${i}`, `a${(i + j + 1) % all}`, `${i}:${j}`);
  }));
  say("sent");
  for await (const _ of console) break; // "receive": every process has sent
  const got: string[] = [];
  await Promise.all(mine.map(async (t) => {
    const want = Array.from({ length: all }, (_, i) => i).filter((i) => ((t - i - 1) % all + all) % all < m).length;
    let have = 0;
    while (have < want) {
      const r = await bus.mail.receive(`a${t}`, { wait: true, max: 50, timeoutMs: 60_000 }, () => {});
      if (r.kind !== "done") throw new Error(`a${t}: ${r.kind} after ${have} of ${want}`);
      for (const msg of r.value) got.push(`${t}<${msg.body}`);
      have += r.value.length;
    }
  }));
  say(`got ${JSON.stringify(got)}`);
  await bus.close();
  process.exit(0);
}

// ---- the parent ----------------------------------------------------------------------------
const { values: opt } = parseArgs({
  args: Bun.argv.slice(2),
  options: { tasks: { type: "string" }, pending: { type: "string" }, agents: { type: "string" }, messages: { type: "string" }, trials: { type: "string" } },
});
const TASKS = Number(opt.tasks ?? 2000);
const PENDING = Number(opt.pending ?? 100_000);
const AGENTS = Number(opt.agents ?? 100);
const MESSAGES = Number(opt.messages ?? 100);
const TRIALS = Number(opt.trials ?? 200);
const skip = pgSkipReason();
if (skip) {
  console.log(`pg-load: skipped: ${skip}`);
  process.exit(0);
}
const log = (s: string) => process.stderr.write(s + "\n");
const server = (await pgServer())!;
const db = await freshDatabase(server);
const temp: string[] = [];
const cleanup = async () => {
  for (const d of temp) rmSync(d, { recursive: true, force: true });
  await db.drop();
};
const child = (args: string[]) => Bun.spawn({ cmd: [process.execPath, import.meta.path, ...args], stdin: "pipe", stdout: "pipe", stderr: "inherit" });
const tell = (p: ReturnType<typeof child>, s: string) => {
  p.stdin.write(s + "\n");
  p.stdin.flush();
};
const stores = (label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `a2a-bench-pgload-${label}-`));
  temp.push(dir);
  return { file: dir, postgres: `${db.url}?schema=${label}` };
};
async function fill(dir: string, queue: string, n: number) {
  const bus = openBus({ dir, env: {} });
  for (let i = 0; i < n; i += 1000) await bus.tasks.addMany(Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ queue, payload: `t${i + j}` })));
  await bus.close();
}

// ---- claims: 1, 4, 8 claimers --------------------------------------------------------------
const claims: [string, number, number][] = []; // engine, claimers, tasks/s
for (const k of [1, 4, 8]) {
  for (const engine of ["file", "postgres"] as const) {
    const dir = stores(`claims${k}`)[engine];
    await fill(dir, "load", TASKS);
    const procs = Array.from({ length: k }, () => child(["claimer", dir]));
    const readers = procs.map((p) => lineReader(p.stdout));
    await Promise.all(readers.map((r) => r()));
    const t0 = mono();
    for (const p of procs) tell(p, "go");
    const ends = (await Promise.all(readers.map((r) => r()))).map((e) => e.split(" ").map(Number));
    await Promise.all(procs.map((p) => p.exited));
    const done = ends.reduce((a, e) => a + e[2], 0);
    if (done !== TASKS) throw new Error(`${engine}, ${k} claimers did ${done} of ${TASKS} tasks`);
    claims.push([engine, k, TASKS / ((Math.max(...ends.map((e) => e[1])) - t0) / 1000)]);
    log(`claims: ${engine}, ${k} claimer(s): ${claims.at(-1)![2].toFixed(0)}/s`);
  }
}

// ---- depth: claim p50 with 100 and with PENDING pending --------------------------------------
const depth: [number, ReturnType<typeof summarize>, number][] = [];
for (const pending of [100, PENDING]) {
  const dir = stores(`depth${pending}`).postgres;
  const t = mono();
  await fill(dir, "deep", pending);
  const fillSec = (mono() - t) / 1000;
  const bus = openBus({ dir, env: {} });
  const lat: number[] = [];
  for (let i = 0; i < 20 + TRIALS; i++) {
    const t0 = mono();
    const c = (await bus.tasks.claim("deep", { as: "w", leaseSec: 600 })).value!;
    if (i >= 20) lat.push(mono() - t0);
    await bus.tasks.complete(c.id, c.token, "ok");
    await bus.tasks.add("deep", `more ${i}`);
  }
  await bus.close();
  depth.push([pending, summarize(lat), fillSec]);
  log(`depth: ${pending} pending: claim p50 ${depth.at(-1)![1].p50.toFixed(2)} ms (filled in ${fillSec.toFixed(0)} s)`);
}

// ---- soak: AGENTS x MESSAGES ---------------------------------------------------------------
const dir = stores("soak").postgres;
const PROCS = Math.min(10, AGENTS);
const per = Math.ceil(AGENTS / PROCS);
const procs = Array.from({ length: PROCS }, (_, p) => child(["agents", dir, String(p * per), String(Math.max(0, Math.min(per, AGENTS - p * per))), String(AGENTS), String(MESSAGES)]));
const readers = procs.map((p) => lineReader(p.stdout));
await Promise.all(readers.map((r) => r()));
const s0 = mono();
for (const p of procs) tell(p, "go");
await Promise.all(readers.map((r) => r())); // sent
const sendSec = (mono() - s0) / 1000;
for (const p of procs) tell(p, "receive");
const got = (await Promise.all(readers.map((r) => r()))).flatMap((l) => JSON.parse(l.slice(4)) as string[]);
await Promise.all(procs.map((p) => p.exited));
const soakSec = (mono() - s0) / 1000;
const expected = new Set<string>();
for (let i = 0; i < AGENTS; i++) for (let j = 0; j < MESSAGES; j++) expected.add(`${(i + j + 1) % AGENTS}<${i}:${j}`);
const seen = new Map<string, number>();
for (const g of got) seen.set(g, (seen.get(g) ?? 0) + 1);
const lost = [...expected].filter((e) => !seen.has(e)).length;
const duplicated = [...seen.values()].filter((n) => n > 1).length;
const stray = [...seen.keys()].filter((k) => !expected.has(k)).length;
await cleanup();

// ---- report --------------------------------------------------------------------------------
console.log(`pg-load bench: ${new Date().toISOString()}, Bun ${Bun.version}, PostgreSQL on loopback, load ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
console.log(`claims: ${TASKS} tasks, claim + done per task, tasks/s`);
console.log(`  claimers   file      postgres`);
for (const k of [1, 4, 8]) {
  const rate = (e: string) => claims.find((c) => c[0] === e && c[1] === k)![2];
  const over = (e: string) => (rate(e) / claims.find((c) => c[0] === e && c[1] === 1)![2]).toFixed(2);
  console.log(`  ${String(k).padEnd(9)}  ${rate("file").toFixed(0).padStart(6)}    ${rate("postgres").toFixed(0).padStart(6)}${k > 1 ? `   (${over("postgres")}x one claimer, file ${over("file")}x; goal at 4: >= file's)` : ""}`);
}
console.log(`depth: claim alone, in process, postgres (ms): p50 / p90 / p99`);
for (const [pending, s, fillSec] of depth) console.log(`  ${String(pending).padStart(6)} pending  ${s.p50.toFixed(2)} / ${s.p90.toFixed(2)} / ${s.p99.toFixed(2)}  (n ${s.n}; filled in ${fillSec.toFixed(0)} s)`);
console.log(`  ratio ${(depth[1][1].p50 / depth[0][1].p50).toFixed(2)}x (goal: within 2x)`);
console.log(`soak: ${AGENTS} agents x ${MESSAGES} messages in ${PROCS} processes on postgres: sent ${AGENTS * MESSAGES} in ${sendSec.toFixed(1)} s, all received in ${soakSec.toFixed(1)} s: lost ${lost}, duplicated ${duplicated}, stray ${stray}`);
process.exit(lost || duplicated || stray ? 1 : 0);
