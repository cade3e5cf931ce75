// Direct messages: send, reply, acknowledge, list (reading is lib/receive.ts). The tree and
// the record are in lib/mailbox.ts, the claim protocol in lib/claim.ts, keys in
// lib/idempotency.ts.
//
// How a message is delivered (send):
//   1. validate names, body size (store.maxBytes), reply_to; the recipient's policy must accept
//      the sender (else EDENIED, exit 1); nothing is written before these pass;
//   2. with a key: reserve it (lib/idempotency.ts); a duplicate returns the first id here;
//   3. the recipient's unread count (new/ + claim/) must be below A2A_MAX_UNREAD (else EFULL,
//      exit 1; a fresh key record is removed again);
//   4. write the record to ROOT/tmp/ and rename it to inbox/TO/new/ID.json (lib/atomic.ts;
//      link, i.e. exclusive, when taking over a dead sender's key). At that instant the
//      message is delivered; a sender killed before it leaves only a temp file.
//   5. with a key: mark the key delivered.

import { renameSync } from "node:fs";
import { join } from "node:path";
import { createAtomic, writeAtomic } from "../core/atomic";
import { A2AError, ioError } from "../core/errors";
import { listClaims, recoverClaims } from "./claim";
import { dropKey, markDelivered, reserveKey } from "./keys";
import {
  badDir, checkAgent, checkMessageId, curDir, entries, inboxesDir, encodeMessage, ensureInbox, heldDir, idOfFile, idsIn, msgFile,
  newDir, newMessageId, readMessageFile, type MailSettings, type Message, type ReceivedMessage,
} from "./message";
import { accepts, readPolicy } from "./policy";
import { isValidName } from "../core/paths";
import { nowSec } from "../slots/record";
import { checkSize, type Store } from "../core/config";

export interface SendOptions {
  replyTo?: string;
  key?: string;
}

export interface SendResult {
  id: string;
  from: string;
  to: string;
  sent_at: number;
  size: number;
  duplicate: boolean; // the key was used before: nothing new was delivered
}

export function sendMessage(store: Store, settings: MailSettings, from: string, to: string, body: string, opts: SendOptions = {}): SendResult {
  checkAgent(from, "sender name");
  checkAgent(to, "recipient name");
  const replyTo = opts.replyTo === undefined ? null : checkMessageId(opts.replyTo, "reply-to id");
  if (opts.key !== undefined && (typeof opts.key !== "string" || opts.key.length < 1 || opts.key.length > 256)) {
    throw new A2AError("EUSAGE", "invalid idempotency key: use 1-256 characters, the same on every retry of one message");
  }
  const size = checkSize(store, body, "the message");
  const policy = readPolicy(store, to);
  if (!accepts(policy, from)) {
    throw new A2AError("EDENIED", `${to} does not accept messages from ${from} (policy ${policy.mode}): ask ${to} to run a2a allow ${from} --as ${to}`);
  }
  ensureInbox(store, to);
  let id = newMessageId(store);
  let exclusive = false;
  if (opts.key !== undefined) {
    const r = reserveKey(store, settings, to, from, opts.key, id);
    if (r.kind === "duplicate") return { id: r.id, from, to, sent_at: nowSec(), size, duplicate: true };
    id = r.id;
    exclusive = r.kind === "takeover";
  }
  const unread = unreadCount(store, to);
  if (unread >= settings.maxUnread) {
    if (opts.key !== undefined && !exclusive) dropKey(store, to, from, opts.key);
    throw new A2AError("EFULL", `the inbox of ${to} holds ${unread} unread messages, its limit: wait until ${to} reads some, or raise A2A_MAX_UNREAD`);
  }
  const msg: Message = { a2a: 1, id, from, to, body, size, sent_at: nowSec(), reply_to: replyTo, host: store.host, pid: process.pid };
  const dest = msgFile(newDir(store, to), id);
  // A takeover re-sends the dead sender's id: if another retry took over too and got there
  // first, the link fails and this one is the duplicate.
  if (exclusive) {
    if (!createAtomic(store, dest, encodeMessage(msg))) return { id, from, to, sent_at: msg.sent_at, size, duplicate: true };
  } else writeAtomic(store, dest, encodeMessage(msg));
  if (opts.key !== undefined) markDelivered(store, to, from, opts.key, id);
  return { id, from, to, sent_at: msg.sent_at, size, duplicate: false };
}

// Unread messages waiting for `agent`: in new/ or claimed but not yet shown (`claims` false:
// in new/ only, i.e. not being read by anyone right now).
export function unreadCount(store: Store, agent: string, claims = true): number {
  return idsIn(newDir(store, agent)).length + (claims ? listClaims(store, agent).length : 0);
}

// Returns the claims of dead readers to unread in every inbox (for gc); the number returned.
export function recoverAllClaims(store: Store, settings: MailSettings): number {
  let n = 0;
  for (const agent of entries(inboxesDir(store))) if (isValidName(agent)) n += recoverClaims(store, agent, settings);
  return n;
}

// Answers message `id` of `agent`'s inbox: sends `body` to its sender with reply_to = id, and
// marks the original read (replying to it means it was read).
export function replyTo(store: Store, settings: MailSettings, agent: string, id: string, body: string): SendResult & { original: ReceivedMessage } {
  checkAgent(agent);
  checkMessageId(id);
  const where: [string, ReceivedMessage["state"]][] = [
    [msgFile(newDir(store, agent), id), "unread"],
    ...listClaims(store, agent).filter((c) => c.id === id).map((c) => [c.path, "claimed"] as [string, ReceivedMessage["state"]]),
    [msgFile(curDir(store, agent), id), "read"],
    [msgFile(heldDir(store, agent), id), "held"],
  ];
  let original: ReceivedMessage | undefined;
  for (const [path, state] of where) {
    const m = readMessageFile(store, path, id, state);
    if (typeof m === "object") {
      original = m;
      break;
    }
  }
  if (!original) throw new A2AError("ENOTFOUND", `no message ${id} in the inbox of ${agent}: check the id (check_messages or a2a inbox list them)`);
  const sent = sendMessage(store, settings, agent, original.from, body, { replyTo: id });
  if (original.state !== "read") ack(store, agent, [id]);
  return { ...sent, original };
}

export interface AckResult {
  acked: string[];
  already: string[]; // were read before
  missing: string[];
}

// Marks messages read, wherever they are (unread, claimed, held).
export function ack(store: Store, agent: string, ids: string[]): AckResult {
  checkAgent(agent);
  if (!ids.length) throw new A2AError("EUSAGE", "no message id given: name the ids to mark read (a2a inbox lists them)");
  ids.forEach((id) => checkMessageId(id));
  ensureInbox(store, agent);
  const r: AckResult = { acked: [], already: [], missing: [] };
  const cur = (id: string) => msgFile(curDir(store, agent), id);
  const moved = (from: string, id: string) => {
    try {
      renameSync(from, cur(id));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return false; // not there: try the next place
      throw ioError(err, `marking message ${id} read`);
    }
  };
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
  const fresh = read(newDir(store, agent), idsIn(newDir(store, agent)), "unread");
  const claimed = listClaims(store, agent)
    .map((c) => readMessageFile(store, c.path, c.id, "claimed"))
    .filter((m): m is ReceivedMessage => typeof m === "object");
  const unread = [...fresh, ...claimed].filter((m) => accepts(policy, m.from)).sort((a, b) => (a.id < b.id ? -1 : 1));
  const held = [...read(heldDir(store, agent), idsIn(heldDir(store, agent)), "held"), ...fresh.filter((m) => !accepts(policy, m.from)).map((m) => ({ ...m, state: "held" as const }))];
  const curIds = idsIn(curDir(store, agent));
  return {
    agent,
    unread: unread.slice(0, limit),
    read: read(curDir(store, agent), curIds.slice(-limit).reverse(), "read"),
    held: held.slice(0, limit),
    counts: { unread: unread.length, read: curIds.length, held: held.length },
  };
}
