// The chunk files of a slot's current run: streams/NAME/NNNNNNNNNN, 1-based, written by
// append (slot.ts appendChunk: chunk N lands before the record that counts it) and never
// changed once counted, so they are read without a lock; removed whole when a run ends
// (start, clear, expiry, gc), only files named like chunks, nothing followed.

import { rmdirSync } from "node:fs";
import { join } from "node:path";
import { MAX_MAX_BYTES, type Store } from "../core/config";
import { A2AError, op, text } from "../core/errors";
import { entries, exists, readBounded } from "../core/fs";
import { ensureDir, removeFile } from "../core/guard";
import { chunkFile, streamDir } from "../core/paths";

// Chunks after number `after` (1-based) that the record counts, in order.
export function readChunks(store: Store, name: string, after: number, upTo: number): string[] {
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
    out.push(r.bytes.toString("utf8"));
  }
  return out;
}

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

const CHUNK_RE = /^\d{10}$/;
