// A blob put on PostgreSQL (lib/pg/blobs.ts; docs/PROTOCOL.md §19, Put): its parts go in
// transactions that do not wait for their WAL flush, and the commit that names the blob does,
// which flushes every part before it: a reported put survives a crash of the server. This
// file starts its own server where one can be had, and stops it hard.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SQL } from "bun";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, tempDir } from "../harness/run";
import { freshDatabase, pgServer, pgSkipReason, restart, type Database, type PgServer } from "../harness/pg";

setDefaultTimeout(120_000);

const skip = pgSkipReason() ?? (process.env.A2A_TEST_PG ? "A2A_TEST_PG names a server this file may not crash" : undefined);
if (skip) console.warn(`pg-blob-put.test.ts: skipped: ${skip}`);

describe.skipIf(skip !== undefined)("a blob put on PostgreSQL", () => {
  let server: PgServer;
  let db: Database;
  const home = tempDir();
  const file = join(home.path, "data.bin");
  const MIB = 9; // three groups of parts, the last one short
  beforeAll(async () => {
    server = (await pgServer())!;
    db = await freshDatabase(server);
    const bytes = new Uint8Array(MIB * 1024 * 1024 + 12345);
    for (let o = 0; o < bytes.length; o += 65536) crypto.getRandomValues(bytes.subarray(o, Math.min(bytes.length, o + 65536)));
    writeFileSync(file, bytes);
  });
  afterAll(async () => {
    await db?.drop();
    home[Symbol.dispose]();
  });
  const on = (schema: string) => `${db.url}?schema=${schema}`;

  test("its parts are committed without waiting for their flush; the commit naming the blob waits, and so covers them", async () => {
    const dir = on("put_commits");
    expect((await a2a(["init"], { dir })).code).toBe(0);
    // What each insert's transaction was to wait for, as the server saw it.
    const sql = new SQL({ url: db.url, max: 1 });
    try {
      await sql.unsafe(`create table put_commits.seen (what text, sync text);
        create function put_commits.seen() returns trigger language plpgsql as $$
        begin insert into put_commits.seen values (tg_table_name, current_setting('synchronous_commit')); return null; end $$;
        create trigger seen after insert on put_commits.blob_parts for each row execute function put_commits.seen();
        create trigger seen after insert on put_commits.blobs for each row execute function put_commits.seen();`);
      const r = await a2a(["put", file], { dir });
      expect(r.code).toBe(0);
      const rows = (await sql`select what, sync, count(*)::int as n from put_commits.seen group by what, sync order by what`) as { what: string; sync: string; n: number }[];
      expect(rows).toEqual([
        { what: "blob_parts", sync: "off", n: MIB + 1 },
        { what: "blobs", sync: "on", n: 1 },
      ]);
    } finally {
      await sql.close();
    }
  });

  test("a reported put survives a crash of the server right after it: get gives its bytes back", async () => {
    const dir = on("put_crash");
    const r = await a2a(["put", file], { dir });
    expect(r.code).toBe(0);
    const digest = r.stdout.trim();
    await restart(server, "immediate");
    const out = join(home.path, "back.bin");
    const g = await a2a(["get", digest, "-o", out], { dir });
    expect({ code: g.code, stderr: g.stderr }).toEqual({ code: 0, stderr: "" });
    expect(Buffer.compare(readFileSync(out), readFileSync(file))).toBe(0);
  });
});
