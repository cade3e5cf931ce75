// What the search room (lib/search/room.ts) needs from an engine: the records whose text matches
// a parsed query (lib/search/query.ts), best first, a page at a time. The rules (the query
// language, who may see which mail, the order of ties, the snippet, the wording of errors)
// are the room's. docs/PROTOCOL.md §20 is the contract.
//
// Invariants every engine keeps:
// - a search sees every record written before it began (an index is caught up first, or there
//   is none to fall behind): a message delivered before the search is found by it;
// - an index is derived: the records stay the truth, no write ever waits for or fails because
//   of it, and a missing or damaged one is rebuilt, never a reason for a search to fail;
// - of mail, only messages in `viewer.agent`'s inbox (unread, claimed or read: never held) and
//   those `viewer.agent` wrote (its name as the sender, written by `viewer.writer`) come back;
//   the room applies the rest of the rule (the policy) to what does;
// - order: by the engine's relevance, best first; ties newest first (by time, then by key, last first:
//   message ids and a topic's posts sort by when they were written).

import type { Store } from "../core/config";
import type { Term } from "./query";

export type Kind = "message" | "topic" | "slot" | "task";
export const KINDS: readonly Kind[] = ["message", "topic", "slot", "task"];

export interface SearchRequest {
  terms: Term[];
  kinds: Kind[];
  from?: string; // the author, exactly
  since?: number; // unix seconds: records at or after it
  viewer: { agent: string; writer: string };
  limit: number;
  offset: number;
}

export interface Hit {
  kind: Kind;
  key: string; // message id; TOPIC#ID; slot name; task id
  author: string | null;
  time: number; // unix seconds
  text: string; // what was searched (the snippet is cut from it)
  // mail only: whose inbox holds it, where, who wrote it as the engine vouches
  agent?: string;
  place?: string;
  user?: string;
}

export interface SearchStorage {
  search(req: SearchRequest): Promise<Hit[]>;
}

export function searchStorage(store: Store): SearchStorage {
  return store.engine.search;
}
