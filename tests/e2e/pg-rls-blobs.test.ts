// A hostile member of a PostgreSQL store against attachments, sent messages and send keys
// (issue 32), through the binary and by hand (psql, a LISTEN of its own), on a bus made by
// `init --print-sql` with and without --rls: a blob any record names outlives every member's gc
// and every hand-made delete; under RLS a blob's bytes reach only the roles that may read a
// record naming it (or that put it), a send key only its sender, and an inbox's notifications
// carry no message ids; no role rewrites a sent message's attachments.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SQL } from "bun";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";
import { a2a, BIN, tempDir, type RunResult } from "../harness/run";
import { connect } from "../harness/mcp";
import { createRole, freshDatabase, pgServer, pgSkipReason, psqlAs, untilServer, urlAs, type Database, type PgServer } from "../harness/pg";

setDefaultTimeout(90_000);

// gc runs with its clock shifted (faketime), as tests/e2e/locks.test.ts does.
const skip = pgSkipReason() ?? (Bun.which("faketime") ? undefined : "faketime is not installed (apt-get install -y faketime)");
if (skip) console.warn(`pg-rls-blobs.test.ts: skipped: ${skip}`);

const tag = crypto.randomUUID().replaceAll("-", "").slice(0, 6);
const ROLE = { alice: `alice_${tag}`, bob: `bob_${tag}`, mallory: `mallory_${tag}` };
const PW: Record<string, string> = Object.fromEntries(Object.values(ROLE).map((r) => [r, `pw-${r}-${crypto.randomUUID().slice(0, 8)}`]));
const SECRET = `TOP SECRET ${crypto.randomUUID()}\n`;

describe.skipIf(skip !== undefined)("a hostile role against blobs, sent messages and keys on PostgreSQL", () => {
  let server: PgServer;
  const dbs: Database[] = [];
  const home = tempDir();
  const env = { HOME: home.path, PATH: `${dirname(BIN)}:/usr/bin:/bin` };
  const file = join(home.path, "secret.txt");
  writeFileSync(file, SECRET);

  beforeAll(async () => {
    server = (await pgServer())!;
    for (const r of Object.values(ROLE)) await createRole(server, r, PW[r]);
  });
  afterAll(async () => {
    for (const db of dbs) await db.drop();
    for (const r of Object.values(ROLE)) await server.admin(`drop role if exists ${r}`);
    home[Symbol.dispose]();
  });

  // A fresh database with the bus made by --print-sql's SQL (`flags`), its grants given to every role.
  const bus = async (flags: string[] = []) => {
    const db = await freshDatabase(server);
    dbs.push(db);
    const sql = await a2a(["init", "--print-sql", ...flags], { dir: server.url, cwd: home.path, env });
    expect(sql.code).toBe(0);
    const grants = sql.stdout.split("\n").filter((l) => /^-- grant /.test(l)).map((l) => l.slice(3));
    await server.admin(sql.stdout + Object.values(ROLE).flatMap((m) => grants.map((g) => g.replaceAll("ROLE", m))).join("\n"), db.name);
    return db;
  };
  const as = (db: Database, who: string, args: string[]): Promise<RunResult> =>
    a2a(args, { dir: urlAs(db.url, who), cwd: home.path, env: { ...env, PGPASSWORD: PW[who] } });
  const ok = async (db: Database, who: string, args: string[]) => {
    const r = await as(db, who, args);
    if (r.code !== 0) throw new Error(`${who}: a2a ${args.join(" ")} -> exit ${r.code}: ${r.stderr}`);
    return r.stdout;
  };
  // `a2a gc` as role `who`, every blob looking two hours old (its clock shifted by faketime):
  // whatever is unnamed goes, under any floor on --blob-grace.
  const gc = async (db: Database, who: string) => {
    const r = await a2a(["gc", "--blob-grace", "10m"], { dir: urlAs(db.url, who), cwd: home.path, env: { ...env, PGPASSWORD: PW[who] }, prefix: ["faketime", "-f", "+2h"] });
    if (r.code !== 0) throw new Error(`${who}: a2a gc -> exit ${r.code}: ${r.stderr}`);
    return r.stdout;
  };
  const psql = (db: Database, who: string, sql: string) => psqlAs(urlAs(db.url, who, PW[who]), sql);
  const admin = async (db: Database, sql: string) => (await server.admin(sql, db.name)).trim();
  // alice sends bob the secret file; bob's digest of it.
  const sendSecret = async (db: Database) => {
    await ok(db, ROLE.bob, ["recv", "--as", "bob"]); // bob owns his inbox
    await ok(db, ROLE.alice, ["send", "bob", "the file", "--attach", file, "--as", "alice"]);
    const [m] = JSON.parse(await ok(db, ROLE.bob, ["inbox", "--as", "bob", "--json"])).unread;
    return m.attachments[0].digest as string;
  };
  const bobGets = async (db: Database, digest: string) => expect(await ok(db, ROLE.bob, ["get", digest])).toBe(SECRET);
  const blobCount = (db: Database) => admin(db, `select (select count(*) from a2a.blobs) || ' ' || (select count(*) from a2a.blob_parts)`);

  test("without RLS: no member's gc or hand-made delete removes a blob a record names; no role swaps a sent message's attachments; a send key is its sender's", async () => {
    const db = await bus();
    const digest = await sendSecret(db);
    await ok(db, ROLE.alice, ["put", file]); // the same bytes again: one copy, still alice's
    expect(await gc(db, ROLE.mallory)).toContain(" 0 blob(s) nothing names");
    // A slot's result and a finished task name blobs too (each its own bytes).
    const named = ["slot", "task"].map((k) => {
      const path = join(home.path, `${k}.txt`);
      writeFileSync(path, `${k} ${SECRET}`);
      return path;
    });
    await ok(db, ROLE.alice, ["publish", "report", "done", "--attach", named[0]]);
    await ok(db, ROLE.alice, ["task", "add", "q", "work"]);
    const claim = JSON.parse(await ok(db, ROLE.alice, ["task", "claim", "q", "--json"]));
    await ok(db, ROLE.alice, ["task", "done", claim.id, claim.token, "ok", "--attach", named[1]]);
    await psql(db, ROLE.mallory, `delete from a2a.blobs; delete from a2a.blob_parts`);
    expect(await blobCount(db)).toBe("3 3");
    // Nor are a stored blob's bytes changed, added to, or its row pointed elsewhere.
    for (const sql of [
      `update a2a.blob_parts set data = convert_to('evil', 'UTF8')`,
      `insert into a2a.blob_parts (upload, n, data) select upload, 1, convert_to('more', 'UTF8') from a2a.blobs`,
      `update a2a.blobs set size = 1`,
      `update a2a.blobs set upload = 'elsewhere'`,
    ]) await expect(psql(db, ROLE.mallory, sql)).rejects.toThrow("a stored blob cannot be changed");
    await bobGets(db, digest);
    // A row planted under the digest of a file alice is about to attach (named, even): the server
    // hashes her bytes, finds the stored ones are not the digest's, and hers take their place.
    const target = join(home.path, "target.txt");
    writeFileSync(target, `target ${SECRET}`);
    const hex = new Bun.CryptoHasher("sha256").update(`target ${SECRET}`).digest("hex");
    await psql(db, ROLE.mallory, `insert into a2a.blob_parts (upload, n, data) values ('planted', 0, convert_to('evil', 'UTF8'));
      insert into a2a.blobs (hex, upload, size) values ('${hex}', 'planted', 4)`);
    await ok(db, ROLE.mallory, ["publish", "bait", `sha256:${hex}`]);
    await ok(db, ROLE.alice, ["send", "bob", "see attached", "--attach", target, "--as", "alice"]);
    const [lured] = JSON.parse(await ok(db, ROLE.bob, ["inbox", "--as", "bob", "--json"])).unread.filter((m: { attachments?: unknown[] }) => m.attachments?.length).slice(-1);
    expect(lured.attachments[0].digest).toBe(`sha256:${hex}`);
    expect(await ok(db, ROLE.bob, ["get", `sha256:${hex}`])).toBe(`target ${SECRET}`);
    // An upload in flight (parts written, no row yet) is its writer's alone: another role can
    // neither remove, rewrite nor add to its parts.
    await psql(db, ROLE.alice, `insert into a2a.blob_parts (upload, n, data) values ('inflight', 0, convert_to('part 0', 'UTF8'))`);
    expect((await psql(db, ROLE.mallory, `with x as (delete from a2a.blob_parts returning upload) select count(*) from x where upload = 'inflight'`)).trim()).toBe("0");
    for (const sql of [`update a2a.blob_parts set data = convert_to('evil', 'UTF8') where upload = 'inflight'`, `insert into a2a.blob_parts (upload, n, data) values ('inflight', 1, convert_to('evil', 'UTF8'))`,
      `insert into a2a.blob_parts (upload, n, data, writer) values ('forged', 0, convert_to('evil', 'UTF8'), '${ROLE.alice}')`]) {
      await expect(psql(db, ROLE.mallory, sql)).rejects.toThrow("an upload in progress is its writer's alone");
    }
    expect(await admin(db, `select string_agg(convert_from(data, 'UTF8'), ',') from a2a.blob_parts where upload = 'inflight'`)).toBe("part 0");
    await psql(db, ROLE.alice, `delete from a2a.blob_parts where upload = 'inflight'`);
    // A blob put but not yet named is spared, by any role's delete and gc, for gc's floor; its
    // time does not move back.
    const fresh = join(home.path, "fresh.txt");
    writeFileSync(fresh, `fresh ${SECRET}`);
    const freshDigest = (await ok(db, ROLE.alice, ["put", fresh])).trim();
    await expect(psql(db, ROLE.mallory, `update a2a.blobs set stored_at = now() - interval '2 hours'`)).rejects.toThrow("a stored blob cannot be changed");
    expect((await psql(db, ROLE.mallory, `with x as (delete from a2a.blobs returning 1) select count(*) from x`)).trim()).toBe("0");
    expect(await gc(db, ROLE.mallory)).toContain(" 0 blob(s) nothing names");
    expect(await ok(db, ROLE.alice, ["get", freshDigest])).toBe(`fresh ${SECRET}`);
    // The attachments of alice's message, like its words, are hers for good.
    for (const set of [`attachments = '[]'::jsonb`, `attachments = null`, `attachments = jsonb_set(attachments, '{0,name}', '"other.txt"')`]) {
      await expect(psql(db, ROLE.mallory, `update a2a.messages set ${set} where agent = 'bob'`)).rejects.toThrow(/a sent message cannot be changed, only moved/);
      await expect(psql(db, ROLE.bob, `update a2a.messages set ${set} where agent = 'bob'`)).rejects.toThrow(/a sent message cannot be changed, only moved/);
    }
    // Every column but those a move sets: the trigger names them, so one added later must be named too.
    const moved = ["place", "claim_host", "claim_pid", "claim_ms", "arrived", "writer", "changed_at"];
    const changed: Record<string, (c: string) => string> = {
      text: (c) => `coalesce(${c}, '') || 'x'`, integer: (c) => `coalesce(${c}, 0) + 1`, bigint: (c) => `coalesce(${c}, 0) + 1`,
      "double precision": (c) => `coalesce(${c}, 0) + 1`, bytea: (c) => `coalesce(${c}, '') || '\\x00'::bytea`, jsonb: () => `'[{"digest": "x"}]'::jsonb`,
    };
    const columns = (await admin(db, `select column_name || ':' || data_type from information_schema.columns where table_schema = 'a2a' and table_name = 'messages'`)).split("\n").map((l) => l.split(":"));
    expect(columns.length).toBeGreaterThan(moved.length + 10);
    for (const [column, type] of columns.filter(([c]) => !moved.includes(c))) {
      expect(changed[type]).toBeDefined();
      await expect(psql(db, ROLE.bob, `update a2a.messages set ${column} = ${changed[type](column)} where agent = 'bob'`)).rejects.toThrow(/a sent message cannot be changed, only moved/);
    }
    expect(JSON.parse(await ok(db, ROLE.bob, ["recv", "--as", "bob", "--json"])).attachments[0]).toMatchObject({ digest, name: "secret.txt" });
    // A keyed send's key row cannot be removed or rewritten by another role: a retry stays one delivery.
    await ok(db, ROLE.alice, ["send", "bob", "once", "--key", "k1", "--as", "alice"]);
    for (const sql of [`delete from a2a.mail_keys`, `update a2a.mail_keys set id = 'x'`]) {
      await expect(psql(db, ROLE.mallory, sql)).rejects.toThrow(`the key of mail to bob belongs to role ${ROLE.alice}, not to ${ROLE.mallory}`);
    }
    await ok(db, ROLE.alice, ["send", "bob", "once", "--key", "k1", "--as", "alice"]);
    expect(await admin(db, `select count(*) from a2a.messages where agent = 'bob' and body = convert_to('once', 'UTF8')`)).toBe("1");
  });

  test("with --rls: another role's gc, export and hand-made reads and deletes reach no blob of mail it cannot read; keys and notifications carry nothing of others' mail", async () => {
    const db = await bus(["--rls"]);
    await ok(db, ROLE.mallory, ["recv", "--as", "mallory"]);
    const digest = await sendSecret(db);
    // gc, whatever the blobs' age, removes nothing a record names (mallory cannot see bob's mail).
    expect(await gc(db, ROLE.mallory)).toContain(" 0 blob(s) nothing names");
    await bobGets(db, digest);
    // By hand: nothing to read, nothing removed.
    expect((await psql(db, ROLE.mallory, `select count(*) from a2a.blobs`)).trim()).toBe("0");
    expect((await psql(db, ROLE.mallory, `select count(*) from a2a.blob_parts`)).trim()).toBe("0");
    await psql(db, ROLE.alice, `insert into a2a.blob_parts (upload, n, data) values ('inflight', 0, convert_to('part 0', 'UTF8'))`);
    const loose = join(home.path, "loose.txt");
    writeFileSync(loose, `loose ${SECRET}`);
    await ok(db, ROLE.alice, ["put", loose]); // stored, not named yet
    await psql(db, ROLE.mallory, `delete from a2a.blob_parts; delete from a2a.blobs`);
    expect(await blobCount(db)).toBe("2 3");
    await psql(db, ROLE.alice, `delete from a2a.blob_parts where upload = 'inflight'`);
    await admin(db, `delete from a2a.blobs where hex = '${new Bun.CryptoHasher("sha256").update(`loose ${SECRET}`).digest("hex")}'`);
    expect(await blobCount(db)).toBe("1 2"); // its parts left for gc's sweep
    await admin(db, `delete from a2a.blob_parts where upload not in (select upload from a2a.blobs)`);
    expect(await blobCount(db)).toBe("1 1");
    // Nor by claiming to have stored it: a digest is a word, not the bytes.
    const hex = digest.slice("sha256:".length);
    await expect(psql(db, ROLE.mallory, `insert into a2a.blob_puts (hex, writer) values ('${hex}', current_user)`)).rejects.toThrow(/row-level security/);
    await psql(db, ROLE.mallory, `insert into a2a.blob_parts (upload, n, data) values ('fake', 0, 'x')`);
    for (const [upload, size] of [["fake", 1], ["fake", SECRET.length], ["none", 0]]) {
      const told = String(await psql(db, ROLE.mallory, `select a2a.blob_touch('${hex}', '${upload}', ${size})`).catch((e: unknown) => e));
      expect(told).toContain("the store holds other bytes under this digest");
      expect(told).not.toContain(ROLE.alice); // who stored a digest is not hers to learn
    }
    expect(await as(db, ROLE.mallory, ["get", digest])).toMatchObject({ code: 3, stdout: "" });
    // Her export carries no bytes of it; bob's (he reads the message) does, as does alice's (she wrote it).
    const base64 = Buffer.from(SECRET).toString("base64");
    expect(await ok(db, ROLE.mallory, ["export"])).not.toContain(base64);
    expect(await ok(db, ROLE.bob, ["export"])).toContain(base64);
    expect(await ok(db, ROLE.alice, ["export"])).toContain(base64);
    // mallory puts the same bytes herself: stored once, hers to read back; still alice's and bob's.
    expect((await ok(db, ROLE.mallory, ["put", file])).trim()).toBe(digest);
    expect(await ok(db, ROLE.mallory, ["get", digest])).toBe(SECRET);
    expect(await blobCount(db)).toBe("1 2"); // the one copy, and mallory's "fake" upload
    await psql(db, ROLE.mallory, `delete from a2a.blob_parts where upload = 'fake'`);
    await bobGets(db, digest);
    // A role that sees a blob (bob, through alice's message) moves its time (a record is about
    // to name it: gc's grace counts from there), and nothing else of it.
    expect((await psql(db, ROLE.bob, `with x as (update a2a.blobs set stored_at = now() returning 1) select count(*) from x`)).trim()).toBe("1");
    await expect(psql(db, ROLE.bob, `update a2a.blobs set size = 1`)).rejects.toThrow("a stored blob cannot be changed");
    // A member's gc still removes what is its to remove: a blob it stored that nothing names.
    writeFileSync(join(home.path, "mine.txt"), `mallory's own ${tag}`);
    const mine = (await ok(db, ROLE.mallory, ["put", join(home.path, "mine.txt")])).trim();
    expect(await gc(db, ROLE.mallory)).toContain(" 0 blob(s) nothing names"); // under gc's floor, by the server's clock
    await admin(db, `update a2a.blobs set stored_at = now() - interval '2 hours' where hex = '${mine.slice("sha256:".length)}'`);
    expect(await gc(db, ROLE.bob)).toContain(" 0 blob(s) nothing names");
    expect(await gc(db, ROLE.mallory)).toContain(" 1 blob(s) nothing names");
    expect(await blobCount(db)).toBe("1 1");
    // The inbox's owner may move alice's message, not change what she attached.
    await expect(psql(db, ROLE.bob, `update a2a.messages set attachments = '[]'::jsonb where agent = 'bob'`)).rejects.toThrow(/a sent message cannot be changed, only moved/);
    // Keys: alice's are invisible and untouchable to mallory; a retry stays one delivery; mallory
    // reusing alice's name and key is told the key is another role's.
    await ok(db, ROLE.alice, ["send", "bob", "once", "--key", "k1", "--as", "alice"]);
    expect((await psql(db, ROLE.mallory, `select count(*) from a2a.mail_keys`)).trim()).toBe("0");
    await psql(db, ROLE.mallory, `delete from a2a.mail_keys; update a2a.mail_keys set id = 'x'`);
    await ok(db, ROLE.alice, ["send", "bob", "once", "--key", "k1", "--as", "alice"]);
    expect(await admin(db, `select count(*) from a2a.messages where agent = 'bob' and body = convert_to('once', 'UTF8')`)).toBe("1");
    const forged = await as(db, ROLE.mallory, ["send", "bob", "twice", "--key", "k1", "--as", "alice"]);
    expect(forged).toMatchObject({ code: 1, stdout: "" });
    expect(forged.stderr).toBe(`a2a: the key k1 of mail to bob was recorded by another role, not by you (${ROLE.mallory}): a key record is its sender's; send with another --key\n`);
    // A LISTEN on bob's inbox channel tells mallory that mail came (an arrival number), never its id.
    const spy = new SQL(urlAs(db.url, ROLE.mallory, PW[ROLE.mallory]));
    try {
      let heard: (p: string) => void;
      const payload = new Promise<string>((r) => (heard = r));
      await spy.listen("a2a.inbox:bob", (p: string) => heard(p));
      const sent = (await ok(db, ROLE.alice, ["send", "bob", "another", "--as", "alice"])).split(" ")[1];
      expect(sent).toMatch(/^\d{16}-/);
      const said = await payload;
      expect(said).toMatch(/^\d+$/);
      expect(said).not.toContain(sent);
    } finally {
      await spy.close();
    }
  });

  test("with --rls: the inbox's reader turns a notification's arrival number into the message, so MCP pushes new mail past a full scan", async () => {
    const db = await bus(["--rls"]);
    await ok(db, ROLE.bob, ["recv", "--as", "bob"]);
    // 50 unread already (what one scan announces at most): the next is announced by its notification alone.
    const t0 = Date.now() * 1000;
    await psql(db, ROLE.alice, `insert into a2a.messages (agent, id, place, sender, body, size, sent_at, host, pid)
      select 'bob', lpad((${t0} + g)::text, 16, '0') || '-beef-1-abcdef', 'unread', 'alice', convert_to('old ' || g, 'UTF8'), 5, extract(epoch from now()), 'h', 1
      from generate_series(1, 50) g`);
    const pushed: string[] = [];
    const Push = z.object({ method: z.literal("notifications/claude/channel"), params: z.object({ content: z.string(), meta: z.record(z.string(), z.string()) }) });
    const s = await connect(urlAs(db.url, ROLE.bob), { A2A_AGENT: "bob", PGPASSWORD: PW[ROLE.bob], A2A_POLL_MS: "600000", HOME: home.path }, {
      cwd: home.path, stderr: "ignore", setup: (c) => c.setNotificationHandler(Push as any, (n: any) => void pushed.push(n.params.meta.message_id)),
    });
    try {
      const listening = () => server.admin(`select count(*) from pg_stat_activity where datname = '${db.name}' and usename = '${ROLE.bob}' and query ilike 'listen %'`, db.name);
      await untilServer(async () => pushed.length === 50 && (await listening()).trim() !== "0", "bob's MCP server announcing 50 and listening");
      const id = (await ok(db, ROLE.alice, ["send", "bob", "the 51st", "--as", "alice"])).split(" ")[1];
      await untilServer(async () => pushed.length > 50, "the 51st pushed");
      expect(pushed.slice(50)).toEqual([id]);
    } finally {
      await s.close();
    }
  });
});
