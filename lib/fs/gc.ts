// `a2a gc` on a directory: the file engine's sweeps of what crashes and expiry leave behind,
// across the store: expired slot records (tombstoned), old tombstones, abandoned temp files,
// chunk directories no record counts, stale locks, message claims of readers that died between
// taking a message and marking it read (returned to unread), old topic messages, and task and
// lease chains that are final and old (lib/fs/task-sweep.ts). lib/maintenance/gc.ts runs them
// (through the Engine) and then the sweeps every engine shares. Safe to run at any time, from
// any process: each removal re-checks its condition under the lock it needs.
//
// Invariant: gc removes only entries whose names match the protocol's patterns and whose
// type is the one a2a creates there (a regular temp file, an empty lock directory), so a
// foreign file dropped into the store is left alone.

import { join } from "node:path";
import type { Store } from "../core/config";
import { TMP_STALE_MS } from "./atomic";
import { entries, lstatIf } from "./io";
import { checkStore, ensureDir, removeFile } from "./guard";
import { removeStaleGuard, removeStaleLock, STALE_MS, withLock } from "./lock";
import { isValidName, lockNameOf, locksDir, slotFile, slotNameOf, slotsDir, streamsDir, tmpDir, topicsDir } from "./paths";
import { trimTopic } from "./topics";
import { fileMail } from "./mail";
import { inboxNames } from "./mail-record";
import { readSlotFile as readSlot, removeChunks } from "./slots";
import { sweepExpired, TOMBSTONE_KEEP_SEC } from "../slots/slot";
import { sweepTasksAndLeases } from "./task-sweep";
import type { EngineSweeps } from "../engine/engine";

// The temp files lib/fs/atomic.ts names: PID.HEX.tmp.
const TEMP_RE = /^\d+\.[0-9a-f]+\.tmp$/;

export async function gcDirectory(store: Store, tmpMaxAgeMs = TMP_STALE_MS): Promise<EngineSweeps> {
  checkStore(store);
  const report: EngineSweeps = { expired: [], tombstones: 0, temp_files: 0, orphan_streams: [], stale_locks: [], claims_recovered: 0, tasks_removed: 0, leases_removed: 0, topic_messages_removed: 0, damaged: [] };
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
  // Dated on the filesystem's clock, not this host's (lib/fs/lock.ts), and only if empty;
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
  return report;
}

// Removes the tombstone of `name` if, under its lock, it still is one (also doctor's, for the
// probe slot it made: a check leaves nothing behind).
export async function removeTombstone(store: Store, name: string): Promise<boolean> {
  return withLock(store, name, () => {
    const r = readSlot(store, name);
    return r.kind === "absent" && !r.expired && !!r.last && removeFile(store, slotFile(store, name));
  });
}

