// Presence of this process as a peer (lib/presence/peers.ts has the liveness rules, record.ts
// the record, storage.ts what the engine keeps): take a name, keep the heartbeat, remove the
// record on close or exit.
//
// Steps:
//   1. the name: $A2A_AGENT if set (used even while another live process holds it: they share
//      the inbox, and the newer presence record wins); else, in order, the names remembered for
//      this directory (lib/presence/identity.ts), then NAME, NAME-2, NAME-3, ... from the directory;
//   2. take a candidate: create its record exclusively (storage `take`); if the name is taken, a
//      live holder means "next candidate", a gone one is swept (storage `sweep`) and the name
//      retried once; the name taken is remembered for the directory;
//   3. every heartbeat_ms: replace the record with a fresh heartbeat if it is still ours, create
//      it again if it vanished (swept while we were frozen), leave it if another holder took it;
//   4. close() (and a process 'exit' hook): remove the record if it is still ours. close() waits
//      for a heartbeat in flight first, so none lands after it; the 'exit' hook, where nothing
//      asynchronous runs any more, uses the engine's synchronous `removeAtExit`.

import { resolve } from "node:path";
import { type Store } from "../core/config";
import { A2AError, ioError } from "../core/errors";
import { checkAgent } from "../core/names";
import { nowSec } from "../core/time";
import { gitRoot, nameFromDirectory, rememberedNames, rememberName, withSuffix, type Identity } from "./identity";
import { isLive, type Peer } from "./peers";
import { presenceStorage, type PresenceStorage } from "./storage";

export const MAX_SUMMARY = 1000;
const MAX_CLIENT = 200;

export interface PresenceOptions {
  cwd: string;
  summary?: string;
}

export interface Presence {
  readonly identity: Identity;
  record(): Peer;
  setSummary(summary: string): Promise<Peer>;
  // Which program this session is (the MCP client's "NAME VERSION"), said once it is known.
  setClient(client: string): Promise<void>;
  close(): Promise<void>;
}

// Takes a name and announces it; keeps the heartbeat until close() (steps in the header).
export async function startPresence(store: Store, opts: PresenceOptions): Promise<Presence> {
  const storage = presenceStorage(store);
  const heartbeatMs = store.heartbeatMs;
  const cwd = resolve(opts.cwd);
  const now = nowSec();
  const base = (name: string): Peer => ({
    a2a: 1, name, host: store.host, pid: process.pid, cwd, git_root: gitRoot(cwd), tty: store.platform.terminalOf(process.ppid), // the terminal of whoever started us (our stdin is the MCP pipe)
    summary: opts.summary ?? "", started_at: now, heartbeat: now, heartbeat_ms: heartbeatMs, client: null,
  });
  let identity: Identity;
  let rec: Peer;
  if (store.agent) {
    // An explicit name is used even while another live process holds it: they share the inbox.
    identity = { name: checkAgent(store.agent, "A2A_AGENT name"), source: "A2A_AGENT" };
    rec = base(identity.name);
    await storage.put(rec);
  } else {
    const derived = nameFromDirectory(cwd);
    const candidates = [...(await rememberedNames(store, cwd)), ...Array.from({ length: 1000 }, (_, i) => withSuffix(derived, i + 1))];
    let taken: string | undefined;
    for (const name of candidates) {
      if (await take(store, storage, base(name))) {
        taken = name;
        break;
      }
    }
    if (!taken) throw new A2AError("ECONFLICT", `every name for ${cwd} is held by a live peer: set A2A_AGENT to choose one`);
    identity = { name: taken, source: "directory" };
    rec = base(taken);
    await rememberName(store, cwd, taken);
  }
  // One heartbeat at a time: close() waits for the one in flight, so no beat lands after it.
  let beating: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    rec = { ...rec, heartbeat: nowSec() };
    beating = beating.then(() => storage.beat(rec)).catch(() => {
      // a transient storage error: the next beat retries
    });
  }, heartbeatMs);
  timer.unref?.();
  const atExit = () => storage.removeAtExit(rec);
  process.on("exit", atExit);
  return {
    identity,
    record: () => rec,
    async setSummary(summary: string) {
      if (typeof summary !== "string" || summary.length > MAX_SUMMARY) {
        throw new A2AError("EUSAGE", `the summary is over ${MAX_SUMMARY} characters: say in a sentence or two what you are working on`);
      }
      rec = { ...rec, summary, heartbeat: nowSec() };
      await storage.beat(rec);
      return rec;
    },
    async setClient(client: string) {
      rec = { ...rec, client: client.slice(0, MAX_CLIENT), heartbeat: nowSec() };
      await storage.beat(rec);
    },
    async close() {
      clearInterval(timer);
      process.off("exit", atExit);
      await beating;
      try {
        await storage.remove(rec);
      } catch {
        // already gone
      }
    },
  };
}

// Creates `p`'s presence exclusively; sweeps a gone holder once. False when a live peer has it.
async function take(store: Store, storage: PresenceStorage, p: Peer): Promise<boolean> {
  for (let i = 0; i < 2; i++) {
    try {
      if (await storage.take(p)) return true;
    } catch (err) {
      throw ioError(err, `registering as ${p.name}`);
    }
    const holder = await storage.read(p.name);
    if (holder && isLive(store, holder)) return false;
    if (holder) await storage.sweep(holder);
  }
  return false;
}
