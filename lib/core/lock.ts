// Mutual exclusion for read-modify-write of one record (a slot, a policy), across processes
// and across machines sharing the store over NFS. The lock is the directory
// ROOT/locks/NAME.lock/, created by mkdir: atomic and exclusive on every filesystem a2a
// supports, NFS included (unlike O_EXCL on old clients). An empty directory, so no content can
// be torn. This is the protocol's own lock (docs/PROTOCOL.md "Locks"), no library's.
//
// Calling sequence: withLock(store, name, fn): acquire, run fn, release in finally.
// Readers never lock: they rely on the atomic rename (lib/core/atomic.ts) to see old or new.
//
//   acquire: mkdir NAME.lock. Created: held; remember its inode and mtime (its identity).
//            EEXIST: if its mtime is older than STALE_MS it belongs to a dead or frozen holder:
//            break it (below) and try again; else back off (0.5-1.5x a delay growing to
//            50 ms) and try again, for at most GIVE_UP_MS.
//   break:   mkdir NAME.lock.break (one breaker at a time; a break lock older than STALE_MS
//            is removed first); re-check that NAME.lock is still the stale one judged
//            (same inode and mtime); rmdir it; rmdir the break lock.
//   release: rmdir NAME.lock only if it is still ours (same inode and mtime). A holder that
//            was frozen past STALE_MS and taken over finds another identity and leaves it, so
//            it cannot free the lock of whoever took over (which would let a third writer in
//            beside them, whose release frees the next one's, and so on).
//
// Critical sections are synchronous and take milliseconds (read, write, fsync, rename), so no
// refresh timer is needed (none could run during them anyway). What it does not do: protect
// against a holder frozen longer than STALE_MS (SIGSTOP, or an fsync stalled that long); such
// a holder's lock is broken and its late write may land after another writer's.

import { lstatSync, mkdirSync, rmdirSync } from "node:fs";
import { type Store } from "./config";
import { ensureDir } from "./guard";
import { A2AError, ioError } from "./errors";
import { lockFile, locksDir } from "./paths";

export const STALE_MS = 2000;
const GIVE_UP_MS = 30_000;

interface Identity {
  ino: number;
  mtimeMs: number;
  dir: boolean;
}

function identity(path: string): Identity | undefined {
  try {
    const st = lstatSync(path);
    return { ino: st.ino, mtimeMs: st.mtimeMs, dir: st.isDirectory() };
  } catch {
    return undefined; // gone
  }
}

const same = (a: Identity | undefined, b: Identity | undefined) => !!a && !!b && a.ino === b.ino && a.mtimeMs === b.mtimeMs;

// mkdir `path`: true when this call created it, false when it exists.
function tryMkdir(path: string, what: string): boolean {
  try {
    mkdirSync(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw ioError(err, what);
  }
}

const rmdirQuiet = (path: string) => {
  try {
    rmdirSync(path);
  } catch {
    // gone already, or not empty (then it is not a lock a2a made: leave it)
  }
};

// Removes the lock at `path` if it is still the stale one judged (`judged`).
function breakStale(path: string, judged: Identity): void {
  const guard = path + ".break";
  if (!tryMkdir(guard, `breaking the stale lock ${path}`)) {
    const g = identity(guard);
    if (g && Date.now() - g.mtimeMs > STALE_MS) rmdirQuiet(guard); // a breaker died mid-break
    return; // another process is breaking it: the caller just tries again
  }
  try {
    if (same(identity(path), judged)) rmdirQuiet(path);
  } finally {
    rmdirQuiet(guard);
  }
}

export async function withLock<T>(store: Store, name: string, fn: () => T | Promise<T>): Promise<T> {
  ensureDir(store, locksDir(store));
  const path = lockFile(store, name);
  const started = Date.now();
  let ours: Identity | undefined;
  for (let attempt = 0; !ours; attempt++) {
    if (tryMkdir(path, `locking ${name}`)) {
      ours = identity(path);
      if (ours) break;
      continue; // broken as stale in the instant after we made it: take it again
    }
    const held = identity(path);
    if (held && !held.dir) {
      // Not a lock a2a made (a file or link dropped there): never remove it, never wait on it.
      throw new A2AError("EIO", `${path} is not a lock directory: remove it (it is not a2a's), then retry`, { data: { lock: path } });
    }
    if (Date.now() - started > GIVE_UP_MS) {
      throw new A2AError(
        "EIO",
        `${name} stayed locked for ${GIVE_UP_MS / 1000} s: another a2a process is writing it; retry, or remove ${path} if none is running`,
        { data: { lock: path } },
      );
    }
    if (held && Date.now() - held.mtimeMs > STALE_MS) {
      breakStale(path, held);
      continue;
    }
    // Back off between 0.5x and 1.5x of a delay growing to 50 ms: contenders spread out.
    const base = Math.min(50, 1 + attempt * attempt);
    await Bun.sleep(base * (0.5 + Math.random()));
  }
  try {
    return await fn();
  } finally {
    if (same(identity(path), ours)) rmdirQuiet(path);
  }
}
