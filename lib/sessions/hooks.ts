// What the session hooks (`a2a hook EVENT`) know of a session, and the little they remember
// between calls: what waits (mail, claimable tasks), what is new since the last prompt, and
// whether a stop is held. The facts only: how they are said to Claude Code is
// cli/agents/hook-text.ts. In lib/sessions/ because it joins mail and the task queues.
//
//   session record   {"a2a":1,"name":N,"announced":[ID...],"blocked":[ID...],"blocks":K,"serves":[Q...]}
//                    (kept by the engine, lib/sessions/storage.ts; on files sessions/NAME.json)
//     announced  the unread messages a prompt hook has shown (unread ones not in it are "new"):
//                a set, not a newest id, because ids carry their sender's clock, and a sender
//                whose clock lags would write ids below the newest one shown, never "new";
//                what is read leaves the set at its next write, so it stays within the unread
//     blocked    the unread ids (and the claimable tasks' oldest ids) the last Stop block was
//                about; blocks: consecutive blocks
//     serves     the queues the session asked to claim from (MCP task_claim, serveQueue): the
//                only ones whose claimable tasks hold a worker's stop, the newest SERVES_MAX
//     state, task, wake   the session's state mark (state.ts), its task, a2a's wakes of it
//                (wake-rule.ts): kept through every write here
//
// Invariants:
// - reading mail here never moves it: what a hook shows stays unread until check_messages
//   (or reply, ack) reads it, so a hook cannot lose a message;
// - the hot path writes nothing: the record is written only when something new was shown or
//   a stop was blocked (or a run of blocks ended);
// - never a loop: after a continuation (stop_hook_active) a stop is not blocked again for the
//   same unread mail and claimable tasks, and never more than MAX_BLOCKS (or the worker's cap)
//   times in a row; a model that cannot or will not read its mail (or claim) is let go, and so is
//   a session with nothing to do; tasks in queues the session does not serve never hold it;
// - the record is this OS user's own: in a shared store one another member wrote under the
//   name (the engine says who wrote it, and will not replace it) is ignored and never written over;
//   the hooks then remember nothing (every prompt announces all unread mail, and a stop after
//   a continuation is never blocked), and `a2a doctor` names the file.

import { MAX_BLOCKS, SHOWN_MAX } from "./limits";
import type { Store } from "../core/config";
import type { Outcome } from "../core/outcome";
import { waitUntil } from "../core/watch";
import { ensureInbox, waitingFor, withBodies, type Waiting } from "../mail/inbox";
import { isMessageId, type ListedMessage, type ReceivedMessage } from "../mail/message";
import { claimable } from "../tasks/query";
import { isTaskId, isValidName } from "../core/names";
import { markOf } from "./mark";
import { wakeOf } from "./wake-rule";
import { sessionStorage, type SessionRecord as StoredRecord } from "./storage";

export { MAX_BLOCKS, SHOWN_MAX };
const NAMED_MAX = 20; // messages whose senders a hook names ("from alice, bob and others")
const BODY_MAX = 1500; // characters of each shown message (the context stays a few KB)
const SERVES_MAX = 20; // queues a session is remembered to serve

export interface SessionRecord extends StoredRecord {
  theirs?: string; // not written: the OS user whose record sits under this name, not ours
}

// Work waiting in a queue (lib/tasks): how many tasks could be claimed now, the oldest first.
export interface ClaimableTask {
  queue: string;
  id: string; // the oldest claimable task
  title: string; // "3 claimable"
}

// What could be claimed now, per queue: of `queues` (none: nothing), or of every queue.
export async function claimableTasks(store: Store, queues?: string[]): Promise<ClaimableTask[]> {
  if (queues && !queues.length) return [];
  return (await claimable(store, queues)).map((q) => ({ queue: q.queue, id: q.oldest_id, title: `${q.claimable} claimable` }));
}

// The session `name` serves `queue` (it asked to claim from it): remembered, so its worker stop
// counts that queue's tasks. Writes only when the queue is new to the record.
export async function serveQueue(store: Store, name: string, queue: string): Promise<void> {
  const rec = await readRecord(store, name);
  if (rec.serves!.includes(queue) || !isValidName(queue)) return;
  await writeRecord(store, { ...rec, serves: [...rec.serves!, queue].slice(-SERVES_MAX) });
}

export async function readRecord(store: Store, name: string): Promise<SessionRecord> {
  const r = await sessionStorage(store).read(name);
  const fresh: SessionRecord = { a2a: 1, name, announced: [], blocked: [], blocks: 0, serves: [] };
  // Trusted only when written by this user (or one who speaks for us): damage is judged by its writer too.
  const writer = r.kind === "absent" ? undefined : r.writer;
  if (writer && !writer.ours) return { ...fresh, theirs: writer.user };
  if (r.kind !== "ok") return fresh; // none yet, or damaged: starting over only repeats an announcement
  const v = r.record;
  return {
    ...fresh,
    announced: Array.isArray(v.announced) ? v.announced.filter(isMessageId) : [], // an earlier release's newest id: announce again once
    blocked: Array.isArray(v.blocked) ? v.blocked.filter((id) => isMessageId(id) || isTaskId(id)) : [],
    blocks: Number.isInteger(v.blocks) && v.blocks > 0 ? v.blocks : 0,
    serves: Array.isArray(v.serves) ? v.serves.filter((q) => typeof q === "string" && isValidName(q)).slice(-SERVES_MAX) : [],
    ...(markOf(v.state) ? { state: markOf(v.state) } : {}),
    ...(wakeOf(v.wake) ? { wake: wakeOf(v.wake) } : {}),
    ...(v.task && isValidName(v.task.queue) && isTaskId(v.task.id) ? { task: { queue: v.task.queue, id: v.task.id } } : {}),
  };
}

// A record another user wrote is never written over: the hooks remember nothing this time. One
// planted after it was read is refused by the engine, and met the same way (write resolves false).
export async function writeRecord(store: Store, { theirs, ...rec }: SessionRecord): Promise<void> {
  if (theirs !== undefined) return;
  await sessionStorage(store).write(rec);
}

// What waits costs a hook its count, not its bytes: ids by name (lib/mail/inbox.ts waitingFor);
// the few messages it names or shows are read then, and only their ends.
async function senders(mail: Waiting): Promise<Senders> {
  const names = [...new Set((await mail.heads(mail.ids.slice(0, NAMED_MAX))).map((m) => m.from))];
  return { names, more: mail.ids.length > NAMED_MAX };
}

// Who sent what waits: the senders of the oldest NAMED_MAX messages, and whether there are more.
export interface Senders {
  names: string[];
  more: boolean;
}

export interface SessionStartReport {
  unread: number;
  senders: Senders;
  tasks: ClaimableTask[];
}

// SessionStart: what waits for the session.
export async function sessionStart(store: Store, name: string): Promise<SessionStartReport> {
  const mail = await waitingFor(store, name);
  return { unread: mail.ids.length, senders: await senders(mail), tasks: await claimableTasks(store) };
}

export interface PromptReport {
  count: number; // unread and not shown by a prompt hook before
  shown: ListedMessage[]; // the oldest SHOWN_MAX of them, bodies cut to BODY_MAX (`truncated`)
  theirs?: { file: string; user: string }; // the session record is another OS user's: nothing is remembered
}

// UserPromptSubmit: the unread mail that arrived since the last prompt (nothing moves: it
// stays unread), and remembers it was shown.
export async function promptSubmit(store: Store, name: string): Promise<PromptReport> {
  const rec = await readRecord(store, name);
  const mail = await waitingFor(store, name);
  const shownBefore = new Set(rec.announced);
  const freshIds = mail.ids.filter((id) => !shownBefore.has(id));
  if (!freshIds.length) return { count: 0, shown: [] };
  const shown = await withBodies(store, name, await mail.heads(freshIds.slice(0, SHOWN_MAX)), BODY_MAX);
  await writeRecord(store, { ...rec, announced: mail.ids });
  return { count: freshIds.length, shown, ...(rec.theirs ? { theirs: { file: sessionStorage(store).locate(name), user: rec.theirs } } : {}) };
}

// Why a stop is let go, when it is; the adapter words it.
export type LetGo =
  | { kind: "nothing-waits" }
  | { kind: "no-memory"; file: string; user: string } // a continuation, and the record is another user's
  | { kind: "same-mail" } // a continuation, and the mail (and claimable tasks) are what the last block was about
  | { kind: "blocked-enough"; times: number };

export type StopDecision =
  | { block: true; unread: number; senders: Senders; tasks: ClaimableTask[] }
  | { block: false; unread: number; letGo: LetGo };

// Stop: block while unread mail waits (see the invariants on loops).
// `worker`: claimable tasks of the queues the session serves keep it going too (stop --wait);
// otherwise only mail does, so a lead that queued work can still stop.
export async function stopDecision(store: Store, name: string, continuation: boolean, maxBlocks = MAX_BLOCKS, worker = false): Promise<StopDecision> {
  const rec = await readRecord(store, name);
  const mail = await waitingFor(store, name);
  const unread = mail.ids.length;
  const tasks = worker ? await claimableTasks(store, rec.serves) : [];
  if (!unread && !tasks.length) {
    if (rec.blocks || rec.blocked.length) await writeRecord(store, { ...rec, blocked: [], blocks: 0 });
    return { block: false, unread: 0, letGo: { kind: "nothing-waits" } };
  }
  if (continuation && rec.theirs) return { block: false, unread, letGo: { kind: "no-memory", file: sessionStorage(store).locate(name), user: rec.theirs } };
  const ids = [...mail.ids, ...tasks.map((t) => t.id)];
  const blockedBefore = new Set(rec.blocked);
  const same = ids.length > 0 && ids.every((id) => blockedBefore.has(id));
  if (continuation && same) return { block: false, unread, letGo: { kind: "same-mail" } };
  if (continuation && rec.blocks >= maxBlocks) {
    await writeRecord(store, { ...rec, blocked: [], blocks: 0 });
    return { block: false, unread, letGo: { kind: "blocked-enough", times: maxBlocks } };
  }
  await writeRecord(store, { ...rec, blocked: ids, blocks: continuation ? rec.blocks + 1 : 1 });
  return { block: true, unread, senders: await senders(mail), tasks };
}

// A worker's Stop: when nothing waits, wait up to `timeoutMs` for the next unread message or
// claimable task of a queue it serves before deciding (the queues are looked at on each inbox
// event and every second). The inbox is created if missing.
export async function waitForWork(store: Store, name: string, timeoutMs: number, signal?: AbortSignal): Promise<Outcome<ReceivedMessage | ClaimableTask | undefined>> {
  await ensureInbox(store, name);
  const serves = (await readRecord(store, name)).serves;
  const first = async () => {
    const mail = await waitingFor(store, name);
    return (await mail.heads(mail.ids.slice(0, 1)))[0] ?? (await claimableTasks(store, serves))[0];
  };
  return waitUntil(store, { on: "inbox", agent: name }, first, { timeoutMs, signal, recheckMs: 1000 });
}
