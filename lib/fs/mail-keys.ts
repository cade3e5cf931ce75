// The file engine's idempotency keys (lib/mail/storage.ts deliver): a repeated send with the
// same (sender, recipient, KEY) returns the first send's id and delivers nothing twice, even
// when the first send was killed half-way.
//
//   ROOT/inbox/TO/keys/HASH.json    HASH = first 32 hex of sha256(FROM "\n" KEY)
//   {"a2a":1,"id":ID,"host":H,"pid":P,"at":MS,"delivered":false|true}
//
// Calling sequence (mail.ts deliver):
//   1. reserveKey: create the key record exclusively (lib/fs/atomic.ts createAtomic = link), with a
//      fresh id and delivered=false. Created -> "fresh": go on and deliver under that id.
//   2. It existed: if delivered, or the message with its id is in new/, claim/, cur/ or held/
//      -> "duplicate" (nothing is written). If its holder is alive, wait (it is between 1 and
//      3, normally microseconds), woken by the watch on keys/; if the holder is gone
//      (lib/core/holder.ts: rechecked every KEY_RECHECK_MS), take the record over
//      (replace it with our host/pid) -> "takeover": deliver under the recorded id, exclusively.
//   3. markDelivered: replace the record with delivered=true.
// Key records are kept as long as the inbox (they are small); a key is never reused for
// another message.

import { createAtomic, writeAtomic } from "./atomic";
import { type Store } from "../core/config";
import { ensureDir, myUid, removeFile, speaksFor } from "./guard";
import { hashHex } from "../core/digest";
import { A2AError, arg, text } from "../core/errors";
import { entries, exists, readJsonLine } from "./io";
import { holderGone } from "../core/holder";
import { userName } from "./owner";
import { claimDir, curDir, heldDir, isMessageId, keyFile as keyPath, keysDir, msgFile, newDir } from "./paths";
import { waitUntil } from "../core/watch";

import { parseClaim } from "./mail-record";

interface KeyRecord {
  a2a: 1;
  id: string;
  host: string;
  pid: number;
  at: number; // unix ms the holder took the key
  delivered: boolean;
}

export type Reservation = { kind: "fresh" | "takeover" | "duplicate"; id: string };

const keyFile = (store: Store, to: string, from: string, key: string) =>
  keyPath(store, to, hashHex("sha256", `${from}\n${key}`).slice(0, 32));

const asKey = (r: any): KeyRecord | undefined =>
  r.a2a === 1 && isMessageId(r.id) && typeof r.host === "string" && typeof r.at === "number" ? r : undefined;

function messageExists(store: Store, to: string, id: string): boolean {
  return [newDir, curDir, heldDir].some((d) => exists(store, msgFile(d(store, to), id))) || entries(store, claimDir(store, to)).some((f) => parseClaim(f)?.id === id);
}

const record = (store: Store, id: string, delivered: boolean): string =>
  JSON.stringify({ a2a: 1, id, host: store.host, pid: process.pid, at: Date.now(), delivered }) + "\n";

// How often a send waiting on another send's key looks again, for the one change no event
// announces: that other sender died.
const KEY_RECHECK_MS = 50;
const KEY_INVALID_LOOKS = 5;

export async function reserveKey(store: Store, to: string, from: string, key: string, freshId: string): Promise<Reservation> {
  ensureDir(store, keysDir(store, to));
  const path = keyFile(store, to, from, key);
  let invalid = 0;
  const attempt = (): Reservation | undefined => {
    if (createAtomic(store, path, record(store, freshId, false))) return { kind: "fresh", id: freshId };
    const r = readJsonLine(store, path, asKey);
    // Key records are replaced whole, so one that stays invalid over a few looks (a torn read
    // on a caching filesystem does not last) is foreign: waiting the whole lease for it to
    // become valid would stall every send with this key and then blame a send in progress.
    if (r.kind === "invalid" && ++invalid > KEY_INVALID_LOOKS) {
      throw new A2AError("EIO", `the key record ${path} is ${r.why}, not one a2a wrote: remove it, then send again`, { data: { key, to, file: path } });
    }
    if (r.kind !== "ok") return undefined; // being replaced, or removed by a failed send: look again
    // A key record speaks for its sender: in a shared store another member could plant one
    // (keys/ takes everyone's) claiming the message was delivered, and the send would report a
    // duplicate and deliver nothing. Only the sender's own (this OS user's) is believed.
    if (!speaksFor(store, r.uid, myUid())) {
      throw new A2AError("EIO", text`the key record ${path} belongs to OS user ${userName(store, r.uid)}, not to you: a key record is its sender's; have it removed (by its owner, the inbox's owner or root), or send with another ${arg("key")}`, {
        data: { key, to, file: path, user: userName(store, r.uid) },
      });
    }
    if (r.value.delivered || messageExists(store, to, r.value.id)) return { kind: "duplicate", id: r.value.id };
    if (holderGone(store, r.value.host, r.value.pid, Date.now() - r.value.at, store.claimLeaseMs)) {
      writeAtomic(store, path, record(store, r.value.id, false));
      return { kind: "takeover", id: r.value.id };
    }
    return undefined; // its holder is between reserving and delivering: wait for it
  };
  // Woken by the holder's markDelivered (a replace in keys/) or dropKey; rechecked for its death.
  const outcome = await waitUntil(store, { on: "keys", to }, attempt, { timeoutMs: store.claimLeaseMs, recheckMs: KEY_RECHECK_MS });
  if (outcome.value) return outcome.value;
  throw new A2AError("ECONFLICT", `another send with key ${JSON.stringify(key)} to ${to} is still in progress: retry in a moment`, {
    data: { key, to },
  });
}

export function markDelivered(store: Store, to: string, from: string, key: string, id: string): void {
  writeAtomic(store, keyFile(store, to, from, key), record(store, id, true));
}

// Removes a key record this process created a moment ago, when the send failed after all.
export function dropKey(store: Store, to: string, from: string, key: string): void {
  removeFile(store, keyFile(store, to, from, key));
}
