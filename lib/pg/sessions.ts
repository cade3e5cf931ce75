// The PostgreSQL engine's session storage (lib/sessions/storage.ts): a session record is a row
// of `sessions` holding it as a2a encodes it (JSON, as on files), and who wrote it is the row's
// `writer`, set by the server from current_user ($S.stamp), never by the client. lib/pg/schema.ts
// makes the table.
//
// Invariants:
// - a writer speaks for this process's role as a file's owner does for its OS user (on files:
//   the same user, or root): the same role, or a superuser;
// - a write replaces a row only where the server finds it ours or this role may replace any
//   (a superuser, as root may rename over a member's file in a sticky directory): one statement,
//   whose conflict compares the writer on the locked row, so a record another role planted
//   after it was read is never written over, and the write says so (false);
// - a session's state is waited on (a2a wait-state): every write of a row notifies its channel
//   ("session:NAME", lib/core/channel.ts) from a trigger.

import { sessionRecordOf, type SessionRead, type SessionStorage } from "../sessions/storage";
import type { PgClient } from "./engine";

export const SESSION_TABLES = [
  `create table $S.sessions (
     name text primary key,
     record text not null,
     writer text not null default current_user,
     changed_at timestamptz not null default now())`,
  `create trigger stamp before insert or update on $S.sessions for each row execute function $S.stamp()`,
  `create function $S.wake_session() returns trigger language plpgsql as $$
   begin perform pg_notify($S.channel('session:' || new.name), new.name); return null; end $$`,
  `create trigger wake after insert or update on $S.sessions for each row execute function $S.wake_session()`,
];

function readRow(name: string, row: { record: string; writer: string; ours: boolean }): SessionRead {
  const writer = { user: row.writer, ours: row.ours };
  try {
    const record = sessionRecordOf(JSON.parse(row.record), name);
    if (record) return { kind: "ok", record, writer };
  } catch {
    // not JSON: damage, judged by its writer
  }
  return { kind: "damaged", writer };
}

export function pgSessions(pg: PgClient): SessionStorage {
  return {
    read: (name) => pg.read(`reading the session record of ${name}`, async (sql) => {
      const rows = await sql`select record, writer, writer = current_user or coalesce((select rolsuper from pg_roles where rolname = writer), false) as ours
                             from sessions where name = ${name}`;
      return rows.length ? readRow(name, rows[0]) : { kind: "absent" };
    }),
    write: (rec) => pg.run(`writing the session record of ${rec.name}`, async (sql) => {
      const rows = await sql`insert into sessions (name, record) values (${rec.name}, ${JSON.stringify(rec)})
                             on conflict (name) do update set record = excluded.record
                             where sessions.writer = current_user or current_setting('is_superuser') = 'on'
                             returning name`;
      return rows.length > 0;
    }),
    locate: (name) => `session ${name} in ${pg.target.where} (schema ${pg.target.schema}, table sessions)`,
  };
}
