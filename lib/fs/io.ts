// The file engine's filesystem helpers: listing a directory, syncing it, and the one bounded
// read of a record file (the bound itself is engine-neutral: lib/core/record.ts).
//
// Invariants of readBounded / readEnds / readJsonLine (every record, message, policy, peer, key
// and cursor is read through them):
// - a symlink is never followed (O_NOFOLLOW) and opening never blocks (O_NONBLOCK: a FIFO
//   planted under a record's name opens at once); anything but a regular file is "invalid";
// - at most `limit` + 1 bytes are read, so /dev/zero or a 10 GB sparse file costs one read of
//   the limit, never the machine's memory; a file over the limit is "invalid";
// - "absent" means not there (ENOENT, ENOTDIR, or ESTALE: a network filesystem's handle went
//   stale, i.e. the file was replaced meanwhile; `stale` says so, and a retry sees the new one).
//
// Invariant of every read (entries, readBounded, readJsonLine): the directories from the root
// down to what is read are lstat'ed first, and a symbolic link or a non-directory among them is
// refused with the line lib/fs/guard.ts gives writers. A reader never follows a link out of
// the store: `a2a status` in a store whose slots/ points into a project does not list the
// project, and `a2a wait` does not read its files. (The root itself may be a link the user made:
// it is where the user put the store. Ownership is the writers' check: a directory another
// user made cannot lead a reader out of the store.)

import { closeSync, constants, fstatSync, fsyncSync, lstatSync, openSync, readdirSync, readSync, type Stats } from "node:fs";
import { dirname, sep } from "node:path";
import type { Store } from "../core/config";
import { A2AError, ioError } from "../core/errors";
import { RECORD_LIMIT } from "../core/record";
import { decodeUtf8 } from "../core/utf8";

// The one refusal of a store directory that is not what a2a made (writers and readers alike).
export function refuseDir(path: string, what: string): never {
  throw new A2AError("EIO", `${path} is ${what}, not a directory a2a made: a2a never follows it out of the store; remove or fix it, then retry`, {
    data: { path },
  });
}

// True when the store's directory `dir` (the root or below it) can be read: every component
// below the root is a real directory. False when one is missing (there is nothing to read);
// refuses a link or a non-directory (see the header). Creates nothing.
// A directory found good is not looked at again until the current synchronous step ends (a
// microtask forgets it): `status` over 10,000 slots checks slots/ once, not 10,000 times, and
// a long-running server still checks afresh on every call and every wake. A link swapped in
// during one step is the same race as the one between any check and the open that follows.
export function readableDir(store: Store, dir: string): boolean {
  if (dir === store.root || store.readChecked?.has(dir)) return true;
  const prefix = store.root.endsWith(sep) ? store.root : store.root + sep; // "/" is a root too
  if (!dir.startsWith(prefix)) {
    throw new A2AError("EIO", `internal error: ${dir} is outside the store ${store.root}; please report this`);
  }
  let path = prefix.slice(0, -1);
  for (const part of dir.slice(prefix.length).split(sep)) {
    path = `${path}${sep}${part}`;
    let st;
    try {
      st = lstatSync(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ESTALE") return false;
      throw ioError(err, `checking ${path}`);
    }
    if (st.isSymbolicLink()) refuseDir(path, "a symbolic link");
    if (!st.isDirectory()) refuseDir(path, "not a directory");
  }
  if (!store.readChecked) {
    store.readChecked = new Set();
    queueMicrotask(() => (store.readChecked = undefined));
  }
  store.readChecked.add(dir);
  return true;
}

// True when the store's path `path` exists (as anything: it is not followed), its directories
// checked as for a read.
export function exists(store: Store, path: string): boolean {
  if (!readableDir(store, dirname(path))) return false;
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

// `path`'s own metadata (a link is not followed), or undefined when it is not there; any
// other failure (EACCES, EIO) is an A2AError, unless `quiet` (a sweep passing over what it cannot
// look at).
export function lstatIf(path: string, quiet = false): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (quiet || code === "ENOENT") return undefined;
    throw ioError(err, `checking ${path}`);
  }
}

// Entries of the store's directory `dir` (none when it does not exist), dot-files left out:
// names starting with "." are not a2a's records (temp files, editors' leftovers, foreign
// files; the one dot-name a2a writes is a task's pending marker, which only `withDots`
// callers list).
export function entries(store: Store, dir: string, withDots = false): string[] {
  if (!readableDir(store, dir)) return [];
  try {
    const all = readdirSync(dir);
    return withDots ? all : all.filter((f) => !f.startsWith("."));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw ioError(err, `listing ${dir}`); // ENOTDIR too: a file where a directory should be is damage
  }
}

// Makes the names in the store's directory `dir` durable (fsync of the directory): a rename,
// link or mkdir is promised to survive a power cut only once its directory is synced (ext4
// commits it with its journal a few seconds later anyway; XFS and btrfs need not). Skipped
// with A2A_DURABILITY=none. A filesystem that cannot sync a directory (EINVAL on some FUSE
// mounts) is let be: the name is in place and readers see it, and reporting the write as failed
// would make its caller write it a second time. Any other failure is reported. The root may be
// a link the user made (~/.a2a -> /data/a2a); below it nothing is followed.
export function syncDir(store: Store, dir: string): void {
  if (store.durability !== "fsync") return;
  let fd: number | undefined;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | (dir === store.root ? 0 : constants.O_NOFOLLOW));
    fsyncSync(fd);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EINVAL" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "EROFS") throw ioError(err, `syncing ${dir}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export type BoundedRead =
  | { kind: "ok"; bytes: Uint8Array; uid: number; mtimeMs: number }
  | { kind: "absent"; stale?: boolean }
  | { kind: "invalid"; why: string };

// Reads the store's regular file `path` of at most `limit` bytes (see the header).
export function readBounded(store: Store, path: string, limit: number): BoundedRead {
  return withRecordFile(store, path, limit, (fd, st) => {
    const buf = new Uint8Array(Math.min(limit, st.size) + 1);
    let off = 0;
    for (;;) {
      const n = readSync(fd, buf, off, buf.length - off, null);
      if (n === 0) break;
      off += n;
      if (off > limit) return { kind: "invalid", why: `over ${limit} bytes` };
      // All the bytes fstat promised: a2a never writes a file in place, so there is no more to
      // wait for (a read that would return 0 is one syscall per record saved).
      if (off === st.size) break;
      if (off === buf.length) break; // grew while we read, but still within the limit + 1
    }
    return { kind: "ok", bytes: buf.subarray(0, off), uid: st.uid, mtimeMs: st.mtimeMs };
  });
}

export type EndsRead =
  | { kind: "ok"; head: Buffer; tail: Buffer | undefined; size: number; uid: number; mtimeMs: number }
  | { kind: "absent"; stale?: boolean }
  | { kind: "invalid"; why: string };

// The first `head` and the last `tail` bytes of the store's regular file `path` of at most
// `limit` bytes, under the checks of readBounded: what a listing needs of a record whose big
// field sits in the middle (a message's body), at a cost that does not grow with the file.
// A file of at most head + tail bytes is read whole, into `head` (`tail` undefined).
export function readEnds(store: Store, path: string, limit: number, head: number, tail: number): EndsRead {
  return withRecordFile(store, path, limit, (fd, st) => {
    const whole = st.size <= head + tail;
    const first = Buffer.allocUnsafe(whole ? st.size : head);
    const last = whole ? undefined : Buffer.allocUnsafe(tail);
    // Files a2a writes are never changed in place: a short read is a file that is not one.
    if (!readAt(fd, first, 0) || (last && !readAt(fd, last, st.size - tail))) return { kind: "invalid", why: "changed while read" };
    return { kind: "ok", head: first, tail: last, size: st.size, uid: st.uid, mtimeMs: st.mtimeMs };
  });
}

// Fills `buf` from offset `pos` of `fd`; false when the file ends first.
function readAt(fd: number, buf: Uint8Array, pos: number): boolean {
  for (let off = 0; off < buf.length; ) {
    const n = readSync(fd, buf, off, buf.length - off, pos + off);
    if (n === 0) return false;
    off += n;
  }
  return true;
}

// Opens `path` as readBounded does (see the header) and hands a regular file of at most
// `limit` bytes to `read`.
function withRecordFile<T>(store: Store, path: string, limit: number, read: (fd: number, st: { size: number; uid: number; mtimeMs: number }) => T): T | { kind: "absent"; stale?: boolean } | { kind: "invalid"; why: string } {
  if (!readableDir(store, dirname(path))) return { kind: "absent" };
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { kind: "absent" };
    if (code === "ESTALE") return { kind: "absent", stale: true };
    if (code === "ELOOP" || code === "EMLINK") return { kind: "invalid", why: "a symbolic link" };
    if (code === "ENXIO" || code === "EISDIR") return { kind: "invalid", why: "not a regular file" };
    throw ioError(err, `reading ${path}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { kind: "invalid", why: "not a regular file" };
    if (st.size > limit) return { kind: "invalid", why: `over ${limit} bytes` };
    return read(fd, st);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ESTALE") return { kind: "absent", stale: true };
    if (code === "EAGAIN" || code === "EISDIR") return { kind: "invalid", why: "not a regular file" };
    throw ioError(err, `reading ${path}`);
  } finally {
    closeSync(fd);
  }
}

// `lost`: the file is empty or all NUL bytes, which is what a power cut leaves of a file whose
// bytes were never synced (ext4 keeps the name and drops the data; XFS reads it as zeros).
export type JsonRead<T> =
  | { kind: "ok"; value: T; uid: number; mtimeMs: number }
  | { kind: "absent"; stale?: boolean }
  | { kind: "invalid"; why: string; lost?: boolean };

// A record file: one line of JSON ending in "\n" (a torn read on a caching filesystem lacks
// it), decoded by `decode`, which returns undefined for anything that is not such a record.
export function readJsonLine<T>(store: Store, path: string, decode: (value: any) => T | undefined): JsonRead<T> {
  const r = readBounded(store, path, RECORD_LIMIT);
  if (r.kind !== "ok") return r;
  if (r.bytes.every((b) => b === 0)) return { kind: "invalid", why: "empty (its bytes never reached the disk)", lost: true };
  const text = decodeUtf8(r.bytes);
  if (!text.endsWith("\n")) return { kind: "invalid", why: "incomplete (no final newline)" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: "invalid", why: "not JSON" };
  }
  const value = parsed && typeof parsed === "object" ? decode(parsed) : undefined;
  return value === undefined ? { kind: "invalid", why: "not an a2a record" } : { kind: "ok", value, uid: r.uid, mtimeMs: r.mtimeMs };
}
