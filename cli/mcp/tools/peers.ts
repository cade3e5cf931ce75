// Presence tools, compatible with claude-peers-mcp: list_peers and set_summary, plus whoami.
// All of them read or change this session's presence (cli/mcp/session.ts).

import { z } from "zod";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Scope } from "../../../lib/presence/peers";
import type { PeerWithState } from "../../../lib/sessions/state";
import type { McpCtx } from "../context";
import { handler } from "../result";
import { agentOfClient } from "../../agents/index";

export const messagingAnnotations = (readOnly: boolean) => ({ readOnlyHint: readOnly, destructiveHint: false, idempotentHint: readOnly, openWorldHint: true });

const peerView = (p: PeerWithState) => ({
  id: p.name, name: p.name, state: p.state, since: p.since, on: p.on, task: p.task, reserved: p.reserved, host: p.host, pid: p.pid, cwd: p.cwd, git_root: p.git_root, tty: p.tty, summary: p.summary,
  started_at: p.started_at, last_seen: p.heartbeat, client: p.client ?? null, agent: agentOfClient(p.client) || null,
});

export function registerPeerTools(server: McpServer, ctx: McpCtx): void {
  const { bus, session } = ctx;
  const { me } = session;

  server.registerTool("list_peers", {
    title: "List peers",
    description: "Other agents on the bus: name (to_id), agent, state (working, idle, waiting on `on`, needs-you) and since, task, reserved paths, host, cwd, summary.",
    inputSchema: { scope: z.enum(["machine", "directory", "repo", "all"]).default("machine").describe("all: every host") },
    annotations: messagingAnnotations(true),
  }, handler(ctx, "list_peers", async ({ scope }: { scope: string }) => {
    const l = await bus.sessions.peers(scope as Scope, { cwd: session.cwd }); // lib checks the scope
    const peers = l.peers.filter((p) => !(p.name === me && p.pid === process.pid && p.host === bus.host)).map(peerView);
    return { ok: true, scope, you: me, peers, count: peers.length };
  }));

  server.registerTool("set_summary", {
    title: "Set your summary",
    description: "1-2 sentences on your work, shown in list_peers.",
    inputSchema: { summary: z.string() },
    annotations: { ...messagingAnnotations(false), idempotentHint: true },
  }, handler(ctx, "set_summary", async ({ summary }: { summary: string }) => {
    await session.presence.setSummary(summary);
    return { ok: true, name: me, summary };
  }));

  server.registerTool("whoami", {
    title: "Who am I",
    description: "Your agent name (others' to_id), host, user, cwd, unread count, inbox policy.",
    inputSchema: {},
    annotations: messagingAnnotations(true),
  }, handler(ctx, "whoami", async () => {
    // `unread` on every result is the note; the count goes by another name here.
    const { unread, ...w } = await bus.presence.whoami(session.identity, session.cwd);
    return { ok: true, ...w, unread_count: unread, summary: session.presence.record().summary };
  }));
}
