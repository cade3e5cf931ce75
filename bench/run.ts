// `bun run bench`: measures a2a's wake path and process costs against the physical floor
// measured in the same run and prints a table with the goal next to each figure (issue 5);
// with --write it also writes bench/RESULTS.md (date, machine, versions, the table, the raw
// samples), with --out FILE that file instead. The whole run took 11 minutes on 2 cores;
// --quick is shorter, and --only runs single sections.
//
//   bun run bench [--quick] [-n N] [--slow-n N] [--rounds R] [--only LIST] [--base DIR]
//                 [--write | --out FILE]
//
// Sections (--only takes a comma list): wake, scale, poll, process, throughput, mcp, messaging, tasks, pg, pg-load, pg-scale, reservations, search, blobs, crew.
// mcp, messaging, tasks, pg, pg-load, pg-scale, reservations, search, blobs and crew run bench/mcp.ts, bench/messaging.ts, bench/tasks.ts, bench/pg.ts, bench/pg-load.ts, bench/pg-scale.ts, bench/reservations.ts, bench/search.ts, bench/blobs.ts and bench/crew.ts (owned by their
// authors) as `bun bench/X.ts` with A2A_BIN set (with --quick: mcp.ts --quick, messaging.ts
// --trials 40 --messages 400, tasks.ts --trials 30 --messages 300 --spawns 3), and include their
// stdout verbatim; a missing script is skipped with a message.
//
// The binary under test is $A2A_BIN (default dist/a2a), rebuilt first when a source is newer
// (as tests/preload.ts does), and timed, like every reference binary, from a copy written at
// the start of the run (bench/lib/reference.ts: bench/out keeps the reference builds, about
// 330 MB, and the run's copies are deleted when it ends). Timing: CLOCK_MONOTONIC through bun:ffi in every process
// (bench/lib/clock.ts), because Bun's process.hrtime counts from process start. Methods run
// in interleaved rounds with fresh processes per round; warm-up trials are dropped. Nothing
// here asserts on time: missed goals are results (exit 0), and the exit status is 1 only when
// a measurement itself failed (each named on stderr).

import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { ensureBinary } from "../tests/build";
import { BIN as BUILT_BIN, childEnv } from "../tests/harness/run";
import { cpus, loadavg, release, tmpdir, totalmem, hostname } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { interleave, type Collected, type Method } from "./lib/interleave";
import { killAll } from "./lib/proc";
import { fillInbox, makeStore, payloadFor, removeAllStores, removeStore } from "./lib/fixture";
import { buildReference, freshCopy, OUT, removeFreshCopies } from "./lib/reference";
import { buildRows, missed, renderMarkdown, renderText, type RowSpec } from "./lib/report";
import { hyperfinePath, hyperfineTimes, roundTrip, timeSpawn } from "./lib/spawn";
import { fmtMs, median, summarize } from "./lib/stats";
import { mdTable, textTable } from "./lib/table";
import { burstAllRun, throughputRun, wakeRun, type Ctx, type ThroughputResult, type WakeConfig } from "./lib/wake";

const ROOT = resolve(import.meta.dir, "..");
const SECTIONS = ["wake", "scale", "poll", "process", "throughput", "mcp", "messaging", "tasks", "pg", "pg-load", "pg-scale", "reservations", "search", "blobs", "crew"];

const OPTIONS = {
  quick: { type: "boolean", default: false },
  n: { type: "string", short: "n" },
  "slow-n": { type: "string" },
  rounds: { type: "string" },
  only: { type: "string" },
  base: { type: "string" },
  out: { type: "string" },
  write: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

// A wrong option is one line and exit 2, as for a2a itself.
const opt = (() => {
  try {
    return parseArgs({ args: Bun.argv.slice(2), options: OPTIONS }).values;
  } catch (e) {
    process.stderr.write(`bench: ${(e as Error).message.split("\n")[0]}: see bun run bench --help\n`);
    process.exit(2);
  }
})();

if (opt.help) {
  process.stdout.write(readFileSync(import.meta.path, "utf8").split("\n\n")[0].replace(/^\/\/ ?/gm, "") + "\n");
  process.exit(0);
}

const quick = !!opt.quick;
const N = Number(opt.n ?? (quick ? 40 : 300));
const SLOW_N = Number(opt["slow-n"] ?? (quick ? Math.min(15, N) : N));
const ROUNDS = Number(opt.rounds ?? (quick ? 2 : 5));
const WARM_WAKE = quick ? 2 : 5; // per fresh waiter process
const WARM_PROC = quick ? 1 : 2; // per block of spawns
const only = new Set((opt.only ?? SECTIONS.join(",")).split(",").map((s) => s.trim()).filter(Boolean));
for (const s of only) if (!SECTIONS.includes(s)) fatal(`unknown section ${JSON.stringify(s)}: use ${SECTIONS.join(", ")}`);
const BASE = resolve(opt.base ?? tmpdir());
// The tracked bench/RESULTS.md changes only when asked: a run to look at figures leaves the tree clean.
const RESULTS = opt.out ? resolve(opt.out) : opt.write ? join(ROOT, "bench", "RESULTS.md") : undefined;
for (const [k, v] of [["-n", N], ["--slow-n", SLOW_N], ["--rounds", ROUNDS]] as const) {
  if (!Number.isInteger(v) || v < 1) fatal(`${k} must be a positive whole number`);
}

function fatal(msg: string): never {
  removeFreshCopies();
  process.stderr.write(`bench: ${msg}\n`);
  process.exit(2);
}

const log = (s: string) => process.stderr.write(s + "\n");
const cleanEnv = childEnv();

for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    killAll();
    removeAllStores();
    removeFreshCopies();
    process.exit(130);
  });
}

// ---------------------------------------------------------------- setup

function sh(cmd: string[], cwd = ROOT): { ok: boolean; out: string } {
  try {
    const r = Bun.spawnSync({ cmd, cwd, stdout: "pipe", stderr: "pipe", env: cleanEnv });
    return { ok: r.exitCode === 0, out: (r.stdout.toString() + r.stderr.toString()).trim() };
  } catch (e) {
    return { ok: false, out: (e as Error).message };
  }
}

try {
  ensureBinary(BUILT_BIN, log);
} catch (e) {
  fatal((e as Error).message);
}
mkdirSync(OUT, { recursive: true });

// a2a and the start-up references (bench/fixtures/hello*.ts, built with a2a's flags), each
// timed from a copy written now (bench/lib/reference.ts says why).
// The references only for the start-up rows that use them (each build is about 110 MB).
let BIN = BUILT_BIN, HELLO = "", HELLO_FS = "", HELLO_DURABLE = "";
try {
  BIN = freshCopy(BUILT_BIN, "a2a");
  if (only.has("process")) {
    HELLO = freshCopy(buildReference("hello"), "hello");
    HELLO_FS = freshCopy(buildReference("hello-fs"), "hello-fs");
    HELLO_DURABLE = freshCopy(buildReference("hello-durable"), "hello-durable");
  }
} catch (e) {
  fatal((e as Error).message);
}

// The raw-inotify floor, when a C compiler exists; otherwise bare fs.watch is the floor.
let C_WAITER: string | undefined = join(OUT, "inotify_wait");
const wantC = only.has("wake") || only.has("scale"); // the floor of the wake rows only
const gcc = wantC ? sh(["gcc", "-O2", "-o", C_WAITER, join(ROOT, "bench", "inotify_wait.c")]) : { ok: false, out: "" };
if (!gcc.ok) {
  if (wantC) log(`no C floor (gcc failed or missing: ${gcc.out.split("\n")[0]}); using bare fs.watch as the floor`);
  C_WAITER = undefined;
}
const FLOOR = C_WAITER ? "floor-c" : "floor-bare";
const FLOOR_NAME = C_WAITER ? "C" : "fs.watch";

const ctx: Ctx = { base: BASE, cWaiter: C_WAITER, env: cleanEnv };
mkdirSync(BASE, { recursive: true });

// ---------------------------------------------------------------- machine and versions

const fsType = (() => {
  const m = sh(["findmnt", "-n", "-o", "FSTYPE", "-T", BASE]);
  return (m.ok && m.out) || sh(["stat", "-f", "-c", "%T", BASE]).out || "unknown";
})();
const a2aVersion = sh([BIN, "--version"]).out;
const git = sh(["git", "rev-parse", "--short", "HEAD"]);
const dirty = sh(["git", "status", "--porcelain", "--", "lib", "cli", "package.json"]);
const info = {
  date: new Date().toISOString(),
  host: hostname(),
  kernel: release(),
  cpu: `${cpus()[0]?.model ?? "unknown"} x ${cpus().length}`,
  memGiB: (totalmem() / 2 ** 30).toFixed(1),
  loadBefore: loadavg().map((x) => x.toFixed(2)).join(" "),
  loadAfter: "",
  bun: Bun.version,
  a2a: `${a2aVersion} (${BUILT_BIN.replace(ROOT + "/", "")}, timed from a fresh copy, ${(statSync(BIN).size / 2 ** 20).toFixed(1)} MB, commit ${git.ok ? git.out : "?"}${dirty.ok && dirty.out ? " + uncommitted changes in lib/ cli/" : ""})`,
  gcc: C_WAITER ? gcc.ok && sh(["gcc", "--version"]).out.split("\n")[0] : "not available",
  store: `${BASE} (${fsType})`,
  args: Bun.argv.slice(2).join(" ") || "(defaults)",
  params: `n=${N}, slow n=${SLOW_N}, rounds=${ROUNDS}, warm-up dropped: ${WARM_WAKE} per waiter process, ${WARM_PROC} per block of spawns`,
};
log(`a2a bench: ${info.a2a}; Bun ${info.bun}; ${info.cpu}; load ${info.loadBefore}; store on ${info.store}`);
log(info.params);

// ---------------------------------------------------------------- measurements

const col: Collected = { series: {}, cold: {}, errors: {} };
const wall: Record<string, number> = {};
const GAP: [number, number] = [5, 15]; // ms between "armed" and the publish (event-driven methods)

function wakeMethod(id: string, n: number, cfg: WakeConfig): Method {
  return {
    id,
    n,
    async block(k) {
      const r = await wakeRun(ctx, cfg, k, WARM_WAKE);
      return { series: { main: r.samples, publish: r.publishMs }, cold: r.cold };
    },
  };
}

async function group(name: string, methods: Method[], rounds = ROUNDS): Promise<void> {
  if (methods.length === 0) return;
  log(`\n[${name}] ${methods.map((m) => `${m.id}(${m.n})`).join(", ")}`);
  const t = performance.now();
  await interleave(methods, rounds, col, log);
  wall[name] = (performance.now() - t) / 1000;
}

// Wake latency, in-process: floors, lib woken by a bare rename, lib woken by lib's publish;
// and the scale rows, all interleaved in one group (same conditions for all).
const wakeGroup: Method[] = [];
if (only.has("wake")) {
  if (C_WAITER) wakeGroup.push(wakeMethod("floor-c", N, { waiter: "c", publisher: "raw", gapMs: GAP }));
  wakeGroup.push(wakeMethod("floor-bare", N, { waiter: "bare", publisher: "raw", gapMs: GAP }));
  wakeGroup.push(wakeMethod("floor-ino", N, { waiter: "ino", publisher: "raw", gapMs: GAP }));
  wakeGroup.push(wakeMethod("lib-wake", N, { waiter: "lib", publisher: "raw", gapMs: GAP }));
  wakeGroup.push(wakeMethod("lib-wake-fswatch", N, { waiter: "lib", waiterMode: "lib-fswatch", publisher: "raw", gapMs: GAP }));
  wakeGroup.push(wakeMethod("lib-publish", N, { waiter: "lib", publisher: "lib", gapMs: GAP }));
}
if (only.has("scale")) {
  if (!only.has("wake") && C_WAITER) wakeGroup.push(wakeMethod("floor-c", N, { waiter: "c", publisher: "raw", gapMs: GAP }));
  wakeGroup.push(wakeMethod("scale-10", N, { waiter: "lib", publisher: "raw", slots: 10, gapMs: GAP }));
  wakeGroup.push(wakeMethod("scale-10k", N, { waiter: "lib", publisher: "raw", slots: 10_000, gapMs: GAP }));
  wakeGroup.push(wakeMethod("any-1000", N, { waiter: "lib", publisher: "raw", anyOf: 1000, gapMs: GAP }));
}
await group("wake", wakeGroup);

if (only.has("scale")) {
  await group("burst", [
    {
      id: "all-1000",
      n: SLOW_N,
      async block(k) {
        const r = await burstAllRun(ctx, 1000, k, 1);
        return { series: { main: r.samples, burst: r.publishMs } };
      },
    },
  ]);
}

// Poll mode: publishes land at a uniformly random phase of the poll tick.
if (only.has("poll")) {
  const poll = (ms: number, n: number) =>
    wakeMethod(`poll-${ms}`, n, { waiter: "lib", publisher: "raw", env: { A2A_WATCH: "poll", A2A_POLL_MS: String(ms) }, gapMs: [0, ms] });
  await group("poll", [poll(100, SLOW_N), poll(20, N)]);
}

// Whole processes: start-up and the shell round trip, interleaved.
const procStores: string[] = [];
if (only.has("process") || only.has("scale")) {
  const mk = (slots: number, label: string) => {
    const r = makeStore(BASE, slots, label);
    procStores.push(r);
    return r;
  };
  const env = (root: string) => ({ ...cleanEnv, A2A_DIR: root });
  // With hyperfine installed, start-up rows are hyperfine's (see bench/lib/spawn.ts why).
  const HF = hyperfinePath() !== null;
  // The Claude Code hook run on every prompt, its event JSON on stdin (hyperfine 1.15 has no
  // --input, so these rows are always timed from here, harness cost included).
  // `agent`: another agent's dialect (a2a hook --agent ID), to show what speaking it costs.
  const hookMethod = (id: string, n: number, e: Record<string, string>, agent?: string): Method => ({
    id,
    n,
    async block(k) {
      const s = { main: [] as number[], cpu: [] as number[] };
      const event = JSON.stringify({ session_id: "bench", hook_event_name: "UserPromptSubmit", cwd: ROOT, prompt: "go" });
      for (let i = 0; i < k + WARM_PROC; i++) {
        const t = await timeSpawn([BIN, "hook", "user-prompt-submit", ...(agent ? ["--agent", agent] : [])], { ...e, A2A_AGENT: "bench" }, event);
        if (i < WARM_PROC) continue;
        s.main.push(t.wall);
        s.cpu.push(t.cpu);
      }
      return { series: s };
    },
  });
  const spawnMethod = (id: string, n: number, cmd: () => string[], e: Record<string, string>, prepare?: string[]): Method => ({
    id,
    n,
    async block(k) {
      const s = { main: [] as number[], cpu: [] as number[] };
      if (HF) {
        const t = hyperfineTimes(cmd(), e, k, prepare);
        s.main.push(...t.wall);
        s.cpu.push(...t.wall.map(() => t.cpu)); // hyperfine reports mean CPU only
        return { series: s };
      }
      for (let i = 0; i < k + WARM_PROC; i++) {
        if (prepare) Bun.spawnSync({ cmd: prepare, env: e });
        const t = await timeSpawn(cmd(), e);
        if (i < WARM_PROC) continue;
        s.main.push(t.wall);
        s.cpu.push(t.cpu);
      }
      return { series: s };
    },
  });
  const methods: Method[] = [];
  if (only.has("process")) {
    const empty = mk(0, "empty");
    const big = mk(10_000, "10k");
    const scratch = mk(0, "scratch");
    const done = mk(0, "done");
    const mail = mk(0, "mail");
    const heavy = mk(0, "inbox-1k");
    fillInbox(heavy, "bench", 1000, 1024 * 1024 - 64); // 1,000 unread 1 MiB messages: a hook must not read them
    const durable = mk(0, "durable"); // the durable-write floor's own: its file is no a2a record
    Bun.spawnSync({ cmd: [BIN, "publish", "done", payloadFor("done")], env: env(done) });
    let seq = 0;
    methods.push(
      spawnMethod("true", N, () => ["true"], cleanEnv),
      spawnMethod("hello", N, () => [HELLO], cleanEnv),
      spawnMethod("hello-fs", N, () => [HELLO_FS], cleanEnv),
      spawnMethod("version", N, () => [BIN, "--version"], env(empty)),
      spawnMethod("status-empty", N, () => [BIN, "status"], env(empty)),
      spawnMethod("status-10k", SLOW_N, () => [BIN, "status"], env(big)),
      spawnMethod("status-10k-json", SLOW_N, () => [BIN, "status", "--json"], env(big)),
      // The floor for reading a store of 10,000 slots: every record file read once (sh's own start included).
      spawnMethod("cat-10k", SLOW_N, () => ["sh", "-c", 'cat "$A2A_DIR"/slots/*.json >/dev/null'], env(big)),
      // 20,000 lines piped into one append --lines (the slot cleared and started before each run).
      spawnMethod("append-lines", SLOW_N, () => ["sh", "-c", 'seq 1 20000 | "$0" append lines --lines -q', BIN], env(scratch), ["sh", "-c", '"$0" clear lines >/dev/null 2>&1; "$0" start lines -q', BIN]),
      spawnMethod("hello-durable", N, () => [HELLO_DURABLE], env(durable)),
      spawnMethod("publish", N, () => [BIN, "publish", HF ? "p" : `p${seq++}`, "hello"], env(scratch)),
      spawnMethod("wait-done", N, () => [BIN, "wait", "done"], env(done)),
      spawnMethod("send", N, () => [BIN, "send", "bob", "hello", "--as", "alice"], env(mail)),
      spawnMethod("recv", N, () => [BIN, "recv", "--as", "carol"], env(mail), [BIN, "send", "carol", "hello", "--as", "alice"]),
      hookMethod("hook-prompt", N, env(mail)),
      hookMethod("hook-prompt-1k", SLOW_N, env(heavy)),
      hookMethod("hook-prompt-gemini", N, env(mail), "gemini"),
      {
        id: "roundtrip",
        n: N,
        async block(k) {
          const s = { main: [] as number[], exit: [] as number[], teardown: [] as number[], publish: [] as number[] };
          for (let i = 0; i < k + WARM_PROC; i++) {
            const name = `rt${seq++}`;
            const r = await roundTrip(BIN, env(scratch), name, payloadFor(name));
            if (i < WARM_PROC) continue;
            s.main.push(r.eof);
            s.exit.push(r.exit);
            s.teardown.push(r.exit - r.eof);
            s.publish.push(r.publish);
          }
          return { series: s };
        },
      },
    );
  }
  if (only.has("scale")) {
    const thousand = mk(1000, "1000");
    const names = Array.from({ length: 1000 }, (_, i) => `fill${i}`);
    methods.push(spawnMethod("wait-1000-done", N, () => [BIN, "wait", ...names], env(thousand)));
  }
  await group("process", methods);
  for (const r of procStores) removeStore(r);
}

// Throughput: one writer back to back, a lib waiter waiting for each slot in turn.
const tput: { how: string; runs: ThroughputResult[] }[] = [];
if (only.has("throughput")) {
  log("\n[throughput]");
  const t = performance.now();
  const runs = quick ? 1 : 3;
  for (const [how, count] of [["lib", quick ? 300 : 2000], ["rawsync", quick ? 300 : 2000], ["raw", quick ? 1000 : 5000]] as const) {
    const entry = { how, runs: [] as ThroughputResult[] };
    for (let i = 0; i < runs; i++) {
      try {
        entry.runs.push(await throughputRun(ctx, how, count));
      } catch (e) {
        col.errors[`tput-${how}`] = (e as Error).message.split("\n")[0];
        log(`  ! throughput ${how} failed: ${col.errors[`tput-${how}`]}`);
        break;
      }
    }
    tput.push(entry);
  }
  wall.throughput = (performance.now() - t) / 1000;
}

// Sections owned by others: run them as they are and keep what they print.
const external: { name: string; script: string; text: string; note: string }[] = [];
for (const name of ["mcp", "messaging", "tasks", "pg", "pg-load", "pg-scale", "reservations", "search", "blobs", "crew"]) {
  if (!only.has(name)) continue;
  const script = join(ROOT, "bench", `${name}.ts`);
  if (!existsSync(script)) {
    log(`\n[${name}] skipped: bench/${name}.ts does not exist yet`);
    external.push({ name, script, text: "", note: `skipped: bench/${name}.ts does not exist yet` });
    continue;
  }
  // Their own smoke-run flags: mcp.ts takes --quick; messaging.ts and tasks.ts take --trials/--messages.
  const QUICK: Record<string, string[]> = { mcp: ["--quick"], messaging: ["--trials", "40", "--messages", "400"], tasks: ["--trials", "30", "--messages", "300", "--spawns", "3"], pg: ["--n", "20"], "pg-load": ["--tasks", "300", "--pending", "3000", "--agents", "20", "--messages", "20", "--trials", "50"], "pg-scale": ["--sessions", "10,100,500", "--trials", "30", "--cli", "3"], reservations: ["--n", "40"], search: ["--n", "20", "--messages", "2000", "--posts", "2000", "--rounds", "2"], blobs: ["--n", "1", "--mib", "32"], crew: ["--tasks", "20", "--rounds", "1"] };
  const quickArgs = quick ? QUICK[name] : [];
  log(`\n[${name}] bun bench/${name}.ts ${quickArgs.join(" ")}`);
  const t = performance.now();
  const p = Bun.spawn({
    cmd: [process.execPath, script, ...quickArgs],
    cwd: ROOT,
    env: { ...cleanEnv, A2A_BIN: BIN },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const limit = setTimeout(() => p.kill("SIGKILL"), (quick ? 5 : 30) * 60_000);
  const [text, errText, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(limit);
  wall[name] = (performance.now() - t) / 1000;
  const note = code === 0 ? "" : `exited ${code}${p.signalCode ? ` (${p.signalCode})` : ""}: ${errText.trim().split("\n").slice(-5).join(" / ")}`;
  if (code !== 0) col.errors[name] = note;
  external.push({ name, script, text: text.trim(), note });
  process.stdout.write(`\n${name} (bench/${name}.ts)\n${text.trim()}\n${note ? `(${note})\n` : ""}`);
}

// ---------------------------------------------------------------- the table

const floorBase = { key: FLOOR, name: FLOOR_NAME };
const helloBase = { key: "hello", name: "hello" };
const p50 = (max: number): ((s: { p50: number }) => { text: string; met: boolean }) => (s) => ({ text: `p50 <= ${max}`, met: s.p50 <= max });
// A goal as a ratio of this row's p50 to hello's in the same run (issue 10's goals).
const hello = (x: number) => (s: { p50: number }, get: (k: string) => { p50: number } | undefined) => {
  const h = get("hello");
  return { text: `p50 <= ${x}x hello`, met: !!h && s.p50 <= x * h.p50 };
};
const ratioTo = (key: string, name: string, x: number) => (s: { p50: number }, get: (k: string) => { p50: number } | undefined) => {
  const b = get(key);
  return { text: `p50 <= ${x}x ${name}`, met: !!b && s.p50 <= x * b.p50 };
};
const localWake = (get: (k: string) => { p50: number } | undefined) => get("lib-wake")?.p50 ?? get("scale-10")?.p50;

const specs: RowSpec[] = [
  { section: "Wake, in-process", label: "floor: C inotify + read() (raw rename)", key: "floor-c" },
  { section: "Wake, in-process", label: "floor: bare Bun fs.watch + readFileSync", key: "floor-bare", base: C_WAITER ? floorBase : undefined },
  { section: "Wake, in-process", label: "floor: Bun, ffi inotify fd read by Bun.file(fd).stream() + readFileSync", key: "floor-ino", base: C_WAITER ? floorBase : undefined },
  {
    section: "Wake, in-process",
    label: "lib waitSlots, woken by a rename",
    key: "lib-wake",
    base: floorBase,
    // Issue 10's goal: within 2x / 3x of the C floor at p50 / p99.
    goal: (s, get) => {
      const f = get(FLOOR);
      if (!f) return { text: "p50 <= 2x floor, p99 <= 3x floor" };
      return { text: `p50 <= 2x ${FLOOR_NAME} (${fmtMs(2 * f.p50)}), p99 <= 3x (${fmtMs(3 * f.p99)})`, met: s.p50 <= 2 * f.p50 && s.p99 <= 3 * f.p99 };
    },
  },
  { section: "Wake, in-process", label: "lib waitSlots on fs.watch (as without inotify), woken by a rename", key: "lib-wake-fswatch", base: floorBase },
  { section: "Wake, in-process", label: "lib waitSlots, woken by lib publishSlot()", key: "lib-publish", base: floorBase },
  { section: "Wake, in-process", label: "raw write + fsync + rename + fsync dir of a record (by hand, no lock)", key: "lib-wake:publish" },
  { section: "Wake, in-process", label: "↳ publishSlot() call itself (lock..unlock)", key: "lib-publish:publish", base: { key: "lib-wake:publish", name: "raw" }, goal: ratioTo("lib-wake:publish", "raw", 2) },

  {
    section: "Scale",
    label: "lib wake, 10 slots in the store",
    key: "scale-10",
    base: floorBase,
  },
  {
    section: "Scale",
    label: "lib wake, 10,000 slots in the store",
    key: "scale-10k",
    base: floorBase,
    goal: (s, get) => {
      const t = get("scale-10");
      if (!t) return { text: "same as 10 slots" };
      const bound = 1.25 * t.p50 + 0.05;
      return { text: `same as 10 slots: p50 <= ${fmtMs(bound)} (+25%+0.05)`, met: s.p50 <= bound };
    },
  },
  { section: "Scale", label: "lib waitSlots --any on 1,000 names, one published", key: "any-1000", base: floorBase },
  { section: "Scale", label: "lib waitSlots on all 1,000 names, burst of 1,000: last publish -> wake", key: "all-1000" },
  { section: "Scale", label: "↳ the burst itself (1,000 renames, first -> last)", key: "all-1000:burst" },
  { section: "Scale", label: "a2a wait on 1,000 published names (spawn -> exit)", key: "wait-1000-done", base: helloBase },

  ...[100, 20].map((ms) => ({
    section: "Poll mode (A2A_WATCH=poll)",
    label: `lib waitSlots, A2A_POLL_MS=${ms}`,
    key: `poll-${ms}`,
    goal: (s: { p50: number }, get: (k: string) => { p50: number } | undefined) => {
      const w = localWake(get);
      const bound = ms / 2 + (w ?? 1);
      return { text: `p50 <= ${ms / 2} + wake (${fmtMs(bound)})`, met: s.p50 <= bound };
    },
  })),

  { section: "Start-up (spawn -> exit)", label: "harness: /bin/true", key: "true" },
  { section: "Start-up (spawn -> exit)", label: "reference: bare compiled Bun (hello)", key: "hello" },
  { section: "Start-up (spawn -> exit)", label: "floor of a store command: hello + node:fs, one readdirSync", key: "hello-fs", base: helloBase },
  { section: "Start-up (spawn -> exit)", label: "a2a --version", key: "version", base: helloBase, goal: hello(1.1) },
  { section: "Start-up (spawn -> exit)", label: "a2a status, empty store", key: "status-empty", base: helloBase, goal: hello(1.5) },
  { section: "Start-up (spawn -> exit)", label: "a2a status, 10,000 slots", key: "status-10k", base: helloBase, goal: p50(200) },
  { section: "Start-up (spawn -> exit)", label: "floor: sh -c 'cat slots/*.json', 10,000 slots", key: "cat-10k" },
  { section: "Start-up (spawn -> exit)", label: "a2a status --json, 10,000 slots", key: "status-10k-json", base: { key: "cat-10k", name: "cat" }, goal: ratioTo("cat-10k", "cat", 1.5) },
  { section: "Start-up (spawn -> exit)", label: "seq 1 20000 | a2a append NAME --lines (>= 20,000 lines/s: p50 <= 1000)", key: "append-lines", goal: p50(1000) },
  { section: "Start-up (spawn -> exit)", label: "floor of a durable write: hello + node:fs, write, fsync, rename, fsync dir", key: "hello-durable", base: helloBase },
  { section: "Start-up (spawn -> exit)", label: "a2a publish NAME RESULT", key: "publish", base: helloBase, goal: hello(1.5) },
  { section: "Start-up (spawn -> exit)", label: "a2a wait NAME (already published)", key: "wait-done", base: helloBase, goal: hello(1.5) },
  { section: "Start-up (spawn -> exit)", label: "a2a send TO MESSAGE", key: "send", base: helloBase, goal: hello(1.5) },
  { section: "Start-up (spawn -> exit)", label: "a2a recv (one unread)", key: "recv", base: helloBase, goal: hello(1.5) },
  { section: "Start-up (spawn -> exit)", label: "a2a hook user-prompt-submit (Claude Code, every prompt; timed from Bun)", key: "hook-prompt", base: helloBase },
  { section: "Start-up (spawn -> exit)", label: "the same, 1,000 unread 1 MiB messages waiting (issue 19: <= 50 ms)", key: "hook-prompt-1k", base: helloBase, goal: p50(50) },
  { section: "Start-up (spawn -> exit)", label: "a2a hook user-prompt-submit --agent gemini (Gemini CLI's BeforeAgent; Codex's is Claude Code's dialect)", key: "hook-prompt-gemini", base: helloBase },

  ...([
    ["hello", "reference: bare compiled Bun (hello)"],
    ["version", "a2a --version"],
    ["status-empty", "a2a status, empty store"],
    ["status-10k", "a2a status, 10,000 slots"],
    ["publish", "a2a publish NAME RESULT"],
  ] as const).map(([k, label]) => ({
    section: "Start-up CPU time (user + system, all threads; steadier than wall time on a busy machine)",
    label,
    key: `${k}:cpu`,
    base: k === "hello" ? undefined : { key: "hello:cpu", name: "hello" },
  })),

  { section: "Shell round trip (a2a publish spawned while a2a wait blocks)", label: "until wait's stdout has the result (EOF)", key: "roundtrip", base: helloBase, goal: hello(2.2) },
  { section: "Shell round trip (a2a publish spawned while a2a wait blocks)", label: "until wait exited", key: "roundtrip:exit", base: helloBase, goal: p50(10) },
  { section: "Shell round trip (a2a publish spawned while a2a wait blocks)", label: "↳ wait's teardown: EOF -> exited (watch close, exit)", key: "roundtrip:teardown" },
  { section: "Shell round trip (a2a publish spawned while a2a wait blocks)", label: "until publish exited", key: "roundtrip:publish", base: helloBase },
];

const rows = buildRows(specs, col.series, col.errors);

function tputTable(): string[][] {
  const out = [["writer", "runs", "sent", "received", "writer publishes/s", "end-to-end wakes/s", "latency p50", "p99", "max"]];
  for (const { how, runs } of tput) {
    if (!runs.length) continue;
    const lat = summarize(runs.flatMap((r) => r.latencies));
    const label = how === "lib" ? "lib publishSlot (lock, fsync, rename, fsync dir)" : how === "rawsync" ? "raw write + fsync + rename + fsync dir (no lock)" : "raw rename (no lock, no fsync)";
    out.push([
      label,
      String(runs.length),
      String(runs.reduce((a, r) => a + r.sent, 0)),
      `${runs.reduce((a, r) => a + r.received - r.bad, 0)}`,
      runs.map((r) => r.writerPerSec.toFixed(0)).join(", "),
      runs.map((r) => r.endToEndPerSec.toFixed(0)).join(", "),
      fmtMs(lat.p50),
      fmtMs(lat.p99),
      fmtMs(lat.max),
    ]);
  }
  return out;
}

info.loadAfter = loadavg().map((x) => x.toFixed(2)).join(" ");
process.stdout.write(`\na2a bench ${info.date}: ${info.a2a}\nBun ${info.bun}, ${info.cpu}, load ${info.loadBefore} -> ${info.loadAfter}, store on ${info.store}\n`);
process.stdout.write(renderText(rows));
if (tput.length) process.stdout.write(`\nThroughput, one writer\n${textTable(tputTable(), 1)}`);
const busy = (loadavg()[0] > cpus().length || Number(info.loadBefore.split(" ")[0]) > cpus().length)
  ? `load average ${info.loadBefore} -> ${info.loadAfter} on ${cpus().length} cores: other jobs competed for the CPU during this run, so latencies and start-up times are inflated; rerun on a quiet machine for figures to quote`
  : "";
if (busy) process.stdout.write(`\nWARNING: ${busy}\n`);
const miss = missed(rows);
process.stdout.write(miss.length ? `\nGoals missed: ${miss.map((r) => r.spec.label.trim()).join("; ")}\n` : rows.some((r) => r.goal?.met) ? "\nAll goals checked in this run were met.\n" : "");

// ---------------------------------------------------------------- RESULTS.md

function resultsMarkdown(): string {
  const L: string[] = [];
  L.push("# a2a benchmark results", "");
  L.push(`Written by \`bun run bench\` (bench/run.ts) on ${info.date}. All times in milliseconds. Rerun it to refresh this file; figures from a shared or loaded machine are noisy (see the load average).`, "");
  if (busy) L.push(`**Warning:** ${busy}.`, "");
  L.push("## Machine and versions", "");
  L.push(`- host: ${info.host}, Linux ${info.kernel}, ${info.cpu}, ${info.memGiB} GiB`);
  L.push(`- load average (1/5/15 min): ${info.loadBefore} before, ${info.loadAfter} after`);
  L.push(`- a2a: ${info.a2a}`);
  L.push(`- Bun ${info.bun}; C floor: ${info.gcc}`);
  L.push(`- stores created under ${info.store}`);
  L.push(`- arguments: ${info.args}; ${info.params}`);
  L.push(`- wall time per group (s): ${Object.entries(wall).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(", ")}`, "");
  L.push("## Results", "");
  L.push("`vs base`: ratio of p50 and of p99 to the named baseline from this same run (C = raw inotify floor, hello = a bare compiled Bun binary). Goals are checked on this run's numbers; rows without a goal are for reference.");
  L.push(renderMarkdown(rows));
  if (tput.length) L.push("### Throughput, one writer", "", mdTable(tputTable()));
  const m = missed(rows);
  L.push("### Goals missed in this run", "");
  L.push(m.length ? m.map((r) => `- ${r.spec.label.trim()}: ${r.error ? `measurement failed (${r.error})` : `p50 ${fmtMs(r.s!.p50)}, p99 ${fmtMs(r.s!.p99)} against ${r.goal!.text}`}`).join("\n") : "- none", "");
  L.push("## What each figure measures", "");
  L.push(
    "- Wake rows: a waiter process and a publisher process on a fresh store in " + info.store + ". The waiter reports \"armed\", the bench waits a random 5-15 ms, the publisher takes CLOCK_MONOTONIC and publishes, the waiter takes CLOCK_MONOTONIC once the content is in hand (C and fs.watch: file read; lib: waitSlots resolved with the decoded record). Both clocks are clock_gettime(CLOCK_MONOTONIC) (bun:ffi in Bun), so the difference is real cross-process latency.",
    "- \"woken by a rename\": the publisher writes a valid record to ROOT/tmp (write, fsync, close) and the clock starts immediately before rename() into ROOT/slots/NAME.json: the wake path alone, the same protocol as the floors. lib waits on Linux through its own inotify instance read by Bun's event loop (lib/fs/inotify.ts); the \"ffi inotify\" floor is that read with nothing else, and \"lib waitSlots on fs.watch\" is lib where no inotify is to be had (macOS), so the two event sources are compared in one run.",
    "- \"woken by lib publishSlot()\": the clock starts before publishSlot(), so the figure also includes the publish's own work before its rename: taking the slot lock (mkdir + lstat, lib/fs/lock.ts), reading the old record, writing and fsyncing the temp file. The next row is that call's total duration (it also includes the unlock after the rename).",
    "- Scale: the same as \"woken by a rename\" with 10 or 10,000 records already in ROOT/slots; --any on 1,000 names (one random name published per trial); and all of 1,000 names with the publisher renaming all 1,000 back to back (timed from the start of the last publish).",
    "- Poll mode: A2A_WATCH=poll; the publish lands at a uniformly random phase of the tick (the bench waits a random 0..interval after the waiter re-armed), so p50 is about half the interval plus the local wake.",
    "- Start-up: with hyperfine installed (Debian's package), each row is `hyperfine -N --warmup 10 --runs N` of the command, the figures a user reproduces by hand (recv: `--prepare` sends the one unread message before each run); without it the bench spawns the command (stdout to /dev/null) and times until it is reaped, which adds Bun.spawn's own cost to every row and flattens the ratios to hello (the harness row is that cost, with /bin/true). a2a status runs against a store with an empty slots/ and one with 10,000 records.",
    "- Shell round trip: a2a wait NAME is started and allowed to register its watch (inotify fd visible in /proc, then 2 ms); then the clock starts and a2a publish NAME RESULT is spawned. EOF: wait's stdout pipe closed with the full result (what $(a2a wait x) sees); exit: wait reaped (what `a2a wait x; next` sees).",
    "- Throughput: one writer publishing back to back, distinct names; the waiter waits for each name in turn (a publish that landed before its waitSlots call is found by the initial check). Latency per message: from just before the publish call (raw: before the temp write) to the wake.",
    "- Percentiles interpolate linearly between ranks. Warm-up trials are dropped; `cold` below is the first wake of a fresh waiter process.",
    "",
  );
  for (const e of external) {
    L.push(`## ${{ mcp: "MCP", messaging: "Messaging", tasks: "Work queues", pg: "PostgreSQL engine", "pg-load": "PostgreSQL under load", reservations: "File reservations", search: "Search", blobs: "Attachments (blobs)", crew: "Crew" }[e.name]} (bench/${e.name}.ts)`, "");
    if (e.note) L.push(`_${e.note}_`, "");
    // Markdown (a table) goes in as it is; aligned text keeps its columns in a code block.
    // Markdown goes in with its headings moved below this section's; aligned text keeps its
    // columns in a code block.
    if (e.text) L.push(/^\|/m.test(e.text) ? e.text.replace(/^(#{1,4}) /gm, "$1## ") : "```\n" + e.text + "\n```", "");
  }
  L.push("## Raw numbers", "");
  const statRows = [["series", "n", "min", "mean", "p50", "p90", "p99", "max", "cold (median of runs)"]];
  for (const [k, xs] of Object.entries(col.series)) {
    const s = summarize(xs);
    const cold = col.cold[k];
    statRows.push([k, String(s.n), fmtMs(s.min), fmtMs(s.mean), fmtMs(s.p50), fmtMs(s.p90), fmtMs(s.p99), fmtMs(s.max), cold ? `${fmtMs(median(cold))} (n=${cold.length})` : ""]);
  }
  L.push(mdTable(statRows));
  if (Object.keys(col.errors).length) L.push("Errors: " + Object.entries(col.errors).map(([k, v]) => `${k}: ${v}`).join("; "), "");
  L.push("<details><summary>Every sample, in the order taken (ms)</summary>", "");
  for (const [k, xs] of Object.entries(col.series)) L.push(`- ${k}: ${xs.map((x) => x.toFixed(3)).join(" ")}`);
  L.push("", "</details>", "");
  return L.join("\n");
}

if (RESULTS) {
  writeFileSync(RESULTS, resultsMarkdown());
  log(`\nwrote ${RESULTS.replace(ROOT + "/", "")}`);
}
removeAllStores();
removeFreshCopies();
const failures = Object.entries(col.errors);
if (failures.length) log(`\nbench: ${failures.length} measurement(s) failed (exit 1): ${failures.map(([k, v]) => `${k}: ${v}`).join("; ")}`);
process.exit(failures.length ? 1 : 0);
