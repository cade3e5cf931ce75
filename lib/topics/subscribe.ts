// Topic subscriptions: every subscriber sees every message of every matching topic once, in
// order per topic (the log itself is log.ts). Patterns are NATS-style: dot-separated
// words, `*` matches exactly one word, `>` (last only) matches one or more trailing words.
//
//   ROOT/subs/NAME/@subscriber.json  {"a2a":1,"name":NAME,"created_at":T}   a named (durable) subscriber
//   ROOT/subs/NAME/TOPIC             "N\n": the last message id of TOPIC written out for NAME
// ("@" cannot occur in a topic, so the record never collides with a cursor, nor NAME with NAME.json.)
//
// Where a subscriber starts in a topic it has no cursor for: at the first message published
// at or after its start (created_at for a named one, the process start for an anonymous one),
// or at 1 with `fromStart`. So a topic that appears later is read from its first message.
// Steps per message: write it out (onMessage), then, for a named subscriber, replace the
// cursor file (lib/core/atomic.ts). A stop by signal or timeout falls between messages, so a
// restart resumes with no loss and no duplicate; a kill -9 between the two steps repeats
// that one message. One named subscriber is one reader: two processes with the same name
// both see everything (use an inbox to share work).
// Following: one watch on topics/ finds new topics, one per matching topic finds messages.

import { writeAtomic } from "../core/atomic";
import { type Store } from "../core/config";
import { ensureDir } from "../core/guard";
import { A2AError } from "../core/errors";
import { entries, readBounded, readJsonLine } from "../core/fs";
import { ended, done, type Outcome } from "../core/outcome";
import { checkAgent, cursorFile, subsDir, subscriberDir, subscriberFile, topicsDir } from "../core/paths";
import { nowSec } from "../core/time";
import { waitUntil, watchChannel, type WaitOptions } from "../core/watch";
import { lastIdBefore, readTopic, topicIds, type TopicMessage } from "./log";

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

// Topics on disk that match `pattern`, sorted.
export function matchingTopics(store: Store, pattern: string): string[] {
  return entries(store, topicsDir(store)).filter((t) => isTopicName(t) && matchTopic(pattern, t)).sort();
}

// The named subscriber's start time, creating its record on first use.
function subscriberSince(store: Store, name: string): number {
  const meta = subscriberFile(store, name);
  const r = readJsonLine(store, meta, (v) => (typeof v.created_at === "number" ? (v.created_at as number) : undefined));
  if (r.kind === "ok") return r.value;
  const created_at = nowSec(); // first use (or a damaged record: starting afresh loses nothing old)
  ensureDir(store, subscriberDir(store, name));
  writeAtomic(store, meta, JSON.stringify({ a2a: 1, name, created_at }) + "\n");
  return created_at;
}

function readCursor(store: Store, name: string, topic: string): number | undefined {
  const r = readBounded(store, cursorFile(store, name, topic), 64);
  if (r.kind !== "ok") return undefined;
  const n = Number(r.bytes.toString("utf8").trim());
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

export interface SubscribeOptions extends WaitOptions {
  name?: string; // durable subscriber name (cursor kept on disk); anonymous when absent
  follow?: boolean; // keep delivering until the timeout or abort
  fromStart?: boolean; // topics without a cursor start at their first message
  max?: number; // without follow: deliver at most this many (the rest stay for the next call)
}

// Delivers every message of topics matching `pattern` that this subscriber has not seen, to
// `onMessage`, in order per topic; with `follow`, keeps doing so as messages arrive, until the
// timeout or abort. The value is the number delivered; without `follow` the outcome is done.
// If onMessage throws, the cursor stays before that message.
export async function subscribeTopics(
  store: Store,
  pattern: string,
  opts: SubscribeOptions,
  onMessage: (m: TopicMessage) => void,
): Promise<Outcome<number>> {
  checkPattern(pattern);
  const name = opts.name === undefined ? undefined : checkAgent(opts.name, "subscriber name");
  const since = name ? subscriberSince(store, name) : nowSec();
  const cursors = new Map<string, number>();
  let delivered = 0;
  const drain = (topic: string) => {
    if (!cursors.has(topic)) {
      const saved = name ? readCursor(store, name, topic) : undefined;
      cursors.set(topic, saved ?? (opts.fromStart ? 0 : lastIdBefore(store, topic, since)));
    }
    const room = opts.follow || opts.max === undefined ? Infinity : opts.max - delivered;
    for (const m of readTopic(store, topic, cursors.get(topic)!, Math.max(0, room))) {
      onMessage(m);
      cursors.set(topic, m.id);
      delivered++;
      if (name) writeAtomic(store, cursorFile(store, name, topic), `${m.id}\n`);
    }
  };
  if (name) ensureDir(store, subscriberDir(store, name));
  if (!opts.follow) {
    for (const t of matchingTopics(store, pattern)) drain(t);
    return done(delivered);
  }
  ensureDir(store, topicsDir(store));
  // A failure inside a topic's watch callback (e.g. stdout closed) ends the whole follow.
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  opts.signal?.addEventListener("abort", onAbort);
  if (opts.signal?.aborted) stop.abort();
  let failure: unknown;
  const guarded = (topic: string) => {
    if (stop.signal.aborted) return;
    try {
      drain(topic);
    } catch (err) {
      failure = err;
      stop.abort();
    }
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
      (topic) => {
        if (topic === undefined) matchingTopics(store, pattern).forEach(add);
        else if (!watched.has(topic) && isTopicName(topic) && matchTopic(pattern, topic)) add(topic);
        return undefined;
      },
      { timeoutMs: opts.timeoutMs, signal: stop.signal },
    );
  } finally {
    for (const off of watched.values()) off();
    opts.signal?.removeEventListener("abort", onAbort);
  }
  if (failure) throw failure;
  // The inner stop also fires on the caller's abort; a follow never ends "done".
  return ended(outcome.kind === "timeout" ? "timeout" : "aborted", delivered, [pattern]);
}

export interface TopicSummary {
  topic: string;
  messages: number; // messages on disk
  last_id: number; // id of the newest (0: none)
  last_at: number | null; // when the newest was sent
  subscribers: { name: string; position: number; unread: number }[]; // named subscribers with a position in it
}

// Every topic on disk (matching `pattern`, default all), with its message count and the named
// subscribers that have read it, each with its position and how many messages it has not
// seen. Anonymous subscribers keep nothing on disk, so they are not known here.
export function listTopics(store: Store, pattern = ">"): TopicSummary[] {
  checkPattern(pattern);
  const subscribers = entries(store, subsDir(store)).filter((n) => !n.startsWith("."));
  return matchingTopics(store, pattern).map((topic) => {
    const ids = topicIds(store, topic);
    const last = ids.at(-1) ?? 0;
    const newest = last ? readTopic(store, topic, last - 1, 1)[0] : undefined;
    const subs = subscribers
      .map((name) => ({ name, position: readCursor(store, name, topic) }))
      .filter((s): s is { name: string; position: number } => s.position !== undefined)
      .map((s) => ({ ...s, unread: Math.max(0, ids.filter((id) => id > s.position).length) }));
    return { topic, messages: ids.length, last_id: last, last_at: newest?.sent_at ?? null, subscribers: subs };
  });
}
