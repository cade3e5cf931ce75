// The file engine's slot storage (lib/slots/storage.ts): a slot is one record file,
// slots/NAME.json, replaced atomically (lib/fs/atomic.ts) under the slot's lock
// (lib/fs/lock.ts); the chunks of its current run are files streams/NAME/NNNNNNNNNN.
// docs/FILE-ENGINE.md §5 is the layout, step by step.
//
// Invariants:
// - a change is lock, read, decide, write, unlock: the lock makes it exclusive across
//   processes, and the holder checks the lock is still its own before each rename (a lock
//   taken over from a frozen holder is not written through);
// - readers never lock: the rename gives a reader the old record or the new one; a record is
//   read bounded and never through a link, so a FIFO, device or huge file under the name is
//   foreign ("corrupt"), and a read that fails its checks is retried (a torn read on a caching
//   network filesystem) before it counts as corrupt;
// - a chunk lands before the record that counts it, and goes again when that record cannot be
//   written (a failed append leaves the store as it was);
// - chunks are removed only as files named like chunks; nothing is followed or recursed into.

import { rmdirSync } from "node:fs";
import { join } from "node:path";
import { writeAtomic } from "./atomic";
import { MAX_MAX_BYTES, type Store } from "../core/config";
import { A2AError, op, text } from "../core/errors";
import { entries, exists, readBounded } from "./io";
import { fitRecord, RECORD_LIMIT } from "../core/record";
import { ensureDir, removeFile } from "./guard";
import { withLock } from "./lock";
import { chunkFile, slotFile, slotNameOf, slotsDir, streamDir } from "./paths";
import { decodeRecord, encodeRecord } from "../slots/record";
import { readOf, type Decision, type ReadResult, type SlotStorage } from "../slots/storage";
import { decodeUtf8 } from "../core/utf8";

export function fileSlots(store: Store): SlotStorage {
  return {
    read: async (name, retries) => readSlotFile(store, name, retries),
    readMany: async (names) => names.map((name) => readSlotFile(store, name)),
    names: async () => slotNames(store),
    readAll: async () => slotNames(store).map((name) => ({ name, read: readSlotFile(store, name) })),
    has: async (name) => exists(store, slotFile(store, name)),
    change: (name, decide) => change(store, name, decide),
    chunks: async (name, after, upTo) => readChunks(store, name, after, upTo),
    locate: (name) => slotFile(store, name),
  };
}

// One read of a slot file. `retries` re-reads a record that fails its checks (a torn read).
export function readSlotFile(store: Store, name: string, retries = 3): ReadResult {
  for (let i = 0; ; i++) {
    const r = readBounded(store, slotFile(store, name), RECORD_LIMIT);
    if (r.kind === "absent" && !r.stale) return { kind: "absent" };
    if (r.kind === "invalid") return { kind: "corrupt" };
    if (r.kind === "absent") {
      if (i >= retries) return { kind: "corrupt" };
      continue; // ESTALE: the file was replaced while we opened it; the next open sees the new one
    }
    const record = decodeRecord(decodeUtf8(r.bytes));
    if (record && record.name === name) return readOf(record);
    if (i >= retries) return { kind: "corrupt" };
    Bun.sleepSync(1 + i * 5);
  }
}

export const slotNames = (store: Store): string[] => entries(store, slotsDir(store)).map(slotNameOf).filter((n): n is string => n !== undefined);

async function change<T>(store: Store, name: string, decide: (current: ReadResult) => Decision<T>): Promise<T> {
  ensureDir(store, slotsDir(store));
  return withLock(store, name, (lock) => {
    const d = decide(readSlotFile(store, name));
    if (d.removeDamaged && !removeFile(store, slotFile(store, name))) {
      throw new A2AError("EIO", `${slotFile(store, name)} is not a file a2a wrote (a directory, link or device): a2a removes only its own records; remove it by hand`, {
        data: { slot: name },
      });
    }
    let written: string | undefined;
    if (d.chunk) {
      ensureDir(store, streamDir(store, name));
      writeAtomic(store, (written = chunkFile(store, name, d.chunk.n)), d.chunk.text, { beforeCommit: lock.check });
    }
    if (d.record) {
      const write = () => writeAtomic(store, slotFile(store, name), fitRecord(store, encodeRecord(d.record!), `slot ${name}'s record`), { beforeCommit: lock.check });
      try {
        write();
      } catch (err) {
        // A record that ends a run (a clear, an expiry) is a few hundred bytes; on a full disk
        // the run's chunks go first to make room (the record still counts them, and a reader of
        // a missing chunk takes it as dropped by a new run), then it is tried once more.
        const errno = err instanceof A2AError ? err.data.errno : undefined;
        if (d.endsRun && (errno === "ENOSPC" || errno === "EDQUOT")) {
          removeChunks(store, name);
          write();
        } else {
          // No record counts the chunk: it must not stay. Taken over: what is there is the new holder's.
          if (written && lock.ours()) removeFile(store, written);
          throw err;
        }
      }
    }
    // The old run's chunks go only after the record that ends it is in place: removing them
    // first let readers, and for good after a crash or a full disk, see a record counting chunks
    // that were gone. A crash between the two leaves chunk files no record counts; each append
    // of the new run replaces its file before counting it.
    if (d.dropChunks) {
      try {
        removeChunks(store, name);
      } catch {
        // the change itself took effect; leftovers are uncounted and harmless (see above)
      }
    }
    return d.value;
  });
}

// Chunks after number `after` (1-based) that the record counts, in order.
function readChunks(store: Store, name: string, after: number, upTo: number): string[] {
  const out: string[] = [];
  for (let n = after + 1; n <= upTo; n++) {
    const r = readBounded(store, chunkFile(store, name, n), MAX_MAX_BYTES);
    // Absent: a concurrent `start` dropped this run's chunks; the caller sees the new run next.
    if (r.kind === "absent") break;
    if (r.kind === "invalid") {
      throw new A2AError("EIO", text`chunk ${n} of ${name} is ${r.why}, not a chunk a2a wrote: start a new run (${op("start", name)})`, {
        data: { slot: name, chunk: n },
      });
    }
    out.push(decodeUtf8(r.bytes));
  }
  return out;
}

const CHUNK_RE = /^\d{10}$/;

// Removes slot `name`'s chunk files (only files named like chunks; nothing is followed or
// recursed into), then its stream directory if that left it empty.
export function removeChunks(store: Store, name: string): void {
  const dir = streamDir(store, name);
  const files = entries(store, dir);
  if (!files.length && !exists(store, dir)) return;
  ensureDir(store, dir); // a link or someone else's directory here is refused, not followed
  for (const f of files) if (CHUNK_RE.test(f)) removeFile(store, join(dir, f));
  try {
    rmdirSync(dir);
  } catch {
    // not empty (a foreign file stays where it was) or gone
  }
}
