// What a CLI command costs on a PostgreSQL store, counted in round trips to the server, not
// timed (issue 34: a command's floor is "connect + one query + close"). A TCP relay between the
// binary and the server counts the turns of the conversation: each time the client speaks after
// the server has, it waited for an answer. The floor is Bun's own client connecting, running one
// query and closing through the same relay; a hot command that reads takes no more turns.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SQL } from "bun";
import { createServer, connect, type Server } from "node:net";
import { a2a } from "../harness/run";
import { freshDatabase, pgServer, pgSkipReason, type Database } from "../harness/pg";

setDefaultTimeout(60_000);

const skip = pgSkipReason();
if (skip) console.warn(`pg-round-trips.test.ts: skipped: ${skip}`);

// A relay to the server at `url`; `turns()` reads (and resets) the count of client turns.
async function relay(url: string): Promise<{ url: string; turns: () => number; close: () => void }> {
  const target = new URL(url);
  let turns = 0;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    let serverSpoke = true; // the client's first words are a turn of their own
    client.on("data", (d) => {
      if (serverSpoke) turns++;
      serverSpoke = false;
      upstream.write(d);
    });
    upstream.on("data", (d) => {
      serverSpoke = true;
      client.write(d);
    });
    client.on("close", () => upstream.end());
    upstream.on("close", () => client.end());
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const via = new URL(url);
  via.hostname = "127.0.0.1";
  via.port = String((server.address() as { port: number }).port);
  return {
    url: via.toString(),
    turns: () => {
      const n = turns;
      turns = 0;
      return n;
    },
    close: () => server.close(),
  };
}

describe.skipIf(skip !== undefined)("round trips of a CLI command on PostgreSQL", () => {
  let db: Database;
  let r: Awaited<ReturnType<typeof relay>>;
  beforeAll(async () => {
    db = await freshDatabase((await pgServer())!);
    r = await relay(db.url);
  });
  afterAll(async () => {
    r?.close();
    await db?.drop();
  });

  // Connect, one query, close: what Bun's client takes through the relay.
  async function floor(): Promise<number> {
    r.turns();
    const sql = new SQL({ url: r.url, max: 1 });
    await sql`select 1`;
    await sql.close();
    return r.turns();
  }

  test("a2a status and a2a wait (published) take the turns of connect + one query + close", async () => {
    const dir = `${r.url}?schema=turns`;
    for (const [name, value] of [["a", "1"], ["b", "2"]]) expect((await a2a(["publish", name, value], { dir })).code).toBe(0);
    const base = await floor();
    expect(base).toBeGreaterThan(1); // the relay saw the conversation

    const status = await a2a(["status"], { dir });
    expect({ code: status.code, listed: status.stdout.split("\n").filter((l) => /^[ab] /.test(l)).length, turns: r.turns() }).toEqual({ code: 0, listed: 2, turns: base });

    const wait = await a2a(["wait", "a"], { dir });
    expect({ code: wait.code, out: wait.stdout, turns: r.turns() }).toEqual({ code: 0, out: "1", turns: base });
  });
});
