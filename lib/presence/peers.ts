// Presence of running agents (`a2a mcp` servers): who is there, where, doing what.
//
//   ROOT/peers/NAME.json   {"a2a":1,"name","host","pid","cwd","git_root","tty","summary",
//                           "started_at","heartbeat","heartbeat_ms"}   (times: unix seconds)
//
// Steps:
//   register: for each candidate name in order, create peers/NAME.json exclusively (link); on
//     EEXIST, a live holder means "next candidate", a gone one is swept and the name retried.
//   heartbeat: every heartbeat_ms the holder replaces its file with a fresh `heartbeat`, only
//     while the file is still its own (same host, pid, started_at); if it vanished, it is
//     recreated exclusively. (register, heartbeat and close: lib/presence/presence.ts)
//   live: heartbeat younger than 3 x heartbeat_ms and, on the same host, the pid exists.
//   sweep (by any lister): a file judged gone is renamed aside, re-checked, and removed; if it
//     turns out to have been refreshed meanwhile it is linked back. Inboxes are never touched.
//   close: the holder removes its own file (also from a process 'exit' hook).

import { linkSync } from "node:fs";
import { join, resolve } from "node:path";
import { DEFAULT_HEARTBEAT_MS, type Store } from "../core/config";
import { randomHex } from "../core/digest";
import { A2AError } from "../core/errors";
import { entries, readJsonLine } from "../core/fs";
import { moveFile, removeFile } from "../core/guard";
import { pidAlive } from "../core/owner";
import { byName, peerFile, peerNameOf, peersDir } from "../core/paths";
import { nowSec } from "../core/time";
import { gitRoot } from "./identity";

export interface Peer {
  a2a: 1;
  name: string;
  host: string;
  pid: number;
  cwd: string;
  git_root: string | null;
  tty: string | null;
  summary: string;
  started_at: number;
  heartbeat: number;
  heartbeat_ms: number;
}

import { checkScope, type Scope } from "./scope";

export { checkScope, type Scope };

// The presence record at `path`, or undefined: gone, torn on a caching network filesystem, or
// not a presence record.
export function readPeer(store: Store, path: string): Peer | undefined {
  const r = readJsonLine(store, path, (p) => (p.a2a === 1 && typeof p.name === "string" && typeof p.heartbeat === "number" ? (p as Peer) : undefined));
  return r.kind === "ok" ? r.value : undefined;
}

export const samePeer = (a: Peer, b: Peer) => a.host === b.host && a.pid === b.pid && a.started_at === b.started_at;

export function isLive(store: Store, p: Peer, now = nowSec()): boolean {
  if ((now - p.heartbeat) * 1000 > 3 * (p.heartbeat_ms || DEFAULT_HEARTBEAT_MS)) return false;
  return p.host !== store.host || pidAlive(p.pid);
}

// Removes a gone peer's presence unless it was refreshed meanwhile. True when removed.
// The file is renamed aside to a dot-name inside peers/ (skipped by every reader, never
// touched by gc), re-read there, and linked back if it turns out to be fresh after all.
export function sweep(store: Store, judged: Peer): boolean {
  const aside = join(peersDir(store), `.swept.${judged.name}.${process.pid}.${randomHex(4)}`);
  if (!moveFile(store, peerFile(store, judged.name), aside, `sweeping the presence of ${judged.name}`)) return false; // swept by someone else
  const now = readPeer(store, aside);
  const stale = !now || (samePeer(now, judged) && now.heartbeat === judged.heartbeat);
  if (!stale) {
    try {
      linkSync(aside, peerFile(store, judged.name));
    } catch {
      // the name was taken again meanwhile: the newer holder wins
    }
  }
  removeFile(store, aside);
  return stale;
}

export interface Here {
  cwd: string;
  gitRoot?: string | null;
}

export interface PeerListing {
  peers: Peer[]; // live, in the scope, by name
  gone: Peer[]; // found stale and swept now (their inboxes are kept)
}

export function listPeers(store: Store, scope: Scope, here: Here): PeerListing {
  checkScope(scope);
  const cwd = resolve(here.cwd);
  const root = here.gitRoot === undefined ? gitRoot(cwd) : here.gitRoot;
  const out: PeerListing = { peers: [], gone: [] };
  for (const f of entries(store, peersDir(store))) {
    if (!peerNameOf(f)) continue;
    const p = readPeer(store, join(peersDir(store), f));
    if (!p) continue;
    if (!isLive(store, p)) {
      if (sweep(store, p)) out.gone.push(p);
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
