// Adding tasks: one, or a graph of several whose `after` lists name each other by `ref`.
// The steps, the instant the task exists, and what a crash at each leaves are docs/PROTOCOL.md §12,
// "Operations", add, and on disk docs/FILE-ENGINE.md §11 (not repeated here, where they would
// drift). What this module keeps to: everything is validated before the first write, so a refused
// call leaves the store as it was; a failure it lives to see before the task exists (a full disk)
// undoes what it made; two adders with one key both return the one id that was created.

import { rmdirSync } from "node:fs";
import { dirname } from "node:path";
import { checkSize, type Store } from "../core/config";
import { ensureDir, moveFile } from "../core/guard";
import { createAtomic, writeAtomic } from "../core/atomic";
import { appendVersion } from "../core/chain";
import { hashHex } from "../core/digest";
import { A2AError, arg, text } from "../core/errors";
import { exists, readJsonLine, unlinkQuiet } from "../core/fs";
import { addKeyFile, addKeysDir, checkName, dependantFile, isTaskId, openDir, openFile, pendingOpenFile, taskDir } from "../core/paths";
import { checkDuration, nowSec } from "../core/time";
import {
  checkMaxAttempts, checkQueue, checkText, DEFAULT_MAX_ATTEMPTS, encodeTask, newTaskId, type Dep, type TaskRecord,
} from "./record";
import { queueOf, readTask } from "./state";

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

export function addTask(store: Store, queue: string, payload: string, opts: AddOptions = {}): Added {
  return addTasks(store, [{ ...opts, queue, payload }])[0];
}

interface Planned {
  spec: AddSpec;
  deps: (Dep | { ref: string })[];
}

export function addTasks(store: Store, specs: AddSpec[]): Added[] {
  const plan = validate(store, specs);
  const ids = new Map<string, Dep>(); // ref -> the task made for it
  const out: Added[] = new Array(specs.length);
  for (const i of order(plan)) {
    const { spec, deps } = plan[i];
    const after = deps.map((d) => ("ref" in d ? ids.get(d.ref)! : d));
    const added = addOne(store, spec, after);
    if (spec.ref !== undefined) ids.set(spec.ref, added);
    out[i] = added;
  }
  return out;
}

function validate(store: Store, specs: AddSpec[]): Planned[] {
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
  return specs.map((s) => {
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
      if (!known.has(a)) known.set(a, queueOf(store, a));
      const q = known.get(a);
      if (q === undefined) {
        throw new A2AError("EUSAGE", text`unknown dependency ${a}: no such task in this store, check the id given to ${arg("after")}; nothing was added`, {
          data: { after: a },
        });
      }
      deps.push({ id: a, queue: q });
    }
    return { spec: s, deps };
  });
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

const asKey = (r: any): { id: string } | undefined => (r.a2a === 1 && isTaskId(r.id) ? r : undefined);

const keyHash = (key: string) => hashHex("sha256", key).slice(0, 32);

// The id recorded for `key` in `queue`, recording `fresh` if there is none (step 1).
function idForKey(store: Store, queue: string, key: string, fresh: string): string {
  ensureDir(store, addKeysDir(store, queue));
  const path = addKeyFile(store, queue, keyHash(key));
  const rec = JSON.stringify({ a2a: 1, id: fresh, key, at: nowSec(), host: store.host, pid: process.pid }) + "\n";
  for (let i = 0; ; i++) {
    if (createAtomic(store, path, rec)) return fresh;
    const r = readJsonLine(store, path, asKey);
    if (r.kind === "ok") return r.value.id;
    if (i >= 5) throw new A2AError("EIO", `the key record ${path} is ${r.kind === "invalid" ? r.why : "unreadable"}: remove it, then add again`);
    Bun.sleepSync(1 + i * 5);
  }
}

function addOne(store: Store, spec: AddSpec, after: Dep[]): Added {
  const { queue } = spec;
  // What this add made before its task existed, undone when a step up to 5 fails (a full disk,
  // a quota): a refused add leaves the store as it was, as its error says.
  const undo: (() => void)[] = [];
  const dir = (path: string) => {
    for (const d of missingDirs(store, path)) undo.push(() => rmdirQuiet(d));
    ensureDir(store, path);
  };
  try {
    const fresh = newTaskId(store);
    if (spec.key !== undefined) dir(addKeysDir(store, queue));
    const id = spec.key === undefined ? fresh : idForKey(store, queue, spec.key, fresh);
    if (spec.key !== undefined && id === fresh) undo.push(() => unlinkQuiet(addKeyFile(store, queue, keyHash(spec.key!))));
    if (spec.key !== undefined && readTask(store, queue, id)) return { id, queue, created: false }; // step 2: a fresh id names nothing
    const taskPath = taskDir(store, queue, id);
    dir(taskPath);
    // Hints (empty; a power cut that loses one costs a recheck, never a task): no fsync.
    for (const d of after) {
      const hint = dependantFile(store, d.queue, d.id, queue, id);
      if (createAtomic(store, hint, "", { durable: false })) undo.push(() => unlinkQuiet(hint));
    }
    dir(openDir(store, queue));
    const pending = pendingOpenFile(store, queue, id);
    if (!exists(store, pending)) undo.push(() => unlinkQuiet(pending));
    writeAtomic(store, pending, "", { durable: false });
    const now = nowSec();
    const rec: TaskRecord = {
      a2a: 1, id, queue, version: 1, state: "ready", payload: spec.payload, size: Buffer.byteLength(spec.payload, "utf8"),
      key: spec.key ?? null, after, max_attempts: spec.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, ttl_sec: spec.ttlSec ?? null,
      deadline: spec.ttlSec === undefined ? null : now + spec.ttlSec, created_at: now, updated_at: now, attempt: 0, round_from: 0,
      claim: null, attempts: [], result: null, reason: null, host: store.host, pid: process.pid,
    };
    if (!appendVersion(store, taskPath, rec, encodeTask)) return { id, queue, created: false };
    undo.length = 0; // step 5: the task exists; what follows only announces it
    moveFile(store, pending, openFile(store, queue, id), `marking task ${id} open`);
    return { id, queue, created: true };
  } catch (err) {
    for (const u of undo.reverse()) u();
    throw err;
  }
}

// The directories from the store's root down to `path` that do not exist yet, top first.
function missingDirs(store: Store, path: string): string[] {
  const out: string[] = [];
  for (let d = path; d !== store.root && d.startsWith(store.root) && !exists(store, d); d = dirname(d)) out.unshift(d);
  return out;
}

function rmdirQuiet(path: string): void {
  try {
    rmdirSync(path); // only when empty: a concurrent add's files keep it
  } catch {
    // not empty, or gone
  }
}
