// The PostgreSQL engine's presence storage (lib/presence/storage.ts): a peer is a row of `peers`
// holding its record as a2a encodes it (lib/presence/record.ts, checked again on every read),
// with the holder (host, pid, started_at) and the heartbeat beside it in columns, which is what
// "still ours" and "still the one judged gone" compare; the names remembered per directory are a
// row of `identities` per (host, cwd). lib/pg/schema.ts makes them.
//
// Invariants:
// - every operation is one statement, so none holds a lock across a round trip: take is an
//   insert that does nothing on a taken name (of two takers exactly one gets a row back); a
//   heartbeat is an insert whose conflict updates only a row of the same holder (the row is
//   locked and its holder compared by the server, so a record another holder wrote in between
//   is left as it is); remove and sweep are deletes whose where clause is the holder (and, for
//   a sweep, the heartbeat judged), so of two sweepers one removes it and a holder that beat
//   meanwhile keeps it;
// - nothing waits on presence (no channel), so no trigger notifies;
// - at process exit nothing asynchronous runs, and a query cannot be made synchronously:
//   removeAtExit leaves the record, which three missed heartbeats make gone for every reader
//   (on this host at once: its pid is dead) and the next lister sweeps.

import { resolve } from "node:path";
import { encodePeer, peerOf, type Peer } from "../presence/record";
import type { PresenceStorage } from "../presence/storage";
import type { PgClient } from "./engine";

// The room's tables (lib/pg/schema.ts runs them; $S is the schema). Every row carries its writer
// as the server saw it ($S.stamp), though presence does not vouch for it (PROTOCOL.md §15).
export const PRESENCE_TABLES = [
  `create table $S.peers (
     name text primary key,
     record text not null,
     host text not null,
     pid integer not null,
     started_at double precision not null,
     heartbeat double precision not null,
     writer text not null default current_user,
     changed_at timestamptz not null default now())`,
  `create trigger stamp before insert or update on $S.peers for each row execute function $S.stamp()`,
  `create table $S.identities (
     host text not null,
     cwd text not null,
     names text[] not null,
     writer text not null default current_user,
     changed_at timestamptz not null default now(),
     primary key (host, cwd))`,
  `create trigger stamp before insert or update on $S.identities for each row execute function $S.stamp()`,
];

// A row's record as a peer, or undefined: not JSON, not a peer record, or one naming another peer.
function readRow(name: string, text: string): Peer | undefined {
  try {
    const p = peerOf(JSON.parse(text));
    return p?.name === name ? p : undefined;
  } catch {
    return undefined;
  }
}

export function pgPresence(pg: PgClient): PresenceStorage {
  // The row of `p` as it is written: its record, and the holder and heartbeat the rules compare.
  const row = (p: Peer) => ({ name: p.name, record: encodePeer(p), host: p.host, pid: p.pid, started_at: p.started_at, heartbeat: p.heartbeat });
  return {
    take: (p) => pg.run(`registering as ${p.name}`, async (sql) => {
      return (await sql`insert into peers ${sql(row(p))} on conflict (name) do nothing returning name`).length > 0;
    }),
    put: (p) => pg.run(`registering as ${p.name}`, async (sql) => {
      await sql`insert into peers ${sql(row(p))} on conflict (name) do update
                set record = excluded.record, host = excluded.host, pid = excluded.pid, started_at = excluded.started_at, heartbeat = excluded.heartbeat`;
    }),
    beat: (p) => pg.run(`keeping the presence of ${p.name}`, async (sql) => {
      await sql`insert into peers ${sql(row(p))} on conflict (name) do update
                set record = excluded.record, heartbeat = excluded.heartbeat
                where peers.host = excluded.host and peers.pid = excluded.pid and peers.started_at = excluded.started_at`;
    }),
    remove: (p) => pg.run(`removing the presence of ${p.name}`, async (sql) => {
      return (await sql`delete from peers where name = ${p.name} and host = ${p.host} and pid = ${p.pid} and started_at = ${p.started_at} returning name`).length > 0;
    }),
    removeAtExit: () => {
      // Nothing synchronous can reach the server: the record ages out (header).
    },
    read: (name) => pg.read(`reading the presence of ${name}`, async (sql) => {
      const rows = await sql`select record from peers where name = ${name}`;
      return rows.length ? readRow(name, rows[0].record) : undefined;
    }),
    names: () => pg.read("listing peers", async (sql) => (await sql`select name from peers`).map((r: { name: string }) => r.name)),
    list: () => pg.read("listing peers", async (sql) => {
      const rows: { name: string; record: string }[] = await sql`select name, record from peers`;
      return rows.map((r) => readRow(r.name, r.record)).filter((p): p is Peer => p !== undefined);
    }),
    sweep: (judged) => pg.run(`sweeping the presence of ${judged.name}`, async (sql) => {
      const gone = await sql`delete from peers where name = ${judged.name} and host = ${judged.host} and pid = ${judged.pid}
                             and started_at = ${judged.started_at} and heartbeat = ${judged.heartbeat} returning name`;
      return gone.length > 0;
    }),
    remembered: (host, cwd) => pg.read(`reading the names remembered for ${cwd}`, async (sql) => {
      const rows = await sql`select names from identities where host = ${host} and cwd = ${resolve(cwd)}`;
      return rows.length && Array.isArray(rows[0].names) ? (rows[0].names as unknown[]).filter((n): n is string => typeof n === "string") : [];
    }),
    remember: (host, cwd, names) => pg.run(`remembering the names for ${cwd}`, async (sql) => {
      await sql`insert into identities (host, cwd, names) values (${host}, ${resolve(cwd)}, ${names})
                on conflict (host, cwd) do update set names = excluded.names`;
    }),
    identities: () => pg.run("listing the names remembered", async (sql) =>
      (await sql`select host, cwd, names from identities order by host, cwd`).map((r: { host: string; cwd: string; names: unknown }) => ({
        host: r.host, cwd: r.cwd, names: Array.isArray(r.names) ? r.names.filter((n): n is string => typeof n === "string") : [],
      }))),
  };
}
