// `a2a gc`: one sweep of everything that crashes and expiry leave behind, across the store:
// the slot side (expired records, stale temp files, orphaned chunks, stale locks: lib/slot.ts)
// and the mail side (claims of readers that died between taking a message and marking it
// read, returned to unread: lib/inbox.ts). Safe to run at any time, from any process.

import { recoverAllClaims } from "./mail/send";
import type { MailSettings } from "./mail/message";
import { gc as gcSlots, type GcReport } from "./slots/slot";
import type { Store } from "./core/config";

export interface StoreGcReport extends GcReport {
  claims_recovered: number; // messages of dead readers put back to unread
}

export async function gcStore(store: Store, settings: MailSettings): Promise<StoreGcReport> {
  const slots = await gcSlots(store);
  return { ...slots, claims_recovered: recoverAllClaims(store, settings) };
}
