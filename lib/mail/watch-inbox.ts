// "New unread mail for AGENT" as events, for adapters that push mail to a client (the MCP
// server's notifications/claude/channel). Built on the one watch primitive (lib/core/watch.ts
// subscribe) on the inbox's new/.
//
// Invariants:
// - an event is not a delivery: nothing moves, the message stays unread until a reader
//   claims it (receive.ts) or it is acked (inbox.ts);
// - each message is announced at most once while it stays in new/; once it has left new/
//   (read, claimed, held) it is forgotten, so a message that returns to unread (a released or
//   recovered claim) is announced again. A claim and its release can both have happened before
//   their events are seen; the file's ctime (which every rename updates) tells the return
//   apart from the announced arrival;
// - only messages from senders the policy accepts are announced (held mail never is);
// - a listener whose promise rejects (the client was not reachable) has the message forgotten:
//   the next event or poll tick announces it again;
// - a scan (the start, every poll tick) announces at most SCAN_MAX messages, oldest first, so a
//   flooded inbox cannot flood the client; the unread count tells the rest.

import { statSync } from "node:fs";
import type { Store } from "../core/config";
import { msgFile, newDir } from "../core/paths";
import { watchChannel } from "../core/watch";
import { ensureInbox, idsIn, readMessageFile, type ReceivedMessage } from "./message";
import { accepts, readPolicy } from "./policy";

const SCAN_MAX = 50;

export type MailListener = (m: ReceivedMessage) => void | Promise<unknown>;

// Calls `onMail` once for every unread message of `agent`, the ones already there first,
// until the returned function is called.
export function watchInbox(store: Store, agent: string, onMail: MailListener, onError: (e: unknown) => void = () => {}): () => void {
  ensureInbox(store, agent, true);
  const announced = new Map<string, number>(); // id -> ctime of the file announced
  let closed = false;
  const changed = (path: string) => {
    try {
      return statSync(path).ctimeMs;
    } catch {
      return undefined;
    }
  };
  const announce = (id: string) => {
    if (closed) return;
    const path = msgFile(newDir(store, agent), id);
    const ctime = changed(path); // before the read: a later move shows as a newer ctime
    const m = readMessageFile(store, path, id, "unread");
    if (ctime === undefined || typeof m !== "object") return void announced.delete(id); // gone from new/, or torn: not yet
    if (announced.get(id) === ctime || !accepts(readPolicy(store, agent), m.from, m.user)) return;
    announced.set(id, ctime);
    const forget = () => announced.get(id) === ctime && announced.delete(id);
    try {
      Promise.resolve(onMail(m)).catch(forget);
    } catch {
      forget();
    }
  };
  const scan = () => {
    const unread = idsIn(store, newDir(store, agent));
    const present = new Set(unread);
    for (const id of announced.keys()) if (!present.has(id)) announced.delete(id);
    unread.slice(0, SCAN_MAX).forEach(announce);
  };
  const unsubscribe = watchChannel(store, { on: "inbox", agent }, (id) => {
    try {
      if (id === undefined) return scan();
      announce(id);
    } catch (e) {
      onError(e); // a transient filesystem error: the next event or tick covers it
    }
  });
  try {
    scan();
  } catch (e) {
    onError(e);
  }
  return () => {
    closed = true;
    unsubscribe();
  };
}
