// Idempotency keys: a repeated send with the same (sender, recipient, KEY) returns the first
// send's id and delivers nothing twice, even when the first send was killed half-way.
//
//   ROOT/inbox/TO/keys/HASH.json    HASH = first 32 hex of sha256(FROM "\n" KEY)
//   {"a2a":1,"id":ID,"host":H,"pid":P,"at":MS,"delivered":false|true}
//
// Calling sequence (lib/inbox.ts send):
//   1. reserveKey: create the key record exclusively (lib/atomic.ts createAtomic = link), with a
//      fresh id and delivered=false. Created -> "fresh": go on and deliver under that id.
//   2. It existed: if delivered, or the message with its id is in new/, claim/, cur/ or held/
//      -> "duplicate" (nothing is written). If its holder is alive, wait (it is between 1 and
//      3, normally microseconds); if the holder is gone (lib/owner.ts), take the record over
//      (replace it with our host/pid) -> "takeover": deliver under the recorded id, exclusively.
//   3. markDelivered: replace the record with delivered=true.
// Key records are kept as long as the inbox (they are small); a key is never reused for
// another message.

import { existsSync, readFileSync, unlinkSync } from "node:fs";
import { hashHex } from "../core/digest";
import { join } from "node:path";
import { createAtomic, writeAtomic } from "../core/atomic";
import { A2AError, ioError } from "../core/errors";
import { listClaims } from "./claim";
import { curDir, heldDir, keysDir, msgFile, newDir, type MailSettings } from "./message";
import { holderGone } from "../core/owner";
import { ensureDir, type Store } from "../core/config";

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
  join(keysDir(store, to), hashHex("sha256", `${from}\n${key}`).slice(0, 32) + ".json");

function readKey(path: string): KeyRecord | undefined {
  try {
    const r = JSON.parse(readFileSync(path, "utf8"));
    return r && r.a2a === 1 && typeof r.id === "string" ? r : undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code && code !== "ENOENT" && code !== "ESTALE") throw ioError(err, `reading idempotency key ${path}`);
    return undefined;
  }
}

export function messageExists(store: Store, to: string, id: string): boolean {
  return [newDir, curDir, heldDir].some((d) => existsSync(msgFile(d(store, to), id))) || listClaims(store, to).some((c) => c.id === id);
}

const record = (store: Store, id: string, delivered: boolean): string =>
  JSON.stringify({ a2a: 1, id, host: store.host, pid: process.pid, at: Date.now(), delivered }) + "\n";

export function reserveKey(store: Store, settings: MailSettings, to: string, from: string, key: string, freshId: string): Reservation {
  ensureDir(store, keysDir(store, to));
  const path = keyFile(store, to, from, key);
  const deadline = Date.now() + settings.claimLeaseMs;
  for (;;) {
    if (createAtomic(store, path, record(store, freshId, false))) return { kind: "fresh", id: freshId };
    const r = readKey(path);
    if (r) {
      if (r.delivered || messageExists(store, to, r.id)) return { kind: "duplicate", id: r.id };
      if (holderGone(store, r.host, r.pid, Date.now() - r.at, settings.claimLeaseMs)) {
        writeAtomic(store, path, record(store, r.id, false));
        return { kind: "takeover", id: r.id };
      }
    }
    if (Date.now() > deadline) {
      throw new A2AError("ECONFLICT", `another send with key ${JSON.stringify(key)} to ${to} is still in progress: retry in a moment`);
    }
    Bun.sleepSync(2);
  }
}

export function markDelivered(store: Store, to: string, from: string, key: string, id: string): void {
  writeAtomic(store, keyFile(store, to, from, key), record(store, id, true));
}

// Removes a key record this process created a moment ago, when the send failed after all.
export function dropKey(store: Store, to: string, from: string, key: string): void {
  try {
    unlinkSync(keyFile(store, to, from, key));
  } catch {
    // already gone
  }
}
