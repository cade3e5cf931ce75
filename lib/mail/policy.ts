// Who may write to an agent's inbox. One record per agent, ROOT/inbox/AGENT/policy.json:
//   {"a2a":1,"agent":A,"mode":"open"|"allowlist","allow":[...],"deny":[...],"updated_at":T}
// No file means open with empty lists. `deny` refuses a sender in either mode; `allowlist`
// refuses everyone not in `allow`; an agent always accepts mail from itself.
//
// Enforced twice: at send (the sender gets EDENIED, nothing is written) and at receive (a
// message from a refused sender, e.g. one sent before the policy changed or written by hand,
// is moved to held/ and never shown; `allow` moves that sender's held mail back to new/).
// Changes are read-modify-write under a lock (lib/core/lock.ts, name "@policy.AGENT") and land by
// an atomic replace. What this cannot stop: a process with write access to the store writing
// into new/ directly, or claiming another name (see the file owner reported with each message).
// In a shared store the policy speaks for its agent only when the owner of the agent's inbox
// wrote it (lib/mail/message.ts inboxOwner): one planted by another member where the agent had
// none (the sticky inbox stops a replacement) is ignored, as if absent, and `a2a doctor` names it.

import { writeAtomic } from "../core/atomic";
import { type Store } from "../core/config";
import { myUid, ownerOf, speaksFor } from "../core/guard";
import { A2AError, arg, op, text } from "../core/errors";
import { readJsonLine } from "../core/fs";
import { withLock } from "../core/lock";
import { checkAgent, curDir, heldDir, inboxDir, msgFile, newDir, policyFile } from "../core/paths";
import { nowSec } from "../core/time";
import { userName } from "../core/owner";
import { ensureInbox, idsIn, inboxOwner, moveMessage, readMessageFile } from "./message";

import { checkMode, type PolicyMode } from "./policy-mode";

export { checkMode, type PolicyMode };

export interface Policy {
  a2a: 1;
  agent: string;
  mode: PolicyMode;
  allow: string[];
  deny: string[];
  // Senders bound to the OS user whose files carry their mail: a message claiming NAME
  // from another OS user is held (and refused at send). The uid is what the filesystem
  // vouches for between OS users; between agents of one OS user nothing is.
  bind?: Record<string, string>;
  updated_at: number | null;
}

const asPolicy = (p: any) =>
  p.a2a === 1 && (p.mode === "open" || p.mode === "allowlist") && Array.isArray(p.allow) && Array.isArray(p.deny) ? (p as Policy) : undefined;

// Whether the file at policyFile speaks for `agent` (see the header); true when there is none.
export function policyTrusted(store: Store, agent: string): boolean {
  const uid = ownerOf(policyFile(store, agent));
  return uid === undefined || speaksFor(store, uid, inboxOwner(store, agent));
}

export function readPolicy(store: Store, agent: string): Policy {
  checkAgent(agent);
  const none: Policy = { a2a: 1, agent, mode: "open", allow: [], deny: [], updated_at: null };
  for (let i = 0; ; i++) {
    const r = readJsonLine(store, policyFile(store, agent), asPolicy);
    if (r.kind !== "absent" && !policyTrusted(store, agent)) return none;
    if (r.kind === "ok") return { ...r.value, agent };
    if (r.kind === "absent" && !r.stale) return none;
    // Invalid: a torn read on a caching network filesystem is retried; then it is damage.
    if (i >= 3) {
      // Failing closed would silently drop mail; failing open would ignore the user's wish.
      throw new A2AError(
        "EIO",
        text`the policy file ${policyFile(store, agent)} is not valid: fix it or remove it (${op("policy", "open|allowlist", arg("as", agent))} rewrites it)`,
        { data: { agent, file: policyFile(store, agent) } },
      );
    }
    Bun.sleepSync(2 + i * 5);
  }
}

// Why `p` refuses mail claiming to be from `from`, written by OS user `user` (when known),
// or undefined when it accepts it.
export function refusal(p: Policy, from: string, user?: string): string | undefined {
  const bound = p.bind?.[from];
  if (bound !== undefined && user !== undefined && user !== bound) {
    return `it claims to be from ${from}, who is bound to OS user ${bound}, but OS user ${user} wrote it`;
  }
  if (from === p.agent) return undefined;
  if (p.deny.includes(from)) return `${from} is on the deny list`;
  if (p.mode === "allowlist" && !p.allow.includes(from)) return `${from} is not on the allowlist`;
  return undefined;
}

export const accepts = (p: Policy, from: string, user?: string): boolean => refusal(p, from, user) === undefined;

// "alice@seca" -> { name: "alice", user: "seca" }; "alice" -> { name: "alice" }.
export function parseSender(spec: string): { name: string; user?: string } {
  const at = spec.lastIndexOf("@");
  if (at < 0) return { name: checkAgent(spec, "sender name") };
  const user = spec.slice(at + 1);
  if (!/^[A-Za-z0-9._][A-Za-z0-9._-]{0,63}$/.test(user)) {
    throw new A2AError("EUSAGE", `invalid OS user ${JSON.stringify(user)} in ${JSON.stringify(spec)}: write NAME@USER with USER an OS user name, e.g. alice@seca`);
  }
  return { name: checkAgent(spec.slice(0, at), "sender name"), user };
}

// The OS user who wrote the newest message claiming to be `from` in `agent`'s inbox.
function lastUserOf(store: Store, agent: string, from: string): string | undefined {
  let best: { id: string; user: string } | undefined;
  for (const dir of [newDir(store, agent), curDir(store, agent), heldDir(store, agent)]) {
    for (const id of idsIn(store, dir)) {
      if (best && id < best.id) continue;
      const m = readMessageFile(store, msgFile(dir, id), id, "read");
      if (typeof m === "object" && m.from === from) best = { id, user: m.user };
    }
  }
  return best?.user;
}

async function change(store: Store, agent: string, edit: (p: Policy) => Policy): Promise<Policy> {
  checkAgent(agent);
  ensureInbox(store, agent, true);
  // In a shared store only the inbox's owner writes a policy others will trust.
  const owner = inboxOwner(store, agent);
  if (owner !== undefined && !speaksFor(store, myUid(), owner)) {
    throw new A2AError("EDENIED", `the inbox of ${agent} (${inboxDir(store, agent)}) belongs to OS user ${userName(store, owner)}, not to you: a policy you write would not be trusted; if ${agent} is yours, have the store's administrator give it to you (chown -R ${userName(store, myUid())} ${inboxDir(store, agent)})`, {
      data: { agent, owner: userName(store, owner) },
    });
  }
  return withLock(store, `@policy.${agent}`, () => {
    const next = { ...edit(readPolicy(store, agent)), updated_at: nowSec() };
    writeAtomic(store, policyFile(store, agent), JSON.stringify(next) + "\n");
    return next;
  });
}

export const setPolicyMode = (store: Store, agent: string, mode: PolicyMode) =>
  change(store, agent, (p) => ({ ...p, mode: checkMode(mode) }));

// Allows `names` (taking them off the deny list) and moves their held mail back to unread.
export interface Allowed {
  name: string;
  user?: string; // the OS user it is bound to
  bound_from: "given" | "last message" | "unbound"; // where the binding came from
}

// Allows senders ("NAME" or "NAME@USER"), taking them off the deny list, binds each to an OS
// user (the one given, else the one seen on NAME's last message here, else none), and moves
// their held mail that now passes back to unread.
export async function allowSenders(store: Store, agent: string, specs: string[]): Promise<{ policy: Policy; released: number; allowed: Allowed[] }> {
  const parsed = specs.map(parseSender);
  checkAgent(agent);
  const allowed: Allowed[] = parsed.map(({ name, user }) => {
    if (user) return { name, user, bound_from: "given" };
    const seen = lastUserOf(store, agent, name);
    return seen ? { name, user: seen, bound_from: "last message" } : { name, bound_from: "unbound" };
  });
  const names = allowed.map((a) => a.name);
  const policy = await change(store, agent, (p) => {
    const bind = { ...(p.bind ?? {}) };
    for (const a of allowed) if (a.user) bind[a.name] = a.user;
    return {
      ...p,
      allow: [...new Set([...p.allow, ...names])].sort(),
      deny: p.deny.filter((n) => !names.includes(n)),
      bind,
    };
  });
  let released = 0;
  ensureInbox(store, agent, true);
  for (const id of idsIn(store, heldDir(store, agent))) {
    const m = readMessageFile(store, msgFile(heldDir(store, agent), id), id, "held");
    if (typeof m === "object" && accepts(policy, m.from, m.user)) {
      // False: released by a concurrent `allow`.
      if (moveMessage(store, msgFile(heldDir(store, agent), id), msgFile(newDir(store, agent), id), `releasing message ${id}`)) released++;
    }
  }
  return { policy, released, allowed };
}

// Refuses `names` from now on (taking them off the allow list); held and read mail stays.
export const denySenders = (store: Store, agent: string, names: string[]) => {
  names.forEach((n) => checkAgent(n, "sender name"));
  return change(store, agent, (p) => ({
    ...p,
    allow: p.allow.filter((n) => !names.includes(n)),
    deny: [...new Set([...p.deny, ...names])].sort(),
  }));
};
