// A writer frozen in the middle of a change (a stopped process, a laptop shut, a network cut)
// holds its row's lock on the server. The server ends such a session after IDLE_IN_CHANGE_MS
// (lib/pg/engine.ts), so the next writer gets its turn, as a stale lock is broken on files.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { openBus, type Bus } from "../../lib/bus";
import { openStore } from "../../lib/engine/open";
import { openPg, type PgEngine } from "../../lib/pg/engine";
import { freshDatabase, pgServer, pgSkipReason, type Database, type PgServer } from "../harness/pg";

setDefaultTimeout(60_000);

const skip = pgSkipReason();
if (skip) console.warn(`pg-turn.test.ts: skipped: ${skip}`);

describe.skipIf(skip !== undefined)("PostgreSQL: a change's turn", () => {
  let server: PgServer;
  let db: Database;
  let frozen: PgEngine;
  let other: Bus;
  beforeAll(async () => {
    server = (await pgServer())!;
    db = await freshDatabase(server);
    frozen = openPg(openStore({ dir: db.url, env: {} }));
    other = openBus({ dir: db.url, env: {} });
  });
  afterAll(async () => {
    await other?.close();
    await frozen?.close();
    await db?.drop();
  });

  test("a writer frozen inside a change is ended by the server, and the next writer of the row gets its turn", async () => {
    expect((await other.slots.publish("x", "1")).version).toBe(1);
    let inside = () => {};
    const isInside = new Promise<void>((r) => (inside = r));
    const stuck = frozen.run("freezing", (sql) =>
      sql.begin(async (tx) => {
        await tx`select 1 from slots where name = 'x' for update`;
        inside();
        await new Promise(() => {}); // frozen: no statement, no commit
      }));
    stuck.catch(() => {});
    await isInside;
    const idle = async () => (await server.admin(`select count(*) from pg_stat_activity where datname = '${db.name}' and state like 'idle in transaction%'`)).trim();
    expect(await idle()).toBe("1");
    // Waits for the row until the server ends the frozen session (before: for ever).
    expect((await other.slots.publish("x", "2")).version).toBe(2);
    expect(await idle()).toBe("0");
    expect((await other.slots.get("x"))?.result).toBe("2");
  });
});
