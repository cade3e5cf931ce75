// The dashboard's feed (feed.ts's events) for an engine that is not files: the same events,
// found by reading each room's storage rather than by diffing directories. An engine wakes
// only some of them (a message arriving, an inbox or topic appearing, a topic message, a slot
// change); a claim, a read, a held message, presence and the board have no notification of
// their own, so they are looked for again every `recheckMs` (1 s unless set): the dashboard
// shows them that much later.
//
// Invariants (as feed.ts's):
// - reading only; what is there at the start is the baseline, not news;
// - looks run one at a time, in order, so a baseline moves only forward and one change is
//   reported once;
// - a read the store refuses ends the feed with that error, once.

import type { Store } from "../core/config";
import { ended, type Outcome } from "../core/outcome";
import { nowSec } from "../core/time";
import { watchChannel } from "../core/watch";
import { mailStorage, type At } from "../mail/storage";
import { watchSlots } from "../slots/events";
import { topicStorage } from "../topics/storage";
import type { BusEvent, BusOptions, MailKind } from "./feed";
import { cut, PREVIEW_CHARS } from "./rows";
import { TASK_BOARD } from "./tasks";
import { livePeers, trimMessage } from "./view";

const RECHECK_MS = 1_000;
const TOPIC_PAGE = 1_000;

export async function watchStorageFeed(store: Store, on: (e: BusEvent) => void, opts: BusOptions = {}): Promise<Outcome<number>> {
  const board = opts.board ?? TASK_BOARD;
  const mail = mailStorage(store);
  const topics = topicStorage(store);
  let count = 0;
  let over = false;
  let failure: { error: unknown } | undefined;
  const stop = new AbortController();
  const emit = (e: BusEvent) => {
    if (over) return;
    count++;
    on(e);
  };
  // One look at a time; a refusal ends the feed.
  let queue: Promise<void> = Promise.resolve();
  const look = (fn: () => Promise<void>) => {
    queue = queue.then(async () => {
      if (failure || over) return;
      try {
        await fn();
      } catch (error) {
        failure ??= { error };
        stop.abort();
      }
    });
    return queue;
  };
  const subs: (() => void)[] = [];

  // Mail: per agent, the ids each place held last time; what is new is an event.
  const seen = new Map<string, Map<MailKind, Set<string>>>();
  const watchedInboxes = new Set<string>();
  const places: [MailKind, At | "claims"][] = [["sent", "unread"], ["claimed", "claims"], ["read", "read"], ["held", "held"]];
  const lookInbox = async (agent: string, report: boolean) => {
    const now = new Map<MailKind, Set<string>>();
    for (const [kind, at] of places) now.set(kind, new Set(at === "claims" ? (await mail.claims(agent)).map((c) => c.id) : await mail.ids(agent, at as "unread" | "read" | "held")));
    const before = seen.get(agent);
    seen.set(agent, now);
    if (!report) return;
    let changed = !before;
    for (const [kind, at] of places) {
      const was = before?.get(kind) ?? new Set<string>();
      const fresh = [...now.get(kind)!].filter((id) => !was.has(id));
      if (fresh.length || was.size !== now.get(kind)!.size) changed = true;
      const heads = kind === "sent" || kind === "held" ? await mail.heads(agent, fresh.map((id) => ({ id, at: at as At })), PREVIEW_CHARS) : [];
      fresh.forEach((id, i) => {
        const h = heads[i];
        const shown = typeof h === "object" ? { from: h.from, preview: cut(h.body, PREVIEW_CHARS) } : { from: null, preview: "" };
        emit({ area: "mail", kind, agent, id, ...shown, at: nowSec() });
      });
    }
    if (changed) emit({ area: "agent", name: agent });
  };
  const lookInboxes = async (report: boolean) => {
    for (const agent of await mail.agents()) {
      if (!watchedInboxes.has(agent)) {
        watchedInboxes.add(agent);
        subs.push(watchChannel(store, { on: "inbox", agent }, () => void look(() => lookInbox(agent, true))));
      }
      if (report || !seen.has(agent)) await lookInbox(agent, report);
    }
  };

  // Topics: the last id seen per topic; messages after it are events.
  const last = new Map<string, number>();
  const lookTopic = async (topic: string, report: boolean) => {
    if (!last.has(topic)) subs.push(watchChannel(store, { on: "topic", topic }, () => void look(() => lookTopic(topic, true))));
    if (!report) return void last.set(topic, (await topics.counts(topic, [])).last_id);
    for (;;) {
      const page = await topics.read(topic, last.get(topic) ?? 0, TOPIC_PAGE);
      for (const m of page) {
        last.set(topic, m.id);
        emit({ area: "topic", message: trimMessage(m) });
      }
      if (page.length < TOPIC_PAGE) return;
    }
  };
  const lookTopics = async (report: boolean) => {
    for (const t of await topics.topics()) {
      if (!last.has(t) && report) {
        last.set(t, 0); // a topic born after the baseline: all of it is news
        subs.push(watchChannel(store, { on: "topic", topic: t }, () => void look(() => lookTopic(t, true))));
      }
      if (report || !last.has(t)) await lookTopic(t, report);
    }
  };

  // Presence: the live names last time.
  let live = new Set<string>();
  const stateWatched = new Set<string>(); // a live session's state changes re-read its row
  const lookPeers = async (report: boolean) => {
    const now = new Set((await livePeers(store)).map((p) => p.name));
    for (const name of now) {
      if (stateWatched.has(name)) continue;
      stateWatched.add(name);
      subs.push(watchChannel(store, { on: "session", name }, () => emit({ area: "agent", name })));
    }
    const joined = [...now].filter((n) => !live.has(n));
    const left = [...live].filter((n) => !now.has(n));
    live = now;
    if (report && (joined.length || left.length)) emit({ area: "peers", joined, left, at: nowSec() });
  };

  subs.push(watchChannel(store, { on: "topics" }, () => void look(() => lookTopics(true))));
  subs.push(watchChannel(store, { on: "inboxes" }, () => void look(() => lookInboxes(true))));
  let recheck: ReturnType<typeof setInterval> | undefined;
  try {
    await look(async () => {
      await lookInboxes(false);
      await lookTopics(false);
      await lookPeers(false);
    });
    if (failure) throw failure.error;
    recheck = setInterval(() => {
      void look(async () => {
        await lookInboxes(true);
        await lookTopics(true);
        await lookPeers(true);
        if (board.available) emit({ area: "board" });
      });
    }, opts.recheckMs ?? RECHECK_MS);
    const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
    const o = await watchSlots(store, [], (event) => emit({ area: "slot", event }), { ...opts, signal });
    const failed = failure as { error: unknown } | undefined; // a look may have set it meanwhile
    if (failed) throw failed.error;
    return ended(o.kind, count, []);
  } finally {
    over = true;
    if (recheck) clearInterval(recheck);
    for (const off of subs) off();
  }
}
