// The chunks of a slot's current run, 1-based, written by append (slot.ts appendChunk: chunk N
// is stored before the record that counts it) and never changed once counted, so they are read
// without waiting for anything (storage.ts).

import type { Store } from "../core/config";
import { slotStorage } from "./storage";

// Chunks after number `after` (1-based) that the record counts, in order.
export function readChunks(store: Store, name: string, after: number, upTo: number): Promise<string[]> {
  return slotStorage(store).chunks(name, after, upTo);
}
