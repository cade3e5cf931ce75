// The file engine's message record and inbox tree (docs/FILE-ENGINE.md §8): one Maildir-style
// inbox per agent, a message one file, written once and then only renamed.
//
//   ROOT/inbox/AGENT/new/ID.json                  delivered, unread
//   ROOT/inbox/AGENT/claim/ID,HOST,PID,MS         taken by reader HOST/PID at unix ms MS, not yet shown
//   ROOT/inbox/AGENT/cur/ID.json                  read (shown, or acked)
//   ROOT/inbox/AGENT/held/ID.json                 kept aside: its sender is not allowed by the policy
//   ROOT/inbox/AGENT/bad/NAME                     a file in new/ that is not a valid message (quarantined)
//   ROOT/inbox/AGENT/keys/HASH.json               idempotency key record (mail-keys.ts)
//   ROOT/inbox/AGENT/policy.json                  who may write to AGENT (mail.ts)
//
// A message file is one line of JSON plus "\n" (keys in the order of `Message`), written once
// through lib/fs/atomic.ts and then only renamed between new/, claim/, cur/ and held/, never
// rewritten. A reader accepts it only if it ends in "\n", parses, has a2a = 1, an `id` equal to
// its file name's, and `size` equal to the UTF-8 byte length of `body`. A listing reads only
// the file's two ends (readMessageHead), which that key order makes enough. Names starting
// with "." are never messages.

import type { Store } from "../core/config";
import { ensureDir, moveFile, ownerOf } from "./guard";
import { entries, readEnds, readJsonLine } from "./io";
import { RECORD_LIMIT } from "../core/record";
import { userName } from "./owner";
import { badDir, claimDir, curDir, heldDir, idOfFile, inboxDir, inboxesDir, isMessageId, isValidName, keysDir, newDir } from "./paths";
import { asMessage, decodeMessage, type Message } from "../mail/message";
import type { Found, Head, Stored } from "../mail/storage";

// Reads one message file: the message, "absent" (moved or not there), or "corrupt" (not a
// valid message: garbage, a FIFO, a link, a file over the size bound).
export function readMessageFile(store: Store, path: string, id: string): Found<Stored> {
  const r = readJsonLine(store, path, (v) => asMessage(v, id));
  if (r.kind === "absent") return "absent";
  if (r.kind === "invalid") return "corrupt";
  return { ...r.value, user: userName(store, r.uid) };
}

// A listing reads the first and last bytes of a message file, never its whole body: the key
// order of encodeMessage puts a2a, id, from and to (names of at most 128 characters) within the
// first HEAD_FIELDS bytes and size, sent_at, reply_to, a reply's thread, host and pid within
// the last TAIL_FIELDS, so 1,000 unread 1 MiB messages cost a listing a few MB of reads, not a GB.
const HEAD_FIELDS = 1024;
const TAIL_FIELDS = 1024;
const MAX_UNIT_BYTES = 6; // the most bytes one UTF-16 unit of a body takes in a record ("\u0001")
const STR = String.raw`"(?:[^"\\]|\\.)*"`;
const HEAD_RE = new RegExp(String.raw`^\{"a2a":1,"id":("[^"\\]*"),"from":(${STR}),"to":(${STR}),"body":"`);
const TAIL_RE = new RegExp(String.raw`","size":(\d+),"sent_at":(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?),"reply_to":(null|${STR})(?:,"thread":("[^"\\]*"))?,"host":(${STR}),"pid":(-?\d+)\}\n$`);
const BODY_CHARS_RE = /^(?:[^"\\]|\\.)*/; // a JSON string's characters up to its end or a cut escape

// `m` (matched by `re` in `bytes` as latin1, from byte `at`), matched again in the UTF-8 text when it is not all ASCII.
function utf8Again(re: RegExp, bytes: Buffer, at: number, m: RegExpExecArray | null): RegExpExecArray | null {
  return m && /[^\x00-\x7f]/.test(m[0]) ? re.exec(bytes.toString("utf8", at)) : m;
}

// The message at `path` as a listing shows it, its body cut to `bodyChars` characters; "absent"
// (moved or not there) or "corrupt" as readMessageFile. A file bigger than the two ends is
// judged by them: its fields must be where encodeMessage puts them (docs/FILE-ENGINE.md §8).
export function readMessageHead(store: Store, path: string, id: string, bodyChars: number): Found<Head> {
  const r = readEnds(store, path, RECORD_LIMIT, HEAD_FIELDS + bodyChars * MAX_UNIT_BYTES, TAIL_FIELDS);
  if (r.kind === "absent") return "absent";
  if (r.kind === "invalid") return "corrupt";
  const user = userName(store, r.uid);
  if (!r.tail) {
    const m = decodeMessage(r.head.toString("utf8"), id);
    return m ? { ...m, user, body: m.body.slice(0, bodyChars), truncated: m.body.length > bodyChars } : "corrupt";
  }
  // Matched as latin1 (a byte a character, so offsets are byte offsets: the cheap decoding),
  // and decoded again as UTF-8 only when a field holds more than ASCII.
  const h = utf8Again(HEAD_RE, r.head, 0, HEAD_RE.exec(r.head.toString("latin1")));
  const tail = TAIL_RE.exec(r.tail.toString("latin1"));
  const t = tail && utf8Again(TAIL_RE, r.tail, tail.index, tail);
  // A message with attachments ends in them, not in pid: it is read whole (such messages are
  // few, and their bodies are within the message limit).
  if (!h || !t) return cutWhole(readMessageFile(store, path, id), bodyChars);
  // Enough of the body's JSON text for `bodyChars` characters, and no more to decode (a
  // character cut at the end is left out).
  const start = Buffer.byteLength(h[0]);
  const rest = bodyChars ? new TextDecoder().decode(r.head.subarray(start, start + bodyChars * MAX_UNIT_BYTES), { stream: true }) : "";
  let chars = BODY_CHARS_RE.exec(rest)![0];
  if (chars.length < rest.length && rest[chars.length] === '"') return "corrupt"; // the body ends early: not encodeMessage's layout
  const cutEscape = /\\u[0-9a-fA-F]{0,3}$/.exec(chars);
  if (cutEscape && /^(?:\\\\)*$/.test(chars.slice(0, cutEscape.index).match(/\\*$/)![0])) chars = chars.slice(0, cutEscape.index);
  try {
    const m = {
      a2a: 1 as const, id: JSON.parse(h[1]), from: JSON.parse(h[2]), to: JSON.parse(h[3]), body: (JSON.parse(`"${chars}"`) as string).slice(0, bodyChars),
      size: Number(t[1]), sent_at: Number(t[2]), reply_to: JSON.parse(t[3]), ...(t[4] === undefined ? {} : { thread: JSON.parse(t[4]) as string }), host: JSON.parse(t[5]), pid: Number(t[6]),
    };
    if (m.id !== id || m.size > r.size || (m.thread !== undefined && !isMessageId(m.thread))) return "corrupt";
    return { ...m, user, truncated: true };
  } catch {
    return "corrupt"; // not JSON inside: a raw control character, a bad escape
  }
}

function cutWhole(m: Found<Stored>, bodyChars: number): Found<Head> {
  if (m === "absent" || m === "corrupt" || !m.attachments) return m === "absent" ? m : "corrupt";
  return { ...m, body: m.body.slice(0, bodyChars), truncated: m.body.length > bodyChars };
}

// Moves a message file between the inbox's directories (claim, settle, release, ack, allow,
// quarantine). False when the source is gone: another reader moved it first. On NFS a
// retransmitted rename can report ENOENT although it succeeded: callers that must know
// check the destination.
export const moveMessage = (store: Store, from: string, to: string, what: string): boolean => moveFile(store, from, to, what);

// The names with an inbox.
export const inboxNames = (store: Store): string[] => entries(store, inboxesDir(store)).filter(isValidName);

// Message ids in a new/, cur/ or held/ directory, oldest first.
export const idsIn = (store: Store, dir: string): string[] => entries(store, dir).map(idOfFile).filter((i): i is string => !!i).sort();

// How many messages `dir` holds: idsIn without building or sorting the list, because a send
// counts the recipient's unread messages every time (sorting 10,000 names costs milliseconds).
export function countIds(store: Store, dir: string): number {
  let n = 0;
  for (const f of entries(store, dir)) if (idOfFile(f)) n++;
  return n;
}

// Creates the directories messages move between (a no-op when they exist). `own`: the
// recipient itself creates them, so in a shared store its inbox is its own: other members can
// deliver into new/ and keep key records in keys/ (both sticky: nobody renames or deletes
// another's file there), only read claim/, cur/, held/ and bad/ (the agent's alone: nobody
// plants a claim or a read message there for the agent's own moves to put in place of mail),
// and swap no directory of the inbox for one of theirs. A sender whose message is the first an
// agent gets makes only the inbox and its new/: they are the sender's, which inboxOwner tells.
export function ensureInbox(store: Store, agent: string, own = false): void {
  if (!own) return ensureDir(store, newDir(store, agent));
  ensureDir(store, inboxDir(store, agent), "sticky");
  for (const d of [newDir, keysDir]) ensureDir(store, d(store, agent), "sticky");
  for (const d of [claimDir, curDir, heldDir, badDir]) ensureDir(store, d(store, agent), "owner");
}

// The OS user an agent's files must belong to for a2a to trust them (its policy), in a shared
// store: the owner of its inbox directory, the one member who can rename or remove what is in
// it. Undefined when it has no inbox yet.
export const inboxOwner = (store: Store, agent: string): number | undefined => ownerOf(inboxDir(store, agent));

// A claim's file name, "ID,HOST,PID,MS" (claim/ holds nothing else a2a reads).
export function parseClaim(file: string): { id: string; host: string; pid: number; ms: number } | undefined {
  const f = file.split(",");
  if (f.length !== 4 || !isMessageId(f[0]) || !/^\d+$/.test(f[2]) || !/^\d+$/.test(f[3])) return undefined;
  return { id: f[0], host: f[1], pid: Number(f[2]), ms: Number(f[3]) };
}
