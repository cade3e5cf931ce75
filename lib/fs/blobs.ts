// The file engine's blob storage (lib/blobs/storage.ts): blob HEX is the file
// blobs/sha256/HEX, read-only, whose bytes hash to HEX. docs/FILE-ENGINE.md §15 is the layout.
//
// A put streams into a temp file of tmp/ (the store's one staging place, on the same
// filesystem), fsyncs it, and links it to its name: the link is the instant the blob exists,
// whole. A put killed before it leaves only the temp file, which gc removes after an hour
// (lib/core/atomic.ts TMP_STALE_MS). A second put of the same bytes finds the name taken
// (EEXIST), checks that the file there holds those bytes, drops its copy and touches the
// blob's time, so gc's grace period counts from the newest put. The file is read-only, so an
// agent given its path (MCP) cannot change it in place by mistake.
//
// In a shared store any member can create a file wherever a name is free, and a file's owner
// can always change it: blobs/ and blobs/sha256/ are sticky (nobody removes another's blob),
// a file found under a blob's name is trusted only once its bytes hash to the name, and a blob
// whose owner is another member is `sealed: false` (its owner could change it after any check).

import { closeSync, constants, fstatSync, openSync, readSync, utimesSync, type Stats } from "node:fs";
import type { Store } from "../core/config";
import type { BlobInfo, BlobStorage, Upload } from "../blobs/storage";
import { CHUNK } from "../blobs/storage";
import { stageFile } from "../core/atomic";
import { A2AError, ioError, op, text } from "../core/errors";
import { entries, lstatIf } from "../core/fs";
import { checkStore, ensureDir, myUid, removeFile } from "../core/guard";
import { userName } from "../core/owner";
import { blobFile, blobsDir } from "../core/paths";

const HEX = /^[0-9a-f]{64}$/;

// Opens the blob file `path` for reading: undefined when it is missing or no regular file (a
// FIFO or device planted under a blob's name is no blob), or, `unreadable`, one we may not read.
function openBlob(path: string, unreadable = false): { fd: number; st: Stats } | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP" || (unreadable && code === "EACCES")) return undefined;
    throw ioError(err, `reading ${path}`);
  }
  const st = fstatSync(fd);
  if (st.isFile()) return { fd, st };
  closeSync(fd);
  return undefined;
}

// Whether the file at `path` is a regular file of `size` bytes (when given) hashing to `hex`.
export function blobFileHolds(path: string, hex: string, size?: number): boolean {
  const open = openBlob(path, true);
  if (!open) return false;
  try {
    if (size !== undefined && open.st.size !== size) return false;
    const hash = new Bun.CryptoHasher("sha256");
    const buf = Buffer.allocUnsafe(CHUNK);
    for (let n; (n = readSync(open.fd, buf, 0, CHUNK, null)) > 0; ) hash.update(buf.subarray(0, n));
    return hash.digest("hex") === hex;
  } finally {
    closeSync(open.fd);
  }
}

// Whether only this user (or root) can change the file: another member owns what it put first.
// The root is guarded first: its marker says whether the store is shared.
function sealedBy(store: Store, st: Stats): boolean {
  checkStore(store);
  return !store.shared || st.uid === myUid() || st.uid === 0;
}

const planted = (store: Store, path: string, st: Stats) =>
  new A2AError("EIO", text`${path} holds other bytes than its name says (put there by OS user ${userName(store, st.uid)}, or damaged): nothing was stored; ask that user or the store's owner to remove it (rm ${path}), then store the file again; ${op("doctor")} names such files`, {
    data: { path, owner: userName(store, st.uid) },
  });

// A blob's time is its file's: only its owner may set it (another's stays: gc's grace then
// counts from its own put, and only its owner's gc may remove it).
function touch(path: string, st: Stats): void {
  if (st.uid !== myUid()) return;
  const now = new Date();
  try {
    utimesSync(path, now, now);
  } catch {
    // removed meanwhile: the record's check finds it gone
  }
}

function upload(store: Store): Upload {
  ensureDir(store, blobsDir(store), "sticky");
  const staged = stageFile(store);
  return {
    write: async (bytes) => staged.write(bytes),
    async commit(hex, size) {
      const dest = blobFile(store, hex);
      const there = lstatIf(dest, true);
      // A file under the name that is not these bytes: ours is replaced, another's refuses the put.
      if (there && !blobFileHolds(dest, hex, size)) {
        if (!sealedBy(store, there) || !removeFile(store, dest)) throw planted(store, dest, there);
      }
      if (staged.link(dest) === "made") return { fresh: true };
      const st = lstatIf(dest, true);
      if (!st) throw new A2AError("EIO", `${dest} was removed while this put stored the same bytes: store the file again`, { data: { path: dest } });
      if (!blobFileHolds(dest, hex, size)) throw planted(store, dest, st);
      touch(dest, st);
      return { fresh: false };
    },
    abort: async () => staged.abort(),
  };
}

function stat(store: Store, hex: string): (BlobInfo & { st: Stats }) | undefined {
  if (!HEX.test(hex)) return undefined;
  const st = lstatIf(blobFile(store, hex), true);
  return st?.isFile() ? { hex, size: st.size, at: st.mtimeMs, st } : undefined;
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

// Blobs whose bytes this process checked, by inode and change time: any write or chmod moves
// the change time, so a file changed since is checked again.
const checked = new Set<string>();

export function fileBlobs(store: Store): BlobStorage {
  return {
    begin: async () => upload(store),
    stat: async (hex) => {
      const found = stat(store, hex);
      return found && { hex, size: found.size, at: found.at };
    },
    async read(hex) {
      if (!HEX.test(hex)) return undefined;
      const open = openBlob(blobFile(store, hex));
      return open && chunks(open.fd);
    },
    sealed: (hex) => {
      const found = stat(store, hex);
      return !found || sealedBy(store, found.st);
    },
    // Handed out only when nobody else can change the file and its bytes are the blob's.
    path(hex) {
      const found = stat(store, hex);
      if (!found || !sealedBy(store, found.st)) return undefined;
      const path = blobFile(store, hex);
      const key = `${found.st.dev}:${found.st.ino}:${found.st.ctimeMs}:${found.size}:${hex}`;
      if (!checked.has(key)) {
        if (!blobFileHolds(path, hex, found.size)) return undefined;
        checked.add(key);
      }
      return path;
    },
    async touch(hex) {
      const found = stat(store, hex);
      if (found) touch(blobFile(store, hex), found.st);
    },
    list: async () => entries(store, blobsDir(store)).flatMap((f) => {
      const found = stat(store, f);
      return found ? [{ hex: f, size: found.size, at: found.at }] : [];
    }),
    // In a shared store's sticky directory only a blob's owner (or the directory's) may remove it.
    async remove(hex, before) {
      const found = stat(store, hex);
      if (!found || found.at >= before) return false;
      const dirOwner = lstatIf(blobsDir(store), true)?.uid;
      if (store.shared && myUid() !== 0 && found.st.uid !== myUid() && dirOwner !== myUid()) return false;
      return removeFile(store, blobFile(store, hex));
    },
    // An unfinished put is a temp file of tmp/, which gc's sweep of temp files removes (lib/maintenance/gc.ts).
    sweep: async () => 0,
  };
}
