// The PostgreSQL engine's lease storage (lib/leases/storage.ts): a leased name is a row of
// `leases` holding its newest version, one column per field of the record (lib/leases/lease.ts
// names them). lib/pg/schema.ts makes it.
//
// Invariants:
// - a change is a compare-and-set, as the file engine's chain is: the head is read, `next`
//   decides from it, and the decision is written as version + 1 by an update that lands only
//   where the row is still at the version read (a name with no row yet: an insert that lands
//   only where none was made meanwhile); a lost race reads again and decides again. So of two
//   changes computed from version N exactly one is written as N + 1, and no lock is held
//   while `next` runs;
// - a row is removed only by gc once free for a day (lib/pg/gc.ts; a take then starts at 1
//   again, as on files), so until then a name's versions only grow;
// - a head is always a whole record (typed columns): nothing here is ever damaged;
// - every change wakes the name's channel at commit, from a trigger.

import type { SQL } from "bun";
import type { LeaseHead, LeaseRecord, LeaseStorage } from "../leases/storage";
import type { PgClient } from "./engine";

// The room's tables (lib/pg/schema.ts runs them; $S is the schema).
export const LEASE_TABLES = [
  `create table $S.leases (
     name text primary key,
     version integer not null check (version > 0),
     holder text,
     taken_at double precision not null,
     expires_at double precision not null,
     host text not null,
     pid integer not null,
     writer text not null default current_user,
     changed_at timestamptz not null default now())`,
  `create trigger stamp before insert or update on $S.leases for each row execute function $S.stamp()`,
  `create function $S.wake_lease() returns trigger language plpgsql as $$
   begin perform pg_notify($S.channel('lease:' || new.name), new.version::text); return null; end $$`,
  `create trigger wake after insert or update on $S.leases for each row execute function $S.wake_lease()`,
];

type Row = Omit<LeaseRecord, "a2a" | "name">; // the columns

// A row as the record a2a writes, its fields in the file engine's order.
const recordOf = (name: string, r: Row): LeaseRecord => ({
  a2a: 1, name, version: r.version, holder: r.holder, taken_at: r.taken_at, expires_at: r.expires_at, host: r.host, pid: r.pid,
});

async function head(sql: SQL, name: string): Promise<LeaseHead> {
  const rows: Row[] = await sql`select version, holder, taken_at, expires_at, host, pid from leases where name = ${name}`;
  return rows.length ? { version: rows[0].version, record: recordOf(name, rows[0]) } : { version: 0, record: undefined };
}

// Writes `next` as version h.version + 1 where the head is still `h`; the row written, or
// undefined on a lost race.
async function put(sql: SQL, name: string, h: LeaseHead, next: Omit<LeaseRecord, "version">): Promise<Row | undefined> {
  const { holder, taken_at, expires_at, host, pid } = next;
  const rows: Row[] = h.version === 0
    ? await sql`insert into leases (name, version, holder, taken_at, expires_at, host, pid)
        values (${name}, 1, ${holder}, ${taken_at}, ${expires_at}, ${host}, ${pid})
        on conflict (name) do nothing returning version, holder, taken_at, expires_at, host, pid`
    : await sql`update leases set version = version + 1, holder = ${holder}, taken_at = ${taken_at},
        expires_at = ${expires_at}, host = ${host}, pid = ${pid}
        where name = ${name} and version = ${h.version} returning version, holder, taken_at, expires_at, host, pid`;
  return rows[0];
}

export function pgLeases(pg: PgClient): LeaseStorage {
  return {
    head: (name) => pg.read(`reading lease ${name}`, (sql) => head(sql, name)),
    names: () => pg.read("listing leases", async (sql) => (await sql`select name from leases`).map((r: { name: string }) => r.name).sort()),
    // `create` and `repair` are the file engine's (a directory made only by a take; a damaged
    // file): a refused change writes nothing here, and a row is never damaged.
    change: (name, next) => pg.run(`changing lease ${name}`, async (sql) => {
      for (;;) {
        const h = await head(sql, name);
        const value = next(h);
        if (value === undefined) return { head: h, changed: false };
        const row = await put(sql, name, h, value);
        if (row) return { head: { version: row.version, record: recordOf(name, row) }, changed: true };
      }
    }),
    restore: (rec) => pg.run(`restoring lease ${rec.name}`, async (sql) => {
      const { name, version, holder, taken_at, expires_at, host, pid } = rec;
      return (await sql`insert into leases (name, version, holder, taken_at, expires_at, host, pid)
        values (${name}, ${version}, ${holder}, ${taken_at}, ${expires_at}, ${host}, ${pid})
        on conflict (name) do update set version = excluded.version, holder = excluded.holder, taken_at = excluded.taken_at,
          expires_at = excluded.expires_at, host = excluded.host, pid = excluded.pid
        where leases.version < excluded.version returning 1`).length > 0;
    }),
  };
}
