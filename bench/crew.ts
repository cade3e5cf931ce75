// The crew's figures (issue 36): how fast `a2a crew up` drains a queue, and what the supervisor
// itself costs per task, each next to a plain loop measured in the same run:
//
//   bun bench/crew.ts [--tasks N] [--work-ms W] [--workers 1,2,4] [--rounds R]   (A2A_BIN picks the binary)
//
// Methods, each on a fresh store (file engine), in interleaved rounds, shuffled in each round:
//   - loop:      the README's worker loop, one after another: `sh` running `a2a task claim --sh`,
//                the task's command, `a2a task done`, until nothing is claimable;
//   - crew N:    a crew of N exec workers (N from --workers) running the same command;
//   - loop/crew 1 on `cat` (no work at all): the cost per task of the loop and of the supervisor,
//     next to spawning `cat` alone (the floor: a process per task, which both pay).
// The task's command is `sleep W/1000; cat` (W = --work-ms, the "work" a real task would do).
// Timing: a crew is up (its workers announced) before the clock starts; then the N tasks are
// added (one batch, in this process) and the clock stops when `a2a task wait` on all of them
// returns (the loop: when it exits, plus the same `task wait`). CPU: user+system of the loop's
// or the supervisor's process and everything they reaped (rusage), per task; the supervisor's
// whole life, its start-up and crew down included (a few ms a task at 20 tasks, less at more). Nothing asserts;
// figures depend on the machine and its load (printed with them).

import { rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, childEnv } from "../tests/harness/run";
import { openStore } from "../lib/engine/open";
import { addTasks } from "../lib/tasks/add";
import { makeStore, removeAllStores } from "./lib/fixture";
import { lineReader } from "./lib/proc";
import { median, shuffle } from "./lib/stats";
import { mdTable } from "./lib/table";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const TASKS = Number(arg("--tasks", "60"));
const WORK_MS = Number(arg("--work-ms", "100"));
const ROUNDS = Number(arg("--rounds", "3"));
const WORKERS = arg("--workers", "1,2,4").split(",").map(Number);
for (const [k, v] of [["--tasks", TASKS], ["--rounds", ROUNDS], ...WORKERS.map((n) => ["--workers", n] as const)] as const) {
  if (!Number.isInteger(v) || v < 1) {
    process.stderr.write(`bench/crew.ts: ${k} must be a positive whole number\n`);
    process.exit(2);
  }
}
if (!Number.isFinite(WORK_MS) || WORK_MS < 0) {
  process.stderr.write("bench/crew.ts: --work-ms must be a number of milliseconds, 0 or more\n");
  process.exit(2);
}

const env = childEnv();
const log = (s: string) => process.stderr.write(s + "\n");
const loadBefore = loadavg().map((x) => x.toFixed(2)).join(" ");
const dirs: string[] = [];
process.on("exit", () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  removeAllStores();
});

const WORK = `sleep ${WORK_MS / 1000}; cat`;
const shq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

interface Run { ms: number; cpuMs: number }

const freshStore = () => makeStore(tmpdir(), 0, "crew");

const cpuOf = (p: { resourceUsage(): { cpuTime: { user: number | bigint; system: number | bigint } } | undefined }) => {
  const u = p.resourceUsage();
  return u ? (Number(u.cpuTime.user) + Number(u.cpuTime.system)) / 1000 : NaN; // µs -> ms
};

async function addAll(root: string): Promise<string[]> {
  const store = openStore({ dir: root, env: {} });
  const added = await addTasks(store, Array.from({ length: TASKS }, (_, i) => ({ queue: "q", payload: `task ${i}` })));
  return added.map((a) => a.id);
}

async function waitAll(root: string, ids: string[]): Promise<void> {
  const p = Bun.spawn({ cmd: [BIN, "task", "wait", ...ids, "--timeout", "600"], env: { ...env, A2A_DIR: root }, stdout: "ignore", stderr: "pipe" });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  if (code !== 0) throw new Error(`a2a task wait: exit ${code}: ${err.trim()}`);
}

// The README's loop, one after another: claim (no wait: exit 3 once the queue is empty), run, done.
async function loop(work: string): Promise<Run> {
  const root = freshStore();
  const script = `while claim=$("$A2A" task claim q --as loop --sh); do eval "$claim"; out=$(printf %s "$TASK_PAYLOAD" | sh -c ${shq(work)}); "$A2A" task done "$TASK_ID" "$TASK_TOKEN" "$out" || exit 1; done`;
  const t0 = performance.now();
  const ids = await addAll(root);
  const p = Bun.spawn({ cmd: ["/bin/sh", "-c", script], env: { ...env, A2A_DIR: root, A2A: BIN }, stdout: "ignore", stderr: "pipe" });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  // A while loop ends 0 once its condition fails (claim's exit 3: nothing claimable).
  if (code !== 0 || !err.includes("nothing claimable")) throw new Error(`the loop ended with exit ${code}: ${err.trim().split("\n").pop()}`);
  await waitAll(root, ids);
  return { ms: performance.now() - t0, cpuMs: cpuOf(p) };
}

async function crew(n: number, work: string): Promise<Run> {
  const root = freshStore();
  const file = join(root, "..", `${root.split("/").pop()}.toml`);
  writeFileSync(file, `name = "bench"\n[[worker]]\nname = "w"\ncount = ${n}\nqueues = ["q"]\ncommand = ${JSON.stringify(work)}\nrestarts = 1\n`);
  dirs.push(file);
  const sup = Bun.spawn({ cmd: [BIN, "crew", "up", file], env: { ...env, A2A_DIR: root }, stdout: "ignore", stderr: "pipe" });
  const line = lineReader(sup.stderr);
  for (;;) {
    const l = await line();
    if (l.includes("crew bench up")) break; // a crew up that fails ends the reader: thrown
  }
  const t0 = performance.now();
  const ids = await addAll(root);
  await waitAll(root, ids);
  const ms = performance.now() - t0;
  const down = Bun.spawn({ cmd: [BIN, "crew", "down", "bench"], env: { ...env, A2A_DIR: root }, stdout: "ignore", stderr: "ignore" });
  await down.exited;
  const code = await sup.exited;
  if (code !== 0) throw new Error(`crew up ended with exit ${code} after crew down`);
  return { ms, cpuMs: cpuOf(sup) };
}

// The floor both pay: one process per task (`cat` with the payload on stdin), spawned in turn.
async function spawnFloor(): Promise<Run> {
  const t0 = performance.now();
  let cpu = 0;
  for (let i = 0; i < TASKS; i++) {
    const p = Bun.spawn({ cmd: ["/bin/sh", "-c", "cat"], stdin: new TextEncoder().encode(`task ${i}`), stdout: "pipe", stderr: "ignore" });
    await new Response(p.stdout).text();
    await p.exited;
    cpu += cpuOf(p);
  }
  return { ms: performance.now() - t0, cpuMs: cpu };
}

const methods: [string, () => Promise<Run>][] = [
  [`loop (one after another), ${WORK_MS} ms work`, () => loop(WORK)],
  ...WORKERS.map((n) => [`crew of ${n} exec worker${n > 1 ? "s" : ""}, ${WORK_MS} ms work`, () => crew(n, WORK)] as [string, () => Promise<Run>]),
  ["loop, cat (no work)", () => loop("cat")],
  ["crew of 1, cat (no work)", () => crew(1, "cat")],
  ["spawn cat alone (the floor)", spawnFloor],
];
const runs = new Map<string, Run[]>(methods.map(([m]) => [m, []]));
let failed = 0;
log(`[crew] ${TASKS} tasks, ${ROUNDS} rounds, binary ${BIN}`);
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, run] of shuffle(methods)) {
    try {
      runs.get(name)!.push(await run());
    } catch (e) {
      failed++;
      log(`[crew] ${name}: ${(e as Error).message}`);
    }
  }
  log(`[crew] round ${r + 1}/${ROUNDS} done`);
}

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "-");
const rows = [["method", "tasks/min (median)", "ms/task wall", "CPU ms/task (median)", "runs"]];
for (const [name] of methods) {
  const rs = runs.get(name)!;
  const ms = median(rs.map((x) => x.ms)) / TASKS;
  rows.push([name, rs.length ? (60_000 / ms).toFixed(0) : "-", rs.length ? f1(ms) : "-", rs.length ? f1(median(rs.map((x) => x.cpuMs)) / TASKS) : "-", String(rs.length)]);
}
const per = (name: string) => median(runs.get(name)!.map((x) => x.ms)) / TASKS;
const overhead = per("crew of 1, cat (no work)") - per("spawn cat alone (the floor)");
const loopOver = per("loop, cat (no work)") - per("spawn cat alone (the floor)");
const out = [
  `### Crew (bench/crew.ts)`,
  "",
  `${TASKS} tasks a run, ${ROUNDS} rounds, ${cpus().length} CPUs, load ${loadBefore} before, ${loadavg().map((x) => x.toFixed(2)).join(" ")} after.`,
  "",
  mdTable(rows),
  "",
  `Per task beyond spawning the task's process: the supervisor ${f1(overhead)} ms, the README's loop ${f1(loopOver)} ms (two a2a processes a task).`,
];
process.stdout.write(out.join("\n") + "\n");
process.exit(failed ? 1 : 0);
