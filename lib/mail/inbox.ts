// What is in an inbox: unread counts, the listing, and acknowledging (marking read without
// showing). The tree is in lib/core/paths.ts, the record in message.ts.

import type { Store } from "../core/config";
import { A2AError, op, text } from "../core/errors";
import { checkAgent, curDir, heldDir, msgFile, newDir } from "../core/paths";
import { listClaims } from "./claim";
import { checkMessageId, countIds, ensureInbox, idsIn, moveMessage, readMessageFile, type ReceivedMessage } from "./message";
import { accepts, readPolicy, refusal } from "./policy";

// Unread messages waiting for `agent`: in new/ or claimed but not yet shown (`claims` false:
// in new/ only, i.e. not being read by anyone right now).
export function unreadCount(store: Store, agent: string, claims = true): number {
  return countIds(store, newDir(store, agent)) + (claims ? listClaims(store, agent).length : 0);
}

export interface AckResult {
  acked: string[];
  already: string[]; // were read before
  missing: string[];
}

// Marks messages read, wherever they are (unread, claimed, held).
export function ack(store: Store, agent: string, ids: string[]): AckResult {
  checkAgent(agent);
  if (!ids.length) throw new A2AError("EUSAGE", text`no message id given: name the ids to mark read (${op("inbox")} lists them)`);
  ids.forEach((id) => checkMessageId(id));
  ensureInbox(store, agent, true);
  const r: AckResult = { acked: [], already: [], missing: [] };
  const cur = (id: string) => msgFile(curDir(store, agent), id);
  const moved = (from: string, id: string) => moveMessage(store, from, cur(id), `marking message ${id} read`); // false: try the next place
  for (const id of ids) {
    const sources = [msgFile(newDir(store, agent), id), ...listClaims(store, agent).filter((c) => c.id === id).map((c) => c.path), msgFile(heldDir(store, agent), id)];
    if (sources.some((p) => moved(p, id))) r.acked.push(id);
    else if (typeof readMessageFile(store, cur(id), id, "read") === "object") r.already.push(id);
    else r.missing.push(id);
  }
  return r;
}

export interface InboxListing {
  agent: string;
  unread: ReceivedMessage[]; // oldest first (claimed ones included)
  read: ReceivedMessage[]; // newest first
  held: ReceivedMessage[]; // oldest first
  counts: { unread: number; read: number; held: number };
}

// What is in `agent`'s inbox: unread (at most `limit`), the `limit` most recent read, and held.
export function listInbox(store: Store, agent: string, limit = 50): InboxListing {
  checkAgent(agent);
  const policy = readPolicy(store, agent);
  const read = (dir: string, ids: string[], state: ReceivedMessage["state"]) =>
    ids.map((id) => readMessageFile(store, msgFile(dir, id), id, state)).filter((m): m is ReceivedMessage => typeof m === "object");
  const fresh = read(newDir(store, agent), idsIn(store, newDir(store, agent)), "unread");
  const claimed = listClaims(store, agent)
    .map((c) => readMessageFile(store, c.path, c.id, "claimed"))
    .filter((m): m is ReceivedMessage => typeof m === "object");
  const unread = [...fresh, ...claimed].filter((m) => accepts(policy, m.from, m.user)).sort((a, b) => (a.id < b.id ? -1 : 1));
  const withReason = (m: ReceivedMessage): ReceivedMessage => ({ ...m, state: "held", held_reason: refusal(policy, m.from, m.user) ?? "held earlier; a2a allow releases it" });
  const held = [
    ...read(heldDir(store, agent), idsIn(store, heldDir(store, agent)), "held"),
    ...fresh.filter((m) => !accepts(policy, m.from, m.user)),
  ].map(withReason);
  const curIds = idsIn(store, curDir(store, agent));
  return {
    agent,
    unread: unread.slice(0, limit),
    read: read(curDir(store, agent), curIds.slice(-limit).reverse(), "read"),
    held: held.slice(0, limit),
    counts: { unread: unread.length, read: curIds.length, held: held.length },
  };
}
