// What the presence rules (presence.ts, peers.ts, session-name.ts, identity.ts) need from an
// engine: one peer record per name, and the names remembered per host and working directory.
// The rules (which candidates in which order, who is live, which scope a peer is in, when a gone
// holder is swept) are the room's; an engine keeps the records. docs/ENGINE.md has the design,
// docs/PROTOCOL.md §11 the contract, docs/FILE-ENGINE.md §9 the file engine's layout.
//
// Invariants every engine keeps:
// - a name has at most one peer record; `take` creates it only where there is none, so of two
//   processes taking one free name exactly one gets it;
// - "ours" is the holder (same host, pid and started_at: record.ts samePeer); `beat` and `remove`
//   never replace or remove another holder's record;
// - `sweep` removes a record only while it is the one judged gone (same holder, same heartbeat):
//   a holder that beat meanwhile keeps its record;
// - a reader sees a whole record or none (a torn or foreign one reads as none), and never waits.
// Peer and identity records say where an agent runs, never who it is (PROTOCOL.md §15): an
// engine need not vouch for their writer.

import type { Store } from "../core/config";
import type { Peer } from "./record";

export interface PresenceStorage {
  // Creates `peer`'s record if its name has none. False when one is there (live or not: the
  // room judges it).
  take(peer: Peer): Promise<boolean>;
  // Replaces the record under `peer.name`, whoever's it is (an explicit A2A_AGENT name is
  // shared: the newer record wins).
  put(peer: Peer): Promise<void>;
  // A heartbeat: replaces the record under `peer.name` if it is still ours, creates it if it
  // vanished (swept while we were frozen), leaves another holder's as it is.
  beat(peer: Peer): Promise<void>;
  // Removes the record under `peer.name` if it is still ours. False when it was not.
  remove(peer: Peer): Promise<boolean>;
  // The same at process exit, where nothing asynchronous runs any more: an engine that can
  // remove it synchronously does (the file engine: an unlink); one that cannot leaves it to
  // age out (three missed heartbeats make it gone for every reader, and the next lister sweeps it).
  removeAtExit(peer: Peer): void;
  // The record under `name`, or undefined (none, torn, or not a peer record).
  read(name: string): Promise<Peer | undefined>;
  // The names that have a record, whatever it holds (a torn or foreign one counts), without
  // reading any: for a guess at a mistyped name.
  names(): Promise<string[]>;
  // Every peer record, live or not, in no particular order.
  list(): Promise<Peer[]>;
  // Removes `judged`, a record the room judged gone, unless it changed meanwhile (another
  // heartbeat or holder). True when this call removed it.
  sweep(judged: Peer): Promise<boolean>;
  // The names remembered for `cwd` on `host`, in the order handed out (unchecked: the room
  // validates them); none when there is no record or it is unreadable.
  remembered(host: string, cwd: string): Promise<string[]>;
  // Replaces the names remembered for `cwd` on `host`. Not exclusive: of two at once the last
  // write wins.
  remember(host: string, cwd: string, names: string[]): Promise<void>;
  // Every record of remembered names (for a2a export), unchecked as `remembered` is; an
  // unreadable one is passed over.
  identities(): Promise<{ host: string; cwd: string; names: string[] }[]>;
}

// The store's presence storage, as its engine keeps it (lib/engine/engine.ts).
export function presenceStorage(store: Store): PresenceStorage {
  return store.engine.presence;
}
