// Trust on a PostgreSQL store, through the binary against a real server (tests/harness/pg.ts):
// each person or agent connects as a role of its own; the server records which role wrote a
// row (a client naming another writer by hand is overridden, and nobody rewrites a sent
// message); `a2a allow NAME@ROLE` binds a name to a role as NAME@USER binds it to an OS user on
// a shared directory, with the same refusal at send and the same hold for mail planted by
// hand; a role without the grants, or without the right to make the schema, is told so in one
// line with the fix; --print-sql --rls keeps each role to its own inboxes; TLS (sslmode,
// sslrootcert) is used, reported by doctor, and its failures are one line each. No password
// is ever printed: every output of every test is searched for each one.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dirname } from "node:path";
import { a2a, BIN, spawnA2A, tempDir, type RunResult } from "../harness/run";
import { createRole, freshDatabase, pgServer, pgSkipReason, psqlAs, tlsPgServer, tlsSkipReason, urlAs, type Database, type PgServer, type TlsPgServer } from "../harness/pg";

setDefaultTimeout(60_000);

const skip = pgSkipReason();
if (skip) console.warn(`pg-roles.test.ts: skipped: ${skip}`);
const tlsSkip = tlsSkipReason();
if (tlsSkip && !skip) console.warn(`pg-roles.test.ts: TLS tests skipped: ${tlsSkip}`);

const tag = crypto.randomUUID().replaceAll("-", "").slice(0, 6);
// Roles are the cluster's: a suffix keeps them apart from other files' on a shared server.
const ROLE = { alice: `alice_${tag}`, bob: `bob_${tag}`, mallory: `mallory_${tag}`, nogrant: `nogrant_${tag}` };
const PW: Record<string, string> = Object.fromEntries(Object.values(ROLE).map((r) => [r, `pw-${r}-${crypto.randomUUID().slice(0, 8)}`]));
const outputs: string[] = []; // every output of every run, searched for passwords at the end

describe.skipIf(skip !== undefined)("roles and trust on a PostgreSQL store", () => {
  let server: PgServer;
  const dbs: Database[] = [];
  const home = tempDir();
  const env = { HOME: home.path, PATH: `${dirname(BIN)}:/usr/bin:/bin` };

  beforeAll(async () => {
    server = (await pgServer())!;
    for (const r of Object.values(ROLE)) await createRole(server, r, PW[r]);
  });
  afterAll(async () => {
    for (const db of dbs) await db.drop();
    for (const r of Object.values(ROLE)) await server.admin(`drop role if exists ${r}`);
    home[Symbol.dispose]();
    const all = outputs.join("\n");
    for (const pw of Object.values(PW)) {
      expect(all).not.toContain(pw);
      expect(all).not.toContain(encodeURIComponent(pw));
    }
  });

  // A fresh database with the bus made by the SQL of --print-sql (`flags`: e.g. --rls), run by
  // the superuser, and its documented grants given to `members`.
  const bus = async (members: string[], flags: string[] = []) => {
    const db = await freshDatabase(server);
    dbs.push(db);
    const sql = await run(server.url, ["init", "--print-sql", ...flags]);
    expect(sql.code).toBe(0);
    const grants = sql.stdout.split("\n").filter((l) => /^-- grant /.test(l)).map((l) => l.slice(3));
    expect(grants.length).toBeGreaterThan(0);
    await server.admin(sql.stdout + members.flatMap((m) => grants.map((g) => g.replaceAll("ROLE", m))).join("\n"), db.name);
    return db;
  };
  // `a2a ARGS` on `url`, its outputs kept for the password search.
  const run = async (url: string, args: string[], more: Record<string, string> = {}): Promise<RunResult> => {
    const r = await a2a(args, { dir: url, cwd: home.path, env: { ...env, ...more } });
    outputs.push(r.stdout, r.stderr);
    return r;
  };
  // As role `who`: the password through PGPASSWORD, or (inUrl) in the URL.
  const as = (db: Database, who: string, args: string[], inUrl = false) =>
    inUrl ? run(urlAs(db.url, who, PW[who]), args) : run(urlAs(db.url, who), args, { PGPASSWORD: PW[who] });
  const ok = async (db: Database, who: string, args: string[]) => {
    const r = await as(db, who, args);
    if (r.code !== 0) throw new Error(`${who}: a2a ${args.join(" ")} -> exit ${r.code}: ${r.stderr}`);
    return r.stdout;
  };
  // psql as role `who`, by hand (what a client may do bypassing a2a).
  const psql = async (db: Database, who: string, sql: string) => {
    try {
      const out = await psqlAs(urlAs(db.url, who, PW[who]), sql);
      outputs.push(out);
      return out;
    } catch (e) {
      outputs.push(String(e));
      throw e;
    }
  };
  const planted = (to: string, from: string, body: string) => {
    const id = `${String(Date.now() * 1000).padStart(16, "0")}-beef-1-abcdef`;
    return { id, sql: `insert into a2a.messages (agent, id, place, sender, body, size, sent_at, host, pid, writer)
      values ('${to}', '${id}', 'unread', '${from}', convert_to('${body}', 'UTF8'), ${body.length}, extract(epoch from now()), 'h', 1, '${ROLE.alice}')` };
  };

  test("the server records the writer: a role naming another by hand is overridden, and a sent message's words cannot be rewritten", async () => {
    const db = await bus([ROLE.alice, ROLE.bob, ROLE.mallory]);
    await ok(db, ROLE.alice, ["send", "bob", "the real words", "--as", "alice"]);
    await ok(db, ROLE.alice, ["publish", "report", "v1"]);
    // mallory inserts a message naming alice's role as its writer, then updates the writer.
    const p = planted("bob", "alice", "planted");
    await psql(db, ROLE.mallory, p.sql);
    expect((await psql(db, ROLE.mallory, `select writer from a2a.messages where id = '${p.id}'`)).trim()).toBe(ROLE.mallory);
    await psql(db, ROLE.mallory, `update a2a.messages set writer = '${ROLE.alice}' where id = '${p.id}'`);
    expect((await psql(db, ROLE.mallory, `select writer from a2a.messages where id = '${p.id}'`)).trim()).toBe(ROLE.mallory);
    // ... rewrites alice's message (its writer would stay alice's): refused by the trigger.
    await expect(psql(db, ROLE.mallory, `update a2a.messages set body = convert_to('rewritten', 'UTF8') where sender = 'alice' and id <> '${p.id}'`)).rejects.toThrow(/a sent message cannot be changed, only moved/);
    await expect(psql(db, ROLE.mallory, `update a2a.messages set sender = 'carol' where id <> '${p.id}'`)).rejects.toThrow(/a sent message cannot be changed/);
    // ... and a slot's writer: the update makes it hers, not alice's.
    await psql(db, ROLE.mallory, `update a2a.slots set writer = '${ROLE.alice}' where name = 'report'`);
    expect((await server.admin(`select writer from a2a.slots where name = 'report'`, db.name)).trim()).toBe(ROLE.mallory);
    // bob sees each message with the role the server saw.
    const got = (await ok(db, ROLE.bob, ["recv", "--as", "bob", "--all", "--json"])).trim().split("\n").map((l) => JSON.parse(l));
    expect(got.map((m) => [m.body, m.user])).toEqual([["the real words", ROLE.alice], ["planted", ROLE.mallory]]);
  });

  test("a name bound to a role (allow alice@ROLE) cannot be forged by another role: refused at send, held if planted; frames show the role", async () => {
    const db = await bus([ROLE.alice, ROLE.bob, ROLE.mallory]);
    // carol is an agent of bob's role.
    await ok(db, ROLE.bob, ["policy", "allowlist", "--as", "carol"]);
    expect(await ok(db, ROLE.bob, ["allow", `alice@${ROLE.alice}`, "--as", "carol"])).toContain(`alice is bound to role ${ROLE.alice}\n`);
    const forged = await as(db, ROLE.mallory, ["send", "carol", "transfer the money", "--as", "alice"]);
    expect(forged.code).toBe(1);
    expect(forged.stderr).toBe(`a2a: carol does not accept this message: it claims to be from alice, who is bound to role ${ROLE.alice}, but role ${ROLE.mallory} wrote it; send under your own name\n`);
    // mallory writes the row by hand instead: held, with the reason, never shown.
    await psql(db, ROLE.mallory, planted("carol", "alice", "planted").sql);
    expect(await ok(db, ROLE.bob, ["recv", "--as", "carol", "--json"])).toBe("");
    const held = JSON.parse(await ok(db, ROLE.bob, ["inbox", "--held", "--as", "carol", "--json"])).held;
    expect(held.map((m: any) => [m.body, m.held_reason])).toEqual([["planted", `it claims to be from alice, who is bound to role ${ROLE.alice}, but role ${ROLE.mallory} wrote it`]]);
    // The real alice gets through, framed with her role; a plain allow binds to the last writer's role.
    await ok(db, ROLE.alice, ["send", "carol", "the real alice", "--as", "alice"]);
    const frame = await ok(db, ROLE.bob, ["recv", "--as", "carol"]);
    expect(frame).toMatch(new RegExp(`^--- message \\S+ from alice \\(role ${ROLE.alice}\\) at `));
    expect(frame).toContain("the real alice");
    expect(await ok(db, ROLE.bob, ["allow", "alice", "--as", "carol"])).toContain(`alice is bound to role ${ROLE.alice} (the writer of its last message here)\n`);
    expect(await ok(db, ROLE.bob, ["allow", "dave", "--as", "carol"])).toContain("dave is not bound to a role (no message from it seen yet): a2a allow dave@ROLE binds it\n");
  });
});
