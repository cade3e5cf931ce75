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
//     recreated exclusively.
//   live: heartbeat younger than 3 x heartbeat_ms and, on the same host, the pid exists.
//   sweep (by any lister): a file judged gone is renamed aside, re-checked, and removed; if it
//     turns out to have been refreshed meanwhile it is linked back. Inboxes are never touched.
//   close: the holder removes its own file (also from a process 'exit' hook).

import { readFileSync, readlinkSync, renameSync, linkSync, unlinkSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { createAtomic, writeAtomic } from "./atomic";
import { A2AError, ioError } from "./errors";
import { gitRoot, nameFromDirectory, rememberedNames, rememberName, withSuffix, type Identity } from "./identity";
import { checkAgent, entries } from "./mailbox";
import { pidAlive } from "./owner";
import { tmpDir } from "./paths";
import { nowSec } from "./record";
import { ensureDir, type Store } from "./store";

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

export type Scope = "all" | "machine" | "directory" | "repo";
export const DEFAULT_HEARTBEAT_MS = 10_000;
export const MAX_SUMMARY = 1000;

const peersDir = (s: Store) => join(s.root, "peers");
const peerFile = (s: Store, name: string) => join(peersDir(s), name + ".json");

export function checkScope(scope: unknown): Scope {
  if (scope !== "all" && scope !== "machine" && scope !== "directory" && scope !== "repo") {
    throw new A2AError("EUSAGE", `invalid scope ${JSON.stringify(scope)}: use machine (this host), directory (same cwd), repo (same git root) or all`);
  }
  return scope;
}

function readPeer(path: string): Peer | undefined {
  try {
    const p = JSON.parse(readFileSync(path, "utf8"));
    return p && p.a2a === 1 && typeof p.name === "string" && typeof p.heartbeat === "number" ? p : undefined;
  } catch {
    return undefined; // gone, or torn on a caching network filesystem
  }
}

const samePeer = (a: Peer, b: Peer) => a.host === b.host && a.pid === b.pid && a.started_at === b.started_at;

export function isLive(store: Store, p: Peer, now = nowSec()): boolean {
  if ((now - p.heartbeat) * 1000 > 3 * (p.heartbeat_ms || DEFAULT_HEARTBEAT_MS)) return false;
  return p.host !== store.host || pidAlive(p.pid);
}

// Removes a gone peer's presence unless it was refreshed meanwhile. True when removed.
function sweep(store: Store, judged: Peer): boolean {
  ensureDir(store, tmpDir(store));
  const aside = join(tmpDir(store), `swept.${process.pid}.${randomBytes(4).toString("hex")}.json`);
  try {
    renameSync(peerFile(store, judged.name), aside);
  } catch {
    return false; // swept by someone else
  }
  const now = readPeer(aside);
  if (now && (!samePeer(now, judged) || now.heartbeat !== judged.heartbeat)) {
    try {
      linkSync(aside, peerFile(store, judged.name));
    } catch {
      // the name was taken again meanwhile: the newer holder wins
    }
  }
  unlinkSync(aside);
  return !now || (samePeer(now, judged) && now.heartbeat === judged.heartbeat);
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
  for (const f of entries(peersDir(store))) {
    if (!f.endsWith(".json")) continue;
    const p = readPeer(join(peersDir(store), f));
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
  out.peers.sort((a, b) => a.name.localeCompare(b.name));
  return out;
}

export function getPeer(store: Store, name: string): Peer | undefined {
  const p = readPeer(peerFile(store, checkAgent(name)));
  return p && isLive(store, p) ? p : undefined;
}

// The terminal of the process that started us (our own stdin is the MCP pipe), e.g. "pts/3".
function parentTty(): string | null {
  try {
    const t = readlinkSync(`/proc/${process.ppid}/fd/0`);
    return t.startsWith("/dev/") && /tty|pts/.test(t) ? t.slice(5) : null;
  } catch {
    return null;
  }
}

export interface PresenceOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  summary?: string;
  heartbeatMs?: number;
}

export interface Presence {
  readonly identity: Identity;
  record(): Peer;
  setSummary(summary: string): Peer;
  close(): void;
}

// Takes a name and announces it; keeps the heartbeat until close(). See the header for steps.
export function startPresence(store: Store, opts: PresenceOptions): Presence {
  ensureDir(store, peersDir(store));
  const heartbeatMs = opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const cwd = resolve(opts.cwd);
  const now = nowSec();
  const base = (name: string): Peer => ({
    a2a: 1, name, host: store.host, pid: process.pid, cwd, git_root: gitRoot(cwd), tty: parentTty(),
    summary: opts.summary ?? "", started_at: now, heartbeat: now, heartbeat_ms: heartbeatMs,
  });
  let identity: Identity;
  let rec: Peer;
  if (opts.env.A2A_AGENT) {
    // An explicit name is used even while another live process holds it: they share the inbox.
    identity = { name: checkAgent(opts.env.A2A_AGENT, "A2A_AGENT name"), source: "A2A_AGENT" };
    rec = base(identity.name);
    writeAtomic(store, peerFile(store, identity.name), JSON.stringify(rec) + "\n");
  } else {
    const derived = nameFromDirectory(cwd);
    const candidates = [...rememberedNames(store, cwd), ...Array.from({ length: 1000 }, (_, i) => withSuffix(derived, i + 1))];
    const taken = candidates.find((name) => take(store, base(name)));
    if (!taken) throw new A2AError("ECONFLICT", `every name for ${cwd} is held by a live peer: set A2A_AGENT to choose one`);
    identity = { name: taken, source: "directory" };
    rec = base(taken);
    rememberName(store, cwd, taken);
  }
  const file = peerFile(store, identity.name);
  const mine = () => {
    const cur = readPeer(file);
    return cur === undefined ? "absent" : samePeer(cur, rec) ? "mine" : "other";
  };
  const write = () => {
    const state = mine();
    if (state === "mine") writeAtomic(store, file, JSON.stringify(rec) + "\n");
    else if (state === "absent") createAtomic(store, file, JSON.stringify(rec) + "\n");
  };
  const timer = setInterval(() => {
    rec = { ...rec, heartbeat: nowSec() };
    try {
      write();
    } catch {
      // a transient filesystem error: the next beat retries
    }
  }, heartbeatMs);
  timer.unref?.();
  const remove = () => {
    try {
      if (mine() === "mine") unlinkSync(file);
    } catch {
      // already gone
    }
  };
  process.on("exit", remove);
  return {
    identity,
    record: () => rec,
    setSummary(summary: string) {
      if (typeof summary !== "string" || summary.length > MAX_SUMMARY) {
        throw new A2AError("EUSAGE", `the summary is over ${MAX_SUMMARY} characters: say in a sentence or two what you are working on`);
      }
      rec = { ...rec, summary, heartbeat: nowSec() };
      write();
      return rec;
    },
    close() {
      clearInterval(timer);
      process.off("exit", remove);
      remove();
    },
  };
}

// Creates `p`'s presence exclusively; sweeps a gone holder once. False when a live peer has it.
function take(store: Store, p: Peer): boolean {
  for (let i = 0; i < 2; i++) {
    try {
      if (createAtomic(store, peerFile(store, p.name), JSON.stringify(p) + "\n")) return true;
    } catch (err) {
      throw ioError(err, `registering as ${p.name}`);
    }
    const holder = readPeer(peerFile(store, p.name));
    if (holder && isLive(store, holder)) return false;
    if (holder) sweep(store, holder);
  }
  return false;
}
