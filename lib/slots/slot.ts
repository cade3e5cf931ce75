// Slot operations: start, publish, clear, append, list (reads are read.ts; the sweep of old
// tombstones is each engine's gc: lib/fs/gc.ts, lib/pg/gc.ts). The rules are here; the engine keeps the records
// (storage.ts): every change is one exclusive change of the engine, decided here.
//
// Invariants:
// - every change goes through `mutate`: one exclusive change per name (read, decide, write), so
//   `version` grows by exactly one per change, and --if-version is a true compare-and-set
//   across processes;
// - readers never lock; a record that is absent, cleared (a tombstone), expired, or fails its
//   checks (torn read on a caching filesystem, foreign garbage) reads as absent, never as an
//   error or a wrong value;
// - versions never go backwards: clear and the expiry sweep leave a tombstone carrying the
//   next version, which gc removes only after TOMBSTONE_KEEP_SEC;
// - invalid input is rejected before anything is touched, so a failed call leaves the store
//   exactly as it was.

import { checkAttachments } from "../blobs/room";
import { cut } from "../core/cut";
import type { Store } from "../core/config";
import { checkSize } from "../core/size";
import { A2AError, arg, op, text } from "../core/errors";
import { byName, checkName } from "../core/names";
import { checkDuration, isoTime, nowSec } from "../core/time";
import type { SlotRecord } from "./record";
import { slotStorage, type Decision, type ReadResult } from "./storage";
import { utf8Length } from "../core/utf8";

export interface TtlOption {
  ttlSec?: number; // seconds until the record counts as absent
}

function checkTtl(opts: TtlOption): void {
  if (opts.ttlSec !== undefined) checkDuration(opts.ttlSec, "TTL", "ttl");
}

function expiry(opts: TtlOption, now: number, previous: number | null): number | null {
  return opts.ttlSec !== undefined ? now + opts.ttlSec : previous;
}

// One change of `name`: `next` computes the new record from the live one (undefined: none) and
// the last version ever written (a tombstone's or an expired record's too, so the next version
// continues from it); `chunk`, when given, is stored before the record that counts it.
async function mutate(
  store: Store,
  name: string,
  next: (old: SlotRecord | undefined, now: number, lastVersion: number) => { record: SlotRecord; chunk?: Decision<unknown>["chunk"]; dropChunks?: boolean },
): Promise<SlotRecord> {
  checkName(name);
  const storage = slotStorage(store);
  return storage.change(name, (r) => {
    // Under the change's exclusion nobody is writing it, so a record that still fails its
    // checks after the retries is damaged, not torn: writing over it would lose its version
    // (and let a --if-version 0 through), so stop and say so.
    if (r.kind === "corrupt") {
      throw new A2AError("EIO", text`slot ${name}'s record is unreadable (damaged or not an a2a record): check ${storage.locate(name)}, or remove it with ${op("clear", name)}`, {
        data: { slot: name, file: storage.locate(name) },
      });
    }
    const old = r.kind === "ok" ? r.record : undefined;
    const last = r.kind === "ok" ? r.record : r.last;
    const d = next(old, nowSec(), last?.version ?? 0);
    return { value: d.record, ...d };
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
  // The previous run's chunks go once the new record (chunks: 0) is in place (storage.ts).
  return mutate(store, name, (old, now, lastVersion) => {
    if (opts.exclusive && old?.state === "running") throw runningConflict(old);
    return {
      record: {
        ...base(store, name, now),
        state: "running", task, result: null,
        version: lastVersion + 1,
        expires_at: expiry(opts, now, null),
      },
      dropChunks: true,
    };
  });
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
  attach?: { digest: string; name: string }[]; // blobs stored already (a2a put), published with the result
}

// Publishes `result` on `name`, keeping the task and start time of a running slot.
export async function publishSlot(store: Store, name: string, result: string, opts: PublishOptions = {}): Promise<SlotRecord> {
  checkName(name);
  checkSize(store, result, "the result", true);
  checkTtl(opts);
  const attachments = opts.attach?.length ? await checkAttachments(store, opts.attach) : undefined;
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
      record: {
        ...base(store, name, now),
        state: "done", task: old?.task ?? "", result, size: utf8Length(result),
        version: lastVersion + 1,
        started_at: old?.started_at ?? now,
        published_at: now,
        expires_at: expiry(opts, now, old?.expires_at ?? null),
        chunks: old?.chunks ?? 0,
        ...(attachments ? { attachments } : {}),
      },
    };
  });
}

// Streams one chunk of partial output into a running slot (starting it if absent).
export async function appendChunk(store: Store, name: string, chunk: string): Promise<SlotRecord> {
  checkName(name);
  checkSize(store, chunk, "the chunk");
  return mutate(store, name, (old, now, lastVersion) => {
    if (old?.state === "done") {
      throw new A2AError("ECONFLICT", text`slot ${name} is already published: start a new run first (${op("start", name)})`, { data: { slot: name } });
    }
    const n = (old?.chunks ?? 0) + 1;
    const record: SlotRecord = old
      ? { ...old, version: old.version + 1, chunks: n, updated_at: now, host: store.host, pid: process.pid }
      : { ...base(store, name, now), state: "running", task: "", result: null, version: lastVersion + 1, chunks: n };
    return { record, chunk: { n, text: chunk } };
  });
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

// What ends a run and leaves its version behind: the tombstone replacing the live record, and
// the run's chunks dropped (on a full disk first: storage.ts).
const endRun = (store: Store, last: SlotRecord): Pick<Decision<boolean>, "record" | "dropChunks" | "endsRun"> => ({ record: tombstone(store, last, nowSec()), dropChunks: true, endsRun: true });

// Clears a slot: a tombstone replaces its record, then its chunks go. Returns false when there
// was no live record. With `removeDamaged`, a record that is not valid (damage, or garbage
// written there) is removed; `clear --all` leaves such records alone.
export async function clearSlot(store: Store, name: string, removeDamaged = true): Promise<boolean> {
  checkName(name);
  const storage = slotStorage(store);
  if ((await storage.read(name)).kind === "absent") return false;
  return storage.change(name, (r: ReadResult): Decision<boolean> => {
    if (r.kind === "absent") return { value: false };
    if (r.kind === "corrupt") return removeDamaged ? { value: true, removeDamaged: true, dropChunks: true } : { value: false };
    return { value: true, ...endRun(store, r.record) };
  });
}

export interface SlotListing {
  records: SlotRecord[]; // live records, newest change first
  skipped: string[]; // files in slots/ that are not valid records (left untouched)
}

// Every live slot (or just `only`), newest first; expired ones are swept on the way.
export async function listSlots(store: Store, only?: string[]): Promise<SlotListing> {
  only?.forEach((n) => checkName(n));
  const storage = slotStorage(store);
  const all = only ? (await storage.readMany(only)).map((read, i) => ({ name: only[i], read })) : await storage.readAll();
  // Nothing listed may be a directory that is no store, which every write refuses: say so
  // rather than "no slots yet" (a store's own listing pays nothing for it).
  if (!only && all.length === 0) store.engine.assertStore();
  const records: SlotRecord[] = [];
  const skipped: string[] = [];
  for (const { name, read: r } of all) {
    if (r.kind === "ok") records.push(r.record);
    else if (r.kind === "corrupt") skipped.push(name);
    // The lazy sweep is housekeeping: a store this process cannot write must still list.
    else if (r.expired) await sweepExpired(store, name).catch(() => false);
  }
  records.sort((a, b) => b.updated_at - a.updated_at || byName(a.name, b.name));
  return { records, skipped };
}

// Tombstones `name` if, in its change, it is still expired (a concurrent start may have renewed it).
export async function sweepExpired(store: Store, name: string): Promise<boolean> {
  return slotStorage(store).change(name, (r): Decision<boolean> => (r.kind === "absent" && r.expired && r.last ? { value: true, ...endRun(store, r.last) } : { value: false }));
}

// Clears every slot; returns the names that held a live record.
export async function clearAll(store: Store): Promise<string[]> {
  store.engine.assertStore();
  const cleared: string[] = [];
  for (const name of await slotStorage(store).names()) {
    if (await clearSlot(store, name, false)) cleared.push(name);
  }
  return cleared;
}
