// `a2a gc`: every sweep of what crashes and expiry leave behind, in one place, across the store.
// The engine's own sweeps first (lib/engine/engine.ts gc: lib/fs/gc.ts on a directory, lib/pg/gc.ts
// on rows, each with the same retention rules), then the ones every engine shares through the
// rooms (reservations past their TTL, blobs no record names). Safe to run at any time, from any
// process: each removal re-checks its condition where it is made.

import { BLOB_GRACE_MS, checkBlobGrace, sweepBlobs } from "./blobs";
import type { Store } from "../core/config";
import { sweepReservations } from "../reservations/reserve";
import type { DamagedChain } from "../tasks/state";

export interface GcReport {
  expired: string[]; // slots past their TTL, replaced by tombstones
  tombstones: number; // tombstones older than TOMBSTONE_KEEP_SEC, removed
  temp_files: number; // abandoned temp files (an hour old on a directory: lib/fs/atomic.ts TMP_STALE_MS), removed
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

// `blobGraceMs`: how old a blob no record names must be to go (BLOB_GRACE_FLOOR_MS at least),
// counted to this host's clock: a test looks ahead with faketime, never through an argument a
// caller could use to step around the floor.
export async function gcStore(store: Store, tmpMaxAgeMs?: number, blobGraceMs = BLOB_GRACE_MS): Promise<GcReport> {
  checkBlobGrace(blobGraceMs);
  const s = await store.engine.gc(tmpMaxAgeMs);
  const reservations_removed = await sweepReservations(store);
  const blobs_removed = await sweepBlobs(store, blobGraceMs);
  return {
    expired: s.expired, tombstones: s.tombstones, temp_files: s.temp_files, orphan_streams: s.orphan_streams, stale_locks: s.stale_locks, claims_recovered: s.claims_recovered,
    tasks_removed: s.tasks_removed, leases_removed: s.leases_removed, reservations_removed, topic_messages_removed: s.topic_messages_removed, blobs_removed, damaged: s.damaged,
  };
}
