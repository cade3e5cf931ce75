// The PostgreSQL engine: one client per store (Bun.SQL, the runtime's own, loaded only for a
// database store: lib/bus.ts imports this module when the store names one), the schema made on
// first use, waking by LISTEN/NOTIFY, and each room's storage on tables (lib/pg/<room>.ts).
// docs/ENGINE.md has the design, docs/PROTOCOL.md the contract every engine keeps.
//
// Invariants:
// - nothing connects until the first operation; a failure to connect or a server error
//   reaches the caller as an A2AError worded by lib/pg/connect.ts (never with a password);
// - the schema is assumed current, so an operation costs its own statements only; a write
//   that finds the schema or a table missing (a fresh database, an older version) migrates it
//   (lib/pg/schema.ts) and runs once more; a read that does makes the schema in a transaction,
//   reads, and rolls back, so its answer is the empty bus's and nothing is made;
// - a process holds one connection for its operations and one for its LISTENs (a CLI command
//   makes the first only, a waiter both); close() ends them.

import { SQL } from "bun";
import type { Store } from "../core/config";
import type { Channel } from "../core/channel";
import type { Listener } from "../core/watch";
import { A2AError, arg, text } from "../core/errors";
import type { Engine } from "../engine/engine";
import { pgError, targetOf, type Target } from "./connect";
import { noServerReport, pickPrimary, serversCheck, UNREACHABLE, type Chosen, type MakeClient } from "./primary";
import { gcDatabase } from "./gc";
import { pgBlobs } from "./blobs";
import { pgLeases } from "./leases";
import { pgReservations } from "./reservations";
import { denied, migrate, migrateIn, schemaScript, SCHEMA_VERSION, slotChannels } from "./schema";
import { pgMail } from "./mail";
import { pgPresence } from "./presence";
import { pgSessions } from "./sessions";
import { pgSlots } from "./slots";
import { pgTasks } from "./tasks";
import { pgTopics } from "./topics";
import { pgSearch } from "./search";
import { pgWaker } from "./wake";

// The safety net's interval when A2A_POLL_MS is not set: notifications do the waking, so this
// only bounds how late a lost one is noticed.
export const PG_RECHECK_MS = 2_000;

// The connection as the rooms' storage uses it.
export interface PgClient {
  target: Target;
  // Runs `fn` on the client; `doing` words a failure ("changing slot x").
  run<T>(doing: string, fn: (sql: SQL) => Promise<T>): Promise<T>;
  // The same for a read, which changes nothing: on a schema not made yet it answers as the
  // empty bus would, and leaves no schema behind (as a read of a directory store makes none).
  read<T>(doing: string, fn: (sql: SQL) => Promise<T>): Promise<T>;
  watch(channel: Channel, listener: Listener): () => void;
  close(): Promise<void>;
}

// And the Engine on it (lib/engine/engine.ts): each room's storage on tables, waking by
// LISTEN, gc on rows (lib/pg/gc.ts), doctor's checks of the server (lib/pg/doctor.ts), the
// schema made or migrated on purpose, and the SQL that makes it, for a DBA (no connection).
export type PgEngine = PgClient & Engine;

// On a database, members are roles, not the OS users of a group.
function noGroup(group: string | undefined): void {
  if (group === undefined) return;
  throw new A2AError("EUSAGE", text`${arg("shared")} is for a directory store: on PostgreSQL each member connects as a role of its own; leave ${arg("shared")} out, and give each role the grants that a2a init ${arg("printSql")} ends with`);
}

// SQLSTATEs of a schema that is not there yet, or older than this a2a: undefined table,
// column, function or schema.
const MISSING = new Set(["42P01", "42703", "42883", "3F000"]);
const missing = (err: unknown) => MISSING.has((err as { errno?: string })?.errno ?? "");

// How long a session may sit inside a transaction without a statement, and how long a change
// waits for a row another writer holds (lib/fs/lock.ts gives up after 30 s too).
export const IDLE_IN_CHANGE_MS = 10_000;
const TURN_WAIT_MS = 30_000;

// Thrown out of a transaction to roll it back (Bun.SQL's begin rolls back on a throw).
const ROLLBACK = Symbol("rollback");

export function openPg(store: Store, recheckMs = PG_RECHECK_MS): PgEngine {
  const target = targetOf(store);
  const make: MakeClient = (t, onclose) => new SQL({
    url: t.url,
    database: t.database,
    ...(t.password !== undefined ? { password: t.password } : {}),
    // Unnamed statements: a command runs each statement once, and a named one costs a round trip
    // more (Parse and Describe answered before Bind and Execute): `send` took 16 round trips with
    // them, 9 without. A pooler in transaction mode (PgBouncer) cannot carry named ones either.
    prepare: false,
    max: 1, // a command runs one statement at a time; the pool would connect them all at once
    connection: {
      search_path: t.schema,
      // A writer frozen in the middle of a change (a stopped process, a laptop shut, a network
      // cut) holds its rows' locks: the server ends its session after this, as a stale lock
      // is broken on files (a2a's own transactions never idle: each decision is synchronous).
      idle_in_transaction_session_timeout: `${IDLE_IN_CHANGE_MS}ms`,
      lock_timeout: `${TURN_WAIT_MS}ms`, // and a change waits this long for its turn at most
    },
    connectionTimeout: t.connectTimeoutSec, // lib/pg/connect.ts CONNECT_TIMEOUT_SEC
    ...(onclose ? { onclose } : {}),
  });
  // One server: its client, made now (it connects on first use). Several: the one that accepts
  // writes, chosen on first use and again after a failover (lib/pg/primary.ts).
  const single = target.candidates ? undefined : { sql: make(target), target };
  let chosen: Promise<Chosen> | undefined;
  let picked: Chosen | undefined; // what `chosen` resolved to
  const current = (): Chosen | Promise<Chosen> => {
    if (single) return single;
    const picking = (chosen ??= pickPrimary(target, make).then((c) => (picked = c)));
    picking.catch(() => chosen === picking && (chosen = undefined));
    return picking;
  };
  // The chosen server failed under an operation in a way that says it may no longer be the
  // primary (unreachable, or refusing writes): the next operation chooses again.
  const failedOver = (c: Chosen, err: A2AError): boolean => {
    const unreached = err.data.outcome === undefined && UNREACHABLE.test(String(err.data.code ?? ""));
    if (single || !(err.data.outcome === "none" || unreached)) return false;
    if (picked === c) {
      chosen = picked = undefined; // at once: the retry that follows must not get this one again
      void c.sql.close({ timeout: 0 }).catch(() => {});
      waker.reconnect(); // its LISTENs may be on the same old server, still up
    }
    return true;
  };
  let migrated: Promise<number> | undefined;
  const waker = pgWaker(async (onclose) => (single ? make(target, onclose) : (await pickPrimary(target, make, onclose)).sql), target.schema, recheckMs, !single, async () => { const c = await current(); return slotChannels(c.sql, c.target); }); // its own client: lib/pg/wake.ts
  // An inbox's notification carries the message's arrival number, not its id (any role may
  // listen: lib/pg/mail-tables.ts wake_inbox); the id is looked up as this reader, whom
  // row-level security shows it. A number that names nothing now (moved on, not ours) is no event.
  const byArrival = (agent: string, listener: Listener): Listener => (key) => {
    if (key === undefined || !/^\d+$/.test(key)) return listener(undefined);
    Promise.resolve(current()).then(({ sql }) => sql`select id from messages where agent = ${agent} and arrived = ${key}::bigint`).then(
      (rows: { id: string }[]) => rows.length && listener(rows[0].id),
      () => listener(undefined),
    );
  };
  const runOn = async <T>({ sql, target: t }: Chosen, doing: string, fn: (sql: SQL) => Promise<T>): Promise<T> => {
    try {
      return await fn(sql);
    } catch (err) {
      if (!missing(err)) throw pgError(err, t, doing);
    }
    try {
      await (migrated ??= migrate(sql, t));
      return await fn(sql);
    } catch (err) {
      migrated = undefined;
      throw pgError(err, t, doing);
    }
  };
  const readOn = async <T>({ sql, target: t }: Chosen, doing: string, fn: (sql: SQL) => Promise<T>): Promise<T> => {
    try {
      return await fn(sql);
    } catch (err) {
      if (!missing(err)) throw pgError(err, t, doing);
    }
    let answer: T | undefined;
    try {
      await sql.begin(async (tx) => {
        await migrateIn(tx, t.schema);
        answer = await fn(tx);
        throw ROLLBACK;
      });
    } catch (err) {
      if (err !== ROLLBACK) throw pgError(await denied(sql, t, err), t, doing);
    }
    return answer as T;
  };
  // An operation that changed nothing on a server that is no longer the primary runs once more
  // on the one that is now; one whose outcome is unknown is reported (lib/pg/connect.ts).
  const once = async <T>(on: typeof runOn, doing: string, fn: (sql: SQL) => Promise<T>): Promise<T> => {
    const c = await current();
    try {
      return await on(c, doing, fn);
    } catch (err) {
      if (!(err instanceof A2AError) || !failedOver(c, err)) throw err;
    }
    return on(await current(), doing, fn);
  };
  const client: PgClient = {
    target,
    run: (doing, fn) => once(runOn, doing, fn),
    read: (doing, fn) => once(readOn, doing, fn),
    watch: (channel, listener) => waker.watch(channel, channel.on === "inbox" ? byArrival(channel.agent, listener) : listener),
    async close() {
      await waker.close();
      const c = single ?? (await chosen?.catch(() => undefined));
      await c?.sql.close({ timeout: 5 });
    },
  };
  const tasks = pgTasks(client, store);
  return {
    ...client,
    name: "postgres",
    tickMs: recheckMs,
    writer: "role",
    slots: pgSlots(client),
    mail: pgMail(client, store),
    tasks,
    presence: pgPresence(client),
    sessions: pgSessions(client),
    topics: pgTopics(client),
    leases: pgLeases(client),
    reservations: pgReservations(client),
    blobs: pgBlobs(client),
    search: pgSearch(client),
    // What a database notifies, read from each room's storage (the dashboard's, loaded for the ui only).
    feed: async (on, opts) => (await import("../dashboard/feed-storage")).watchStorageFeed(store, on, opts),
    gc: () => gcDatabase(store, client, tasks),
    assertStore: () => undefined, // a server holds the store: nothing to find missing before a removal
    checks: async () => {
      let c: Chosen;
      try {
        c = await current();
      } catch (err) {
        if (err instanceof A2AError && !single) return noServerReport(err);
        throw err;
      }
      const report = await (await import("./doctor")).serverChecks(c.sql, c.target, recheckMs); // loaded for doctor only
      if (!single) report.checks.splice(1, 0, serversCheck(target, c));
      return report;
    },
    async init(group) {
      noGroup(group);
      // A role that may not make the schema is told who can (lib/pg/schema.ts migrate).
      const found = await client.run("making the schema", (s) => migrate(s, target));
      return { kind: "database", created: found === 0, schema: target.schema, found, version: SCHEMA_VERSION };
    },
    script(group, rls) {
      noGroup(group);
      return schemaScript(target.schema, rls);
    },
  };
}
