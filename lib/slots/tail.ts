// Streaming partial output: `append` adds numbered chunk files to a running slot
// (slot.ts appendChunk) and `tail` reads them in order. Chunk N is written before the
// record that counts it, so a reader that trusts the record's `chunks` never misses a file.
// A follower keys on the record (slots/ is the only watched directory), and stops once the
// slot is published and every chunk it counts has been read.

import { type Store } from "../core/config";
import { done, ended, type Outcome } from "../core/outcome";
import { checkName } from "../core/names";
import { waitUntil, type WaitOptions } from "../core/watch";
import type { SlotRecord } from "./record";
import { slotStorage } from "./storage";

export interface TailOptions extends WaitOptions {
  after?: number; // skip the first `after` chunks
  follow?: boolean; // keep reading until the slot is published
}

export interface TailResult {
  chunks: string[];
  next: number; // pass as `after` to continue
  state: SlotRecord["state"] | "absent";
  version: number;
}

// Reads the chunks after `after`; with `follow`, calls onChunk as each lands until publish
// (done), or until the time runs out or the caller stops (the chunks so far, pending: name).
export async function tailSlot(
  store: Store,
  name: string,
  opts: TailOptions = {},
  onChunk: (text: string, n: number) => void = () => {},
): Promise<Outcome<TailResult>> {
  checkName(name);
  let next = opts.after ?? 0;
  let startedAt: number | undefined;
  const all: string[] = [];
  const storage = slotStorage(store);
  const drain = async (): Promise<TailResult | undefined> => {
    const r = await storage.read(name, 0);
    if (r.kind !== "ok") return opts.follow ? undefined : { chunks: all, next, state: "absent", version: 0 };
    const rec = r.record;
    // A new run (start) renumbers from 1: follow it from its beginning.
    if (startedAt !== undefined && rec.started_at !== startedAt && opts.follow) next = 0;
    startedAt = rec.started_at;
    for (const text of await storage.chunks(name, next, rec.chunks)) {
      next++;
      all.push(text);
      onChunk(text, next);
    }
    const finished = !opts.follow || (rec.state === "done" && next >= rec.chunks);
    return finished ? { chunks: all, next, state: rec.state, version: rec.version } : undefined;
  };
  if (!opts.follow) return done((await drain())!);
  const outcome = await waitUntil(
    store,
    { on: "slots", names: [name] },
    (changed) => (changed === undefined || changed === name ? drain() : undefined),
    opts,
  );
  if (outcome.kind === "done") return done(outcome.value!);
  return ended(outcome.kind, { chunks: all, next, state: "running", version: 0 }, [name]);
}
