// `bun bench/reservations.ts [--n 200] [--reservations 1000] [--rounds 5]`: what file
// reservations (issue 23) cost a process, against the bench's floor, a bare compiled Bun (hello,
// bench/fixtures/hello.ts, built with a2a's flags): spawn -> exit, wall and CPU time.
//
//   hook free      a2a hook pre-tool-use, Claude Code's PreToolUse event of an Edit on stdin, for
//                  a file nobody reserved, in a repository with --reservations live exclusive
//                  reservations of other agents (every edit a session makes pays this).
//                  Goal: p50 under 30 ms.
//   hook denied    the same for a reserved file: the denial is written, and the session's name
//                  is worked out as in Claude Code (no A2A_AGENT: this session's a2a mcp, else
//                  the directory's name).
//   hook empty     the same, in a repository with no reservation.
//   hook other     a tool that writes no file (Read): answered before the store is opened.
//   reserve        a2a reserve PATH (a new path each run) in that repository, and in one with
//                  no other agent's reservation (the floor of a durable write: see bench/run.ts).
// Methods run in interleaved rounds, fresh processes each, the first 3 of each block dropped.
// Nothing asserts on time. Run it alone: other work on the machine moves every figure; the load
// average at the start and the end is printed with them.

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openBus } from "../lib/bus";
import { ensureBinary } from "../tests/build";
import { BIN as BUILT_BIN } from "../tests/harness/run";
import { buildReference, freshCopy } from "./lib/reference";
import { timeSpawn } from "./lib/spawn";
import { fmtMs, summarize } from "./lib/stats";

const { values: opt } = parseArgs({
  args: Bun.argv.slice(2),
  options: { n: { type: "string", default: "200" }, reservations: { type: "string", default: "1000" }, rounds: { type: "string", default: "5" } },
});
const N = Number(opt.n);
const COUNT = Number(opt.reservations);
const ROUNDS = Math.max(1, Number(opt.rounds));
const WARM = 3;
const GOAL_MS = 30;

const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");
const loadBefore = load();
const bin = process.env.A2A_BIN ?? BUILT_BIN;
ensureBinary(bin, (m) => process.stderr.write(m + "\n"));
const A2A = freshCopy(bin, "a2a-reservations");
const HELLO = freshCopy(buildReference("hello"), "hello");

const work = mkdtempSync(join(tmpdir(), "a2a-bench-reservations-"));
const store = join(work, "store");
const gitRepo = (name: string) => {
  const repo = join(work, name);
  mkdirSync(join(repo, "src"), { recursive: true });
  const r = Bun.spawnSync({ cmd: ["git", "init", "-q", repo], stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git init: ${r.stderr}`);
  return repo;
};
const full = gitRepo("full");
const empty = gitRepo("empty");

try {
  // COUNT exclusive reservations of 50 agents, none overlapping: pkgI/fileJ.ts, and src/api.ts.
  const bus = openBus({ dir: store, env: {} });
  const agents = 50;
  for (let a = 0; a < agents; a++) {
    const mine = Array.from({ length: Math.ceil(COUNT / agents) }, (_, j) => a * Math.ceil(COUNT / agents) + j).filter((i) => i < COUNT - 1);
    const patterns = [...mine.map((i) => `pkg${i % 97}/file${i}.ts`), ...(a === 0 ? ["src/api.ts"] : [])];
    const o = await bus.reservations.reserve(patterns, { as: `agent${a}`, cwd: full, ttlSec: 24 * 3600 });
    if (o.kind !== "done") throw new Error(`filling: ${o.kind}`);
  }
  const live = (await bus.reservations.list({ cwd: full })).reservations.length;
  await bus.close();

  const env = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, A2A_DIR: store, ...extra });
  const event = (cwd: string, tool: string, file: string) => JSON.stringify({ session_id: "bench", transcript_path: join(work, "t.jsonl"), cwd, permission_mode: "default", hook_event_name: "PreToolUse", tool_name: tool, tool_input: { file_path: file, old_string: "a", new_string: "b" }, tool_use_id: "toolu_1" });
  let seq = 0;
  const methods: { id: string; label: string; run: () => Promise<{ wall: number; cpu: number }> }[] = [
    { id: "hello", label: "floor: bare compiled Bun (hello)", run: () => timeSpawn([HELLO], env()) },
    { id: "free", label: `hook pre-tool-use, free file, ${COUNT} live reservations`, run: () => timeSpawn([A2A, "hook", "pre-tool-use"], env({ A2A_AGENT: "bob" }), event(full, "Edit", join(full, "src", "free.ts"))) },
    { id: "denied", label: `hook pre-tool-use, reserved file (denied), ${COUNT} live, session name from presence`, run: () => timeSpawn([A2A, "hook", "pre-tool-use"], env(), event(full, "Edit", join(full, "src", "api.ts"))) },
    { id: "empty", label: "hook pre-tool-use, no reservation in the repository", run: () => timeSpawn([A2A, "hook", "pre-tool-use"], env({ A2A_AGENT: "bob" }), event(empty, "Edit", join(empty, "src", "x.ts"))) },
    { id: "other", label: "hook pre-tool-use, a tool that writes no file (Read)", run: () => timeSpawn([A2A, "hook", "pre-tool-use"], env({ A2A_AGENT: "bob" }), event(full, "Read", join(full, "src", "api.ts"))) },
    { id: "reserve", label: `a2a reserve PATH (a new path each run), ${COUNT}+ live`, run: () => timeSpawn([A2A, "reserve", `new/${seq++}.ts`, "-q"], env({ A2A_AGENT: "bench-r" }), undefined, full) },
    { id: "reserve-empty", label: "a2a reserve PATH, no other reservation in the repository", run: () => timeSpawn([A2A, "reserve", `new/${seq++}.ts`, "-q"], env({ A2A_AGENT: "bench-r" }), undefined, empty) },
  ];
  // The denial really is one (else the row measures something else).
  const probe = Bun.spawnSync({ cmd: [A2A, "hook", "pre-tool-use"], env: env(), stdin: new Blob([event(full, "Edit", join(full, "src", "api.ts"))]), stdout: "pipe", stderr: "pipe" });
  if (!/"permissionDecision":"deny"/.test(probe.stdout.toString())) throw new Error(`the denied row is not denied: ${probe.stdout}${probe.stderr}`);

  const wall: Record<string, number[]> = {};
  const cpu: Record<string, number[]> = {};
  const skipped: Record<string, string> = {};
  const per = Math.ceil(N / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    for (const m of methods) {
      if (skipped[m.id]) continue;
      for (let i = 0; i < per + WARM; i++) {
        let t;
        try {
          t = await m.run();
        } catch (e) {
          skipped[m.id] = (e as Error).message.split("\n")[0];
          break;
        }
        if (i < WARM) continue;
        (wall[m.id] ??= []).push(t.wall);
        (cpu[m.id] ??= []).push(t.cpu);
      }
    }
  }

  const hello = summarize(wall.hello ?? []).p50;
  console.log(`reservations bench: ${new Date().toISOString()}, Bun ${Bun.version}, ${live} live reservations in the repository, n ${per * ROUNDS} per row in ${ROUNDS} rounds, load average ${loadBefore} at the start, ${load()} at the end`);
  console.log(`spawn -> exit (ms)                                                            p50     p90     p99   x hello  cpu p50`);
  for (const m of methods) {
    if (skipped[m.id] && !wall[m.id]) {
      console.log(`  ${m.label.padEnd(75)} skipped: ${skipped[m.id]}`);
      continue;
    }
    const s = summarize(wall[m.id]);
    const goal = m.id === "free" || m.id === "denied" ? `  (goal p50 < ${GOAL_MS}: ${s.p50 < GOAL_MS ? "met" : "MISSED"})` : "";
    console.log(`  ${m.label.padEnd(75)} ${fmtMs(s.p50).padStart(6)}  ${fmtMs(s.p90).padStart(6)}  ${fmtMs(s.p99).padStart(6)}  ${(s.p50 / hello).toFixed(2).padStart(6)}x  ${fmtMs(summarize(cpu[m.id]).p50).padStart(6)}${goal}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
