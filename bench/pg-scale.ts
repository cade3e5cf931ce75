// `bun bench/pg-scale.ts [--sessions 10,100,500,1000,2000] [--trials 100] [--cli 10]`: many
// sessions on one PostgreSQL (issue 38). One throwaway cluster (tests/harness/pg.ts) with
// max_connections raised to hold the largest N (ALTER SYSTEM, then a restart).
//
// A session here is one in-process bus (openBus) with its own two connections, as a live
// `a2a mcp` holds them: one for its statements, one for its LISTENs (lib/pg/engine.ts, wake.ts).
// Each waits, as an agent blocked in agent_wait and in a waiting receive does, on its own slot
// (s<i>, the next version) and its own inbox (a<i>) at once, and waits again after each wake.
// The sessions live in host processes of up to PER_HOST each (a process per session would be
// the real thing; 2,000 Bun processes do not fit this machine beside the server); the server
// sees what N `a2a mcp` processes would give it: 2N connections, N slot LISTENs (each on its
// slot's own channel), N inbox LISTENs, the safety rechecks every 2 s.
//
// For each N, a driver (this process, a bus of its own) publishes a session's slot, or sends to
// its inbox, one at a time, round robin over the sessions, and the wake is the session's clock
// (CLOCK_MONOTONIC, bench/lib/clock.ts) when its wait returned, minus the driver's before the
// call; the CPU time of the server's processes and of the hosts over those wakes, less their idle
// rate, per wake. Then `a2a status` and `a2a publish` (spawn -> exit, alternated) on that store, and the
// server's memory: PSS and RSS of each session backend (/proc/PID/smaps_rollup; PSS shares
// shared_buffers out among the processes that map them, RSS counts them whole in each), and the
// PSS of every server process (the postmaster and its children) over its value with no session.
// A level is skipped when the memory it would take (the last level's PSS per session, server and
// hosts) passes half of what the machine has free, and a level that fails (a host's connection
// lost, the server too busy to connect) ends the run, named under the table. Nothing asserts on time.

import type { Subprocess } from "bun";
import { readdirSync, readFileSync } from "node:fs";
import { freemem, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openBus } from "../lib/bus";
import { BIN, childEnv } from "../tests/harness/run";
import { freshDatabase, pgServer, pgSkipReason, restart } from "../tests/harness/pg";
import { ensureBinary } from "../tests/build";
import { mono } from "./lib/clock";
import { lineReader } from "./lib/proc";
import { freshCopy } from "./lib/reference";
import { timeSpawn } from "./lib/spawn";
import { summarize, type Summary } from "./lib/stats";

const PER_HOST = 250;
const IDLE_MS = 5_000;
const say = (s: string) => process.stdout.write(s + "\n");

// ---- a host of sessions: argv url, first, count --------------------------------------------
if (process.argv[2] === "host") {
  const [url, first, count] = [process.argv[3], Number(process.argv[4]), Number(process.argv[5])];
  const buses = Array.from({ length: count }, () => openBus({ dir: url, env: {} }));
  // Connected 25 at a time: 250 connections opened at once on a loaded machine had one closed
  // under it (ERR_POSTGRES_CONNECTION_CLOSED while opening an inbox); sessions start apart.
  for (let k = 0; k < count; k += 25) await Promise.all(buses.slice(k, k + 25).map((b, j) => b.mail.ensureInbox(`a${first + k + j}`)));
  const slotLoop = async (i: number, bus: (typeof buses)[number]) => {
    let after = 0;
    for (;;) {
      const r = await bus.slots.wait([`s${i}`], { afterVersion: after, timeoutMs: 3_600_000 });
      const t = mono();
      if (r.kind !== "done") throw new Error(`s${i}: ${r.kind}`);
      after = r.value.get(`s${i}`)!.version;
      say(`s ${i} ${t}`);
    }
  };
  const inboxLoop = async (i: number, bus: (typeof buses)[number]) => {
    for (;;) {
      const r = await bus.mail.receive(`a${i}`, { wait: true, max: 50, timeoutMs: 3_600_000 }, () => {});
      const t = mono();
      if (r.kind !== "done") throw new Error(`a${i}: ${r.kind}`);
      say(`m ${i} ${t}`);
    }
  };
  buses.forEach((b, k) => {
    slotLoop(first + k, b).catch((e) => (console.error(String(e)), process.exit(1)));
    inboxLoop(first + k, b).catch((e) => (console.error(String(e)), process.exit(1)));
  });
  say("armed");
  await new Promise(() => {}); // until killed
}

// ---- the parent ----------------------------------------------------------------------------
const { values: opt } = parseArgs({
  args: Bun.argv.slice(2),
  options: { sessions: { type: "string" }, trials: { type: "string" }, cli: { type: "string" } },
});
const LEVELS = (opt.sessions ?? "10,100,500,1000,2000").split(",").map(Number);
const TRIALS = Number(opt.trials ?? 100);
const CLI = Number(opt.cli ?? 10);
const skip = pgSkipReason();
if (skip) {
  console.log(`pg-scale: skipped: ${skip}`);
  process.exit(0);
}
if (LEVELS.some((n) => !Number.isInteger(n) || n < 1)) throw new Error("--sessions: a comma list of positive integers");
const log = (s: string) => process.stderr.write(s + "\n");
ensureBinary(BIN);
const a2a = freshCopy(BIN, "a2a-pg-scale");
const server = (await pgServer())!;
const MAX = 2 * Math.max(...LEVELS) + 50; // two per session, the driver, the CLI, psql
await server.admin(`alter system set max_connections = ${MAX}`);
await restart(server);

// ---- the server's memory, from /proc ---------------------------------------------------------
const postmaster = Number(readFileSync(join(server.cluster!.data, "postmaster.pid"), "utf8").split("\n")[0]);
const mem = (pid: number) => {
  try {
    const t = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(t)?.[1] ?? 0);
    return { pss: kb("Pss") / 1024, rss: kb("Rss") / 1024 };
  } catch {
    return { pss: 0, rss: 0 }; // ended meanwhile
  }
};
const serverPids = () => [postmaster, ...readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")[1]) === postmaster;
  } catch {
    return false;
  }
})];
// CPU time (ms, user + system) of processes, from /proc/PID/stat (clock ticks of 10 ms).
const cpuMs = (pids: number[]) => pids.reduce((a, pid) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ");
    return a + (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return a;
  }
}, 0);
const serverPss = () => serverPids().reduce((a, p) => a + mem(p).pss, 0);
const idlePss = serverPss();

interface Level { n: number; slot: Summary; inbox: Summary; pubCall: Summary; sendCall: Summary; status: Summary; publish: Summary; pss: number; rss: number; total: number; hostRss: number; serverCpu: number; hostCpu: number; serverWake: number; hostWake: number; load: string }
const levels: Level[] = [];
const skipped: string[] = [];
const live: Subprocess[] = []; // the current level's hosts, killed if it fails
for (const N of LEVELS) {
  const last = levels.at(-1);
  if (last && N * (last.total + last.hostRss) > freemem() / 2 ** 20 / 2) {
    skipped.push(`${N}: about ${((N * (last.total + last.hostRss)) / 1024).toFixed(1)} GB by the last level's figures, over half of the ${(freemem() / 2 ** 30).toFixed(1)} GB free`);
    continue;
  }
  try {
    await level(N);
  } catch (err) {
    // Where the machine stops holding it: say so, and measure no further.
    for (const h of live.splice(0)) h.kill("SIGKILL");
    skipped.push(`${N}: failed: ${String((err as Error)?.message ?? err).split("\n").at(-1)}`);
    log(`pg-scale: ${skipped.at(-1)}`);
    break;
  }
}

async function level(N: number): Promise<void> {
  const db = await freshDatabase(server);
  const url = `${db.url}?schema=scale`;
  const driver = openBus({ dir: url, env: {} });
  await driver.mail.ensureInbox("driver"); // the schema made before the hosts start
  const hosts = Array.from({ length: Math.ceil(N / PER_HOST) }, (_, h) => Bun.spawn({
    cmd: [process.execPath, import.meta.path, "host", url, String(h * PER_HOST), String(Math.min(PER_HOST, N - h * PER_HOST))],
    stdout: "pipe", stderr: "inherit",
  }));
  live.push(...hosts);
  // Each host's lines: wakes go to whoever waits for that session's next one.
  const waiting = new Map<string, (t: number) => void>();
  const armed = hosts.map((h) => new Promise<void>((ok, fail) => {
    const line = lineReader(h.stdout);
    void (async () => {
      for (;;) {
        const l = await line().catch(() => undefined);
        if (l === undefined) return fail(new Error("a host ended"));
        if (l === "armed") ok();
        const [kind, i, t] = l.split(" ");
        waiting.get(`${kind} ${i}`)?.(Number(t));
      }
    })();
  }));
  await Promise.all(armed);
  const wake = (kind: "s" | "m", i: number) => new Promise<number>((ok) => waiting.set(`${kind} ${i}`, ok));
  const calls = { s: [] as number[], m: [] as number[] };
  const once = async (kind: "s" | "m", i: number) => {
    const woke = wake(kind, i);
    const t0 = mono();
    if (kind === "s") await driver.slots.publish(`s${i}`, "x");
    else await driver.mail.send("driver", `a${i}`, "x");
    calls[kind].push(mono() - t0);
    const bound = setTimeout(() => log(`pg-scale: ${kind} ${i} not woken after 60 s`), 60_000);
    const t = (await woke) - t0;
    clearTimeout(bound);
    return t;
  };
  // Every session's LISTEN connection has sent one (the server shows it), then the sessions the
  // trials use woken once each way, so theirs are in place. Not all N: every slot publish is
  // delivered to every session (one slots channel), so warming all would cost N^2 deliveries.
  const t0 = mono();
  const listening = async () => Number(await server.admin(`select count(*) from pg_stat_activity where datname = '${db.name}' and query ilike 'listen%'`));
  while ((await listening()) < N) {
    if (mono() - t0 > 600_000) throw new Error(`${N} sessions: not all listening after 10 minutes`);
    await Bun.sleep(100);
  }
  const pick = (k: number) => (k * 7919) % N; // spread over the sessions
  const used = [...new Set(Array.from({ length: TRIALS }, (_, k) => [pick(k), (pick(k) + 1) % N]).flat())];
  for (let i = 0; i < used.length; i += 20) await Promise.all(used.slice(i, i + 20).map((j) => Promise.all([once("s", j), once("m", j)])));
  log(`pg-scale: ${N} sessions armed and ${used.length} warmed in ${((mono() - t0) / 1000).toFixed(1)} s`);
  const slot: number[] = [];
  const inbox: number[] = [];
  calls.s = [];
  calls.m = [];
  const busy = [serverPids(), hosts.map((h) => h.pid)];
  const b0 = busy.map(cpuMs);
  const tb = mono();
  for (let k = 0; k < TRIALS; k++) {
    const i = pick(k); // each waited again long before its next turn
    slot.push(await once("s", i));
    inbox.push(await once("m", (i + 1) % N));
    await Bun.sleep(2); // pacing: one wake at a time, the idle load of N sessions between
  }
  const tEnd = mono();
  const cEnd = busy.map(cpuMs);
  // What N idle sessions cost by themselves (their safety rechecks: lib/pg/engine.ts PG_RECHECK_MS,
  // lib/mail/receive.ts RECOVER_MS): CPU of the server and of the hosts over IDLE_MS, as % of a core.
  const idle = [serverPids(), hosts.map((h) => h.pid)];
  const c0 = idle.map(cpuMs);
  const i0 = mono();
  await Bun.sleep(IDLE_MS);
  const [serverCpu, hostCpu] = idle.map((p, k) => ((cpuMs(p) - c0[k]) / (mono() - i0)) * 100);
  // CPU per wake (one publish and one send), the idle rate over the same time taken out: what a
  // notification costs the server and the sessions' processes as N grows.
  const [serverWake, hostWake] = busy.map((_, k) => (cEnd[k] - b0[k] - ((k ? hostCpu : serverCpu) / 100) * (tEnd - tb)) / (2 * TRIALS));
  const env = childEnv({ dir: url });
  const status: number[] = [];
  const publish: number[] = [];
  for (let k = 0; k < 2 + CLI; k++) {
    const s = await timeSpawn([a2a, "status"], env);
    const p = await timeSpawn([a2a, "publish", "cli", `x${k}`], env);
    if (k >= 2) (status.push(s.wall), publish.push(p.wall));
  }
  const backends = (await server.admin(`select pid from pg_stat_activity where datname = '${db.name}' and backend_type = 'client backend' and pid <> pg_backend_pid()`)).split(/\s+/).filter(Boolean).map(Number);
  const per = backends.map(mem);
  const hostRss = hosts.reduce((a, h) => a + mem(h.pid).rss, 0) / N;
  const total = (serverPss() - idlePss) / N;
  levels.push({
    n: N, slot: summarize(slot), inbox: summarize(inbox), pubCall: summarize(calls.s), sendCall: summarize(calls.m), status: summarize(status), publish: summarize(publish),
    pss: (2 * per.reduce((a, m) => a + m.pss, 0)) / per.length, rss: per.reduce((a, m) => a + m.rss, 0) / per.length, total, hostRss, serverCpu, hostCpu, serverWake, hostWake,
    load: loadavg().map((x) => x.toFixed(2)).join(" "),
  });
  const v = levels.at(-1)!;
  log(`pg-scale: ${N} sessions (${backends.length} backends): wake slot p50 ${v.slot.p50.toFixed(2)} p99 ${v.slot.p99.toFixed(2)}, inbox p50 ${v.inbox.p50.toFixed(2)} p99 ${v.inbox.p99.toFixed(2)} ms; status ${v.status.p50.toFixed(1)}, publish ${v.publish.p50.toFixed(1)} ms; ${total.toFixed(2)} MB PSS per session; load ${v.load}`);
  for (const h of hosts) h.kill("SIGKILL");
  await Promise.all(hosts.map((h) => h.exited));
  await driver.close();
  await db.drop();
  live.splice(0);
}
await server.stop();

// ---- report --------------------------------------------------------------------------------
const f = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
const base = levels[0];
const x = (v: Level, k: "slot" | "inbox") => (v === base ? "" : ` (${(v[k].p99 / base[k].p99).toFixed(1)}x)`);
const pp = (s: Summary) => `${f(s.p50)} / ${f(s.p99)}`;
console.log(`pg-scale bench: ${new Date().toISOString()}, Bun ${Bun.version}, PostgreSQL on loopback (max_connections ${MAX}), ${TRIALS} wakes of each kind and ${CLI} of each command per level`);
console.log(`wake (ms, p50 / p99; clock before the driver's call; the p99's multiple of the first level's in brackets; goal: p99 at 500 within 3x its value at 10)`);
console.log(`sessions  slot publish -> wait    the publish call   send -> waiting receive   the send call      load`);
for (const v of levels) console.log(`${String(v.n).padStart(8)}  ${(pp(v.slot) + x(v, "slot")).padEnd(23)}  ${pp(v.pubCall).padEnd(17)}  ${(pp(v.inbox) + x(v, "inbox")).padEnd(24)}  ${pp(v.sendCall).padEnd(17)}  ${v.load}`);
console.log(`CPU per wake (ms, user + system, the idle rate taken out), of the server and of the session hosts: a notification's cost as sessions grow`);
console.log(`sessions  server  hosts`);
for (const v of levels) console.log(`${String(v.n).padStart(8)}  ${f(v.serverWake).padStart(6)}  ${f(v.hostWake).padStart(5)}`);
console.log(`cost: CLI spawn -> exit (ms, p50); memory per session (MB): the server's PSS over idle, a session's two backends (PSS; one backend's RSS), the host's RSS;`);
console.log(`  idle (N sessions waiting, nothing else): CPU of the server and of the session hosts, % of one core over ${IDLE_MS / 1000} s`);
console.log(`sessions  a2a status  a2a publish  server PSS  2 backends PSS  backend RSS  host RSS  idle server CPU  idle hosts CPU`);
for (const v of levels) console.log(`${String(v.n).padStart(8)}  ${f(v.status.p50).padStart(10)}  ${f(v.publish.p50).padStart(11)}  ${f(v.total).padStart(10)}  ${f(v.pss).padStart(14)}  ${f(v.rss).padStart(11)}  ${f(v.hostRss).padStart(8)}  ${`${v.serverCpu.toFixed(0)}%`.padStart(15)}  ${`${v.hostCpu.toFixed(0)}%`.padStart(14)}`);
for (const s of skipped) console.log(`skipped ${s}`);
