// `a2a gc`: every sweep of what crashes and expiry leave behind, in one place, across the
// store: expired slot records (tombstoned), old tombstones, abandoned temp files, chunk
// directories no record counts, stale locks, and message claims of readers that died
// between taking a message and marking it read (returned to unread), and task and lease
// chains that are final and old (lib/tasks/sweep.ts). Safe to run at any
// time, from any process: each removal re-checks its condition under the lock it needs.
//
// Invariant: gc removes only entries whose names match the protocol's patterns and whose
// type is the one a2a creates there (a regular temp file, an empty lock directory), so a
// foreign file dropped into the store is left alone.
//
// A PostgreSQL store runs the same rules on its rows (gcDatabase): what is a room's rule (slot
// expiry, claim recovery) through the room, the rest as the engine's statements (lib/pg/gc.ts).

import { BLOB_GRACE_MS, checkBlobGrace, sweepBlobs } from "./blobs";
import { join } from "node:path";
import { TMP_STALE_MS } from "../core/atomic";
import type { Store } from "../core/config";
import { entries, lstatIf } from "../core/fs";
import { checkStore, ensureDir, removeFile } from "../core/guard";
import { removeStaleGuard, removeStaleLock, STALE_MS, withLock } from "../core/lock";
import { isValidName, lockNameOf, locksDir, slotFile, slotNameOf, slotsDir, streamsDir, tmpDir, topicsDir } from "../core/paths";
import { trimTopic } from "../fs/topics";
import { fileMail } from "../fs/mail";
import { mailStorage } from "../mail/storage";
import { inboxNames } from "../fs/mail-record";
import { readSlotFile as readSlot, removeChunks } from "../fs/slots";
import { sweepExpired, TOMBSTONE_KEEP_SEC } from "../slots/slot";
import { slotStorage } from "../slots/storage";
import { nowSec } from "../core/time";
import { sweepTasksAndLeases } from "../tasks/sweep";
import { sweepReservations } from "../reservations/reserve";
import type { DamagedChain } from "../tasks/state";

export interface GcReport {
  expired: string[]; // slots past their TTL, replaced by tombstones
  tombstones: number; // tombstones older than TOMBSTONE_KEEP_SEC, removed
  temp_files: number; // abandoned temp files older than TMP_STALE_MS, removed
  orphan_streams: string[]; // chunk directories of slots that no longer exist, removed
  stale_locks: string[]; // lock directories older than the stale limit, removed
  claims_recovered: number; // messages of dead readers put back to unread
  tasks_removed: number; // done (7 days) or dead (30 days) tasks no unfinished task depends on
  leases_removed: number; // lease chains free for a day
  reservations_removed: number; // reservations on paths past their TTL
  topic_messages_removed: number; // older than A2A_TOPIC_KEEP (30 days unless set), each topic's newest kept
  blobs_removed: number; // blobs no record names, older than an hour (lib/maintenance/blobs.ts)
  damaged: DamagedChain[]; // task and lease chains left alone because their head is damaged
}

// The temp files lib/core/atomic.ts names: PID.HEX.tmp.
const TEMP_RE = /^\d+\.[0-9a-f]+\.tmp$/;

// `blobGraceMs`: how old a blob no record names must be to go (BLOB_GRACE_FLOOR_MS at least),
// counted to this host's clock: a test looks ahead with faketime, never through an argument a
// caller could use to step around the floor.
export async function gcStore(store: Store, tmpMaxAgeMs = TMP_STALE_MS, blobGraceMs = BLOB_GRACE_MS): Promise<GcReport> {
  checkBlobGrace(blobGraceMs);
  if (store.pg) return gcDatabase(store, store.pg, blobGraceMs);
  checkStore(store);
  const report: GcReport = { expired: [], tombstones: 0, temp_files: 0, orphan_streams: [], stale_locks: [], claims_recovered: 0, tasks_removed: 0, leases_removed: 0, reservations_removed: 0, topic_messages_removed: 0, blobs_removed: 0, damaged: [] };
  const now = Date.now();
  for (const file of entries(store, slotsDir(store))) {
    const name = slotNameOf(file);
    const r = name ? readSlot(store, name) : undefined;
    if (!name || r?.kind !== "absent" || !r.last) continue;
    if (r.expired) {
      if (await sweepExpired(store, name)) report.expired.push(name);
    } else if (r.last.updated_at < now / 1000 - TOMBSTONE_KEEP_SEC && (await removeTombstone(store, name))) {
      report.tombstones++;
    }
  }
  for (const file of entries(store, tmpDir(store))) {
    const p = join(tmpDir(store), file);
    const st = lstatIf(p, true);
    if (TEMP_RE.test(file) && st?.isFile() && now - st.mtimeMs > tmpMaxAgeMs && removeFile(store, p)) report.temp_files++;
  }
  for (const name of entries(store, streamsDir(store))) {
    if (!isValidName(name) || readSlot(store, name).kind !== "absent") continue;
    // Under the lock, so an `append` creating this slot right now is not undone.
    const removed = await withLock(store, name, () => {
      if (readSlot(store, name).kind !== "absent") return false;
      removeChunks(store, name);
      return true;
    }).catch(() => false);
    if (removed) report.orphan_streams.push(name);
  }
  const locks = entries(store, locksDir(store));
  if (locks.length) ensureDir(store, locksDir(store)); // never rmdir through a link
  // Dated on the filesystem's clock, not this host's (lib/core/lock.ts), and only if empty;
  // a dead breaker's guard first, since the lock behind it cannot be broken while it stands.
  for (const file of locks) {
    const name = file.endsWith(".break") ? lockNameOf(file.slice(0, -".break".length)) : undefined;
    if (name && removeStaleGuard(store, name, STALE_MS * 5)) report.stale_locks.push(file);
  }
  for (const file of locks) {
    const name = lockNameOf(file);
    if (name && removeStaleLock(store, name, STALE_MS * 5)) report.stale_locks.push(name);
  }
  for (const agent of inboxNames(store)) report.claims_recovered += await fileMail(store).recover(agent);
  if (store.topicKeepSec !== undefined) {
    for (const topic of entries(store, topicsDir(store))) report.topic_messages_removed += trimTopic(store, topic, store.topicKeepSec, now);
  }
  const swept = sweepTasksAndLeases(store);
  report.tasks_removed = swept.tasks;
  report.leases_removed = swept.leases;
  report.damaged = swept.damaged;
  report.reservations_removed = await sweepReservations(store);
  report.blobs_removed = await sweepBlobs(store, blobGraceMs);
  return report;
}

// On a database: the rooms' own sweeps (slot expiry, claim recovery) as on files, then the
// engine's sweeps of its rows (lib/pg/gc.ts). Temp files and lock state are never made there.
async function gcDatabase(store: Store, pg: NonNullable<Store["pg"]>, blobGraceMs: number): Promise<GcReport> {
  const slots = slotStorage(store);
  const names = await slots.names();
  const reads = await slots.readMany(names);
  const expired: string[] = [];
  for (const [i, name] of names.entries()) {
    const r = reads[i];
    if (r.kind === "absent" && r.expired && (await sweepExpired(store, name))) expired.push(name);
  }
  const mail = mailStorage(store);
  let claims_recovered = 0;
  for (const agent of await mail.agents()) claims_recovered += await mail.recover(agent);
  const swept = await pg.gc({ now: nowSec(), topicKeepSec: store.topicKeepSec });
  const reservations_removed = await sweepReservations(store);
  const blobs_removed = await sweepBlobs(store, blobGraceMs);
  return {
    expired, tombstones: swept.tombstones, temp_files: 0, orphan_streams: swept.orphan_streams, stale_locks: [], claims_recovered,
    tasks_removed: swept.tasks_removed, leases_removed: swept.leases_removed, reservations_removed, topic_messages_removed: swept.topic_messages_removed, blobs_removed, damaged: swept.damaged,
  };
}

// Removes the tombstone of `name` if, under its lock, it still is one (also doctor's, for the
// probe slot it made: a check leaves nothing behind).
export async function removeTombstone(store: Store, name: string): Promise<boolean> {
  return withLock(store, name, () => {
    const r = readSlot(store, name);
    return r.kind === "absent" && !r.expired && !!r.last && removeFile(store, slotFile(store, name));
  });
}

