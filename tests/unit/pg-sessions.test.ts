// Session records on PostgreSQL (lib/pg/sessions.ts) with several roles, as a shared store has
// several OS users on files: who wrote a record is the role the server saw (the client cannot
// say otherwise), it speaks for this role when it is this role or a superuser (on files: this
// user or root), and a record another role wrote is never replaced (on files: sticky sessions/).
// The contract suite runs one role only, and its session tests need the mail room besides.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SQL } from "bun";
import { openStore } from "../../lib/engine/open";
import { openPg, type PgEngine } from "../../lib/pg/engine";
import type { SessionRecord } from "../../lib/sessions/storage";
import { createRole, freshDatabase, pgServer, pgSkipReason, urlAs, type Database, type PgServer } from "../harness/pg";

setDefaultTimeout(60_000);

const skip = pgSkipReason();
if (skip) console.warn(`pg-sessions.test.ts: skipped: ${skip}`);

const record = (name: string, blocks = 0): SessionRecord => ({ a2a: 1, name, announced: [], blocked: [], blocks });

describe.skipIf(skip !== undefined)("PostgreSQL: session records and their writers", () => {
  let server: PgServer;
  let db: Database;
  const engines: PgEngine[] = [];
  const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 8);
  const [bob, carol] = [`bob_${suffix}`, `carol_${suffix}`];
  let su = "";
  const as = (url: string) => {
    const store = openStore({ dir: url, env: {} });
    const pg = openPg(store);
    engines.push(pg);
    return pg.sessions;
  };

  beforeAll(async () => {
    server = (await pgServer())!;
    db = await freshDatabase(server);
    su = new URL(db.url).username || "postgres";
    const owner = openPg(openStore({ dir: db.url, env: {} }));
    engines.push(owner);
    await owner.init(); // the superuser makes the schema (a read would make none)
    for (const role of [bob, carol]) {
      await createRole(server, role, "pw");
      await server.admin(`grant usage on schema a2a to ${role}; grant select, insert, update on a2a.sessions to ${role}`, db.name);
    }
  });
  afterAll(async () => {
    for (const e of engines) await e.close();
    await db?.drop();
    for (const role of [bob, carol]) await server?.admin(`drop role if exists ${role}`);
  });

  test("the writer is the role the server saw; a record another role wrote is not ours, and ours never replaces it", async () => {
    const [b, c] = [as(urlAs(db.url, bob, "pw")), as(urlAs(db.url, carol, "pw"))];
    expect(await b.read("s1")).toEqual({ kind: "absent" });
    expect(await b.write(record("s1", 1))).toBe(true);
    expect(await b.read("s1")).toEqual({ kind: "ok", record: record("s1", 1), writer: { user: bob, ours: true } });
    expect(await c.read("s1")).toEqual({ kind: "ok", record: record("s1", 1), writer: { user: bob, ours: false } });
    expect(await c.write(record("s1", 2))).toBe(false);
    expect(await b.read("s1")).toEqual({ kind: "ok", record: record("s1", 1), writer: { user: bob, ours: true } });
    expect(await b.write(record("s1", 3))).toBe(true);
    expect(await c.read("s1")).toEqual({ kind: "ok", record: record("s1", 3), writer: { user: bob, ours: false } });
  });

  test("a superuser's record speaks for every role and only a superuser replaces it; a superuser may replace any", async () => {
    const [b, root] = [as(urlAs(db.url, bob, "pw")), as(db.url)];
    expect(await b.write(record("s2", 1))).toBe(true);
    expect(await root.read("s2")).toEqual({ kind: "ok", record: record("s2", 1), writer: { user: bob, ours: false } });
    expect(await root.write(record("s2", 2))).toBe(true);
    expect(await b.read("s2")).toEqual({ kind: "ok", record: record("s2", 2), writer: { user: su, ours: true } });
    expect(await b.write(record("s2", 3))).toBe(false);
    expect(await root.read("s2")).toEqual({ kind: "ok", record: record("s2", 2), writer: { user: su, ours: true } });
  });

  test("a client cannot name another writer; damage is judged by its writer; a record of another name is damage", async () => {
    await using sql = new SQL({ url: urlAs(db.url, bob, "pw"), database: db.name, max: 1 });
    await sql`insert into a2a.sessions (name, record, writer) values ('s3', 'not json', ${carol})`;
    await sql`insert into a2a.sessions (name, record) values ('s4', ${JSON.stringify(record("other"))})`;
    const c = as(urlAs(db.url, carol, "pw"));
    expect(await c.read("s3")).toEqual({ kind: "damaged", writer: { user: bob, ours: false } });
    expect(await c.read("s4")).toEqual({ kind: "damaged", writer: { user: bob, ours: false } });
    expect(await as(urlAs(db.url, bob, "pw")).read("s3")).toEqual({ kind: "damaged", writer: { user: bob, ours: true } });
  });
});
