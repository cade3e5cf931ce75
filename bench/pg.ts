// `bun bench/pg.ts [--n N]`: the PostgreSQL engine against its floors, on one throwaway server
// (tests/harness/pg.ts: a cluster of Debian's postgresql, fsync on, loopback) in the same run.
//
//   wake   floor: a bare NOTIFY, and a transaction (upsert + pg_notify), from one client to
//          another's LISTEN callback in one process, back to back and after a 5 ms pause; then a
//          lib publish in this process waking a lib wait in another, each after a 5 ms pause
//          (goal: p50 <= 2x the paced transaction floor), and `a2a publish`
//          waking a waiting `a2a wait` (clock: before the publisher's spawn; goal: <= 1/10 of
//          agent2agent's ~30 ms).
//   cli    floor: a compiled Bun binary that connects, runs one query and closes
//          (bench/fixtures/pg-floor.ts); then `a2a status`, `a2a publish` and `a2a wait`
//          (published) on the same server (goal: p50 <= 1.2x the floor, issue 34), spawns alternated;
//          then a waiting `a2a wait` woken by `a2a publish` and by a lib publish (goal: <= 1/10
//          of agent2agent's ~30 ms, measured from a publish call to the waiter's wake).
//   mcp    agent_wait in `a2a mcp` woken by a lib publish in this process (goal: p50 <= 2 ms,
//          issue 34).
//   import `a2a import FILE` of an export of 20,000 tasks (tests/harness/task-export.ts) into a
//          fresh schema, spawn -> exit (goal: p50 <= 4 s; --n caps the runs at 5).
// `--only wake,cli,mcp,import` runs those sections alone.
// Nothing asserts on time. Run it alone: the machine's other work moves every figure.

import { SQL } from "bun";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openBus } from "../lib/bus";
import { BIN, childEnv } from "../tests/harness/run";
import { connect } from "../tests/harness/mcp";
import { freshDatabase, pgServer, pgSkipReason } from "../tests/harness/pg";
import { taskExport } from "../tests/harness/task-export";
import { ensureBinary } from "../tests/build";
import { mono } from "./lib/clock";
import { buildReference, freshCopy } from "./lib/reference";
import { lineReader } from "./lib/proc";
import { timeSpawn } from "./lib/spawn";
import { summarize, type Summary } from "./lib/stats";

const { values: opt } = parseArgs({ args: Bun.argv.slice(2), options: { n: { type: "string" }, only: { type: "string" } } });
const N = Number(opt.n ?? 100);
const only = opt.only?.split(",");
const runs = (section: string) => !only || only.includes(section);

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
if (runs("wake")) {
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
  // The lib row below pauses 5 ms before each publish (its waiter LISTENs on each new slot's
  // channel meanwhile); a pause lets both processes and the server go idle, which on this VM costs
  // every wake-up on the way. The floor is measured again under the same pacing, so the ratio
  // compares like with like (both are printed).
  const paced: number[] = [];
  for (let i = 0; i < 20 + N; i++) {
    await Bun.sleep(5);
    const y = await once(() => a.begin(async (t) => {
      await t`insert into floor values ('k', ${i}) on conflict (k) do update set v = excluded.v`;
      await t`select pg_notify('floor', 'k')`;
    }));
    if (i >= 20) paced.push(y);
  }
  row("floor: NOTIFY to another client's LISTEN callback (one process)", summarize(bare));
  row("floor: transaction (upsert + pg_notify) to the callback", summarize(tx));
  row("floor: the same transaction after a 5 ms pause (paced as the lib row)", summarize(paced));
  await a.close();
  await b.close();
}

// ---- lib publish in this process -> lib wait in another ------------------------------------
if (runs("wake")) {
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
  const floor = rows.find((r) => r[0].startsWith("floor: the same transaction after"))?.[1];
  const ratio = floor ? ` (${(summarize(lat).p50 / floor.p50).toFixed(2)}x the paced floor)` : "";
  row("lib publish -> lib wait in another process (5 ms pause before each)", summarize(lat), `goal: p50 <= 2x the paced transaction floor${ratio}`);
}

// ---- CLI: floor, status, publish, wait; and CLI publish -> waiting CLI wait ----------------
if (runs("cli")) {
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
    row(k, s, k.startsWith("floor") ? "" : `${(s.p50 / floor.p50).toFixed(2)}x floor (goal <= 1.2x)`);
  }
  // A waiting `a2a wait`, once its LISTEN is on the server (pg_stat_activity shows the
  // statement), woken by `a2a publish` (clock before the publisher's spawn) and by a lib
  // publish in this process (clock before the call: agent2agent's ~30 ms is measured this way,
  // from a publish call in one process to the waiter's wake in another).
  const admin = new SQL({ url: db.url, max: 1 });
  const listening = async () => {
    const limit = Date.now() + 30_000;
    while ((await admin`select count(*)::int as n from pg_stat_activity where datname = ${db.name} and query ilike 'listen%'`)[0].n < 1) {
      if (Date.now() > limit) throw new Error("the waiter never listened");
      await Bun.sleep(2);
    }
  };
  const bus = openBus({ dir: url, env: {} });
  const fromCli: number[] = [];
  const fromLib: number[] = [];
  for (let i = 0; i < 6 + 2 * Math.ceil(N / 4); i++) {
    const name = `c${i}`;
    const w = Bun.spawn({ cmd: [a2a, "wait", name, "--timeout", "30s"], env, stdout: "pipe", stderr: "inherit" });
    const printed = w.stdout.getReader().read().then(() => mono()); // its first byte out, not its exit
    await listening();
    const t0 = mono();
    if (i % 2) await bus.slots.publish(name, "x");
    else await timeSpawn([a2a, "publish", name, "x"], env);
    const t = (await printed) - t0;
    await w.exited;
    if (i >= 6) (i % 2 ? fromLib : fromCli).push(t);
  }
  await bus.close();
  await admin.close();
  row("`a2a publish` -> waiting `a2a wait` printed (clock: before the publisher's spawn)", summarize(fromCli));
  row("lib publish -> waiting `a2a wait` printed (clock: before the call)", summarize(fromLib), "agent2agent: ~30 ms; goal <= 1/10");
}

// ---- agent_wait through `a2a mcp` ----------------------------------------------------------
if (runs("mcp")) {
  const bus = openBus({ dir: url, env: {} });
  const { client } = await connect(url, {}, { stderr: "inherit", name: "a2a-bench-pg" });
  const lat: number[] = [];
  for (let i = 0; i < 10 + N; i++) {
    const name = `m${i}`;
    const call = client.callTool({ name: "agent_wait", arguments: { name, timeout: 60 } }, undefined, { timeout: 120_000 });
    await Bun.sleep(15 + Math.random() * 15); // the server is blocked in its wait (as bench/mcp.ts)
    const t0 = mono();
    await bus.slots.publish(name, "x");
    const r = await call;
    const t = mono() - t0;
    if (r.isError) throw new Error(`agent_wait ${name}: ${JSON.stringify(r.content)}`);
    if (i >= 10) lat.push(t);
  }
  await client.close();
  await bus.close();
  row("agent_wait in `a2a mcp` woken by a lib publish (clock: before the call)", summarize(lat), "goal: p50 <= 2 ms");
}

// ---- a2a import of 20,000 tasks --------------------------------------------------------------
if (runs("import")) {
  const dir = mkdtempSync(join(tmpdir(), "a2a-bench-import-"));
  const file = join(dir, "tasks.jsonl");
  writeFileSync(file, taskExport(20_000).join("\n") + "\n");
  const a2a = freshCopy(BIN, "a2a-pg-import");
  const wall: number[] = [];
  for (let i = 0; i < Math.min(N, 5); i++) wall.push((await timeSpawn([a2a, "import", file], childEnv({ dir: `${db.url}?schema=import${i}` }))).wall);
  rmSync(dir, { recursive: true, force: true });
  row("`a2a import FILE`: 20,000 tasks into a fresh schema", summarize(wall), "goal: p50 <= 4000 ms");
}

await db.drop();
const width = Math.max(...rows.map((r) => r[0].length));
console.log(`pg bench: ${new Date().toISOString()}, Bun ${Bun.version}, PostgreSQL on loopback, n=${N}`);
console.log(`${"what".padEnd(width)}  ${"n".padStart(4)}  ${"p50".padStart(7)}  ${"p90".padStart(7)}  ${"p99".padStart(7)}  (ms)`);
for (const [w, s, note] of rows) console.log(`${w.padEnd(width)}  ${String(s.n).padStart(4)}  ${fmt(s.p50).padStart(7)}  ${fmt(s.p90).padStart(7)}  ${fmt(s.p99).padStart(7)}  ${note}`);
