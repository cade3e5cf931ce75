// The one wait primitive, engine-neutral. A waiter waits on a channel (lib/core/channel.ts); the
// store's engine tells it of changes (store.engine.watch: a directory's watches, lib/fs/watch.ts;
// a database's notifications, lib/pg/wake.ts), and each is only a reason to look again.
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

import type { Store } from "./config";
import { A2AError, arg, text } from "./errors";
import { done, ended, type Outcome } from "./outcome";
import type { Channel } from "./channel";

// A change on a channel: the record's key (a directory entry's name, mapped), or undefined (a
// poll tick, a lost event: anything may have changed).
export type Listener = (file: string | undefined) => void;

// Calls `listener` with a key for every change on `channel` (undefined on a poll tick or a
// lost event: anything may have changed) until the returned function is called: the store's
// engine's own waking (a directory's watches below, a database's notifications: lib/pg/wake.ts).
export function watchChannel(store: Store, channel: Channel, listener: Listener): () => void {
  return store.engine.watch(channel, listener);
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
  // The caller has just run the check and it did not hold: start at step 1 (subscribe, then
  // check again), without running it a second time first.
  checked?: boolean;
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
    if (opts.checked) return subscribeAndRecheck();
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
