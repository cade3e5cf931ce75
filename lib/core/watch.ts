// The one watch/wait primitive. A process keeps at most one directory watch per directory
// (shared by every waiter on it, kept in the Store object, not in module state), and on a
// network filesystem, where a watch never sees other machines' writes, it polls as well.
//
// Wake rules, in this order, so nothing published between the check and the watch is lost:
//   0. run the check; if it holds, that is the outcome, and no watch is made (a wait for
//      something already there costs no inotify instance: about 0.5 ms of a CLI start-up);
//   1. subscribe to the directory (the watch exists from here on);
//   2. run the check again (what changed between 0 and 1 is seen here);
//   3. on every event for a non-dot entry, re-run the check for that entry; on every poll
//      tick, re-run it for everything (file = undefined).
// The check must treat "absent", "torn" and "vanished" as "not yet" and return undefined.
//
// Events come from lib/core/inotify.ts on Linux (one inotify instance per Store, read by
// Bun's event loop), from fs.watch where that is not to be had, and from poll ticks where
// neither is (or on a network filesystem, as well).
//
// Watches are closed only by closeWatches(store): an idle directory watch costs nothing.
// The CLI closes them after it has written its output and closed stdout (inotify.ts says
// why its fd is let go of a while after that).

import { watch, type FSWatcher } from "node:fs";
import type { Store } from "./config";
import { openInotify } from "./inotify";
import { A2AError, arg, text } from "./errors";
import { done, ended, type Outcome } from "./outcome";

export type Listener = (file: string | undefined) => void;

export interface DirWatch {
  listeners: Set<Listener>;
  wd?: number; // its watch on the store's inotify instance
  watcher?: FSWatcher; // or its fs.watch
  timer?: ReturnType<typeof setInterval>;
}

// How `dir` is watched: "watch" (events), "poll" (ticks), or "both" (auto mode on a network
// filesystem, where events come only for this machine's writes and ticks catch other
// machines'; and wherever the platform cannot say what the filesystem is: lib/core/platform.ts).
export function wakeMode(store: Store, dir: string): "watch" | "poll" | "both" {
  if (store.watchMode !== "auto") return store.watchMode;
  return store.platform.filesystem(dir).kind === "local" ? "watch" : "both";
}

function open(store: Store, dir: string): DirWatch {
  const w: DirWatch = { listeners: new Set() };
  const fire = (file: string | undefined) => {
    for (const l of [...w.listeners]) l(file);
  };
  const mode = wakeMode(store, dir);
  if (mode !== "poll" && store.inotify === undefined) store.inotify = (store.platform.inotify && openInotify()) || null;
  // On inotify, a directory reported gone (or an instance that broke) is polled rather than
  // left hanging, and each tick first tries to watch it again: it may be back. The tick's
  // re-check comes after, so arm-before-check holds for the new watch too.
  const watchInotify = (): boolean => {
    w.wd = store.inotify?.add(dir, (name) => !name?.startsWith(".") && fire(name), () => ((w.wd = undefined), poll()));
    return w.wd !== undefined;
  };
  const tick = () => {
    if (mode !== "poll" && w.wd === undefined && !w.watcher && store.inotify && watchInotify() && mode === "watch") {
      clearInterval(w.timer);
      w.timer = undefined;
    }
    fire(undefined);
  };
  const poll = () => (w.timer ??= setInterval(tick, store.pollMs));
  if (mode !== "poll") watchInotify();
  if (mode !== "poll" && w.wd === undefined) {
    try {
      w.watcher = watch(dir, { persistent: true }, (_event, file) => {
        const name = file == null ? undefined : String(file);
        if (name?.startsWith(".")) return; // temp and foreign dot-files never wake anyone
        fire(name);
      });
      // The directory vanished or the watch broke: fall back to polling rather than hang.
      w.watcher.on("error", () => {
        w.watcher?.close();
        w.watcher = undefined;
        poll();
      });
    } catch {
      // No watch to be had (inotify limits used up: ENOSPC/EMFILE): polling still wakes us.
      poll();
    }
  }
  if (mode !== "watch") poll();
  return w;
}

// Calls `listener` for every change in `dir` until the returned function is called.
// `dir` must exist.
export function subscribe(store: Store, dir: string, listener: Listener): () => void {
  const watches = store.watches;
  let w = watches.get(dir);
  if (!w) watches.set(dir, (w = open(store, dir)));
  w.listeners.add(listener);
  return () => w!.listeners.delete(listener);
}

export interface WaitOptions {
  timeoutMs?: number; // undefined = no limit
  signal?: AbortSignal;
}

// A wait's timeout as given by a caller: none, or zero or more milliseconds.
export function checkTimeout(timeoutMs: number | undefined): void {
  if (timeoutMs !== undefined && !(timeoutMs >= 0)) throw new A2AError("EUSAGE", text`a timeout must be zero or more seconds: give e.g. ${arg("timeout", 30)}`);
}

export interface WaitUntilOptions extends WaitOptions {
  // Also re-run the check for everything this often: for conditions no directory event
  // announces (a holder that died, a lease that ran out).
  recheckMs?: number;
}

// Runs `check` until it returns a value (done), the time runs out (timeout) or the signal
// aborts (aborted); the value of a timeout or abort is undefined, and `pending` is empty:
// callers say what they were waiting for.
export function waitUntil<T>(
  store: Store,
  dir: string,
  check: (file: string | undefined) => T | undefined,
  opts: WaitUntilOptions = {},
): Promise<Outcome<T | undefined>> {
  return new Promise<Outcome<T | undefined>>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let recheck: ReturnType<typeof setInterval> | undefined;
    let unsubscribe = () => {};
    let over = false; // events already queued must not run the check after the end
    const end = () => {
      over = true;
      unsubscribe();
      if (timer) clearTimeout(timer);
      if (recheck) clearInterval(recheck);
      opts.signal?.removeEventListener("abort", onAbort);
    };
    const finish = (outcome: Outcome<T | undefined>) => {
      end();
      resolve(outcome);
    };
    const onAbort = () => finish(ended("aborted", undefined, []));
    const run = (file: string | undefined) => {
      if (over) return;
      try {
        const v = check(file);
        if (v !== undefined) finish(done(v));
      } catch (err) {
        end();
        reject(err);
      }
    };
    if (opts.signal?.aborted) return resolve(ended("aborted", undefined, []));
    try {
      const v = check(undefined);
      if (v !== undefined) return resolve(done(v));
    } catch (err) {
      return reject(err);
    }
    unsubscribe = subscribe(store, dir, run);
    opts.signal?.addEventListener("abort", onAbort);
    // Beyond setTimeout's 24.8-day range a limit is as good as none.
    if (opts.timeoutMs !== undefined && opts.timeoutMs < 2 ** 31) {
      timer = setTimeout(() => finish(ended("timeout", undefined, [])), Math.max(0, opts.timeoutMs));
    }
    if (opts.recheckMs) recheck = setInterval(() => run(undefined), opts.recheckMs);
    run(undefined);
  });
}

// Releases every watch and poll timer this store opened (call once waiting is over).
export function closeWatches(store: Store): void {
  const watches = store.watches;
  for (const w of watches.values()) {
    w.watcher?.close();
    if (w.timer) clearInterval(w.timer);
  }
  watches.clear();
  store.inotify?.close();
  store.inotify = undefined;
}
