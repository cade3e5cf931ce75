// a2a import into a PostgreSQL store writes its tasks a batch a transaction (lib/move/tasks.ts,
// lib/pg/task-restore.ts; docs/PROTOCOL.md §18): an import killed mid-way leaves whole batches
// and nothing of the one in flight, and running the whole export again completes it. This file
// starts its own server where one can be had.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SQL } from "bun";
import { a2a, BIN, childEnv } from "../harness/run";
import { freshDatabase, pgServer, pgSkipReason, type Database } from "../harness/pg";
import { taskExport } from "../harness/task-export";

setDefaultTimeout(120_000);

const skip = pgSkipReason();
if (skip) console.warn(`pg-import.test.ts: skipped: ${skip}`);

const N = 2500;
const BATCH = 1000; // lib/move/tasks.ts

describe.skipIf(skip !== undefined)("a2a import of tasks into PostgreSQL", () => {
  let db: Database;
  let sql: SQL;
  beforeAll(async () => {
    db = await freshDatabase((await pgServer())!);
    sql = new SQL({ url: db.url, max: 1 });
  });
  afterAll(async () => {
    await sql?.close();
    await db?.drop();
  });
  const count = async (q: string) => Number((await sql.unsafe(q))[0].n);

  test("killed mid-way it leaves whole batches of tasks, each one transaction; the whole export again completes it", async () => {
    const lines = taskExport(N);
    const dir = `${db.url}?schema=killed`;
    // The header and 1,500 tasks, then the pipe stays open: the first batch is in, the second waits for more.
    const p = Bun.spawn({ cmd: [BIN, "import", "-"], env: childEnv({ dir }), stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    p.stdin.write(lines.slice(0, 1 + 1500).join("\n") + "\n");
    p.stdin.flush();
    const limit = Date.now() + 60_000;
    const tasks = async () => ((await sql`select 1 from pg_tables where schemaname = 'killed' and tablename = 'tasks'`).length ? count("select count(*) as n from killed.tasks") : 0);
    while ((await tasks()) < BATCH) {
      if (p.exitCode !== null) throw new Error(`the import ended (exit ${p.exitCode}): ${await new Response(p.stderr).text()}`);
      if (Date.now() > limit) throw new Error("the first batch never came in");
      await Bun.sleep(10);
    }
    p.kill("SIGKILL");
    await p.exited;
    expect(await tasks()).toBe(BATCH); // the batch in flight left nothing
    expect(await count("select count(distinct xmin::text) as n from killed.tasks")).toBe(1); // one transaction
    expect(await count("select count(*) as n from killed.task_keys")).toBe(BATCH);

    const r = await a2a(["import", "-", "--json"], { dir, stdin: lines.join("\n") + "\n" });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).counts.task).toEqual({ imported: N - BATCH, already: BATCH, kept: 0 });
    expect(await count("select count(*) as n from killed.tasks")).toBe(N);
    expect(await count("select count(*) as n from killed.task_keys")).toBe(N);
    expect(await count("select count(*) as n from killed.task_deps")).toBe(N / 4);
    // The killed run's batch, then the rerun's two (its first batch was all there: nothing written).
    expect(await count("select count(distinct xmin::text) as n from killed.tasks")).toBe(3);
    // What an add makes is there: the add key names its task, a dependant waits for its dependency.
    const again = await a2a(["task", "add", "q0", "once more", "--key", "k0"], { dir });
    expect(again.stdout.trim()).toBe(JSON.parse(lines[1]).record.id);
    const show = await a2a(["task", "show", JSON.parse(lines[4]).record.id, "--json"], { dir });
    expect(JSON.parse(show.stdout)).toMatchObject({ queue: "q3", state: "blocked" });
  });

  test("a batch whose tasks list many dependencies between them goes in whole (a statement takes at most 65,535 parameters)", async () => {
    // 1,000 tasks each after the 20 before it (the first 20 after fewer): 19,790 dependencies, 4 columns each.
    const lines = taskExport(BATCH);
    const recs = lines.slice(1, -1).map((l) => JSON.parse(l).record);
    recs.forEach((rec, i) => (rec.after = recs.slice(Math.max(0, i - 20), i).map((d) => ({ queue: d.queue, id: d.id }))));
    const deps = recs.reduce((n, rec) => n + rec.after.length, 0);
    const input = [lines[0], ...recs.map((record) => JSON.stringify({ kind: "task", record })), lines.at(-1)].join("\n") + "\n";
    const dir = `${db.url}?schema=fanin`;
    const r = await a2a(["import", "-", "--json"], { dir, stdin: input });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(r.stdout).counts.task).toEqual({ imported: BATCH, already: 0, kept: 0 });
    expect(await count("select count(*) as n from fanin.task_deps")).toBe(deps);
  });
});
