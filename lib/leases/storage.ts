// What the lease rules (lease.ts) need from an engine: one versioned record per leased name, each
// change a compare-and-set on its version. The rules (who may take, renew or release, all or
// nothing, undo, expiry) are the room's; an engine keeps the versions. docs/ENGINE.md has the
// design, docs/PROTOCOL.md §13 the contract, docs/FILE-ENGINE.md §12 the file engine's layout.
//
// Invariants every engine keeps:
// - a name's versions only grow, by one per change; of two changes computed from version N,
//   exactly one is written as N + 1, and the other reads again and decides again;
// - `head` sees a whole version or reports damage (a head that is not a record a2a wrote),
//   never a wrong value; with `repair` a damaged head is handed to the change, which writes
//   above it, rather than refused.

import type { Store } from "../core/config";

export interface LeaseRecord {
  a2a: 1;
  name: string;
  version: number;
  holder: string | null;
  taken_at: number;
  expires_at: number;
  host: string;
  pid: number;
}

export type { Damage } from "../core/errors";
import type { Damage } from "../core/errors";

export interface LeaseHead {
  version: number; // 0: the name has never been leased
  record: LeaseRecord | undefined; // with `damaged`: the newest whole version below, if any
  damaged?: Damage;
}

export interface LeaseStorage {
  // The newest version of `name`. A damaged head is an EIO naming it (damageOf), unless
  // `repair`: then it is returned with `damaged`.
  head(name: string, repair?: boolean): Promise<LeaseHead>;
  // Every name with a chain, sorted.
  names(): Promise<string[]>;
  // One compare-and-set: `next` decides the following record from the head (undefined: no
  // change), which is written as version + 1; on a lost race the head is read again and `next`
  // decides again. `create`: the name may be new (take); `repair`: see head.
  change(
    name: string,
    next: (head: LeaseHead) => Omit<LeaseRecord, "version"> | undefined,
    opts?: { create?: boolean; repair?: boolean },
  ): Promise<{ head: LeaseHead; changed: boolean }>;
  // For a2a export and import (lib/move/): `rec` written as the head at its own version (its
  // fencing token), where the head is below it (never leased: 0). False when the head is at or
  // above it: nothing written. The versions between are never read.
  restore(rec: LeaseRecord): Promise<boolean>;
}

// The store's lease storage, as its engine keeps it (lib/engine/engine.ts).
export function leaseStorage(store: Store): LeaseStorage {
  return store.engine.leases;
}
