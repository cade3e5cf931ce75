// Broadcast topics: an append-only, numbered log per topic that every reader sees in full.
// It backs `a2a pub/sub` and the MCP agent_send/agent_recv channels. The log is kept by an
// engine (lib/topics/storage.ts: ids dense from 1, never reused, assigned atomically; readers
// never skip past a message they cannot see yet); this room keeps the rules: what a topic name
// and a sender name may be, how large a message may be.
// A message as read carries `user`, who wrote it as the engine vouches (the OS user owning its
// file on the file engine), as mail does: `from` is what the publisher claimed.

import type { Store } from "../core/config";
import { checkSize } from "../core/size";
import { A2AError } from "../core/errors";
import { checkName, NAME_RULE } from "../core/names";
import { topicStorage, type TopicMessage } from "./storage";

export type { TopicMessage } from "./storage";

const TOPIC_RE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;


export function checkTopic(topic: unknown): string {
  if (typeof topic !== "string" || topic.length > 128 || !TOPIC_RE.test(topic)) {
    const shown = typeof topic === "string" ? JSON.stringify(topic.slice(0, 60)) : String(topic);
    throw new A2AError("EUSAGE", `invalid topic ${shown}: topics are dot-separated words (e.g. build.status); ${NAME_RULE}, with no empty word`);
  }
  return topic;
}

// Appends `body` to `topic` and returns the message with its id.
export async function publishTopic(store: Store, topic: string, body: string, from: string): Promise<TopicMessage> {
  checkTopic(topic);
  // The sender is shown to readers: it follows the name rule, so it cannot fake framing lines.
  if (from !== "") checkName(from, "sender name");
  checkSize(store, body, "the message");
  return topicStorage(store).append(topic, from, body);
}

// Messages of `topic` with id > sinceId, oldest first, at most `limit` (numbers removed by
// retention and entries that are no message are passed over; see TopicStorage.read).
export async function readTopic(store: Store, topic: string, sinceId = 0, limit = Infinity): Promise<TopicMessage[]> {
  checkTopic(topic);
  return topicStorage(store).read(topic, sinceId, limit);
}
