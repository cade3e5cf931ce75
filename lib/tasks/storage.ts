// What the task rules (add, claim, holder, admin, query, state) need from an engine: one
// versioned record per task, each change a compare-and-set on its version, plus the hints and
// reservations the file engine keeps today in lib/tasks/*.ts. The rules (validation, derived
// states and the Resolver, fencing tokens, attempts and dead letters, dependency rules, the
// claim transition, error wording) stay in the room; an engine keeps versions, hints and keys.
// docs/ENGINE.md has the design, docs/PROTOCOL.md §12 the contract, docs/FILE-ENGINE.md §11
// the file engine's layout.
//
// Invariants every engine keeps:
// - a task's versions only grow, by one per change; of two changes computed from version N,
//   exactly one is written as N + 1, and the other reads again and decides again (leases);
// - `head` sees a whole version or reports damage, never a wrong value; with `repair` a damaged
//   head is handed to the change, which writes above it (task cancel is the repair);
// - every task that is not final is among `candidates` of its queue from before its version 1
//   until its head is done or dead (the file engine: @open/ID, kept by `add` and `change` by
//   the state of the record written; PostgreSQL: the rows whose state column is not final); a
//   candidate is a hint, read again before anything is decided on it;
// - when a change writes a task done or dead, waiters on its dependants are woken (their
//   candidate marker and bell; transitively through dependants that die with it), and a task
//   written ready wakes its queue: channels {on: "queue"} and {on: "task"} (lib/core/channel.ts);
// - an add key names one id: two adds with one key both return the one id that was created.

import type { Store } from "../core/config";
import type { Damage } from "../core/errors";
import type { Dep, TaskRecord } from "./record";
import type { DamagedChain } from "./state";

export interface TaskHead {
  version: number; // 0: no version yet (an add that never finished)
  record: TaskRecord | undefined; // with `damaged`: the newest whole version below, if any
  damaged?: Damage;
}

// A candidate of a claim: its id, and its head when the engine read it with the id.
export interface Candidate {
  id: string;
  head?: TaskRecord;
}

export interface TaskStorage {
  // Queues present in the store, and whether one is: one a task was added to (the file engine
  // also counts one a claimer waited on, whose directory the wait made).
  queues(): Promise<string[]>;
  queueExists(queue: string): Promise<boolean>;
  // The queue holding task `id` (one with a version 1), or undefined.
  queueOf(id: string): Promise<string | undefined>;
  // queueOf, and the head of the task there (as `head`, damage thrown), in one step where the
  // engine can (PostgreSQL: one statement; files: the two reads). Undefined: no such task.
  find(id: string): Promise<{ queue: string; head: TaskHead } | undefined>;
  // Every task id of `queue` (unsorted; ids sort oldest first).
  ids(queue: string): Promise<string[]>;
  // The candidates a reader looks at (unsorted), without changing anything.
  open(queue: string): Promise<string[]>;
  // The candidates a claim looks at, oldest first, in pages: a claim reads on only while it has
  // claimed nothing, so its cost does not grow with the queue's length (PostgreSQL reads a page
  // at a time; the file engine lists its directory once, as one page). The file engine
  // promotes a pending marker whose task has its version 1 (an add that crashed between its
  // steps 5 and 6, or is between them now): promoting early is harmless, the adder's own
  // rename then finds nothing to move. An engine that reads the candidates' heads in the same
  // pass (PostgreSQL: the page is one statement) gives each with its id: a claim decides on it
  // as on a head just read (and passes over a live claim without reading it again); the change
  // that claims decides again on the head it writes over, so a head given here that is stale
  // costs a decision, never a wrong claim. A candidate without one is read on its own.
  candidates(queue: string): AsyncIterable<Candidate[]>;
  // The head record of each of `ids` in `queue` that has a version, in the order given; one
  // whose head is damaged is passed over into `damaged` (when given): one damaged task must not
  // stop a listing of the others.
  records(queue: string, ids: string[], damaged?: DamagedChain[]): Promise<TaskRecord[]>;
  // The newest version of the task. A damaged head is an EIO naming it (damageOf), unless
  // `repair`: then it is returned with `damaged`.
  head(queue: string, id: string, repair?: boolean): Promise<TaskHead>;
  // An add (docs/PROTOCOL.md §12 steps 1 to 6): with `key`, the id recorded for it (recording
  // `fresh` if none is; a task that exists under it is returned, created: false); the
  // dependants hints on each of `after`; the task a candidate from before its version 1; then
  // version 1 = `build(id)` (exclusive, durable; synchronous, called just before the write).
  // created: false when version 1 exists (a concurrent add with the same key). A failure
  // before version 1 undoes everything this call made: the store is as it was.
  add(queue: string, key: string | undefined, fresh: string, after: Dep[], build: (id: string) => TaskRecord): Promise<{ id: string; created: boolean }>;
  // One compare-and-set: `next` decides the following record from the head (undefined: no
  // change; a throw: nothing written); it is SYNCHRONOUS, the engine calls it in its exclusive
  // section. Written as version + 1, durable unless "claimed" (a lost claim is harmless: its
  // random token is never handed out again); on a lost race `next` decides again on the new
  // head. After a change the engine keeps the candidates and wakes dependants (header).
  // `ifFree`: where another writer holds the task's turn right now, change nothing and say
  // `busy` (with the head as last written) instead of waiting for it: a claimer moves on to
  // the next candidate, as PostgreSQL's FOR UPDATE SKIP LOCKED lets claimers spread over a
  // queue; an engine whose changes never wait for a turn is never busy.
  // `seen`: the head the caller read, as a guess an engine may write over in the same step that
  // takes the turn (PostgreSQL: one statement), where the task is still at it; `next` then runs
  // on it first, and again on the head as it is when the guess was stale.
  change(queue: string, id: string, next: (head: TaskHead) => TaskRecord | undefined, repair?: boolean, ifFree?: boolean, seen?: TaskRecord): Promise<{ head: TaskHead; changed: boolean; busy?: true }>;
  // The candidate of a task a claimer read as done or dead, dropped (re-checked against a
  // retry racing the drop: the task stays a candidate if it came back). Nothing to do for an
  // engine whose candidates are written with the record (PostgreSQL).
  dropCandidate(rec: TaskRecord): Promise<void>;
  // Claim steps 1 and 3: the claim recorded for (assignee, key) in `queue`, and recording one
  // (replacing any older).
  claimKey(queue: string, assignee: string, key: string): Promise<{ id: string; token: string } | undefined>;
  setClaimKey(queue: string, assignee: string, key: string, claim: { id: string; token: string; at: number }): Promise<void>;
  // A waiting claimer: make what a wait on the queue watches exist; between wake-ups hold the
  // claim's write ready (readyToWrite), and let it go when the wait ends (doneWaiting). The file
  // engine's directory and spare temp file; no-ops where a wait needs nothing made (PostgreSQL).
  prepareWait(queue: string): Promise<void>;
  readyToWrite(): void;
  doneWaiting(): void;
  // Where the task is, for messages.
  locate(queue: string, id: string): string;
  // For a2a import (lib/move/): the head of each task named, in the order given, as
  // head(queue, id, true) gives it (one read where the engine can: an import checks a batch).
  heads(tasks: { queue: string; id: string }[]): Promise<TaskHead[]>;
  // For a2a export and import (lib/move/): each of `recs` (no task twice) written as the task's
  // head at its own version, where the head is below it (no task: 0), with what an add makes
  // around it (its add key's record where the key names no task yet, its dependants hints, its
  // candidate while it is not final); the head's version then jumps, which only a restore does.
  // For each, false when the head is at or above its version: nothing written but hints. The
  // batch is one durable step where the engine can (PostgreSQL: one transaction, all or none),
  // else one task after another (files); either way, run again after a crash, it completes.
  restore(recs: TaskRecord[]): Promise<boolean[]>;
}

// The store's task storage, as its engine keeps it (lib/engine/engine.ts).
export function taskStorage(store: Store): TaskStorage {
  return store.engine.tasks;
}
