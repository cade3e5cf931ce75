// What a change costs on PostgreSQL, counted in round trips through a relay (tests/harness/pg-wire.ts):
// a number, not a time, so it can be held here while bench/pg.ts and bench/pg-load.ts measure
// the times (issue 34). A round trip is a wake-up of the server and of the client; on a loaded
// machine each costs far more than its work. Counts are for a whole command: connecting, the
// statements the command runs, and closing; the first command makes the schema and is not counted.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SQL } from "bun";
import { a2a, until } from "../harness/run";
import { freshDatabase, pgServer, pgSkipReason, type Database } from "../harness/pg";
import { wireCounter, type WireCounter } from "../harness/pg-wire";
import { textArray } from "../../lib/pg/text-array";
import { connect } from "../harness/mcp";

import { openBus } from "../../lib/bus";

setDefaultTimeout(60_000);

const skip = pgSkipReason();
if (skip) console.warn(`pg-round-trips.test.ts: skipped: ${skip}`);

describe.skipIf(skip !== undefined)("round trips of a change on PostgreSQL", () => {
  let db: Database;
  let wire: WireCounter;
  beforeAll(async () => {
    const server = (await pgServer())!;
    db = await freshDatabase(server);
    wire = await wireCounter(server.url);
  });
  afterAll(async () => {
    wire?.close();
    await db?.drop();
  });
  // The round trips `args` took, and its result.
  const counted = async (dir: string, args: string[]) => {
    const before = wire.roundTrips();
    const r = await a2a(args, { dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    return { trips: wire.roundTrips() - before, stdout: r.stdout };
  };

  // A read's floor is Bun's own client connecting, running one query and closing (issue 34).
  test("a2a status and a2a wait (published) take the round trips of connect + one query + close", async () => {
    const dir = wire.url(db.name, "reads");
    for (const [name, value] of [["a", "1"], ["b", "2"]]) await counted(dir, ["publish", name, value]);
    const bare = new URL(dir);
    bare.search = "";
    const before = wire.roundTrips();
    const sql = new SQL({ url: bare.toString(), max: 1 });
    await sql`select 1`;
    await sql.close();
    const floor = wire.roundTrips() - before;
    expect(floor).toBeGreaterThan(0); // the relay saw the conversation
    const status = await counted(dir, ["status"]);
    expect({ listed: status.stdout.split("\n").filter((l) => /^[ab] /.test(l)).length, trips: status.trips }).toEqual({ listed: 2, trips: floor });
    const wait = await counted(dir, ["wait", "a"]);
    expect({ out: wait.stdout, trips: wait.trips }).toEqual({ out: "1", trips: floor });
  });

  test("a list of names is one text parameter, not an array Bun describes in a round trip first: `a2a status A B` takes the floor's round trips; any text survives the literal", async () => {
    const dir = wire.url(db.name, "lists");
    for (const [name, value] of [["a", "1"], ["b", "2"]]) await counted(dir, ["publish", name, value]);
    const bare = new URL(dir);
    bare.search = "";
    const before = wire.roundTrips();
    const sql = new SQL({ url: bare.toString(), max: 1 });
    await sql`select 1`;
    await sql.close();
    const floor = wire.roundTrips() - before;
    const status = await counted(dir, ["status", "a", "b"]);
    expect({ listed: status.stdout.split("\n").filter((l) => /^[ab] /.test(l)).length, trips: status.trips }).toEqual({ listed: 2, trips: floor });
    const texts = ["a", 'with "quotes"', "back\\slash\\", "comma,brace{}", " space ", "NULL", "", "ünï", "{\"a\",\"b\"}"];
    const direct = new SQL({ url: db.url, max: 1 });
    try {
      const rows = await direct`select x from unnest(${textArray(texts)}::text[]) as x`;
      expect(rows.map((r: { x: string }) => r.x)).toEqual(texts);
    } finally {
      await direct.close();
    }
  });

  test("a publish of a new name is one statement (1 round trip); of an existing one, that statement and one that writes where the record is still the one it found: 2 (it was 4)", async () => {
    const dir = wire.url(db.name, "publish");
    await counted(dir, ["publish", "result", "first"]);
    // A new name is one statement: it creates the row where there is none (the guess a change
    // starts from), so it needs no read before it.
    expect((await counted(dir, ["publish", "fresh", "x"])).trips).toBe(1);
    expect((await counted(dir, ["publish", "result", "second"])).trips).toBeLessThanOrEqual(2);
    expect((await a2a(["wait", "result"], { dir })).stdout).toBe("second");
    // A stream's chunk is stored in that statement too (append reads the slot once before: 3,
    // it was 5); a start drops the run's chunks in it.
    expect((await counted(dir, ["start", "stream"])).trips).toBeLessThanOrEqual(2);
    expect((await counted(dir, ["append", "stream", "one "])).trips).toBeLessThanOrEqual(3);
    expect((await counted(dir, ["append", "stream", "two"])).trips).toBeLessThanOrEqual(3);
    expect((await counted(dir, ["start", "stream"])).trips).toBeLessThanOrEqual(2);
    expect((await a2a(["tail", "stream"], { dir })).stdout).toBe("");
    expect((await counted(dir, ["append", "stream", "one "])).trips).toBeLessThanOrEqual(3);
    expect((await counted(dir, ["append", "stream", "two"])).trips).toBeLessThanOrEqual(3);
    expect((await a2a(["tail", "stream"], { dir })).stdout).toBe("one two");
  });

  test("a send without a key is one read (the recipient's policy, whether it has an inbox, who we are) and one statement: 2 round trips (it was 7); the message arrives whole", async () => {
    const dir = wire.url(db.name, "send");
    await counted(dir, ["send", "bob", "first", "--as", "alice"]);
    expect((await counted(dir, ["send", "bob", "second", "--as", "alice"])).trips).toBeLessThanOrEqual(2);
    // A key is a row written in one transaction with the message: still at most 7.
    expect((await counted(dir, ["send", "bob", "third", "--as", "alice", "--key", "k1"])).trips).toBeLessThanOrEqual(7);
    const got = await a2a(["recv", "--as", "bob", "--all"], { dir });
    expect(got.stdout).toContain("first");
    expect(got.stdout).toContain("second");
    expect(got.stdout).toContain("third");
    // A receive's claim returns the row it claimed: the read after it is no round trip of its own.
    await counted(dir, ["send", "bob", "fourth", "--as", "alice"]);
    const one = await counted(dir, ["recv", "--as", "bob"]);
    expect(one.stdout).toContain("fourth");
    expect(one.trips).toBeLessThanOrEqual(6); // open, recover, policy, list, claim, move to read (it was 7)
  });

  test("a claim is its candidates' page and one change: 4 round trips (it was 7); its done 4 (it was 6)", async () => {
    const dir = wire.url(db.name, "claim");
    await counted(dir, ["task", "add", "q", "one"]);
    await counted(dir, ["task", "add", "q", "two"]);
    const claim = await counted(dir, ["task", "claim", "q", "--as", "w", "--json"]);
    expect(claim.trips).toBeLessThanOrEqual(4);
    const c = JSON.parse(claim.stdout);
    expect(c).toMatchObject({ payload: "one", attempt: 1 });
    expect((await counted(dir, ["task", "done", c.id, c.token, "ok"])).trips).toBeLessThanOrEqual(4);
    expect(JSON.parse((await a2a(["task", "show", c.id, "--json"], { dir })).stdout)).toMatchObject({ state: "done", result: "ok" });
  });

  test("a claim passes over the live claims in front of it without reading each (4 claimed in front: it was 11)", async () => {
    const dir = wire.url(db.name, "front");
    for (let i = 1; i <= 5; i++) await counted(dir, ["task", "add", "q", `t${i}`]);
    for (let i = 1; i <= 4; i++) await counted(dir, ["task", "claim", "q", "--as", `other${i}`, "--json"]);
    const claim = await counted(dir, ["task", "claim", "q", "--as", "w", "--json"]);
    expect(JSON.parse(claim.stdout)).toMatchObject({ payload: "t5" });
    expect(claim.trips).toBeLessThanOrEqual(4);
  });
});

describe.skipIf(skip !== undefined)("round trips of agent_wait's wake in a2a mcp on PostgreSQL", () => {
  let db: Database;
  let wire: WireCounter;
  beforeAll(async () => {
    const server = (await pgServer())!;
    db = await freshDatabase(server);
    wire = await wireCounter(server.url);
  });
  afterAll(async () => {
    wire?.close();
    await db?.drop();
  });

  // The inbox's watch in place: every LISTEN sent so far answered (the inbox's, which the note's
  // count is told of as a change), then one call through the server, which has read that answer
  // by then. After that nothing changes in the inbox and no tick comes (A2A_POLL_MS).
  const inboxWatched = async (s: Awaited<ReturnType<typeof connect>>) => {
    const sent = () => wire.simpleQueries().filter((q) => /^LISTEN/i.test(q));
    await until(() => sent().some((q) => q.includes("inbox:")) && wire.listensDone() >= sent().length, 20_000, "the inbox's LISTEN in place");
    await s.json("whoami");
  };

  // The note's count is one statement with the places written in it: an array parameter had Bun
  // describe the statement in a round trip of its own first (2 round trips, issue 34).
  test("a result's unread note is 1 round trip", async () => {
    const dir = wire.url(db.name, "mcpnote");
    const s = await connect(dir, { A2A_POLL_MS: "600000" });
    try {
      await s.json("whoami");
      await inboxWatched(s);
      const before = wire.exchanges().length;
      await s.json("agent_status");
      expect(wire.exchanges().slice(before).filter((q) => /from messages/i.test(q))).toEqual([expect.stringMatching(/^select count\(\*\).* from messages where agent = \$1 +and place = 'unread'$/)]);
    } finally {
      await s.close();
    }
  });

  // From the notification to the answer, the wait reads the slot it was told of and nothing else
  // stands in front of the answer: the unread note is a count kept live, not a query per result
  // (it was 2: the count's Parse/Describe, then the count). The session's own marks (a wait past
  // 100 ms is marked waiting) are bookkeeping written beside the answer, not counted here. The
  // engine's tick (A2A_POLL_MS, 2 s by default) would have the note counted again after a wait
  // it fell in (session.ts): pushed past the test, so every wait is the plain wake.
  test("agent_wait woken by a publish: 1 round trip from the notification to the answer", async () => {
    const dir = wire.url(db.name, "mcpwait");
    const publisher = openBus({ dir: `${db.url}${db.url.includes("?") ? "&" : "?"}schema=mcpwait`, env: {} });
    const s = await connect(dir, { A2A_POLL_MS: "600000" });
    try {
      await s.json("whoami");
      await inboxWatched(s);
      const trips: string[][] = [];
      for (let i = 0; i < 3; i++) {
        const name = `w${i}`;
        const start = wire.exchanges().length;
        const call = s.json("agent_wait", { name, timeout: 60 });
        // In place: its LISTEN, then the look at the slot after it (the check that misses nothing),
        // and the note's count, started with the call.
        await until(() => {
          const ex = wire.exchanges().slice(start);
          const at = ex.findIndex((q) => /^LISTEN/i.test(q) && q.includes(`slot:${name}`));
          return at >= 0 && ex.slice(at + 1).some((q) => /from slots/i.test(q)) && ex.some((q) => /count.*from messages/i.test(q));
        }, 20_000, `the wait on ${name} in place`);
        const before = wire.exchanges().length;
        await publisher.slots.publish(name, "x");
        const r = await call;
        expect(r).toMatchObject({ ok: true, result: "x" });
        trips.push(wire.exchanges().slice(before).filter((q) => !/sessions/.test(q)));
      }
      expect(trips.flat().filter((q) => !/from slots/i.test(q))).toEqual([]); // the note's count was 2 of them
      expect(trips.map((t) => t.length)).toEqual([1, 1, 1]);
    } finally {
      await publisher.close();
      await s.close();
    }
  });
});
