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
      const listens = () => wire.simpleQueries().filter((q) => /^LISTEN .*linger\.slot:job/i.test(q)).length;
      const first = waiter.slots.wait(["job"], { timeoutMs: 30_000 });
      await until(() => listens() === 1, 30_000, "the first wait's LISTEN");
      const connected = wire.connections();
      expect(connected).toBe(2); // the waiter's two: its operations', its LISTENs'
      await publisher.slots.publish("job", "one");
      expect((await first).kind).toBe("done");
      const second = waiter.slots.wait(["job"], { afterVersion: 1, timeoutMs: 30_000 });
      await publisher.slots.publish("job", "two");
      const r = await second;
      expect(r.kind).toBe("done");
      expect(r.value.get("job")?.result).toBe("two");
      expect(listens()).toBe(1);
      expect(wire.simpleQueries().filter((q) => /^UNLISTEN/i.test(q))).toEqual([]);
      // A wait on another slot LISTENs on that slot's channel, on the same connection.
      const third = waiter.slots.wait(["other"], { timeoutMs: 30_000 });
      await publisher.slots.publish("other", "three");
      expect((await third).kind).toBe("done");
      expect(wire.connections()).toBe(connected);
    } finally {
      await waiter.close();
      await publisher.close();
    }
  });

  test("a publish wakes the waiters of its own slot only: a wait on one slot is sent no notification of the others", async () => {
    const publisher = openBus({ dir: `${db.url}?schema=narrow`, env: {} });
    const waiter = openBus({ dir: wire.url(db.name, "narrow"), env: {} });
    try {
      await publisher.slots.publish("warm", "x");
      const before = wire.notifications();
      const waiting = waiter.slots.wait(["mine"], { timeoutMs: 30_000 });
      await until(() => wire.simpleQueries().some((q) => /^LISTEN .*narrow\.slot/i.test(q)), 30_000, "the wait's LISTEN");
      for (let i = 0; i < 20; i++) await publisher.slots.publish(`other${i}`, "not yours");
      await publisher.slots.publish("mine", "yours");
      const r = await waiting;
      expect(r.kind).toBe("done");
      expect(r.value.get("mine")?.result).toBe("yours");
      // Its own publish's notification, once; none of the twenty others' (one `slots` channel for
      // every waiter sent all 21 to every waiting session).
      expect(wire.notifications() - before).toBe(1);
    } finally {
      await waiter.close();
      await publisher.close();
    }
  });

  test("a list of the slots' names is told of slots appearing and going away, not of every publish", async () => {
    const publisher = openBus({ dir: `${db.url}?schema=names`, env: {} });
    const lister = openBus({ dir: wire.url(db.name, "names"), env: {} });
    const told: (string | undefined)[] = [];
    await publisher.slots.publish("warm", "x"); // the schema made, and its news out, before the list listens
    const off = await lister.slots.onNamesChange((name) => told.push(name));
    try {
      await until(() => wire.simpleQueries().some((q) => /^LISTEN .*names\.slot-names/i.test(q)) && told.includes(undefined), 30_000, "the list's LISTEN in place");
      told.length = 0;
      const before = wire.notifications();
      await publisher.slots.publish("x", "1"); // appears
      await until(() => told.includes("x"), 30_000, "x appearing");
      for (let i = 2; i <= 5; i++) await publisher.slots.publish("x", String(i)); // no news for a list
      await publisher.slots.clear("x"); // goes away
      await until(() => told.filter((n) => n === "x").length === 2, 30_000, "x going away");
      await publisher.slots.publish("x", "back"); // appears again
      await until(() => told.filter((n) => n === "x").length === 3, 30_000, "x appearing again");
      expect(wire.notifications() - before).toBe(3);
    } finally {
      off();
      await lister.close();
      await publisher.close();
    }
  });
});
