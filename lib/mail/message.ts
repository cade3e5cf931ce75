// The mailbox on disk: one Maildir-style inbox per agent, the message record, message ids.
// Only this module knows the inbox tree; lib/inbox.ts, claim.ts, policy.ts and
// idempotency.ts operate on it.
//
//   ROOT/inbox/AGENT/new/ID.json                  delivered, unread
//   ROOT/inbox/AGENT/claim/ID,HOST,PID,MS         taken by reader HOST/PID at unix ms MS, not yet shown
//   ROOT/inbox/AGENT/cur/ID.json                  read (shown, or acked)
//   ROOT/inbox/AGENT/held/ID.json                 kept aside: its sender is not allowed by the policy
//   ROOT/inbox/AGENT/bad/NAME                     a file in new/ that is not a valid message (quarantined)
//   ROOT/inbox/AGENT/keys/HASH.json               idempotency key record (lib/idempotency.ts)
//   ROOT/inbox/AGENT/policy.json                  who may write to AGENT (lib/policy.ts)
//
// A message file is one line of JSON plus "\n" (keys in the order of `Message`), written once
// through lib/atomic.ts and then only renamed between new/, claim/, cur/ and held/, never
// rewritten. A reader accepts it only if it ends in "\n", parses, has a2a = 1, an `id` equal to
// its file name's, and `size` equal to the UTF-8 byte length of `body`.
//
// ID = 16-digit microseconds since the epoch, "-", 4 hex of the host name's hash, "-", pid in
// base 36, "-", 6 random hex: sorts by send time (within one process strictly), unique across
// machines. Names starting with "." are never messages.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { hashHex, randomHex } from "../core/digest";
import { join } from "node:path";
import { A2AError, ioError } from "../core/errors";
import { checkName } from "../core/paths";
import { ensureDir, positiveInt, type Store } from "../core/config";

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
}

export interface MailSettings {
  maxUnread: number; // unread messages one inbox may hold; a send beyond it fails with EFULL
  claimLeaseMs: number; // a claim older than this, from another host, is taken back
}

export const DEFAULT_MAX_UNREAD = 10_000;
export const DEFAULT_CLAIM_LEASE_MS = 30_000;

export function mailSettings(env: Record<string, string | undefined>): MailSettings {
  return {
    maxUnread: positiveInt(env, "A2A_MAX_UNREAD", DEFAULT_MAX_UNREAD),
    claimLeaseMs: positiveInt(env, "A2A_CLAIM_LEASE_MS", DEFAULT_CLAIM_LEASE_MS),
  };
}

export const inboxesDir = (s: Store) => join(s.root, "inbox");
export const inboxDir = (s: Store, agent: string) => join(inboxesDir(s), agent);
export const newDir = (s: Store, a: string) => join(inboxDir(s, a), "new");
export const claimDir = (s: Store, a: string) => join(inboxDir(s, a), "claim");
export const curDir = (s: Store, a: string) => join(inboxDir(s, a), "cur");
export const heldDir = (s: Store, a: string) => join(inboxDir(s, a), "held");
export const badDir = (s: Store, a: string) => join(inboxDir(s, a), "bad");
export const keysDir = (s: Store, a: string) => join(inboxDir(s, a), "keys");
export const policyFile = (s: Store, a: string) => join(inboxDir(s, a), "policy.json");
export const msgFile = (dir: string, id: string) => join(dir, id + ".json");

const ID_RE = /^\d{16}-[0-9a-f]{4}-[0-9a-z]+-[0-9a-f]{6}$/;
export const isMessageId = (id: unknown): id is string => typeof id === "string" && ID_RE.test(id);

export function checkMessageId(id: unknown, what = "message id"): string {
  if (!isMessageId(id)) {
    const shown = typeof id === "string" ? JSON.stringify(id.slice(0, 60)) : String(id);
    throw new A2AError("EUSAGE", `invalid ${what} ${shown}: copy the id exactly as recv or inbox printed it (e.g. 1764507972123000-3f2a-1k3d-a9c2e1)`);
  }
  return id;
}

// A fresh id, strictly increasing within this store object (the last one is kept on it).
export function newMessageId(store: Store): string {
  const s = store as Store & { _lastIdUs?: number };
  const us = Math.max(Date.now() * 1000, (s._lastIdUs ?? 0) + 1);
  s._lastIdUs = us;
  const hostHash = hashHex("sha1", store.host).slice(0, 4);
  return `${String(us).padStart(16, "0")}-${hostHash}-${process.pid.toString(36)}-${randomHex(3)}`;
}

export function idOfFile(file: string): string | undefined {
  if (!file.endsWith(".json")) return undefined;
  const id = file.slice(0, -5);
  return isMessageId(id) ? id : undefined;
}

export function encodeMessage(m: Message): string {
  const { a2a, id, from, to, body, sent_at, reply_to, host, pid } = m;
  return JSON.stringify({ a2a, id, from, to, body, size: Buffer.byteLength(body, "utf8"), sent_at, reply_to, host, pid }) + "\n";
}

export function decodeMessage(text: string, id: string): Message | undefined {
  if (!text.endsWith("\n")) return undefined;
  let m: any;
  try {
    m = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!m || m.a2a !== 1 || m.id !== id || typeof m.body !== "string" || typeof m.from !== "string") return undefined;
  if (m.size !== Buffer.byteLength(m.body, "utf8") || typeof m.sent_at !== "number") return undefined;
  if (m.reply_to !== null && typeof m.reply_to !== "string") return undefined;
  return m as Message;
}

// Reads one message file: the message, "absent" (moved or not there), or "corrupt".
export function readMessageFile(store: Store, path: string, id: string, state: MessageState): ReceivedMessage | "absent" | "corrupt" {
  let text: string;
  let uid: number;
  try {
    text = readFileSync(path, "utf8");
    uid = statSync(path).uid;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ESTALE") return "absent";
    throw ioError(err, `reading message ${id}`);
  }
  const m = decodeMessage(text, id);
  return m ? { ...m, user: userName(store, uid), state } : "corrupt";
}

// Entries of `dir` (none when it does not exist), dot-files left out.
export function entries(dir: string): string[] {
  try {
    return readdirSync(dir).filter((f) => !f.startsWith("."));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw ioError(err, `listing ${dir}`);
  }
}

// Message ids in a new/, cur/ or held/ directory, oldest first.
export const idsIn = (dir: string): string[] => entries(dir).map(idOfFile).filter((i): i is string => !!i).sort();

// The OS user name for `uid` (from /etc/passwd, read once per store object), else "uid N".
export function userName(store: Store, uid: number): string {
  const s = store as Store & { _users?: Map<number, string> };
  if (!s._users) {
    s._users = new Map();
    try {
      for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
        const f = line.split(":");
        if (f.length > 2 && /^\d+$/.test(f[2]) && !s._users.has(Number(f[2]))) s._users.set(Number(f[2]), f[0]);
      }
    } catch {
      // no passwd file (containers): numeric uids it is
    }
  }
  return s._users.get(uid) ?? `uid ${uid}`;
}

export const checkAgent = (name: unknown, what = "agent name") => checkName(name, what);

// Creates the directories messages move between (a no-op when they exist).
export function ensureInbox(store: Store, agent: string): void {
  for (const d of [newDir, claimDir, curDir, heldDir]) ensureDir(store, d(store, agent));
}
