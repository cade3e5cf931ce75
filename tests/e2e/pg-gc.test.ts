// `a2a gc` on a PostgreSQL store, driven through the binary (lib/maintenance/gc.ts gcDatabase,
// lib/pg/gc.ts): the same sweeps and the same report as on files (docs/PROTOCOL.md §14). Nothing
// here may sleep, so age is made by hand: the superuser moves a row's dates back (a record's
// updated_at or expires_at as its writer would have stamped it; changed_at, which the server's
// trigger stamps, with triggers off for that session).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { hostname } from "node:os";
import { hostTag } from "../../lib/core/holder";
import { createRole, freshDatabase, literal, pgServer, pgSkipReason, type Database, type PgServer, urlAs } from "../harness/pg";
import { a2a } from "../harness/run";

setDefaultTimeout(120_000);

const skip = pgSkipReason();
if (skip) console.warn(`pg-gc.test.ts: skipped: ${skip}`);

const DAY = 86400;
const NONE = { expired: [], tombstones: 0, temp_files: 0, orphan_streams: [], stale_locks: [], claims_recovered: 0, tasks_removed: 0, leases_removed: 0, reservations_removed: 0, topic_messages_removed: 0, blobs_removed: 0, damaged: [] };

describe.skipIf(skip !== undefined)("a2a gc on PostgreSQL", () => {
  let server: PgServer;
  const dbs: Database[] = [];
  const roles: string[] = [];
  beforeAll(async () => {
    server = (await pgServer())!;
  });
  afterAll(async () => {
    for (const db of dbs) await db.drop();
    for (const role of roles) await server.admin(`drop role if exists ${role}`);
  });

  const fresh = async () => {
    const db = await freshDatabase(server);
    dbs.push(db);
    const run = async (...args: string[]) => {
      const r = await a2a(args, { dir: db.url });
      if (r.code !== 0) throw new Error(`a2a ${args.join(" ")}: exit ${r.code}: ${r.stderr}`);
      return r.stdout;
    };
    const sql = (text: string) => server.admin(text, db.name);
    const rows = async (text: string) => (await sql(text)).split("\n").filter((l) => l !== "");
    const gc = async () => {
      const r = await a2a(["gc", "--json"], { dir: db.url });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      return JSON.parse(r.stdout);
    };
    // Moves dates the server's trigger stamps: with triggers off in this session only.
    const backdate = (text: string) => sql(`set session_replication_role = replica; ${text}`);
    return { db, run, sql, rows, gc, backdate };
  };

  // A record (JSON text) with `field` set to `value` seconds since the epoch.
  const setField = (field: string, value: string) => `(jsonb_set(record::jsonb, '{${field}}', to_jsonb(${value}))::text || E'\\n')`;
  const ago = (sec: number) => `extract(epoch from now()) - ${sec}`;

  test("an expired slot is tombstoned and reads absent with its version kept; an old tombstone goes, a young one stays; chunks of no run go", async () => {
    const { run, sql, rows, gc } = await fresh();
    expect(await run("publish", "exp", "v")).toBe("published exp (version 1, 1B)\n");
    await sql(`update a2a.slots set record = ${setField("expires_at", ago(5))} where name = 'exp'`);
    await run("publish", "old", "v");
    await run("clear", "old");
    await sql(`update a2a.slots set record = ${setField("updated_at", ago(DAY + 60))} where name = 'old'`);
    await run("publish", "young", "v");
    await run("clear", "young");
    await sql(`update a2a.slots set record = ${setField("updated_at", ago(DAY - 600))} where name = 'young'`);
    await run("append", "live", "chunk one");
    await sql(`insert into a2a.slot_chunks (name, n, body) values ('ghost', 1, 'a'), ('ghost', 2, 'b'), ('young', 1, 'c')`);

    expect(await gc()).toEqual({ ...NONE, expired: ["exp"], tombstones: 1, orphan_streams: ["ghost", "young"] });
    expect(JSON.parse(await run("status", "--json"))).toMatchObject([{ name: "live" }]);
    expect(await rows(`select name, record::jsonb->>'state', record::jsonb->>'version' from a2a.slots order by name`)).toEqual(["exp|cleared|2", "live|running|1", "young|cleared|2"]);
    expect(await rows(`select name, n from a2a.slot_chunks order by name, n`)).toEqual(["live|1"]);
    expect(await run("tail", "live")).toBe("chunk one");
    // The expired slot's version lives on in its tombstone; the removed one starts again at 1.
    expect(await run("publish", "exp", "again")).toBe("published exp (version 3, 5B)\n");
    expect(await run("publish", "old", "again")).toBe("published old (version 1, 5B)\n");
  });

  test("a claim of a dead reader on this host returns to unread; a live reader's stays", async () => {
    const { run, sql, rows, gc } = await fresh();
    const dead = JSON.parse(await run("send", "box", "lost", "--as", "alice", "--json")).id;
    const held = JSON.parse(await run("send", "box", "held", "--as", "alice", "--json")).id;
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    const claim = (id: string, pid: number) =>
      sql(`update a2a.messages set place = 'claimed', claim_host = ${literal(hostTag(hostname()))}, claim_pid = ${pid}, claim_ms = ${Date.now()} where id = ${literal(id)}`);
    await claim(dead, gone.pid);
    await claim(held, process.pid); // this test runner: alive, on this host, and just claimed
    expect(await gc()).toEqual({ ...NONE, claims_recovered: 1 });
    expect(await rows(`select id, place from a2a.messages order by id`)).toEqual([`${dead}|unread`, `${held}|claimed`].sort());
    const got = (await run("recv", "--as", "box", "--all", "--json")).trim().split("\n").map((l) => JSON.parse(l));
    expect(got.map((m: { id: string; body: string }) => [m.id, m.body])).toEqual([[dead, "lost"]]);
  });

  test("old done and dead tasks go after their retention, unless something unfinished depends on them; free leases go after a day", async () => {
    const { run, sql, rows, gc, backdate } = await fresh();
    const add = async (payload: string, ...more: string[]) => (await run("task", "add", "q", payload, ...more)).trim();
    const finish = async (id: string) => {
      const c = JSON.parse(await run("task", "claim", "q", "--as", "w", "--json"));
      expect(c.id).toBe(id);
      await run("task", "done", id, c.token, "ok");
    };
    const age = (id: string, sec: number) => sql(`update a2a.tasks set record = ${setField("updated_at", ago(sec))} where id = ${literal(id)}`);
    const doneOld = await add("done 8 days ago", "--key", "k1");
    await finish(doneOld);
    await age(doneOld, 8 * DAY);
    const doneYoung = await add("done 6 days ago");
    await finish(doneYoung);
    await age(doneYoung, 6 * DAY);
    const deadOld = await add("dead 31 days ago");
    await run("task", "cancel", deadOld);
    await age(deadOld, 31 * DAY);
    const deadYoung = await add("dead 8 days ago: dead letters are kept longer");
    await run("task", "cancel", deadYoung);
    await age(deadYoung, 8 * DAY);
    const needed = await add("dead 31 days ago, but a task waits for it");
    await run("task", "cancel", needed);
    await age(needed, 31 * DAY);
    const waiting = (await run("task", "add", "later", "waits", "--after", needed)).trim();

    await run("lease", "take", "released-old", "released-young", "held", "--as", "me");
    await run("lease", "release", "released-old", "released-young", "--as", "me");
    await backdate(`update a2a.leases set changed_at = now() - interval '25 hours' where name = 'released-old'`);
    await backdate(`update a2a.leases set changed_at = now() - interval '23 hours' where name = 'released-young'`);
    await run("lease", "take", "ran-out", "--as", "me");
    await sql(`update a2a.leases set expires_at = ${ago(DAY + 60)} where name = 'ran-out'`);

    expect(await gc()).toEqual({ ...NONE, tasks_removed: 2, leases_removed: 2 });
    expect(await rows(`select id from a2a.tasks order by id`)).toEqual([doneYoung, deadYoung, needed, waiting].sort());
    expect(await rows(`select name from a2a.leases order by name`)).toEqual(["held", "released-young"]);
    // With the task its add key went: the same key makes a new task.
    const again = await add("again", "--key", "k1");
    expect(again).not.toBe(doneOld);
    expect(await rows(`select id from a2a.task_keys`)).toEqual([again]);
    // What it depends on is still there to be retried, and the dependant stays blocked on it.
    expect(JSON.parse(await run("task", "show", waiting, "--json")).state).toBe("dead");
    await run("task", "retry", needed);
    expect(JSON.parse(await run("task", "show", waiting, "--json")).state).toBe("blocked");
  });

  test("a task whose dependant is damaged stays, and gc names the damage, changing nothing of it", async () => {
    const { db, run, sql, rows } = await fresh();
    const dep = (await run("task", "add", "q", "dead 31 days ago")).trim();
    await run("task", "cancel", dep);
    await sql(`update a2a.tasks set record = ${setField("updated_at", ago(31 * DAY))} where id = ${literal(dep)}`);
    const hurt = (await run("task", "add", "q", "waits", "--after", dep)).trim();
    // Damaged by hand, its state column saying done: only the record's decoder knows better.
    await sql(`update a2a.tasks set record = 'garbage', state = 'done' where id = ${literal(hurt)}`);
    const r = await a2a(["gc", "--json"], { dir: db.url });
    expect(r.code).toBe(0);
    expect(r.stderr).toStartWith("a2a: warning: skipped 1 damaged task(s) or lease(s): ");
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ ...NONE, damaged: [{ kind: "task", name: hurt, why: "not JSON" }] });
    expect(await rows(`select id, state from a2a.tasks order by id`)).toEqual([`${dep}|dead`, `${hurt}|done`]);
  });

  test("topic messages older than A2A_TOPIC_KEEP go, oldest first, stopping at the first one kept, each topic's newest staying; a reader past a removed one reads on", async () => {
    const { run, rows, gc, backdate } = await fresh();
    for (const i of [1, 2, 3, 4, 5]) await run("pub", "long", `l${i}`);
    await run("pub", "single", "only");
    for (const i of [1, 2, 3, 4]) await run("pub", "mixed", `m${i}`);
    // A named subscriber that has read long up to 2, a message about to be removed.
    await run("sub", "long", "--as", "reader", "--from-start", "--json");
    await backdate(`update a2a.topic_cursors set position = 2 where name = 'reader' and topic = 'long'`);
    await backdate(`update a2a.topic_messages set changed_at = now() - interval '31 days' where topic in ('long', 'single') or (topic = 'mixed' and id in (1, 3))`);

    expect(await gc()).toEqual({ ...NONE, topic_messages_removed: 5 });
    expect(await rows(`select topic, id from a2a.topic_messages order by topic, id`)).toEqual(["long|5", "mixed|2", "mixed|3", "mixed|4", "single|1"]);
    const read = (await run("sub", "long", "--as", "reader", "--json")).trim().split("\n").map((l) => JSON.parse(l));
    expect(read.map((m: { id: number; body: string }) => [m.id, m.body])).toEqual([[5, "l5"]]);
    // Numbering goes on after the newest.
    await run("pub", "long", "l6");
    expect(await rows(`select id from a2a.topic_messages where topic = 'long' order by id`)).toEqual(["5", "6"]);
  });

  test("gc run twice changes nothing the second time; A2A_TOPIC_KEEP=forever keeps every message", async () => {
    const { db, run, sql, rows, gc, backdate } = await fresh();
    await run("publish", "s", "v");
    await sql(`update a2a.slots set record = ${setField("expires_at", ago(5))}`);
    await run("publish", "t", "v");
    await run("clear", "t");
    await sql(`update a2a.slots set record = ${setField("updated_at", ago(2 * DAY))} where name = 't'`);
    const id = (await run("task", "add", "q", "x")).trim();
    await run("task", "cancel", id);
    await sql(`update a2a.tasks set record = ${setField("updated_at", ago(40 * DAY))}`);
    await run("lease", "take", "l", "--as", "me");
    await run("lease", "release", "l", "--as", "me");
    await backdate(`update a2a.leases set changed_at = now() - interval '2 days'`);
    for (const i of [1, 2, 3]) await run("pub", "news", `n${i}`);
    await backdate(`update a2a.topic_messages set changed_at = now() - interval '40 days'`);
    await run("send", "box", "hi", "--as", "alice");
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    await sql(`update a2a.messages set place = 'claimed', claim_host = ${literal(hostTag(hostname()))}, claim_pid = ${gone.pid}, claim_ms = ${Date.now()}`);

    const forever = await a2a(["gc", "--json"], { dir: db.url, env: { A2A_TOPIC_KEEP: "forever" } });
    expect(JSON.parse(forever.stdout)).toEqual({ ...NONE, expired: ["s"], tombstones: 1, claims_recovered: 1, tasks_removed: 1, leases_removed: 1 });
    expect(await rows(`select count(*) from a2a.topic_messages`)).toEqual(["3"]);
    expect(await gc()).toEqual({ ...NONE, topic_messages_removed: 2 });
    // Every row of every table, changed_at included: a second run that wrote anything shows.
    const tables = await rows(`select tablename from pg_tables where schemaname = 'a2a' order by tablename`);
    expect(tables.length).toBeGreaterThan(10);
    const state = () => sql(tables.map((t) => `select ${literal(t)}, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) from a2a.${t} x;`).join("\n"));
    const before = await state();
    expect(await gc()).toEqual(NONE);
    expect(await state()).toBe(before);
  });

  test("a role's gc removes only its own old topic messages, passing over others' and stopping at the first one kept; a superuser's removes any", async () => {
    const { db, run, rows, sql, gc, backdate } = await fresh();
    const bob = `gc_bob_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
    await createRole(server, bob, "pw");
    roles.push(bob);
    await run("pub", "shared", "1 by the superuser");
    await sql(`grant usage on schema a2a to ${bob}; grant all on all tables in schema a2a to ${bob}; grant all on all sequences in schema a2a to ${bob}`);
    const asBob = async (...args: string[]) => {
      const r = await a2a(args, { dir: urlAs(db.url, bob, "pw") });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      return r.stdout;
    };
    for (const i of [2, 3, 4]) await asBob("pub", "shared", `${i} by bob`);
    await run("pub", "shared", "5 by the superuser");
    await backdate(`update a2a.topic_messages set changed_at = now() - interval '31 days' where id <> 3`);
    expect(await rows(`select id, writer = ${literal(bob)} from a2a.topic_messages order by id`)).toEqual(["1|f", "2|t", "3|t", "4|t", "5|f"]);

    expect(JSON.parse(await asBob("gc", "--json"))).toEqual({ ...NONE, topic_messages_removed: 1 });
    expect(await rows(`select id from a2a.topic_messages order by id`)).toEqual(["1", "3", "4", "5"]);
    expect(await gc()).toEqual({ ...NONE, topic_messages_removed: 1 });
    expect(await rows(`select id from a2a.topic_messages order by id`)).toEqual(["3", "4", "5"]);
  });
});
