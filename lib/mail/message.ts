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
import { isMessageId } from "../core/paths";
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
  host: string; // sender's host and pid, as claimed
  pid: number;
  attachments?: Attachment[]; // blobs handed over with it (§19); absent when none
}

export type MessageState = "unread" | "claimed" | "read" | "held";

// A message as a reader sees it: plus the OS user owning the file, which the sender cannot forge.
export interface ReceivedMessage extends Message {
  user: string;
  state: MessageState;
  held_reason?: string; // why the recipient's policy holds it (inbox listings)
}

export { isMessageId };

// The record's encoding, the same for every engine that keeps it as text: one line of JSON plus
// "\n", keys in the order of `Message` (attachments last, and only when there are some). A reader accepts it only if it ends in "\n", parses, has
// a2a = 1, the id it was filed under, and `size` equal to the UTF-8 byte length of `body`.
export function encodeMessage(m: Message): string {
  const { a2a, id, from, to, body, sent_at, reply_to, host, pid, attachments } = m;
  return JSON.stringify({ a2a, id, from, to, body, size: Buffer.byteLength(body, "utf8"), sent_at, reply_to, host, pid, ...(attachments?.length ? { attachments } : {}) }) + "\n";
}

// The message in a parsed record, or undefined when it is not a valid one with this id.
export function asMessage(m: any, id: string): Message | undefined {
  if (!m || m.a2a !== 1 || m.id !== id || typeof m.body !== "string" || typeof m.from !== "string") return undefined;
  if (m.size !== Buffer.byteLength(m.body, "utf8") || typeof m.sent_at !== "number") return undefined;
  if (m.reply_to !== null && typeof m.reply_to !== "string") return undefined;
  if (m.attachments !== undefined && !attachmentsOf(m.attachments)) return undefined;
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
