// Waking on PostgreSQL: a channel of lib/core/channel.ts is a LISTEN channel named
// "SCHEMA.NAME" (NAME as channelName gives it; one over the 63 bytes PostgreSQL allows is "#"
// and the 32 hex of that name's md5, as lib/pg/schema.ts's $S.channel computes it), and a
// notification's payload is the record's key (a slot's name). lib/pg/schema.ts's triggers send
// them at commit.
//
// Invariants:
// - one LISTEN per channel per process, shared by every waiter on it (the client keeps them on
//   one connection of their own);
// - a waiter is told "look at everything" (undefined) when its LISTEN is in place and again
//   after every reconnect: a notification sent while the connection was down is lost, so the
//   check after it is what misses nothing;
// - and every `recheckMs` besides, the slow safety net for notifications that never come (a
//   pooler in transaction mode drops LISTEN, a listener that has not noticed it is cut off).

import type { SQL } from "bun";
import { channelName, type Channel } from "../core/channel";
import { hashHex } from "../core/digest";
import type { Listener } from "../core/watch";

const MAX_CHANNEL_BYTES = 63;

export function pgChannel(schema: string, ch: Channel): string {
  const name = `${schema}.${channelName(ch)}`;
  return Buffer.byteLength(name) <= MAX_CHANNEL_BYTES ? name : `#${hashHex("md5", name)}`;
}


interface Listening {
  listeners: Set<Listener>;
  stop: Promise<(() => Promise<void>) | undefined>;
  timer: ReturnType<typeof setInterval>;
}

export interface Waker {
  watch(ch: Channel, listener: Listener): () => void;
  close(): Promise<void>;
}

export function pgWaker(sql: SQL, schema: string, recheckMs: number): Waker {
  const channels = new Map<string, Listening>();
  const tell = (l: Listening, key: string | undefined) => {
    for (const f of [...l.listeners]) f(key);
  };
  const end = async (name: string, l: Listening) => {
    channels.delete(name);
    clearInterval(l.timer);
    await (await l.stop)?.();
  };
  return {
    watch(ch, listener) {
      const name = pgChannel(schema, ch);
      let l = channels.get(name);
      if (!l) {
        const fresh: Listening = { listeners: new Set(), stop: Promise.resolve(undefined), timer: setInterval(() => tell(fresh, undefined), recheckMs) };
        fresh.stop = sql
          .listen(name, (payload: string) => tell(fresh, payload || undefined), () => tell(fresh, undefined))
          .then((sub) => () => sub.unlisten())
          .catch(() => undefined); // not listening: the checks' own queries say why, the timer rechecks
        channels.set(name, (l = fresh));
      }
      l.listeners.add(listener);
      const mine = l;
      return () => {
        mine.listeners.delete(listener);
        if (!mine.listeners.size && channels.get(name) === mine) void end(name, mine).catch(() => {});
      };
    },
    async close() {
      await Promise.all([...channels].map(([name, l]) => end(name, l).catch(() => {})));
    },
  };
}
