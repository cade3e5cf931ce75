// A store URL naming several PostgreSQL servers, as libpq reads it (issue 38, "a primary that
// fails over"): a2a writes to and waits on the one that accepts writes, never a standby, and
// after a failover (the standby promoted, the old primary killed) its waits carry on on the new
// primary. Two throwaway clusters with streaming replication (tests/harness/pg-replica.ts).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { a2a, exitWithin, spawnA2A } from "../harness/run";
import { connect } from "../harness/mcp";
import { replicaPair, replicaSkipReason, type Node, type ReplicaPair } from "../harness/pg-replica";

setDefaultTimeout(120_000);

const skip = replicaSkipReason();
if (skip) console.warn(`pg-failover.test.ts: skipped: ${skip}`);

// A port nothing listens on (taken and let go: nothing else binds it in a test's time).
function deadPort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

function oneLine(stderr: string): void {
  expect(stderr.trim().split("\n")).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at |bun:sql|PostgresError/);
}

const count = async (n: Node, db: string, sql: string) => Number((await n.admin(sql, db)).trim());

// Connections of `db` on `n` with a LISTEN in place (idle after it).
const listening = (n: Node, db: string) => count(n, db, "select count(*) from pg_stat_activity where datname = current_database() and state = 'idle' and query ilike 'listen %'");

async function until(cond: () => Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

describe.skipIf(skip !== undefined)("a store URL with several servers", () => {
  let pair: ReplicaPair;
  let db: string;
  beforeAll(async () => {
    pair = await replicaPair({ sync: false });
    db = await pair.createDatabase();
  });
  afterAll(async () => {
    await pair?.stop();
  });

  test("a server that cannot be reached is passed over: the next one that accepts writes is used", async () => {
    const dir = `${pair.url(db, [deadPort(), "primary"])}?schema=passed_over`;
    expect((await a2a(["publish", "result", "on the primary"], { dir })).code).toBe(0);
    const r = await a2a(["wait", "result", "--timeout", "5s"], { dir }); // published: answers at once
    expect(r).toMatchObject({ code: 0, stdout: "on the primary" });
    expect(await count(pair.primary, db, "select count(*) from passed_over.slots")).toBe(1);
  });

  test("a standby listed first is never written to nor listened on: the primary after it is", async () => {
    const dir = `${pair.url(db, ["standby", "primary"])}?schema=standby_first&target_session_attrs=read-write`;
    const waiter = spawnA2A(["wait", "result", "--timeout", "60s"], { dir });
    await until(async () => (await listening(pair.primary, db)) >= 1, "the waiter's LISTEN on the primary");
    expect(await listening(pair.standby, db)).toBe(0);
    expect((await a2a(["publish", "result", "woken"], { dir })).code).toBe(0);
    expect(await exitWithin(waiter, 60_000)).toBe(0);
    expect(await new Response(waiter.stdout).text()).toBe("woken");
    expect(await count(pair.primary, db, "select count(*) from standby_first.slots")).toBe(1);
  });

  test("PGHOST and PGPORT lists, when the URL names no host, are read as libpq reads them", async () => {
    const env = { PGHOST: "127.0.0.1,127.0.0.1", PGPORT: `${pair.standby.port},${pair.primary.port}`, PGUSER: "postgres" };
    const dir = `postgres:///${db}?schema=from_env`;
    expect((await a2a(["publish", "result", "via PGHOST"], { dir, env })).code).toBe(0);
    expect(await count(pair.primary, db, "select count(*) from from_env.slots")).toBe(1);
  });

  test("no server that accepts writes: one line naming each and what it was, exit 1, nothing written", async () => {
    const dead = deadPort();
    const dir = `${pair.url(db, ["standby", dead])}?schema=none_writable`;
    const r = await a2a(["publish", "result", "x"], { dir });
    expect(r.code).toBe(1);
    oneLine(r.stderr);
    expect(r.stderr).toContain(`no server of 127.0.0.1:${pair.standby.port},127.0.0.1:${dead}/${db} accepts writes`);
    expect(r.stderr).toContain(`127.0.0.1:${pair.standby.port}/${db} is a standby (in recovery)`);
    expect(r.stderr).toContain(`127.0.0.1:${dead}/${db} cannot be reached`);
    expect(await count(pair.primary, db, "select count(*) from pg_namespace where nspname = 'none_writable'")).toBe(0);
  });

  test("target_session_attrs that asks for a standby is refused with what to use (exit 2); read-write, primary and any are taken", async () => {
    for (const mode of ["read-only", "standby", "prefer-standby", "bogus"]) {
      const r = await a2a(["status"], { dir: `${pair.url(db)}?target_session_attrs=${mode}` });
      expect(r.code).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toContain(`target_session_attrs="${mode}"`);
      expect(r.stderr).toContain("use target_session_attrs=read-write");
    }
    for (const mode of ["read-write", "primary", "any"]) {
      const r = await a2a(["publish", `mode_${mode}`, "x"], { dir: `${pair.url(db, ["standby", "primary"])}?schema=attrs&target_session_attrs=${mode}` });
      expect(r.code).toBe(0);
    }
    expect(await count(pair.primary, db, "select count(*) from attrs.slots")).toBe(3);
  });

  test("doctor says which server a2a writes to and why not the ones before it; with none, a problem naming each", async () => {
    const ok = await a2a(["doctor"], { dir: pair.url(db, ["standby", "primary"]) });
    expect(ok.stdout).toMatch(new RegExp(`ok +servers +writes and waits go to 127\\.0\\.0\\.1:${pair.primary.port}/${db}, the first of the 2 servers of the URL that accepts writes; passed over: 127\\.0\\.0\\.1:${pair.standby.port}/${db} is a standby \\(in recovery\\)`));
    expect(ok.stdout).toContain(`at 127.0.0.1:${pair.primary.port}/${db}`);
    const none = await a2a(["doctor"], { dir: pair.url(db, ["standby", deadPort()]) });
    expect(none.code).toBe(1);
    expect(none.stdout).toMatch(/PROBLEM +servers +no server of .* accepts writes: .* is a standby \(in recovery\); .* cannot be reached/);
  });

  test("a host list that is not HOST or HOST:PORT is refused (exit 2) with the form to use", async () => {
    const r = await a2a(["status"], { dir: `postgres://postgres@127.0.0.1:${pair.primary.port},:x/${db}` });
    expect(r.code).toBe(2);
    oneLine(r.stderr);
    expect(r.stderr).toContain("write the servers as h1:5432,h2:5432");
  });
});

describe.skipIf(skip !== undefined)("a failover: the old primary killed, the standby promoted (synchronous replication)", () => {
  let pair: ReplicaPair;
  let db: string;
  beforeAll(async () => {
    pair = await replicaPair({ sync: true });
    db = await pair.createDatabase();
  });
  afterAll(async () => {
    await pair?.stop();
  });

  test("a2a wait, recv --wait, agent_wait and task claim --wait carry on on the new primary: each message once, each task done once, nothing reported done lost", async () => {
    const dir = `${pair.url(db)}?schema=failover`;
    // Reported done before the failover: with synchronous replication the standby has them.
    expect((await a2a(["send", "carol", "kept", "--as", "alice", "--key", "k0"], { dir })).code).toBe(0);
    expect((await a2a(["task", "add", "other", "kept task"], { dir })).code).toBe(0);
    // Claimed before the failover, done after it (mid-claim).
    expect((await a2a(["task", "add", "held", "claimed across"], { dir })).code).toBe(0);
    const held = JSON.parse((await a2a(["task", "claim", "held", "--json", "--as", "w0"], { dir })).stdout);
    const waiter = spawnA2A(["wait", "result", "--timeout", "90s"], { dir });
    const receiver = spawnA2A(["recv", "--as", "bob", "--wait", "--timeout", "90s", "--json"], { dir });
    const claimers = ["w1", "w2"].map((as) => spawnA2A(["task", "claim", "q", "--wait", "--timeout", "90s", "--json", "--as", as], { dir }));
    const session = await connect(dir, { A2A_AGENT: "mcp_waiter" });
    try {
      const waiting = session.json("agent_wait", { name: "result", timeout: 90 });
      await until(async () => (await listening(pair.primary, db)) >= 5, "the five waiters' LISTENs on the primary");
      expect(await listening(pair.standby, db)).toBe(0);
      await pair.killPrimary();
      await pair.promote();
      // Through the same URL: the first server refuses, the promoted one takes the changes.
      expect((await a2a(["publish", "result", "after the failover"], { dir })).code).toBe(0);
      expect((await a2a(["send", "bob", "hello after", "--as", "alice", "--key", "k1"], { dir })).code).toBe(0);
      expect((await a2a(["task", "add", "q", "the one task"], { dir })).code).toBe(0);

      expect(await exitWithin(waiter, 60_000)).toBe(0);
      expect(await new Response(waiter.stdout).text()).toBe("after the failover");
      expect(JSON.stringify(await waiting)).toContain("after the failover");
      expect(await exitWithin(receiver, 60_000)).toBe(0);
      expect(await new Response(receiver.stdout).text()).toContain("hello after");

      const first = await Promise.race(claimers.map((p, i) => p.exited.then(() => i)));
      const winner = claimers[first];
      const other = claimers[1 - first];
      expect(await winner.exited).toBe(0);
      const claim = JSON.parse(await new Response(winner.stdout).text());
      expect(claim).toMatchObject({ payload: "the one task", attempt: 1 });
      expect(other.exitCode).toBeNull(); // still waiting: it did not claim the same task
      expect((await a2a(["task", "add", "q", "the second"], { dir })).code).toBe(0);
      expect(await exitWithin(other, 60_000)).toBe(0);
      const second = JSON.parse(await new Response(other.stdout).text());
      expect(second).toMatchObject({ payload: "the second", attempt: 1 });
      for (const c of [claim, second]) expect((await a2a(["task", "done", c.id, c.token], { dir })).code).toBe(0);
      const list = JSON.parse((await a2a(["task", "list", "q", "--json"], { dir })).stdout);
      expect(list.map((t: { state: string; attempt: number }) => [t.state, t.attempt])).toEqual([["done", 1], ["done", 1]]);

      // Each message once; what was reported done before the failover is there.
      expect(JSON.parse((await a2a(["inbox", "--as", "bob", "--json"], { dir })).stdout).counts.unread).toBe(0);
      const carol = await a2a(["recv", "--as", "carol", "--json"], { dir });
      expect(carol.stdout).toContain("kept");
      expect(JSON.parse((await a2a(["task", "list", "other", "--json"], { dir })).stdout)).toHaveLength(1);
      expect((await a2a(["task", "done", held.id, held.token], { dir })).code).toBe(0);
      const heldNow = JSON.parse((await a2a(["task", "list", "held", "--json"], { dir })).stdout);
      expect(heldNow.map((t: { state: string; attempt: number }) => [t.state, t.attempt])).toEqual([["done", 1]]);
      for (const p of [waiter, receiver, ...claimers]) expect(await new Response(p.stderr).text()).toBe("");
      expect(session.stderr.text()).not.toContain("bun:sql");
    } finally {
      for (const p of [waiter, receiver, ...claimers]) p.kill();
      await session.close();
    }
  });
});

describe.skipIf(skip !== undefined)("a server that stops accepting writes under a live session", () => {
  let pair: ReplicaPair;
  let db: string;
  beforeAll(async () => {
    pair = await replicaPair({ sync: false });
    db = await pair.createDatabase();
  });
  afterAll(async () => {
    await pair?.stop();
  });

  test("a write refused as read-only (25006) changed nothing: a2a mcp runs it once more on the server that accepts writes now, and its waits follow; one server only: exit 1 saying so", async () => {
    const dir = `${pair.url(db)}?schema=turned`;
    const session = await connect(dir, { A2A_AGENT: "writer" });
    try {
      await session.json("agent_publish", { name: "before", result: "on the first primary" });
      const waiting = session.json("agent_wait", { name: "woken", timeout: 90 });
      await until(async () => (await listening(pair.primary, db)) === 1, "agent_wait's LISTEN on the primary");
      await pair.caughtUp();
      // The standby promoted, the old primary kept up but made read-only (as a demotion leaves it):
      // the session's connection to it is still open.
      await pair.promote();
      await pair.primary.admin("alter system set default_transaction_read_only = on");
      await pair.primary.admin("select pg_reload_conf()");
      await until(async () => (await pair.primary.admin("show default_transaction_read_only")).trim() === "on", "the old primary to turn read-only");
      await session.json("agent_publish", { name: "after", result: "on the new primary" });
      expect(await count(pair.standby, db, "select count(*) from turned.slots where name = 'after'")).toBe(1);
      expect(await count(pair.primary, db, "select count(*) from turned.slots where name = 'after'")).toBe(0);
      // The session's LISTEN followed its operations to the new primary; a publish there wakes it.
      await until(async () => (await listening(pair.standby, db)) === 1, "agent_wait's LISTEN on the new primary");
      expect((await a2a(["publish", "woken", "on the new primary"], { dir })).code).toBe(0);
      expect(JSON.stringify(await waiting)).toContain("on the new primary");
      const r = await a2a(["publish", "single", "x"], { dir: `${pair.url(db, ["primary"])}?schema=turned` });
      expect(r.code).toBe(1);
      oneLine(r.stderr);
      expect(r.stderr).toContain(`PostgreSQL at 127.0.0.1:${pair.primary.port}/${db} accepts no writes (a standby, or read-only)`);
      expect(r.stderr).toContain("nothing was changed");
      expect(await count(pair.primary, db, "select count(*) from turned.slots where name = 'single'")).toBe(0);
    } finally {
      await session.close();
    }
  });
});

describe.skipIf(skip !== undefined)("a failover with asynchronous replication", () => {
  let pair: ReplicaPair;
  let db: string;
  beforeAll(async () => {
    pair = await replicaPair({ sync: false });
    db = await pair.createDatabase();
  });
  afterAll(async () => {
    await pair?.stop();
  });

  test("a send reported done that the standby had not received is lost with the old primary; the same send --key again delivers it, once, and one that survived is not delivered twice", async () => {
    const dir = `${pair.url(db)}?schema=async_loss`;
    const send = (body: string, key: string) => a2a(["send", "bob", body, "--as", "alice", "--key", key], { dir });
    expect((await send("replicated", "k1")).code).toBe(0);
    await pair.caughtUp();
    await pair.stopStandby(); // the standby misses what comes now
    expect((await send("only on the old primary", "k2")).code).toBe(0);
    await pair.killPrimary();
    await pair.startStandby();
    await pair.promote();
    const before = await a2a(["recv", "--as", "bob", "--json", "--peek", "--all"], { dir });
    expect(before.stdout).toContain("replicated");
    expect(before.stdout).not.toContain("only on the old primary"); // lost, though reported done
    expect((await send("only on the old primary", "k2")).code).toBe(0);
    expect((await send("replicated", "k1")).code).toBe(0);
    const after = await a2a(["recv", "--as", "bob", "--json", "--peek", "--all"], { dir });
    expect(after.stdout.split("only on the old primary").length - 1).toBe(1);
    expect(after.stdout.split("replicated").length - 1).toBe(1);
  });
});
