// Slot operations: start, publish, clear, append, read, list, gc. A slot is one record file
// (lib/record.ts) replaced atomically (lib/atomic.ts) under the slot's lock (lib/lock.ts).
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

import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { A2AError, ioError } from "../core/errors";
import { TMP_STALE_MS, writeAtomic } from "../core/atomic";
import { withLock, STALE_MS } from "../core/lock";
import { checkName, chunkFile, isValidName, locksDir, slotFile, slotNameOf, slotsDir, streamDir, streamsDir, tmpDir } from "../core/paths";
import { decodeRecord, encodeRecord, isExpired, nowSec, type SlotRecord } from "./record";
import { checkSize, ensureDir, type Store } from "../core/config";

export type ReadResult =
  | { kind: "ok"; record: SlotRecord }
  | { kind: "absent"; last?: SlotRecord; expired?: boolean } // last: tombstone or expired record
  | { kind: "corrupt" };

// The text of a slot file, or undefined when something other than a regular file sits under
// its name: a directory, FIFO or device dropped into slots/ is foreign, and reading a FIFO
// (or a symlink to /dev/zero) would block or never end. O_NONBLOCK keeps a FIFO's open from
// blocking; regular files ignore it.
function readRegularFile(path: string): string | undefined {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd, "utf8") : undefined;
  } finally {
    closeSync(fd);
  }
}

// One read of a slot file. `retries` re-reads a record that fails its checks (a torn read);
// wait loops pass 0 because their next wake-up is the retry.
export function readSlot(store: Store, name: string, retries = 3): ReadResult {
  for (let i = 0; ; i++) {
    let text: string | undefined;
    try {
      text = readRegularFile(slotFile(store, name));
      if (text === undefined) return { kind: "corrupt" };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return { kind: "absent" };
      if (code !== "ESTALE" || i >= retries) {
        if (code === "ESTALE") return { kind: "corrupt" };
        throw ioError(err, `reading slot ${name}`);
      }
      continue;
    }
    const record = decodeRecord(text);
    if (record && record.name === name) {
      if (record.state === "cleared") return { kind: "absent", last: record };
      return isExpired(record) ? { kind: "absent", last: record, expired: true } : { kind: "ok", record };
    }
    if (i >= retries) return { kind: "corrupt" };
    Bun.sleepSync(1 + i * 5);
  }
}

// The live record of `name`, or undefined (absent, expired or unreadable).
export function getSlot(store: Store, name: string): SlotRecord | undefined {
  checkName(name);
  const r = readSlot(store, name);
  return r.kind === "ok" ? r.record : undefined;
}

export interface TtlOption {
  ttlSec?: number; // seconds until the record counts as absent
}

function checkTtl(opts: TtlOption): void {
  if (opts.ttlSec !== undefined && !(opts.ttlSec > 0)) {
    throw new A2AError("EUSAGE", `a TTL of ${opts.ttlSec} s would expire the record at once: give a positive duration, e.g. --ttl 30m`);
  }
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
  change: (old: SlotRecord | undefined, now: number, lastVersion: number) => SlotRecord,
  afterWrite?: () => void,
  undo?: () => void, // runs under the lock when the record could not be written
): Promise<SlotRecord> {
  checkName(name);
  ensureDir(store, slotsDir(store));
  return withLock(store, name, () => {
    const r = readSlot(store, name);
    // Under the lock nobody is writing it, so a record that still fails its checks after the
    // retries is damaged, not torn: writing over it would lose its version (and let a
    // --if-version 0 through), so stop and say so.
    if (r.kind === "corrupt") {
      throw new A2AError("EIO", `slot ${name}'s record is unreadable (damaged or not an a2a record): check ${slotFile(store, name)}, or remove it with a2a clear ${name}`);
    }
    const old = r.kind === "ok" ? r.record : undefined;
    const last = r.kind === "ok" ? r.record : r.kind === "absent" ? r.last : undefined;
    const next = change(old, nowSec(), last?.version ?? 0);
    try {
      writeAtomic(store, slotFile(store, name), encodeRecord(next));
    } catch (err) {
      undo?.();
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

// Announces work on `name`: a fresh running record; a published slot goes back to running
// and the previous run's streamed chunks are dropped.
export async function startSlot(store: Store, name: string, task = "", opts: TtlOption = {}): Promise<SlotRecord> {
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
    (_old, now, lastVersion) => ({
      ...base(store, name, now),
      state: "running", task, result: null,
      version: lastVersion + 1,
      expires_at: expiry(opts, now, null),
    }),
    () => {
      try {
        removeChunks(store, name);
      } catch {
        // The start itself took effect; leftovers are uncounted and harmless (see above).
      }
    },
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
        `slot ${name} is at version ${current}, not ${opts.ifVersion}: read it again (a2a status ${name} --json) and retry with --if-version ${current}`,
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
    (old, now, lastVersion) => {
      if (old?.state === "done") {
        throw new A2AError("ECONFLICT", `slot ${name} is already published: start a new run first (a2a start ${name})`);
      }
      const n = (old?.chunks ?? 0) + 1;
      ensureDir(store, streamDir(store, name));
      // The chunk lands before the record that counts it, so a reader never sees a count
      // whose file is missing.
      writeAtomic(store, (written = chunkFile(store, name, n)), chunk);
      return old
        ? { ...old, version: old.version + 1, chunks: n, updated_at: now, host: store.host, pid: process.pid }
        : { ...base(store, name, now), state: "running", task: "", result: null, version: lastVersion + 1, chunks: n };
    },
    undefined,
    // No record counts the chunk: it must not stay (a failed call leaves the store as it was).
    () => written && unlinkQuiet(written),
  );
}

// Chunks after number `after` (1-based) that the record counts, in order.
export function readChunks(store: Store, name: string, after: number, upTo: number): string[] {
  const out: string[] = [];
  for (let n = after + 1; n <= upTo; n++) {
    try {
      out.push(readFileSync(chunkFile(store, name, n), "utf8"));
    } catch (err) {
      // A concurrent `start` dropped this run's chunks: the caller sees the new run next.
      if ((err as NodeJS.ErrnoException).code === "ENOENT") break;
      throw ioError(err, `reading chunk ${n} of ${name}`);
    }
  }
  return out;
}

function removeChunks(store: Store, name: string): void {
  rmSync(streamDir(store, name), { recursive: true, force: true });
}

export const TOMBSTONE_KEEP_SEC = 24 * 3600;

// The record that replaces `last` when the slot is cleared or swept: absent to every reader,
// but carrying the next version.
function tombstone(store: Store, last: SlotRecord, now: number): SlotRecord {
  return {
    ...base(store, last.name, now),
    state: "cleared", task: "", result: null, version: last.version + 1, started_at: last.started_at,
  };
}

// Clears a slot: a tombstone replaces its record, then its chunks go. Returns false when there
// was no live record. A file that is not a valid record (foreign garbage) is removed.
export async function clearSlot(store: Store, name: string): Promise<boolean> {
  checkName(name);
  if (readSlot(store, name).kind === "absent") return false;
  return withLock(store, name, () => {
    const r = readSlot(store, name);
    if (r.kind === "absent") return false;
    if (r.kind === "corrupt") {
      try {
        unlinkSync(slotFile(store, name));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw ioError(err, `clearing slot ${name}`);
      }
    } else writeAtomic(store, slotFile(store, name), encodeRecord(tombstone(store, r.record, nowSec())));
    removeChunks(store, name);
    return true;
  });
}

function names(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw ioError(err, `listing ${dir}`);
  }
}

export interface SlotListing {
  records: SlotRecord[]; // live records, newest change first
  skipped: string[]; // files in slots/ that are not valid records (left untouched)
}

// Every live slot (or just `only`), newest first; expired ones are swept on the way.
export async function listSlots(store: Store, only?: string[]): Promise<SlotListing> {
  only?.forEach((n) => checkName(n));
  const wanted = only ?? names(slotsDir(store)).map(slotNameOf).filter((n): n is string => !!n);
  const records: SlotRecord[] = [];
  const skipped: string[] = [];
  for (const name of wanted) {
    const r = readSlot(store, name);
    if (r.kind === "ok") records.push(r.record);
    else if (r.kind === "corrupt") skipped.push(name);
    // The lazy sweep is housekeeping: a store this process cannot write must still list.
    else if (r.expired) await sweepExpired(store, name).catch(() => false);
  }
  records.sort((a, b) => b.updated_at - a.updated_at || a.name.localeCompare(b.name));
  return { records, skipped };
}

// Tombstones `name` if, under its lock, it is still expired (a concurrent start may have renewed it).
async function sweepExpired(store: Store, name: string): Promise<boolean> {
  return withLock(store, name, () => {
    const r = readSlot(store, name);
    if (r.kind !== "absent" || !r.expired || !r.last) return false;
    writeAtomic(store, slotFile(store, name), encodeRecord(tombstone(store, r.last, nowSec())));
    removeChunks(store, name);
    return true;
  });
}

// Clears every slot; returns the names that held a live record.
export async function clearAll(store: Store): Promise<string[]> {
  const cleared: string[] = [];
  for (const file of names(slotsDir(store))) {
    const name = slotNameOf(file);
    if (name && (await clearSlot(store, name))) cleared.push(name);
  }
  return cleared;
}

export interface GcReport {
  expired: string[]; // slots past their TTL, replaced by tombstones
  tombstones: number; // tombstones older than TOMBSTONE_KEEP_SEC, removed
  temp_files: number; // abandoned temp files older than TMP_STALE_MS, removed
  orphan_streams: string[]; // chunk directories of slots that no longer exist, removed
  stale_locks: string[]; // lock directories older than the stale limit, removed
}

// Sweeps what crashes and expiry leave behind. Safe to run at any time, from any process.
export async function gc(store: Store, tmpMaxAgeMs = TMP_STALE_MS): Promise<GcReport> {
  const report: GcReport = { expired: [], tombstones: 0, temp_files: 0, orphan_streams: [], stale_locks: [] };
  const now = Date.now();
  for (const file of names(slotsDir(store))) {
    const name = slotNameOf(file);
    const r = name ? readSlot(store, name) : undefined;
    if (!name || r?.kind !== "absent" || !r.last) continue;
    if (r.expired) {
      if (await sweepExpired(store, name)) report.expired.push(name);
    } else if (r.last.updated_at < now / 1000 - TOMBSTONE_KEEP_SEC && (await removeTombstone(store, name))) {
      report.tombstones++;
    }
  }
  for (const file of names(tmpDir(store))) {
    const p = join(tmpDir(store), file);
    if (ageMs(p, now) > tmpMaxAgeMs && unlinkQuiet(p)) report.temp_files++;
  }
  for (const name of names(streamsDir(store))) {
    if (name.startsWith(".") || !isValidName(name) || readSlot(store, name).kind !== "absent") continue;
    // Under the lock, so an `append` creating this slot right now is not undone.
    const removed = await withLock(store, name, () => {
      if (readSlot(store, name).kind !== "absent") return false;
      removeChunks(store, name);
      return true;
    }).catch(() => false);
    if (removed) report.orphan_streams.push(name);
  }
  for (const file of names(locksDir(store))) {
    const p = join(locksDir(store), file);
    if (ageMs(p, now) > STALE_MS * 5) {
      try {
        rmSync(p, { recursive: true, force: true });
        report.stale_locks.push(file.replace(/\.lock$/, ""));
      } catch {
        // taken over or released meanwhile
      }
    }
  }
  return report;
}

// Removes the tombstone of `name` if, under its lock, it still is one.
async function removeTombstone(store: Store, name: string): Promise<boolean> {
  return withLock(store, name, () => {
    const r = readSlot(store, name);
    return r.kind === "absent" && !r.expired && !!r.last && unlinkQuiet(slotFile(store, name));
  });
}

function ageMs(path: string, now: number): number {
  try {
    return now - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function unlinkQuiet(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}
