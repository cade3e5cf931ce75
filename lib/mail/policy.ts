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

import { writeAtomic } from "../core/atomic";
import { type Store } from "../core/config";
import { ensureDir } from "../core/guard";
import { A2AError, arg, op, text } from "../core/errors";
import { readJsonLine } from "../core/fs";
import { withLock } from "../core/lock";
import { checkAgent, heldDir, inboxDir, msgFile, newDir, policyFile } from "../core/paths";
import { nowSec } from "../core/time";
import { ensureInbox, idsIn, moveMessage, readMessageFile } from "./message";

export type PolicyMode = "open" | "allowlist";

export interface Policy {
  a2a: 1;
  agent: string;
  mode: PolicyMode;
  allow: string[];
  deny: string[];
  updated_at: number | null;
}

export function checkMode(mode: unknown): PolicyMode {
  if (mode !== "open" && mode !== "allowlist") {
    throw new A2AError("EUSAGE", text`invalid policy ${JSON.stringify(mode)}: use open (anyone may write) or allowlist (only names given to ${op("allow")})`);
  }
  return mode;
}

const asPolicy = (p: any) =>
  p.a2a === 1 && (p.mode === "open" || p.mode === "allowlist") && Array.isArray(p.allow) && Array.isArray(p.deny) ? (p as Policy) : undefined;

export function readPolicy(store: Store, agent: string): Policy {
  checkAgent(agent);
  for (let i = 0; ; i++) {
    const r = readJsonLine(store, policyFile(store, agent), asPolicy);
    if (r.kind === "ok") return { ...r.value, agent };
    if (r.kind === "absent" && !r.stale) return { a2a: 1, agent, mode: "open", allow: [], deny: [], updated_at: null };
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

export function accepts(p: Policy, from: string): boolean {
  if (from === p.agent) return true;
  if (p.deny.includes(from)) return false;
  return p.mode === "open" || p.allow.includes(from);
}

async function change(store: Store, agent: string, edit: (p: Policy) => Policy): Promise<Policy> {
  checkAgent(agent);
  ensureDir(store, inboxDir(store, agent));
  return withLock(store, `@policy.${agent}`, () => {
    const next = { ...edit(readPolicy(store, agent)), updated_at: nowSec() };
    writeAtomic(store, policyFile(store, agent), JSON.stringify(next) + "\n");
    return next;
  });
}

export const setPolicyMode = (store: Store, agent: string, mode: PolicyMode) =>
  change(store, agent, (p) => ({ ...p, mode: checkMode(mode) }));

// Allows `names` (taking them off the deny list) and moves their held mail back to unread.
export async function allowSenders(store: Store, agent: string, names: string[]): Promise<{ policy: Policy; released: number }> {
  names.forEach((n) => checkAgent(n, "sender name"));
  const policy = await change(store, agent, (p) => ({
    ...p,
    allow: [...new Set([...p.allow, ...names])].sort(),
    deny: p.deny.filter((n) => !names.includes(n)),
  }));
  let released = 0;
  ensureInbox(store, agent);
  for (const id of idsIn(heldDir(store, agent))) {
    const m = readMessageFile(store, msgFile(heldDir(store, agent), id), id, "held");
    if (typeof m === "object" && accepts(policy, m.from)) {
      // False: released by a concurrent `allow`.
      if (moveMessage(store, msgFile(heldDir(store, agent), id), msgFile(newDir(store, agent), id), `releasing message ${id}`)) released++;
    }
  }
  return { policy, released };
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
