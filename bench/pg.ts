// `bun bench/pg.ts [--n N]`: the PostgreSQL engine against its floors, on one throwaway server
// (tests/harness/pg.ts: a cluster of Debian's postgresql, fsync on, loopback) in the same run.
//
//   wake   floor: a bare NOTIFY, and a transaction (upsert + pg_notify), from one client to
//          another's LISTEN callback in one process; then a lib publish in this process waking
//          a lib wait in another (goal: p50 <= 2x the transaction floor), and `a2a publish`
//          waking a waiting `a2a wait` (clock: before the publisher's spawn; goal: <= 1/10 of
//          agent2agent's ~30 ms).
//   cli    floor: a compiled Bun binary that connects, runs one query and closes
//          (bench/fixtures/pg-floor.ts); then `a2a status`, `a2a publish` and `a2a wait`
//          (published) on the same server (goal: p50 <= 1.3x the floor), spawns alternated.
// Nothing asserts on time. Run it alone: the machine's other work moves every figure.

import { SQL } from "bun";
import { parseArgs } from "node:util";
import { openBus } from "../lib/bus";
import { BIN, childEnv } from "../tests/harness/run";
import { freshDatabase, pgServer, pgSkipReason } from "../tests/harness/pg";
import { ensureBinary } from "../tests/build";
import { mono } from "./lib/clock";
import { buildReference, freshCopy } from "./lib/reference";
import { lineReader } from "./lib/proc";
import { timeSpawn } from "./lib/spawn";
import { summarize, type Summary } from "./lib/stats";

const { values: opt } = parseArgs({ args: Bun.argv.slice(2), options: { n: { type: "string" } } });
const N = Number(opt.n ?? 100);

const skip = pgSkipReason();
if (skip) {
  console.log(`pg: skipped: ${skip}`);
  process.exit(0);
}
ensureBinary(BIN);
const server = (await pgServer())!;
const db = await freshDatabase(server);
const url = `${db.url}?schema=bench`;
const rows: [string, Summary, string][] = [];
const fmt = (x: number) => (x < 10 ? x.toFixed(3) : x.toFixed(1));
const row = (what: string, s: Summary, note = "") => rows.push([what, s, note]);

// ---- wake floors: one process, two clients ---------------------------------------------
{
  const a = new SQL({ url: db.url, max: 1 });
  const b = new SQL({ url: db.url, max: 1 });
  await a`create table if not exists floor (k text primary key, v int)`;
  let resolve: (t: number) => void = () => {};
  await b.listen("floor", () => resolve(mono()));
  const once = async (fn: () => Promise<unknown>) => {
    const woke = new Promise<number>((r) => (resolve = r));
    const t0 = mono();
    await fn();
    return (await woke) - t0;
  };
  const bare: number[] = [];
  const tx: number[] = [];
  for (let i = 0; i < 20 + 3 * N; i++) {
    const x = await once(() => a`select pg_notify('floor', 'x')`);
    const y = await once(() => a.begin(async (t) => {
      await t`insert into floor values ('k', ${i}) on conflict (k) do update set v = excluded.v`;
      await t`select pg_notify('floor', 'k')`;
    }));
    if (i >= 20) (bare.push(x), tx.push(y));
  }
  row("floor: NOTIFY to another client's LISTEN callback (one process)", summarize(bare));
  row("floor: transaction (upsert + pg_notify) to the callback", summarize(tx));
  await a.close();
  await b.close();
}

// ---- lib publish in this process -> lib wait in another ------------------------------------
{
  const bus = openBus({ dir: url, env: {} });
  await bus.slots.list();
  const waiter = Bun.spawn({ cmd: [process.execPath, "bench/fixtures/pg-waiter.ts", url, String(N + 10)], stdout: "pipe", stderr: "inherit" });
  const line = lineReader(waiter.stdout);
  if ((await line()) !== "ready") throw new Error("the waiter did not start");
  const lat: number[] = [];
  for (let i = 1; i <= N + 10; i++) {
    await Bun.sleep(5); // let the waiter's LISTEN for w{i} settle: a wake, not a first check, is measured
    const t0 = mono();
    await bus.slots.publish(`w${i}`, "x");
    const t = Number(await line());
    if (i > 10) lat.push(t - t0);
  }
  await waiter.exited;
  await bus.close();
  row("lib publish -> lib wait in another process", summarize(lat), "goal: p50 <= 2x the transaction floor");
}

// ---- CLI: floor, status, publish, wait; and CLI publish -> waiting CLI wait ----------------
{
  const env = childEnv({ dir: url });
  const floorBin = freshCopy(buildReference("pg-floor"), "pg-floor");
  const a2a = freshCopy(BIN, "a2a-pg");
  await timeSpawn([a2a, "publish", "done", "x"], env);
  const methods: [string, () => string[]][] = [
    ["floor: compiled Bun, connect + one query + close", () => [floorBin]],
    ["a2a status", () => [a2a, "status"]],
    ["a2a publish NAME RESULT", () => [a2a, "publish", "p", "hello"]],
    ["a2a wait NAME (already published)", () => [a2a, "wait", "done"]],
  ];
  const wall = new Map<string, number[]>(methods.map(([k]) => [k, []]));
  for (let i = 0; i < 5 + N; i++) {
    for (const [k, cmd] of methods) {
      const t = await timeSpawn(cmd(), env);
      if (i >= 5) wall.get(k)!.push(t.wall);
    }
  }
  const floor = summarize(wall.get(methods[0][0])!);
  for (const [k] of methods) {
    const s = summarize(wall.get(k)!);
    row(k, s, k.startsWith("floor") ? "" : `${(s.p50 / floor.p50).toFixed(2)}x floor (goal <= 1.3x)`);
  }
  const e2e: number[] = [];
  for (let i = 0; i < 3 + Math.ceil(N / 4); i++) {
    const name = `c${i}`;
    const w = Bun.spawn({ cmd: [a2a, "wait", name, "--timeout", "30s"], env, stdout: "pipe", stderr: "inherit" });
    await Bun.sleep(150); // the waiter is listening (its start-up is not what is measured)
    const t0 = mono();
    await timeSpawn([a2a, "publish", name, "x"], env);
    await w.exited;
    const t = mono() - t0;
    if (i >= 3) e2e.push(t);
  }
  row("`a2a publish` -> waiting `a2a wait` exited (clock: before the publisher's spawn)", summarize(e2e), "agent2agent: ~30 ms");
}

await db.drop();
const width = Math.max(...rows.map((r) => r[0].length));
console.log(`pg bench: ${new Date().toISOString()}, Bun ${Bun.version}, PostgreSQL on loopback, n=${N}`);
console.log(`${"what".padEnd(width)}  ${"n".padStart(4)}  ${"p50".padStart(7)}  ${"p90".padStart(7)}  ${"p99".padStart(7)}  (ms)`);
for (const [w, s, note] of rows) console.log(`${w.padEnd(width)}  ${String(s.n).padStart(4)}  ${fmt(s.p50).padStart(7)}  ${fmt(s.p90).padStart(7)}  ${fmt(s.p99).padStart(7)}  ${note}`);
