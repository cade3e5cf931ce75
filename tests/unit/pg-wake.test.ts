// Waking on PostgreSQL (lib/pg/wake.ts), where the contract suite cannot look: what a process
// that waits again costs on the wire, counted through a relay (tests/harness/pg-wire.ts). Its
// LISTEN lingers after a wait, so the next wait on the channel finds it in place: without that,
// the last UNLISTEN ended the client's LISTEN connection and the next wait connected again.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { openBus } from "../../lib/bus";
import { freshDatabase, pgServer, pgSkipReason, type Database } from "../harness/pg";
import { until } from "../harness/run";
import { wireCounter, type WireCounter } from "../harness/pg-wire";

setDefaultTimeout(60_000);

const skip = pgSkipReason();
if (skip) console.warn(`pg-wake.test.ts: skipped: ${skip}`);

describe.skipIf(skip !== undefined)("waking on PostgreSQL", () => {
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

  test("a second wait in one process finds the channel's LISTEN in place: no new connection, no LISTEN sent again", async () => {
    const publisher = openBus({ dir: `${db.url}?schema=linger`, env: {} });
    const waiter = openBus({ dir: wire.url(db.name, "linger"), env: {} });
    try {
      await publisher.slots.publish("warm", "x");
      const listens = () => wire.simpleQueries().filter((q) => /^LISTEN .*linger\.slots/i.test(q)).length;
      const first = waiter.slots.wait(["first"], { timeoutMs: 30_000 });
      await until(() => listens() === 1, 30_000, "the first wait's LISTEN");
      const connected = wire.connections(); // the waiter's two: its operations', its LISTENs'
      await publisher.slots.publish("first", "one");
      expect((await first).kind).toBe("done");
      const second = waiter.slots.wait(["second"], { timeoutMs: 30_000 });
      await publisher.slots.publish("second", "two");
      const r = await second;
      expect(r.kind).toBe("done");
      expect(r.value.get("second")?.result).toBe("two");
      expect(listens()).toBe(1);
      expect(wire.simpleQueries().filter((q) => /^UNLISTEN/i.test(q))).toEqual([]);
      expect(wire.connections()).toBe(connected);
    } finally {
      await waiter.close();
      await publisher.close();
    }
  });
});
