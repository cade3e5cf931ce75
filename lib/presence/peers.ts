// Presence of running agents (`a2a mcp` servers): who is there, where, doing what. The record is
// record.ts; the engine keeps it (storage.ts; on files, peers/NAME.json: docs/FILE-ENGINE.md §9).
//
// Steps:
//   register: for each candidate name in order, take its record exclusively; if the name is
//     taken, a live holder means "next candidate", a gone one is swept and the name retried.
//   heartbeat: every heartbeat_ms the holder replaces its record with a fresh `heartbeat`, only
//     while the record is still its own (same host, pid, started_at); if it vanished, it is
//     taken again. (register, heartbeat and close: lib/presence/presence.ts)
//   live: heartbeat younger than 3 x heartbeat_ms and, on the same host, the pid exists.
//   sweep (by any lister): a record judged gone is removed, unless it turns out to have been
//     refreshed meanwhile (then it stays). Inboxes are never touched.
//   close: the holder removes its own record (also from a process 'exit' hook).

import { resolve } from "node:path";
import { DEFAULT_HEARTBEAT_MS, type Store } from "../core/config";
import { pidAlive } from "../core/holder";
import { byName } from "../core/names";
import { nowSec } from "../core/time";
import { gitRoot } from "./identity";
import type { Peer } from "./record";
import { checkScope, type Scope } from "./scope";
import { presenceStorage } from "./storage";

export type { Peer };
export { checkScope, type Scope };

export function isLive(store: Store, p: Peer, now = nowSec()): boolean {
  if ((now - p.heartbeat) * 1000 > 3 * (p.heartbeat_ms || DEFAULT_HEARTBEAT_MS)) return false;
  return p.host !== store.host || pidAlive(p.pid);
}

export interface Here {
  cwd: string;
  gitRoot?: string | null;
}

export interface PeerListing {
  peers: Peer[]; // live, in the scope, by name
  gone: Peer[]; // found stale and swept now (their inboxes are kept)
}

export async function listPeers(store: Store, scope: Scope, here: Here): Promise<PeerListing> {
  checkScope(scope);
  const storage = presenceStorage(store);
  const cwd = resolve(here.cwd);
  const root = here.gitRoot === undefined ? gitRoot(cwd) : here.gitRoot;
  const out: PeerListing = { peers: [], gone: [] };
  for (const p of await storage.list()) {
    if (!isLive(store, p)) {
      if (await storage.sweep(p)) out.gone.push(p);
      continue;
    }
    const inScope =
      scope === "all" ||
      (p.host === store.host &&
        (scope === "machine" || (scope === "directory" && p.cwd === cwd) || (scope === "repo" && root !== null && p.git_root === root)));
    if (inScope) out.peers.push(p);
  }
  out.peers.sort((a, b) => byName(a.name, b.name));
  return out;
}
