// The file engine's presence storage (lib/presence/storage.ts): a peer is a file,
// peers/NAME.json, taken by an exclusive create (lib/fs/atomic.ts createAtomic: link, so of two
// takers exactly one gets it); the names remembered per directory are identities/HASH.json,
// HASH = first 16 hex of sha256(HOST "\0" CWD), replaced atomically. docs/FILE-ENGINE.md §9 is
// the layout.
//
// Invariants:
// - "ours" is read from the file just before a heartbeat's replace or a close's unlink, so a
//   holder never replaces or removes a record another holder wrote before that read;
// - a sweep renames the judged file aside first (one rename: of two sweepers, one gets it), so
//   a refreshed record that was swept by mistake can be linked back, and a new holder's never is
//   lost: a link does not replace;
// - peers/ and identities/ are not sticky in a shared store (any lister sweeps a dead peer):
//   these files say where an agent runs, never who it is.

import { linkSync } from "node:fs";
import { join, resolve } from "node:path";
import { createAtomic, writeAtomic } from "./atomic";
import type { Store } from "../core/config";
import { hashHex, randomHex } from "../core/digest";
import { entries, readJsonLine } from "./io";
import { ensureDir, moveFile, removeFile } from "./guard";
import { identitiesDir, identityFile as identityPath, peerFile, peerNameOf, peersDir } from "./paths";
import { encodePeer, peerOf, samePeer, type Peer } from "../presence/record";
import type { PresenceStorage } from "../presence/storage";

const encode = (p: Peer) => encodePeer(p) + "\n";

// The presence record at `path`, or undefined: gone, torn on a caching network filesystem, or
// not a presence record.
function readPeer(store: Store, path: string): Peer | undefined {
  const r = readJsonLine(store, path, peerOf);
  return r.kind === "ok" ? r.value : undefined;
}

const ours = (store: Store, p: Peer): "absent" | "mine" | "other" => {
  const cur = readPeer(store, peerFile(store, p.name));
  return cur === undefined ? "absent" : samePeer(cur, p) ? "mine" : "other";
};

// Removes our own file, synchronously (close, and the process 'exit' hook).
function removeOurs(store: Store, p: Peer): boolean {
  return ours(store, p) === "mine" && removeFile(store, peerFile(store, p.name));
}

// Removes a gone peer's presence unless it was refreshed meanwhile. True when removed.
// The file is renamed aside to a dot-name inside peers/ (skipped by every reader, never
// touched by gc), re-read there, and linked back if it turns out to be fresh after all.
function sweep(store: Store, judged: Peer): boolean {
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

const identityFile = (store: Store, host: string, cwd: string) => identityPath(store, hashHex("sha256", `${host}\0${resolve(cwd)}`).slice(0, 16));

export function filePresence(store: Store): PresenceStorage {
  return {
    take: async (p) => {
      ensureDir(store, peersDir(store));
      return createAtomic(store, peerFile(store, p.name), encode(p));
    },
    put: async (p) => {
      ensureDir(store, peersDir(store));
      writeAtomic(store, peerFile(store, p.name), encode(p));
    },
    beat: async (p) => {
      const state = ours(store, p);
      if (state === "mine") writeAtomic(store, peerFile(store, p.name), encode(p));
      else if (state === "absent") createAtomic(store, peerFile(store, p.name), encode(p));
    },
    remove: async (p) => removeOurs(store, p),
    removeAtExit: (p) => {
      try {
        removeOurs(store, p);
      } catch {
        // already gone, or the store went with the process
      }
    },
    read: async (name) => readPeer(store, peerFile(store, name)),
    names: async () => entries(store, peersDir(store)).map(peerNameOf).filter((n): n is string => !!n),
    list: async () => {
      const out: Peer[] = [];
      for (const f of entries(store, peersDir(store))) {
        if (!peerNameOf(f)) continue;
        const p = readPeer(store, join(peersDir(store), f));
        if (p) out.push(p);
      }
      return out;
    },
    sweep: async (judged) => sweep(store, judged),
    remembered: async (host, cwd) => {
      const r = readJsonLine(store, identityFile(store, host, cwd), (v) => (Array.isArray(v.names) ? (v.names as unknown[]) : undefined));
      return r.kind === "ok" ? (r.value.filter((n) => typeof n === "string") as string[]) : []; // none yet (or unreadable: a fresh name is harmless)
    },
    remember: async (host, cwd, names) => {
      ensureDir(store, identitiesDir(store));
      writeAtomic(store, identityFile(store, host, cwd), JSON.stringify({ a2a: 1, host, cwd: resolve(cwd), names }) + "\n");
    },
    identities: async () => {
      const out: { host: string; cwd: string; names: string[] }[] = [];
      for (const f of entries(store, identitiesDir(store))) {
        const r = readJsonLine(store, join(identitiesDir(store), f), (v) =>
          typeof v.host === "string" && typeof v.cwd === "string" && Array.isArray(v.names) ? (v as { host: string; cwd: string; names: unknown[] }) : undefined);
        if (r.kind === "ok") out.push({ host: r.value.host, cwd: r.value.cwd, names: r.value.names.filter((n): n is string => typeof n === "string") });
      }
      return out;
    },
  };
}
