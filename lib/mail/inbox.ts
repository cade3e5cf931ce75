// What is in an inbox: unread counts, the listing, and acknowledging (marking read without
// showing). The tree is in lib/core/paths.ts, the record in message.ts.

import { LIST_BODY_CHARS } from "./limits";
import type { Store } from "../core/config";
import { A2AError, op, text } from "../core/errors";
import { entries } from "../core/fs";
import { badDir, checkAgent, curDir, heldDir, msgFile, newDir } from "../core/paths";
import { listClaims } from "./claim";
import { checkMessageId, countIds, ensureInbox, idsIn, moveMessage, readMessageFile, readMessageHead, type ListedMessage, type MessageState } from "./message";
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
  unread: ListedMessage[]; // oldest first (claimed ones included)
  read: ListedMessage[]; // newest first
  held: ListedMessage[]; // oldest first
  counts: { unread: number; read: number; held: number; damaged: number };
  damaged_in?: string; // where damaged ones are set aside, when there are any (the file engine's bad/)
}

export { LIST_BODY_CHARS };

// What is in `agent`'s inbox: unread (at most `limit`), the `limit` most recent read, and held,
// each body cut to `bodyChars` characters (lib/mail/message.ts readMessageHead: only the ends
// of each file are read, so what waits costs a listing its count, not its bytes). `damaged`
// counts the files that are not messages: unread ones (the next recv moves them to bad/) and
// those in bad/.
export function listInbox(store: Store, agent: string, limit = 50, bodyChars = LIST_BODY_CHARS): InboxListing {
  const scan = scanUnread(store, agent, bodyChars);
  const { policy } = scan;
  const withReason = (m: ListedMessage): ListedMessage => ({ ...m, state: "held", held_reason: refusal(policy, m.from, m.user) ?? "held earlier; a2a allow releases it" });
  const held = [...readAll(store, filesIn(store, heldDir(store, agent)), "held", bodyChars).messages, ...scan.refused].map(withReason);
  const curIds = idsIn(store, curDir(store, agent));
  const damaged = scan.damaged + entries(store, badDir(store, agent)).length;
  return {
    agent,
    unread: scan.unread.slice(0, limit),
    read: readAll(store, at(curDir(store, agent), curIds.slice(-limit).reverse()), "read", bodyChars).messages,
    held: held.slice(0, limit),
    counts: { unread: scan.unread.length, read: curIds.length, held: held.length, damaged },
    ...(damaged ? { damaged_in: badDir(store, agent) } : {}),
  };
}

// What waits for `agent`, cheaply: the ids of its unread messages (new/ and claimed), oldest
// first, from file names alone, and a reader of the heads of any of them. Nothing is read until
// a caller asks for heads, so a hook costs the same with 10 or 10,000 messages waiting. The
// ids are counted before the policy sees them: a message its policy refuses (one that landed
// before a deny, or under a name bound to another OS user) counts until the next read sets it
// aside in held/ (a send refused by the policy never lands at all); heads() leaves it out. A
// file in new/ with a message's name that is not a message counts likewise until that read
// moves it to bad/.
export interface Waiting {
  ids: string[];
  heads(ids: string[]): ListedMessage[]; // of those ids, in their order; gone or refused ones left out
}

export function waitingFor(store: Store, agent: string): Waiting {
  checkAgent(agent);
  const policy = readPolicy(store, agent);
  const claims = listClaims(store, agent);
  const ids = [...idsIn(store, newDir(store, agent)), ...claims.map((c) => c.id)].sort();
  const heads = (wanted: string[]) => {
    const where = new Map(claims.map((c) => [c.id, { path: c.path, state: "claimed" as const }]));
    return wanted.flatMap((id) => {
      const w = where.get(id) ?? { path: msgFile(newDir(store, agent), id), state: "unread" as const };
      const m = readMessageHead(store, w.path, id, w.state, 0);
      return typeof m === "object" && accepts(policy, m.from, m.user) ? [m] : [];
    });
  };
  return { ids, heads };
}

// The unread messages `agent`'s policy accepts (claimed ones included), oldest first, bodies
// cut to `bodyChars`.
export const listUnread = (store: Store, agent: string, bodyChars = 0): ListedMessage[] => scanUnread(store, agent, bodyChars).unread;

// Unread mail split by the policy (refused: held at the next read), and the files that are not messages.
function scanUnread(store: Store, agent: string, bodyChars: number) {
  checkAgent(agent);
  const policy = readPolicy(store, agent);
  const fresh = readAll(store, filesIn(store, newDir(store, agent)), "unread", bodyChars);
  const claimed = readAll(store, listClaims(store, agent), "claimed", bodyChars);
  const unread = [...fresh.messages, ...claimed.messages].filter((m) => accepts(policy, m.from, m.user)).sort((a, b) => (a.id < b.id ? -1 : 1));
  const refused = fresh.messages.filter((m) => !accepts(policy, m.from, m.user));
  return { policy, unread, refused, damaged: fresh.damaged + claimed.damaged };
}

const at = (dir: string, ids: string[]) => ids.map((id) => ({ id, path: msgFile(dir, id) }));
const filesIn = (store: Store, dir: string) => at(dir, idsIn(store, dir));

// The message files `files` as listed (gone ones left out), and how many are not messages.
function readAll(store: Store, files: { id: string; path: string }[], state: MessageState, bodyChars: number) {
  const messages: ListedMessage[] = [];
  let damaged = 0;
  for (const f of files) {
    const m = readMessageHead(store, f.path, f.id, state, bodyChars);
    if (m === "corrupt") damaged++;
    else if (m !== "absent") messages.push(m);
  }
  return { messages, damaged };
}

// `msgs` (from a listing of `agent`'s inbox) with their bodies read again, cut to `bodyChars`:
// for the few a caller shows in full out of a listing made with short bodies. One that moved
// meanwhile is left as it was.
export function withBodies(store: Store, agent: string, msgs: ListedMessage[], bodyChars: number): ListedMessage[] {
  const claims = msgs.some((m) => m.state === "claimed") ? listClaims(store, agent) : [];
  return msgs.map((m) => {
    const paths =
      m.state === "claimed" ? claims.filter((c) => c.id === m.id).map((c) => c.path)
      : m.state === "read" ? [msgFile(curDir(store, agent), m.id)]
      : [msgFile(newDir(store, agent), m.id), msgFile(heldDir(store, agent), m.id)];
    for (const p of paths) {
      const again = readMessageHead(store, p, m.id, m.state, bodyChars);
      if (typeof again === "object") return { ...m, body: again.body, truncated: again.truncated };
    }
    return m;
  });
}
