// The PostgreSQL harness (tests/harness/pg.ts), driven for real: a started cluster, fresh
// databases that do not see each other, the faults (restart, killed backends) as Bun.SQL meets
// them, a role that must give its password, and no server left behind by a killed runner.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SQL } from "bun";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { childEnv, readUntil, until } from "../harness/run";
import { createRole, freshDatabase, pgServer, pgSkipReason, restart, terminateBackends, urlAs, type Database, type PgServer } from "../harness/pg";

setDefaultTimeout(60_000);

const skip = pgSkipReason();
if (skip) console.warn(`pg-harness.test.ts: skipped: ${skip}`);
const OWN = !process.env.A2A_TEST_PG; // restart() and the lifeline need a cluster of our own

const backendPid = async (sql: SQL): Promise<number> => (await sql`select pg_backend_pid() as pid`)[0].pid;

// True while `pid` is a live process (a zombie, waiting for init to reap it, is not).
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

describe.skipIf(skip !== undefined)("the PostgreSQL test harness", () => {
  let server: PgServer;
  const dbs: Database[] = [];
  const fresh = async () => {
    const db = await freshDatabase(server);
    dbs.push(db);
    return db;
  };

  beforeAll(async () => {
    server = (await pgServer())!;
  });
  afterAll(async () => {
    for (const db of dbs) await db.drop();
  });

  test("one server per process: a second call gives the same one", async () => {
    expect(await pgServer()).toBe(server);
    expect((await server.admin("show fsync")).trim()).toBe("on");
  });

  test("two fresh databases: a row written in one is not seen in the other", async () => {
    const [a, b] = [await fresh(), await fresh()];
    expect(a.name).not.toBe(b.name);
    await using sa = new SQL(a.url);
    await using sb = new SQL(b.url);
    for (const sql of [sa, sb]) await sql`create table t (v text)`;
    await sa`insert into t values ('only in a')`;
    expect((await sa`select v from t`).map((r: { v: string }) => r.v)).toEqual(["only in a"]);
    expect(await sb`select v from t`).toHaveLength(0);
  });

  test("drop removes the database, even with a session still open on it", async () => {
    const db = await freshDatabase(server);
    await using sql = new SQL({ url: db.url, max: 1 });
    await sql`select 1`;
    await db.drop();
    expect((await server.admin(`select count(*) from pg_database where datname = '${db.name}'`)).trim()).toBe("0");
  });

  // What Bun.SQL does when its connection is cut between queries (Bun 1.4.5): the next query
  // does not fail, it runs on a new backend, so a cut does not always surface as an error.
  test.if(OWN)("restart cuts every session: Bun.SQL's next query runs on a new backend", async () => {
    const db = await fresh();
    await using sql = new SQL({ url: db.url, max: 1 });
    const before = await backendPid(sql);
    await restart(server);
    expect(alive(before)).toBe(false);
    const after = await backendPid(sql);
    expect(after).not.toBe(before);
    expect((await server.admin(`select count(*) from pg_stat_activity where pid = ${after}`)).trim()).toBe("1");
  });

  test("terminateBackends cuts the sessions of one database and leaves the others", async () => {
    const [a, b] = [await fresh(), await fresh()];
    await using sa = new SQL({ url: a.url, max: 1 });
    await using sb = new SQL({ url: b.url, max: 1 });
    const [pa, pb] = [await backendPid(sa), await backendPid(sb)];
    expect(await terminateBackends(server, a.name)).toBe(1);
    expect((await server.admin(`select count(*) from pg_stat_activity where pid = ${pa}`)).trim()).toBe("0");
    expect(await backendPid(sb)).toBe(pb);
    expect(await backendPid(sa)).not.toBe(pa);
  });

  // A child process, so PGPASSWORD is set for Bun.SQL there and never in this process.
  const connectAs = async (url: string, env: Record<string, string | undefined>) => {
    const script = `import { SQL } from "bun"; await using sql = new SQL(process.env.PG_URL); console.log((await sql\`select current_user as u\`)[0].u);`;
    const p = Bun.spawn([process.execPath, "-e", script], { env: childEnv({ env: { PGPASSWORD: undefined, PGPASSFILE: "/nonexistent", ...env, PG_URL: url } }), stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { stdout: stdout.trim(), stderr, code };
  };

  test("a role from createRole must give its password: in PGPASSWORD, or in the URL", async () => {
    const db = await fresh();
    const role = `pw_${crypto.randomUUID().slice(0, 8)}`;
    const password = "p@ss/w?rd#x'y";
    await createRole(server, role, password);
    const plain = urlAs(db.url, role);
    expect(await connectAs(plain, { PGPASSWORD: password })).toMatchObject({ stdout: role, code: 0 });
    expect(await connectAs(urlAs(db.url, role, password), {})).toMatchObject({ stdout: role, code: 0 });
    const wrong = await connectAs(plain, { PGPASSWORD: "not it" });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stdout).toBe("");
    expect(wrong.stderr).toMatch(/password authentication failed/i);
    expect((await connectAs(plain, {})).code).not.toBe(0);
    await server.admin(`drop role ${role}`);
  });

  test.if(OWN)("a runner killed with SIGKILL leaves no server running and no cluster directory", async () => {
    const script = `import { pgServer } from ${JSON.stringify(join(import.meta.dir, "..", "harness", "pg.ts"))};
      const s = await pgServer(); console.log("dir=" + s.cluster.dir); setInterval(() => {}, 1e9);`;
    const child = Bun.spawn([process.execPath, "-e", script], { env: childEnv({ env: { A2A_TEST_PG: undefined } }), stdout: "pipe", stderr: "pipe" });
    const out = await readUntil(child.stdout, (t) => t.includes("\n"), 60_000);
    const dir = /dir=(\S+)/.exec(out)?.[1];
    if (!dir) throw new Error(`the child did not start a server: ${out}${await new Response(child.stderr).text()}`);
    expect(dir).not.toBe(server.cluster!.dir);
    const postmaster = Number(readFileSync(join(dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
    expect(alive(postmaster)).toBe(true);
    child.kill("SIGKILL");
    await child.exited;
    // The lifeline runs outside this process tree: nothing to wait on but what it leaves.
    await until(() => !existsSync(dir) && !alive(postmaster), 30_000, "the killed runner's cluster to be stopped and removed");
  });
});
