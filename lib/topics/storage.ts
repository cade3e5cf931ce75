// What the topic rules (log.ts, subscribe.ts) need from an engine: per topic, an append-only log
// of messages numbered densely from 1; per named subscriber, a record of when it was made and
// its position (cursor) in each topic. The rules (topic and pattern names, who may be named as
// sender, message size, where a subscriber starts, when its cursor moves, following) are the
// room's; an engine numbers, keeps and reads. docs/ENGINE.md has the design, docs/PROTOCOL.md
// the contract, docs/FILE-ENGINE.md the file engine's layout.
//
// Invariants every engine keeps:
// - `append` assigns the id atomically: ids are dense from 1 and never reused, across processes;
//   a number is taken only after every smaller one was taken, and sent_at does not go back
//   with the id;
// - messages are immutable; the only gaps a reader ever passes are numbers removed by retention
//   (or by their author) and numbers holding something that is not a message;
// - `read` never skips past a message not yet visible to it: having read up to N, nothing
//   below N can still appear to that reader;
// - `user` is who wrote the message as the engine vouches for it (the OS user owning the file,
//   the database role), never a value the writer put in the message's text.

import type { Store } from "../core/config";

export interface TopicMessage {
  a2a: 1;
  topic: string;
  id: number;
  from: string; // the name the publisher claimed; "" when it gave none
  body: string;
  sent_at: number;
  user: string; // who wrote it, as the engine vouches: never written into the message, never read from its text
}

// A topic as listTopics shows it.
export interface TopicCounts {
  messages: number; // messages kept
  last_id: number; // id of the newest (0: none)
  last_at: number | null; // when the newest was sent
  unread: number[]; // for each id asked about, how many kept messages have an id above it
}

export interface TopicStorage {
  // Appends a message (from, body) to `topic`, making the topic on first use; the engine
  // stamps the next id, sent_at and user, and returns the message as a reader will see it.
  append(topic: string, from: string, body: string): Promise<TopicMessage>;
  // Messages of `topic` with id > afterId, in id order, at most `limit`; passes over numbers
  // removed and entries that are no message, and stops before a number not yet visible.
  read(topic: string, afterId: number, limit: number): Promise<TopicMessage[]>;
  // Every topic name kept, in no particular order; the room filters out names that are not topic names (an
  // engine that cannot refuse them, as a directory cannot, may list them).
  topics(): Promise<string[]>;
  // The id of the last message of `topic` sent before unix time `sec` (0 if none).
  lastBefore(topic: string, sec: number): Promise<number>;
  // Counts for listTopics: see TopicCounts; `after` lists positions to count unread above.
  counts(topic: string, after: number[]): Promise<TopicCounts>;
  // The named subscriber's creation time, recording it now on first use (or over a damaged
  // record: starting afresh loses nothing old). Of two first uses at once, either time may stay.
  subscriber(name: string): Promise<number>;
  // Every named subscriber with a record or a cursor, in no particular order.
  subscribers(): Promise<string[]>;
  // The subscriber's position in `topic` (the last id it took), undefined when it has none.
  cursor(name: string, topic: string): Promise<number | undefined>;
  // Replaces the subscriber's position in `topic`, atomically (a reader sees the old or the new).
  setCursor(name: string, topic: string, id: number): Promise<void>;
  // For a2a export and import (lib/move/): message `m` written under its own id and time, where
  // that number of its topic holds nothing (the topic made on first use; its numbering goes on
  // after the highest id kept). False when the number is taken: nothing written.
  restore(m: Omit<TopicMessage, "user">): Promise<boolean>;
  // The named subscriber as kept, read only (nothing is recorded): its creation time (undefined:
  // no record) and its positions, one per topic.
  subscription(name: string): Promise<{ created_at: number | undefined; cursors: { topic: string; id: number }[] }>;
  // Records the subscriber's creation time `at` where it has no record; false when it has one.
  restoreSubscriber(name: string, at: number): Promise<boolean>;
}

// The store's topic storage, as its engine keeps it (lib/engine/engine.ts).
export function topicStorage(store: Store): TopicStorage {
  return store.engine.topics;
}
