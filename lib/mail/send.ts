// Sending direct messages: send and reply (reading is receive.ts, the inbox's contents
// inbox.ts). The record is in message.ts, the claim protocol in claim.ts, keys in keys.ts.
//
// How a message is delivered (send):
//   1. validate names, body size (store.maxBytes), reply_to; the recipient's policy must accept
//      the sender (else EDENIED, exit 1); nothing is written before these pass;
//   2. with a key: reserve it (keys.ts); a duplicate returns the first id here;
//   3. the recipient's unread count (new/ + claim/) must be below A2A_MAX_UNREAD (else EFULL,
//      exit 1; a fresh key record is removed again);
//   4. write the record to ROOT/tmp/ and rename it to inbox/TO/new/ID.json (lib/core/atomic.ts;
//      link, i.e. exclusive, when taking over a dead sender's key). At that instant the
//      message is delivered; a sender killed before it leaves only a temp file.
//   5. with a key: mark the key delivered.

import { createAtomic, writeAtomic } from "../core/atomic";
import { checkSize, type Store } from "../core/config";
import { A2AError, arg, op, text } from "../core/errors";
import { checkAgent, curDir, heldDir, inboxDir, inboxesDir, msgFile, newDir, peerFile, peerNameOf, peersDir } from "../core/paths";
import { entries, exists } from "../core/fs";
import { closest } from "../core/similar";
import { nowSec } from "../core/time";
import { userName } from "../core/owner";
import { unreadCount, ack } from "./inbox";
import { dropKey, markDelivered, reserveKey } from "./keys";
import { listClaims } from "./claim";
import { checkMessageId, encodeMessage, ensureInbox, newMessageId, readMessageFile, type Message, type ReceivedMessage } from "./message";
import { readPolicy, refusal } from "./policy";

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
  // The recipient had no inbox and is no peer, and an agent of a close name exists: likely a
  // typo (the message is delivered all the same, and waits there).
  did_you_mean?: string;
}

// Someone has had mail under this name, or is on the bus under it.
const knownRecipient = (store: Store, to: string) => exists(store, inboxDir(store, to)) || exists(store, peerFile(store, to));

export async function sendMessage(store: Store, from: string, to: string, body: string, opts: SendOptions = {}): Promise<SendResult> {
  checkAgent(from, "sender name");
  checkAgent(to, "recipient name");
  const replyTo = opts.replyTo === undefined ? null : checkMessageId(opts.replyTo, "reply-to id");
  if (opts.key !== undefined && (typeof opts.key !== "string" || opts.key.length < 1 || opts.key.length > 256)) {
    throw new A2AError("EUSAGE", "invalid idempotency key: use 1-256 characters, the same on every retry of one message");
  }
  const size = checkSize(store, body, "the message");
  const policy = readPolicy(store, to);
  const me = userName(store, process.getuid?.() ?? -1);
  const why = refusal(policy, from, me);
  if (why && policy.bind?.[from] !== undefined && policy.bind[from] !== me) {
    throw new A2AError("EDENIED", `${to} does not accept this message: ${why}; send under your own name`, { data: { to, from, user: me, bound: policy.bind[from] } });
  }
  if (why) {
    throw new A2AError("EDENIED", text`${to} does not accept messages from ${from} (policy ${policy.mode}): ask ${to} to run ${op("allow", from, arg("as", to))}`, {
      data: { to, from, policy: policy.mode },
    });
  }
  const didYouMean = knownRecipient(store, to) ? undefined : closest(to, [...entries(store, inboxesDir(store)), ...entries(store, peersDir(store)).map(peerNameOf).filter((n): n is string => !!n)]);
  ensureInbox(store, to);
  let id = newMessageId(store);
  let exclusive = false;
  if (opts.key !== undefined) {
    const r = await reserveKey(store, to, from, opts.key, id);
    if (r.kind === "duplicate") return { id: r.id, from, to, sent_at: nowSec(), size, duplicate: true };
    id = r.id;
    exclusive = r.kind === "takeover";
  }
  const unread = unreadCount(store, to);
  if (unread >= store.maxUnread) {
    if (opts.key !== undefined && !exclusive) dropKey(store, to, from, opts.key);
    throw new A2AError("EFULL", `the inbox of ${to} holds ${unread} unread messages, its limit: wait until ${to} reads some, or raise A2A_MAX_UNREAD`, {
      data: { to, unread, limit: store.maxUnread },
    });
  }
  const msg: Message = { a2a: 1, id, from, to, body, size, sent_at: nowSec(), reply_to: replyTo, host: store.host, pid: process.pid };
  const dest = msgFile(newDir(store, to), id);
  // A takeover re-sends the dead sender's id: if another retry took over too and got there
  // first, the link fails and this one is the duplicate.
  if (exclusive) {
    if (!createAtomic(store, dest, encodeMessage(msg))) return { id, from, to, sent_at: msg.sent_at, size, duplicate: true };
  } else writeAtomic(store, dest, encodeMessage(msg));
  if (opts.key !== undefined) markDelivered(store, to, from, opts.key, id);
  return { id, from, to, sent_at: msg.sent_at, size, duplicate: false, ...(didYouMean ? { did_you_mean: didYouMean } : {}) };
}

// Answers message `id` of `agent`'s inbox: sends `body` to its sender with reply_to = id, and
// marks the original read (replying to it means it was read).
export async function replyTo(store: Store, agent: string, id: string, body: string): Promise<SendResult & { original: ReceivedMessage }> {
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
  if (!original) throw new A2AError("ENOTFOUND", text`no message ${id} in the inbox of ${agent}: check the id (${op("inbox")} lists them)`, { data: { id, agent } });
  const sent = await sendMessage(store, agent, original.from, body, { replyTo: id });
  if (original.state !== "read") ack(store, agent, [id]);
  return { ...sent, original };
}
