// The PostgreSQL engine's reservation storage (lib/reservations/storage.ts): a reservation is a
// row of `reservations`, keyed by repository, holder and pattern. lib/pg/schema.ts makes it.
//
// Invariants:
// - a change is one transaction under the repository's advisory lock
//   (pg_advisory_xact_lock(hashtextextended('a2a reservations ' || repo, 0))): it reads the set,
//   `decide` runs, and only the rows that differ are deleted and inserted, then it commits; of
//   two changes of one repository the second reads what the first committed. A hash collision
//   of two repositories only makes them take turns;
// - a refused change (decide throws) rolls back: nothing written, nobody woken;
// - a row's writer is the role that wrote it (the stamp trigger); a row a change keeps as it
//   was keeps its writer;
// - every row inserted or deleted wakes { on: "reservations", repo } at commit, from a trigger.

import type { SQL } from "bun";
import type { Reservation, ReservationStorage } from "../reservations/storage";
import type { PgClient } from "./engine";
import { textArray } from "./text-array";

export const RESERVATION_TABLES = [
  `create table $S.reservations (
     repo text not null,
     pattern text not null,
     holder text not null,
     exclusive boolean not null,
     reason text,
     created_at double precision not null,
     expires_at double precision not null,
     host text not null,
     pid integer not null,
     writer text not null default current_user,
     changed_at timestamptz not null default now(),
     primary key (repo, holder, pattern))`,
  `create trigger stamp before insert or update on $S.reservations for each row execute function $S.stamp()`,
  `create function $S.wake_reservations() returns trigger language plpgsql as $$
   begin perform pg_notify($S.channel('reservations:' || coalesce(new.repo, old.repo)), ''); return null; end $$`,
  `create trigger wake after insert or delete on $S.reservations for each row execute function $S.wake_reservations()`,
];

type Row = Omit<Reservation, "a2a" | "repo">;

const recordOf = (repo: string, r: Row): Reservation => ({
  a2a: 1, repo, pattern: r.pattern, holder: r.holder, exclusive: r.exclusive, reason: r.reason,
  created_at: r.created_at, expires_at: r.expires_at, host: r.host, pid: r.pid, writer: r.writer,
});

const read = async (sql: SQL, repo: string): Promise<Reservation[]> =>
  ((await sql`select pattern, holder, exclusive, reason, created_at, expires_at, host, pid, writer from reservations where repo = ${repo}`) as Row[]).map((r) => recordOf(repo, r));

const keyOf = (r: Reservation) => `${r.holder}\0${r.pattern}`;
const same = (a: Reservation, b: Reservation) =>
  a.exclusive === b.exclusive && a.reason === b.reason && a.created_at === b.created_at && a.expires_at === b.expires_at && a.host === b.host && a.pid === b.pid;

export function pgReservations(pg: PgClient): ReservationStorage {
  return {
    live: (repo) => pg.read(`reading the reservations of ${repo}`, (sql) => read(sql, repo)),
    liveMany: async (repos) => {
      const wanted = [...new Set(repos)];
      if (!wanted.length) return [];
      const rows = (await pg.read(`reading the reservations of ${wanted[0]}${wanted.length > 1 ? ` and ${wanted.length - 1} more` : ""}`, (sql) =>
        sql`select repo, pattern, holder, exclusive, reason, created_at, expires_at, host, pid, writer from reservations where repo = any(${textArray(wanted)}::text[])`)) as (Row & { repo: string })[];
      return wanted.flatMap((repo) => rows.filter((r) => r.repo === repo).map((r) => recordOf(repo, r)));
    },
    change: (repo, decide) => pg.run(`changing the reservations of ${repo}`, (sql) =>
      sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(hashtextextended(${"a2a reservations " + repo}, 0))`;
        const current = await read(tx, repo);
        const next = decide(current);
        const before = new Map(current.map((r) => [keyOf(r), r]));
        const after = new Map(next.map((r) => [keyOf(r), r]));
        const gone = current.filter((r) => { const n = after.get(keyOf(r)); return !n || !same(n, r); });
        const fresh = next.filter((r) => { const o = before.get(keyOf(r)); return !o || !same(o, r); });
        for (const r of gone) await tx`delete from reservations where repo = ${repo} and holder = ${r.holder} and pattern = ${r.pattern}`;
        if (fresh.length) {
          await tx`insert into reservations ${tx(fresh.map((r) => ({
            repo, pattern: r.pattern, holder: r.holder, exclusive: r.exclusive, reason: r.reason,
            created_at: r.created_at, expires_at: r.expires_at, host: r.host, pid: r.pid,
          })))}`;
        }
        return next;
      })),
    repos: () => pg.read("listing the repositories with reservations", async (sql) => (await sql`select distinct repo from reservations order by repo`).map((r: { repo: string }) => r.repo)),
  };
}
