// Reading tasks: where a task is, its head, its derived state (blocked, dead by a dependency,
// past its TTL), the settling of leases that ran out, the public view, and the wake-up hints.
//
// Every change to a task is one compare-and-set on its version (storage.ts `change`), so whatever is decided here from a head that has meanwhile changed is decided again by the
// writer: readers may act on stale heads, writers never.
//
// Derived state, in this order, for a stored "ready" task: past its deadline -> dead (TTL); a
// dependency dead -> dead (reason names it); a dependency not done -> blocked; else ready.
// A dependency that is done stays done (done is final), so a task that became ready never
// goes back to blocked. A dead dependency can be retried: its dependants are blocked again.
//
// The hints that find and wake (claim candidates, dependants) are the engine's (storage.ts).

import type { Attachment } from "../blobs/attachment";
import type { Store } from "../core/config";
import { A2AError, damageOf, op, text, type Damage } from "../core/errors";
import { isoTime, nowSec } from "../core/time";
import { taskStorage } from "./storage";
import { checkTaskId, keptAttempts, roundAttempts, type Attempt, type Dep, type TaskRecord, type TaskState } from "./record";

export async function readTask(store: Store, queue: string, id: string): Promise<TaskRecord | undefined> {
  return (await taskStorage(store).head(queue, id)).record;
}

// A task or lease chain passed over because its head is damaged (lib/fs/chain.ts): what
// listings and gc name, and what `task cancel` / `lease release` repair.
export interface DamagedChain extends Damage {
  kind: "task" | "lease";
  name: string; // the task id or the lease name
}

// Where task `id` (checked) is, or ENOTFOUND.
export async function locateTask(store: Store, id: string): Promise<{ id: string; queue: string }> {
  checkTaskId(id);
  const queue = await taskStorage(store).queueOf(id);
  if (queue === undefined) throw notFound(id);
  return { id, queue };
}

const notFound = (id: string) => new A2AError("ENOTFOUND", text`no task ${id} in this store: list the tasks with ${op("task list")}`, { data: { id } });

// The task `id` (checked), or ENOTFOUND; a damaged one is EIO naming its file and the repair.
export async function findTask(store: Store, id: string): Promise<TaskRecord> {
  checkTaskId(id);
  let rec: TaskRecord | undefined;
  try {
    rec = (await taskStorage(store).find(id))?.head.record; // where and what, one step
  } catch (err) {
    const d = damageOf(err);
    if (!d) throw err;
    throw new A2AError("EIO", text`task ${id} is damaged: ${d.file} is ${d.why}, not an a2a record; fix the file, or mark the task dead with ${op("task cancel", id)}`, {
      data: { id, ...d, damaged: true },
    });
  }
  if (!rec) throw notFound(id);
  return rec;
}

// readTask of each of `ids` in `queue` (oldest first) that has a version, a damaged one passed
// over into `damaged` (when given): one damaged task must not stop a listing of the others.
export async function readTasks(store: Store, queue: string, ids: string[], damaged?: DamagedChain[]): Promise<TaskRecord[]> {
  return taskStorage(store).records(queue, ids, damaged);
}

// One compare-and-set on the task (storage.ts change). `repair`: a damaged head is handed to
// `next` as the newest whole version below it (or, when none is whole, a record of nothing
// but the id: empty payload, no attempts), with the damage.
export async function changeTask(
  store: Store,
  rec: { id: string; queue: string },
  next: (cur: TaskRecord, damaged?: Damage) => TaskRecord | undefined,
  repair = false,
  ifFree = false, // a turn another writer holds: busy, nothing changed (storage.ts)
): Promise<{ rec: TaskRecord; changed: boolean; busy?: true }> {
  const tasks = taskStorage(store);
  const r = await tasks.change(rec.queue, rec.id, (head) => {
    const cur = head.record ?? (head.damaged && nothingKnown(store, rec.id, rec.queue));
    if (!cur) throw new A2AError("EIO", `task ${rec.id} vanished from ${tasks.locate(rec.queue, rec.id)}: check the store`);
    const n = next(cur, head.damaged);
    return n && { ...n, updated_at: nowSec(), host: store.host, pid: process.pid };
  }, repair, ifFree, "a2a" in rec ? (rec as TaskRecord) : undefined); // a head read: the engine's guess
  return { rec: r.head.record!, changed: r.changed, ...(r.busy ? { busy: r.busy } : {}) };
}

function nothingKnown(store: Store, id: string, queue: string): TaskRecord {
  const now = nowSec();
  return {
    a2a: 1, id, queue, version: 0, state: "ready", payload: "", size: 0, key: null, after: [], max_attempts: 1, ttl_sec: null, deadline: null,
    created_at: now, updated_at: now, attempt: 0, round_from: 0, claim: null, attempts: [], result: null, reason: null, host: store.host, pid: process.pid,
  };
}

// The record after attempt `rec.claim` ended without done: ready again, or dead when the
// round's attempts are used up (or `final`).
export function endAttempt(rec: TaskRecord, outcome: Attempt["outcome"], reason: string, final = false): TaskRecord {
  const c = rec.claim!;
  const attempts = keptAttempts([...rec.attempts, { attempt: c.attempt, assignee: c.assignee, claimed_at: c.claimed_at, ended_at: nowSec(), outcome, reason }]);
  const spent = roundAttempts(rec) >= rec.max_attempts;
  const dead = final || spent;
  const why = final ? reason : `${rec.max_attempts} attempt${rec.max_attempts === 1 ? "" : "s"} failed; the last: ${reason}`;
  return { ...rec, state: dead ? "dead" : "ready", claim: null, attempts, reason: dead ? why : null };
}

export interface Derived {
  state: TaskState;
  reason: string | null;
  blockedBy: string[]; // dependencies not done yet
  // Dead: the task whose retry would bring this one back (itself, or the dependency that died
  // first); null when no retry can (a damaged record, a missing dependency).
  retry?: string | null;
}

// Derived state of tasks, memoised per call (one pass of list or claim reads each task once).
export class Resolver {
  private seen = new Map<string, { rec?: TaskRecord; derived: Derived }>();
  constructor(private store: Store, private now = nowSec()) {}

  async record(dep: Dep): Promise<TaskRecord | undefined> {
    return (await this.lookup(dep)).rec;
  }

  // Callers await one derived() at a time: the memo (and its guard against cycles) is not
  // meant for concurrent derivations.
  async derived(rec: TaskRecord): Promise<Derived> {
    const key = `${rec.queue}/${rec.id}`;
    const hit = this.seen.get(key);
    if (hit && hit.rec?.version === rec.version) return hit.derived;
    this.seen.set(key, { rec, derived: { state: "blocked", reason: null, blockedBy: [] } }); // a guard against cycles in foreign data
    const d = await this.derive(rec);
    this.seen.set(key, { rec, derived: d });
    return d;
  }

  private async lookup(dep: Dep): Promise<{ rec?: TaskRecord; derived: Derived }> {
    const key = `${dep.queue}/${dep.id}`;
    const hit = this.seen.get(key);
    if (hit) return hit;
    const damaged: DamagedChain[] = [];
    const rec = (await readTasks(this.store, dep.queue, [dep.id], damaged))[0];
    if (damaged.length) {
      // It can never be read as done: its dependants are dead while it is damaged (derived,
      // so a file put right brings them back).
      const d = damaged[0];
      const gone = { derived: { state: "dead" as const, reason: `its record is damaged (${d.file} is ${d.why})`, blockedBy: [], retry: null } };
      this.seen.set(key, gone);
      return gone;
    }
    if (!rec) {
      const gone = { derived: { state: "dead" as const, reason: `dependency ${dep.id} is missing from the store`, blockedBy: [], retry: null } };
      this.seen.set(key, gone);
      return gone;
    }
    return { rec, derived: await this.derived(rec) };
  }

  private async derive(rec: TaskRecord): Promise<Derived> {
    if (rec.state !== "ready") return { state: rec.state, reason: rec.reason, blockedBy: [], ...(rec.state === "dead" ? { retry: rec.id } : {}) };
    if (rec.deadline !== null && rec.deadline <= this.now) return { state: "dead", reason: `its TTL ran out at ${isoTime(rec.deadline)}`, blockedBy: [], retry: rec.id };
    const blockedBy: string[] = [];
    for (const dep of rec.after) {
      const d = (await this.lookup(dep)).derived;
      if (d.state === "dead") return { state: "dead", reason: `dependency ${dep.id} is dead: ${d.reason}`, blockedBy: [], retry: d.retry ?? null };
      if (d.state !== "done") blockedBy.push(dep.id);
    }
    return blockedBy.length ? { state: "blocked", reason: null, blockedBy } : { state: "ready", reason: null, blockedBy };
  }
}

// Writes what time alone decided, as a compare-and-set: a claim whose lease ran out ends
// (ready again, or dead when it was the round's last attempt); a ready task past its TTL
// dies. Returns the head after. A holder finishing at the same moment races on the same
// version: exactly one of the two lands.
export async function settle(store: Store, rec: TaskRecord, now = nowSec()): Promise<TaskRecord> {
  const expired = (r: TaskRecord) => r.state === "claimed" && r.claim!.expires_at <= now;
  const pastTtl = (r: TaskRecord) => r.state === "ready" && r.deadline !== null && r.deadline <= now;
  if (!expired(rec) && !pastTtl(rec)) return rec;
  const r = await changeTask(store, rec, (cur) => {
    if (expired(cur)) return endAttempt(cur, "expired", `the lease of attempt ${cur.claim!.attempt} ran out at ${isoTime(cur.claim!.expires_at)}`);
    if (pastTtl(cur)) return { ...cur, state: "dead", reason: `its TTL ran out at ${isoTime(cur.deadline!)}` };
    return undefined;
  });
  return r.rec;
}

// How often waiters look again for what no directory event announces: a lease running out.
export const RECHECK_MS = 500;

export interface TaskView {
  id: string;
  queue: string;
  state: TaskState;
  version: number;
  payload: string;
  size: number;
  key: string | null;
  after: string[];
  blocked_by: string[];
  attempt: number; // the last attempt handed out
  attempts_left: number; // in this round
  max_attempts: number;
  assignee: string | null; // while claimed
  lease_expires_at: number | null;
  deadline: number | null;
  attempts: Attempt[];
  result: string | null;
  attachments?: Attachment[]; // handed over with the result
  reason: string | null;
  retry_id?: string | null; // dead: the task whose retry brings this one back (Derived.retry)
  created_at: number;
  updated_at: number;
}

// The public view of a task (no claim token: that belongs to its holder alone).
export function viewOf(rec: TaskRecord, d: Derived): TaskView {
  return {
    id: rec.id, queue: rec.queue, state: d.state, version: rec.version, payload: rec.payload, size: rec.size, key: rec.key,
    after: rec.after.map((x) => x.id), blocked_by: d.blockedBy, attempt: rec.attempt,
    attempts_left: Math.max(0, rec.max_attempts - roundAttempts(rec)), max_attempts: rec.max_attempts,
    assignee: rec.claim?.assignee ?? null, lease_expires_at: rec.claim?.expires_at ?? null, deadline: rec.deadline,
    attempts: rec.attempts, result: rec.result, ...(rec.attachments ? { attachments: rec.attachments } : {}), reason: d.reason, ...(d.state === "dead" ? { retry_id: d.retry ?? null } : {}),
    created_at: rec.created_at, updated_at: rec.updated_at,
  };
}

// Queues present in the store.
export const queues = (store: Store) => taskStorage(store).queues();
export const queueExists = (store: Store, q: string) => taskStorage(store).queueExists(q);
