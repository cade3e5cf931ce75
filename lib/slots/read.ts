// Reading one slot record: bounded, never following a link, never locking (the atomic rename
// gives a reader the old record or the new one). A record that is absent, cleared (a
// tombstone), expired, or fails its checks (a torn read on a caching filesystem, foreign
// garbage) reads as absent or corrupt, never as an error or a wrong value.

import type { Store } from "../core/config";
import { entries, exists, readBounded, RECORD_LIMIT } from "../core/fs";
import { checkName, slotFile, slotNameOf, slotsDir } from "../core/paths";
import { closest } from "../core/similar";
import { decodeRecord, isExpired, type SlotRecord } from "./record";

export type ReadResult =
  | { kind: "ok"; record: SlotRecord }
  | { kind: "absent"; last?: SlotRecord; expired?: boolean } // last: tombstone or expired record
  | { kind: "corrupt" };

// One read of a slot file. `retries` re-reads a record that fails its checks (a torn read);
// wait loops pass 0 because their next wake-up is the retry.
export function readSlot(store: Store, name: string, retries = 3): ReadResult {
  for (let i = 0; ; i++) {
    // Bounded and never following a link: a FIFO, device or huge file under the name is foreign.
    const r = readBounded(store, slotFile(store, name), RECORD_LIMIT);
    if (r.kind === "absent" && !r.stale) return { kind: "absent" };
    if (r.kind === "invalid") return { kind: "corrupt" };
    if (r.kind === "absent") {
      if (i >= retries) return { kind: "corrupt" };
      continue; // ESTALE: the file was replaced while we opened it; the next open sees the new one
    }
    const record = decodeRecord(r.bytes.toString("utf8"));
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


// The existing slot `name` was most likely meant to be, when `name` has never been written (no
// record, not even a tombstone) and one close to it exists: `a2a wait researchr` beside a
// `researcher`. Undefined otherwise, so a wait for a slot that does not exist yet says nothing.
export function similarSlot(store: Store, name: string): string | undefined {
  checkName(name);
  if (exists(store, slotFile(store, name))) return undefined;
  return closest(name, entries(store, slotsDir(store)).map(slotNameOf).filter((n): n is string => n !== undefined));
}
