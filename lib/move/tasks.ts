// Tasks in an export, written in batches: an export lists its tasks together, and an engine
// that writes a batch as one durable step (PostgreSQL: one transaction) pays one commit for it
// instead of one a task (20,000 tasks: 17 s, nearly all of it commits).
//
// Invariants:
// - a task's verdict is decided as for one record (lib/move/import.ts against) on its head as
//   read with its batch, and handed to `counted` in the export's order once the batch is in;
// - a batch never holds one task twice (a second line for it writes the batch first), and is
//   written before any other kind of line, at the end, and before a damaged line stops the
//   import: the records before a line are in before the line's own;
// - memory holds a batch: at most BATCH tasks and about BATCH_BYTES of their records.

import type { TaskRecord } from "../tasks/record";
import type { TaskStorage } from "../tasks/storage";
import type { Verdict } from "./import";

const BATCH = 1000;
const BATCH_BYTES = 8 * 1024 * 1024;

// What the store holds against `rec`: undefined when it may be written (lib/move/import.ts against).
type Against = (have: { version: number } | undefined, rec: { version: number }) => Verdict | undefined;

export function taskWriter(tasks: TaskStorage, against: Against, counted: (v: Verdict, rec: TaskRecord) => void) {
  let batch: TaskRecord[] = [];
  let bytes = 0;
  const held = new Set<string>();

  async function flush(): Promise<void> {
    if (!batch.length) return;
    const recs = batch;
    batch = [];
    bytes = 0;
    held.clear();
    const heads = await tasks.heads(recs);
    const verdicts = recs.map((rec, i) => (heads[i].damaged ? "kept" : against(heads[i].record, rec)));
    const write = recs.filter((_, i) => verdicts[i] === undefined);
    const wrote = await tasks.restore(write);
    let w = 0;
    recs.forEach((rec, i) => counted(verdicts[i] ?? (wrote[w++] ? "imported" : "kept"), rec));
  }

  return {
    // `size`: its line's length, the memory it holds
    async task(rec: TaskRecord, size: number): Promise<void> {
      const key = `${rec.queue}\n${rec.id}`;
      if (held.has(key)) await flush();
      batch.push(rec);
      held.add(key);
      bytes += size;
      if (batch.length >= BATCH || bytes >= BATCH_BYTES) await flush();
    },
    flush,
  };
}
