// Looking at tasks: list (by queue and state), show one, and wait for tasks to end.
//
// Readers take no lock and write nothing of their own; they do settle what time alone has
// decided (a lease that ran out, a TTL passed: state.ts settle), as any claimer would, so a
// list shows the state the next claim will act on. On a store this process cannot write the
// settling is skipped and the stored state is shown. A task whose head is damaged is passed
// over (list and claimable name it to their caller) and its dependants read as dead; only
// `task cancel` of it writes anything (admin.ts).
//
// waitTasks: for each id, watch the task's directory (every change is a new version file
// there; a dependency's end replaces its @bell), and look again every RECHECK_MS for what no
// event announces (a lease running out, a dependency dying further up the graph). It ends
// done when every task is done (their results, in the order asked), or as soon as one is
// dead (done, state "dead", that task's reason); else timeout/aborted with the ids pending.

import type { Store } from "../core/config";
import { A2AError, arg, text } from "../core/errors";
import { done, ended, type Outcome } from "../core/outcome";
import { nowSec } from "../core/time";
import { checkTimeout, waitUntil } from "../core/watch";
import { checkQueue, checkTaskId, roundAttempts, TASK_STATES, type TaskRecord, type TaskState } from "./record";
import { taskStorage } from "./storage";
import { findTask, queues, readTask, readTasks, RECHECK_MS, Resolver, settle, viewOf, type DamagedChain, type TaskView } from "./state";

async function settled(store: Store, rec: TaskRecord): Promise<TaskRecord> {
  try {
    return await settle(store, rec);
  } catch {
    return rec; // a read-only store: show what is stored
  }
}

export interface ListOptions {
  queue?: string;
  state?: TaskState;
  damaged?: DamagedChain[]; // receives the tasks passed over because their head is damaged
}

// Tasks of one queue (or all), oldest first, optionally of one state.
export async function listTasks(store: Store, opts: ListOptions = {}): Promise<TaskView[]> {
  if (opts.queue !== undefined) checkQueue(opts.queue);
  if (opts.state !== undefined && !TASK_STATES.includes(opts.state)) {
    throw new A2AError("EUSAGE", text`unknown task state ${JSON.stringify(String(opts.state))}: give one of ${TASK_STATES.join(", ")}, e.g. ${arg("state", "dead")}`);
  }
  const resolver = new Resolver(store);
  const out: TaskView[] = [];
  for (const q of opts.queue === undefined ? (await queues(store)).sort() : [opts.queue]) {
    for (const rec of await readTasks(store, q, (await taskStorage(store).ids(q)).sort(), opts.damaged)) {
      const cur = await settled(store, rec);
      const v = viewOf(cur, await resolver.derived(cur));
      if (opts.state === undefined || v.state === opts.state) out.push(v);
    }
  }
  return out;
}

export async function showTask(store: Store, id: string): Promise<TaskView> {
  const rec = await settled(store, await findTask(store, id));
  return viewOf(rec, await new Resolver(store).derived(rec));
}

export interface TaskWaitResult {
  state: "done" | "dead"; // done: every task is done; dead: one of them is dead
  tasks: TaskView[]; // done: all of them, in the order asked; dead: the dead one
}

export interface TaskWaitOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

export async function waitTasks(store: Store, ids: string[], opts: TaskWaitOptions = {}): Promise<Outcome<TaskWaitResult | undefined>> {
  if (!Array.isArray(ids) || ids.length === 0) throw new A2AError("EUSAGE", "give at least one task id to wait for");
  ids.forEach((id) => checkTaskId(id));
  checkTimeout(opts.timeoutMs);
  const recs: TaskRecord[] = [];
  for (const id of new Set(ids)) recs.push(await findTask(store, id)); // unknown ids: ENOTFOUND before waiting
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  opts.signal?.addEventListener("abort", onAbort);
  const views = new Map<string, TaskView>();
  let dead: TaskView | undefined;
  try {
    const outcomes = await Promise.all(
      recs.map(async (first) => {
        const check = async () => {
          const rec = await readTask(store, first.queue, first.id);
          if (!rec) return undefined;
          const cur = await settled(store, rec);
          const v = viewOf(cur, await new Resolver(store).derived(cur));
          return v.state === "done" || v.state === "dead" ? v : undefined;
        };
        const o = await waitUntil(store, { on: "task", queue: first.queue, id: first.id }, check, { timeoutMs: opts.timeoutMs, signal: stop.signal, recheckMs: RECHECK_MS });
        if (o.kind === "done" && o.value) {
          views.set(first.id, o.value);
          if (o.value.state === "dead" && !dead) {
            dead = o.value;
            stop.abort(); // one dead task decides the wait
          }
        }
        return o.kind;
      }),
    );
    if (dead) return done({ state: "dead", tasks: [dead] });
    if (outcomes.every((k) => k === "done")) return done({ state: "done", tasks: ids.map((id) => views.get(id)!) });
    const kind = outcomes.includes("timeout") && !opts.signal?.aborted ? "timeout" : "aborted";
    return ended(kind, undefined, ids.filter((id) => !views.has(id)));
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
  }
}

export interface ClaimableQueue {
  queue: string;
  claimable: number; // tasks a claim would hand out now (ready, or claimed with the lease run out)
  oldest_id: string; // the one the next claim takes
  oldest_created_at: number;
}

// What a claim would find, per queue (all queues, or `names`), without writing anything: for
// hooks and dashboards that tell an agent there is work ("3 tasks claimable in build").
// Reads only the @open markers' tasks (a damaged one passed over into `damaged`). A queue with
// nothing claimable, or that does not exist, is left out; invalid names are EUSAGE.
export async function claimable(store: Store, names?: string[], damaged?: DamagedChain[]): Promise<ClaimableQueue[]> {
  const wanted = names === undefined ? (await queues(store)).sort() : [...new Set(names.map((q) => checkQueue(q)))].sort();
  const resolver = new Resolver(store);
  const now = nowSec();
  const out: ClaimableQueue[] = [];
  for (const q of wanted) {
    let n = 0;
    let oldest: TaskRecord | undefined;
    for (const rec of await readTasks(store, q, (await taskStorage(store).open(q)).sort(), damaged)) {
      const free = rec.state === "claimed" ? rec.claim!.expires_at <= now && roundAttempts(rec) < rec.max_attempts : (await resolver.derived(rec)).state === "ready";
      if (!free) continue;
      n++;
      oldest ??= rec;
    }
    if (oldest) out.push({ queue: q, claimable: n, oldest_id: oldest.id, oldest_created_at: oldest.created_at });
  }
  return out;
}
