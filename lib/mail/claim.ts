// Claiming unread mail, so that with several readers on one inbox each message is shown by
// exactly one of them, and a reader that dies before showing it loses nothing.
//
// Calling sequence (a reader, lib/mail/send.ts):
//   1. claim:   rename new/ID.json -> claim/ID,HOST,PID,MS   (the rename is the claim: of
//               several readers exactly one succeeds; the others get ENOENT and move on)
//   2. show the message (write it to stdout / return it from the tool)
//   3. settle:  rename claim/... -> cur/ID.json               (read; at that instant)
//      or release: rename claim/... -> new/ID.json           (showing failed: unread again)
// Recovery (any reader, before it claims, and every RECOVER_MS while it waits; also gc):
//   a claim whose holder is gone (lib/core/owner.ts holderGone: same host and pid dead, or older
//   than the lease) is renamed back to new/ID.json, so a reader killed between 1 and 3 leaves
//   the message unread. The claim's MS is the claim time: a rename keeps the file's mtime.
// A holder judged gone while still alive (frozen past the lease) may show the message after
// another reader did too: delivery is at-least-once, never at-most-once.

import type { Store } from "../core/config";
import { entries, exists } from "../core/fs";
import { holderGone, hostTag } from "../core/owner";
import { claimDir, claimFile, curDir, heldDir, msgFile, newDir } from "../core/paths";
import { isMessageId, moveMessage } from "./message";

export const RECOVER_MS = 2_000;

export interface ClaimInfo {
  id: string;
  host: string;
  pid: number;
  ms: number;
}

export function parseClaim(file: string): ClaimInfo | undefined {
  const f = file.split(",");
  if (f.length !== 4 || !isMessageId(f[0]) || !/^\d+$/.test(f[2]) || !/^\d+$/.test(f[3])) return undefined;
  return { id: f[0], host: f[1], pid: Number(f[2]), ms: Number(f[3]) };
}

// Step 1. Returns the claim path, or undefined when another reader took the message first.
export function claim(store: Store, agent: string, id: string): string | undefined {
  // The name must be this claim's alone: two readers of one process (an MCP server serving two
  // waits on one inbox) woken by one message in one millisecond would otherwise both find
  // "their" claim below, and both show the message. Within a process the check and the rename
  // are one synchronous step; other processes' names differ by pid.
  const name = (ms: number) => claimFile(store, agent, `${id},${hostTag(store.host)},${process.pid},${ms}`);
  let ms = Date.now();
  while (exists(store, name(ms))) ms++;
  const path = name(ms);
  if (moveMessage(store, msgFile(newDir(store, agent), id), path, `claiming message ${id}`)) return path;
  // On NFS a retransmitted rename can report ENOENT although the first attempt succeeded.
  return exists(store, path) ? path : undefined;
}

// Step 3: the message was shown (dest "cur") or its sender is not allowed (dest "held").
export function settle(store: Store, agent: string, claimPath: string, id: string, dest: "cur" | "held"): void {
  const dir = dest === "cur" ? curDir(store, agent) : heldDir(store, agent);
  moveMessage(store, claimPath, msgFile(dir, id), `marking message ${id} ${dest === "cur" ? "read" : "held"}`);
}

// Step 3': showing failed; the message is unread again.
export function release(store: Store, agent: string, claimPath: string, id: string): void {
  moveMessage(store, claimPath, msgFile(newDir(store, agent), id), `returning message ${id} to unread`);
}

// Every claim in the inbox, with its path.
export function listClaims(store: Store, agent: string): (ClaimInfo & { path: string })[] {
  const out: (ClaimInfo & { path: string })[] = [];
  for (const f of entries(store, claimDir(store, agent))) {
    const c = parseClaim(f);
    if (c) out.push({ ...c, path: claimFile(store, agent, f) });
  }
  return out;
}

// Returns the claims of gone holders to new/; the number returned.
export function recoverClaims(store: Store, agent: string, now = Date.now()): number {
  let n = 0;
  for (const c of listClaims(store, agent)) {
    if (!holderGone(store, c.host, c.pid, now - c.ms, store.claimLeaseMs)) continue;
    if (moveMessage(store, c.path, msgFile(newDir(store, agent), c.id), `recovering message ${c.id}`)) n++;
  }
  return n;
}
