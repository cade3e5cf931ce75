// The store's tree. This is the only module that knows directory and file names; see
// docs/FILE-ENGINE.md for the layout other implementations rely on (docs/PROTOCOL.md the contract).
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
//   ROOT/tasks/QUEUE/ID/NNNNNNNN.json  version N of task ID (a chain: lib/fs/chain.ts)
//   ROOT/tasks/QUEUE/ID/@by.T.Q        task T of queue Q waits for ID (wake-up hint)
//   ROOT/tasks/QUEUE/ID/@bell          replaced to wake waiters on ID (a dependency died)
//   ROOT/tasks/QUEUE/@open/ID          hint: ID may be claimable some day (not final)
//   ROOT/tasks/QUEUE/@keys/HASH.json   add idempotency key -> task id
//   ROOT/tasks/QUEUE/@claims/HASH.json claim replay key (assignee, key) -> claim
//   ROOT/leases/NAME/NNNNNNNN.json     version N of the lease on NAME (a chain)
//   ROOT/reservations/HASH.json        the reservations of one repository (HASH: of its identity)
//   ROOT/sessions/NAME.json            what the Claude Code hooks told session NAME (lib/sessions/hooks.ts)
//   ROOT/blobs/sha256/HEX              a blob: the bytes whose SHA-256 is HEX, read-only (lib/fs/blobs.ts)
//   ROOT/index/UID.sqlite              OS user UID's search index: a cache of the files, mode 0600 (lib/fs/search.ts)
//
//   ROOT/store.json                    the marker: this directory is an a2a store (lib/fs/guard.ts)
//
// Names never start with "." so dot-files anywhere are foreign or temporary and are skipped.

import { hashHex } from "../core/digest";
import { join } from "node:path";
import { isMessageId, isTaskId, isValidName } from "../core/names";
import type { Store } from "../core/config";

// The names and ids every engine checks (lib/core/names.ts), for the file engine's own callers.
export { byName, checkAgent, checkName, isMessageId, isTaskId, isValidName, NAME_RULE } from "../core/names";

const JSON_EXT = ".json";
export const SLOT_EXT = JSON_EXT;
export const CHUNK_DIGITS = 10;

// The store itself: its marker, and every name a2a creates at its top.
export const markerFile = (s: Store) => join(s.root, "store.json");
export const STORE_NAMES = ["store.json", "tmp", "slots", "locks", "streams", "topics", "subs", "inbox", "peers", "identities", "tasks", "leases", "reservations", "sessions", "blobs", "index"];
// The top-level directories that are sticky in a shared store: each holds entries made by
// different members that no other member ever needs to rename or remove (temp files, topics,
// subscribers, inboxes, session state, blobs: a member's gc removes only its own). The others
// hold shared state that members replace, break or sweep for each other by design (slot
// records, locks, chunks, presence, tasks).
export const STICKY_NAMES = ["tmp", "topics", "subs", "inbox", "sessions", "index", "blobs"];

// Slots.
export const tmpDir = (s: Store) => join(s.root, "tmp");
export const indexDir = (s: Store) => join(s.root, "index");
export const blobsDir = (s: Store) => join(s.root, "blobs", "sha256");
export const blobFile = (s: Store, hex: string) => join(blobsDir(s), hex);
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

// The message id a file in an inbox directory holds, or undefined for temp/foreign files.
export function idOfFile(file: string): string | undefined {
  if (!file.endsWith(".json")) return undefined;
  const id = file.slice(0, -5);
  return isMessageId(id) ? id : undefined;
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

// Chains: a record kept as one file per version, each created exclusively (lib/fs/chain.ts).
export const VERSION_DIGITS = 8;
export const versionFile = (dir: string, n: number) => join(dir, String(n).padStart(VERSION_DIGITS, "0") + JSON_EXT);
// The version number of a file in a chain directory, or undefined for anything else.
export function versionOf(file: string): number | undefined {
  if (file.length !== VERSION_DIGITS + JSON_EXT.length || !file.endsWith(JSON_EXT)) return undefined;
  const n = Number(file.slice(0, VERSION_DIGITS));
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

// Tasks (ids: lib/core/names.ts isTaskId).
export const tasksDir = (s: Store) => join(s.root, "tasks");
export const queueDir = (s: Store, q: string) => join(tasksDir(s), q);
export const taskDir = (s: Store, q: string, id: string) => join(queueDir(s, q), id);
export const openDir = (s: Store, q: string) => join(queueDir(s, q), "@open");
export const openFile = (s: Store, q: string, id: string) => join(openDir(s, q), id);
// An add's marker before its task's version 1 exists: a dot-name, so it neither wakes nor is listed.
export const pendingOpenFile = (s: Store, q: string, id: string) => join(openDir(s, q), "." + id);
export const addKeysDir = (s: Store, q: string) => join(queueDir(s, q), "@keys");
export const addKeyFile = (s: Store, q: string, hash: string) => join(addKeysDir(s, q), hash + JSON_EXT);
export const claimKeysDir = (s: Store, q: string) => join(queueDir(s, q), "@claims");
export const claimKeyFile = (s: Store, q: string, hash: string) => join(claimKeysDir(s, q), hash + JSON_EXT);
export const taskBell = (s: Store, q: string, id: string) => join(taskDir(s, q, id), "@bell");
const BY = "@by.";
export const dependantFile = (s: Store, depQ: string, depId: string, q: string, id: string) => join(taskDir(s, depQ, depId), `${BY}${id}.${q}`);
// The task (id, queue) a file "@by.ID.QUEUE" in a task directory names, or undefined.
export function dependantOf(file: string): { id: string; queue: string } | undefined {
  if (!file.startsWith(BY)) return undefined;
  const rest = file.slice(BY.length);
  const dot = rest.indexOf(".");
  const id = rest.slice(0, dot), queue = rest.slice(dot + 1);
  return dot > 0 && isTaskId(id) && isValidName(queue) ? { id, queue } : undefined;
}

// Leases on names.
export const leasesDir = (s: Store) => join(s.root, "leases");
export const leaseDir = (s: Store, name: string) => join(leasesDir(s), name);
// Reservations on paths: one record per repository.
export const reservationsDir = (s: Store) => join(s.root, "reservations");
// A repository's identity (lib/reservations/repo.ts) may hold any character: its file is named
// by a hash of it.
export const reservationFileName = (repo: string) => hashHex("sha256", repo).slice(0, 32) + JSON_EXT;
export const reservationFile = (s: Store, repo: string) => join(reservationsDir(s), reservationFileName(repo));
// Hook state of a session (lib/sessions/hooks.ts).
export const sessionsDir = (s: Store) => join(s.root, "sessions");
export const sessionFile = (s: Store, name: string) => join(sessionsDir(s), name + JSON_EXT);
