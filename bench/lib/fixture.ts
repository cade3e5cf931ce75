// Stores for the bench: fresh temporary roots laid out like a2a's (ROOT/slots, ROOT/tmp),
// optionally pre-filled with valid slot records (or unread mail), and the payloads the
// fixtures exchange. Records are encoded with lib/slots/record.ts (lib/mail/message.ts), so
// lib's readers accept them exactly as if `a2a publish` (`a2a send`) had written them.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../lib/engine/open";
import { initStore } from "../../lib/fs/init";
import { encodeMessage } from "../../lib/mail/message";
import { nowSec } from "../../lib/core/time";
import { encodeRecord, type SlotRecord } from "../../lib/slots/record";

export const slotsOf = (root: string) => join(root, "slots");
export const tmpOf = (root: string) => join(root, "tmp");

// The result text of trial `seq`: small and recognisable, so waiters can check what they read.
export const payloadFor = (seq: number | string) => `bench ${seq} ${"x".repeat(40)}`;

export function record(name: string, result: string, version = 1): SlotRecord {
  const now = nowSec();
  return {
    a2a: 1, name, state: "done", task: "bench", result, size: Buffer.byteLength(result, "utf8"), version,
    started_at: now, published_at: now, updated_at: now, expires_at: null, chunks: 0, host: hostname(), pid: process.pid,
  };
}

// A fresh store root under `base` with `slots` published records named fill0..fillN-1.
const created = new Set<string>();

export function makeStore(base: string, slots = 0, label = "store"): string {
  const root = mkdtempSync(join(base || tmpdir(), `a2a-bench-${label}-`));
  created.add(root);
  // Made as `a2a init` makes one, marker included: a root without it is checked for entries a2a
  // never creates, and the publisher's own temp files (tmp/bench.*) would then have a waiter
  // that arms after them refuse the store (issue 33: "waiter lib ended unexpectedly").
  initStore(openStore({ dir: root, env: {} }));
  mkdirSync(slotsOf(root), { recursive: true, mode: 0o700 });
  mkdirSync(tmpOf(root), { recursive: true, mode: 0o700 });
  for (let i = 0; i < slots; i++) {
    const name = `fill${i}`;
    writeFileSync(join(slotsOf(root), name + ".json"), encodeRecord(record(name, payloadFor(`fill-${i}`))), { mode: 0o600 });
  }
  return root;
}

// `count` unread messages of `chars` ASCII characters each in `agent`'s inbox under `root`.
export function fillInbox(root: string, agent: string, count: number, chars: number): void {
  const fresh = join(root, "inbox", agent, "new");
  mkdirSync(fresh, { recursive: true, mode: 0o700 });
  const filler = "x".repeat(chars);
  const t0 = Date.now() * 1000;
  for (let i = 0; i < count; i++) {
    const id = `${t0 + i}-0a7c-1-${i.toString(16).padStart(6, "0")}`;
    const m = { a2a: 1 as const, id, from: "sender", to: agent, body: filler, size: chars, sent_at: nowSec(), reply_to: null, host: hostname(), pid: process.pid };
    writeFileSync(join(fresh, `${id}.json`), encodeMessage(m), { mode: 0o600 });
  }
}

export function removeStore(root: string): void {
  rmSync(root, { recursive: true, force: true });
  created.delete(root);
}

// Removes every store still around (the bench was interrupted or a section failed).
export function removeAllStores(): void {
  for (const root of [...created]) removeStore(root);
}
