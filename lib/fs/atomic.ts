// The one atomic-write primitive. Every file a2a puts in the store goes through here:
//
//   1. create a unique temp file in ROOT/tmp/ (same filesystem, never watched), mode 0600
//   2. write all bytes, fsync, close (each checked: "NFS-writing" in Maildir's sense)
//   3. rename(temp, dest)   - replace: readers see the old file or the new one, never a mix
//      link(temp, dest)     - exclusive: fails with EEXIST if dest exists (claims, numbering);
//                             link is atomic and exclusive on NFS too, unlike O_EXCL on old NFS
//   4. fsync dest's directory, so the new name survives a power cut too (fs.ts syncDir)
//   5. finally unlink the temp name, whatever happened
//
// At the instant of the rename/link the new content is visible in full. A crash before it
// leaves only a temp file, which `gc` removes once it is older than TMP_STALE_MS. Steps 2's
// fsync and 4 are skipped with A2A_DURABILITY=none and for writes marked `durable: false`.

import { closeSync, constants, fchmodSync, fsyncSync, linkSync, openSync, readSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { randomHex } from "../core/digest";
import { ioError } from "../core/errors";
import { syncDir } from "./io";
import { unlinkQuiet } from "../core/unlink";
import { markerFile, tempFile, tmpDir } from "./paths";
import { basename, dirname } from "node:path";
import { type Store } from "../core/config";
import type { Scratch } from "../blobs/storage";
import { ensureDir } from "./guard";
import { encodeUtf8 } from "../core/utf8";

export const TMP_STALE_MS = 60 * 60 * 1000;

function tempName(store: Store): string {
  return tempFile(store, `${process.pid}.${randomHex(6)}.tmp`);
}

// `durable`: fsync the bytes before they are renamed into place (the default; off for a store
// with A2A_DURABILITY=none, and for hints whose loss in a power cut costs nothing).
// `beforeCommit`: runs after the bytes are written, just before the rename or link; throwing
// stops the write with the store untouched (a lock holder's last check, lib/fs/lock.ts).
export interface WriteOptions {
  durable?: boolean;
  beforeCommit?: () => void;
}

function writeTemp(store: Store, data: string | Uint8Array, opts: WriteOptions = {}): string {
  ensureDir(store, tmpDir(store), "sticky");
  writePendingMarker(store);
  const spare = store.spare;
  store.spare = undefined;
  const temp = spare?.path ?? tempName(store);
  const buf = typeof data === "string" ? encodeUtf8(data) : data;
  const fd = spare?.fd ?? openSync(temp, "wx", store.fileMode);
  try {
    if (!spare) fchmodSync(fd, store.fileMode); // the umask must not decide who may read it
    try {
      let off = 0;
      while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
      if (store.durability === "fsync" && opts.durable !== false) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    // The caller never learns this name: remove the partial file here, or a failed write
    // (ENOSPC, EDQUOT, EIO) leaves it in tmp/, still holding the space it took, for an hour.
    unlinkQuiet(temp);
    throw err;
  }
  return temp;
}

// A file of any size, written piece by piece into a temp file of tmp/ and then linked to `dest`
// (exclusive: a name, once made, is never replaced), read-only: a blob (lib/fs/blobs.ts). Until
// `link` nothing is at `dest`; a link that finds `dest` taken keeps the temp file for a link to
// another name, anything else (and `abort`) removes it; a crash leaves only the temp file, which
// gc removes (TMP_STALE_MS after its last write).
export interface Staged {
  write(bytes: Uint8Array): void;
  link(dest: string): "made" | "exists";
  abort(): void;
}

export function stageFile(store: Store): Staged {
  ensureDir(store, tmpDir(store), "sticky");
  writePendingMarker(store);
  const temp = tempName(store);
  let fd: number | undefined;
  const close = () => {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  };
  const drop = () => (close(), unlinkQuiet(temp));
  try {
    fd = openSync(temp, "wx", store.fileMode);
    fchmodSync(fd, store.fileMode);
  } catch (err) {
    close();
    unlinkQuiet(temp);
    throw ioError(err, "starting a file in the store");
  }
  return {
    write(bytes) {
      try {
        for (let off = 0; off < bytes.length; ) off += writeSync(fd!, bytes, off, bytes.length - off);
      } catch (err) {
        throw ioError(err, "writing into the store");
      }
    },
    link(dest) {
      try {
        if (fd !== undefined && store.durability === "fsync") fsyncSync(fd);
        if (fd !== undefined) fchmodSync(fd, store.fileMode & 0o444);
        close();
        ensureDir(store, dirname(dest));
        try {
          linkSync(temp, dest);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "EEXIST") return "exists";
          throw err;
        }
        unlinkQuiet(temp);
        syncDir(store, dirname(dest));
        return "made";
      } catch (err) {
        drop();
        throw ioError(err, `storing ${basename(dest)}`);
      }
    },
    abort: () => drop(),
  };
}

// A scratch file of this process alone (lib/blobs/storage.ts Scratch): made in tmp/ and unlinked
// at once, so no other user can open, change or remove it (a crash between the two leaves a temp
// file gc removes).
export function scratchFile(store: Store): Scratch {
  ensureDir(store, tmpDir(store), "sticky");
  const temp = tempName(store);
  let fd: number;
  try {
    fd = openSync(temp, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    unlinkSync(temp);
  } catch (err) {
    unlinkQuiet(temp);
    throw ioError(err, "starting a scratch file in the store");
  }
  let end = 0;
  const io = <T>(f: () => T): T => {
    try {
      return f();
    } catch (err) {
      throw ioError(err, "using a scratch file in the store");
    }
  };
  return {
    write: (bytes) => io(() => {
      for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off, end + off);
      end += bytes.length;
    }),
    read: (pos, buf) => io(() => readSync(fd, buf, 0, buf.length, pos)),
    close: () => closeSync(fd),
  };
}

// Creates the temp file of this process's next write now, empty and held open: creating an
// inode can cost a millisecond on a busy ext4 (a metadata change waits for the journal), and
// a process about to block (a claimer waiting for a task) should not pay it between its wake
// and its write. The next writeTemp takes it; dropSpare removes it if it was not taken; a
// crash leaves it in tmp/ like any temp file (gc removes it after TMP_STALE_MS).
export function prepareSpare(store: Store): void {
  if (store.spare) return;
  try {
    ensureDir(store, tmpDir(store), "sticky");
    const path = tempName(store);
    const fd = openSync(path, "wx", store.fileMode);
    try {
      fchmodSync(fd, store.fileMode);
    } catch (err) {
      closeSync(fd);
      unlinkQuiet(path);
      throw err;
    }
    store.spare = { path, fd };
  } catch {
    // Only an optimisation: the write itself will make its temp (and report what is wrong).
  }
}

export function dropSpare(store: Store): void {
  const spare = store.spare;
  if (!spare) return;
  store.spare = undefined;
  try {
    closeSync(spare.fd);
  } catch {
    // already closed
  }
  unlinkQuiet(spare.path);
}

// The first write of a process into a store that has no marker yet writes the marker first
// (lib/fs/guard.ts decided it may be one). Exclusive: a concurrent first writer's is as good.
export function writePendingMarker(store: Store): void {
  const marker = store.pendingMarker;
  if (!marker) return;
  store.pendingMarker = undefined;
  createAtomic(store, markerFile(store), JSON.stringify(marker) + "\n");
}

// Replaces `dest` with `data` atomically. Throws A2AError(EIO) with the store untouched.
export function writeAtomic(store: Store, dest: string, data: string | Uint8Array, opts: WriteOptions = {}): void {
  let temp: string | undefined;
  try {
    ensureDir(store, dirname(dest)); // never through a link out of the store
    temp = writeTemp(store, data, opts);
    opts.beforeCommit?.();
    renameSync(temp, dest);
    temp = undefined;
    if (opts.durable !== false) syncDir(store, dirname(dest));
  } catch (err) {
    throw ioError(err, `writing ${dest}`);
  } finally {
    if (temp) unlinkQuiet(temp);
  }
}

// Creates `dest` with `data` only if it does not exist. Returns false when it already exists.
export function createAtomic(store: Store, dest: string, data: string | Uint8Array, opts: WriteOptions = {}): boolean {
  for (let first = true; ; first = false) {
    let temp: string | undefined;
    try {
      ensureDir(store, dirname(dest));
      temp = writeTemp(store, data, opts);
      opts.beforeCommit?.();
      linkSync(temp, dest);
      if (opts.durable !== false) syncDir(store, dirname(dest));
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EEXIST") return false;
      // The directory went between ensureDir and the link (gc removing a whole old chain, e.g.
      // a lease free for a day that a long-running server takes again): make it again, once.
      if (code === "ENOENT" && temp && first) continue;
      throw ioError(err, `creating ${dest}`);
    } finally {
      if (temp) unlinkQuiet(temp);
    }
  }
}
