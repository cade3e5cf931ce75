// What the session hooks (hooks.ts) need from an engine: one small record per session name, what
// the hooks told that session, with the user who wrote it. The rules (what is new, when a stop
// is blocked, whose record is trusted) are the room's. docs/PROTOCOL.md §11 ("Session records")
// and §15 are the contract, docs/FILE-ENGINE.md §9 the file engine's layout.
//
// Invariants every engine keeps:
// - `read` sees a whole record or reports it damaged, never a wrong value, and says who wrote
//   it as the store vouches for it (on files the owner of the file, on PostgreSQL the role that
//   wrote the row) and whether that writer speaks for this process's user (on files: the same
//   OS user, or root, or any member of a private store): the room trusts a record by that,
//   never by what it says of itself;
// - `write` never replaces a record another user wrote in a store shared by several users; it
//   need not be durable (a record lost in a crash costs one announcement or stop block again).
// A separate interface from presence (lib/presence/storage.ts): another room, loaded in a chunk
// of its own, and its records are trusted by writer while peer records are not.

import type { Store } from "../core/config";

export interface SessionRecord {
  a2a: 1;
  name: string;
  announced: string[];
  blocked: string[];
  blocks: number;
  serves?: string[]; // the queues the session called task_claim on (a worker's stop counts only these)
  state?: StateMark; // what the session last said it is doing (lib/sessions/state.ts)
  task?: { queue: string; id: string }; // the task it claimed through a2a mcp, until it finished it
  wake?: WakeMark; // a2a's wakes of the idle session (lib/sessions/wake-rule.ts)
  thread?: string; // the agent's own id of the session, as its hooks give it (Codex: the thread `codex queue` takes)
}

// A session's own word on what it is doing: written by its hooks and its a2a mcp (state.ts).
// `since`: unix seconds, when it entered the state; `on`: what it waits on, or what it asks.
export interface StateMark {
  state: "working" | "idle" | "waiting" | "needs-you";
  since: number;
  on: string | null;
  // A wait in a shell: the process that waits, and the mark it found (what its end puts back),
  // so a waiter killed before it could put it back (SIGKILL) leaves no waiting mark behind.
  by?: { host: string; pid: number };
  was?: { state: "working" | "idle" | "needs-you"; since: number; on: string | null };
}

// What the wake rule (wake-rule.ts) keeps of a session's wakes: written by its a2a mcp when it
// wakes the session, the loop guard reset by the prompt hook when the user prompts.
export interface WakeMark {
  at: number; // unix seconds of the last wake (0: none yet)
  ids: string[]; // unread messages a wake was about (its batch, and earlier ones still unread)
  run: number; // wakes since the user last prompted
  held: boolean; // the loop guard has held a wake since then (said once)
  senders: Record<string, number[]>; // per sender, when its mail caused a wake (within the window)
}

// `writer`: who the store vouches wrote the record, and whether they speak for this process's
// user; absent when nothing says.
export interface Writer {
  user: string;
  ours: boolean;
}

export type SessionRead =
  | { kind: "ok"; record: SessionRecord; writer: Writer }
  | { kind: "absent" }
  | { kind: "damaged"; writer?: Writer }; // not a whole session record, or not readable by us

// A value read back as the session record of `name`, or undefined (damage: not a record, or
// another session's); fields unchecked beyond these, as `read` says.
export const sessionRecordOf = (v: any, name: string): SessionRecord | undefined =>
  v && typeof v === "object" && v.a2a === 1 && v.name === name ? (v as SessionRecord) : undefined;

export interface SessionStorage {
  // The record of session `name` (fields unchecked beyond `a2a` and `name`: the room checks them).
  read(name: string): Promise<SessionRead>;
  // Replaces the record of `record.name` with ours. Where another user's record holds the name
  // and the store will not let us replace it (a shared store), nothing is written and this
  // resolves false; any other failure rejects.
  write(record: SessionRecord): Promise<boolean>;
  // Where the record of `name` is kept, for a message that asks a person to look at it.
  locate(name: string): string;
}

// The store's session storage, as its engine keeps it (lib/engine/engine.ts).
export function sessionStorage(store: Store): SessionStorage {
  return store.engine.sessions;
}
