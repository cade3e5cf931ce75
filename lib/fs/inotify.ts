// Linux inotify, called directly through bun:ffi: the event path of lib/fs/watch.ts on Linux.
//
// Why not fs.watch: Bun's fs.watch reads inotify on a watcher thread and hands each event to
// the JS thread. Here the nonblocking inotify fd is read by Bun's own event loop
// (Bun.file(fd).stream() polls it with epoll), so an event costs one wake of this thread
// and nothing more: `bun run bench --only wake` measures both (rows "floor: bare Bun
// fs.watch" and "floor: Bun, ffi inotify").
//
// Invariants:
// - One inotify instance per Store, one kernel watch per directory on it: instances are
//   limited per user (fs.inotify.max_user_instances, 128 by default), watches are not scarce.
// - add() is synchronous: events are queued by the kernel from the moment inotify_add_watch
//   returns, so a caller that adds, then checks, misses nothing published in between.
// - Every failure (no libc, no inotify, a limit reached, the fd breaking) is reported as
//   undefined or through `gone`, never thrown: the caller falls back to fs.watch or polling.
//   An instance whose fd broke refuses every later add(), so no watch is left unread.
// - The instance's fd is closed only by close(); the reader loop ends with it.

import type * as BunFFI from "bun:ffi";

export type InotifyEvent = (file: string | undefined) => void; // undefined: anything may have changed

interface DirEntry {
  onEvent: InotifyEvent;
  onGone: () => void; // the directory went away (deleted, moved, unmounted) or the fd broke
}

export interface Inotify {
  add(dir: string, onEvent: InotifyEvent, onGone: () => void): number | undefined; // the watch, or undefined
  close(): void;
}

// What a directory watch listens to: everything that changes its entries (as fs.watch does),
// and the directory itself leaving. IN_ONLYDIR|IN_DONT_FOLLOW: never a file, never a link.
const IN = {
  NONBLOCK: 0o4000,
  CLOEXEC: 0o2000000,
  MODIFY: 0x2,
  ATTRIB: 0x4,
  MOVED_FROM: 0x40,
  MOVED_TO: 0x80,
  CREATE: 0x100,
  DELETE: 0x200,
  DELETE_SELF: 0x400,
  MOVE_SELF: 0x800,
  UNMOUNT: 0x2000,
  Q_OVERFLOW: 0x4000,
  IGNORED: 0x8000,
  ONLYDIR: 0x01000000,
  DONT_FOLLOW: 0x02000000,
};
const DIR_MASK = IN.MODIFY | IN.ATTRIB | IN.MOVED_FROM | IN.MOVED_TO | IN.CREATE | IN.DELETE | IN.DELETE_SELF | IN.MOVE_SELF | IN.ONLYDIR | IN.DONT_FOLLOW;
const GONE = IN.DELETE_SELF | IN.MOVE_SELF | IN.UNMOUNT | IN.IGNORED;
const CLOSE_DELAY_MS = 100;
const HEADER = 16; // struct inotify_event { int wd; uint32_t mask, cookie, len; char name[len]; }

// bun:ffi is required here, not imported: a command that never waits (status, publish) loads
// watch.ts but must not pay for bun:ffi (~0.2 ms of start-up).
function loadLibc() {
  const { dlopen, FFIType } = require("bun:ffi") as typeof BunFFI;
  return dlopen("libc.so.6", {
    inotify_init1: { args: [FFIType.i32], returns: FFIType.i32 },
    inotify_add_watch: { args: [FFIType.i32, FFIType.cstring, FFIType.u32], returns: FFIType.i32 },
    inotify_rm_watch: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    close: { args: [FFIType.i32], returns: FFIType.i32 },
  }).symbols;
}

// A new inotify instance, or undefined where there is none to be had (no glibc, the per-user
// instance limit reached). Only asked on Linux (lib/core/platform.ts).
export function openInotify(): Inotify | undefined {
  let libc: ReturnType<typeof loadLibc>;
  let fd: number;
  try {
    libc = loadLibc();
    fd = libc.inotify_init1(IN.NONBLOCK | IN.CLOEXEC);
  } catch {
    return undefined;
  }
  if (fd < 0) return undefined;

  // wd -> what watches that directory: the kernel gives two paths of one directory one wd.
  const dirs = new Map<number, DirEntry[]>();
  let reader: { cancel(): Promise<void> } | undefined;
  let state: "open" | "broken" | "closed" = "open";

  // A listener that throws must not take the instance down with it: its error is rethrown on
  // its own, as an fs.watch listener's would be. No closure per call: this is every wake's path.
  const call = (f: InotifyEvent | (() => void), name?: string) => {
    try {
      f(name);
    } catch (e) {
      queueMicrotask(() => {
        throw e;
      });
    }
  };

  const dispatch = (buf: Buffer) => {
    for (let off = 0; off + HEADER <= buf.length; ) {
      if (state !== "open") return; // a listener closed the instance
      const wd = buf.readInt32LE(off);
      const mask = buf.readUInt32LE(off + 4);
      const len = buf.readUInt32LE(off + 12);
      const end = buf.indexOf(0, off + HEADER);
      const name = len ? buf.toString("utf8", off + HEADER, end < 0 || end > off + HEADER + len ? off + HEADER + len : end) : undefined;
      off += HEADER + len;
      if (mask & IN.Q_OVERFLOW) {
        // Events were dropped: every directory re-checks everything.
        for (const list of [...dirs.values()]) for (const d of list) call(d.onEvent);
        continue;
      }
      const list = dirs.get(wd);
      if (!list) continue;
      if (mask & GONE && !name) {
        dirs.delete(wd);
        if (!(mask & IN.IGNORED)) libc.inotify_rm_watch(fd, wd); // a moved directory keeps its watch
        for (const d of list) call(d.onGone);
      } else for (const d of list) call(d.onEvent, name);
    }
  };

  // The fd failed or its stream ended: every directory falls back, and add() refuses from now
  // on, so no later watch is left on an fd nobody reads.
  const broke = () => {
    if (state !== "open") return;
    state = "broken";
    reader = undefined;
    const lists = [...dirs.values()];
    dirs.clear();
    for (const list of lists) for (const d of list) call(d.onGone);
  };

  // Read only once some directory is watched: an instance with no watches must not keep the
  // process alive. False when Bun cannot read the fd.
  const read = (): boolean => {
    if (reader) return true;
    let r: ReturnType<ReturnType<ReturnType<typeof Bun.file>["stream"]>["getReader"]>;
    try {
      r = Bun.file(fd).stream().getReader();
    } catch {
      return false;
    }
    reader = r;
    (async () => {
      try {
        for (;;) {
          const { done, value } = await r.read();
          if (done) break;
          dispatch(Buffer.from(value)); // a copy of the few bytes read: a view of value.buffer costs twice as much
        }
      } catch {
        // broke() below
      }
      if (reader === r) broke(); // ended while still wanted (close() lets go of it first)
    })();
    return true;
  };

  return {
    add(dir, onEvent, onGone) {
      if (state !== "open") return undefined;
      let wd: number;
      try {
        wd = libc.inotify_add_watch(fd, Buffer.from(dir + "\0"), DIR_MASK);
      } catch {
        return undefined;
      }
      if (wd < 0) return undefined; // ENOSPC (watch limit), ENOENT, ENOTDIR, EACCES
      if (!read()) {
        if (!dirs.has(wd)) libc.inotify_rm_watch(fd, wd);
        return undefined;
      }
      const list = dirs.get(wd);
      if (list) list.push({ onEvent, onGone });
      else dirs.set(wd, [{ onEvent, onGone }]);
      return wd;
    },
    close() {
      if (state === "closed") return;
      state = "closed";
      // Closing an instance blocks until the kernel has retired its watches, which waits for
      // an RCU grace period: up to ~16 ms on the thread that closes, measured as the tail of
      // `a2a wait`. So the watches are removed now (the kernel retires them in the
      // background), and the reader and the fd are let go of a while later, off the caller's
      // path (cancelling the stream alone adds ~0.2 ms to `a2a wait`'s exit); a process that
      // exits before then leaves both to the exit, which finds no watch left to wait for.
      for (const wd of dirs.keys()) libc.inotify_rm_watch(fd, wd);
      dirs.clear();
      const r = reader;
      reader = undefined;
      setTimeout(() => {
        r?.cancel().catch(() => {}); // a stream that failed rejects its cancel
        libc.close(fd);
      }, CLOSE_DELAY_MS).unref();
    },
  };
}
