// Who may write to an agent's inbox. One record per agent, ROOT/inbox/AGENT/policy.json:
//   {"a2a":1,"agent":A,"mode":"open"|"allowlist","allow":[...],"deny":[...],"updated_at":T}
// No file means open with empty lists. `deny` refuses a sender in either mode; `allowlist`
// refuses everyone not in `allow`; an agent always accepts mail from itself.
//
// Enforced twice: at send (the sender gets EDENIED, nothing is written) and at receive (a
// message from a refused sender, e.g. one sent before the policy changed or written by hand,
// is moved to held/ and never shown; `allow` moves that sender's held mail back to new/).
// Changes are read-modify-write under the engine's exclusion (lib/mail/storage.ts
// changePolicy) and land whole. What this cannot stop: a process with write access to the store
// writing into new/ directly, or claiming another name (see the writer reported with each
// message). A policy the agent's owner did not write does not speak for it (the engine reads it
// as none).
//
// Mail from the person at the dashboard (lib/mail/human.ts) that counts (its writer is the
// inbox's owner) is never held back or refused, whatever the mode and lists say: it is the
// owner's own word, as the policy is. A message under that name from anyone else is ordinary
// mail, refused by an allowlist (no list can name it) and accepted by an open policy.

import { type Store } from "../core/config";
import { A2AError, arg, op, text } from "../core/errors";
import { checkAgent } from "../core/names";
import { nowSec } from "../core/time";
import { isHuman } from "./human";
import { mailStorage, type Place, type PolicyRead } from "./storage";

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

// The policy `r` holds for `agent`: none is open with empty lists; an invalid one is damage.
function policyOf(agent: string, r: PolicyRead): Policy {
  if (r.kind === "ok") return r.policy;
  if (r.kind === "none") return { a2a: 1, agent, mode: "open", allow: [], deny: [], updated_at: null };
  // Failing closed would silently drop mail; failing open would ignore the user's wish.
  throw new A2AError("EIO", text`the policy file ${r.where} is not valid: fix it or remove it (${op("policy", "open|allowlist", arg("as", agent))} rewrites it)`, {
    data: { agent, file: r.where },
  });
}

export async function readPolicy(store: Store, agent: string): Promise<Policy> {
  const { owner: _, ...p } = await readGate(store, agent);
  return p;
}

// A policy as the mail rules apply it: with the inbox's owner, whose dashboard mail it never
// refuses (never stored: `change` starts from the record alone), when that owner is the one
// reading (this process's writer). The owner is only whoever opened the inbox first (a sender's
// first message makes it on files; anyone's first read on either engine): its @human mail is
// the reader's user's own words only when the reader is that very user, so another user who
// got there first cannot have its words shown to the session as its user's.
export type Gate = Policy & { owner?: string };

export async function readGate(store: Store, agent: string): Promise<Gate> {
  checkAgent(agent);
  const mail = mailStorage(store);
  const r = await mail.policy(agent);
  const p = policyOf(agent, r);
  return r.kind !== "invalid" && r.owner !== undefined && r.owner === (await mail.writer()) ? { ...p, owner: r.owner } : p;
}

// The owner of `agent`'s inbox as the engine tells it (whoever it is), its policy checked valid.
export async function readOwner(store: Store, agent: string): Promise<string | undefined> {
  checkAgent(agent);
  const r = await mailStorage(store).policy(agent);
  policyOf(agent, r);
  return r.kind === "invalid" ? undefined : r.owner;
}

// What vouches for a writer, as messages name it: on files the OS user owning the file, on a
// database the role the server saw (lib/pg/); a binding is to one of those.
export type WriterKind = "OS user" | "role";
export const writerKind = (store: Store): WriterKind => store.engine.writer;

// Why `p` refuses mail claiming to be from `from`, written by `user` (an OS user or a role, as
// `kind` says; when known), or undefined when it accepts it.
export function refusal(p: Gate, from: string, user?: string, kind: WriterKind = "OS user"): string | undefined {
  if (isHuman({ from, user }, p.owner)) return undefined;
  const bound = p.bind?.[from];
  if (bound !== undefined && user !== undefined && user !== bound) {
    return `it claims to be from ${from}, who is bound to ${kind} ${bound}, but ${kind} ${user} wrote it`;
  }
  if (from === p.agent) return undefined;
  if (p.deny.includes(from)) return `${from} is on the deny list`;
  if (p.mode === "allowlist" && !p.allow.includes(from)) return `${from} is not on the allowlist`;
  return undefined;
}

export const accepts = (p: Gate, from: string, user?: string): boolean => refusal(p, from, user) === undefined;

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
async function lastUserOf(store: Store, agent: string, from: string): Promise<string | undefined> {
  const mail = mailStorage(store);
  let best: { id: string; user: string } | undefined;
  for (const place of ["unread", "read", "held"] as Place[]) {
    const ids = (await mail.ids(agent, place)).filter((id) => !best || id > best.id);
    for (const m of await mail.heads(agent, ids.map((id) => ({ id, at: place })), 0)) {
      if (typeof m === "object" && m.from === from && (!best || m.id > best.id)) best = { id: m.id, user: m.user };
    }
  }
  return best?.user;
}

async function change(store: Store, agent: string, edit: (p: Policy) => Policy): Promise<Policy> {
  checkAgent(agent);
  return mailStorage(store).changePolicy(agent, (current) => ({ ...edit(policyOf(agent, current)), updated_at: nowSec() }));
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
  const allowed: Allowed[] = [];
  for (const { name, user } of parsed) {
    const seen = user ? undefined : await lastUserOf(store, agent, name);
    allowed.push(user ? { name, user, bound_from: "given" } : seen ? { name, user: seen, bound_from: "last message" } : { name, bound_from: "unbound" });
  }
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
  const mail = mailStorage(store);
  for (const id of await mail.ids(agent, "held")) {
    const m = await mail.read(agent, id, "held");
    // False: released by a concurrent `allow`.
    if (typeof m === "object" && accepts(policy, m.from, m.user) && (await mail.move(agent, id, "held", "unread"))) released++;
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
