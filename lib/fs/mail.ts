// The file engine's mail storage (lib/mail/storage.ts): Maildir-style inboxes (the tree and the
// record are mail-record.ts, key records mail-keys.ts, the layout docs/FILE-ENGINE.md §8).
//
// A message moves between places by rename only, so it is in one place at each instant:
//   - delivery: written to ROOT/tmp/ and renamed to new/ID.json (linked, i.e. exclusive, when
//     taking over a dead sender's key);
//   - claim: rename new/ID.json -> claim/ID,HOST,PID,MS (the rename is the claim: of several
//     readers exactly one succeeds; the others get ENOENT and move on);
//   - settle: rename claim/... -> cur/ID.json (read) or held/ID.json; release: back to new/;
//   - recovery: a claim whose holder is gone (lib/core/holder.ts holderGone: same host and pid
//     dead, or older than the claim lease) is renamed back to new/ID.json, so a reader killed
//     between claiming and settling leaves the message unread. The claim's MS is the claim
//     time: a rename keeps the file's mtime. A holder judged gone while still alive (frozen
//     past the lease) may show the message after another reader did too: delivery is
//     at-least-once, never at-most-once.
//
// The policy is ROOT/inbox/AGENT/policy.json, replaced whole under a lock (lib/fs/lock.ts,
// "@policy.AGENT"). In a shared store it speaks for its agent only when the owner of the agent's
// inbox wrote it (mail-record.ts inboxOwner): one planted by another member where the agent had
// none (the sticky inbox stops a replacement) is ignored, as if absent, and `a2a doctor` names it.

import { statSync } from "node:fs";
import { createAtomic, writeAtomic } from "./atomic";
import type { Store } from "../core/config";
import { A2AError, arg, text } from "../core/errors";
import { entries, exists, readJsonLine } from "./io";
import { ensureDir, myUid, ownerOf, speaksFor } from "./guard";
import { withLock } from "./lock";
import { holderGone, hostTag } from "../core/holder";
import { userName } from "./owner";
import { badDir, claimDir, claimFile, curDir, heldDir, inboxDir, msgFile, newDir, policyFile } from "./paths";
import type { Policy } from "../mail/policy";
import type { At, Claim, Filed, MailStorage, Place, PolicyRead } from "../mail/storage";
import { dropKey, markDelivered, reserveKey } from "./mail-keys";
import { encodeMessage, threadsOf } from "../mail/message";
import { countIds, ensureInbox, idsIn, inboxNames, inboxOwner, moveMessage, parseClaim, readMessageFile, readMessageHead } from "./mail-record";

const PLACES: Record<Place, (s: Store, agent: string) => string> = { unread: newDir, read: curDir, held: heldDir };
// What a failed move was doing, for its error.
const doing = (id: string, from: At, to: Place) =>
  to === "read" ? `marking message ${id} read` : to === "held" ? `marking message ${id} held` : from === "held" ? `releasing message ${id}` : `returning message ${id} to unread`;

export function fileMail(store: Store): MailStorage {
  const claimPath = (agent: string, c: Claim) => claimFile(store, agent, `${c.id},${c.host},${c.pid},${c.ms}`);
  const pathOf = (agent: string, id: string, at: At) => (typeof at === "string" ? msgFile(PLACES[at](store, agent), id) : claimPath(agent, at));
  const claims = (agent: string): Claim[] => entries(store, claimDir(store, agent)).map(parseClaim).filter((c): c is Claim => !!c);
  const move = (agent: string, id: string, from: At, to: Place, what = doing(id, from, to)) =>
    moveMessage(store, pathOf(agent, id, from), msgFile(PLACES[to](store, agent), id), what);
  return {
    open: async (agent, own) => ensureInbox(store, agent, own),
    has: async (agent) => exists(store, inboxDir(store, agent)),
    agents: async () => inboxNames(store),
    writer: async () => userName(store, myUid()),
    async deliver(to, build, opts) {
      ensureInbox(store, to);
      let id = opts.freshId;
      let exclusive = false;
      const key = opts.key;
      if (key) {
        const r = await reserveKey(store, to, key.from, key.key, id);
        if (r.kind === "duplicate") return { kind: "duplicate", id: r.id };
        id = r.id;
        exclusive = r.kind === "takeover";
      }
      const unread = countIds(store, newDir(store, to)) + claims(to).length;
      if (unread >= opts.limit) {
        if (key && !exclusive) dropKey(store, to, key.from, key.key);
        return { kind: "full", unread };
      }
      const message = build(id);
      const dest = msgFile(newDir(store, to), id);
      // A takeover re-sends the dead sender's id: if another retry took over too and got there
      // first, the link fails and this one is the duplicate.
      if (exclusive) {
        if (!createAtomic(store, dest, encodeMessage(message))) return { kind: "duplicate", id, sent_at: message.sent_at };
      } else writeAtomic(store, dest, encodeMessage(message));
      if (key) markDelivered(store, to, key.from, key.key, id);
      return { kind: "delivered", message };
    },
    ids: async (agent, place) => idsIn(store, PLACES[place](store, agent)),
    count: async (agent, withClaims) => countIds(store, newDir(store, agent)) + (withClaims ? claims(agent).length : 0),
    claims: async (agent) => claims(agent),
    async claim(agent, id) {
      // The name must be this claim's alone: two readers of one process (an MCP server serving
      // two waits on one inbox) woken by one message in one millisecond would otherwise both
      // find "their" claim below, and both show the message. Within a process the check and the
      // rename are one synchronous step; other processes' names differ by pid.
      const claim: Claim = { id, host: hostTag(store.host), pid: process.pid, ms: Date.now() };
      while (exists(store, claimPath(agent, claim))) claim.ms++;
      const path = claimPath(agent, claim);
      try {
        if (moveMessage(store, msgFile(newDir(store, agent), id), path, `claiming message ${id}`)) return claim;
      } catch (e) {
        // In a shared store another member's inbox refuses the rename: say whose it is, not
        // which permission to check.
        const owner = inboxOwner(store, agent);
        if (!(e instanceof A2AError && /^(EACCES|EPERM)$/.test(String(e.data.errno))) || owner === undefined || speaksFor(store, myUid(), owner)) throw e;
        throw new A2AError("EDENIED", text`the inbox of ${agent} (${inboxDir(store, agent)}) belongs to OS user ${userName(store, owner)}, not to you: only its owner reads it; read your own with ${arg("as", "YOUR-NAME")}`, {
          data: { agent, owner: userName(store, owner) },
        });
      }
      // On NFS a retransmitted rename can report ENOENT although the first attempt succeeded.
      return exists(store, path) ? claim : undefined;
    },
    move: async (agent, id, from, to) => move(agent, id, from, to),
    async recover(agent) {
      let n = 0;
      const now = Date.now();
      for (const c of claims(agent)) {
        if (!holderGone(store, c.host, c.pid, now - c.ms, store.claimLeaseMs)) continue;
        if (move(agent, c.id, c, "unread", `recovering message ${c.id}`)) n++;
      }
      return n;
    },
    read: async (agent, id, at) => readMessageFile(store, pathOf(agent, id, at), id),
    async heads(agent, items, bodyChars) {
      // Each place's directory joined once: a listing of 10,000 messages would spend a tenth of
      // its time joining the same path again.
      const dirs: Partial<Record<Place, string>> = {};
      const path = (id: string, at: At) => (typeof at === "string" ? msgFile((dirs[at] ??= PLACES[at](store, agent)), id) : claimPath(agent, at));
      return items.map(({ id, at }) => readMessageHead(store, path(id, at), id, bodyChars));
    },
    async arrival(agent, id) {
      // Every rename sets the file's ctime: a message back in new/ has a newer one.
      try {
        return statSync(msgFile(newDir(store, agent), id)).ctimeMs;
      } catch {
        return undefined;
      }
    },
    async locate(id, bodyChars) {
      const found: Filed[] = [];
      for (const agent of inboxNames(store)) {
        const at: At[] = [...(Object.keys(PLACES) as Place[]), ...claims(agent).filter((c) => c.id === id)];
        for (const a of at) {
          const message = readMessageHead(store, pathOf(agent, id, a), id, bodyChars);
          if (typeof message === "object") found.push({ agent, at: a, message });
        }
      }
      return found;
    },
    async thread(root, bodyChars) {
      // Every message's head, its body left out: the thread is in the record's last bytes.
      const all: Filed[] = [];
      for (const agent of inboxNames(store)) {
        const items: { id: string; at: At }[] = [
          ...(Object.keys(PLACES) as Place[]).flatMap((place) => idsIn(store, PLACES[place](store, agent)).map((id) => ({ id, at: place as At }))),
          ...claims(agent).map((c) => ({ id: c.id, at: c as At })),
        ];
        for (const { id, at } of items) {
          const message = readMessageHead(store, pathOf(agent, id, at), id, 0);
          if (typeof message === "object") all.push({ agent, at, message });
        }
      }
      const threads = threadsOf(all.map((f) => f.message));
      const seen = new Set<string>(); // a message that moved while the inboxes were read is met twice
      const members: Filed[] = [];
      for (const f of all) {
        if (threads.get(f.message.id) !== root || seen.has(f.message.id)) continue;
        seen.add(f.message.id);
        const message = readMessageHead(store, pathOf(f.agent, f.message.id, f.at), f.message.id, bodyChars);
        if (typeof message === "object") members.push({ ...f, message });
      }
      return members.sort((a, b) => (a.message.id < b.message.id ? -1 : a.message.id > b.message.id ? 1 : 0));
    },
    async setAside(agent, id, at) {
      ensureDir(store, badDir(store, agent), "owner"); // the reader's own, as the rest of its inbox
      const dest = msgFile(badDir(store, agent), id);
      return moveMessage(store, pathOf(agent, id, at), dest, `quarantining message ${id}`) ? dest : undefined; // moved already
    },
    damaged: async (agent) => ({ count: entries(store, badDir(store, agent)).length, where: badDir(store, agent) }),
    policy: async (agent) => readPolicyFile(store, agent),
    async changePolicy(agent, decide) {
      ensureInbox(store, agent, true);
      // In a shared store only the inbox's owner writes a policy others will trust.
      const owner = inboxOwner(store, agent);
      if (owner !== undefined && !speaksFor(store, myUid(), owner)) {
        throw new A2AError("EDENIED", `the inbox of ${agent} (${inboxDir(store, agent)}) belongs to OS user ${userName(store, owner)}, not to you: a policy you write would not be trusted; if ${agent} is yours, have the store's administrator give it to you (chown -R ${userName(store, myUid())} ${inboxDir(store, agent)})`, {
          data: { agent, owner: userName(store, owner) },
        });
      }
      return withLock(store, `@policy.${agent}`, () => {
        const next = decide(readPolicyFile(store, agent));
        writeAtomic(store, policyFile(store, agent), JSON.stringify(next) + "\n");
        return next;
      });
    },
  };
}

const asPolicy = (p: any) =>
  p.a2a === 1 && (p.mode === "open" || p.mode === "allowlist") && Array.isArray(p.allow) && Array.isArray(p.deny) ? (p as Policy) : undefined;

// Whether the file at policyFile speaks for `agent` (see the header); true when there is none.
function policyTrusted(store: Store, agent: string): boolean {
  const uid = ownerOf(policyFile(store, agent));
  return uid === undefined || speaksFor(store, uid, inboxOwner(store, agent));
}

function readPolicyFile(store: Store, agent: string): PolicyRead {
  const uid = inboxOwner(store, agent);
  const owner = uid === undefined ? {} : { owner: userName(store, uid) };
  for (let i = 0; ; i++) {
    const r = readJsonLine(store, policyFile(store, agent), asPolicy);
    if (r.kind !== "absent" && !policyTrusted(store, agent)) return { kind: "none", ...owner };
    if (r.kind === "ok") return { kind: "ok", policy: { ...r.value, agent }, ...owner };
    if (r.kind === "absent" && !r.stale) return { kind: "none", ...owner };
    // Invalid: a torn read on a caching network filesystem is retried; then it is damage.
    if (i >= 3) return { kind: "invalid", where: policyFile(store, agent) };
    Bun.sleepSync(2 + i * 5);
  }
}
