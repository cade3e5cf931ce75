// `bun bench/search.ts [--n 100] [--messages 10000] [--posts 10000] [--rounds 5]`: what
// `a2a search` (issue 25, docs/PROTOCOL.md §20) costs on the file engine, over --messages
// messages in one inbox plus --posts topic posts (10 topics), against the bench's floor, a bare
// compiled Bun (hello, bench/fixtures/hello.ts, built with a2a's flags):
//
//   spawn, word       a2a search WORD --as bench, spawn -> exit, a word in about 1% of the
//                     records (the index warm: caught up, nothing new). Goal: p50 <= 50 ms.
//   spawn, phrase     the same with a phrase and a prefix ("schema chan"* e-mail).
//   spawn, +1 new     the same after one new message each run (the catch-up reads it).
//   in-process        bus.search.find in this process, the bus open (Agent Mail's published
//                     figure is a p95 under 1 ms in-process at 15k messages: ours next to it).
//   first search      the index built from nothing (once per round: the index file removed).
// Methods run in interleaved rounds, fresh processes each, the first 3 of each block dropped.
// Nothing asserts on time. Run it alone: other work on the machine moves every figure; the load
// average at the start and the end is printed with them.

import { mkdtempSync, rmSync } from "node:fs";
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
  options: { n: { type: "string", default: "100" }, messages: { type: "string", default: "10000" }, posts: { type: "string", default: "10000" }, rounds: { type: "string", default: "5" } },
});
const N = Math.max(1, Number(opt.n));
const MESSAGES = Number(opt.messages);
const POSTS = Number(opt.posts);
const ROUNDS = Math.max(1, Number(opt.rounds));
const WARM = 3;
const GOAL_MS = 50;

const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");
const loadBefore = load();
const bin = process.env.A2A_BIN ?? BUILT_BIN;
ensureBinary(bin, (m) => process.stderr.write(m + "\n"));
const A2A = freshCopy(bin, "a2a-search");
const HELLO = freshCopy(buildReference("hello"), "hello");

const work = mkdtempSync(join(tmpdir(), "a2a-bench-search-"));
const store = join(work, "store");

// Text like agents write: common words, a rare word in 1 of 100 records.
const WORDS = "the schema change build test failed passed review parser index deploy e-mail re-run port proxy config migration log error warning fix patch merge branch commit".split(" ");
const textFor = (i: number) => {
  const w = (k: number) => WORDS[(i * 7 + k * 13) % WORDS.length];
  return `${w(0)} ${w(1)} ${w(2)} of run ${i}: ${w(3)} ${w(4)} ${w(5)} ${w(6)}${i % 100 === 0 ? " platypus" : ""} and ${w(7)} ${w(8)}`;
};

try {
  const bus = openBus({ dir: store, env: { A2A_MAX_UNREAD: String(MESSAGES + 10_000) } });
  for (let i = 0; i < MESSAGES; i++) await bus.mail.send(`sender${i % 20}`, "bench", textFor(i));
  for (let i = 0; i < POSTS; i++) await bus.topics.publish(`topic${i % 10}`, textFor(i + MESSAGES), `poster${i % 20}`);
  await bus.search.find("bench", "platypus"); // the index, built
  const env = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, A2A_DIR: store, A2A_MAX_UNREAD: String(MESSAGES + 10_000) });
  const hits = (await bus.search.find("bench", "platypus", { limit: 1000 })).length;
  const index = join(store, "index", `${process.getuid!()}.sqlite`);
  let seq = 0;
  const inProcess = async (query: string) => {
    const t = performance.now(); // in-process: this clock is the process's own
    await bus.search.find("bench", query);
    return { wall: performance.now() - t, cpu: NaN };
  };
  const methods: { id: string; label: string; n: number; run: () => Promise<{ wall: number; cpu: number }> }[] = [
    { id: "hello", label: "floor: bare compiled Bun (hello)", n: N, run: () => timeSpawn([HELLO], env()) },
    { id: "word", label: `a2a search WORD (${hits} hits), warm index`, n: N, run: () => timeSpawn([A2A, "search", "platypus", "--as", "bench"], env()) },
    { id: "phrase", label: 'a2a search \'"schema chan"* e-mail\', warm index', n: N, run: () => timeSpawn([A2A, "search", '"schema chan"* e-mail', "--as", "bench"], env()) },
    {
      id: "new",
      label: "a2a search WORD after one new message",
      n: N,
      run: async () => {
        await bus.mail.send("late", "bench", `late ${seq++} platypus`);
        return timeSpawn([A2A, "search", "platypus", "--as", "bench"], env());
      },
    },
    { id: "in-word", label: "in-process bus.search.find(WORD)", n: N * 5, run: () => inProcess("platypus") },
    { id: "in-phrase", label: "in-process bus.search.find('\"schema chan\"* e-mail')", n: N * 5, run: () => inProcess('"schema chan"* e-mail') },
    {
      id: "first",
      label: "first search: the index built from the files",
      n: ROUNDS,
      run: async () => {
        for (const f of [index, `${index}-wal`, `${index}-shm`]) rmSync(f, { force: true });
        return timeSpawn([A2A, "search", "platypus", "--as", "bench"], env());
      },
    },
  ];

  const wall: Record<string, number[]> = {};
  const cpu: Record<string, number[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const m of methods) {
      const per = m.id === "first" ? 1 : Math.ceil(m.n / ROUNDS);
      const warm = m.id === "first" ? 0 : WARM;
      for (let i = 0; i < per + warm; i++) {
        const t = await m.run();
        if (i < warm) continue;
        (wall[m.id] ??= []).push(t.wall);
        (cpu[m.id] ??= []).push(t.cpu);
      }
    }
  }
  await bus.close();

  const hello = summarize(wall.hello ?? []).p50;
  console.log(`search bench: ${new Date().toISOString()}, Bun ${Bun.version}, file engine, ${MESSAGES} messages + ${POSTS} topic posts, ${ROUNDS} rounds, load average ${loadBefore} at the start, ${load()} at the end`);
  console.log(`time (ms)                                                      n     p50     p90     p95     p99   x hello  cpu p50`);
  for (const m of methods) {
    const s = summarize(wall[m.id] ?? []);
    const sorted = [...(wall[m.id] ?? [])].sort((a, b) => a - b);
    const p95 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] ?? NaN;
    const c = summarize((cpu[m.id] ?? []).filter((x) => !Number.isNaN(x))).p50;
    const goal = m.id === "word" ? `  goal p50 <= ${GOAL_MS} ms: ${s.p50 <= GOAL_MS ? "met" : "MISSED"}` : "";
    console.log(`  ${m.label.padEnd(58)} ${String(s.n).padStart(4)}  ${fmtMs(s.p50).padStart(6)}  ${fmtMs(s.p90).padStart(6)}  ${fmtMs(p95).padStart(6)}  ${fmtMs(s.p99).padStart(6)}  ${(s.p50 / hello).toFixed(2).padStart(6)}x  ${Number.isNaN(c) ? "     -" : fmtMs(c).padStart(6)}${goal}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
