// Faults on a real PostgreSQL server (issue 22, "Waking, and when the network misbehaves"): the
// binary and `a2a mcp` through a fast restart, a window in which a waiter cannot reconnect, a
// backend killed in the middle of a send, a claim and a task done (before its COMMIT, and while
// its COMMIT is on its way). Each outcome is checked through the CLI: the operation happened
// once or not at all, and the command said which, or said it does not know and how to find out.
// Then two "machines" (network namespaces, tests/harness/netns.ts): a wait across a link taken
// down and up, a command against a server it cannot reach, and `a2a mcp` stopped meanwhile.
// This file needs no setting: it starts its own server where one can be had (tests/harness/pg.ts).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { a2a, BIN, childEnv, exitWithin, ownHome, readUntil, spawnA2A, tempDir, until } from "../harness/run";
import { connect } from "../harness/mcp";
import { netnsSkipReason, retransmissions, twoHosts, type TwoHosts } from "../harness/netns";
import {
  pgbouncer, pgbouncerSkipReason, committingBackends, createRole, freshDatabase, holdCommits, holdInTransaction, listeners, lockedBackends, pgServer, pgSkipReason,
  restart, serverIn, terminate, untilServer, urlAs, type Database, type PgServer,
} from "../harness/pg";

setDefaultTimeout(120_000);

const skip = pgSkipReason();
if (skip) console.warn(`pg-faults.test.ts: skipped: ${skip}`);

const netSkip = skip ?? netnsSkipReason();
const poolerSkip = pgbouncerSkipReason();
if (!skip && poolerSkip) console.warn(`pg-faults.test.ts: the PgBouncer tests skipped: ${poolerSkip}`);
if (!skip && netSkip) console.warn(`pg-faults.test.ts: the two-namespace tests skipped: ${netSkip}`);

// One line on stderr, naming the server, with no stack and no password.
function oneLine(stderr: string, server: PgServer): void {
  expect(stderr.trim().split("\n")).toHaveLength(1);
  expect(stderr).toContain(new URL(server.url).host);
  expect(stderr).not.toMatch(/\n\s+at |bun:sql|PostgresError/);
}

describe.skipIf(skip !== undefined)("a2a on PostgreSQL when the connection or what is in between misbehaves", () => {
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

  test("a command against a server that accepts the connection and never answers gives up after the connect timeout (10 s)", async () => {
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const p = spawnA2A(["status"], { dir: `postgres://postgres@127.0.0.1:${silent.port}/x` });
      expect(await exitWithin(p, 25_000)).toBe(1); // Bun.SQL's own default is 30 s
      const stderr = await new Response(p.stderr).text();
      expect(stderr.trim().split("\n")).toHaveLength(1);
      expect(stderr).toContain(`cannot reach PostgreSQL at 127.0.0.1:${silent.port}/x while listing slots (Connection timeout after 10s`);
    } finally {
      silent.stop(true);
    }
  });

  describe("a fast restart of the server", () => {
    test("a CLI wait keeps waiting and wakes on a publish made after it; its stderr stays empty", async () => {
      const dir = on("restart_wait");
      expect((await a2a(["publish", "other", "x"], { dir })).code).toBe(0); // the schema exists: the waiter only waits
      const before = await listeners(server, db.name);
      const waiter = spawnA2A(["wait", "result", "--timeout", "90s"], { dir });
      await untilServer(async () => (await listeners(server, db.name)) > before, "the waiter's LISTEN");
      await restart(server);
      expect((await a2a(["publish", "result", "after the restart"], { dir })).code).toBe(0);
      expect(await exitWithin(waiter, 60_000)).toBe(0);
      expect(await new Response(waiter.stdout).text()).toBe("after the restart");
      expect(await new Response(waiter.stderr).text()).toBe("");
    });

    test("a waiting task claim claims a task added after it exactly once; the other claimer keeps waiting", async () => {
      const dir = on("restart_claim");
      expect((await a2a(["task", "add", "q", "seed"], { dir })).code).toBe(0);
      const seed = await a2a(["task", "claim", "q", "--json", "--as", "w0"], { dir });
      expect((await a2a(["task", "done", JSON.parse(seed.stdout).id, JSON.parse(seed.stdout).token], { dir })).code).toBe(0);
      const before = await listeners(server, db.name);
      const claimers = ["w1", "w2"].map((as) => spawnA2A(["task", "claim", "q", "--wait", "--timeout", "90s", "--json", "--as", as], { dir }));
      await untilServer(async () => (await listeners(server, db.name)) >= before + 2, "both claimers' LISTENs");
      await restart(server);
      const added = await a2a(["task", "add", "q", "the one task"], { dir });
      expect(added.code).toBe(0);
      const first = await Promise.race(claimers.map((p, i) => p.exited.then(() => i)));
      const winner = claimers[first];
      const other = claimers[1 - first];
      expect(await winner.exited).toBe(0);
      const claim = JSON.parse(await new Response(winner.stdout).text());
      expect(claim.payload).toBe("the one task");
      expect(claim.attempt).toBe(1);
      // The other is still waiting: a second task goes to it, so it did not claim the first.
      expect(other.exitCode).toBeNull();
      expect((await a2a(["task", "add", "q", "the second"], { dir })).code).toBe(0);
      expect(await exitWithin(other, 60_000)).toBe(0);
      expect(JSON.parse(await new Response(other.stdout).text()).payload).toBe("the second");
      const list = JSON.parse((await a2a(["task", "list", "q", "--json"], { dir })).stdout);
      const one = list.find((t: { payload: string }) => t.payload === "the one task");
      expect(one).toMatchObject({ state: "claimed", attempt: 1 });
      for (const p of claimers) expect(await new Response(p.stderr).text()).not.toContain("bun:sql");
    });

    test("an agent_wait of a2a mcp is answered by a publish made after the restart", async () => {
      const dir = on("restart_mcp");
      const session = await connect(dir, { A2A_AGENT: "waiter" });
      try {
        expect((await a2a(["publish", "other", "x"], { dir })).code).toBe(0);
        const waiting = session.json("agent_wait", { name: "result", timeout: 90 });
        await untilServer(async () => (await listeners(server, db.name, { channel: "restart_mcp.slot:result" })) === 1, "agent_wait's LISTEN");
        await restart(server);
        expect((await a2a(["publish", "result", "for mcp"], { dir })).code).toBe(0);
        const r = await waiting;
        expect(JSON.stringify(r)).toContain("for mcp");
        expect(session.stderr.text()).not.toContain("bun:sql");
      } finally {
        await session.close();
      }
    });

    test("a publish made while the waiter cannot reconnect (the outage window) is found by its recheck once it can", async () => {
      // The waiter connects as a role of its own; with that role's connection limit at 0, the
      // restart cuts it and it cannot come back, while the superuser can still publish: the
      // notification is sent while the waiter has no connection, and is lost by design.
      const role = `w_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
      await createRole(server, role, "pw");
      await server.admin(`grant all on database ${db.name} to ${role}`);
      const dir = `${urlAs(db.url, role)}?schema=outage_${role}`;
      const env = { PGPASSWORD: "pw" };
      expect((await a2a(["publish", "other", "x"], { dir, env })).code).toBe(0);
      const waiter = spawnA2A(["wait", "result", "--timeout", "90s"], { dir, env });
      await untilServer(async () => (await listeners(server, db.name, { role })) === 1, "the waiter's LISTEN");
      await server.admin(`alter role ${role} connection limit 0`);
      await restart(server);
      const superuser = `${db.url}?schema=outage_${role}`;
      expect((await a2a(["publish", "result", "sent during the outage"], { dir: superuser })).code).toBe(0);
      expect(Number((await server.admin(`select count(*) from pg_stat_activity where usename = '${role}'`)).trim())).toBe(0);
      expect(waiter.exitCode).toBeNull(); // failed reconnects and rechecks do not end the wait
      await server.admin(`alter role ${role} connection limit -1`);
      expect(await exitWithin(waiter, 60_000)).toBe(0);
      expect(await new Response(waiter.stdout).text()).toBe("sent during the outage");
      expect(await new Response(waiter.stderr).text()).toBe(""); // no bun:sql "LISTEN failed, retrying"
    });
  });

  describe("a backend killed in the middle of an operation", () => {
    // Holds `table` in EXCLUSIVE mode (reads pass, writes wait), runs `args`, kills the one
    // backend that waits for the lock, lets the lock go: the command's result.
    async function killedWhileLocked(dir: string, table: string, args: string[]) {
      const lock = await holdInTransaction(server, db.name, `lock table ${new URL(dir).searchParams.get("schema")}.${table} in exclusive mode`);
      try {
        const p = spawnA2A(args, { dir });
        let pids: number[] = [];
        await untilServer(async () => (pids = await lockedBackends(server, db.name)).length === 1, `${args.join(" ")} to wait for the lock`);
        await terminate(server, pids[0]);
        const stderr = await new Response(p.stderr).text();
        return { code: await p.exited, stderr, stdout: await new Response(p.stdout).text() };
      } finally {
        await lock.release();
      }
    }

    // Runs `args` with every COMMIT held after it has committed locally (holdCommits), kills
    // the backend waiting there: the command's result. The change was made; the client cannot know.
    async function killedWhileCommitting(dir: string, args: string[]) {
      await holdCommits(server, true);
      try {
        const p = spawnA2A(args, { dir });
        let pids: number[] = [];
        await untilServer(async () => (pids = await committingBackends(server, db.name)).length === 1, `${args.join(" ")} to send its COMMIT`);
        await terminate(server, pids[0]);
        const stderr = await new Response(p.stderr).text();
        return { code: await p.exited, stderr, stdout: await new Response(p.stdout).text() };
      } finally {
        await holdCommits(server, false);
      }
    }

    const unread = async (dir: string, agent: string) => JSON.parse((await a2a(["inbox", "--as", agent, "--json"], { dir })).stdout).counts.unread;

    test("send: killed before its COMMIT, nothing was delivered, and it says so; sent again, it is delivered once", async () => {
      const dir = on("kill_send");
      expect((await a2a(["send", "bob", "warm-up", "--as", "alice"], { dir })).code).toBe(0);
      expect((await a2a(["recv", "--as", "bob"], { dir })).code).toBe(0);
      const r = await killedWhileLocked(dir, "messages", ["send", "bob", "hello", "--as", "alice", "--key", "k1"]);
      expect(r.code).toBe(1);
      oneLine(r.stderr, server);
      expect(r.stderr).toContain("was lost while sending to bob, before it took effect");
      expect(r.stderr).toContain("nothing was changed; run it again");
      expect(await unread(dir, "bob")).toBe(0);
      expect((await a2a(["send", "bob", "hello", "--as", "alice", "--key", "k1"], { dir })).code).toBe(0);
      expect(await unread(dir, "bob")).toBe(1);
    });

    test("send: killed while its COMMIT was on its way, it says it does not know and how to find out; the same --key does not deliver twice", async () => {
      const dir = on("commit_send");
      expect((await a2a(["send", "bob", "warm-up", "--as", "alice"], { dir })).code).toBe(0);
      expect((await a2a(["recv", "--as", "bob"], { dir })).code).toBe(0);
      const r = await killedWhileCommitting(dir, ["send", "bob", "hello", "--as", "alice", "--key", "k2"]);
      expect(r.code).toBe(1);
      oneLine(r.stderr, server);
      expect(r.stderr).toContain("was lost while sending to bob");
      expect(r.stderr).toContain("the message may or may not have been delivered: send it again with the same --key k2, which cannot deliver it twice");
      expect(await unread(dir, "bob")).toBe(1); // it was: the COMMIT had happened
      const again = await a2a(["send", "bob", "hello", "--as", "alice", "--key", "k2"], { dir });
      expect(again.code).toBe(0);
      expect(again.stdout + again.stderr).toContain("not delivered again");
      expect(await unread(dir, "bob")).toBe(1);
    });

    test("task claim: killed before its COMMIT, the task is still ready and it says so; claimed again, attempt 1", async () => {
      const dir = on("kill_claim");
      const id = (await a2a(["task", "add", "q", "job"], { dir })).stdout.trim();
      const r = await killedWhileLocked(dir, "tasks", ["task", "claim", "q", "--as", "w"]);
      expect(r.code).toBe(1);
      oneLine(r.stderr, server);
      expect(r.stderr).toContain(`was lost while changing task ${id}, before it took effect`);
      expect(JSON.parse((await a2a(["task", "show", id, "--json"], { dir })).stdout)).toMatchObject({ state: "ready", attempt: 0 });
      const c = await a2a(["task", "claim", "q", "--as", "w", "--json"], { dir });
      expect(c.code).toBe(0);
      expect(JSON.parse(c.stdout)).toMatchObject({ id, attempt: 1 });
    });

    test("task claim: killed while its COMMIT was on its way, it says it may hold the task and how to see; the task is claimed once", async () => {
      const dir = on("commit_claim");
      const id = (await a2a(["task", "add", "q", "job"], { dir })).stdout.trim();
      const r = await killedWhileCommitting(dir, ["task", "claim", "q", "--as", "w"]);
      expect(r.code).toBe(1);
      oneLine(r.stderr, server);
      expect(r.stderr).toContain(`task ${id} may or may not have been claimed for you: see it with a2a task show ${id}`);
      expect(JSON.parse((await a2a(["task", "show", id, "--json"], { dir })).stdout)).toMatchObject({ state: "claimed", attempt: 1 });
      expect((await a2a(["task", "claim", "q", "--as", "w2"], { dir })).code).toBe(3); // nothing else to claim: not claimed twice
    });

    test("task done: killed before its COMMIT, the task is still claimed and it says so; done again, it is done", async () => {
      const dir = on("kill_done");
      expect((await a2a(["task", "add", "q", "job"], { dir })).code).toBe(0);
      const c = JSON.parse((await a2a(["task", "claim", "q", "--as", "w", "--json"], { dir })).stdout);
      const r = await killedWhileLocked(dir, "tasks", ["task", "done", c.id, c.token, "the result"]);
      expect(r.code).toBe(1);
      oneLine(r.stderr, server);
      expect(r.stderr).toContain("before it took effect");
      expect(JSON.parse((await a2a(["task", "show", c.id, "--json"], { dir })).stdout)).toMatchObject({ state: "claimed" });
      expect((await a2a(["task", "done", c.id, c.token, "the result"], { dir })).code).toBe(0);
      expect(JSON.parse((await a2a(["task", "show", c.id, "--json"], { dir })).stdout)).toMatchObject({ state: "done", result: "the result" });
    });

    test("task done: killed while its COMMIT was on its way, it says it does not know and how to find out; done again says it was", async () => {
      const dir = on("commit_done");
      expect((await a2a(["task", "add", "q", "job"], { dir })).code).toBe(0);
      const c = JSON.parse((await a2a(["task", "claim", "q", "--as", "w", "--json"], { dir })).stdout);
      const r = await killedWhileCommitting(dir, ["task", "done", c.id, c.token, "the result"]);
      expect(r.code).toBe(1);
      oneLine(r.stderr, server);
      expect(r.stderr).toContain(`task ${c.id} may or may not have been finished: see it with a2a task show ${c.id}`);
      expect(JSON.parse((await a2a(["task", "show", c.id, "--json"], { dir })).stdout)).toMatchObject({ state: "done", result: "the result" });
      const again = await a2a(["task", "done", c.id, c.token, "the result"], { dir });
      expect(again.code).toBe(4);
      expect(again.stderr).toContain("already finished it as done");
    });
  });

  describe.skipIf(poolerSkip !== undefined)("through PgBouncer", () => {

    test("doctor through PgBouncer in transaction mode says the NOTIFY does not come back, and that search_path is lost, each with its fix", async () => {
      const pooler = await pgbouncer(server, db.name, { mode: "transaction", ignoreSearchPath: true });
      using h = tempDir("a2a-home-");
      try {
        const r = await a2a(["doctor", "--dir", `${pooler.url}?schema=pooled`], { env: ownHome(h.path) });
        expect(r.code).toBe(1);
        const out = r.stdout + r.stderr;
        expect(out).toMatch(/^PROBLEM +notify +a NOTIFY did not reach a LISTEN on another connection within 5 s, while queries work: something between a2a and the server drops LISTEN \(a pooler in transaction mode, such as PgBouncer's\)/m);
        expect(out).toMatch(/^PROBLEM +notify .*\n +fix: connect a2a to the server directly, or through a pooler in session mode$/m);
        expect(out).toMatch(/^PROBLEM +search path +the connection's search_path is .*, not the schema a2a asked for \(pooled\)/m);
        expect(out).toMatch(/^PROBLEM +search path .*\n +fix: connect a2a to the server directly, or through PgBouncer 1.20 or later with track_extra_parameters = search_path, idle_in_transaction_session_timeout, lock_timeout$/m);
        // Straight to the server, neither is a problem.
        const direct = (await a2a(["doctor", "--dir", `${db.url}?schema=pooled`], { env: ownHome(h.path) })).stdout;
        expect(direct).toMatch(/^ok +notify /m);
        expect(direct).not.toContain("search path");
      } finally {
        await pooler.stop();
      }
    });

    test("a command through a PgBouncer that refuses search_path says so in one line, with the fix", async () => {
      const pooler = await pgbouncer(server, db.name, { mode: "session" });
      try {
        const r = await a2a(["status", "--dir", pooler.url]);
        expect(r.code).toBe(1);
        expect(r.stderr.trim().split("\n")).toHaveLength(1);
        expect(r.stderr).toContain(`the server at ${new URL(pooler.url).host} refused the search_path with which a2a picks its schema (unsupported startup parameter: search_path)`);
        expect(r.stderr).toContain("connect a2a to PostgreSQL directly, or through PgBouncer 1.20 or later with track_extra_parameters = search_path");
      } finally {
        await pooler.stop();
      }
    });
  });
});

describe.skipIf(netSkip !== undefined)("a2a on PostgreSQL across two network namespaces", () => {
  let hosts: TwoHosts;
  let server: PgServer;
  let db: Database;
  beforeAll(async () => {
    hosts = twoHosts();
    const net = hosts.server.address.replace(/\.\d+$/, ".0/30");
    server = await serverIn({ prefix: hosts.server.prefix, address: hosts.server.address, clients: net });
    db = await freshDatabase(server);
  });
  afterAll(async () => {
    hosts?.up();
    await server?.stop();
    await hosts?.remove();
  });
  const on = (schema: string) => `${db.url}?schema=${schema}`;

  test("a CLI wait across a link taken down: a publish on the server's side meanwhile wakes it once the link is up", async () => {
    const dir = on("partition_wait");
    expect((await a2a(["publish", "other", "x"], { dir, prefix: hosts.client.prefix })).code).toBe(0);
    const waiter = spawnA2A(["wait", "result", "--timeout", "120s"], { dir, prefix: hosts.client.prefix });
    await untilServer(async () => (await listeners(server, db.name, { channel: "partition_wait.slot:result" })) === 1, "the waiter's LISTEN");
    hosts.down();
    try {
      expect((await a2a(["publish", "result", "published during the partition"], { dir, prefix: hosts.server.prefix })).code).toBe(0);
      // The notification is on its way and lost: the server has sent it 4 times more (about 3 s).
      await until(() => retransmissions(hosts.server, hosts.client) >= 4, 60_000, "the server to resend the notification", 50);
      expect(waiter.exitCode).toBeNull();
    } finally {
      hosts.up();
    }
    expect(await exitWithin(waiter, 90_000)).toBe(0);
    expect(await new Response(waiter.stdout).text()).toBe("published during the partition");
    expect(await new Response(waiter.stderr).text()).toBe("");
  });

  test("a command against a server it cannot reach ends with one line naming host:port, exit 1, within the connect timeout (10 s)", async () => {
    const dir = on("unreachable");
    hosts.down();
    try {
      const p = spawnA2A(["status"], { dir, prefix: hosts.client.prefix });
      expect(await exitWithin(p, 25_000)).toBe(1); // 10 s, with room for a loaded machine; Bun.SQL alone waits 30 s
      const stderr = await new Response(p.stderr).text();
      oneLine(stderr, server);
      expect(stderr).toContain(`cannot reach PostgreSQL at ${hosts.server.address}:5432/${db.name}`);
    } finally {
      hosts.up();
    }
  });

  for (const how of ["SIGTERM", "stdin closed"] as const) {
    test(`a2a mcp exits promptly on ${how} while its server cannot be reached`, async () => {
      const schema = `mcp_${how === "SIGTERM" ? "term" : "eof"}`;
      const dir = on(schema);
      expect((await a2a(["publish", "other", "x"], { dir, prefix: hosts.client.prefix })).code).toBe(0);
      const p = Bun.spawn([...hosts.client.prefix, BIN, "mcp"], { env: childEnv({ dir, env: { A2A_AGENT: "stopper" } }), stdin: "pipe", stdout: "pipe", stderr: "pipe" });
      // Serving (it answers initialize: its presence is registered, its signal handlers are in
      // place), so stopping it has a presence to remove.
      p.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`);
      p.stdin.flush();
      expect(await readUntil(p.stdout, (t) => t.includes('"id":1'))).toContain('"result"');
      expect((await server.admin(`select count(*) from ${schema}.peers where name = 'stopper'`, db.name)).trim()).toBe("1");
      hosts.down();
      try {
        if (how === "SIGTERM") p.kill("SIGTERM");
        else p.stdin.end();
        expect(await exitWithin(p, 15_000)).toBe(0); // the grace is 2 s; unbounded, it waits on TCP's retransmissions
      } finally {
        hosts.up();
        p.kill("SIGKILL");
      }
    });
  }
});
