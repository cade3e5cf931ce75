// The event feed behind `a2a watch`: started, appended, published, cleared, derived by
// comparing each slot's record with the last one seen. Events come from lib/core/watch.ts, so a
// burst of changes to one slot may fold into one event carrying the latest state (a watch
// reports that something changed, not every intermediate version); `version` says how far.

import { type Store } from "../core/config";
import { ended, type Outcome } from "../core/outcome";
import { checkName } from "../core/names";
import { waitUntil, watchChannel, type WaitOptions } from "../core/watch";
import type { SlotRecord } from "./record";
import { slotStorage } from "./storage";

export type SlotEventType = "started" | "appended" | "published" | "cleared";

export interface SlotEvent {
  event: SlotEventType;
  name: string;
  version: number;
  at: number; // unix seconds
  task?: string;
  chunks?: number;
  size?: number;
  preview?: string;
}

function describe(prev: SlotRecord | undefined, cur: SlotRecord): SlotEvent | undefined {
  if (prev && prev.version === cur.version && prev.started_at === cur.started_at) return undefined;
  const base = { name: cur.name, version: cur.version, at: cur.updated_at };
  if (cur.state === "done") {
    if (prev?.state === "done" && prev.version === cur.version) return undefined;
    return { event: "published", ...base, size: cur.size, preview: (cur.result ?? "").slice(0, 80) };
  }
  if (prev && prev.state === "running" && prev.started_at === cur.started_at && cur.chunks > prev.chunks) {
    return { event: "appended", ...base, chunks: cur.chunks };
  }
  return { event: "started", ...base, task: cur.task };
}

// Calls onEvent for every change to the named slots (all slots when `only` is empty) until
// the signal aborts or the timeout passes (it never ends "done"; the value is the number of
// events reported). Slots that exist at the start are not reported; `onReady` is called once the
// start is taken: every change after that is reported (the bus loads a room on first use, so a
// caller that must not miss a change of its own waits for it).
export async function watchSlots(store: Store, only: string[], onEvent: (e: SlotEvent) => void, opts: WaitOptions & { onReady?: () => void } = {}): Promise<Outcome<number>> {
  only.forEach((n) => checkName(n));
  const wanted = only.length ? new Set(only) : undefined;
  const seen = new Map<string, SlotRecord>();
  let reported = 0;
  const storage = slotStorage(store);
  const look = async (name: string) => {
    if (wanted && !wanted.has(name)) return;
    const r = await storage.read(name, 0);
    if (r.kind === "corrupt") return; // torn: the next event re-reads it
    const prev = seen.get(name);
    if (r.kind === "absent") {
      if (prev) {
        seen.delete(name);
        reported++;
        onEvent({ event: "cleared", name, version: prev.version, at: Date.now() / 1000 });
      }
      return;
    }
    seen.set(name, r.record);
    const e = describe(prev, r.record);
    if (e) {
      reported++;
      onEvent(e);
    }
  };
  const scan = async () => {
    const present = new Set(await storage.names());
    for (const n of new Set([...present, ...seen.keys()])) await look(n);
  };
  // The first check runs once the watch is registered: what is there then is the baseline,
  // not news, and nothing that lands after it can be missed.
  const snapshot = async () => {
    for (const n of await storage.names()) {
      if (wanted && !wanted.has(n)) continue;
      const r = await storage.read(n);
      if (r.kind === "ok") seen.set(n, r.record);
    }
  };
  let first = true;
  const outcome = await waitUntil<true>(
    store,
    { on: "slots" },
    async (name) => {
      if (first) {
        first = false;
        await snapshot();
        opts.onReady?.();
      } else if (name === undefined) await scan();
      else await look(name);
      return undefined;
    },
    opts,
  );
  return ended(outcome.kind, reported, only);
}

// Calls `listener` with the name of a slot that may have changed (undefined: any may have, as
// after a missed event), for as long as the returned function is not called: the change feed
// behind the MCP server's resource subscriptions. The listener re-reads what it cares about.
export function onSlotChange(store: Store, listener: (name: string | undefined) => void): () => void {
  return watchChannel(store, { on: "slots" }, listener);
}

// The same for slots appearing or going away (an engine may tell of other changes too): what a
// list of the slots' names depends on, without hearing every publish on the bus.
export function onSlotNamesChange(store: Store, listener: (name: string | undefined) => void): () => void {
  return watchChannel(store, { on: "slot-names" }, listener);
}
