// The PostgreSQL engine's slot storage (lib/slots/storage.ts): a slot is a row of `slots`
// holding its record as a2a encodes it (lib/slots/record.ts, checked again on every read), the
// chunks of its current run rows of `slot_chunks`. lib/pg/schema.ts makes them.
//
// Invariants:
// - a change is a compare-and-set: the record is read (no lock), `decide` runs on it, and one
//   statement writes the new record only where the row still holds the record read (an insert
//   only where there is no row); where it does not, another change came first and the whole
//   change runs again on what it wrote (decide is synchronous and pure: running it twice is
//   safe). Two round trips, not four (BEGIN, select ... for update, write, COMMIT): the lock
//   held across a round trip bought nothing a compare on the record does not; and one for a
//   slot not there yet, whose insert is tried first and returns the record it found instead;
// - what a change writes (chunk, record, dropped chunks) is that one statement (data-modifying
//   CTEs that write only where the record was written), so it commits at once or not at all, and
//   the row's trigger wakes the slots channel at that commit. The rare decisions one statement
//   cannot say (a clear of damage; a chunk with its run's chunks dropped) run as a transaction
//   with the row locked, as every change once did;
// - readers never lock: they see the row before a change or after it.

import type { SQL } from "bun";
import { decodeRecord, encodeRecord } from "../slots/record";
import { readOf, type Decision, type ReadResult, type SlotStorage } from "../slots/storage";
import { transaction, unchanged } from "./connect";
import type { PgClient } from "./engine";
import { textArray } from "./text-array";

// A row's record: a2a's own (name and checks included), or damage someone wrote by hand.
function readRow(name: string, text: unknown): ReadResult {
  const record = typeof text === "string" ? decodeRecord(text) : undefined;
  return record && record.name === name ? readOf(record) : { kind: "corrupt" };
}

// The room's tables (lib/pg/schema.ts runs them; $S is the schema). Every row carries its writer
// as the server saw it ($S.stamp) and wakes the slots channel when it changes.
export const SLOT_TABLES = [
  `create table $S.slots (
     name text primary key,
     record text not null,
     writer text not null default current_user,
     changed_at timestamptz not null default now())`,
  `create table $S.slot_chunks (
     name text not null,
     n integer not null,
     body bytea not null, -- a chunk's bytes as given: text holds no NUL, a chunk may
     primary key (name, n))`,
  `create trigger stamp before insert or update on $S.slots for each row execute function $S.stamp()`,
  `create function $S.wake_slot() returns trigger language plpgsql as $$
   begin perform pg_notify($S.channel('slots'), case when tg_op = 'DELETE' then old.name else new.name end); return null; end $$`,
  `create trigger wake after insert or update or delete on $S.slots for each row execute function $S.wake_slot()`,
];

// Version 2: a slot's change also wakes the slot's own channel (`slot:NAME`), on which a wait for
// a few named slots listens (lib/pg/wake.ts listenChannels), so a publish wakes its own waiters
// and not every waiter on the bus; and `slot-names` when the slot appears or goes away (its row
// made or removed, or its record becoming or ceasing to be a tombstone), on which a list of the
// names listens (an MCP session that has read resources/list). A record is a2a's JSON with its
// keys in a fixed order (lib/slots/record.ts), so `,"state":"cleared",` is there only in a
// tombstone: no string value holds an unescaped quote. The trigger stays; its function is replaced.
export const SLOT_TABLES_2 = [
  `create or replace function $S.wake_slot() returns trigger language plpgsql as $$
   declare
     n text := case when tg_op = 'DELETE' then old.name else new.name end;
     was boolean := tg_op <> 'INSERT' and position(',"state":"cleared",' in old.record) = 0;
     live boolean := tg_op <> 'DELETE' and position(',"state":"cleared",' in new.record) = 0;
   begin
     perform pg_notify($S.channel('slots'), n);
     perform pg_notify($S.channel('slot:' || n), n);
     if was <> live then perform pg_notify($S.channel('slot-names'), n); end if;
     return null;
   end $$`,
];

const AGAIN = new Error("a concurrent change created the slot first");

// The one statement of a change: the record written where the row holds `old` (or, with `old`
// undefined, created where there is no row), with the decision's chunk stored and the run's
// chunks dropped only where it was. The count of rows written: 0 when another change came first.
// With `old` undefined it also returns the record it found instead (`found`), so a change whose
// first guess was "no slot yet" needs no read before it: see `change`.
async function compareAndSet(sql: SQL, name: string, old: string | undefined, text: string, chunk: Decision<unknown>["chunk"], drop: boolean): Promise<{ n: number; found?: string }> {
  const n = chunk ? chunk.n : null;
  const body = chunk ? Buffer.from(chunk.text, "utf8") : null;
  const rows = old === undefined
    ? await sql`with o as (select record from slots where name = ${name}),
                w as (insert into slots (name, record) select ${name}, ${text} where not exists (select 1 from o)
                      on conflict (name) do nothing returning name),
                c as (insert into slot_chunks (name, n, body) select name, ${n}::integer, ${body}::bytea from w where ${n}::integer is not null
                      on conflict (name, n) do update set body = excluded.body),
                d as (delete from slot_chunks where name = ${name} and ${drop}::boolean and exists (select 1 from w))
           select (select count(*)::int from w) as n, (select record from o) as found`
    : await sql`with w as (update slots set record = ${text} where name = ${name} and record = ${old} returning name),
                c as (insert into slot_chunks (name, n, body) select name, ${n}::integer, ${body}::bytea from w where ${n}::integer is not null
                      on conflict (name, n) do update set body = excluded.body),
                d as (delete from slot_chunks where name = ${name} and ${drop}::boolean and exists (select 1 from w))
           select count(*)::int as n from w`;
  return { n: rows[0].n, found: rows[0].found ?? undefined };
}

// A decision one statement can write (see the header); the others run `locked`.
const oneStatement = (d: Decision<unknown>) => !(d.removeDamaged || (d.chunk && d.dropChunks) || (!d.record && (d.chunk || d.dropChunks)));

export function pgSlots(pg: PgClient): SlotStorage {
  // The rare decisions one statement cannot say, with the row locked while `decide` runs.
  const locked = async <T>(sql: SQL, name: string, decide: (current: ReadResult) => Decision<T>): Promise<T> => {
    for (;;) {
      try {
        return await transaction(sql, async (tx) => {
          const rows = await tx`select record from slots where name = ${name} for update`;
          const d = decide(rows.length ? readRow(name, rows[0].record) : { kind: "absent" });
          if (d.chunk) {
            await tx`insert into slot_chunks (name, n, body) values (${name}, ${d.chunk.n}, ${Buffer.from(d.chunk.text, "utf8")})
                     on conflict (name, n) do update set body = excluded.body`;
          }
          if (d.record) {
            const text = encodeRecord(d.record);
            if (rows.length) await tx`update slots set record = ${text} where name = ${name}`;
            else if (!(await tx`insert into slots (name, record) values (${name}, ${text}) on conflict (name) do nothing returning name`).length) throw AGAIN;
          } else if (d.removeDamaged && rows.length) await tx`delete from slots where name = ${name}`;
          if (d.dropChunks) await tx`delete from slot_chunks where name = ${name}`;
          return d.value;
        });
      } catch (err) {
        if (err !== AGAIN) throw err;
      }
    }
  };
  // A change first guesses that the slot is not there yet (a publish of a new name, the most
  // common write): the decision on "absent" goes to the statement that creates the row only where
  // there is none and otherwise returns the record it found. A new slot costs one round trip, not
  // two; an existing one what it did (that statement instead of the read, then the compare-and-set
  // on the record it returned). A decision the guess cannot write (it throws, writes nothing, or
  // needs the row locked) is not tried: the record is read first. decide is pure: it runs again.
  const change = async <T>(sql: SQL, name: string, decide: (current: ReadResult) => Decision<T>): Promise<T> => {
    // A connection lost under this read changed nothing (unchanged: the command says so).
    const readOld = async () => ((rows) => (rows.length ? (rows[0].record as string) : undefined))(await unchanged(sql`select record from slots where name = ${name}`));
    let guessing = true;
    let old: string | undefined;
    for (;;) {
      let d: Decision<T>;
      try {
        d = decide(old !== undefined ? readRow(name, old) : { kind: "absent" });
      } catch (err) {
        if (!guessing) throw err;
        d = { value: undefined as T };
      }
      if (guessing && (!d.record || !oneStatement(d))) {
        guessing = false;
        old = await readOld();
        continue;
      }
      if (!oneStatement(d)) return locked(sql, name, decide);
      if (!d.record) return d.value; // nothing to write: the record read is the answer
      const r = await compareAndSet(sql, name, old, encodeRecord(d.record), d.chunk, !!d.dropChunks);
      if (r.n) return d.value;
      guessing = false;
      old = old === undefined && r.found !== undefined ? r.found : await readOld();
    }
  };
  return {
    read: (name) => pg.read(`reading slot ${name}`, async (sql) => {
      const rows = await sql`select record from slots where name = ${name}`;
      return rows.length ? readRow(name, rows[0].record) : { kind: "absent" };
    }),
    readMany: (names) => pg.read("reading slots", async (sql) => {
      const rows = await sql`select name, record from slots where name = any(${textArray(names)}::text[])`;
      const got = new Map<string, unknown>(rows.map((r: { name: string; record: string }) => [r.name, r.record]));
      return names.map((n) => (got.has(n) ? readRow(n, got.get(n)) : { kind: "absent" }));
    }),
    readAll: () => pg.read("listing slots", async (sql) =>
      (await sql`select name, record from slots`).map((r: { name: string; record: string }) => ({ name: r.name, read: readRow(r.name, r.record) })),
    ),
    names: () => pg.read("listing slots", async (sql) => (await sql`select name from slots`).map((r: { name: string }) => r.name)),
    has: (name) => pg.read(`reading slot ${name}`, async (sql) => (await sql`select 1 from slots where name = ${name}`).length > 0),
    change: (name, decide) => pg.run(`changing slot ${name}`, (sql) => change(sql, name, decide)),
    chunks: (name, after, upTo) => pg.read(`reading the chunks of slot ${name}`, async (sql) => {
      const rows = await sql`select n, body from slot_chunks where name = ${name} and n > ${after} and n <= ${upTo} order by n`;
      const out: string[] = [];
      // A gap: a concurrent start dropped this run's chunks; the caller sees the new run next.
      for (const r of rows as { n: number; body: Uint8Array }[]) {
        if (r.n !== after + out.length + 1) break;
        out.push(Buffer.from(r.body).toString("utf8"));
      }
      return out;
    }),
    locate: (name) => `slot ${name} in ${pg.target.where} (schema ${pg.target.schema}, table slots)`,
  };
}
