// The file engine's topic storage (lib/topics/storage.ts): an append-only, numbered log per
// topic that every reader sees in full, and the named subscribers' records and cursors.
// docs/FILE-ENGINE.md is the layout, step by step.
//
//   ROOT/topics/TOPIC/NNNNNNNNNNNN.json   message number N (12 digits, from 1), immutable
//   ROOT/subs/NAME/@subscriber.json  {"a2a":1,"name":NAME,"created_at":T}   a named (durable) subscriber
//   ROOT/subs/NAME/TOPIC             "N\n": the last message id of TOPIC written out for NAME
// ("@" cannot occur in a topic, so the record never collides with a cursor, nor NAME with NAME.json.)
//
// Numbering needs no lock: a publisher lists the directory, takes the highest message's id + 1
// (foreign entries passed over), and creates that
// file with link() (lib/fs/atomic.ts createAtomic), which fails with EEXIST if another publisher
// got there first; it then tries the next number. A number is only ever taken after every
// smaller one exists, so the ids a reader sees are dense: having read up to N, nothing below
// N can still appear. Files are never rewritten, so even a caching network filesystem cannot
// show a torn one (a file that fails its checks is treated as not there yet).
// A message as read carries `user`, the OS user owning its file, as mail does: `from` is what
// the publisher claimed, the owner is what the filesystem vouches for. In a shared store the
// topics and topics/ itself are sticky, so no member renames or removes another's messages
// (the member who made a topic's directory can, as the owner of any sticky directory can).
// A cursor file is replaced atomically (lib/fs/atomic.ts), read bounded.
//
// The dashboard's feed and gc use the synchronous functions below directly (file-engine-only).

import { lstatSync } from "node:fs";
import { createAtomic, writeAtomic } from "./atomic";
import { listingMayLag } from "./chain";
import type { Store } from "../core/config";
import { A2AError } from "../core/errors";
import { entries, lstatIf, readBounded, readJsonLine } from "./io";
import { fitRecord } from "../core/record";
import { ensureDir, myUid, removeFile } from "./guard";
import { userName } from "./owner";
import { cursorFile, subsDir, subscriberDir, subscriberFile, topicDir, topicIdOf, topicMessageFile, topicsDir } from "./paths";
import { nowSec } from "../core/time";
import { decodeUtf8 } from "../core/utf8";
import type { TopicMessage, TopicStorage } from "../topics/storage";

export function fileTopics(store: Store): TopicStorage {
  return {
    append: async (topic, from, body) => appendTopic(store, topic, from, body),
    read: async (topic, afterId, limit) => readTopicFiles(store, topic, afterId, limit),
    topics: async () => entries(store, topicsDir(store)),
    lastBefore: async (topic, sec) => lastIdBefore(store, topic, sec),
    counts: async (topic, after) => {
      const ids = topicIds(store, topic);
      const last = ids.at(-1) ?? 0;
      const newest = last ? readTopicFiles(store, topic, last - 1, 1)[0] : undefined;
      return {
        messages: ids.length,
        last_id: last,
        last_at: newest?.sent_at ?? null,
        unread: after.map((position) => ids.filter((id) => id > position).length),
      };
    },
    subscriber: async (name) => subscriberSince(store, name),
    subscribers: async () => entries(store, subsDir(store)),
    cursor: async (name, topic) => readCursor(store, name, topic),
    setCursor: async (name, topic, id) => writeAtomic(store, cursorFile(store, name, topic), `${id}\n`),
    restore: async (m) => {
      ensureDir(store, topicDir(store, m.topic), "sticky");
      const { a2a, topic, id, from, body, sent_at } = m;
      return createAtomic(store, topicMessageFile(store, topic, id), fitRecord(store, JSON.stringify({ a2a, topic, id, from, body, sent_at }) + "\n", "the topic message"));
    },
    subscription: async (name) => {
      const r = readJsonLine(store, subscriberFile(store, name), (v) => (typeof v.created_at === "number" ? (v.created_at as number) : undefined));
      const cursors: { topic: string; id: number }[] = [];
      for (const topic of entries(store, subscriberDir(store, name))) {
        const id = topic.startsWith("@") ? undefined : readCursor(store, name, topic);
        if (id !== undefined) cursors.push({ topic, id });
      }
      return { created_at: r.kind === "ok" ? r.value : undefined, cursors };
    },
    restoreSubscriber: async (name, at) => {
      ensureDir(store, subscriberDir(store, name));
      return createAtomic(store, subscriberFile(store, name), JSON.stringify({ a2a: 1, name, created_at: at }) + "\n");
    },
  };
}

// Message ids present in the topic directory, ascending.
export function topicIds(store: Store, topic: string): number[] {
  return entries(store, topicDir(store, topic))
    .map(topicIdOf)
    .filter((n): n is number => n !== undefined)
    .sort((a, b) => a - b);
}

// Removes the messages of `topic` written more than `keepSec` ago (by their mtime, the
// filesystem's clock), oldest first, but never its newest message: publishers number the next
// message after it, and a topic numbered from 1 again would hide its new messages from every
// subscriber whose position is past them. Readers pass over the numbers removed (a missing
// number below a listed message was removed). A message another member wrote, in a shared
// store's sticky topic, is not ours to remove: it is passed over. Returns how many went.
export function trimTopic(store: Store, topic: string, keepSec: number, nowMs = Date.now()): number {
  const ids = topicIds(store, topic);
  let removed = 0;
  for (const id of ids.slice(0, -1)) {
    const path = topicMessageFile(store, topic, id);
    const st = lstatIf(path, true);
    if (!st?.isFile()) continue; // a foreign entry: not a message a2a wrote
    if (nowMs - st.mtimeMs <= keepSec * 1000) break; // numbered in publishing order: the rest are newer
    try {
      if (removeFile(store, path)) removed++;
    } catch (err) {
      if (!(err instanceof A2AError && (err.data.errno === "EPERM" || err.data.errno === "EACCES"))) throw err;
    }
  }
  return removed;
}

// Appends `body` to `topic` and returns the message with its id.
function appendTopic(store: Store, topic: string, from: string, body: string): TopicMessage {
  ensureDir(store, topicDir(store, topic), "sticky"); // shared: nobody removes another's message
  let id = lastMessageId(store, topic) + 1;
  for (;;) {
    const msg = { a2a: 1 as const, topic, id, from, body, sent_at: nowSec() };
    if (createAtomic(store, topicMessageFile(store, topic, id), fitRecord(store, JSON.stringify(msg) + "\n", "the topic message"))) return { ...msg, user: userName(store, myUid()) };
    id++; // another publisher took this number: the next one is free or will be soon
  }
}

// The highest id holding a message, foreign entries passed over: a publisher starts at the
// number after it. Starting after the highest *entry* would let a foreign file planted ahead
// of the log (id N + 2 when N is the last message) leave a gap at N + 1 that no publisher ever
// fills, and every reader stops at a gap: all later messages would be lost to them. Numbers
// in between that a foreign entry holds are skipped by the publisher (EEXIST) and by readers.
function lastMessageId(store: Store, topic: string): number {
  const ids = topicIds(store, topic);
  for (let i = ids.length - 1; i >= 0; i--) if (typeof readMessage(store, topic, ids[i]) === "object") return ids[i];
  return 0;
}

// Message `id` of `topic`; "foreign" when something that is not a message sits under its
// number (a FIFO, link, directory, garbage: files are created whole by link and never
// rewritten, so an invalid one is not a torn read); undefined when there is nothing there (yet).
function readMessage(store: Store, topic: string, id: number): TopicMessage | "foreign" | undefined {
  const r = readJsonLine(store, topicMessageFile(store, topic, id), (m) =>
    m.a2a === 1 && m.id === id && typeof m.body === "string" ? (m as TopicMessage) : undefined,
  );
  return r.kind === "ok" ? { ...r.value, user: userName(store, r.uid) } : r.kind === "invalid" ? "foreign" : undefined;
}

// Messages of `topic` with id > sinceId, oldest first, at most `limit`. Reads by number from
// sinceId + 1, passes over foreign entries, and stops at the first one missing, so a reader never skips past
// a message it could not yet see (a directory listing taken during a publish can miss a
// file whose successor it shows). It jumps ahead only past numbers removed by retention: when
// the oldest id on disk is above sinceId + 1 and sinceId + 1 itself is not there; and past a
// number removed from the middle (its author may delete its own file even in a sticky topic):
// see removed(). The topic name is the caller's to check.
export function readTopicFiles(store: Store, topic: string, sinceId = 0, limit = Infinity): TopicMessage[] {
  const out: TopicMessage[] = [];
  let next = sinceId + 1;
  const ids = topicIds(store, topic); // listed before any number is read: removed() relies on it
  const oldest = ids[0];
  if (oldest === undefined) return out;
  if (oldest > next && !readMessage(store, topic, next)) next = oldest;
  let later: number | undefined; // a message listed above the gap being passed
  while (out.length < limit) {
    const m = readMessage(store, topic, next);
    if (!m) {
      if (later === undefined || later <= next) later = laterMessage(store, topic, ids, next);
      if (later === undefined || !removed(store, topic, later)) break;
    } else if (m !== "foreign") out.push(m); // a foreign entry is passed over, never delivered
    next++;
  }
  return out;
}

// Lag a network filesystem's lookups may show behind its listings (its attribute caches).
const LISTING_LAG_MS = 60_000;

// The first id above `n` in the listing `ids` that holds a message, or undefined.
function laterMessage(store: Store, topic: string, ids: number[], n: number): number | undefined {
  for (const id of ids) if (id > n && typeof readMessage(store, topic, id) === "object") return id;
  return undefined;
}

// Whether a number found missing below message `later` (listed before the number was read) was
// removed rather than not yet visible. A publisher takes a number only after the one below it
// was linked (listed, or EEXIST), so a message listed above a missing number means that number
// was published before it: on a local filesystem, missing now means removed. A network one's
// lookups may lag behind the listing, so there it is taken as removed only once the later
// message is older than that lag (by its ctime, which no writer can set back).
function removed(store: Store, topic: string, later: number): boolean {
  if (!listingMayLag(store)) return true;
  try {
    return Date.now() - lstatSync(topicMessageFile(store, topic, later)).ctimeMs > LISTING_LAG_MS;
  } catch {
    return false;
  }
}

// The id of the last message of `topic` published before unix time `sec` (0 if none): where a
// subscriber that started at `sec` begins. Walks back from the newest message.
function lastIdBefore(store: Store, topic: string, sec: number): number {
  const ids = topicIds(store, topic);
  for (let i = ids.length - 1; i >= 0; i--) {
    const m = readMessage(store, topic, ids[i]);
    if (typeof m === "object" && m.sent_at < sec) return m.id;
  }
  return 0;
}

// The named subscriber's start time, creating its record on first use.
function subscriberSince(store: Store, name: string): number {
  const meta = subscriberFile(store, name);
  const r = readJsonLine(store, meta, (v) => (typeof v.created_at === "number" ? (v.created_at as number) : undefined));
  ensureDir(store, subscriberDir(store, name)); // its cursors are written here
  if (r.kind === "ok") return r.value;
  const created_at = nowSec(); // first use (or a damaged record: starting afresh loses nothing old)
  writeAtomic(store, meta, JSON.stringify({ a2a: 1, name, created_at }) + "\n");
  return created_at;
}

function readCursor(store: Store, name: string, topic: string): number | undefined {
  const r = readBounded(store, cursorFile(store, name, topic), 64);
  if (r.kind !== "ok") return undefined;
  const n = Number(decodeUtf8(r.bytes).trim());
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}
