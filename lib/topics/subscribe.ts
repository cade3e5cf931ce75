// Topic subscriptions: every subscriber sees every message of every matching topic once, in
// order per topic (the log itself is log.ts, kept by lib/topics/storage.ts). Patterns are
// NATS-style: dot-separated words, `*` matches exactly one word, `>` (last only) matches one or
// more trailing words. A named (durable) subscriber has a record (when it was made) and a
// cursor per topic (the last message id written out for it), both kept by the engine.
//
// Where a subscriber starts in a topic it has no cursor for: at the first message published
// at or after its start (created_at for a named one, the process start for an anonymous one),
// or at 1 with `fromStart`. So a topic that appears later is read from its first message.
// Steps per message: write it out (onMessage), then, for a named subscriber, replace the
// cursor (atomically). A stop by signal or timeout falls between messages, so a
// restart resumes with no loss and no duplicate; a kill -9 between the two steps repeats
// that one message. One named subscriber is one reader: two processes with the same name
// both see everything (use an inbox to share work).
// Following: one watch on topics finds new topics, one per matching topic finds messages.
// A topic is drained by one run at a time (events during a run start one more after it), so
// no message is delivered twice or out of order.

import { type Store } from "../core/config";
import { A2AError } from "../core/errors";
import { ended, done, type Outcome } from "../core/outcome";
import { checkAgent } from "../core/names";
import { nowSec } from "../core/time";
import { waitUntil, watchChannel, type WaitOptions } from "../core/watch";
import { readTopic } from "./log";
import { topicStorage, type TopicMessage, type TopicStorage } from "./storage";

const WORD_RE = /^[A-Za-z0-9_-]+$/;

export function checkPattern(pattern: unknown): string {
  const words = typeof pattern === "string" && pattern.length <= 128 ? pattern.split(".") : [];
  const ok = words.length > 0 && words.every((w, i) => WORD_RE.test(w) || w === "*" || (w === ">" && i === words.length - 1));
  if (!ok) {
    const shown = typeof pattern === "string" ? JSON.stringify(pattern.slice(0, 60)) : String(pattern);
    throw new A2AError("EUSAGE", `invalid topic pattern ${shown}: use dot-separated words, * for any one word, > (last) for the rest, e.g. build.*.status or build.>`);
  }
  return pattern as string;
}

export function matchTopic(pattern: string, topic: string): boolean {
  const p = pattern.split(".");
  const t = topic.split(".");
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">") return t.length > i;
    if (i >= t.length || (p[i] !== "*" && p[i] !== t[i])) return false;
  }
  return p.length === t.length;
}

const isTopicName = (t: string) => t.split(".").every((w) => WORD_RE.test(w));

// Topics kept that match `pattern`, sorted.
async function matchingTopics(storage: TopicStorage, pattern: string): Promise<string[]> {
  return (await storage.topics()).filter((t) => isTopicName(t) && matchTopic(pattern, t)).sort();
}

export interface SubscribeOptions extends WaitOptions {
  name?: string; // durable subscriber name (cursor kept by the engine); anonymous when absent
  follow?: boolean; // keep delivering until the timeout or abort
  fromStart?: boolean; // topics without a cursor start at their first message
  max?: number; // without follow: deliver at most this many (the rest stay for the next call)
}

// Delivers every message of topics matching `pattern` that this subscriber has not seen, to
// `onMessage`, in order per topic; with `follow`, keeps doing so as messages arrive, until the
// timeout or abort. The value is the number delivered; without `follow` the outcome is done.
// If onMessage throws, the cursor stays before that message. No onMessage runs after the
// returned promise settles.
export async function subscribeTopics(
  store: Store,
  pattern: string,
  opts: SubscribeOptions,
  onMessage: (m: TopicMessage) => void,
): Promise<Outcome<number>> {
  checkPattern(pattern);
  const name = opts.name === undefined ? undefined : checkAgent(opts.name, "subscriber name");
  const storage = topicStorage(store);
  const since = name ? await storage.subscriber(name) : nowSec();
  const cursors = new Map<string, number>();
  let delivered = 0;
  let halted = () => false; // a follow that is ending: stop between messages
  const drain = async (topic: string) => {
    if (!cursors.has(topic)) {
      const saved = name ? await storage.cursor(name, topic) : undefined;
      cursors.set(topic, saved ?? (opts.fromStart ? 0 : await storage.lastBefore(topic, since)));
    }
    const room = opts.follow || opts.max === undefined ? Infinity : opts.max - delivered;
    for (const m of await readTopic(store, topic, cursors.get(topic)!, Math.max(0, room))) {
      if (halted()) return;
      onMessage(m);
      cursors.set(topic, m.id);
      delivered++;
      if (name) await storage.setCursor(name, topic, m.id);
    }
  };
  if (!opts.follow) {
    for (const t of await matchingTopics(storage, pattern)) await drain(t);
    return done(delivered);
  }
  // A failure inside a topic's watch callback (e.g. stdout closed) ends the whole follow.
  const stop = new AbortController();
  halted = () => stop.signal.aborted;
  const onAbort = () => stop.abort();
  opts.signal?.addEventListener("abort", onAbort);
  if (opts.signal?.aborted) stop.abort();
  let failure: unknown;
  // One drain per topic at a time: an event during a drain asks for one more after it, so two
  // runs never read from the same cursor (a message twice) or interleave (out of order).
  const running = new Map<string, Promise<void>>();
  const again = new Set<string>();
  const guarded = (topic: string) => {
    if (stop.signal.aborted) return;
    if (running.has(topic)) return void again.add(topic);
    const run = (async () => {
      try {
        do {
          again.delete(topic);
          await drain(topic);
        } while (again.has(topic) && !stop.signal.aborted);
      } catch (err) {
        failure ??= err;
        stop.abort();
      } finally {
        running.delete(topic);
      }
    })();
    running.set(topic, run);
  };
  const watched = new Map<string, () => void>();
  const add = (topic: string) => {
    if (!watched.has(topic)) watched.set(topic, watchChannel(store, { on: "topic", topic }, () => guarded(topic)));
    guarded(topic);
  };
  let outcome: Outcome<true | undefined>;
  try {
    outcome = await waitUntil<true>(
      store,
      { on: "topics" },
      async (topic) => {
        if (topic === undefined) (await matchingTopics(storage, pattern)).forEach(add);
        else if (!watched.has(topic) && isTopicName(topic) && matchTopic(pattern, topic)) add(topic);
        return undefined;
      },
      { timeoutMs: opts.timeoutMs, signal: stop.signal },
    );
  } finally {
    for (const off of watched.values()) off();
    opts.signal?.removeEventListener("abort", onAbort);
    stop.abort(); // the drains still running stop at their next message
    while (running.size) await Promise.all(running.values());
  }
  if (failure) throw failure;
  // The inner stop also fires on the caller's abort; a follow never ends "done".
  return ended(outcome.kind === "timeout" ? "timeout" : "aborted", delivered, [pattern]);
}

export interface TopicSummary {
  topic: string;
  messages: number; // messages kept
  last_id: number; // id of the newest (0: none)
  last_at: number | null; // when the newest was sent
  subscribers: { name: string; position: number; unread: number }[]; // named subscribers with a position in it
}

// Every topic kept (matching `pattern`, default all), with its message count and the named
// subscribers that have read it, each with its position and how many messages it has not
// seen. Anonymous subscribers keep nothing, so they are not known here.
export async function listTopics(store: Store, pattern = ">"): Promise<TopicSummary[]> {
  checkPattern(pattern);
  const storage = topicStorage(store);
  const subscribers = await storage.subscribers();
  const out: TopicSummary[] = [];
  for (const topic of await matchingTopics(storage, pattern)) {
    const read: { name: string; position: number }[] = [];
    for (const name of subscribers) {
      const position = await storage.cursor(name, topic);
      if (position !== undefined) read.push({ name, position });
    }
    const { messages, last_id, last_at, unread } = await storage.counts(topic, read.map((s) => s.position));
    out.push({ topic, messages, last_id, last_at, subscribers: read.map((s, i) => ({ ...s, unread: unread[i] })) });
  }
  return out;
}
