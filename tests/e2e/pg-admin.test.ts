// `a2a init` and `a2a doctor` on a PostgreSQL store, through the binary against a real server
// (tests/harness/pg.ts): init makes the schema on purpose and says so; --print-sql prints what a
// database's administrator runs instead, touching nothing, and that SQL makes a bus a member's
// role then uses as it is; doctor checks the server and the role, finds what is wrong (an
// unreachable server, a role without grants, a schema newer than the binary) and never prints
// a password.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dirname } from "node:path";
import { SCHEMA_VERSION } from "../../lib/pg/schema";
import { a2a, BIN, tempDir, type RunResult } from "../harness/run";
import { connect } from "../harness/mcp";
import { createRole, freshDatabase, pgServer, pgSkipReason, urlAs, type Database, type PgServer } from "../harness/pg";

setDefaultTimeout(60_000);

const skip = pgSkipReason();
if (skip) console.warn(`pg-admin.test.ts: skipped: ${skip}`);

const PASSWORD = "Pw-9f3e-kept-secret";
const tag = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10);

describe.skipIf(skip !== undefined)("a2a init and a2a doctor on PostgreSQL", () => {
  let server: PgServer;
  const dbs: Database[] = [];
  const roles: string[] = [];
  const home = tempDir(); // disposed in afterAll: the tests run after this block returns
  // Doctor's checks outside the store pass: this binary first on PATH, no Claude Code, a HOME of our own.
  const env = { HOME: home.path, PATH: `${dirname(BIN)}:/usr/bin:/bin` };
  const fresh = async () => {
    const db = await freshDatabase(server);
    dbs.push(db);
    return db;
  };
  // A login role that must give PASSWORD, made for this test.
  const role = async () => {
    const name = `a2a_member_${tag()}`;
    await createRole(server, name, PASSWORD);
    roles.push(name);
    return name;
  };
  const run = (args: string[], url: string, more: Record<string, string> = {}) => a2a(args, { dir: url, cwd: home.path, env: { ...env, ...more } });
  const line = (r: RunResult, check: string) => r.stdout.split("\n").find((l) => new RegExp(`^(ok|note|PROBLEM) +${check}  `).test(l));
  const metaVersion = async (db: Database, schema = "a2a") => (await server.admin(`select value from ${schema}.meta where key = 'version'`, db.name)).trim();
  const objects = async (db: Database, schema: string) =>
    server.admin(
      `select 'relation ' || c.relname || ' ' || c.relkind::text from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = '${schema}'
       union all select 'function ' || p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = '${schema}'
       union all select 'trigger ' || t.tgname || ' on ' || c.relname from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace where n.nspname = '${schema}' and not t.tgisinternal
       order by 1`,
      db.name,
    );
  // The grants of --print-sql's commented block, for `name`.
  const grantsFor = (sql: string, name: string) =>
    sql.split("\n").filter((l) => /^-- grant /.test(l)).map((l) => l.slice(3).replaceAll("ROLE", name)).join("\n");

  beforeAll(async () => {
    server = (await pgServer())!;
  });
  afterAll(async () => {
    for (const db of dbs) await db.drop();
    for (const r of roles) await server.admin(`drop role if exists ${r}`);
    home[Symbol.dispose]();
  });

  test("init makes the schema at this a2a's version, then says it is already there; --json says the same", async () => {
    const db = await fresh();
    const first = await run(["init"], db.url);
    expect(first).toMatchObject({ code: 0, stderr: "" });
    expect(first.stdout).toBe(`made the bus in schema a2a of ${db.url} at version ${SCHEMA_VERSION}\n`);
    expect(await metaVersion(db)).toBe(String(SCHEMA_VERSION));
    const again = await run(["init"], db.url);
    expect(again).toMatchObject({ code: 0, stderr: "", stdout: `the bus in schema a2a of ${db.url} is already at version ${SCHEMA_VERSION}; nothing changed\n` });
    const j = await run(["init", "--json"], `${db.url}?schema=team`);
    expect(j.code).toBe(0);
    expect(JSON.parse(j.stdout)).toEqual({ root: `${db.url}?schema=team`, schema: "team", found: 0, version: SCHEMA_VERSION, created: true });
    expect(await metaVersion(db, "team")).toBe(String(SCHEMA_VERSION));
  });

  test("a bus made at version 1 is brought to this a2a's version by its first waiter: a slot's change then wakes the slot's own channel too", async () => {
    const db = await fresh();
    expect((await run(["init"], db.url)).code).toBe(0);
    // Version 1 as an a2a of before the channel per slot made it: its trigger function, its version row.
    await server.admin(
      `create or replace function a2a.wake_slot() returns trigger language plpgsql as $$
       begin perform pg_notify(a2a.channel('slots'), case when tg_op = 'DELETE' then old.name else new.name end); return null; end $$;
       update a2a.meta set value = '1' where key = 'version'`,
      db.name,
    );
    const wakes = async () => (await server.admin(`select prosrc from pg_proc where proname = 'wake_slot' and pronamespace = 'a2a'::regnamespace`, db.name)).includes("'slot:'");
    expect(await wakes()).toBe(false);
    // A change assumes the schema current (it migrates only what it finds missing): still 1.
    expect(await run(["publish", "warm", "x"], db.url)).toMatchObject({ code: 0, stderr: "" });
    expect(await metaVersion(db)).toBe("1");
    // A waiter, about to listen on its slot's own channel, brings the bus up to date first.
    const waiting = run(["wait", "job", "--timeout", "60"], db.url);
    for (const end = Date.now() + 30_000; (await metaVersion(db)) !== String(SCHEMA_VERSION); await Bun.sleep(20)) {
      if (Date.now() > end) throw new Error("the waiter did not migrate the bus within 30 s");
    }
    expect(await wakes()).toBe(true);
    expect(await run(["publish", "job", "done"], db.url)).toMatchObject({ code: 0, stderr: "" });
    expect(await waiting).toMatchObject({ code: 0, stdout: "done" });
  });

  test("a schema that holds another application's tables is refused in one line, exit 2, by a write, a read and init; nothing of a2a is made there", async () => {
    const db = await fresh();
    await server.admin(`create table public.users (id int primary key); create table public.meta (k text)`, db.name);
    const before = await objects(db, "public");
    const url = `${db.url}?schema=public`;
    for (const args of [["publish", "x", "1"], ["status"], ["init"], ["send", "bob", "hi", "--as", "alice"]]) {
      const r = await run(args, url);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(r.stderr).toBe("a2a: schema public holds tables that are not a2a's (meta, users): give the bus a schema of its own with ?schema=NAME in the URL (default a2a)\n");
    }
    expect(await objects(db, "public")).toBe(before);
    expect((await run(["publish", "x", "1"], `${db.url}?schema=bus`)).code).toBe(0); // a schema of its own, in the same database
  });

  test("init --shared on PostgreSQL is refused in one line, exit 2, and nothing is made", async () => {
    const db = await fresh();
    const r = await run(["init", "--shared", "agents"], db.url);
    expect(r).toMatchObject({ code: 2, stdout: "" });
    expect(r.stderr).toMatch(/^a2a: --shared is for a directory store: [^\n]*a2a init --print-sql[^\n]*\n$/);
    expect((await server.admin(`select count(*) from pg_namespace where nspname = 'a2a'`, db.name)).trim()).toBe("0");
  });

  test("init --print-sql connects to nothing: it prints for a server that is not there, without the password", async () => {
    const r = await run(["init", "--print-sql"], `postgres://alice:${PASSWORD}@127.0.0.1:1/bus?schema=team`);
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).not.toContain(PASSWORD);
    expect(r.stdout).toContain("\ncreate schema if not exists team;\n");
    expect(r.stdout).toContain(`\ninsert into team.meta (key, value) values ('version', '${SCHEMA_VERSION}');\ncommit;\n`);
    expect(r.stdout).not.toMatch(/\$S|\ba2a\.(?!sql\b)\w/); // the schema is filled in everywhere
    expect(grantsFor(r.stdout, "ROLE")).toBe(
      ["grant usage on schema team to ROLE;", "grant select, insert, update, delete on all tables in schema team to ROLE;", "grant usage on all sequences in schema team to ROLE;", "grant execute on all functions in schema team to ROLE;"].join("\n"),
    );
    // On a directory store there is no SQL to print.
    using d = tempDir();
    const dir = await run(["init", "--print-sql"], d.path);
    expect(dir).toMatchObject({ code: 2, stdout: "" });
    expect(dir.stderr).toMatch(/^a2a: --print-sql prints the SQL of a PostgreSQL store: [^\n]*\n$/);
  });

  test("the SQL of --print-sql, run by psql, makes the bus init makes; a member role with its grants uses it without migrating", async () => {
    const byInit = await fresh();
    expect((await run(["init"], byInit.url)).code).toBe(0);
    const db = await fresh();
    const sql = await run(["init", "--print-sql"], db.url);
    expect(sql.code).toBe(0);
    await server.admin(sql.stdout, db.name);
    expect(await objects(db, "a2a")).toBe(await objects(byInit, "a2a"));
    expect(await metaVersion(db)).toBe(String(SCHEMA_VERSION));

    // A member may not create anything in the database: a migration would fail, so what works
    // below works on the schema as the SQL left it.
    const member = await role();
    await server.admin(grantsFor(sql.stdout, member), db.name);
    const url = urlAs(db.url, member);
    const pub = await run(["publish", "greeting", "hello from a member"], url, { PGPASSWORD: PASSWORD });
    expect(pub).toMatchObject({ code: 0, stderr: "" });
    const status = await run(["status", "--json"], url, { PGPASSWORD: PASSWORD });
    expect(status.code).toBe(0);
    expect(JSON.stringify(JSON.parse(status.stdout))).toContain('"greeting"');
    expect(await run(["wait", "greeting", "--timeout", "30"], url, { PGPASSWORD: PASSWORD })).toMatchObject({ code: 0, stdout: "hello from a member" });
    expect((await server.admin(`select writer from a2a.slots where name = 'greeting'`, db.name)).trim()).toBe(member);
    expect(await metaVersion(db)).toBe(String(SCHEMA_VERSION));

    // And doctor, as the member, finds the role may use every table.
    const d = await run(["doctor"], url, { PGPASSWORD: PASSWORD });
    expect(line(d, "role")).toMatch(new RegExp(`^ok +role +role ${member} \\(not a superuser\\) may use schema a2a: usage, and select, insert, update and delete on its \\d+ tables$`));
    expect(d.code).toBe(0);
  });

  test("doctor on a healthy store: a line per server check, exit 0, and the password nowhere (PGPASSWORD or in the URL)", async () => {
    const db = await fresh();
    const member = await role();
    const sql = await run(["init", "--print-sql"], db.url);
    await server.admin(sql.stdout + grantsFor(sql.stdout, member), db.name);
    for (const [url, more] of [
      [urlAs(db.url, member), { PGPASSWORD: PASSWORD }],
      [urlAs(db.url, member, PASSWORD), {}],
    ] as const) {
      const r = await run(["doctor"], url, more);
      const j = await run(["doctor", "--json"], url, more);
      for (const out of [r, j]) {
        expect(out.stdout + out.stderr).not.toContain(PASSWORD);
        expect(out.stdout + out.stderr).not.toContain(encodeURIComponent(PASSWORD));
      }
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const shown = urlAs(db.url, member);
      expect(line(r, "store")).toBe(`ok      store         ${shown} (from A2A_DIR): PostgreSQL`);
      expect(line(r, "server")).toMatch(/^ok +server +PostgreSQL \d+(\.\d+)? .*at 127\.0\.0\.1:\d+\/a2a_t_\w+$/);
      expect(line(r, "round trip")).toMatch(/^ok +round trip +median [\d.]+ ms of 5 queries \([\d.]+ ms to [\d.]+ ms\)$/);
      expect(line(r, "connections")).toMatch(/^ok +connections +\d+ of \d+ in use \(\d+ kept for superusers\), \d+ free to this role: each live a2a mcp session holds two, each command one while it runs$/);
      expect(line(r, "notify")).toMatch(/^ok +notify +a NOTIFY reached a LISTEN on another connection in [\d.]+ ms: waiters wake by it/);
      expect(line(r, "encryption")).toMatch(/^ok +encryption +off \(no sslmode in the URL\): the server is on this machine$/);
      expect(line(r, "clock skew")).toMatch(/^ok +clock skew +-?\d+\.\d\d s between this host and the server's now\(\)$/);
      expect(line(r, "schema")).toBe(`ok      schema        the bus in schema a2a is at version ${SCHEMA_VERSION}, as this a2a`);
      expect(line(r, "role")).toMatch(new RegExp(`^ok +role +role ${member} \\(not a superuser\\) may use schema a2a`));
      expect(line(r, "session name")).toMatch(/^ok +session name /);
      // The file engine's checks have no meaning here.
      for (const check of ["wake mode", "inotify", "owners", "handoff in-process", "handoff via a process"]) expect(line(r, check)).toBeUndefined();
      expect(r.stdout).toMatch(/all good: a2a will work here\n$/);
      const checks = JSON.parse(j.stdout).checks as { check: string; level: string }[];
      expect(j.code).toBe(0);
      expect(checks.filter((c) => c.level === "problem")).toEqual([]);
    }
    // Doctor wrote nothing: no slot, no presence.
    expect((await server.admin(`select (select count(*) from a2a.slots) + (select count(*) from a2a.peers)`, db.name)).trim()).toBe("0");
  });

  test("a role at its connection limit: a new command says the server is full for it, with the fix, exit 1, nothing written; a session already connected keeps working", async () => {
    const db = await fresh();
    const member = await role();
    const sql = await run(["init", "--print-sql"], db.url);
    await server.admin(sql.stdout + grantsFor(sql.stdout, member), db.name);
    const url = urlAs(db.url, member);
    const s = await connect(url, { PGPASSWORD: PASSWORD, HOME: home.path }, { cwd: home.path });
    try {
      await s.json("agent_publish", { name: "before", result: "made while there was room" });
      await server.admin(`alter role ${member} connection limit 0`);
      const count = () => server.admin(`select count(*) from a2a.slots`, db.name);
      const slots = await count();
      const r = await run(["publish", "after", "x"], url, { PGPASSWORD: PASSWORD });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`^a2a: PostgreSQL at 127\\.0\\.0\\.1:\\d+/a2a_t_\\w+ is full for role ${member} while [^\n]*: every live a2a mcp session holds two connections \\(its statements and its LISTEN\\) and every command one while it runs; raise the role's limit \\(ALTER ROLE ${member} CONNECTION LIMIT n\\) or end sessions of it; a pooler can carry commands in transaction mode, never a session's waits \\(LISTEN needs session mode\\); a2a doctor shows connections used and free\n$`));
      expect(r.stderr + r.stdout).not.toContain(PASSWORD);
      expect(await count()).toBe(slots);
      // The session holds its connections: it goes on.
      expect((await s.json("agent_publish", { name: "during", result: "still here" })).ok).toBe(true);
      expect((await s.json("agent_wait", { name: "before", timeout: 5 })).result).toBe("made while there was room");
    } finally {
      await s.close();
      await server.admin(`alter role ${member} connection limit -1`);
    }
  });

  test("doctor before the schema exists says so, creates nothing, and a role that may not create it is told how", async () => {
    const db = await fresh();
    const r = await run(["doctor"], db.url);
    expect(line(r, "schema")).toBe("note    schema        schema a2a is not created yet; the first use creates it, or a2a init");
    expect(r.code).toBe(0);
    expect((await server.admin(`select count(*) from pg_namespace where nspname = 'a2a'`, db.name)).trim()).toBe("0");
    const member = await role();
    const i = await run(["init"], urlAs(db.url, member), { PGPASSWORD: PASSWORD });
    expect(i).toMatchObject({ code: 1, stdout: "" });
    expect(i.stderr).toMatch(new RegExp(`^a2a: the bus's schema a2a is not made yet at 127\\.0\\.0\\.1:\\d+/${db.name}, and role ${member} may not create it \\([^)]*\\): run a2a init as the database's owner \\(or a role with CREATE on it\\), or have its administrator run the SQL that a2a init --print-sql prints\\n$`));
    const m = await run(["doctor"], urlAs(db.url, member), { PGPASSWORD: PASSWORD });
    expect(m.code).toBe(1);
    expect(m.stdout).toMatch(new RegExp(`^PROBLEM role +role ${member} \\(not a superuser\\) may not create schema a2a, so the first use cannot make the bus\\n +fix: ask the database's administrator to run the SQL a2a init --print-sql prints`, "m"));
  });

  test("doctor as a role without grants names what it lacks and the fix, exit 1", async () => {
    const db = await fresh();
    expect((await run(["init"], db.url)).code).toBe(0);
    const member = await role();
    const r = await run(["doctor"], urlAs(db.url, member), { PGPASSWORD: PASSWORD });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`^PROBLEM role +role ${member} \\(not a superuser\\) lacks usage on schema a2a, usage on a2a\\.arrivals, delete on a2a\\.\\w+, .* and \\d+ more: a2a fails where it needs them\\n +fix: give this role the grants in the commented block at the end of a2a init --print-sql`, "m"));
    expect(r.stderr).toMatch(/^a2a: \d+ problems? found: /);
  });

  test("doctor against a server that is not there: one problem line naming it, exit 1, no password", async () => {
    const url = `postgres://alice:${PASSWORD}@127.0.0.1:1/bus`;
    for (const [how, given] of [["URL", {}], ["PGPASSWORD", { PGPASSWORD: PASSWORD }]] as const) {
      const r = await run(["doctor"], how === "URL" ? url : "postgres://alice@127.0.0.1:1/bus", given);
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).not.toContain(PASSWORD);
      expect(line(r, "server")).toMatch(/^PROBLEM server +cannot reach PostgreSQL at 127\.0\.0\.1:1\/bus while connecting \([^)\n]*\): check that the server runs and that --dir or A2A_DIR names it$/);
      expect(r.stdout).toMatch(/^PROBLEM server .*\n +fix: /m);
      expect(line(r, "round trip")).toBeUndefined();
      expect(r.stderr).toBe("a2a: 1 problem found: fix it as shown, then run a2a doctor again\n");
    }
  });

  test("doctor on a schema newer than this a2a says so, with the fix", async () => {
    const db = await fresh();
    expect((await run(["init"], db.url)).code).toBe(0);
    await server.admin(`update a2a.meta set value = '999' where key = 'version'`, db.name);
    const r = await run(["doctor"], db.url);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`PROBLEM schema        the bus in schema a2a is at version 999, newer than this a2a knows (${SCHEMA_VERSION}): this a2a refuses to use it\n`);
    expect(r.stdout).toMatch(/^PROBLEM schema .*\n +fix: upgrade a2a on this machine/m);
    expect(line(r, "session name")).toMatch(/^note +session name +not looked up/);
    // And init says the same, changing nothing.
    const i = await run(["init"], db.url);
    expect(i.code).toBe(2);
    expect(i.stderr).toMatch(/^a2a: the bus in schema a2a is at version 999, newer than this a2a knows \(\d+\): upgrade a2a on this machine\n$/);
    expect(await metaVersion(db)).toBe("999");
  });
});
