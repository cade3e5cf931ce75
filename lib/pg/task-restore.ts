// The PostgreSQL engine's task restore (lib/tasks/storage.ts heads and restore, for a2a import):
// a batch of tasks read in one statement and written in one transaction of three multi-row
// inserts, where one task a transaction paid a commit (a WAL flush) per task: 20,000 tasks took
// 17 s, nearly all of it waiting on those flushes.
//
// Invariants:
// - a batch is one transaction: a crash leaves all of it or none, and the batches before it;
// - a task's row is written only where it is below the record's version (none: 0), so a batch
//   run again, or one racing a writer, never takes a version back;
// - every record is encoded (and refused when over the bound) before the transaction begins;
// - a statement's parameters stay under the protocol's 65,535 whatever the batch lists: tasks
//   and keys are a few columns a task (BATCH bounds them), dependencies are one JSON parameter.

import type { SQL } from "bun";
import type { TaskRecord } from "../tasks/record";
import type { TaskHead, TaskStorage } from "../tasks/storage";
import { transaction } from "./connect";
import type { PgClient } from "./engine";

interface Row {
  queue: string;
  id: string;
  version: number;
  record: string;
}

export interface RestoreHelpers {
  encoded(queue: string, id: string, rec: TaskRecord): string; // the record as written, checked against the bound
  headOf(queue: string, row: Row | undefined, repair: boolean): TaskHead;
  keyHash(key: string): string;
}

const at = (queue: string, id: string) => `${queue}\n${id}`;

export function pgTaskRestore(pg: PgClient, h: RestoreHelpers): Pick<TaskStorage, "heads" | "restore"> {
  return {
    heads: async (tasks) => {
      if (!tasks.length) return [];
      const rows = (await pg.read(`reading ${tasks.length} tasks`, (sql) =>
        sql`select t.queue, t.id, t.version, t.record from tasks t
            join jsonb_to_recordset(${JSON.stringify(tasks.map(({ queue, id }) => ({ queue, id })))}::jsonb) as k(queue text, id text)
              on t.queue = k.queue collate "C" and t.id = k.id collate "C"`)) as Row[];
      const byKey = new Map(rows.map((r) => [at(r.queue, r.id), r]));
      return tasks.map(({ queue, id }) => h.headOf(queue, byKey.get(at(queue, id)), true));
    },
    restore: async (recs) => {
      if (!recs.length) return [];
      const tasks = recs.map((rec) => ({ queue: rec.queue, id: rec.id, version: rec.version, state: rec.state, record: h.encoded(rec.queue, rec.id, rec) }));
      const keys = recs.flatMap((rec) => (rec.key === null ? [] : [{ queue: rec.queue, key_hash: h.keyHash(rec.key), id: rec.id }]));
      const deps = recs.flatMap((rec) => rec.after.map((d) => ({ dep_queue: d.queue, dep_id: d.id, queue: rec.queue, id: rec.id })));
      const made = await pg.run(`restoring ${recs.length} tasks`, (sql) =>
        transaction(sql, async (tx: SQL) => {
          if (keys.length) await tx`insert into task_keys ${tx(keys)} on conflict (queue, key_hash) do nothing`;
          // One parameter for them all: a statement takes at most 65,535, and a batch's tasks
          // may list any number of dependencies (1,000 tasks after 17 others each pass that).
          if (deps.length) {
            await tx`insert into task_deps (dep_queue, dep_id, queue, id)
              select d.dep_queue, d.dep_id, d.queue, d.id from jsonb_to_recordset(${JSON.stringify(deps)}::jsonb) as d(dep_queue text, dep_id text, queue text, id text)
              on conflict do nothing`;
          }
          return (await tx`insert into tasks ${tx(tasks)}
            on conflict (queue, id) do update set version = excluded.version, state = excluded.state, record = excluded.record where tasks.version < excluded.version
            returning queue, id`) as { queue: string; id: string }[];
        }),
      );
      const written = new Set(made.map((r) => at(r.queue, r.id)));
      return recs.map((rec) => written.has(at(rec.queue, rec.id)));
    },
  };
}
