// A session's state: what its hooks and its a2a mcp last said it is doing (the mark, kept in its
// session record), joined with its presence (lib/presence) for whether it is there at all.
// docs/PROTOCOL.md §11 ("Session state") is the contract.
//
// Steps, who writes what:
//   1. the hooks: session-start marks idle; user-prompt-submit working; a stop that is let go
//      idle (a blocked one leaves working); notification (a permission prompt, a question to the
//      user) needs-you, on what it asks, and its answer (where the agent tells: opencode) working
//      again; a worker's stop --wait marks waiting while it waits;
//   2. a2a mcp: a blocking tool (agent_wait, task_claim wait, ...), and a blocking command in the
//      session's shell (a2a wait, recv --wait, task claim --wait: cli/shell-wait.ts), marks waiting, on what it
//      awaits, and puts the mark it found back when the wait ends (unless something else marked
//      the session meanwhile); at its start, a waiting mark an earlier holder left becomes idle;
//      a shell's waiting mark names its process and the mark it found: should the process die
//      (SIGKILL) before it puts that back, a reader on its host reads the mark as put back;
//   3. a mark equal to the one kept (same state, same `on`) writes nothing: `since` is when the
//      session entered the state, and a hook that changes nothing costs no write. A wait always
//      writes its mark (one an earlier holder left may read the same).
// Reader:
//   - a name with no live presence is gone (lib/presence/peers.ts isLive: on this host its pid is
//     looked at, so a killed session is gone at once; elsewhere after three missed heartbeats),
//     since its last heartbeat where its record is still there;
//   - a live one is in the state its mark says; with no mark (a client without hooks), idle since
//     its presence started. A waiting mark older than the presence is an earlier holder's: idle.
// A crash leaves the mark as it was; the presence tells the session is gone, and the next session
// of the name marks its own state from its start.

import type { Store } from "../core/config";
import type { Outcome } from "../core/outcome";
import { nowSec } from "../core/time";
import { waitUntil } from "../core/watch";
import { pidAlive } from "../core/holder";
import { checkAgent } from "../core/names";
import { isLive, listPeers, type Here, type Peer } from "../presence/peers";
import { actingAgent } from "../presence/session-name";
import type { Scope } from "../presence/scope";
import { presenceStorage } from "../presence/storage";
import { reservationStorage } from "../reservations/storage";
import { findTask } from "../tasks/state";
import { readRecord, writeRecord } from "./hooks";
import { mark, type LiveState, type SessionState, type StateMark } from "./mark";

export interface TaskRef {
  queue: string;
  id: string;
}

export interface StateView {
  state: SessionState;
  since: number | null; // unix seconds; null: a gone session nothing is left of
  on: string | null; // what it waits on or asks the user
  host: string | null; // where it runs (null: gone, nothing left of it)
}

// Marks session `name` as in `state` (on `on`); writes nothing when that is what its mark says.
// Returns the mark it found (for a wait to put back).
// `by`: the waiting mark is this process's (a shell's wait): it keeps the mark it found, for a
// reader to put back should the process die first.
export async function markState(store: Store, name: string, state: LiveState, on: string | null = null, by?: StateMark["by"]): Promise<StateMark | undefined> {
  const rec = await readRecord(store, name);
  const was = rec.state;
  if (was?.state === state && was.on === on && state !== "waiting") return was;
  const found = was && settled(store, was);
  // Another live wait's mark: what it found is what this one's would put back too.
  const before = found?.state === "waiting" ? found.was : found && { state: found.state, since: found.since, on: found.on };
  const keep = by ? { by, ...(before ? { was: before as StateMark["was"] } : {}) } : {};
  await writeRecord(store, { ...rec, state: { ...mark(state, nowSec(), on), ...keep } });
  return found;
}

// A shell's waiting mark whose process is gone (on this host) reads as what the wait's end would
// have put back: the mark it found, none (idle) when there was none.
function settled(store: Store, m: StateMark): StateMark | undefined {
  if (m.state !== "waiting" || !m.by || m.by.host !== store.host || pidAlive(m.by.pid)) return m;
  return m.was ? { ...m.was } : undefined;
}

// The user answered what session `name` asked (opencode's permission.replied): it works again,
// unless a hook marked it otherwise since (the turn ended: idle has the last word).
export async function markAnswered(store: Store, name: string): Promise<void> {
  const rec = await readRecord(store, name);
  if (rec.state?.state === "needs-you") await writeRecord(store, { ...rec, state: mark("working", nowSec(), null) });
}

// Ends a wait: puts `before` back (none: no mark, read as idle) while the mark is still `waiting`,
// the one the wait wrote; a hook that marked the session since has the last word.
export async function endWait(store: Store, name: string, before: StateMark | undefined): Promise<void> {
  const rec = await readRecord(store, name);
  if (rec.state?.state !== "waiting") return;
  const { state: _, ...rest } = rec;
  await writeRecord(store, before && before.state !== "waiting" ? { ...rest, state: before } : rest);
}

// A CLI wait in a session's shell (`a2a wait`, `recv --wait`, `task claim --wait`): marks the
// session it runs in waiting on `on`, and returns what endWait needs to put its mark back; none
// (nothing written) when the session cannot be told: only a name given, A2A_AGENT, or the a2a mcp
// of a session this process runs under counts (a name merely derived from the directory may be
// another terminal's), and only one a live session holds (a script's inbox is no session).
export async function markShellWait(store: Store, given: string | undefined, cwd: string, on: string): Promise<{ name: string; before: StateMark | undefined } | undefined> {
  const me = await actingAgent(store, given, cwd).catch(() => undefined);
  if (!me || me.source === "directory") return undefined;
  const peer = await presenceStorage(store).read(me.name).catch(() => undefined);
  if (!peer || !isLive(store, peer)) return undefined;
  return { name: me.name, before: await markState(store, me.name, "waiting", on, { host: store.host, pid: process.pid }) };
}

// The task session `name` holds now (`task`: one it claimed; null: it finished `done`, or none).
// Writes nothing when that is what the record says, or when it finished another task than its own.
export async function holdTask(store: Store, name: string, task: TaskRef | null, done?: string): Promise<void> {
  const rec = await readRecord(store, name);
  if (task === null ? !rec.task || (done !== undefined && rec.task.id !== done) : rec.task?.id === task.id) return;
  const { task: _, ...rest } = rec;
  await writeRecord(store, task ? { ...rest, task } : rest);
}

// The task a live session holds: the one it claimed last, while the task is still claimed by its
// name (a lease that ran out, a cancel, or a claim by another worker ends it), else null.
async function heldTask(store: Store, name: string, t: TaskRef | undefined): Promise<TaskRef | null> {
  if (!t) return null;
  try {
    const rec = await findTask(store, t.id);
    return rec.state === "claimed" && rec.claim?.assignee === name ? t : null;
  } catch {
    return null; // gone, or damaged: nothing to show
  }
}

// The state of a session with presence `peer` (undefined or not live: gone) and mark `m`.
export function stateOf(store: Store, peer: Peer | undefined, marked: StateMark | undefined): StateView {
  if (!peer || !isLive(store, peer)) return { state: "gone", since: peer?.heartbeat ?? null, on: null, host: peer?.host ?? null };
  const m = marked && settled(store, marked);
  if (!m || (m.state === "waiting" && m.since < peer.started_at)) return { state: "idle", since: peer.started_at, on: null, host: peer.host };
  return { state: m.state, since: m.since, on: m.on, host: peer.host };
}

export async function sessionState(store: Store, name: string): Promise<StateView> {
  checkAgent(name, "session name"); // a name no session can have is a mistake, not a session not started yet
  const [peer, rec] = await Promise.all([presenceStorage(store).read(name), readRecord(store, name)]);
  return stateOf(store, peer, rec.state);
}

export type PeerWithState = Peer & { state: SessionState; since: number | null; on: string | null; task: TaskRef | null; reserved: string[] };

// The patterns each name holds a live reservation on, in every repository (one read of each set).
// A set that cannot be read shows nothing: a listing of peers does not fail for it.
async function reservedBy(store: Store): Promise<Map<string, string[]>> {
  const by = new Map<string, string[]>();
  const storage = reservationStorage(store);
  const now = nowSec();
  try {
    for (const repo of await storage.repos()) {
      for (const r of await storage.live(repo)) if (r.expires_at > now) by.set(r.holder, [...(by.get(r.holder) ?? []), r.pattern]);
    }
  } catch {
    // damaged or unreadable: the peers are still listed
  }
  return by;
}

// `a2a peers`: the live peers (lib/presence/peers.ts listPeers: the gone ones swept) with each
// one's state, the task it holds and the paths it reserved.
export async function peersWithState(store: Store, scope: Scope, here: Here): Promise<{ peers: PeerWithState[]; gone: Peer[] }> {
  const l = await listPeers(store, scope, here);
  const reserved = l.peers.length ? await reservedBy(store) : new Map<string, string[]>();
  const peers = await Promise.all(l.peers.map(async (p) => {
    const rec = await readRecord(store, p.name);
    const { state, since, on } = stateOf(store, p, rec.state);
    return { ...p, state, since, on, task: await heldTask(store, p.name, rec.task), reserved: (reserved.get(p.name) ?? []).sort() };
  }));
  return { peers, gone: l.gone };
}

// Waits until session `name` is in one of `states`. A name nothing is known of yet is gone, so a
// wait for it to be idle waits for it to start (a script that has just launched it). Wakes on each
// change of the session's record and, every second, looks again: a process that dies writes
// nothing, and presence has no channel.
export function waitState(store: Store, name: string, states: SessionState[], o: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Outcome<StateView | undefined>> {
  checkAgent(name, "session name");
  const check = async () => {
    const v = await sessionState(store, name);
    return states.includes(v.state) ? v : undefined;
  };
  return waitUntil(store, { on: "session", name }, check, { timeoutMs: o.timeoutMs, signal: o.signal, recheckMs: 1000 });
}
