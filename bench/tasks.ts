// Work-queue figures (issue 11), each next to its slot counterpart measured in the same run:
//
//   bun bench/tasks.ts [--trials 100] [--messages 1000] [--tasks 10000] [--spawns 5]   (A2A_BIN picks the binary)
//
// 1. wake: two waiter processes on one store, one blocked in lib waitSlots (slot wake), one in
//    lib claimTask --wait (claim wake); trials alternate between them. The waiter says
//    "armed", this process waits a random 5-15 ms, takes CLOCK_MONOTONIC (bench/lib/clock.ts)
//    and publishes the slot / adds the task (lib publishSlot / addTask); the waiter takes the
//    clock once it holds the record / the claim (the claim is itself a write: a linked version).
//    The add's and the publish's own duration is shown too. Goal: claim wake within 1.5x of
//    slot wake. Times in ms.
// 2. throughput: publish: one process publishing --messages slots back to back. Claim: the
//    queue holds --messages tasks; 1 or 4 claimer processes each loop claimTask + completeTask
//    until nothing is claimable; from "go" (all claimers ready) to the last one drained.
// 3. listing: `a2a task list QUEUE --json` over --tasks tasks and `a2a status --json` over as
//    many slots, spawned alternately --spawns times each, stdout to /dev/null; median wall
//    time. Goal: task list within 2x of status.
// Nothing here asserts; the figures depend on the machine and its load (printed with them).

import { lineReader } from "./lib/proc";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, childEnv } from "../tests/harness/run";
import { type Store } from "../lib/core/config";
import { openStore } from "../lib/engine/open";
import { closeWatches } from "../lib/fs/watch";
import { publishSlot } from "../lib/slots/slot";
import { waitSlots } from "../lib/slots/wait";
import { addTask, addTasks } from "../lib/tasks/add";
import { claimTask } from "../lib/tasks/claim";
import { completeTask } from "../lib/tasks/holder";
import { mono } from "./lib/clock";
import { makeStore, removeAllStores } from "./lib/fixture";
import { fmtMs, median, randBetween, summarize } from "./lib/stats";
import { mdTable } from "./lib/table";

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const line = (s: string) => process.stdout.write(s + "\n");

// ---- child roles -------------------------------------------------------------------------
const role = process.argv[2];
if (role === "slot-waiter" || role === "claim-waiter") {
  const store = openStore({ dir: process.argv[3], env: {} });
  const n = Number(process.argv[4]);
  for (let i = 0; i < n; i++) {
    line(`armed ${i}`);
    if (role === "slot-waiter") {
      const o = await waitSlots(store, [`s${i}`]);
      if (o.kind !== "done") throw new Error("slot wait did not end done");
    } else {
      const o = await claimTask(store, "wake", { wait: true, as: "bench" });
      if (o.kind !== "done") throw new Error("claim wait did not end done");
      line(`woke ${i} ${mono()}`);
      await completeTask(store, o.value!.id, o.value!.token, "");
      continue;
    }
    line(`woke ${i} ${mono()}`);
  }
  closeWatches(store);
  process.exit(0);
}
if (role === "claimer") {
  const store = openStore({ dir: process.argv[3], env: {} });
  line("ready");
  for await (const _ of console) break; // "go"
  let n = 0;
  for (;;) {
    let c;
    try {
      c = (await claimTask(store, "tput", { as: `c${process.pid}`, leaseSec: 600 })).value!;
    } catch {
      break; // nothing claimable: drained
    }
    await completeTask(store, c.id, c.token, "ok");
    n++;
  }
  line(`end ${mono()} ${n}`);
  process.exit(0);
}
if (role === "publisher") {
  const store = openStore({ dir: process.argv[3], env: {} });
  const m = Number(process.argv[4]);
  const t0 = mono();
  for (let i = 0; i < m; i++) await publishSlot(store, `p${i}`, "ok");
  line(`end ${mono() - t0}`);
  process.exit(0);
}

// ---- the parent ----------------------------------------------------------------------------
const TRIALS = arg("--trials", 100);
const MESSAGES = arg("--messages", 1000);
const TASKS = arg("--tasks", 10_000);
const SPAWNS = arg("--spawns", 5);
const env = childEnv();
const loadBefore = loadavg().map((x) => x.toFixed(2)).join(" ");
const log = (s: string) => process.stderr.write(s + "\n");
const fresh = (label: string) => mkdtempSync(join(tmpdir(), `a2a-bench-tasks-${label}-`));
const dirs: string[] = [];
process.on("exit", () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  removeAllStores();
});

function child(args: string[]) {
  return Bun.spawn({ cmd: [process.execPath, import.meta.path, ...args], env, stdin: "pipe", stdout: "pipe", stderr: "inherit" });
}

// Reads a child's stdout line by line.
const lines = (p: ReturnType<typeof child>) => lineReader(p.stdout);

// 1. wake
log(`[wake] ${TRIALS} trials each, alternating`);
const wakeDir = fresh("wake");
dirs.push(wakeDir);
const store: Store = openStore({ dir: wakeDir, env: {} });
await addTask(store, "wake", "seed"); // the queue exists; the seed is claimed by the first trial below
const slotW = child(["slot-waiter", wakeDir, String(TRIALS)]);
const claimW = child(["claim-waiter", wakeDir, String(TRIALS + 1)]);
const readSlot = lines(slotW);
const readClaim = lines(claimW);
await readClaim(); // armed 0: takes the seed at once
await readClaim(); // woke 0
const slotMs: number[] = [];
const claimMs: number[] = [];
const publishCall: number[] = [];
const addCall: number[] = [];
for (let i = 0; i < TRIALS; i++) {
  for (const kind of i % 2 ? ["claim", "slot"] : ["slot", "claim"]) {
    const read = kind === "slot" ? readSlot : readClaim;
    await read(); // armed
    await Bun.sleep(randBetween(5, 15)); // the bench's gap between "armed" and the event
    const t0 = mono();
    if (kind === "slot") await publishSlot(store, `s${i}`, "x");
    else (await addTask(store, "wake", `t${i}`));
    (kind === "slot" ? publishCall : addCall).push(mono() - t0);
    const woke = (await read()).split(" ");
    (kind === "slot" ? slotMs : claimMs).push(Number(woke[2]) - t0);
  }
}
await Promise.all([slotW.exited, claimW.exited]);
closeWatches(store);

// 2. throughput
log(`[throughput] ${MESSAGES} publishes; ${MESSAGES} tasks with 1 and 4 claimers`);
const pubDir = fresh("pub");
dirs.push(pubDir);
const pub = child(["publisher", pubDir, String(MESSAGES)]);
const pubMs = Number((await lines(pub)()).split(" ")[1]);
await pub.exited;

async function claimRun(k: number): Promise<number> {
  const dir = fresh(`claim${k}`);
  dirs.push(dir);
  const s = openStore({ dir, env: {} });
  for (let i = 0; i < MESSAGES; i += 5000) (await addTasks(s, Array.from({ length: Math.min(5000, MESSAGES - i) }, (_, j) => ({ queue: "tput", payload: `t${i + j}` }))));
  const procs = Array.from({ length: k }, () => child(["claimer", dir]));
  const readers = procs.map(lines);
  await Promise.all(readers.map((r) => r())); // ready
  const t0 = mono();
  for (const p of procs) {
    p.stdin.write("go\n");
    p.stdin.flush();
  }
  const ends = await Promise.all(readers.map((r) => r()));
  await Promise.all(procs.map((p) => p.exited));
  const total = ends.reduce((a, e) => a + Number(e.split(" ")[2]), 0);
  if (total !== MESSAGES) throw new Error(`claimers did ${total} of ${MESSAGES} tasks`);
  return Math.max(...ends.map((e) => Number(e.split(" ")[1]))) - t0;
}
const claim1 = await claimRun(1);
const claim4 = await claimRun(4);

// 3. listing
log(`[listing] ${TASKS} tasks vs ${TASKS} slots, ${SPAWNS} spawns each`);
const listDir = fresh("list");
dirs.push(listDir);
const ls = openStore({ dir: listDir, env: {} });
for (let i = 0; i < TASKS; i += 5000) (await addTasks(ls, Array.from({ length: Math.min(5000, TASKS - i) }, (_, j) => ({ queue: "big", payload: `t${i + j}` }))));
const slotsRoot = makeStore(tmpdir(), TASKS, "status");
const timeSpawn = (args: string[], dir: string) => {
  const t0 = mono();
  const r = Bun.spawnSync({ cmd: [BIN, ...args], env: { ...env, A2A_DIR: dir }, stdout: "ignore", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`a2a ${args.join(" ")} exited ${r.exitCode}: ${r.stderr.toString()}`);
  return mono() - t0;
};
const listMs: number[] = [];
const statusMs: number[] = [];
for (let i = 0; i < SPAWNS; i++) {
  listMs.push(timeSpawn(["task", "list", "big", "--json"], listDir));
  statusMs.push(timeSpawn(["status", "--json"], slotsRoot));
}

// ---- report --------------------------------------------------------------------------------
const s = summarize(slotMs);
const c = summarize(claimMs);
const rate = (ms: number) => `${Math.round(MESSAGES / (ms / 1000))}/s`;
line(`### Work queues (bench/tasks.ts)`);
line("");
line(`${cpus().length} CPUs, load average ${loadBefore} before, ${loadavg().map((x) => x.toFixed(2)).join(" ")} after. Indicative: the machine is shared.`);
line("");
line(mdTable([
  ["figure (ms unless a rate)", "tasks", "slots (same run)", "ratio", "goal"],
  [`wake p50 (n=${TRIALS})`, fmtMs(c.p50), fmtMs(s.p50), (c.p50 / s.p50).toFixed(2) + "x", "claim within 1.5x of slot"],
  [`wake p99`, fmtMs(c.p99), fmtMs(s.p99), (c.p99 / s.p99).toFixed(2) + "x", "claim within 1.5x of slot"],
  [`  of which the add / publish call (p50, p99)`, `${fmtMs(summarize(addCall).p50)}, ${fmtMs(summarize(addCall).p99)}`, `${fmtMs(summarize(publishCall).p50)}, ${fmtMs(summarize(publishCall).p99)}`, "", "an add writes a pending marker and version 1 (synced) and renames the marker; a publish writes 1 file (synced)"],
  [`throughput, 1 claimer vs 1 publisher (${MESSAGES})`, rate(claim1), rate(pubMs), (pubMs / claim1).toFixed(2) + "x", "(claimed and done vs published)"],
  [`throughput, 4 claimers (${MESSAGES})`, rate(claim4), rate(pubMs), (pubMs / claim4).toFixed(2) + "x", ""],
  [`task list vs status, ${TASKS} each (median of ${SPAWNS})`, fmtMs(median(listMs)), fmtMs(median(statusMs)), (median(listMs) / median(statusMs)).toFixed(2) + "x", "task list within 2x of status"],
]));
process.exit(0);
