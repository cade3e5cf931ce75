// lib/pg/wake.ts's ticks, with no LISTEN in place (a server that refuses the connection, as while the
// LISTENs' connection is cut and not back): the ticks are then all that tells a waiter to look
// again, and one tick tells every channel in the same turn, so the tick on which a wait on a slot
// sees a publish has told the inbox too (a2a mcp's unread note counts on it: PROTOCOL.md §22).
// Here the inbox is watched from the slot's first tick on, so a timer of its own would tick just
// after the slot's, in a turn of its own.
import { expect, test } from "bun:test";
import type { SQL } from "bun";
import { pgChannel, pgWaker } from "../../lib/pg/wake";

test("with its LISTENs down, a PostgreSQL waker's tick tells every channel in one turn", async () => {
  const waker = pgWaker(() => Promise.reject(new Error("the server is down")) as Promise<SQL>, "a2a", 20);
  const next: { slot?: () => void; inbox?: () => void } = {};
  const event = (k: "slot" | "inbox") =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${k} tick`)), 20_000);
      next[k] = () => ((next[k] = undefined), clearTimeout(timer), resolve());
    });
  let inbox = 0;
  const offs = [waker.watch({ on: "slots", names: ["job"] }, () => next.slot?.())];
  try {
    await event("slot");
    offs.push(waker.watch({ on: "inbox", agent: "bob" }, () => (inbox++, next.inbox?.())));
    for (let i = 0; i < 5; i++) {
      await event("inbox");
      const before = inbox;
      await event("slot"); // resumed once the tick's turn is over
      expect(inbox).toBeGreaterThan(before);
    }
  } finally {
    offs.forEach((off) => off());
    await waker.close();
  }
});

// While a channel's LISTEN is not in place (here the inbox's is never answered, as while it is
// lost and not back), it hears nothing of its own: whatever another channel is told, it is told
// to look again, in the same turn, so a wait that a notification ends has had the inbox told.
test("a PostgreSQL waker tells a channel whose LISTEN is not in place of every other channel's event", async () => {
  const notify = new Map<string, (payload: string) => void>();
  const inboxChannel = pgChannel("a2a", { on: "inbox", agent: "bob" });
  const client = {
    listen: (on: string, onNotify: (payload: string) => void, onListen: () => void) =>
      on === inboxChannel
        ? new Promise(() => {})
        : (notify.set(on, onNotify), onListen(), Promise.resolve({ unlisten: async () => {} })),
    close: async () => {},
  } as unknown as SQL;
  const waker = pgWaker(async () => client, "a2a", 60_000);
  let inbox = 0;
  const told: string[] = [];
  const offs = [waker.watch({ on: "inbox", agent: "bob" }, () => void inbox++), waker.watch({ on: "slots", names: ["job"] }, (k) => void told.push(String(k)))];
  try {
    const slot = pgChannel("a2a", "slot:job");
    for (let i = 0; i < 100 && !notify.has(slot); i++) await Promise.resolve();
    expect(notify.has(slot)).toBe(true);
    const before = inbox;
    notify.get(slot)!("job");
    expect(told.at(-1)).toBe("job");
    expect(inbox).toBeGreaterThan(before);
  } finally {
    offs.forEach((off) => off());
    await waker.close();
  }
});
