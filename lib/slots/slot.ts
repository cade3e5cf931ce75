// Slot operations: start, publish, clear, append, read, list (their sweep is in lib/maintenance/gc.ts).
// A slot is one record file (record.ts) replaced atomically (lib/core/atomic.ts) under the
// slot's lock (lib/core/lock.ts).
//
// Invariants:
// - every change goes through `mutate`: lock, read, compute, write, unlock; so `version` grows
//   by exactly one per change, and --if-version is a true compare-and-set across processes;
// - readers never lock; a record that is absent, cleared (a tombstone), expired, or fails its
//   checks (torn read on a caching filesystem, foreign garbage) reads as absent, never as an
//   error or a wrong value;
// - versions never go backwards: clear and the expiry sweep leave a tombstone carrying the
//   next version, which gc removes only after TOMBSTONE_KEEP_SEC;
// - invalid input is rejected before anything is touched, so a failed call leaves the store
//   exactly as it was.

import { cut } from "../core/cut";
import { writeAtomic } from "../core/atomic";
import { checkSize, type Store } from "../core/config";
import { checkStore, ensureDir, removeFile } from "../core/guard";
import { A2AError, arg, op, text } from "../core/errors";
import { entries, fitRecord } from "../core/fs";
import { type Lock, withLock } from "../core/lock";
import { byName, checkName, chunkFile, slotFile, slotNameOf, slotsDir, streamDir } from "../core/paths";
import { checkDuration, isoTime, nowSec } from "../core/time";
import { removeChunks } from "./chunks";
import { readSlot } from "./read";
import { encodeRecord, type SlotRecord } from "./record";

export interface TtlOption {
  ttlSec?: number; // seconds until the record counts as absent
}

function checkTtl(opts: TtlOption): void {
  if (opts.ttlSec !== undefined) checkDuration(opts.ttlSec, "TTL", "ttl");
}

function expiry(opts: TtlOption, now: number, previous: number | null): number | null {
  return opts.ttlSec !== undefined ? now + opts.ttlSec : previous;
}

// Lock, read the live record, let `change` compute the next one, write it, run `afterWrite`
// (still under the lock), unlock. `change` gets the last version ever written (a tombstone's
// or an expired record's too), so the next version continues from it.
async function mutate(
  store: Store,
  name: string,
  change: (old: SlotRecord | undefined, now: number, lastVersion: number, lock: Lock) => SlotRecord,
  afterWrite?: () => void,
  undo?: () => void, // runs under the lock when the record could not be written
): Promise<SlotRecord> {
  checkName(name);
  ensureDir(store, slotsDir(store));
  return withLock(store, name, (lock) => {
    const r = readSlot(store, name);
    // Under the lock nobody is writing it, so a record that still fails its checks after the
    // retries is damaged, not torn: writing over it would lose its version (and let a
    // --if-version 0 through), so stop and say so.
    if (r.kind === "corrupt") {
      throw new A2AError("EIO", text`slot ${name}'s record is unreadable (damaged or not an a2a record): check ${slotFile(store, name)}, or remove it with ${op("clear", name)}`, {
        data: { slot: name, file: slotFile(store, name) },
      });
    }
    const old = r.kind === "ok" ? r.record : undefined;
    const last = r.kind === "ok" ? r.record : r.kind === "absent" ? r.last : undefined;
    const next = change(old, nowSec(), last?.version ?? 0, lock);
    try {
      writeAtomic(store, slotFile(store, name), fitRecord(store, encodeRecord(next), `slot ${name}'s record`), { beforeCommit: lock.check });
    } catch (err) {
      if (lock.ours()) undo?.(); // taken over: what is there now is the new holder's
      throw err;
    }
    afterWrite?.();
    return next;
  });
}

function base(store: Store, name: string, now: number): Omit<SlotRecord, "state" | "task" | "result" | "version"> {
  return {
    a2a: 1, name, size: 0, started_at: now, published_at: null, updated_at: now,
    expires_at: null, chunks: 0, host: store.host, pid: process.pid,
  } as const;
}

export interface StartOptions extends TtlOption {
  // Refuse (ECONFLICT, naming the holder) when the slot is running and not expired, so two
  // agents cannot both believe they own it. Decided under the slot's lock: of two exclusive
  // starts on a slot that is not running, the second one is refused.
  exclusive?: boolean;
}

// Announces work on `name`: a fresh running record; a published slot goes back to running
// and the previous run's streamed chunks are dropped.
export async function startSlot(store: Store, name: string, task = "", opts: StartOptions = {}): Promise<SlotRecord> {
  checkName(name);
  checkSize(store, task, "the task");
  checkTtl(opts);
  // The old run's chunks go only after the new record (chunks: 0) is in place: removing them
  // first let readers, and for good after a crash or a full disk, see a record counting
  // chunks that were gone. A crash between the two leaves stale chunk files that no record
  // counts; each append of the new run replaces its file before counting it.
  return mutate(
    store,
    name,
    (old, now, lastVersion) => {
      if (opts.exclusive && old?.state === "running") throw runningConflict(old);
      return {
        ...base(store, name, now),
        state: "running", task, result: null,
        version: lastVersion + 1,
        expires_at: expiry(opts, now, null),
      };
    },
    () => {
      try {
        removeChunks(store, name);
      } catch {
        // The start itself took effect; leftovers are uncounted and harmless (see above).
      }
    },
  );
}

function runningConflict(old: SlotRecord): A2AError {
  const until = old.expires_at === null ? "no expiry" : `until ${isoTime(old.expires_at)}`;
  const task = old.task ? `, task ${JSON.stringify(cut(old.task, 60))}` : "";
  return new A2AError(
    "ECONFLICT",
    text`slot ${old.name} is already running (started ${isoTime(old.started_at)} by pid ${old.pid} on ${old.host}${task}, ${until}): wait for it with ${op("wait", old.name)}, or clear it with ${op("clear", old.name)} if its agent is gone`,
    { data: { slot: old.name, host: old.host, pid: old.pid, started_at: old.started_at, expires_at: old.expires_at, task: old.task } },
  );
}

export interface PublishOptions extends TtlOption {
  ifVersion?: number; // publish only if the slot's version is still this (0 = absent)
}

// Publishes `result` on `name`, keeping the task and start time of a running slot.
export async function publishSlot(store: Store, name: string, result: string, opts: PublishOptions = {}): Promise<SlotRecord> {
  checkName(name);
  checkSize(store, result, "the result");
  checkTtl(opts);
  return mutate(store, name, (old, now, lastVersion) => {
    const current = old?.version ?? 0; // an absent slot (even with a tombstone) is version 0
    if (opts.ifVersion !== undefined && opts.ifVersion !== current) {
      throw new A2AError(
        "ECONFLICT",
        text`slot ${name} is at version ${current}, not ${opts.ifVersion}: read it again (${op("status", name, arg("json"))}) and retry with ${arg("ifVersion", current)}`,
        { data: { slot: name, version: current, expected: opts.ifVersion } },
      );
    }
    return {
      ...base(store, name, now),
      state: "done", task: old?.task ?? "", result, size: Buffer.byteLength(result, "utf8"),
      version: lastVersion + 1,
      started_at: old?.started_at ?? now,
      published_at: now,
      expires_at: expiry(opts, now, old?.expires_at ?? null),
      chunks: old?.chunks ?? 0,
    };
  });
}

// Streams one chunk of partial output into a running slot (starting it if absent).
export async function appendChunk(store: Store, name: string, chunk: string): Promise<SlotRecord> {
  checkName(name);
  checkSize(store, chunk, "the chunk");
  let written: string | undefined;
  return mutate(
    store,
    name,
    (old, now, lastVersion, lock) => {
      if (old?.state === "done") {
        throw new A2AError("ECONFLICT", text`slot ${name} is already published: start a new run first (${op("start", name)})`, { data: { slot: name } });
      }
      const n = (old?.chunks ?? 0) + 1;
      ensureDir(store, streamDir(store, name));
      // The chunk lands before the record that counts it, so a reader never sees a count
      // whose file is missing.
      writeAtomic(store, (written = chunkFile(store, name, n)), chunk, { beforeCommit: lock.check });
      return old
        ? { ...old, version: old.version + 1, chunks: n, updated_at: now, host: store.host, pid: process.pid }
        : { ...base(store, name, now), state: "running", task: "", result: null, version: lastVersion + 1, chunks: n };
    },
    undefined,
    // No record counts the chunk: it must not stay (a failed call leaves the store as it was).
    () => {
      if (written) removeFile(store, written);
    },
  );
}


export const TOMBSTONE_KEEP_SEC = 24 * 3600;

// The record that replaces `last` when the slot is cleared or swept: absent to every reader,
// but carrying the next version.
export function tombstone(store: Store, last: SlotRecord, now: number): SlotRecord {
  return {
    ...base(store, last.name, now),
    state: "cleared", task: "", result: null, version: last.version + 1, started_at: last.started_at,
  };
}

// Replaces `last` by its tombstone. On a full disk the tombstone (a few hundred bytes) may not
// fit: the slot's chunks are removed first to make room (the record still counts them, and a
// reader of a missing chunk takes it as dropped by a new run), then it is tried once more.
function writeTombstone(store: Store, last: SlotRecord, lock: Lock): void {
  const write = () => writeAtomic(store, slotFile(store, last.name), encodeRecord(tombstone(store, last, nowSec())), { beforeCommit: lock.check });
  try {
    write();
  } catch (err) {
    const errno = err instanceof A2AError ? err.data.errno : undefined;
    if (errno !== "ENOSPC" && errno !== "EDQUOT") throw err;
    removeChunks(store, last.name);
    write();
  }
}

// Clears a slot: a tombstone replaces its record, then its chunks go. Returns false when there
// was no live record. With `removeDamaged`, a regular file under the name that is not a valid
// record (damage, or garbage written there) is removed; `clear --all` leaves such files alone.
export async function clearSlot(store: Store, name: string, removeDamaged = true): Promise<boolean> {
  checkName(name);
  if (readSlot(store, name).kind === "absent") return false;
  return withLock(store, name, (lock) => {
    const r = readSlot(store, name);
    if (r.kind === "absent") return false;
    if (r.kind === "corrupt") {
      if (!removeDamaged) return false;
      if (!removeFile(store, slotFile(store, name))) {
        throw new A2AError("EIO", `${slotFile(store, name)} is not a file a2a wrote (a directory, link or device): a2a removes only its own records; remove it by hand`, {
          data: { slot: name },
        });
      }
    } else writeTombstone(store, r.record, lock);
    removeChunks(store, name);
    return true;
  });
}

export interface SlotListing {
  records: SlotRecord[]; // live records, newest change first
  skipped: string[]; // files in slots/ that are not valid records (left untouched)
}

// Every live slot (or just `only`), newest first; expired ones are swept on the way.
export async function listSlots(store: Store, only?: string[]): Promise<SlotListing> {
  only?.forEach((n) => checkName(n));
  const wanted = only ?? entries(store, slotsDir(store)).map(slotNameOf).filter((n): n is string => !!n);
  const records: SlotRecord[] = [];
  const skipped: string[] = [];
  for (const name of wanted) {
    const r = readSlot(store, name);
    if (r.kind === "ok") records.push(r.record);
    else if (r.kind === "corrupt") skipped.push(name);
    // The lazy sweep is housekeeping: a store this process cannot write must still list.
    else if (r.expired) await sweepExpired(store, name).catch(() => false);
  }
  records.sort((a, b) => b.updated_at - a.updated_at || byName(a.name, b.name));
  return { records, skipped };
}

// Tombstones `name` if, under its lock, it is still expired (a concurrent start may have renewed it).
export async function sweepExpired(store: Store, name: string): Promise<boolean> {
  return withLock(store, name, (lock) => {
    const r = readSlot(store, name);
    if (r.kind !== "absent" || !r.expired || !r.last) return false;
    writeAtomic(store, slotFile(store, name), encodeRecord(tombstone(store, r.last, nowSec())), { beforeCommit: lock.check });
    removeChunks(store, name);
    return true;
  });
}

// Clears every slot; returns the names that held a live record.
export async function clearAll(store: Store): Promise<string[]> {
  checkStore(store);
  const cleared: string[] = [];
  for (const file of entries(store, slotsDir(store))) {
    const name = slotNameOf(file);
    if (name && (await clearSlot(store, name, false))) cleared.push(name);
  }
  return cleared;
}

