// The PostgreSQL engine's task storage (lib/tasks/storage.ts): a task is one row of `tasks`
// holding its head as a2a encodes it (lib/tasks/record.ts, checked again on every read), with
// its version and stored state as columns; `task_deps` says who waits for whom, `task_keys` and
// `task_claim_keys` hold the add and claim keys, by hash as the file engine names their files (a
// key is any text, and a text column cannot hold a NUL). lib/pg/task-tables.ts has them.
//
// Invariants:
// - a change is one transaction: the row is locked (select ... for update) while `next` decides,
//   and the version written is the one read + 1, so versions only grow and of two changes
//   computed from one head the second decides again on what the first wrote; a row that is not
//   there yet is created by an insert a concurrent creator may win, and then the whole change
//   runs again (next is synchronous and pure: running it twice is safe). With the caller's
//   guess of the head (TaskStorage.change `seen`), taking the turn and writing are one statement
//   that writes only where the row is still that head: BEGIN, it, COMMIT. The COMMIT stays a
//   round trip of its own: a connection lost before it was sent changed nothing, and the
//   command can say so (PROTOCOL.md §8 Connection loss);
// - a claim's candidates are read with their heads (up to CANDIDATE_RECORD_BYTES each), so a
//   claim passes over a live claim in front of it without a round trip;
// - an add is one transaction (key, dependencies, version 1): a failed add leaves nothing, and
//   a second add with the key waits at the key's row for the first to commit, then returns its id;
// - the candidates are the rows whose state column is ready or claimed: the column is written
//   with the record, so it is never stale, and the file engine's @open markers have no
//   counterpart (dropCandidate has nothing to drop);
// - waking is the table's trigger, at commit: every change of a task wakes its channel; one
//   written ready wakes its queue's; one written done wakes the queues and channels of its
//   unfinished dependants, one written dead their channels, down the whole graph (they die
//   with it);
// - a version is at most RECORD_LIMIT bytes encoded (lib/core/record.ts fitRecord), as on files;
// - durable: every change is a synchronous commit, a claim too (the file engine leaves claims
//   unsynced; an asynchronous commit here could lose one and write its version number again);
// - readers never lock: they see the row before a change or after it.

import type { SQL } from "bun";
import type { Store } from "../core/config";
import { hashHex } from "../core/digest";
import { A2AError, type Damage } from "../core/errors";
import { fitRecord } from "../core/record";
import { encodeTask, taskDecoder, type Dep, type TaskRecord } from "../tasks/record";
import type { DamagedChain } from "../tasks/state";
import type { TaskHead, TaskStorage } from "../tasks/storage";
import { transaction } from "./connect";
import type { PgClient } from "./engine";
import { pgTaskRestore } from "./task-restore";
import { textArray } from "./text-array";

// A key's row, hashed as the file engine names a key's file (lib/fs/tasks.ts).
const keyHash = (key: string) => hashHex("sha256", key).slice(0, 32);
const claimKeyHash = (assignee: string, key: string) => keyHash(`${assignee}\n${key}`);

interface Row {
  id: string;
  version: number;
  record: string;
}

// A concurrent change created the row first: run the change again on it.
const AGAIN = new Error("a concurrent change created the task first");
// Version 1 exists already (a concurrent add of the same id): undo this add, return the id.
const TAKEN = new Error("the task exists already");

export function pgTasks(pg: PgClient, store: Store): TaskStorage {
  const locate = (queue: string, id: string) => `task ${id} of queue ${queue} in ${pg.target.where} (schema ${pg.target.schema}, table tasks)`;
  // A version as written, refused (ETOOBIG, before anything is written) when it is over the
  // bound every reader accepts, as the file engine refuses it (docs/PROTOCOL.md §3): a payload
  // and a result of control characters pass their own checks and still come out over it.
  const encoded = (queue: string, id: string, rec: TaskRecord): string =>
    fitRecord(store, encodeTask(rec), `the record of task ${id} of queue ${queue} (version ${rec.version})`);

  // A row's record, or why it is not one a2a wrote (someone changed it by hand).
  const decode = (queue: string, row: Row): TaskRecord | Damage => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(row.record);
    } catch {
      return { file: locate(queue, row.id), why: "not JSON" };
    }
    const rec = parsed && typeof parsed === "object" ? taskDecoder(row.id, queue)(parsed) : undefined;
    return rec && rec.version === row.version ? rec : { file: locate(queue, row.id), why: "not an a2a record" };
  };
  const whole = (r: TaskRecord | Damage): TaskRecord | undefined => ("a2a" in r ? r : undefined);
  const damage = (d: Damage) =>
    new A2AError("EIO", `${d.file} is ${d.why}: check the row; a2a never writes one like it`, { data: { ...d, damaged: true } });

  const headOf = (queue: string, row: Row | undefined, repair: boolean): TaskHead => {
    if (!row) return { version: 0, record: undefined };
    const r = decode(queue, row);
    if ("a2a" in r) return { version: row.version, record: r };
    if (repair) return { version: row.version, record: undefined, damaged: r };
    throw damage(r);
  };

  // The guess of a change (the head its caller read): its next record written in the statement
  // that takes the row's turn, where the row is still that head. Else the row as it is now:
  // `mine` with its turn held, or (ifFree) not, as last committed, when another writer holds
  // it; no row when there is none. One round trip for what took three (take the turn, write;
  // with ifFree and a busy row, look again); a stale guess costs what no guess would.
  const guessed = async (tx: SQL, queue: string, id: string, seen: TaskRecord, written: TaskRecord, ifFree: boolean) => {
    const text = encoded(queue, id, written);
    const was = encodeTask(seen);
    return (await (ifFree
      ? tx`with l as (select version, record from tasks where queue = ${queue} and id = ${id} for update skip locked),
               w as (update tasks t set version = ${written.version}, state = ${written.state}, record = ${text} from l
                     where t.queue = ${queue} and t.id = ${id} and l.version = ${seen.version} and l.record = ${was} returning t.id)
           select t.id, coalesce(l.version, t.version) as version, coalesce(l.record, t.record) as record, l.version is not null as mine,
                  exists (select 1 from w) as written
           from tasks t left join l on true where t.queue = ${queue} and t.id = ${id}`
      : tx`with l as (select version, record from tasks where queue = ${queue} and id = ${id} for update),
               w as (update tasks t set version = ${written.version}, state = ${written.state}, record = ${text} from l
                     where t.queue = ${queue} and t.id = ${id} and l.version = ${seen.version} and l.record = ${was} returning t.id)
           select ${id}::text as id, l.version, l.record, true as mine, exists (select 1 from w) as written from l`)) as (Row & { mine: boolean; written: boolean })[];
  };

  const change = async (sql: SQL, queue: string, id: string, next: (head: TaskHead) => TaskRecord | undefined, repair: boolean, ifFree: boolean, seen?: TaskRecord) => {
    // What `next` makes of the guess, when it makes a change of it (a refusal is decided again
    // on the head as it is: the guess may be stale).
    let guess: TaskRecord | undefined;
    if (seen && !repair) {
      try {
        const value = next({ version: seen.version, record: seen });
        if (value) guess = { ...value, version: seen.version + 1 };
      } catch {
        guess = undefined;
      }
    }
    for (;;) {
      try {
        return await transaction(sql, async (tx): Promise<{ head: TaskHead; changed: boolean; busy?: true }> => {
          let rows: Row[];
          if (guess) {
            const got = await guessed(tx, queue, id, seen!, guess, ifFree);
            if (got[0]?.written) return { head: { version: guess.version, record: guess }, changed: true };
            if (got[0] && !got[0].mine) return { head: headOf(queue, got[0], repair), changed: false, busy: true };
            rows = got;
          } else {
            rows = (await (ifFree
              ? tx`select id, version, record from tasks where queue = ${queue} and id = ${id} for update skip locked`
              : tx`select id, version, record from tasks where queue = ${queue} and id = ${id} for update`)) as Row[];
          }
          if (ifFree && !rows.length) {
            // Locked by another writer, or not there: the head as last committed says which.
            const seenNow = (await tx`select id, version, record from tasks where queue = ${queue} and id = ${id}`) as Row[];
            if (seenNow.length) return { head: headOf(queue, seenNow[0], repair), changed: false, busy: true };
          }
          const head = headOf(queue, rows[0], repair);
          const value = next(head);
          if (value === undefined) return { head, changed: false };
          const written: TaskRecord = { ...value, version: head.version + 1 };
          const text = encoded(queue, id, written);
          if (rows.length) {
            await tx`update tasks set version = ${written.version}, state = ${written.state}, record = ${text} where queue = ${queue} and id = ${id}`;
          } else if (!(await tx`insert into tasks (queue, id, version, state, record) values (${queue}, ${id}, ${written.version}, ${written.state}, ${text})
                                on conflict (queue, id) do nothing returning id`).length) {
            throw AGAIN;
          }
          return { head: { version: written.version, record: written }, changed: true };
        });
      } catch (err) {
        if (err !== AGAIN) throw err;
        guess = undefined;
      }
    }
  };

  const add = async (sql: SQL, queue: string, key: string | undefined, fresh: string, after: Dep[], build: (id: string) => TaskRecord) => {
    for (;;) {
      let id = fresh;
      try {
        return await transaction(sql, async (tx) => {
          if (key !== undefined) {
            // A concurrent add with this key holds its row until it commits: this insert waits
            // for it, then finds the key taken and reads the id it recorded.
            const hash = keyHash(key);
            const mine = await tx`insert into task_keys (queue, key_hash, id) values (${queue}, ${hash}, ${fresh}) on conflict (queue, key_hash) do nothing returning id`;
            if (!mine.length) {
              const kept = await tx`select id from task_keys where queue = ${queue} and key_hash = ${hash}`;
              if (!kept.length) throw AGAIN; // gone meanwhile: reserve it again
              id = kept[0].id;
              if ((await tx`select 1 from tasks where queue = ${queue} and id = ${id}`).length) return { id, created: false };
            }
          }
          if (after.length) {
            const deps = after.map((d) => ({ dep_queue: d.queue, dep_id: d.id, queue, id }));
            await tx`insert into task_deps ${tx(deps)} on conflict do nothing`;
          }
          const rec = build(id);
          const made = await tx`insert into tasks (queue, id, version, state, record) values (${queue}, ${id}, ${rec.version}, ${rec.state}, ${encoded(queue, id, rec)})
                                on conflict (queue, id) do nothing returning id`;
          if (!made.length) throw TAKEN;
          return { id, created: true };
        });
      } catch (err) {
        if (err === TAKEN) return { id, created: false };
        if (err !== AGAIN) throw err;
      }
    }
  };

  // Candidates a claim reads at a time (TaskStorage.candidates), and the largest record read
  // with them (a larger one is read on its own when a claim comes to it: a page stays small).
  const CANDIDATE_PAGE = 32;
  const CANDIDATE_RECORD_BYTES = 8192;
  const openIds = (queue: string) =>
    pg.read(`listing the open tasks of queue ${queue}`, async (sql) =>
      ((await sql`select id from tasks where queue = ${queue} and state in ('ready', 'claimed') order by id`) as Row[]).map((r) => r.id));

  return {
    queues: () => pg.read("listing queues", async (sql) => ((await sql`select distinct queue from tasks order by queue`) as { queue: string }[]).map((r) => r.queue)),
    queueExists: (queue) => pg.read(`reading queue ${queue}`, async (sql) => (await sql`select 1 from tasks where queue = ${queue} limit 1`).length > 0),
    queueOf: (id) => pg.read(`finding task ${id}`, async (sql) => ((await sql`select queue from tasks where id = ${id} order by queue limit 1`) as { queue: string }[])[0]?.queue),
    find: (id) => pg.read(`finding task ${id}`, async (sql) => {
      const row = ((await sql`select queue, id, version, record from tasks where id = ${id} order by queue limit 1`) as (Row & { queue: string })[])[0];
      return row && { queue: row.queue, head: headOf(row.queue, row, false) };
    }),
    ids: (queue) => pg.read(`listing the tasks of queue ${queue}`, async (sql) => ((await sql`select id from tasks where queue = ${queue}`) as Row[]).map((r) => r.id)),
    open: openIds,
    candidates: async function* (queue) {
      let after = "";
      for (;;) {
        const rows = await pg.read(`listing the open tasks of queue ${queue}`, async (sql) =>
          (await sql`select id, version, case when octet_length(record) <= ${CANDIDATE_RECORD_BYTES} then record end as record
                     from tasks where queue = ${queue} and state in ('ready', 'claimed') and id > ${after} order by id limit ${CANDIDATE_PAGE}`) as (Row | { id: string; version: number; record: null })[]);
        // A head that is not a whole a2a record (damage) is left for the claim to read and pass over.
        if (rows.length) yield rows.map((r) => ({ id: r.id, head: r.record === null ? undefined : whole(decode(queue, r as Row)) }));
        if (rows.length < CANDIDATE_PAGE) return;
        after = rows[rows.length - 1].id;
      }
    },
    records: (queue, ids, damaged) =>
      pg.read(`reading the tasks of queue ${queue}`, async (sql) => {
        if (!ids.length) return [];
        const rows = (await sql`select id, version, record from tasks where queue = ${queue} and id = any(${textArray(ids)}::text[])`) as Row[];
        const byId = new Map(rows.map((r) => [r.id, r]));
        const out: TaskRecord[] = [];
        for (const id of ids) {
          const row = byId.get(id);
          if (!row) continue; // no such task (a hint from before a gc, an id mistyped)
          const r = decode(queue, row);
          if ("a2a" in r) out.push(r);
          else damaged?.push({ kind: "task", name: id, ...r } satisfies DamagedChain);
        }
        return out;
      }),
    head: (queue, id, repair = false) =>
      pg.read(`reading task ${id}`, async (sql) => headOf(queue, ((await sql`select id, version, record from tasks where queue = ${queue} and id = ${id}`) as Row[])[0], repair)),
    add: (queue, key, fresh, after, build) => pg.run(`adding a task to queue ${queue}`, (sql) => add(sql, queue, key, fresh, after, build)),
    change: (queue, id, next, repair = false, ifFree = false, seen) => pg.run(`changing task ${id}`, (sql) => change(sql, queue, id, next, repair, ifFree, seen)),
    // The state column is the candidate set, written with the record: nothing to drop.
    dropCandidate: async () => {},
    claimKey: (queue, assignee, key) =>
      pg.read(`reading a claim key of queue ${queue}`, async (sql) => {
        const rows = await sql`select id, token from task_claim_keys where queue = ${queue} and key_hash = ${claimKeyHash(assignee, key)}`;
        return rows.length ? { id: rows[0].id as string, token: rows[0].token as string } : undefined;
      }),
    setClaimKey: (queue, assignee, key, claim) =>
      pg.run(`recording a claim key of queue ${queue}`, async (sql) => {
        await sql`insert into task_claim_keys (queue, key_hash, assignee, id, token, at) values (${queue}, ${claimKeyHash(assignee, key)}, ${assignee}, ${claim.id}, ${claim.token}, ${claim.at})
                  on conflict (queue, key_hash) do update set assignee = excluded.assignee, id = excluded.id, token = excluded.token, at = excluded.at`;
      }),
    // A waiting claimer LISTENs on its queue's channel, which needs nothing made first, and a
    // claim writes one row: there is nothing to hold ready between wake-ups.
    prepareWait: async () => {},
    readyToWrite: () => {},
    doneWaiting: () => {},
    locate,
    ...pgTaskRestore(pg, { encoded, headOf, keyHash }), // a2a import's, in batches
  };
}
