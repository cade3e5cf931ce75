// The file engine's task storage (lib/tasks/storage.ts): a task is a chain,
// tasks/QUEUE/ID/NNNNNNNN.json, one file per version, each created exclusively (lib/fs/chain.ts:
// a compare-and-set by link that needs no lock, cannot be left held by a dead process, and
// cannot be broken by a frozen one). docs/FILE-ENGINE.md §10 and §11 are the layout.
//
// Hints (never trusted, only used to find and wake):
// - @open/ID exists for every task that is not final; claimers list only @open/. It is
//   created before the task's first version and replaced (a rename: wakes claim waiters)
//   whenever the task may have become claimable; removed once the task is done or dead.
// - ID/@by.T.Q: T waits for ID; when ID ends, T's @open marker and @bell are replaced.
// Keys: @keys/HASH(key) names the id an add with that key made; @claims/HASH(assignee, key)
// the claim a claim with that key was handed. gc's sweep (lib/fs/task-sweep.ts) uses the
// synchronous helpers here directly.

import { rmdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Store } from "../core/config";
import { createAtomic, dropSpare, prepareSpare, writeAtomic } from "./atomic";
import { appendVersion, changeChain, damageOf, readHead } from "./chain";
import { hashHex } from "../core/digest";
import { A2AError } from "../core/errors";
import { entries, exists, readJsonLine } from "./io";
import { unlinkQuiet } from "../core/unlink";
import { ensureDir, moveFile } from "./guard";
import {
  addKeyFile, addKeysDir, claimKeyFile, claimKeysDir, dependantFile, dependantOf, isTaskId, isValidName, openDir, openFile, pendingOpenFile, queueDir,
  taskBell, taskDir, tasksDir, versionFile,
} from "./paths";
import { nowSec } from "../core/time";
import { encodeTask, taskDecoder, type Dep, type TaskRecord } from "../tasks/record";
import type { DamagedChain } from "../tasks/state";
import type { TaskHead, TaskStorage } from "../tasks/storage";

// The queue task `id` is in, or undefined.
export function queueOf(store: Store, id: string): string | undefined {
  for (const q of entries(store, tasksDir(store))) {
    if (isValidName(q) && exists(store, versionFile(taskDir(store, q, id), 1))) return q;
  }
  return undefined;
}

export function readTask(store: Store, queue: string, id: string): TaskRecord | undefined {
  return readHead(store, taskDir(store, queue, id), taskDecoder(id, queue)).value;
}

// readTask of each of `ids` in `queue` (oldest first) that has a version, a damaged one passed
// over into `damaged` (when given): one damaged task must not stop a listing of the others.
export function readTasks(store: Store, queue: string, ids: string[], damaged?: DamagedChain[]): TaskRecord[] {
  const out: TaskRecord[] = [];
  for (const id of ids) {
    try {
      const rec = readTask(store, queue, id);
      if (rec) out.push(rec); // none: an add that never finished (or a marker left by one)
    } catch (err) {
      const d = damageOf(err);
      if (!d) throw err;
      damaged?.push({ kind: "task", name: id, ...d });
    }
  }
  return out;
}

// A claim or a renew is written without fsync: lost in a power cut, the task reads as it was
// before (ready, or a claim whose lease runs out), and the holder that was handed the lost
// claim cannot finish it, because its token (random) is never handed out again. Everything
// else (an add, done with its result, fail, settle, retry, cancel) is synced before its link.
const needsSync = (rec: TaskRecord) => rec.state !== "claimed";

const headOf = (h: { version: number; value: TaskRecord | undefined; damaged?: TaskHead["damaged"] }): TaskHead => ({ version: h.version, record: h.value, ...(h.damaged ? { damaged: h.damaged } : {}) });

// The hints after a change to `rec`: see the header.
export function afterChange(store: Store, rec: TaskRecord): void {
  if (rec.state === "ready") {
    writeAtomic(store, openFile(store, rec.queue, rec.id), "");
  } else if (rec.state === "done" || rec.state === "dead") {
    dropMarker(store, rec);
    ringDependants(store, rec, new Set());
  }
}

// Removes the @open marker of a final task, then puts it back if the task came back
// meanwhile (a retry between our read and the unlink): a retry writes its version before
// its marker, so either we see the new version here or its marker comes after our unlink.
export function dropMarker(store: Store, rec: TaskRecord): void {
  if (!unlinkQuiet(openFile(store, rec.queue, rec.id))) return;
  const now = readTask(store, rec.queue, rec.id);
  if (now && now.state !== "done" && now.state !== "dead") writeAtomic(store, openFile(store, rec.queue, rec.id), "");
}

// Wakes what waits on `rec`: claimers of its dependants' queues (their @open markers) and
// waiters on the dependants (their @bell), transitively when `rec` died (they die with it,
// however far down: `dying` carries that down, since the dependants' own records are not dead).
function ringDependants(store: Store, rec: TaskRecord, seen: Set<string>, dying = rec.state === "dead"): void {
  for (const f of entries(store, taskDir(store, rec.queue, rec.id))) {
    const t = dependantOf(f);
    if (!t || seen.has(t.id)) continue;
    seen.add(t.id);
    const dep = readTasks(store, t.queue, [t.id])[0]; // a damaged dependant is not woken: it cannot be read either
    if (!dep || dep.state === "done" || dep.state === "dead") continue;
    try {
      if (rec.state === "done") writeAtomic(store, openFile(store, t.queue, t.id), "");
      writeAtomic(store, taskBell(store, t.queue, t.id), "");
    } catch {
      // a hint: waiters also look again every RECHECK_MS
    }
    if (dying) ringDependants(store, dep, seen, true);
  }
}

// The ids @open/ lists, oldest first (claim step 2). A pending marker `.ID` whose task has
// its version 1 is an add that crashed between its steps 5 and 6, or is between them now: it
// is promoted to `ID` here so that the task is listed. Promoting early is harmless: the
// adder's own rename then finds nothing to move.
export function openIds(store: Store, queue: string): string[] {
  const ids: string[] = [];
  for (const f of entries(store, openDir(store, queue), true)) {
    if (!f.startsWith(".")) {
      if (isTaskId(f)) ids.push(f);
      continue;
    }
    const id = f.slice(1);
    if (isTaskId(id) && exists(store, versionFile(taskDir(store, queue, id), 1))) {
      moveFile(store, pendingOpenFile(store, queue, id), openFile(store, queue, id), `marking task ${id} open`);
      ids.push(id);
    }
  }
  return [...new Set(ids)].sort();
}

// Queues present in the store.
export const queues = (store: Store) => entries(store, tasksDir(store)).filter(isValidName);
export const queueExists = (store: Store, q: string) => exists(store, queueDir(store, q));

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

// Add steps 1 to 6 (docs/FILE-ENGINE.md §11) for the record `build` makes once the id is known.
function addOne(store: Store, queue: string, key: string | undefined, fresh: string, after: Dep[], build: (id: string) => TaskRecord): { id: string; created: boolean } {
  // What this add made before its task existed, undone when a step up to 5 fails (a full disk,
  // a quota): a refused add leaves the store as it was, as its error says.
  const undo: (() => void)[] = [];
  const dir = (path: string) => {
    for (const d of missingDirs(store, path)) undo.push(() => rmdirQuiet(d));
    ensureDir(store, path);
  };
  try {
    if (key !== undefined) dir(addKeysDir(store, queue));
    const id = key === undefined ? fresh : idForKey(store, queue, key, fresh);
    if (key !== undefined && id === fresh) undo.push(() => unlinkQuiet(addKeyFile(store, queue, keyHash(key))));
    if (key !== undefined && readTask(store, queue, id)) return { id, created: false }; // step 2: a fresh id names nothing
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
    if (!appendVersion(store, taskPath, build(id), encodeTask)) return { id, created: false };
    undo.length = 0; // step 5: the task exists; what follows only announces it
    moveFile(store, pending, openFile(store, queue, id), `marking task ${id} open`);
    return { id, created: true };
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

const asClaimKey = (r: any): { id: string; queue: string; token: string } | undefined =>
  r.a2a === 1 && isTaskId(r.id) && typeof r.token === "string" ? r : undefined;

const claimKeyPath = (store: Store, queue: string, assignee: string, key: string) => claimKeyFile(store, queue, hashHex("sha256", `${assignee}\n${key}`).slice(0, 32));

export function fileTasks(store: Store): TaskStorage {
  return {
    queues: async () => queues(store),
    queueExists: async (queue) => queueExists(store, queue),
    queueOf: async (id) => queueOf(store, id),
    find: async (id) => {
      const queue = queueOf(store, id);
      return queue === undefined ? undefined : { queue, head: headOf(readHead(store, taskDir(store, queue, id), taskDecoder(id, queue), false)) };
    },
    ids: async (queue) => entries(store, queueDir(store, queue)).filter(isTaskId),
    open: async (queue) => entries(store, openDir(store, queue)).filter(isTaskId),
    candidates: async function* (queue) {
      yield openIds(store, queue).map((id) => ({ id }));
    },
    records: async (queue, ids, damaged) => readTasks(store, queue, ids, damaged),
    head: async (queue, id, repair = false) => headOf(readHead(store, taskDir(store, queue, id), taskDecoder(id, queue), repair)),
    add: async (queue, key, fresh, after, build) => addOne(store, queue, key, fresh, after, build),
    change: async (queue, id, next, repair = false) => {
      const r = changeChain(store, taskDir(store, queue, id), taskDecoder(id, queue), encodeTask, (h) => next(headOf(h)), needsSync, repair);
      if (r.changed) afterChange(store, r.head.value!);
      return { head: headOf(r.head), changed: r.changed };
    },
    dropCandidate: async (rec) => dropMarker(store, rec),
    claimKey: async (queue, assignee, key) => {
      const k = readJsonLine(store, claimKeyPath(store, queue, assignee, key), asClaimKey);
      return k.kind === "ok" ? { id: k.value.id, token: k.value.token } : undefined;
    },
    setClaimKey: async (queue, assignee, key, claim) => {
      ensureDir(store, claimKeysDir(store, queue));
      writeAtomic(store, claimKeyPath(store, queue, assignee, key), JSON.stringify({ a2a: 1, id: claim.id, queue, token: claim.token, at: claim.at }) + "\n");
    },
    prepareWait: async (queue) => ensureDir(store, openDir(store, queue)),
    // While it waits, the claimer holds its claim's temp file ready (atomic.ts prepareSpare):
    // between the wake and the claim there is then no inode to create.
    readyToWrite: () => prepareSpare(store),
    doneWaiting: () => dropSpare(store),
    locate: (queue, id) => taskDir(store, queue, id),
    heads: async (tasks) => tasks.map(({ queue, id }) => headOf(readHead(store, taskDir(store, queue, id), taskDecoder(id, queue), true))),
    restore: async (recs) => recs.map((rec) => restoreTask(store, rec)),
  };
}

// TaskStorage.restore. The chain gets version 1 (queueOf and the candidates look for it; a copy
// of the head) before the head's own version, so a restore cut short between them is completed
// by the next one; versions between are never read (a head is the highest, and a hole below a
// head only matters when the head itself is one).
function restoreTask(store: Store, rec: TaskRecord): boolean {
  const { queue, id } = rec;
  const dir = taskDir(store, queue, id);
  if (readHead(store, dir, taskDecoder(id, queue), true).version >= rec.version) return false;
  ensureDir(store, dir);
  if (rec.key !== null) idForKey(store, queue, rec.key, id);
  for (const d of rec.after) createAtomic(store, dependantFile(store, d.queue, d.id, queue, id), "", { durable: false });
  const final = rec.state === "done" || rec.state === "dead";
  if (!final) {
    ensureDir(store, openDir(store, queue));
    writeAtomic(store, pendingOpenFile(store, queue, id), "", { durable: false });
  }
  if (rec.version > 1 && !exists(store, versionFile(dir, 1))) appendVersion(store, dir, { ...rec, version: 1 }, encodeTask);
  if (!appendVersion(store, dir, rec, encodeTask)) return false;
  if (final) afterChange(store, rec);
  else moveFile(store, pendingOpenFile(store, queue, id), openFile(store, queue, id), `marking task ${id} open`);
  return true;
}
