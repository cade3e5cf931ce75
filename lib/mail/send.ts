// Sending direct messages: send and reply (reading is receive.ts, the inbox's contents
// inbox.ts). The record is in message.ts, its storage lib/mail/storage.ts.
//
// How a message is delivered (send):
//   1. validate names, body size (store.maxBytes), reply_to; the recipient's policy must accept
//      the sender (else EDENIED, exit 1); nothing is written before these pass; a reply's thread
//      is its parent's, when the sender can see the parent (lib/mail/thread.ts replyThread);
//   2. storage deliver: with a key, reserve it (a duplicate returns the first id here); the
//      recipient's unread messages (claimed ones count) must be fewer than A2A_MAX_UNREAD (else
//      EFULL, exit 1, and a fresh reservation is undone); then the message is stored unread: at
//      that instant it is delivered, and a sender killed before leaves nothing a reader sees.
// The person at the dashboard writes (sendAsHuman) under HUMAN (lib/mail/human.ts) into an inbox
// of its own only: step 1 checks that instead of the policy, which never refuses its owner.

import type { Attachment } from "../blobs/attachment";
import { checkAttachments } from "../blobs/room";
import type { Store } from "../core/config";
import { checkSize } from "../core/size";
import { A2AError, arg, op, text, unknownOutcome } from "../core/errors";
import { checkAgent } from "../core/names";
import { closest } from "../core/similar";
import { nowSec } from "../core/time";
import { presenceStorage } from "../presence/storage";
import { ack } from "./inbox";
import { checkMessageId, newMessageId, type ReceivedMessage } from "./message";
import { HUMAN } from "./human";
import { readGate, readOwner, refusal, writerKind } from "./policy";
import { replyThread } from "./thread";
import { mailStorage, type At } from "./storage";

export interface SendOptions {
  replyTo?: string;
  key?: string;
  attach?: { digest: string; name: string }[]; // blobs stored already (a2a put), handed over with it
}

export interface SendResult {
  id: string;
  from: string;
  to: string;
  sent_at: number;
  size: number;
  duplicate: boolean; // the key was used before: nothing new was delivered
  attachments?: Attachment[];
  thread: string; // the thread it is in (lib/mail/thread.ts): its own id when it answers nothing
  // The recipient had no inbox and is no peer, and an agent of a close name exists: likely a
  // typo (the message is delivered all the same, and waits there).
  did_you_mean?: string;
}

// The name of an agent close to `to`, when nobody has had mail under `to` or is on the bus
// under it: likely a typo.
async function didYouMean(store: Store, to: string): Promise<string | undefined> {
  const mail = mailStorage(store);
  if (await mail.has(to)) return undefined;
  const peers = await presenceStorage(store).names();
  if (peers.includes(to)) return undefined;
  return closest(to, [...(await mail.agents()), ...peers]);
}

export async function sendMessage(store: Store, from: string, to: string, body: string, opts: SendOptions = {}): Promise<SendResult> {
  checkAgent(from, "sender name");
  checkAgent(to, "recipient name");
  const replyTo = opts.replyTo === undefined ? null : checkMessageId(opts.replyTo, "reply-to id");
  checkKey(opts.key);
  const size = checkSize(store, body, "the message", true);
  const attachments = opts.attach?.length ? await checkAttachments(store, opts.attach) : undefined;
  const mail = mailStorage(store);
  const policy = await readGate(store, to);
  const me = await mail.writer();
  const why = refusal(policy, from, me, writerKind(store));
  if (why && policy.bind?.[from] !== undefined && policy.bind[from] !== me) {
    throw new A2AError("EDENIED", `${to} does not accept this message: ${why}; send under your own name`, { data: { to, from, user: me, bound: policy.bind[from] } });
  }
  if (why) {
    throw new A2AError("EDENIED", text`${to} does not accept messages from ${from} (policy ${policy.mode}): ask ${to} to run ${op("allow", from, arg("as", to))}`, {
      data: { to, from, policy: policy.mode },
    });
  }
  const guess = await didYouMean(store, to);
  const thread = replyTo === null ? undefined : await replyThread(store, from, replyTo);
  return deliverAs(store, { from, to, body, size, replyTo, thread, attachments, key: opts.key, guess });
}

// Writes `body` to `to` as the person at the dashboard (lib/mail/human.ts): only into an inbox
// this writer owns (the mark would not count in another's, so nothing is sent: EDENIED), and
// past its policy, which never refuses its owner's own word.
export async function sendAsHuman(store: Store, to: string, body: string, opts: Pick<SendOptions, "key"> = {}): Promise<SendResult> {
  checkAgent(to, "recipient name");
  checkKey(opts.key);
  const size = checkSize(store, body, "the message", true);
  const owner = await readOwner(store, to);
  const me = await mailStorage(store).writer();
  const kind = writerKind(store);
  if (owner === undefined) {
    throw new A2AError("EDENIED", text`${to} has not opened its inbox yet, so nothing says it is yours: start its session (it opens its inbox), or send as an agent (${op("send", to, arg("as", "NAME"))})`, { data: { to } });
  }
  if (owner !== me) {
    throw new A2AError("EDENIED", text`the inbox of ${to} belongs to ${kind} ${owner}, not to you (${me}): you write as yourself only to your own sessions; send as an agent instead (${op("send", to, arg("as", "NAME"))})`, {
      data: { to, owner, user: me },
    });
  }
  return deliverAs(store, { from: HUMAN, to, body, size, replyTo: null, thread: undefined, attachments: undefined, key: opts.key, guess: undefined });
}

function checkKey(key: unknown): void {
  if (key !== undefined && (typeof key !== "string" || key.length < 1 || key.length > 256)) {
    throw new A2AError("EUSAGE", "invalid idempotency key: use 1-256 characters, the same on every retry of one message");
  }
}

interface Checked {
  from: string;
  to: string;
  body: string;
  size: number;
  replyTo: string | null;
  thread: string | undefined;
  attachments: Attachment[] | undefined;
  key: string | undefined;
  guess: string | undefined;
}

// Step 2 of a send whose checks passed.
async function deliverAs(store: Store, c: Checked): Promise<SendResult> {
  const { from, to, body, size, replyTo, thread, attachments, guess } = c;
  const key = c.key === undefined ? undefined : { from, key: c.key };
  const r = await mailStorage(store).deliver(to, (id) => ({ a2a: 1, id, from, to, body, size, sent_at: nowSec(), reply_to: replyTo, ...(thread === undefined ? {} : { thread }), host: store.host, pid: process.pid, ...(attachments ? { attachments } : {}) }), {
    freshId: newMessageId(store),
    limit: store.maxUnread,
    key,
  }).catch((err) => {
    throw unknownOutcome(err, "the message may or may not have been delivered", key
      ? text`send it again with the same ${arg("key", key.key)}, which cannot deliver it twice`
      : text`look in the inbox of ${to} (${op("inbox", arg("as", to))}) before sending it again; with a ${arg("key")}, a retry cannot deliver twice`);
  });
  if (r.kind === "duplicate") return { id: r.id, from, to, sent_at: r.sent_at ?? nowSec(), size, duplicate: true, thread: thread ?? r.id };
  if (r.kind === "full") {
    throw new A2AError("EFULL", `the inbox of ${to} holds ${r.unread} unread messages, its limit: wait until ${to} reads some, or raise A2A_MAX_UNREAD`, {
      data: { to, unread: r.unread, limit: store.maxUnread },
    });
  }
  return { id: r.message.id, from, to, sent_at: r.message.sent_at, size, duplicate: false, thread: thread ?? r.message.id, ...(attachments ? { attachments } : {}), ...(guess ? { did_you_mean: guess } : {}) };
}

// Answers message `id` of `agent`'s inbox: sends `body` to its sender with reply_to = id, and
// marks the original read (replying to it means it was read).
export async function replyTo(store: Store, agent: string, id: string, body: string): Promise<SendResult & { original: ReceivedMessage }> {
  checkAgent(agent);
  checkMessageId(id);
  const mail = mailStorage(store);
  const where: [At, ReceivedMessage["state"]][] = [
    ["unread", "unread"],
    ...(await mail.claims(agent)).filter((c) => c.id === id).map((c) => [c, "claimed"] as [At, ReceivedMessage["state"]]),
    ["read", "read"],
    ["held", "held"],
  ];
  let original: ReceivedMessage | undefined;
  for (const [at, state] of where) {
    const m = await mail.read(agent, id, at);
    if (typeof m === "object") {
      original = { ...m, state };
      break;
    }
  }
  if (!original) throw new A2AError("ENOTFOUND", text`no message ${id} in the inbox of ${agent}: check the id (${op("inbox")} lists them)`, { data: { id, agent } });
  if (original.from === HUMAN) {
    throw new A2AError("EUSAGE", `message ${id} is from the person at the dashboard, who has no inbox to answer into: answer in your session, where they read you`, { data: { id, agent } });
  }
  const sent = await sendMessage(store, agent, original.from, body, { replyTo: id });
  if (original.state !== "read") await ack(store, agent, [id]);
  return { ...sent, original };
}
