// The one watch/wait primitive. A waiter waits on a channel (lib/core/channel.ts); the file
// engine maps it to a directory and keeps at most one directory watch per directory (shared by
// every waiter on it, kept in the Store object, not in module state), and on a network
// filesystem, where a watch never sees other machines' writes, it polls as well.
//
// Wake rules, in this order, so nothing published between the check and the watch is lost:
//   0. run the check; if it holds, that is the outcome, and no watch is made (a wait for
//      something already there costs no inotify instance: about 0.5 ms of a CLI start-up);
//   1. subscribe to the channel (the watch exists from here on);
//   2. run the check again (what changed between 0 and 1 is seen here);
//   3. on every event for a record of the channel, re-run the check for that record's key; on
//      every poll tick, re-run it for everything (key = undefined).
// The check must treat "absent", "torn" and "vanished" as "not yet" and return undefined. It
// may be asynchronous: see waitUntil.
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
import type { Channel } from "./channel";
import { ensureDir } from "./guard";
import { idOfFile, inboxesDir, keysDir, leaseDir, newDir, reservationFileName, reservationsDir, openDir, sessionsDir, slotNameOf, slotsDir, taskDir, topicDir, topicsDir } from "./paths";

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

// Where the file engine sees a channel change: its directory, and the key of an entry there (the
// record it is of; undefined: no record of the channel, so no event). Only the slot and inbox
// checks look at keys; the others look at everything on any event, as they always did.
// `make`: a directory of the store's top level, made here when missing (a wait may come before
// the first record); the others are made by their room's storage before anyone waits on them.
function channelDir(store: Store, ch: Channel): { dir: string; key: (file: string) => string | undefined; make?: true } {
  const any = (file: string) => file;
  switch (ch.on) {
    case "slots":
      return { dir: slotsDir(store), key: slotNameOf, make: true };
    case "inbox":
      return { dir: newDir(store, ch.agent), key: idOfFile };
    case "inboxes":
      return { dir: inboxesDir(store), key: any, make: true };
    case "queue":
      return { dir: openDir(store, ch.queue), key: any };
    case "task":
      return { dir: taskDir(store, ch.queue, ch.id), key: any };
    case "topic":
      return { dir: topicDir(store, ch.topic), key: any };
    case "topics":
      return { dir: topicsDir(store), key: any, make: true };
    case "keys":
      return { dir: keysDir(store, ch.to), key: any };
    case "lease":
      return { dir: leaseDir(store, ch.name), key: any };
    case "reservations":
      return { dir: reservationsDir(store), key: (f) => (f === reservationFileName(ch.repo) ? ch.repo : undefined), make: true };
    case "session":
      return { dir: sessionsDir(store), key: (f) => (f === ch.name + ".json" ? ch.name : undefined), make: true };
  }
}

// Calls `listener` with a key for every change on `channel` (undefined on a poll tick or a
// lost event: anything may have changed) until the returned function is called: the store's
// engine's own waking (a directory's watches below, a database's notifications: lib/pg/wake.ts).
export function watchChannel(store: Store, channel: Channel, listener: Listener): () => void {
  return store.engine.watch(channel, listener);
}

// watchChannel on a directory: the channel's directory watched (lib/fs/engine.ts).
export function watchDirChannel(store: Store, channel: Channel, listener: Listener): () => void {
  const { dir, key, make } = channelDir(store, channel);
  if (make) ensureDir(store, dir);
  return subscribe(store, dir, (file) => {
    if (file === undefined) return listener(undefined);
    const k = key(file);
    if (k !== undefined) listener(k);
  });
}

// Calls `listener` for every change in `dir` until the returned function is called: the file
// engine's own watches (channels, and the dashboard's feed, which reads directories).
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
//
// A check may be asynchronous (an engine whose reads are: docs/ENGINE.md). Then one check runs
// at a time: events that arrive meanwhile are kept (each file once; a tick or overflow as "all")
// and checked after it, so none is lost; and a timeout or abort that arrives during a check
// waits for it: a check that found (and perhaps claimed) something ends the wait `done` with it,
// so a caller never loses a claim its check made. A synchronous check runs as before, at once.
// Once the wait is under way, a check that fails for a reason that passes (an A2AError with
// data.transient: a database connection lost or not yet back) counts as "not yet": the next
// event or tick looks again (a database waker's reconnect is one). The first check's failure
// still ends the wait: a store that cannot be reached at all is said at once.
export function waitUntil<T>(
  store: Store,
  channel: Channel,
  check: (key: string | undefined) => T | undefined | Promise<T | undefined>,
  opts: WaitUntilOptions = {},
): Promise<Outcome<T | undefined>> {
  return new Promise<Outcome<T | undefined>>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let recheck: ReturnType<typeof setInterval> | undefined;
    let unsubscribe = () => {};
    let over = false; // events already queued must not run the check after the end
    let busy = false; // an asynchronous check is running
    let stopping: "timeout" | "aborted" | undefined; // asked to end while it was
    const queued = new Set<string | undefined>(); // what came in meanwhile (undefined: everything)
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
    const fail = (err: unknown) => {
      end();
      reject(err);
    };
    const stop = (kind: "timeout" | "aborted") => {
      if (busy) stopping ??= kind;
      else finish(ended(kind, undefined, []));
    };
    const onAbort = () => stop("aborted");
    const settled = (v: T | undefined) => {
      busy = false;
      if (over) return;
      if (v !== undefined) return finish(done(v));
      if (stopping) return finish(ended(stopping, undefined, []));
      if (!queued.size) return;
      const next = queued.has(undefined) ? undefined : queued.values().next().value;
      if (next === undefined) queued.clear();
      else queued.delete(next);
      run(next);
    };
    const run = (file: string | undefined) => {
      if (over) return;
      if (busy) return void queued.add(file);
      let v;
      try {
        v = check(file);
      } catch (err) {
        return fail(err);
      }
      if (!(v instanceof Promise)) return void (v !== undefined && finish(done(v)));
      busy = true;
      v.then(settled, (err) => (passing(err) ? settled(undefined) : fail(err)));
    };
    // The stops are armed before the first check, so a timeout or abort during it counts.
    if (opts.signal?.aborted) return resolve(ended("aborted", undefined, []));
    opts.signal?.addEventListener("abort", onAbort);
    // Beyond setTimeout's 24.8-day range a limit is as good as none.
    if (opts.timeoutMs !== undefined && opts.timeoutMs < 2 ** 31) {
      timer = setTimeout(() => stop("timeout"), Math.max(0, opts.timeoutMs));
    }
    // After the first check: subscribe, then check again (steps 1 and 2 of the header).
    const subscribeAndRecheck = () => {
      if (over) return;
      try {
        unsubscribe = watchChannel(store, channel, run);
      } catch (err) {
        return fail(err); // the channel cannot be watched (e.g. the store refuses its directory)
      }
      if (opts.recheckMs) recheck = setInterval(() => run(undefined), opts.recheckMs);
      run(undefined);
    };
    let first;
    try {
      first = check(undefined);
    } catch (err) {
      return fail(err);
    }
    if (!(first instanceof Promise)) {
      if (first !== undefined) return finish(done(first));
      return subscribeAndRecheck();
    }
    busy = true;
    first.then((v) => {
      busy = false;
      if (over) return;
      if (v !== undefined) return finish(done(v));
      if (stopping) return finish(ended(stopping, undefined, []));
      subscribeAndRecheck();
    }, fail);
  });
}

const passing = (err: unknown): boolean => err instanceof A2AError && err.data.transient === true;

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
