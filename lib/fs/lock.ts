// Mutual exclusion for read-modify-write of one record (a slot, a policy), across processes
// and across machines sharing the store over NFS. The lock is the directory
// ROOT/locks/NAME.lock/, created by mkdir: atomic and exclusive on every filesystem a2a
// supports, NFS included (unlike O_EXCL on old clients). An empty directory, so no content can
// be torn. This is the protocol's own lock (docs/FILE-ENGINE.md §4), no library's.
//
// Calling sequence: withLock(store, name, fn): acquire, run fn(lock), release in finally.
// Readers never lock: they rely on the atomic rename (lib/fs/atomic.ts) to see old or new.
//
// No host's clock judges a lock. Machines sharing a store over NFS disagree about the time,
// and any clock can be stepped, but a lock's mtime is stamped by the filesystem (the file
// server's clock on NFS). So a lock's age is the filesystem's now minus its mtime, the
// filesystem's now being the mtime of the break guard just made; and a waiter counts on its
// own monotonic clock how long it has seen one lock unchanged.
//
//   acquire: mkdir NAME.lock. Created: held; remember its inode and mtime (its identity).
//            EEXIST: the lock is stale (its holder dead or frozen) when this waiter has seen
//            the same identity for STALE_MS of its monotonic clock, or when its mtime is more
//            than STALE_MS from the filesystem's now, either way (only a clock step dates a
//            lock in the future). The second is checked once per identity, at its second
//            sighting: most locks are gone by then. Stale: break it and try again; else back
//            off (0.5-1.5x a delay growing to 50 ms) and try again, for at most GIVE_UP_MS.
//   break:   mkdir NAME.lock.break (one breaker at a time; its mtime is the filesystem's
//            now); re-check that NAME.lock is still the one judged (same identity) and stale;
//            rmdir it; rmdir the guard. A guard seen unchanged for STALE_MS is a dead
//            breaker's: removed (if still the same), then the waiter tries again.
//   commit:  fn gets `lock.check`, which throws unless NAME.lock is still ours; a writer runs
//            it just before the rename that makes its write visible, so a holder frozen past
//            STALE_MS and taken over writes nothing (lib/fs/atomic.ts `beforeCommit`).
//   release: rmdir NAME.lock only if it is still ours (same identity). A holder that was
//            frozen past STALE_MS and taken over finds another identity and leaves it, so it
//            cannot free the lock of whoever took over (which would let a third writer in
//            beside them, whose release frees the next one's, and so on).
//
// Critical sections are synchronous and take milliseconds (read, write, fsync, rename), so no
// refresh timer is needed (none could run during them anyway). What it does not do: protect
// against a holder frozen longer than STALE_MS between its last check and its rename (a few
// system calls); docs/FILE-ENGINE.md §15 says so.

import { lstatSync, mkdirSync, rmdirSync } from "node:fs";
import { type Store } from "../core/config";
import { ensureDir } from "./guard";
import { A2AError, ioError } from "../core/errors";
import { lockFile, locksDir } from "./paths";
import { randomHex } from "../core/digest";
import { join } from "node:path";

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

// One identity as a waiter watches it: since when (its monotonic clock) it has been there,
// how often it was seen, whether its age was checked on the filesystem's clock.
interface Sighting {
  id: Identity;
  since: number;
  seen: number;
  probed: boolean;
}

const sight = (s: Sighting | undefined, id: Identity): Sighting =>
  s && same(s.id, id) ? { ...s, seen: s.seen + 1 } : { id, since: performance.now(), seen: 1, probed: false };
const watchedFor = (s: Sighting) => performance.now() - s.since;

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

const rmdirQuiet = (path: string): boolean => {
  try {
    rmdirSync(path);
    return true;
  } catch {
    return false; // gone already, or not empty (then it is not a lock a2a made: leave it)
  }
};

// Under the break guard, removes the lock at `path` if it is still `judged` and stale:
// `watched` (a waiter saw it unchanged for STALE_MS), or dated more than `maxAgeMs` from the
// filesystem's now either way. True: removed; false: kept; undefined: another process holds
// the guard (breaking this lock, or dead while doing so: see the caller).
function breakIfStale(path: string, judged: Identity, maxAgeMs: number, watched: boolean): boolean | undefined {
  const guard = path + ".break";
  if (!tryMkdir(guard, `breaking the stale lock ${path}`)) return undefined;
  try {
    const fsNow = identity(guard)?.mtimeMs;
    const stale = watched || (fsNow !== undefined && Math.abs(fsNow - judged.mtimeMs) > maxAgeMs);
    return stale && same(identity(path), judged) && rmdirQuiet(path);
  } finally {
    rmdirQuiet(guard);
  }
}

// For gc: removes lock NAME if it is dated more than `maxAgeMs` from the filesystem's now.
export function removeStaleLock(store: Store, name: string, maxAgeMs: number): boolean {
  const path = lockFile(store, name);
  const held = identity(path);
  return !!held?.dir && breakIfStale(path, held, maxAgeMs, false) === true;
}

// For gc: removes the break guard of lock NAME (NAME.lock.break) that a breaker died holding,
// if it is dated more than `maxAgeMs` from the filesystem's now, read off a probe directory gc
// makes beside it (a breaker holds its guard for a moment; while one is left, the lock behind
// it cannot be broken by gc, and every writer waits 2 s to judge it).
export function removeStaleGuard(store: Store, name: string, maxAgeMs: number): boolean {
  const guard = lockFile(store, name) + ".break";
  const held = identity(guard);
  if (!held?.dir) return false;
  const probe = join(locksDir(store), `.clock.${process.pid}.${randomHex(4)}`);
  if (!tryMkdir(probe, "reading the filesystem's clock")) return false;
  try {
    const fsNow = identity(probe)?.mtimeMs;
    return fsNow !== undefined && Math.abs(fsNow - held.mtimeMs) > maxAgeMs && same(identity(guard), held) && rmdirQuiet(guard);
  } finally {
    rmdirQuiet(probe);
  }
}

// What fn gets: `check` throws unless the lock is still this holder's (run it just before a
// commit); `ours` says whether it is (a holder taken over must not tidy up the new one's files).
export interface Lock {
  check: () => void;
  ours: () => boolean;
}

export async function withLock<T>(store: Store, name: string, fn: (lock: Lock) => T | Promise<T>): Promise<T> {
  ensureDir(store, locksDir(store));
  const path = lockFile(store, name);
  const guard = path + ".break";
  const started = performance.now();
  let ours: Identity | undefined;
  let watching: Sighting | undefined, breaker: Sighting | undefined;
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
    if (performance.now() - started > GIVE_UP_MS) {
      throw new A2AError(
        "EIO",
        `${name} stayed locked for ${GIVE_UP_MS / 1000} s: another a2a process is writing it; retry, or remove ${path} if none is running`,
        { data: { lock: path } },
      );
    }
    if (!held) continue; // released meanwhile
    watching = sight(watching, held);
    const watched = watchedFor(watching) > STALE_MS;
    if (watched || (watching.seen >= 2 && !watching.probed)) {
      const broken = breakIfStale(path, held, STALE_MS, watched);
      if (broken) continue;
      if (broken === false) watching.probed = true;
      else {
        const g = identity(guard);
        breaker = g && sight(breaker, g);
        if (breaker && watchedFor(breaker) > STALE_MS && same(identity(guard), breaker.id)) rmdirQuiet(guard); // its breaker died
      }
    }
    // Back off between 0.5x and 1.5x of a delay growing to 50 ms: contenders spread out.
    const base = Math.min(50, 1 + attempt * attempt);
    await Bun.sleep(base * (0.5 + Math.random()));
  }
  const stillOurs = () => same(identity(path), ours);
  const check = () => {
    if (!stillOurs()) {
      throw new A2AError(
        "EIO",
        `${name}'s lock was taken over while this process was stalled for over ${STALE_MS / 1000} s (stopped, or a stuck disk): this change was not made; retry`,
        { data: { lock: path } },
      );
    }
  };
  try {
    return await fn({ check, ours: stillOurs });
  } finally {
    if (stillOurs()) rmdirQuiet(path);
  }
}
