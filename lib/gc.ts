// `a2a gc`: one sweep of everything that crashes and expiry leave behind, across the store:
// the slot side (expired records, stale temp files, orphaned chunks, stale locks: lib/slot.ts)
// and the mail side (claims of readers that died between taking a message and marking it
// read, returned to unread: lib/inbox.ts). Safe to run at any time, from any process.

import { recoverAllClaims } from "./inbox";
import type { MailSettings } from "./mailbox";
import { gc as gcSlots, type GcReport } from "./slot";
import type { Store } from "./store";

export interface StoreGcReport extends GcReport {
  claims_recovered: number; // messages of dead readers put back to unread
}

export async function gcStore(store: Store, settings: MailSettings): Promise<StoreGcReport> {
  const slots = await gcSlots(store);
  return { ...slots, claims_recovered: recoverAllClaims(store, settings) };
}
