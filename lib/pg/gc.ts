// `a2a gc` on PostgreSQL: the sweeps the file engine makes on files (old tombstones and orphan
// chunks in lib/fs/gc.ts, lib/fs/task-sweep.ts, trimTopic in lib/fs/topics.ts), made on
// rows, with the same retention rules (docs/PROTOCOL.md §14). The sweeps that are rules of a room
// (slot expiry, claim recovery) gcDatabase below runs through the rooms, as lib/fs/gc.ts does; what
// the file engine sweeps that has no row here (temp files, lock state, pending task markers) is
// never made on PostgreSQL.
//
// Invariants:
// - every removal re-checks its condition in the statement that makes it (a delete whose where
//   clause is the condition, with the row locked as it is removed), so gc is safe beside live
//   writers: a row changed since it was read is no longer what was decided on, and stays;
// - what a rule decides from a record is read with the room's own decoder, and the delete names
//   what was read (a slot's whole record, a task's version), so a damaged row is never removed
//   and a task or lease that someone damaged is named in `damaged`, never changed;
// - nothing a reader counts goes: a chunk of a live run, a task an unfinished or damaged task
//   depends on, a topic's newest message (publishers number on from the counter row anyway, but
//   readers and `topics` show the newest).

import type { SQL } from "bun";
import { decodeRecord } from "../slots/record";
import { sweepExpired, TOMBSTONE_KEEP_SEC } from "../slots/slot";
import type { Store } from "../core/config";
import { nowSec } from "../core/time";
import type { EngineSweeps } from "../engine/engine";
import { readOf } from "../slots/storage";
import type { DamagedChain } from "../tasks/state";
import type { TaskStorage } from "../tasks/storage";
import { DEAD_KEEP_SEC, LEASE_KEEP_SEC, TASK_KEEP_SEC } from "../tasks/retention";
import type { PgClient } from "./engine";
import { textArray } from "./text-array";

export interface PgGcOptions {
  now: number; // unix seconds, this host's clock: task and lease records are dated on the writers'
  topicKeepSec: number | undefined; // A2A_TOPIC_KEEP; undefined: forever
}

// The part of gc's report (lib/maintenance/gc.ts GcReport) these sweeps fill.
export interface PgGcReport {
  tombstones: number;
  orphan_streams: string[];
  tasks_removed: number;
  leases_removed: number;
  topic_messages_removed: number;
  damaged: DamagedChain[];
}

// The engine's part of `a2a gc` (lib/maintenance/gc.ts adds reservations and blobs): the rooms'
// own sweeps (slot expiry, claim recovery) as on files, then the sweeps of rows below. Temp files
// and lock state are never made here.
export async function gcDatabase(store: Store, pg: PgClient, tasks: TaskStorage): Promise<EngineSweeps> {
  const slots = store.engine.slots;
  const names = await slots.names();
  const reads = await slots.readMany(names);
  const expired: string[] = [];
  for (const [i, name] of names.entries()) {
    const r = reads[i];
    if (r.kind === "absent" && r.expired && (await sweepExpired(store, name))) expired.push(name);
  }
  const mail = store.engine.mail;
  let claims_recovered = 0;
  for (const agent of await mail.agents()) claims_recovered += await mail.recover(agent);
  const swept = await pgGc(pg, tasks, { now: nowSec(), topicKeepSec: store.topicKeepSec });
  return { expired, tombstones: swept.tombstones, temp_files: 0, orphan_streams: swept.orphan_streams, stale_locks: [], claims_recovered, tasks_removed: swept.tasks_removed, leases_removed: swept.leases_removed, topic_messages_removed: swept.topic_messages_removed, damaged: swept.damaged };
}

export async function pgGc(pg: PgClient, tasks: TaskStorage, opts: PgGcOptions): Promise<PgGcReport> {
  const slots = await pg.run("removing old tombstones", (sql) => sweepSlots(sql, opts.now));
  const orphan_streams = await pg.run("removing orphaned chunks", (sql) => removeOrphanChunks(sql, slots.absent));
  const damaged: DamagedChain[] = [];
  let tasks_removed = 0;
  for (const queue of await tasks.queues()) tasks_removed += await sweepQueue(pg, tasks, queue, opts.now, damaged);
  const leases_removed = await pg.run("removing free leases", (sql) => removeFreeLeases(sql, opts.now));
  const topic_messages_removed = opts.topicKeepSec === undefined ? 0 : await pg.run("trimming topics", (sql) => trimTopics(sql, opts.topicKeepSec!));
  return { tombstones: slots.removed, orphan_streams, tasks_removed, leases_removed, topic_messages_removed, damaged };
}

interface SlotRow {
  name: string;
  record: string;
}

// Removes the tombstones last written more than TOMBSTONE_KEEP_SEC ago; returns how many, and
// the rows that read absent and stay (for the chunk sweep). Only rows that may be a tombstone
// are fetched (holding the word; the decoder decides, whatever the JSON's spacing): a live
// slot's result is never shipped to gc unless it holds the word.
async function sweepSlots(sql: SQL, now: number): Promise<{ removed: number; absent: SlotRow[] }> {
  const rows = (await sql`select name, record from slots where strpos(record, 'cleared') > 0`) as SlotRow[];
  const old: SlotRow[] = [];
  const absent: SlotRow[] = [];
  for (const r of rows) {
    const rec = decodeRecord(r.record);
    if (!rec || rec.name !== r.name || readOf(rec).kind !== "absent") continue;
    (rec.state === "cleared" && rec.updated_at < now - TOMBSTONE_KEEP_SEC ? old : absent).push(r);
  }
  if (!old.length) return { removed: 0, absent };
  // Still exactly the record read: a change since (a start, a publish) made it something else.
  const gone = await sql`delete from slots s using unnest(${old.map((r) => r.name)}::text[], ${old.map((r) => r.record)}::text[]) as c(name, record)
                         where s.name = c.name and s.record = c.record returning s.name`;
  return { removed: gone.length, absent };
}

// Removes the chunks of no live run: of a name with no record, or whose record reads absent (a
// tombstone: `absent`, exactly as read). Chunks only ever go with the change that ends their
// run, so these are rows written by hand; the file engine's crashes have no counterpart.
// Repeatable read: a change that starts a run on such a name (a start dropping these chunks, an
// append writing chunk 1 over one) either committed before this statement's snapshot, and its
// record is seen, or touches a row this delete removes, and one of the two fails: this one
// (SQLSTATE 40001, left for the next gc) or the other's wait ends on a row that is gone, as if
// gc had run first. A chunk inserted meanwhile is not in the snapshot, so it is never removed.
async function removeOrphanChunks(sql: SQL, absent: SlotRow[]): Promise<string[]> {
  try {
    return await sql.begin(async (tx) => {
      await tx`set transaction isolation level repeatable read`;
      const rows = await tx`
        with dead as (select * from unnest(${absent.map((r) => r.name)}::text[], ${absent.map((r) => r.record)}::text[]) as d(name, record)),
        gone as (
          delete from slot_chunks c where not exists (
            select 1 from slots s where s.name = c.name and not exists (select 1 from dead where dead.name = s.name and dead.record = s.record))
          returning c.name)
        select distinct name from gone order by name`;
      return rows.map((r: { name: string }) => r.name);
    });
  } catch (err) {
    if ((err as { errno?: string })?.errno === "40001") return [];
    throw err;
  }
}

// lib/fs/task-sweep.ts on rows: a task done TASK_KEEP_SEC ago or dead DEAD_KEEP_SEC ago (by its
// record's updated_at, as the file engine reads it) goes, with its add key, the claim keys that
// name it and its dependency rows, unless a task that is not done or dead, or a damaged one,
// depends on it. Damage is the room's decoder's to judge, so damaged dependants are found here
// first; the delete re-checks the rest itself: the task still at the version read (a retry of a
// dead task makes a new version, and it stays) and no dependant unfinished by its state column.
async function sweepQueue(pg: PgClient, tasks: TaskStorage, queue: string, now: number, damaged: DamagedChain[]): Promise<number> {
  const old = (await tasks.records(queue, await tasks.ids(queue), damaged)).filter(
    (r) => (r.state === "done" && now - r.updated_at >= TASK_KEEP_SEC) || (r.state === "dead" && now - r.updated_at >= DEAD_KEEP_SEC),
  );
  if (!old.length) return 0;
  return pg.run(`removing old tasks of queue ${queue}`, async (sql) => {
    const deps = (await sql`select dep_id, queue, id from task_deps where dep_queue = ${queue} and dep_id = any(${textArray(old.map((r) => r.id))}::text[])`) as { dep_id: string; queue: string; id: string }[];
    const held = new Set<string>(); // ids with a damaged dependant
    for (const dq of new Set(deps.map((d) => d.queue))) {
      const mine = deps.filter((d) => d.queue === dq);
      const hurt: DamagedChain[] = [];
      await tasks.records(dq, mine.map((d) => d.id), hurt);
      for (const h of hurt) for (const d of mine) if (d.id === h.name) held.add(d.dep_id);
    }
    const go = old.filter((r) => !held.has(r.id));
    if (!go.length) return 0;
    const [{ n }] = await sql`
      with gone as (
        delete from tasks t using unnest(${go.map((r) => r.id)}::text[], ${go.map((r) => r.version)}::int[]) as c(id, version)
        where t.queue = ${queue} and t.id = c.id and t.version = c.version and t.state in ('done', 'dead')
          and not exists (select 1 from task_deps k join tasks d on d.queue = k.queue and d.id = k.id
                          where k.dep_queue = t.queue and k.dep_id = t.id and d.state not in ('done', 'dead'))
        returning t.queue, t.id),
      keys as (delete from task_keys k using gone where k.queue = gone.queue and k.id = gone.id),
      claims as (delete from task_claim_keys k using gone where k.queue = gone.queue and k.id = gone.id),
      links as (delete from task_deps k using gone where (k.dep_queue = gone.queue and k.dep_id = gone.id) or (k.queue = gone.queue and k.id = gone.id))
      select count(*)::int as n from gone`;
    return n as number;
  });
}

// A lease free for LEASE_KEEP_SEC: run out that long ago (its expiry, the taker's clock), or
// released that long ago (when its row was last written, the server's clock: as the file
// engine dates a release by its file's mtime). A take racing this finds the row gone and makes
// it anew at version 1.
async function removeFreeLeases(sql: SQL, now: number): Promise<number> {
  const gone = await sql`delete from leases
    where (holder is null and changed_at <= now() - make_interval(secs => ${LEASE_KEEP_SEC}))
       or (holder is not null and expires_at <= ${now - LEASE_KEEP_SEC})
    returning name`;
  return gone.length;
}

// trimTopic on rows: a topic's messages written (the server's clock, as a file's mtime dates
// it) more than `keepSec` ago, oldest first, stopping at the first one kept and never its newest;
// a role removes only its own messages (a superuser, as root, any), passing over others'. Every
// reader reads by id > its position, so it passes over removed numbers at once, as the file
// engine's readers pass over numbers below the oldest present.
async function trimTopics(sql: SQL, keepSec: number): Promise<number> {
  const [{ n }] = await sql`
    with bound as (
      select topic, coalesce(min(id) filter (where changed_at >= now() - make_interval(secs => ${keepSec})), max(id)) as kept
      from topic_messages group by topic),
    gone as (
      delete from topic_messages m using bound b
      where m.topic = b.topic and m.id < b.kept and (m.writer = current_user or current_setting('is_superuser') = 'on')
      returning 1)
    select count(*)::int as n from gone`;
  return n as number;
}
