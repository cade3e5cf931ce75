// The dashboard's feed on a directory (the file engine's `feed`, lib/dashboard/feed.ts): every
// change on the bus as one stream of events (slots, mail, topics, presence, the task board),
// inferred by diffing directory listings, the only way files can say "sent, claimed, read, held".
//
// Invariants:
// - reading only, as lib/dashboard/view.ts: the only writes are the store's own directories made to be
//   watched;
// - every change is seen through lib/fs/watch.ts (`subscribe`, and watchSlots on top of it):
//   subscriptions are made before any baseline is read, so nothing that lands after the
//   baseline is missed; a burst may fold into one event (re-read, not replayed);
// - a read the store refuses ends the feed with that error (never a throw from a watch
//   callback, where nobody can catch it).

import type { Store } from "../core/config";
import { entries } from "./io";
import { ensureDir } from "./guard";
import { ended, type Outcome } from "../core/outcome";
import { claimDir, curDir, heldDir, inboxDir, inboxesDir, isValidName, msgFile, newDir, peersDir, sessionsDir, topicDir, topicsDir } from "./paths";
import { nowSec } from "../core/time";
import { subscribe } from "./watch";
import { idsIn, inboxNames, parseClaim, readMessageFile } from "./mail-record";
import { watchSlots } from "../slots/events";
import { readTopicFiles, topicIds } from "./topics";
import type { BusEvent, BusOptions, MailKind } from "../dashboard/feed";
import { cut, PREVIEW_CHARS } from "../dashboard/rows";
import { TASK_BOARD } from "../dashboard/tasks";
import { isTopic, livePeers, trimMessage } from "../dashboard/view";

const MAIL_DIRS: [MailKind, (s: Store, a: string) => string][] = [
  ["sent", newDir],
  ["claimed", claimDir],
  ["read", curDir],
  ["held", heldDir],
];

// Calls `on` for every change on the bus until the signal aborts or the time runs out (it never
// ends "done"; the value is the number of events). What is there at the start is not reported.
// A read the store refuses (a directory swapped for a link) ends it: it rejects with that
// error, once, rather than throwing from a watch callback where nobody can catch it.
export async function watchDirFeed(store: Store, on: (e: BusEvent) => void, opts: BusOptions = {}): Promise<Outcome<number>> {
  const board = opts.board ?? TASK_BOARD;
  let count = 0;
  const emit = (e: BusEvent) => {
    count++;
    on(e);
  };
  const stop = new AbortController();
  let failure: { error: unknown } | undefined;
  const guarded =
    <A extends unknown[]>(fn: (...a: A) => void) =>
    (...a: A) => {
      if (failure) return;
      try {
        fn(...a);
      } catch (error) {
        failure = { error };
        stop.abort();
      }
    };
  const subs = new Map<string, () => void>();
  const watchDir = (dir: string, fn: (file: string | undefined) => void) => {
    if (subs.has(dir)) return;
    try {
      subs.set(dir, subscribe(store, dir, guarded(fn)));
    } catch {
      // not there (yet): its parent's event brings it
    }
  };
  for (const d of [inboxesDir(store), topicsDir(store), peersDir(store), sessionsDir(store)]) ensureDir(store, d);

  // Mail: per agent, which ids each directory held last time; what is new is an event.
  const seen = new Map<string, Map<MailKind, Set<string>>>();
  const mailIds = (agent: string, kind: MailKind): Set<string> => {
    const dir = MAIL_DIRS.find(([k]) => k === kind)![1](store, agent);
    return new Set(kind === "claimed" ? entries(store, dir).map((f) => parseClaim(f)?.id).filter((i): i is string => !!i) : idsIn(store, dir));
  };
  const lookInbox = (agent: string, report: boolean) => {
    for (const [, dirOf] of MAIL_DIRS) watchDir(dirOf(store, agent), () => lookInbox(agent, true));
    const before = seen.get(agent);
    const now = new Map(MAIL_DIRS.map(([k]) => [k, mailIds(agent, k)] as const));
    seen.set(agent, now);
    if (!report) return;
    let changed = !before;
    for (const [kind] of MAIL_DIRS) {
      const was = before?.get(kind) ?? new Set<string>();
      for (const id of now.get(kind)!) {
        if (was.has(id)) continue;
        changed = true;
        let from: string | null = null;
        let preview = "";
        if (kind === "sent" || kind === "held") {
          const m = readMessageFile(store, msgFile(kind === "sent" ? newDir(store, agent) : heldDir(store, agent), id), id);
          if (typeof m === "object") {
            from = m.from;
            preview = cut(m.body, PREVIEW_CHARS);
          }
        }
        emit({ area: "mail", kind, agent, id, from, preview, at: nowSec() });
      }
      if (was.size !== now.get(kind)!.size) changed = true;
    }
    if (changed) emit({ area: "agent", name: agent });
  };
  const lookInboxes = (report: boolean) => {
    for (const a of inboxNames(store)) {
      watchDir(inboxDir(store, a), () => lookInbox(a, true));
      if (report || !seen.has(a)) lookInbox(a, report);
    }
  };

  // Topics: the last id seen per topic; messages after it are events.
  const last = new Map<string, number>();
  const lookTopic = (topic: string, report: boolean) => {
    watchDir(topicDir(store, topic), () => lookTopic(topic, true));
    if (!report) return void last.set(topic, topicIds(store, topic).at(-1) ?? 0);
    for (const m of readTopicFiles(store, topic, last.get(topic) ?? 0)) {
      last.set(topic, m.id);
      emit({ area: "topic", message: trimMessage(m) });
    }
  };
  const lookTopics = (report: boolean) => {
    for (const t of entries(store, topicsDir(store)).filter(isTopic)) {
      if (!last.has(t) && report) last.set(t, 0); // a topic born after the baseline: all of it is news
      if (report || !last.has(t)) lookTopic(t, report);
    }
  };

  // Presence: the live names last time. Presence is read asynchronously (lib/presence/storage.ts):
  // one look at a time, in order, so `live` moves only forward; a refusal ends the feed as above.
  let live = new Set<string>();
  let looking: Promise<void> = Promise.resolve();
  let over = false; // the feed has ended: a look still in flight reports nothing
  const lookPeers = (report: boolean) => {
    looking = looking.then(async () => {
      if (failure) return;
      try {
        const now = new Set((await livePeers(store)).map((p) => p.name));
        if (over) return;
        const joined = [...now].filter((n) => !live.has(n));
        const left = [...live].filter((n) => !now.has(n));
        live = now;
        if (report && (joined.length || left.length)) emit({ area: "peers", joined, left, at: nowSec() });
      } catch (error) {
        failure ??= { error };
        stop.abort();
      }
    });
    return looking;
  };

  watchDir(inboxesDir(store), () => lookInboxes(true));
  watchDir(topicsDir(store), () => lookTopics(true));
  watchDir(peersDir(store), () => lookPeers(true));
  // A session's state (its session record) changed: its row is read again.
  watchDir(sessionsDir(store), (file) => {
    const name = file?.endsWith(".json") ? file.slice(0, -5) : undefined;
    if (name && isValidName(name)) emit({ area: "agent", name });
  });
  for (const d of await board.dirs(store)) watchDir(d, () => emit({ area: "board" }));
  let recheck: ReturnType<typeof setInterval> | undefined;
  try {
    // Baselines, after every subscription above (a refusal here also unsubscribes them all).
    lookInboxes(false);
    lookTopics(false);
    await lookPeers(false); // a refusal aborts the feed: watchSlots below ends at once, and it is thrown
    if (opts.recheckMs) {
      recheck = setInterval(
        guarded(() => {
          lookPeers(true);
          if (board.available) emit({ area: "board" });
        }),
        opts.recheckMs,
      );
    }
    const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
    const o = await watchSlots(store, [], (event) => emit({ area: "slot", event }), { ...opts, signal });
    if (failure) throw failure.error;
    return ended(o.kind, count, []);
  } finally {
    over = true;
    if (recheck) clearInterval(recheck);
    for (const off of subs.values()) off();
  }
}
