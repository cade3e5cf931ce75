// Reading slots: one record, the live one, and the name a mistyped one most likely meant. The
// engine reads without locking (storage.ts): a record that is absent, cleared (a tombstone),
// expired, or fails its checks reads as absent or corrupt, never as an error or a wrong value.

import type { Store } from "../core/config";
import { checkName } from "../core/names";
import { closest } from "../core/similar";
import type { SlotRecord } from "./record";
import { slotStorage, type ReadResult } from "./storage";

export type { ReadResult };

// One read of a slot's record. `retries` re-reads a record that fails its checks (a torn read);
// wait loops pass 0 because their next wake-up is the retry.
export function readSlot(store: Store, name: string, retries = 3): Promise<ReadResult> {
  return slotStorage(store).read(name, retries);
}

// The live record of `name`, or undefined (absent, expired or unreadable).
export async function getSlot(store: Store, name: string): Promise<SlotRecord | undefined> {
  checkName(name);
  const r = await readSlot(store, name);
  return r.kind === "ok" ? r.record : undefined;
}

// The existing slot `name` was most likely meant to be, when `name` has never been written (no
// record, not even a tombstone) and one close to it exists: `a2a wait researchr` beside a
// `researcher`. Undefined otherwise, so a wait for a slot that does not exist yet says nothing.
export async function similarSlot(store: Store, name: string): Promise<string | undefined> {
  checkName(name);
  const storage = slotStorage(store);
  if (await storage.has(name)) return undefined;
  return closest(name, await storage.names());
}
