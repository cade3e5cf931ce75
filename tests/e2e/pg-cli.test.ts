// The binary on a PostgreSQL store (A2A_DIR=postgres://...): what a user sees that differs from
// a directory store, and what must not. A message's writer is the role the server saw, named
// as a role; a wait in one process is woken by a publish in another through LISTEN/NOTIFY; a
// password given to connect is never printed. The e2e suite as a whole runs on PostgreSQL too
// (A2A_TEST_STORE); this file needs no setting: it starts its own server where one can be had.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { a2a, exitWithin, spawnA2A, tempDir } from "../harness/run";
import { enter, startUi } from "../harness/ui";
import { createRole, freshDatabase, pgServer, pgSkipReason, urlAs, type Database, type PgServer } from "../harness/pg";

setDefaultTimeout(60_000);

const skip = pgSkipReason();
if (skip) console.warn(`pg-cli.test.ts: skipped: ${skip}`);

describe.skipIf(skip !== undefined)("a2a on a PostgreSQL store", () => {
  let server: PgServer;
  let db: Database;
  beforeAll(async () => {
    server = (await pgServer())!;
    db = await freshDatabase(server);
  });
  afterAll(async () => {
    await db?.drop();
  });
  const on = (schema: string) => `${db.url}?schema=${schema}`;

  test("a message's writer is shown as the role the server saw, in recv's frame and in inbox", async () => {
    const dir = on("writer_shown");
    expect((await a2a(["send", "bob", "hello", "--as", "alice"], { dir })).code).toBe(0);
    const r = await a2a(["recv", "--as", "bob"], { dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^--- message \S+ from alice \(role postgres\) at /);
    expect(r.stdout).not.toContain("OS user");
  });

  test("a wait in one process wakes on a publish in another", async () => {
    const dir = on("wake");
    const waiter = spawnA2A(["wait", "result", "--timeout", "30s"], { dir });
    // The waiter is listening once its first check found nothing; a publish before that is
    // found by the check itself, so the order does not matter for the outcome.
    expect((await a2a(["publish", "result", "42"], { dir })).code).toBe(0);
    expect(await waiter.exited).toBe(0);
    expect(await new Response(waiter.stdout).text()).toBe("42");
  });

  test("a role's password, in the URL or in PGPASSWORD, is never printed: not by a command, nor by its error", async () => {
    const pw = "s3cr%t/pw?#x";
    const role = `pgcli_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`; // roles are the cluster's, not the database's
    await createRole(server, role, pw);
    await server.admin(`grant all on database "${db.name}" to ${role}`);
    using cwd = tempDir();
    const inUrl = urlAs(db.url, role, pw) + "?schema=pwshow";
    const ok = await a2a(["whoami", "--as", "bob"], { dir: inUrl, cwd: cwd.path });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`store postgres://${role}@`);
    expect(ok.stdout).toContain(` as role ${role}: `); // issue 33: it said "OS user" for the database role
    const viaEnv = await a2a(["status"], { dir: urlAs(db.url, role) + "?schema=pwshow", env: { PGPASSWORD: pw } });
    expect(viaEnv.code).toBe(0);
    const wrong = await a2a(["status"], { dir: urlAs(db.url, role) + "?schema=pwshow", env: { PGPASSWORD: pw + "x" } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("put the password in PGPASSWORD or ~/.pgpass");
    for (const r of [ok, viaEnv, wrong]) expect(r.stdout + r.stderr).not.toContain("s3cr");
  });

  test("a read of a schema nothing was written to answers as the empty bus and makes no schema; the first write makes it", async () => {
    const dir = on("unread_yet");
    const schemaThere = async () => (await server.admin(`select count(*) from pg_namespace where nspname = 'unread_yet'`, db.name)).trim();
    // What each read says is what it says on an empty directory store.
    using empty = tempDir();
    const reads = [["status", "--json"], ["wait", "nothing", "--timeout", "0"], ["tail", "nothing"], ["inbox", "--as", "bob", "--json"], ["peers", "--json"], ["task", "list", "jobs", "--json"], ["lease", "list", "--json"], ["topic", "list", "--json"]];
    for (const args of reads) {
      const [r, f] = [await a2a(args, { dir }), await a2a(args, { dir: empty.path })];
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: f.code, stdout: f.stdout });
      expect({ args, schema: await schemaThere() }).toEqual({ args, schema: "0" });
    }
    expect((await a2a(["publish", "first", "1"], { dir })).code).toBe(0);
    expect(await schemaThere()).toBe("1");
    expect((await a2a(["wait", "first"], { dir })).stdout).toBe("1");
  });

  test("a2a ui on a PostgreSQL store: its event stream reports a publish, a message arriving and its reading", async () => {
    const dir = on("ui");
    await a2a(["publish", "before", "x"], { dir }); // the baseline: not news
    const u = await enter(await startUi([], { dir }));
    try {
      const res = await fetch(`${u.base}/events`, { headers: { Cookie: u.cookie } });
      expect(res.status).toBe(200);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let seen = "";
      const until = async (what: RegExp) => {
        const limit = Date.now() + 20_000;
        while (!what.test(seen)) {
          if (Date.now() > limit) throw new Error(`no ${what} in the stream: ${seen.slice(-2000)}`);
          const { value, done } = await reader.read();
          if (done) throw new Error(`the stream ended: ${seen.slice(-2000)}`);
          seen += value;
        }
      };
      await until(/snapshot/);
      await a2a(["publish", "after", "42"], { dir });
      await until(/"kind":"published","subject":"after"/);
      await a2a(["send", "bob", "hello there", "--as", "alice"], { dir });
      await until(/"kind":"sent","subject":"alice → bob","detail":"hello there"/);
      await a2a(["recv", "--as", "bob"], { dir });
      await until(/"kind":"read","subject":"bob"/); // no notification says "read": the feed's recheck finds it
      await reader.cancel();
    } finally {
      u.proc.kill("SIGTERM");
      await exitWithin(u.proc, 10_000);
    }
  });
});
