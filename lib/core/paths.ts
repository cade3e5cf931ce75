// The store's tree. This is the only module that knows directory and file names; see
// docs/PROTOCOL.md for the contract other implementations rely on.
//
//   ROOT/tmp/                          temp files of every atomic write (never watched)
//   ROOT/slots/NAME.json               one record per slot
//   ROOT/locks/NAME.lock/              mkdir lock for read-modify-write of slot NAME (and @policy.AGENT)
//   ROOT/streams/NAME/NNNNNNNNNN       chunk files of slot NAME's current run, 1-based
//   ROOT/inbox/AGENT/{new,claim,cur,held,bad,keys}/, ROOT/inbox/AGENT/policy.json   mail
//   ROOT/topics/TOPIC/NNNNNNNNNNNN.json    topic log
//   ROOT/subs/NAME/@subscriber.json, ROOT/subs/NAME/TOPIC   durable subscribers
//   ROOT/peers/NAME.json               presence of running agents
//   ROOT/identities/HASH.json          names handed out per directory
//   ROOT/sessions/NAME.json            what the Claude Code hooks told session NAME (lib/session-hooks.ts)
//
//   ROOT/store.json                    the marker: this directory is an a2a store (lib/core/guard.ts)
//
// Names never start with "." so dot-files anywhere are foreign or temporary and are skipped.

import { join } from "node:path";
import { A2AError } from "./errors";
import type { Store } from "./config";

export const NAME_RULE = "names are 1-128 characters of letters, digits, '.', '_' and '-', not starting with '.'";
const NAME_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

export function isValidName(name: unknown): name is string {
  return typeof name === "string" && NAME_RE.test(name);
}

// Throws a usage error naming the rule; the only gate between user input and a path.
export function checkName(name: unknown, what = "name"): string {
  if (!isValidName(name)) {
    const shown = typeof name === "string" ? JSON.stringify(name.length > 60 ? name.slice(0, 60) + "…" : name) : String(name);
    throw new A2AError("EUSAGE", `invalid ${what} ${shown}: ${NAME_RULE}`, { data: { what } });
  }
  return name;
}

// Agent names (senders, recipients, subscribers, peers) follow the slot name rule.
export const checkAgent = (name: unknown, what = "agent name") => checkName(name, what);

const JSON_EXT = ".json";
export const SLOT_EXT = JSON_EXT;
export const CHUNK_DIGITS = 10;

// The store itself: its marker, and every name a2a creates at its top.
export const markerFile = (s: Store) => join(s.root, "store.json");
export const STORE_NAMES = ["store.json", "tmp", "slots", "locks", "streams", "topics", "subs", "inbox", "peers", "identities", "tasks", "leases", "sessions"];

// Slots.
export const tmpDir = (s: Store) => join(s.root, "tmp");
export const tempFile = (s: Store, tag: string) => join(tmpDir(s), tag);
export const slotsDir = (s: Store) => join(s.root, "slots");
export const locksDir = (s: Store) => join(s.root, "locks");
export const streamsDir = (s: Store) => join(s.root, "streams");
export const slotFile = (s: Store, name: string) => join(slotsDir(s), name + SLOT_EXT);
export const lockFile = (s: Store, name: string) => join(locksDir(s), name + ".lock");
export const lockNameOf = (file: string) => (file.endsWith(".lock") ? file.slice(0, -5) : undefined);
export const streamDir = (s: Store, name: string) => join(streamsDir(s), name);
export const chunkFile = (s: Store, name: string, n: number) =>
  join(streamDir(s, name), String(n).padStart(CHUNK_DIGITS, "0"));

// The slot name a file in slots/ belongs to, or undefined for temp/foreign files.
export function slotNameOf(fileName: string): string | undefined {
  if (!fileName.endsWith(SLOT_EXT)) return undefined;
  const name = fileName.slice(0, -SLOT_EXT.length);
  return isValidName(name) ? name : undefined;
}

// Mail.
export const inboxesDir = (s: Store) => join(s.root, "inbox");
export const inboxDir = (s: Store, agent: string) => join(inboxesDir(s), agent);
export const newDir = (s: Store, a: string) => join(inboxDir(s, a), "new");
export const claimDir = (s: Store, a: string) => join(inboxDir(s, a), "claim");
export const curDir = (s: Store, a: string) => join(inboxDir(s, a), "cur");
export const heldDir = (s: Store, a: string) => join(inboxDir(s, a), "held");
export const badDir = (s: Store, a: string) => join(inboxDir(s, a), "bad");
export const keysDir = (s: Store, a: string) => join(inboxDir(s, a), "keys");
export const policyFile = (s: Store, a: string) => join(inboxDir(s, a), "policy.json");
export const msgFile = (dir: string, id: string) => join(dir, id + JSON_EXT);
export const claimFile = (s: Store, a: string, claimName: string) => join(claimDir(s, a), claimName);
export const keyFile = (s: Store, to: string, hash: string) => join(keysDir(s, to), hash + JSON_EXT);

// Topics.
export const topicsDir = (s: Store) => join(s.root, "topics");
export const topicDir = (s: Store, topic: string) => join(topicsDir(s), topic);
export const TOPIC_ID_DIGITS = 12;
export const topicMessageFile = (s: Store, topic: string, id: number) =>
  join(topicDir(s, topic), String(id).padStart(TOPIC_ID_DIGITS, "0") + JSON_EXT);
// The message number of a file in a topic directory, or undefined for foreign files.
export function topicIdOf(file: string): number | undefined {
  if (file.length !== TOPIC_ID_DIGITS + JSON_EXT.length || !file.endsWith(JSON_EXT)) return undefined;
  const n = Number(file.slice(0, TOPIC_ID_DIGITS));
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}
export const subsDir = (s: Store) => join(s.root, "subs");
export const subscriberDir = (s: Store, name: string) => join(subsDir(s), name);
export const subscriberFile = (s: Store, name: string) => join(subscriberDir(s, name), "@subscriber.json");
export const cursorFile = (s: Store, name: string, topic: string) => join(subscriberDir(s, name), topic);

// Presence.
export const peersDir = (s: Store) => join(s.root, "peers");
export const peerFile = (s: Store, name: string) => join(peersDir(s), name + JSON_EXT);
export const peerNameOf = (file: string) => (file.endsWith(JSON_EXT) ? file.slice(0, -JSON_EXT.length) : undefined);
export const identitiesDir = (s: Store) => join(s.root, "identities");
export const identityFile = (s: Store, hash: string) => join(identitiesDir(s), hash + JSON_EXT);

// Hook state of a session (lib/session-hooks.ts).
export const sessionsDir = (s: Store) => join(s.root, "sessions");
export const sessionFile = (s: Store, name: string) => join(sessionsDir(s), name + JSON_EXT);
