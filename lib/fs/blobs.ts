// The file engine's blob storage (lib/blobs/storage.ts): blob HEX is the file
// blobs/sha256/HEX, read-only, whose bytes hash to HEX. docs/FILE-ENGINE.md §15 is the layout.
//
// A put streams into a temp file of tmp/ (the store's one staging place, on the same
// filesystem), fsyncs it, and links it to its name: the link is the instant the blob exists,
// whole. A put killed before it leaves only the temp file, which gc removes after an hour
// (lib/core/atomic.ts TMP_STALE_MS). A second put of the same bytes finds the name taken
// (EEXIST), drops its copy and touches the blob's time, so gc's grace period counts from the
// newest put (a message about to name the blob must find it). The file is read-only, so an
// agent given its path (MCP) cannot change it in place by mistake.

import { closeSync, constants, fstatSync, openSync, readSync, utimesSync } from "node:fs";
import type { Store } from "../core/config";
import type { BlobInfo, BlobStorage, Upload } from "../blobs/storage";
import { CHUNK } from "../blobs/storage";
import { stageFile } from "../core/atomic";
import { ioError } from "../core/errors";
import { entries, lstatIf } from "../core/fs";
import { removeFile } from "../core/guard";
import { blobFile, blobsDir } from "../core/paths";

const HEX = /^[0-9a-f]{64}$/;

function upload(store: Store): Upload {
  const staged = stageFile(store);
  return {
    write: async (bytes) => staged.write(bytes),
    async commit(hex) {
      const dest = blobFile(store, hex);
      if (staged.link(dest) === "made") return { fresh: true };
      const now = new Date();
      try {
        utimesSync(dest, now, now);
      } catch {
        // another member's blob in a shared store: its time stays (gc's grace is an hour)
      }
      return { fresh: false };
    },
    abort: async () => staged.abort(),
  };
}

function stat(store: Store, hex: string): BlobInfo | undefined {
  if (!HEX.test(hex)) return undefined;
  const st = lstatIf(blobFile(store, hex), true);
  return st?.isFile() ? { hex, size: st.size, at: st.mtimeMs } : undefined;
}

async function* chunks(fd: number): AsyncIterable<Uint8Array> {
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(CHUNK);
      const n = readSync(fd, buf, 0, CHUNK, null);
      if (n === 0) return;
      yield buf.subarray(0, n);
    }
  } finally {
    closeSync(fd);
  }
}

export function fileBlobs(store: Store): BlobStorage {
  return {
    begin: async () => upload(store),
    stat: async (hex) => stat(store, hex),
    async read(hex) {
      if (!HEX.test(hex)) return undefined;
      const path = blobFile(store, hex);
      let fd: number;
      try {
        fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") return undefined;
        throw ioError(err, `reading blob ${hex}`);
      }
      if (!fstatSync(fd).isFile()) {
        closeSync(fd);
        return undefined; // a FIFO or device planted under a blob's name is no blob
      }
      return chunks(fd);
    },
    path: (hex) => (stat(store, hex) ? blobFile(store, hex) : undefined),
    list: async () => entries(store, blobsDir(store)).flatMap((f) => stat(store, f) ?? []),
    async remove(hex, before) {
      const found = stat(store, hex);
      return found !== undefined && found.at < before && removeFile(store, blobFile(store, hex));
    },
    // An unfinished put is a temp file of tmp/, which gc's sweep of temp files removes (lib/maintenance/gc.ts).
    sweep: async () => 0,
  };
}
