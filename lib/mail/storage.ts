// What the mail rules (send.ts, receive.ts, inbox.ts, policy.ts, watch-inbox.ts) need from an
// engine: one inbox per agent holding messages in four places (unread, claimed by a reader,
// read, held), the idempotency keys of sends, and the agent's policy record. The rules (who may
// write, the unread limit, the record a send builds, what a reader is shown, the wording of
// every refusal) are the room's. docs/ENGINE.md has the design, docs/PROTOCOL.md §8-§11 the
// contract, docs/FILE-ENGINE.md §8 the file engine's layout.
//
// Invariants every engine keeps:
// - a message is written once, whole, and then only moves between places; a reader sees it in
//   one place or none, never torn (one failing its checks is "corrupt", never a wrong message);
// - `claim` is exclusive: of several readers claiming one unread message, exactly one gets it;
//   a `move` from a place the message has left does nothing and says so (false);
// - a claim whose holder is gone returns to unread at the next `recover`: a reader killed
//   between claiming and settling loses nothing (delivery is at-least-once);
// - `deliver` with a key delivers at most once per (recipient, sender, key), also when the first
//   send died half-way; a duplicate returns the first send's id;
// - the writer of a message (`user`) is told by the engine, never by the message's sender.

import type { Store } from "../core/config";
import type { Message } from "./message";
import type { Policy } from "./policy";

// A place a message rests in; a claim is the fourth, held by one reader.
export type Place = "unread" | "read" | "held";

// A reader's hold on one message, from `claim` until it is moved on: who holds it (host and
// pid) and since when (unix ms). Of two claims of one message, even by one process in one
// millisecond, these differ: the engine makes them so.
export interface Claim {
  id: string;
  host: string;
  pid: number;
  ms: number;
}

// Where a message is: a place, or a claim.
export type At = Place | Claim;

// A message as stored, with the writer the engine vouches for (the file engine: the OS user
// owning the file).
export type Stored = Message & { user: string };
export type Head = Stored & { truncated: boolean }; // the body cut to the characters asked for
export type Found<T> = T | "absent" | "corrupt";

// A message found by its id or its thread, in any inbox: whose inbox, and where in it.
export interface Filed {
  agent: string;
  at: At;
  message: Head;
}

export type Delivery =
  | { kind: "delivered"; message: Message }
  | { kind: "duplicate"; id: string; sent_at?: number } // the key was used before: nothing new was delivered (sent_at: when the one built here was sent, if one was)
  | { kind: "full"; unread: number }; // the recipient's unread messages reached the limit

// `owner`: the writer the engine says owns the inbox (the file engine: the OS user owning its
// directory; PostgreSQL: the role that opened it as its own), undefined when none is known. A
// message from the person at the dashboard counts as theirs only when its writer is this owner
// (lib/mail/human.ts).
export type PolicyRead = { kind: "ok"; policy: Policy; owner?: string } | { kind: "none"; owner?: string } | { kind: "invalid"; where: string };

export interface MailStorage {
  // Makes `agent`'s inbox ready to receive (a no-op when it is). `own`: the agent itself opens
  // it (in a shared store the inbox is then its own: the file engine's sticky and owner modes).
  open(agent: string, own: boolean): Promise<void>;
  // Whether `agent` has an inbox (someone has had mail under this name).
  has(agent: string): Promise<boolean>;
  // Every name with an inbox, in no particular order.
  agents(): Promise<string[]>;
  // The writer this process's messages will carry (`Stored.user`), as a policy binds a name to it.
  writer(): Promise<string>;
  // Delivers the message `build` makes for an id (`freshId`, or the id a dead sender's key
  // record reserved) to `to`, unless `to` holds `limit` unread messages (claimed ones count;
  // the file engine counts before it writes, so concurrent sends may pass the limit by a few).
  // `build` is synchronous and pure: an engine may call it inside its transaction, and again
  // when that is retried.
  // With `key`, the (to, from, key) reservation and the delivery are at most once: a retry
  // after a send that got through (or died before it) gets "duplicate" with the first id. At
  // the instant the message is stored it is unread; a send killed before leaves nothing a reader
  // sees.
  deliver(to: string, build: (id: string) => Message, opts: { freshId: string; limit: number; key?: { from: string; key: string } }): Promise<Delivery>;
  // Ids in `place`, oldest first (unread: not the claimed ones).
  ids(agent: string, place: Place): Promise<string[]>;
  // How many unread messages wait, claimed ones included when `claims`.
  count(agent: string, claims: boolean): Promise<number>;
  // Every claim in the inbox.
  claims(agent: string): Promise<Claim[]>;
  // Claims unread message `id` for this process; undefined when another reader took it first.
  claim(agent: string, id: string): Promise<Claim | undefined>;
  // Moves the message at `from` to `to` (settle, release, ack, allow). False: it was not there
  // (another reader moved it first).
  move(agent: string, id: string, from: At, to: Place): Promise<boolean>;
  // Returns the claims of gone holders to unread; how many.
  recover(agent: string): Promise<number>;
  // The message `id` at `at`, whole.
  read(agent: string, id: string, at: At): Promise<Found<Stored>>;
  // The messages `ids` at `at` (one place or claim per id), each body cut to `bodyChars`
  // characters, in their order: a listing costs the messages' count, not their bytes.
  heads(agent: string, items: { id: string; at: At }[], bodyChars: number): Promise<Found<Head>[]>;
  // A number that changes whenever message `id` enters unread (delivered, released,
  // recovered, allowed); undefined when it is not unread.
  arrival(agent: string, id: string): Promise<number | undefined>;
  // Where message `id` is, in every inbox (unread, claimed, read or held; never set aside), its
  // body cut to `bodyChars`: [] when no inbox holds it.
  locate(id: string, bodyChars: number): Promise<Filed[]>;
  // Every message of thread `root` in every inbox, as locate finds them, oldest first: those
  // whose thread (lib/mail/message.ts threadsOf) is `root`, `root` itself included. Nothing is
  // claimed or moved; the file engine reads the heads of every inbox (bounded reads).
  thread(root: string, bodyChars: number): Promise<Filed[]>;
  // Sets aside a message found corrupt at `at`, so no reader takes it again: where it went (for
  // the reader to name), or undefined when it had moved already.
  setAside(agent: string, id: string, at: At): Promise<string | undefined>;
  // How many messages were set aside, and where they are.
  damaged(agent: string): Promise<{ count: number; where: string }>;
  // `agent`'s policy record as its owner wrote it ("none" when there is none, or one the agent's
  // owner did not write: it does not speak for the agent).
  policy(agent: string): Promise<PolicyRead>;
  // One change of the policy: `decide` sees the record under the change's exclusion and returns
  // the next, written whole; when it throws, nothing is written. Refused (EDENIED, worded by the
  // engine, whose fix it names) when this user's policy would not be trusted.
  changePolicy(agent: string, decide: (current: PolicyRead) => Policy): Promise<Policy>;
}

// The store's mail storage, as its engine keeps it (lib/engine/engine.ts).
export function mailStorage(store: Store): MailStorage {
  return store.engine.mail;
}
