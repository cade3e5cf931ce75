// What is in an inbox: unread counts, the listing, and acknowledging (marking read without
// showing). The record is message.ts; the storage lib/mail/storage.ts.

import { LIST_BODY_CHARS } from "./limits";
import type { Store } from "../core/config";
import { A2AError, op, text } from "../core/errors";
import { checkAgent } from "../core/names";
import { checkMessageId, namedThread, type ListedMessage, type MessageState } from "./message";
import { HUMAN, humanMark } from "./human";
import { accepts, readGate, refusal, writerKind } from "./policy";
import { mailStorage, type At, type Claim, type Head, type MailStorage, type Place } from "./storage";

// Makes `agent`'s inbox ready to receive; `own`: the agent itself opens it (lib/mail/storage.ts open).
export const ensureInbox = (store: Store, agent: string, own = false): Promise<void> => mailStorage(store).open(checkAgent(agent), own);

// Unread messages waiting for `agent`: unread or claimed but not yet shown (`claims` false:
// unread only, i.e. not being read by anyone right now).
export const unreadCount = (store: Store, agent: string, claims = true): Promise<number> => mailStorage(store).count(agent, claims);

export interface AckResult {
  acked: string[];
  already: string[]; // were read before
  missing: string[];
}

// Marks messages read, wherever they are (unread, claimed, held).
export async function ack(store: Store, agent: string, ids: string[]): Promise<AckResult> {
  checkAgent(agent);
  if (!ids.length) throw new A2AError("EUSAGE", text`no message id given: name the ids to mark read (${op("inbox")} lists them)`);
  ids.forEach((id) => checkMessageId(id));
  const mail = mailStorage(store);
  await mail.open(agent, true);
  const r: AckResult = { acked: [], already: [], missing: [] };
  for (const id of ids) {
    const sources: At[] = ["unread", ...(await mail.claims(agent)).filter((c) => c.id === id), "held"];
    let moved = false;
    for (const from of sources) if ((moved = await mail.move(agent, id, from, "read"))) break; // false: try the next place
    if (moved) r.acked.push(id);
    else if (typeof (await mail.read(agent, id, "read")) === "object") r.already.push(id);
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
// each body cut to `bodyChars` characters (storage heads: what waits costs a listing its
// count, not its bytes). `damaged` counts the messages that are not valid: unread ones (the
// next recv sets them aside) and those set aside.
export async function listInbox(store: Store, agent: string, limit = 50, bodyChars = LIST_BODY_CHARS): Promise<InboxListing> {
  const mail = mailStorage(store);
  const scan = await scanUnread(store, agent, bodyChars);
  const { policy } = scan;
  const withReason = (m: ListedMessage): ListedMessage => ({ ...m, state: "held", held_reason: refusal(policy, m.from, m.user, writerKind(store)) ?? "held earlier, under a policy since changed; allowing its sender releases it" });
  const held = [...(await readAll(mail, agent, await placed(mail, agent, "held"), "held", bodyChars, policy.owner)).messages, ...scan.refused].map(withReason);
  const curIds = await mail.ids(agent, "read");
  const aside = await mail.damaged(agent);
  const damaged = scan.damaged + aside.count;
  const read = curIds.slice(-limit).reverse().map((id) => ({ id, at: "read" as const }));
  return {
    agent,
    unread: scan.unread.slice(0, limit),
    read: (await readAll(mail, agent, read, "read", bodyChars, policy.owner)).messages,
    held: held.slice(0, limit),
    counts: { unread: scan.unread.length, read: curIds.length, held: held.length, damaged },
    ...(damaged ? { damaged_in: aside.where } : {}),
  };
}

// What waits for `agent`, cheaply: the ids of its unread messages (claimed ones included),
// oldest first, and a reader of the heads of any of them. Nothing is read until a caller asks
// for heads, so a hook costs the same with 10 or 10,000 messages waiting. The ids are counted
// before the policy sees them: a message its policy refuses (one that landed before a deny, or
// under a name bound to another OS user) counts until the next read sets it aside in held (a
// send refused by the policy never lands at all); heads() leaves it out. A message that is not
// valid counts likewise until that read sets it aside.
export interface Waiting {
  ids: string[];
  heads(ids: string[]): Promise<ListedMessage[]>; // of those ids, in their order; gone or refused ones left out
}

export async function waitingFor(store: Store, agent: string): Promise<Waiting> {
  checkAgent(agent);
  const mail = mailStorage(store);
  const policy = await readGate(store, agent);
  const claims = await mail.claims(agent);
  const ids = [...(await mail.ids(agent, "unread")), ...claims.map((c) => c.id)].sort();
  const heads = async (wanted: string[]) => {
    const where = new Map<string, Claim>(claims.map((c) => [c.id, c]));
    const got = await mail.heads(agent, wanted.map((id) => ({ id, at: where.get(id) ?? "unread" })), 0);
    return got.flatMap((m, i): ListedMessage[] =>
      typeof m === "object" && accepts(policy, m.from, m.user) ? [listed(m, where.has(wanted[i]) ? "claimed" : "unread", policy.owner)] : [],
    );
  };
  return { ids, heads };
}

// Unread mail split by the policy (refused: held at the next read), and the messages that are not valid.
async function scanUnread(store: Store, agent: string, bodyChars: number) {
  checkAgent(agent);
  const mail = mailStorage(store);
  const policy = await readGate(store, agent);
  const fresh = await readAll(mail, agent, await placed(mail, agent, "unread"), "unread", bodyChars, policy.owner);
  const claimed = await readAll(mail, agent, (await mail.claims(agent)).map((c) => ({ id: c.id, at: c })), "claimed", bodyChars, policy.owner);
  const unread = [...fresh.messages, ...claimed.messages].filter((m) => accepts(policy, m.from, m.user)).sort((a, b) => (a.id < b.id ? -1 : 1));
  const refused = fresh.messages.filter((m) => !accepts(policy, m.from, m.user));
  return { policy, unread, refused, damaged: fresh.damaged + claimed.damaged };
}

// A head as a listing shows it, its fields in the order readers have always seen (spelled out:
// a listing makes thousands, and a literal is much cheaper than copying by spread); `owner`:
// the inbox's, whose dashboard mail is marked (lib/mail/human.ts).
const listed = (m: Head, state: MessageState, owner: string | undefined): ListedMessage => ({
  a2a: m.a2a, id: m.id, from: m.from, to: m.to, body: m.body, size: m.size, sent_at: m.sent_at, reply_to: m.reply_to, host: m.host, pid: m.pid, ...(m.attachments ? { attachments: m.attachments } : {}),
  user: m.user, state, truncated: m.truncated, thread: namedThread(m), // a reply written before threads: undefined (a2a thread finds it)
  ...(m.from === HUMAN ? humanMark(m, owner) : {}),
});

const placed = async (mail: MailStorage, agent: string, place: Place) => (await mail.ids(agent, place)).map((id) => ({ id, at: place as At }));

// The messages `items` as listed (gone ones left out), and how many are not valid.
async function readAll(mail: MailStorage, agent: string, items: { id: string; at: At }[], state: MessageState, bodyChars: number, owner: string | undefined) {
  const messages: ListedMessage[] = [];
  let damaged = 0;
  for (const m of await mail.heads(agent, items, bodyChars)) {
    if (m === "corrupt") damaged++;
    else if (m !== "absent") messages.push(listed(m, state, owner));
  }
  return { messages, damaged };
}

// `msgs` (from a listing of `agent`'s inbox) with their bodies read again, cut to `bodyChars`:
// for the few a caller shows in full out of a listing made with short bodies. One that moved
// meanwhile is left as it was.
export async function withBodies(store: Store, agent: string, msgs: ListedMessage[], bodyChars: number): Promise<ListedMessage[]> {
  const mail = mailStorage(store);
  const claims = msgs.some((m) => m.state === "claimed") ? await mail.claims(agent) : [];
  const out: ListedMessage[] = [];
  for (const m of msgs) {
    const places: At[] = m.state === "claimed" ? claims.filter((c) => c.id === m.id) : m.state === "read" ? ["read"] : ["unread", "held"];
    let again: ListedMessage = m;
    for (const at of places) {
      const [h] = await mail.heads(agent, [{ id: m.id, at }], bodyChars);
      if (typeof h === "object") {
        again = { ...m, body: h.body, truncated: h.truncated };
        break;
      }
    }
    out.push(again);
  }
  return out;
}
