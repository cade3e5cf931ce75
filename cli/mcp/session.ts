// The session of one `a2a mcp` server: who it is on the bus and what waits for it. Built
// before any tool is registered and passed to every tool group in the context (McpCtx).
//
// Invariants:
// - one session, one identity: the presence name (lib/presence/presence.ts: $A2A_AGENT, else
//   derived from the working directory) is the name every tool posts as (send_message, reply,
//   publish_topic, agent_send without an explicit sender) and the one whoami shows;
// - the inbox of that name exists from the start, so pushes and check_messages never race
//   its creation;
// - close() removes the presence (a server outliving its client is a ghost peer).

import type { Bus } from "../../lib/bus";
import type { Identity } from "../../lib/presence/identity";
import type { Presence } from "../../lib/presence/presence";

export interface Session {
  readonly me: string; // the session's agent name
  readonly identity: Identity;
  readonly presence: Presence;
  readonly cwd: string;
  // "2 unread messages: call check_messages", or "" when nothing waits (mail being read
  // right now by this or another reader does not count).
  unreadNote(): Promise<string>;
  // Removes the presence (waiting for a heartbeat in flight). The process 'exit' hook that
  // lib/presence/presence.ts keeps until then removes it synchronously if this never runs.
  close(): Promise<void>;
}

export async function openSession(bus: Bus, cwd: string): Promise<Session> {
  const presence = await bus.presence.start({ cwd });
  const me = presence.identity.name;
  await bus.mail.ensureInbox(me, true);
  return {
    me,
    identity: presence.identity,
    presence,
    cwd,
    async unreadNote() {
      const n = await bus.mail.unread(me, false);
      return n ? `${n} unread message${n === 1 ? "" : "s"}: call check_messages` : "";
    },
    close: () => presence.close(),
  };
}
