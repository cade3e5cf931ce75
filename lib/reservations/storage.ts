// What the reservation rules (reserve.ts) need from an engine: per repository, the set of its
// reservations, read in one go (the PreToolUse hook reads it on every edit) and changed as a
// whole under the repository's turn, so that "all or nothing" and "no two overlapping
// exclusive holders" are one decision. The rules (overlap, who may renew or release, expiry)
// are the room's; an engine keeps the set. docs/PROTOCOL.md has the contract.
//
// Invariants every engine keeps:
// - `change` runs `decide` on the repository's current set and writes what it returns in one
//   step, with no other change of that repository in between: of two changes of one
//   repository, the second decides on what the first wrote;
// - `live` sees a whole set as some change left it, never a part of one;
// - a change that throws, or whose process dies before it is written, leaves the set as it was;
// - every change wakes the channel { on: "reservations", repo }.

import type { Store } from "../core/config";

export interface Reservation {
  a2a: 1;
  repo: string; // the repository's identity (repo.ts)
  pattern: string; // normalised, repository-relative (patterns.ts)
  holder: string; // the agent's name
  exclusive: boolean; // false: shared
  reason: string | null;
  created_at: number; // unix seconds
  expires_at: number;
  host: string;
  pid: number;
  writer?: string; // read only: who the engine vouches wrote the record (a database role), where it keeps one
}

export interface ReservationStorage {
  // Every reservation of `repo` as the last change left it (expired ones too: the rules judge
  // expiry), with the writer the engine vouches for where it keeps one.
  live(repo: string): Promise<Reservation[]>;
  // The same for several repositories in one read (one query on a database: the PreToolUse hook
  // reads a repository's set and its aliases' on every edit), each set whole, in the order of
  // `repos`; none read for an empty list.
  liveMany(repos: string[]): Promise<Reservation[]>;
  // One change of `repo`'s set: `decide` gets the current set and returns the new one (or
  // throws: nothing written). SYNCHRONOUS: the engine calls it inside the repository's turn.
  change(repo: string, decide: (current: Reservation[]) => Reservation[]): Promise<Reservation[]>;
  // Repositories with a set, for listing everything and for gc.
  repos(): Promise<string[]>;
}

// The store's reservation storage, as its engine keeps it (lib/engine/engine.ts).
export function reservationStorage(store: Store): ReservationStorage {
  return store.engine.reservations;
}
