// Waking on PostgreSQL: a channel of lib/core/channel.ts is a LISTEN channel named
// "SCHEMA.NAME" (NAME as channelName gives it; one over the 63 bytes PostgreSQL allows is "#"
// and the 32 hex of that name's md5, as lib/pg/schema.ts's $S.channel computes it), and a
// notification's payload is the record's key (a slot's name). lib/pg/schema.ts's triggers send
// them at commit.
//
// Invariants:
// - one LISTEN per channel per process, shared by every waiter on it, on a client of the
//   waker's own (made on the first watch), whose one connection holds the LISTENs;
// - a waiter is told "look at everything" (undefined) when its LISTEN is in place and again
//   after every reconnect: a notification sent while the connection was down is lost, so the
//   check after it is what misses nothing; and while its LISTEN is not in place (being sent,
//   or lost and not back), whatever another channel of the waker is told it is told to look
//   again: an event there may follow one of its own it could not hear (mail sent before the
//   publish that ends a wait: a2a mcp's unread note counts on being told of it);
// - and every `recheckMs` besides, the slow safety net for notifications that never come (a
//   pooler in transaction mode drops LISTEN, a listener that has not noticed it is cut off): one
//   timer for every channel, each tick telling them all in the same turn, so the tick on which a
//   wait sees a publish has told the inbox of mail sent before it (a timer per channel ticked at
//   its own phase: with the LISTENs down, a2a mcp's unread note could miss that mail);
// - a channel's LISTEN stays LINGER_MS after its last waiter leaves: a process that waits again
//   (a lib caller's loop of waits, a claimer's next claim) finds it in place. Without it the
//   last UNLISTEN closes the client's LISTEN connection (Bun.SQL ends it when it holds no
//   channel), and the next wait connects again (startup, authentication) and LISTENs: several
//   round trips, and a wake that came meanwhile is found only by the check after the LISTEN;
// - the waker owns its reconnects: when the LISTENs' connection closes it drops them and
//   LISTENs again with backoff (RETRY_MIN_MS doubling to RETRY_MAX_MS) until it is back.
//   Bun.SQL would re-LISTEN by itself, but prints `bun:sql LISTEN ... failed, retrying` on
//   stderr for each failed try, which no option silences (Bun 1.4.5): a CLI user's stderr
//   carries a2a's words only.

import type { SQL } from "bun";
import { channelName, type Channel } from "../core/channel";
import { hashHex } from "../core/digest";
import type { Listener } from "../core/watch";

const MAX_CHANNEL_BYTES = 63;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;
const LINGER_MS = 10_000;
const NAMED_MAX = 32;

export function pgChannel(schema: string, ch: Channel | string): string {
  const name = `${schema}.${typeof ch === "string" ? ch : channelName(ch)}`;
  return Buffer.byteLength(name) <= MAX_CHANNEL_BYTES ? name : `#${hashHex("md5", name)}`;
}

// The LISTEN channels a watch of `ch` needs, each with the key that "look again" means on it:
// a wait on a few named slots listens on each slot's own channel (`slot:NAME`, which the slots'
// trigger wakes beside `slots`), so a publish wakes only its slot's waiters, not every waiter on
// the bus; a tick or a LISTEN put in place then rechecks that slot alone. A wait on many names
// (past NAMED_MAX, a LISTEN round trip each) or on every slot listens on `slots`.
export function listenChannels(schema: string, ch: Channel): { name: string; key: string | undefined; broad?: string }[] {
  if (ch.on === "slots" && ch.names && ch.names.length <= NAMED_MAX) {
    const broad = pgChannel(schema, { on: "slots" });
    return ch.names.map((n) => ({ name: pgChannel(schema, `slot:${n}`), key: n, broad }));
  }
  return [{ name: pgChannel(schema, ch), key: undefined }];
}

interface Listening {
  listeners: Set<Listener>;
  whole: string | undefined; // the key of "look again" (a tick, a LISTEN in place): all, or the one slot
  broad?: string; // a slot's own channel: what to listen on instead on a bus that does not wake it
  sub?: { unlisten(): Promise<void> }; // its LISTEN, while in place
  pending: boolean; // a LISTEN is being sent
  linger?: ReturnType<typeof setTimeout>; // no waiter left: when its LISTEN ends
}

export interface Waker {
  watch(ch: Channel, listener: Listener): () => void;
  // The operations found that the server is no longer the primary (`repick` only): LISTEN
  // again on the one that is, even though this connection to the old one is still up.
  reconnect(): void;
  close(): Promise<void>;
}

// `connect(onclose)` makes the waker's client; `onclose` is to be called when one of its
// connections closes (Bun.SQL's option of that name). `repick`: the store lists several
// servers, and a lost connection makes a new client, so the LISTENs go to whichever server
// accepts writes now (lib/pg/primary.ts): after a failover, the promoted standby.
// `narrow()`: whether the bus wakes slots' own channels (lib/pg/schema.ts slotChannels, asked on
// the operations' connection: a query on this client would open a connection beside its
// LISTENs' own); where it does not, a wait on named slots listens on `slots` under its own channel's entry, and its
// check, which looks at the key, passes over the other slots' changes.
export function pgWaker(connect: (onclose: () => void) => Promise<SQL>, schema: string, recheckMs: number, repick = false, narrow: () => Promise<boolean> = async () => true): Waker {
  const channels = new Map<string, Listening>();
  let sql: Promise<SQL> | undefined;
  let narrowed: Promise<boolean> | undefined; // narrow's answer on the current client
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let backoffMs = RETRY_MIN_MS;
  let ticker: ReturnType<typeof setInterval> | undefined;
  // The one timer of the ticks (see the header): it keeps the process alive while a channel has
  // a waiter, and ends with the last channel.
  const ticking = () => {
    if (!channels.size || closed) return void (clearInterval(ticker), (ticker = undefined));
    ticker ??= setInterval(() => [...channels.values()].forEach((l) => own(l, l.whole)), recheckMs);
    if ([...channels.values()].some((l) => l.listeners.size)) ticker.ref?.();
    else ticker.unref?.();
  };
  const own = (l: Listening, key: string | undefined) => {
    for (const f of [...l.listeners]) f(key);
  };
  const tell = (l: Listening, key: string | undefined) => {
    own(l, key);
    for (const c of [...channels.values()]) if (c !== l && !c.sub) own(c, c.whole); // deaf: see the header
  };
  const schedule = () => {
    if (retry || closed) return;
    retry = setTimeout(() => {
      retry = undefined;
      for (const [name, l] of channels) if (!l.sub && !l.pending) listen(name, l);
    }, backoffMs);
    backoffMs = Math.min(backoffMs * 2, RETRY_MAX_MS);
  };
  const listen = (name: string, l: Listening) => {
    l.pending = true;
    // Its closing matters while it is the waker's client, not once dropped for another.
    const client: Promise<SQL> = (sql ??= connect(() => sql === client && lost()));
    client
      .then(async (s) => {
        const on = l.broad && !(await (narrowed ??= narrow().catch(() => false))) ? l.broad : name;
        return s.listen(on, (payload: string) => tell(l, payload || l.whole), () => tell(l, l.whole));
      })
      .then(
        (sub) => {
          l.pending = false;
          if (channels.get(name) !== l || closed) return void sub.unlisten().catch(() => {});
          l.sub = sub;
          backoffMs = RETRY_MIN_MS;
        },
        () => {
          l.pending = false; // not listening: the checks' own queries say why, the timer rechecks
          if (repick && sql === client) drop(); // no server accepted writes, or it failed: choose again
          if (channels.get(name) === l) schedule();
        },
      );
  };
  // The LISTENs' connection closed. Dropping every LISTEN now (synchronously, in Bun's close
  // callback) leaves Bun's listener with no channel, which cancels its own retries.
  const lost = () => {
    if (closed) return;
    for (const l of channels.values()) {
      void l.sub?.unlisten().catch(() => {});
      l.sub = undefined;
    }
    if (repick) drop();
    schedule();
  };
  const drop = () => {
    const old = sql;
    sql = undefined;
    narrowed = undefined;
    void old?.then((s) => s.close({ timeout: 0 })).catch(() => {});
  };
  const end = async (name: string, l: Listening) => {
    channels.delete(name);
    ticking();
    clearTimeout(l.linger);
    const sub = l.sub;
    l.sub = undefined;
    await sub?.unlisten();
  };
  const watchOne = (name: string, whole: string | undefined, broad: string | undefined, listener: Listener): (() => void) => {
    let l = channels.get(name);
    if (!l) {
      const fresh: Listening = { listeners: new Set(), whole, broad, pending: false };
      channels.set(name, (l = fresh));
      listen(name, fresh);
    }
    if (l.linger) {
      clearTimeout(l.linger);
      l.linger = undefined;
    }
    l.listeners.add(listener);
    ticking();
    const mine = l;
    return () => {
      mine.listeners.delete(listener);
      if (mine.listeners.size || channels.get(name) !== mine || mine.linger) return;
      // Neither lingers a process alive: close() ends them, and an exit needs no UNLISTEN.
      mine.linger = setTimeout(() => void end(name, mine).catch(() => {}), LINGER_MS);
      mine.linger.unref?.();
      ticking();
    };
  };
  return {
    watch(ch, listener) {
      const offs = listenChannels(schema, ch).map(({ name, key, broad }) => watchOne(name, key, broad, listener));
      return offs.length === 1 ? offs[0] : () => offs.forEach((off) => off());
    },
    reconnect() {
      if (repick && sql) lost();
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      ticking();
      await Promise.all([...channels].map(([name, l]) => end(name, l).catch(() => {})));
      await sql?.then((s) => s.close({ timeout: 0 })).catch(() => {});
    },
  };
}
