// Adding tasks: one, or a graph of several whose `after` lists name each other by `ref`.
// The steps, the instant the task exists, and what a crash at each leaves are docs/PROTOCOL.md §12,
// "Operations", add, and on disk docs/FILE-ENGINE.md §11 (not repeated here, where they would
// drift). What this module keeps to: everything is validated before the first write, so a refused
// call leaves the store as it was; a failure it lives to see before the task exists (a full disk)
// undoes what it made; two adders with one key both return the one id that was created.

import type { Store } from "../core/config";
import { checkSize } from "../core/size";
import { A2AError, arg, text } from "../core/errors";
import { checkName, isTaskId } from "../core/names";
import { checkDuration, nowSec } from "../core/time";
import {
  checkMaxAttempts, checkQueue, checkText, DEFAULT_MAX_ATTEMPTS, newTaskId, type Dep,
} from "./record";
import { taskStorage } from "./storage";

export interface AddOptions {
  key?: string; // same key (in the queue) -> same id, nothing created twice
  after?: string[]; // ids of tasks that must be done first (or refs, in addTasks)
  maxAttempts?: number; // default 3
  ttlSec?: number; // unfinished after this long -> dead
}

export interface AddSpec extends AddOptions {
  queue: string;
  payload: string;
  ref?: string; // a name other specs of the same call may list in `after`
}

export interface Added {
  id: string;
  queue: string;
  created: boolean; // false: the key named a task that exists (or a concurrent add made it)
}

export const MAX_BATCH = 10_000;

export async function addTask(store: Store, queue: string, payload: string, opts: AddOptions = {}): Promise<Added> {
  return (await addTasks(store, [{ ...opts, queue, payload }]))[0];
}

interface Planned {
  spec: AddSpec;
  deps: (Dep | { ref: string })[];
}

export async function addTasks(store: Store, specs: AddSpec[]): Promise<Added[]> {
  const plan = await validate(store, specs);
  const ids = new Map<string, Dep>(); // ref -> the task made for it
  const out: Added[] = new Array(specs.length);
  for (const i of order(plan)) {
    const { spec, deps } = plan[i];
    const after = deps.map((d) => ("ref" in d ? ids.get(d.ref)! : d));
    const added = await addOne(store, spec, after);
    if (spec.ref !== undefined) ids.set(spec.ref, added);
    out[i] = added;
  }
  return out;
}

async function validate(store: Store, specs: AddSpec[]): Promise<Planned[]> {
  if (!Array.isArray(specs) || specs.length === 0 || specs.length > MAX_BATCH) {
    throw new A2AError("EUSAGE", `give 1 to ${MAX_BATCH} tasks to add: nothing was added`);
  }
  const refs = new Set<string>();
  for (const s of specs) {
    if (s.ref === undefined) continue;
    checkName(s.ref, "task ref");
    if (refs.has(s.ref)) throw new A2AError("EUSAGE", `task ref ${s.ref} is given twice: make each ref unique; nothing was added`);
    refs.add(s.ref);
  }
  const known = new Map<string, string | undefined>(); // id -> its queue
  const out: Planned[] = [];
  for (const s of specs) {
    checkQueue(s.queue);
    if (typeof s.payload !== "string") throw new A2AError("EUSAGE", "the task payload must be a text: nothing was added");
    checkSize(store, s.payload, "the task payload");
    if (s.key !== undefined) checkText(s.key, "task key", 1024);
    if (s.maxAttempts !== undefined) checkMaxAttempts(s.maxAttempts);
    if (s.ttlSec !== undefined) checkDuration(s.ttlSec, "TTL", "ttl");
    const deps: Planned["deps"] = [];
    const seen = new Set<string>();
    for (const a of s.after ?? []) {
      if (seen.has(a)) continue;
      seen.add(a);
      if (refs.has(a)) {
        deps.push({ ref: a });
        continue;
      }
      if (!isTaskId(a)) {
        throw new A2AError("EUSAGE", text`unknown dependency ${JSON.stringify(String(a).slice(0, 60))}: ${arg("after")} takes task ids as task add printed them; nothing was added`, {
          data: { after: a },
        });
      }
      if (!known.has(a)) known.set(a, await taskStorage(store).queueOf(a));
      const q = known.get(a);
      if (q === undefined) {
        throw new A2AError("EUSAGE", text`unknown dependency ${a}: no such task in this store, check the id given to ${arg("after")}; nothing was added`, {
          data: { after: a },
        });
      }
      deps.push({ id: a, queue: q });
    }
    out.push({ spec: s, deps });
  }
  return out;
}

// Indexes of `plan` with every task after the ones it depends on; EUSAGE on a cycle.
function order(plan: Planned[]): number[] {
  const byRef = new Map<string, number>();
  plan.forEach((p, i) => p.spec.ref !== undefined && byRef.set(p.spec.ref, i));
  const state = new Array<0 | 1 | 2>(plan.length).fill(0); // unvisited, on the path, placed
  const out: number[] = [];
  const visit = (i: number, path: number[]) => {
    if (state[i] === 2) return;
    if (state[i] === 1) {
      const cycle = [...path.slice(path.indexOf(i)), i].map((j) => plan[j].spec.ref).join(" -> ");
      throw new A2AError("EUSAGE", `the dependencies form a cycle (${cycle}): no task could ever start; nothing was added`, { data: { cycle } });
    }
    state[i] = 1;
    for (const d of plan[i].deps) if ("ref" in d) visit(byRef.get(d.ref)!, [...path, i]);
    state[i] = 2;
    out.push(i);
  };
  plan.forEach((_, i) => visit(i, []));
  return out;
}

// Steps 1 to 6 are the engine's (storage.ts add); the record written is made here.
async function addOne(store: Store, spec: AddSpec, after: Dep[]): Promise<Added> {
  const { queue } = spec;
  const r = await taskStorage(store).add(queue, spec.key, newTaskId(store), after, (id) => {
    const now = nowSec();
    return {
      a2a: 1, id, queue, version: 1, state: "ready", payload: spec.payload, size: Buffer.byteLength(spec.payload, "utf8"),
      key: spec.key ?? null, after, max_attempts: spec.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, ttl_sec: spec.ttlSec ?? null,
      deadline: spec.ttlSec === undefined ? null : now + spec.ttlSec, created_at: now, updated_at: now, attempt: 0, round_from: 0,
      claim: null, attempts: [], result: null, reason: null, host: store.host, pid: process.pid,
    };
  });
  return { id: r.id, queue, created: r.created };
}
