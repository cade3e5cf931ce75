// The session of one `a2a mcp` server: who it is on the bus and what waits for it. Built
// before any tool is registered and passed to every tool group in the context (McpCtx).
//
// Invariants:
// - one session, one identity: the presence name (lib/presence/presence.ts: $A2A_AGENT, else
//   derived from the working directory) is the name every tool posts as (send_message, reply,
//   publish_topic, agent_send without an explicit sender) and the one whoami shows;
// - the inbox of that name exists from the start, so pushes and check_messages never race
//   its creation;
// - close() removes the presence (a server outliving its client is a ghost peer);
// - a blocking tool marks the session waiting while it blocks (lib/sessions/state.ts): the first
//   of several waits at once marks it, the last one to end puts back the mark found before; at
//   the start, a waiting mark an earlier holder of the name left is put back to idle;
// - a call that answers within MARK_AFTER_MS (refused arguments, a value already there) never
//   blocked and writes nothing: a refused call leaves the store as it was;
// - the unread note counts every message whose delivery ended before the call was made: its
//   count is started when the call starts, beside the tool's own work (one query, not one in
//   front of the answer), and taken again after that work when the engine told of a change in
//   the inbox meanwhile (bus.mail.onChange: an arrival, a return to unread, a tick, a watch put
//   back in place) or when the tool read or changed this session's inbox. A wait's answer so
//   announces the mail that came during it: on one watch, mail is told of before the later
//   publish that ends the wait. What the note may lag behind (docs/PROTOCOL.md §22) is mail
//   read by another reader while the call ran: on PostgreSQL a read is told of by no
//   notification, so only the engine's tick (2 s) bounds it; on files the read's rename is an
//   event. The note is then high, never low. Counting after the work cost every answer on a
//   database two round trips in front of it (issue 34: agent_wait's wake).

import type { Bus } from "../../lib/bus";

const MARK_AFTER_MS = 100;
import type { Identity } from "../../lib/presence/identity";
import type { Presence } from "../../lib/presence/presence";

export interface Session {
  readonly me: string; // the session's agent name
  readonly identity: Identity;
  readonly presence: Presence;
  readonly cwd: string;
  // Starts counting the unread mail now; the function returned gives the note for an answer
  // built later: "2 unread messages: call check_messages", or "" when nothing waits (mail being
  // read right now by this or another reader does not count). It counts again when the inbox
  // changed since (see the header).
  unreadNote(): () => Promise<string>;
  // Runs `wait` with the session marked waiting on what `on` says (a marking that fails is
  // logged, never fails the tool).
  waiting<T>(on: () => string | Promise<string>, wait: () => Promise<T>): Promise<T>;
  // Runs `write`, a change of this session's record (the task it holds, the queues it serves),
  // after the marks and changes before it: two read-modify-writes of one record never cross.
  // A failure is logged as `what`, never thrown.
  update(what: string, write: () => Promise<unknown>): Promise<void>;
  // Removes the presence (waiting for a heartbeat in flight). The process 'exit' hook that
  // lib/presence/presence.ts keeps until then removes it synchronously if this never runs.
  close(): Promise<void>;
}

export async function openSession(bus: Bus, cwd: string, log: (line: string) => void = () => {}): Promise<Session> {
  const presence = await bus.presence.start({ cwd });
  const me = presence.identity.name;
  await bus.mail.ensureInbox(me, true);
  // The changes the engine told of in the inbox: a count started before one is taken again. The
  // watch starts with the first note (a session without check_messages never watches), and a
  // count started before it was up is taken again too.
  let seen = 0;
  let watched = false;
  let watch: Promise<() => void> | undefined;
  const watching = () =>
    (watch ??= bus.mail.onChange(me, () => void seen++).then(
      (off) => {
        watched = true;
        return off;
      },
      (e) => {
        watch = undefined; // the next note tries again
        throw e;
      },
    ));
  const count = () => bus.mail.unread(me, false);
  const marking = (what: string) => (e: unknown) => log(`marking the session ${what}: ${(e as Error).message}`);
  await bus.sessions.endWait(me, { state: "idle", since: presence.record().started_at, on: null }).catch(marking("idle"));
  // The marks a wait writes, one after another (a wait's end never overtakes the next wait's
  // mark), and never awaited by the tool: an answer does not wait for bookkeeping.
  let waits = 0;
  let marks: Promise<unknown> = Promise.resolve();
  let before: Promise<unknown> = Promise.resolve(undefined); // the mark found by the first wait
  const serial = (f: () => Promise<unknown>, what: string) => (marks = marks.then(f).catch((e) => log(`${what}: ${(e as Error).message}`)));
  return {
    me,
    identity: presence.identity,
    presence,
    cwd,
    unreadNote() {
      const up = watching();
      const [sure, at] = [watched, seen];
      const early = count();
      early.catch(() => {}); // its failure is the answer's, when it asks
      return async () => {
        await up;
        const n = sure && seen === at ? await early : await count();
        return n ? `${n} unread message${n === 1 ? "" : "s"}: call check_messages` : "";
      };
    },
    async waiting(on, wait) {
      let marked = false;
      const timer = setTimeout(() => {
        marked = true;
        if (waits++ === 0) before = serial(async () => bus.sessions.mark(me, "waiting", await on()), "marking the session waiting");
      }, MARK_AFTER_MS);
      try {
        return await wait();
      } finally {
        clearTimeout(timer);
        if (marked && --waits === 0) {
          const found = before;
          // After the answer's own reads (the unread note): on a database they share one
          // connection, and the bookkeeping must not stand in front of the answer.
          const after = () => new Promise((r) => setImmediate(r));
          void serial(async () => after().then(async () => bus.sessions.endWait(me, (await found) as never)), "marking the session as before its wait");
        }
      }
    },
    update: async (what, write) => void (await serial(write, what)),
    close: () => {
      void watch?.then((off) => off(), () => {});
      return presence.close();
    },
  };
}
