// "New unread mail for AGENT" as events, for adapters that push mail to a client (the MCP
// server's notifications/claude/channel). Built on the one watch primitive (lib/core/watch.ts
// watchChannel) on the inbox's channel.
//
// Invariants:
// - an event is not a delivery: nothing moves, the message stays unread until a reader
//   claims it (receive.ts) or it is acked (inbox.ts);
// - each message is announced at most once while it stays in new/; once it has left new/
//   (read, claimed, held) it is forgotten, so a message that returns to unread (a released or
//   recovered claim) is announced again. A claim and its release can both have happened before
//   their events are seen; the storage's arrival stamp (the file engine: the file's ctime,
//   which every rename updates) tells the return apart from the announced arrival;
// - only messages from senders the policy accepts are announced (held mail never is);
// - a listener whose promise rejects (the client was not reachable) has the message forgotten:
//   the next event or poll tick announces it again;
// - a scan (the start, every poll tick) announces at most SCAN_MAX messages, oldest first, so a
//   flooded inbox cannot flood the client; the unread count tells the rest;
// - events are handled one at a time, in order (each reads storage asynchronously), so one
//   message is never announced twice by two events racing.

import type { Store } from "../core/config";
import { watchChannel } from "../core/watch";
import { ensureInbox } from "./inbox";
import type { ReceivedMessage } from "./message";
import { humanMark } from "./human";
import { accepts, readGate } from "./policy";
import { mailStorage } from "./storage";

const SCAN_MAX = 50;

export type MailListener = (m: ReceivedMessage) => void | Promise<unknown>;

// Calls `listener` on every change the engine tells of among `agent`'s unread mail (an arrival
// or a return to unread; on files, a departure too; undefined: a tick or a watch put in place,
// anything may have changed) until the returned function is called. Nothing is read: a count
// kept by the caller (a front end's unread note) knows when to count again.
export function onInboxChange(store: Store, agent: string, listener: (id: string | undefined) => void): () => void {
  return watchChannel(store, { on: "inbox", agent }, listener);
}

// Calls `onMail` once for every unread message of `agent`, the ones already there first,
// until the returned function is called.
export async function watchInbox(store: Store, agent: string, onMail: MailListener, onError: (e: unknown) => void = () => {}): Promise<() => void> {
  await ensureInbox(store, agent, true);
  const mail = mailStorage(store);
  const announced = new Map<string, number>(); // id -> arrival of the message announced
  let closed = false;
  const announce = async (id: string) => {
    if (closed) return;
    const arrival = await mail.arrival(agent, id); // before the read: a later move shows as a newer arrival
    const m = await mail.read(agent, id, "unread");
    if (arrival === undefined || typeof m !== "object") return void announced.delete(id); // gone from unread, or torn: not yet
    const gate = await readGate(store, agent);
    if (announced.get(id) === arrival || !accepts(gate, m.from, m.user)) return;
    if (closed) return;
    announced.set(id, arrival);
    const forget = () => announced.get(id) === arrival && announced.delete(id);
    try {
      Promise.resolve(onMail({ ...m, state: "unread", ...humanMark(m, gate.owner) })).catch(forget);
    } catch {
      forget();
    }
  };
  const scan = async () => {
    const unread = await mail.ids(agent, "unread");
    const present = new Set(unread);
    for (const id of announced.keys()) if (!present.has(id)) announced.delete(id);
    for (const id of unread.slice(0, SCAN_MAX)) await announce(id);
  };
  // One event at a time (see the header); an error is the event's alone: a transient storage
  // error, covered by the next event or tick.
  let queue: Promise<void> = Promise.resolve();
  const told = (e: unknown) => {
    try {
      onError(e);
    } catch {
      // the listener's own failure must not stop the watch
    }
  };
  const handle = (work: () => Promise<void>) => {
    queue = queue.then(work).catch(told);
  };
  const unsubscribe = watchChannel(store, { on: "inbox", agent }, (id) => handle(() => (id === undefined ? scan() : announce(id))));
  handle(scan);
  await queue;
  return () => {
    closed = true;
    unsubscribe();
  };
}
