// The name a session has on the bus, as any process can work it out: the `a2a hook` commands
// and `a2a whoami` use this, so that mail sent to the name whoami prints is the mail the hooks
// announce and `a2a mcp` (lib/presence/presence.ts) reads. Read-only: nothing is written or swept.
//
// Steps, first match wins:
//   1. $A2A_AGENT (the Store's `agent`): the name, as a2a mcp uses it.
//   2. A live presence on this host, in this directory, whose process is a child of one of
//      our ancestors: the `a2a mcp` server of the same Claude Code session (Claude Code
//      spawns the server and the hooks as its children), so two sessions in one directory
//      ("proj" and "proj-2") each find their own name. The nearest ancestor wins; pid 1 never
//      counts (every orphan's parent).
//   3. What `a2a mcp` started here now would take: the first name remembered for this
//      directory, else NAME, NAME-2, ... from the git root's (or the directory's) basename,
//      skipping names a live peer holds.
// Ancestry comes from the platform (/proc on Linux); where it cannot tell (macOS), step 2 is
// skipped.

import { basename, resolve } from "node:path";
import type { Store } from "../core/config";
import type { Platform } from "../core/platform";
import { checkAgent } from "../core/names";
import { gitRoot, nameFromDirectory, optionalAgent, rememberedNames, withSuffix, type Identity } from "./identity";
import { isLive, type Peer } from "./peers";
import { presenceStorage } from "./storage";

export interface SessionName extends Identity {
  why: string; // one clause: where the name comes from
}

// This process's ancestors, nearest first, without pid 1 (only the parent where the platform
// cannot tell a process's parent).
export function ancestors(platform: Platform, limit = 32): number[] {
  const out: number[] = [];
  for (let pid: number | undefined = process.ppid; pid && pid > 1 && out.length < limit; pid = platform.parentPid(pid)) out.push(pid);
  return out;
}

export async function sessionName(store: Store, cwd: string, lineage: number[] = ancestors(store.platform)): Promise<SessionName> {
  if (store.agent) return { name: checkAgent(store.agent, "A2A_AGENT name"), source: "A2A_AGENT", why: "A2A_AGENT is set" };
  const storage = presenceStorage(store);
  const dir = resolve(cwd);
  const peers = (await storage.list()).filter((p) => isLive(store, p) && p.host === store.host && p.cwd === dir);
  let best: { peer: Peer; rank: number } | undefined;
  for (const peer of peers) {
    const parent = store.platform.parentPid(peer.pid);
    const rank = parent === undefined ? -1 : lineage.indexOf(parent);
    if (rank >= 0 && (!best || rank < best.rank)) best = { peer, rank };
  }
  if (best) return { name: best.peer.name, source: "session", why: `the a2a mcp server of this session (pid ${best.peer.pid}) holds it` };
  const ours = (peer: Peer) => peer.host === store.host && peer.cwd === dir && lineage.includes(store.platform.parentPid(peer.pid) ?? -1);
  // A name held since the listing above may be held by this session's own server, which started
  // meanwhile (a hook runs beside it at a session's start): then it is this session's name.
  let late: Peer | undefined;
  const heldHere = async (name: string) => {
    const p = await storage.read(name);
    if (!p || !isLive(store, p)) return false;
    if (ours(p)) late = p;
    return true;
  };
  let remembered: string | undefined;
  for (const n of await rememberedNames(store, dir)) {
    if (!(await heldHere(n))) {
      remembered = n;
      break;
    }
    if (late) return { name: late.name, source: "session", why: `the a2a mcp server of this session (pid ${late.pid}) holds it` };
  }
  if (remembered) return { name: remembered, source: "directory", why: `a2a mcp started in ${dir} takes it: remembered for this directory` };
  const derived = nameFromDirectory(dir);
  const root = gitRoot(dir);
  const from = root ? `the git root's name (${basename(root)})` : `the directory's name (${basename(dir)})`;
  for (let i = 1; i <= 1000; i++) {
    const name = withSuffix(derived, i);
    if (!(await heldHere(name))) return { name, source: "directory", why: `a2a mcp started in ${dir} takes it: from ${from}${i > 1 ? `, ${derived} being held by a live peer` : ""}` };
    if (late) return { name: late.name, source: "session", why: `the a2a mcp server of this session (pid ${late.pid}) holds it` };
  }
  return { name: derived, source: "directory", why: `from ${from}` };
}

// Who a command acts as, and who whoami says you are: the one rule. A name given (the CLI's
// --as), else $A2A_AGENT, else the session's name as above: in a Claude Code session's shell,
// the name its a2a mcp server holds, so `a2a recv` there reads the mail the hooks announce.
export async function actingAgent(store: Store, given: string | undefined, cwd: string): Promise<SessionName> {
  const id = optionalAgent(store, given);
  if (id) return { ...id, why: id.source === "given" ? "given" : "A2A_AGENT is set" };
  return sessionName(store, cwd);
}
