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
}

export type MessageState = "unread" | "claimed" | "read" | "held";

// A message as a reader sees it: plus the OS user owning the file, which the sender cannot forge.
export interface ReceivedMessage extends Message {
  user: string;
  state: MessageState;
  held_reason?: string; // why the recipient's policy holds it (inbox listings)
}

export { isMessageId };

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
