// Waiting for slots to be published: one name, all of several, or the first of several.
// Built on lib/core/watch.ts (waitUntil over the engine's watch; on files lib/fs/watch.ts): one
// watch on slots/, and each event re-reads only the slot whose
// file changed, so waiting on 1,000 names costs one read per change, not 1,000.

import { type Store } from "../core/config";
import { A2AError, op, text } from "../core/errors";
import { ended, type Outcome } from "../core/outcome";
import { checkName } from "../core/names";
import { waitUntil, type WaitOptions } from "../core/watch";
import type { SlotRecord } from "./record";
import { slotStorage } from "./storage";

export interface WaitSlotsOptions extends WaitOptions {
  any?: boolean; // done on the first published name instead of all
  afterVersion?: number; // only a publish with a version above this counts
}

// The published records keyed by name (all names, or the first with `any`); on timeout or
// abort, those published so far, and the names still pending.
export async function waitSlots(store: Store, names: string[], opts: WaitSlotsOptions = {}): Promise<Outcome<Map<string, SlotRecord>>> {
  if (names.length === 0) throw new A2AError("EUSAGE", "no slot name given: name at least one slot to wait for");
  names.forEach((n) => checkName(n));
  const after = opts.afterVersion ?? 0;
  const found = new Map<string, SlotRecord>();
  const pending = new Set(names);
  const storage = slotStorage(store);
  const look = async (name: string) => {
    const r = await storage.read(name, 0);
    if (r.kind === "ok" && r.record.state === "done" && r.record.version > after) {
      found.set(name, r.record);
      pending.delete(name);
    } else if (r.kind === "corrupt" && (await storage.read(name)).kind === "corrupt") {
      // A damaged record (not an a2a record, after the retries of a torn read) refuses every
      // publish until it is cleared: waiting on it would wait forever, so the wait ends now;
      // under --any, only once no other name is left to wait for.
      pending.delete(name);
      if (opts.any && pending.size > 0) return;
      const file = storage.locate(name);
      throw new A2AError("EIO", text`the record of slot ${name} is damaged (${file} is not a valid record), so nothing can be published there: ${op("clear", name)} removes it, then publish again and wait`, {
        data: { name, file, damaged: true },
      });
    }
  };
  const outcome = await waitUntil(
    store,
    { on: "slots", names },
    async (name) => {
      if (name === undefined) for (const n of [...pending]) await look(n);
      else if (pending.has(name)) await look(name);
      const done = opts.any ? found.size > 0 : pending.size === 0;
      return done ? found : undefined;
    },
    opts,
  );
  return ended(outcome.kind, found, outcome.kind === "done" ? [] : [...pending]);
}
