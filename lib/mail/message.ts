// The message record as the mail rules see it, its states, and message ids. How an engine
// stores it is the engine's (lib/fs/mail-record.ts: one file, one line of JSON); sending is
// send.ts, reading receive.ts, the inbox's contents inbox.ts, who may write policy.ts.
//
// ID = 16-digit microseconds since the epoch, "-", 4 hex of the host name's hash, "-", pid in
// base 36, "-", 6 random hex: sorts by send time (within one process strictly), unique across
// machines.

import { type Store } from "../core/config";
import { hashHex, randomHex } from "../core/digest";
import { A2AError } from "../core/errors";
import { isMessageId } from "../core/names";
import { attachmentsOf, type Attachment } from "../blobs/attachment";

export interface Message {
  a2a: 1;
  id: string;
  from: string; // the name the sender claimed
  to: string;
  body: string;
  size: number; // UTF-8 bytes of body
  sent_at: number; // unix seconds
  reply_to: string | null; // id of the message this answers
  thread?: string; // a reply's thread: the id of the message that began it (thread.ts); absent on a message that answers nothing
  host: string; // sender's host and pid, as claimed
  pid: number;
  attachments?: Attachment[]; // blobs handed over with it (§19); absent when none
}

export type MessageState = "unread" | "claimed" | "read" | "held";

// A message as a reader sees it: plus the OS user owning the file, which the sender cannot forge.
export interface ReceivedMessage extends Message {
  user: string;
  state: MessageState;
  thread?: string; // the thread it belongs to, as receive() tells it (lib/mail/thread.ts)
  held_reason?: string; // why the recipient's policy holds it (inbox listings)
  human?: true; // from the person at the dashboard, written by the inbox's owner (lib/mail/human.ts); absent otherwise
}

export { isMessageId };

// Threads. A message that answers nothing begins a thread, named by its id; a reply is in its
// parent's thread, which the record carries (`thread`) from the send on. A reply written before
// threads has no `thread`: it is in its parent's thread, followed by reply_to as far as the
// store holds the parent, else in the thread named by the parent's id (as a reply to a
// message its sender could not see is, lib/mail/send.ts).

// The thread a record names; undefined for a reply written before threads (threadsOf finds it).
export const namedThread = (m: Pick<Message, "id" | "reply_to" | "thread">): string | undefined => m.thread ?? (m.reply_to === null ? m.id : undefined);

// The thread of each of `ms`, a reply written before threads found through its parents among them.
export function threadsOf(ms: Iterable<Pick<Message, "id" | "reply_to" | "thread">>): Map<string, string> {
  const byId = new Map<string, Pick<Message, "id" | "reply_to" | "thread">>();
  for (const m of ms) if (!byId.has(m.id)) byId.set(m.id, m);
  const found = new Map<string, string>();
  const of = (m: Pick<Message, "id" | "reply_to" | "thread">): string => {
    const chain: string[] = [];
    let t: string | undefined;
    // Iterative, and bounded by the messages there are: a chain of replies may be long, and a
    // hand-made record may answer itself.
    for (let at = m; ; ) {
      t = found.get(at.id) ?? namedThread(at);
      if (t !== undefined) break;
      chain.push(at.id);
      t = at.reply_to!;
      const parent = byId.get(t);
      if (!parent || chain.length > byId.size) break;
      at = parent;
    }
    for (const id of chain) found.set(id, t);
    return t;
  };
  for (const m of byId.values()) if (!found.has(m.id)) found.set(m.id, of(m));
  return found;
}

// The record's encoding, the same for every engine that keeps it as text: one line of JSON plus
// "\n", keys in the order of `Message` (`thread` only on a reply, `attachments` last and only
// when there are some). A reader accepts it only if it ends in "\n", parses, has a2a = 1, the
// id it was filed under, and `size` equal to the UTF-8 byte length of `body`.
export function encodeMessage(m: Message): string {
  const { a2a, id, from, to, body, sent_at, reply_to, thread, host, pid, attachments } = m;
  const size = Buffer.byteLength(body, "utf8");
  const rec = thread === undefined ? { a2a, id, from, to, body, size, sent_at, reply_to, host, pid } : { a2a, id, from, to, body, size, sent_at, reply_to, thread, host, pid };
  return JSON.stringify(attachments?.length ? { ...rec, attachments } : rec) + "\n";
}

// The message in a parsed record, or undefined when it is not a valid one with this id.
export function asMessage(m: any, id: string): Message | undefined {
  if (!m || m.a2a !== 1 || m.id !== id || typeof m.body !== "string" || typeof m.from !== "string") return undefined;
  if (m.size !== Buffer.byteLength(m.body, "utf8") || typeof m.sent_at !== "number") return undefined;
  if (m.reply_to !== null && typeof m.reply_to !== "string") return undefined;
  if (m.attachments !== undefined && !attachmentsOf(m.attachments)) return undefined;
  if (m.thread !== undefined && !isMessageId(m.thread)) return undefined;
  return m as Message;
}

export function decodeMessage(text: string, id: string): Message | undefined {
  if (!text.endsWith("\n")) return undefined;
  try {
    return asMessage(JSON.parse(text), id);
  } catch {
    return undefined;
  }
}


export function checkMessageId(id: unknown, what = "message id"): string {
  if (!isMessageId(id)) {
    const shown = typeof id === "string" ? JSON.stringify(id.slice(0, 60)) : String(id);
    throw new A2AError("EUSAGE", `invalid ${what} ${shown}: copy the id exactly as recv or inbox printed it (e.g. 1764507972123000-3f2a-1k3d-a9c2e1)`);
  }
  return id;
}

// A fresh id, strictly increasing within this Store (store.lastIdUs).
export function newMessageId(store: Store): string {
  const us = Math.max(Date.now() * 1000, store.lastIdUs + 1);
  store.lastIdUs = us;
  const hostHash = hashHex("sha1", store.host).slice(0, 4);
  return `${String(us).padStart(16, "0")}-${hostHash}-${process.pid.toString(36)}-${randomHex(3)}`;
}

// A message as a listing shows it (inbox, hooks, the dashboard): every field, and the body cut
// to the characters asked for; `truncated`: the body goes on (recv reads it whole).
export interface ListedMessage extends ReceivedMessage {
  truncated: boolean;
}
