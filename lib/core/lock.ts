// Mutual exclusion for read-modify-write of one slot, across processes and across machines
// sharing the store over NFS. Built on proper-lockfile: the lock is the directory
// ROOT/locks/NAME.lock/, created by mkdir (atomic and exclusive on NFS, unlike O_EXCL on
// old clients). The holder refreshes its mtime every second; a lock whose mtime is older
// than STALE_MS belongs to a dead or frozen holder and is taken over, so a writer killed
// with -9 costs the next writer at most ~STALE_MS, never a wedged store.
//
// Calling sequence: withLock(store, name, fn) -> acquire, run fn, release in finally.
// Readers never lock: they rely on the atomic rename (lib/core/atomic.ts) to see old or new.
// What it does not do: protect against a holder frozen longer than STALE_MS (e.g. SIGSTOP,
// or an fsync stalled that long); such a holder's lock is broken and its late write may land
// after another writer's. What it does do: such a holder, on release, leaves the lock
// directory alone unless it is still its own (same test as proper-lockfile's: the mtime is
// the one it last set), so it cannot free the lock of whoever took over, which would let a
// third writer in beside them, whose release frees the next one's, and so on.

import * as fs from "node:fs";
import { ioError, A2AError } from "./errors";
import { lockFile, locksDir } from "./paths";
import { ensureDir, type Store } from "./config";

export const STALE_MS = 2000; // proper-lockfile's floor; the holder refreshes every 1000 ms
const GIVE_UP_MS = 30_000;

export async function withLock<T>(store: Store, name: string, fn: () => T | Promise<T>): Promise<T> {
  const { lock } = await import("proper-lockfile");
  ensureDir(store, locksDir(store));
  const path = lockFile(store, name);
  const started = Date.now();
  // Ownership of the lock directory: the mtime we last set (or found when we took it).
  let ourMtime = NaN;
  let keepDir = false;
  const lockFs = {
    ...fs,
    utimes: (p: fs.PathLike, a: fs.TimeLike, m: fs.TimeLike, cb: (e: NodeJS.ErrnoException | null) => void) =>
      fs.utimes(p, a, m, (e) => {
        if (!e) ourMtime = new Date(m as Date).getTime();
        cb(e);
      }),
    rmdir: (p: fs.PathLike, cb: (e: NodeJS.ErrnoException | null) => void) => (keepDir ? cb(null) : fs.rmdir(p, cb)),
  };
  let release: (() => Promise<void>) | undefined;
  for (let attempt = 0; !release; attempt++) {
    try {
      release = await lock(path, {
        lockfilePath: path,
        realpath: false,
        fs: lockFs as unknown as typeof fs,
        stale: STALE_MS,
        update: 1000,
        retries: 0,
        // Our lock was broken by someone who judged it stale: nothing to undo (the write
        // itself is atomic); throwing here would kill a long-running MCP server.
        onCompromised: () => {},
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ELOCKED") throw ioError(err, `locking slot ${name}`);
      if (Date.now() - started > GIVE_UP_MS) {
        throw new A2AError(
          "EIO",
          `slot ${name} stayed locked for ${GIVE_UP_MS / 1000} s: another a2a process is writing it; retry, or remove ${path} if none is running`,
        );
      }
      // Back off between 0.5x and 1.5x of a delay growing to 50 ms: contenders spread out.
      const base = Math.min(50, 1 + attempt * attempt);
      await Bun.sleep(base * (0.5 + Math.random()));
    }
  }
  try {
    ourMtime = fs.statSync(path).mtimeMs; // nobody can have taken it over yet: it is fresh
  } catch {
    // vanished already (removed by hand): release below finds nothing to remove either way
  }
  try {
    return await fn();
  } finally {
    let ours = false;
    try {
      ours = fs.statSync(path).mtimeMs === ourMtime;
    } catch {
      // gone: nothing of ours to remove
    }
    keepDir = !ours; // release still stops the refresh timer; the directory stays theirs
    await release().catch(() => {
      // Already released or broken as stale: the lock is not ours any more either way.
    });
  }
}
