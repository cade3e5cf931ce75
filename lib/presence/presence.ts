// Presence of this process as a peer (lib/presence/peers.ts has the record and the liveness rules):
// take a name, keep the heartbeat, remove the file on close or exit.
//
// Steps:
//   1. the name: $A2A_AGENT if set (used even while another live process holds it: they share
//      the inbox, and the newer presence file wins); else, in order, the names remembered for
//      this directory (lib/presence/identity.ts), then NAME, NAME-2, NAME-3, ... from the directory;
//   2. take a candidate: create peers/NAME.json exclusively (lib/core/atomic.ts createAtomic); on
//      EEXIST a live holder means "next candidate", a gone one is swept (lib/presence/peers.ts) and the
//      name retried once; the name taken is remembered for the directory;
//   3. every heartbeat_ms: replace the file with a fresh heartbeat if it is still ours, create
//      it again if it vanished (swept while we were frozen), leave it if another holder took it;
//   4. close() (and a process 'exit' hook): remove the file if it is still ours.

import { resolve } from "node:path";
import { createAtomic, writeAtomic } from "../core/atomic";
import { type Store } from "../core/config";
import { ensureDir, removeFile } from "../core/guard";
import { A2AError, ioError } from "../core/errors";
import { checkAgent, peerFile, peersDir } from "../core/paths";
import { nowSec } from "../core/time";
import { gitRoot, nameFromDirectory, rememberedNames, rememberName, withSuffix, type Identity } from "./identity";
import { isLive, readPeer, samePeer, sweep, type Peer } from "./peers";

export const MAX_SUMMARY = 1000;

export interface PresenceOptions {
  cwd: string;
  summary?: string;
}

export interface Presence {
  readonly identity: Identity;
  record(): Peer;
  setSummary(summary: string): Peer;
  close(): void;
}

// Takes a name and announces it; keeps the heartbeat until close() (steps in the header).
export function startPresence(store: Store, opts: PresenceOptions): Presence {
  ensureDir(store, peersDir(store));
  const heartbeatMs = store.heartbeatMs;
  const cwd = resolve(opts.cwd);
  const now = nowSec();
  const base = (name: string): Peer => ({
    a2a: 1, name, host: store.host, pid: process.pid, cwd, git_root: gitRoot(cwd), tty: store.platform.terminalOf(process.ppid), // the terminal of whoever started us (our stdin is the MCP pipe)
    summary: opts.summary ?? "", started_at: now, heartbeat: now, heartbeat_ms: heartbeatMs,
  });
  let identity: Identity;
  let rec: Peer;
  if (store.agent) {
    // An explicit name is used even while another live process holds it: they share the inbox.
    identity = { name: checkAgent(store.agent, "A2A_AGENT name"), source: "A2A_AGENT" };
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
    const cur = readPeer(store, file);
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
      if (mine() === "mine") removeFile(store, file);
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
    const holder = readPeer(store, peerFile(store, p.name));
    if (holder && isLive(store, holder)) return false;
    if (holder) sweep(store, holder);
  }
  return false;
}
