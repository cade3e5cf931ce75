// What the slot rules (slot.ts, read.ts, wait.ts, tail.ts, events.ts) need from an engine: the
// storage of one record per slot name, and of the streamed chunks of its current run. The rules
// (versions, tombstones, --if-version, exclusive starts, what a chunk may be appended to) are
// the room's; an engine keeps records and chunks and makes one change at a time per name.
// docs/ENGINE.md has the design, docs/PROTOCOL.md §4-§7 the contract, docs/FILE-ENGINE.md §5
// the file engine's layout.
//
// Invariants every engine keeps:
// - `read` never waits for a change in progress: it sees the record before a change or after it,
//   whole; a record that fails its checks (torn on a caching filesystem, foreign bytes) is
//   "corrupt", never a wrong value;
// - `change` is exclusive per name: between its read and its write no other change of that name
//   lands, in any process; what `decide` returns is written all at once (a chunk it adds is
//   stored before the record that counts it); when `decide` throws, nothing is written;
// - chunks are immutable once counted, and read without waiting for anything.

import type { Store } from "../core/config";
import { isExpired, type SlotRecord } from "./record";

export type ReadResult =
  | { kind: "ok"; record: SlotRecord }
  | { kind: "absent"; last?: SlotRecord; expired?: boolean } // last: tombstone or expired record
  | { kind: "corrupt" };

// What one change writes, decided from the record as it is under the change's exclusion.
export interface Decision<T> {
  value: T; // what the operation returns
  record?: SlotRecord; // the new record; none: the record is left as it is
  chunk?: { n: number; text: string }; // chunk n of the current run, stored before `record`
  dropChunks?: boolean; // the current run's chunks go, after the record is written
  // The record ends the run (a tombstone): where storage runs out, the run's chunks may go
  // first to make room for it, since they go anyway. Never for a record that keeps or starts a run.
  endsRun?: boolean;
  removeDamaged?: boolean; // a corrupt record is removed (clear of damage)
}

export interface SlotStorage {
  // The record of `name` now. `retries`: how often a record failing its checks is read again
  // before it counts as corrupt (a wait passes 0: its next wake-up is the retry).
  read(name: string, retries?: number): Promise<ReadResult>;
  // The records of `names`, in their order, as `read` would give each: one call for a listing
  // (10,000 slots are one pass over the store, not 10,000 round trips).
  readMany(names: string[]): Promise<ReadResult[]>;
  // Every name that has a record (live, tombstone or damaged), in no particular order.
  names(): Promise<string[]>;
  // Every record there is, each as `read` would give it, in no particular order: what `a2a
  // status` lists. One pass (on a database one statement: names() then readMany() were two
  // round trips more on every status).
  readAll(): Promise<{ name: string; read: ReadResult }[]>;
  // Whether `name` has a record of any kind (a tombstone counts).
  has(name: string): Promise<boolean>;
  // One change of `name`: `decide` sees the record (never torn: a corrupt one is damage) and
  // says what to write.
  change<T>(name: string, decide: (current: ReadResult) => Decision<T>): Promise<T>;
  // The chunks after number `after` (1-based) up to `upTo`, in order; fewer when the run was
  // replaced meanwhile (a new start dropped them).
  chunks(name: string, after: number, upTo: number): Promise<string[]>;
  // Where the record of `name` is kept, for a message that asks a person to look at it.
  locate(name: string): string;
}

// What a read of a whole record says: a tombstone or an expired record is absent, with the
// record it leaves behind (its version lives on); any other is the slot's value.
export function readOf(record: SlotRecord): ReadResult {
  if (record.state === "cleared") return { kind: "absent", last: record };
  return isExpired(record) ? { kind: "absent", last: record, expired: true } : { kind: "ok", record };
}

// The store's slot storage, as its engine keeps it (lib/engine/engine.ts).
export function slotStorage(store: Store): SlotStorage {
  return store.engine.slots;
}
