// The file engine's waking (its Engine `watch`, lib/fs/engine.ts): a channel (lib/core/channel.ts)
// mapped to a directory of the tree, at most one directory watch per directory (shared by every
// waiter on it, kept in the Store object, not in module state), and on a network filesystem,
// where a watch never sees other machines' writes, polling as well. lib/core/watch.ts's
// waitUntil is the wait that runs on it.
//
// Events come from lib/fs/inotify.ts on Linux (one inotify instance per Store, read by
// Bun's event loop), from fs.watch where that is not to be had, and from poll ticks where
// neither is (or on a network filesystem, as well).
//
// Watches are closed only by closeWatches(store): an idle directory watch costs nothing.
// The CLI closes them after it has written its output and closed stdout (inotify.ts says
// why its fd is let go of a while after that).

import { watch, type FSWatcher } from "node:fs";
import type { Store } from "../core/config";
import { openInotify } from "./inotify";
import type { Channel } from "../core/channel";
import { ensureDir } from "./guard";
import { idOfFile, inboxesDir, keysDir, leaseDir, newDir, reservationFileName, reservationsDir, openDir, sessionsDir, slotNameOf, slotsDir, taskDir, topicDir, topicsDir } from "./paths";
import type { Listener } from "../core/watch";

export interface DirWatch {
  listeners: Set<Listener>;
  wd?: number; // its watch on the store's inotify instance
  watcher?: FSWatcher; // or its fs.watch
  polled?: () => void; // stops its ticks (see ticking)
}

// Every polled directory of a store ticks on one timer (store.ticker), each tick telling them
// all in one turn of the event loop. A timer per directory ticked each at its own phase: a wait
// on the slots could end on their tick before the inbox's tick told of mail that came before
// the publish, and an unread count kept between ticks (a2a mcp's note) then missed it.
function ticking(store: Store, tick: () => void): () => void {
  const t = (store.ticker ??= { timer: setInterval(() => [...t.ticks].forEach((f) => f()), store.pollMs), ticks: new Set() });
  t.ticks.add(tick);
  return () => {
    t.ticks.delete(tick);
    if (!t.ticks.size && store.ticker === t) {
      clearInterval(t.timer);
      store.ticker = undefined;
    }
  };
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
  // Over a copy, as a listener may add or remove listeners; one alone (every wake of a single
  // waiter) is called without making one.
  const fire = (file: string | undefined) => {
    if (w.listeners.size === 1) for (const l of w.listeners) return l(file);
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
      w.polled?.();
      w.polled = undefined;
    }
    fire(undefined);
  };
  const poll = () => (w.polled ??= ticking(store, tick));
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
    case "slots": {
      // One directory holds every slot: with `names`, another slot's change is no event at all.
      const only = ch.names && new Set(ch.names);
      const key = only ? (f: string) => { const n = slotNameOf(f); return n !== undefined && only.has(n) ? n : undefined; } : slotNameOf;
      return { dir: slotsDir(store), key, make: true };
    }
    case "slot-names": // a directory says only that an entry changed: every slot change
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

// Releases every watch and poll timer this store opened (call once waiting is over).
export function closeWatches(store: Store): void {
  const watches = store.watches;
  for (const w of watches.values()) {
    w.watcher?.close();
    w.polled?.();
  }
  watches.clear();
  store.inotify?.close();
  store.inotify = undefined;
}
