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
    title: "List running agents",
    description: "List the other agents (Claude Code, Codex, Gemini CLI, opencode ... sessions running a2a mcp) you can message: name (use it as to_id), agent (which coding agent it is), state (working: in a turn; idle: at its prompt; waiting: blocked in a wait, `on` says on what; needs-you: asking its user something) and since when (unix seconds), task (the one it holds, {queue, id}, or null), reserved (the path patterns it holds), host, pid, working directory, git root, summary. Agents whose process is gone are removed as they are found.",
    inputSchema: { scope: z.enum(["machine", "directory", "repo", "all"]).default("machine").describe('"machine" = this computer, "directory" = same working directory, "repo" = same git repository, "all" = every host sharing the store') },
    annotations: messagingAnnotations(true),
  }, handler(ctx, "list_peers", async ({ scope }: { scope: string }) => {
    const l = await bus.sessions.peers(scope as Scope, { cwd: session.cwd }); // lib checks the scope
    const peers = l.peers.filter((p) => !(p.name === me && p.pid === process.pid && p.host === bus.host)).map(peerView);
    return { ok: true, scope, you: me, peers, count: peers.length };
  }));

  server.registerTool("set_summary", {
    title: "Say what you are working on",
    description: "Set a 1-2 sentence summary of your current work, shown to other agents in list_peers. Call it when you start and when your focus changes.",
    inputSchema: { summary: z.string().describe("A 1-2 sentence summary of your current work") },
    annotations: { ...messagingAnnotations(false), idempotentHint: true },
  }, handler(ctx, "set_summary", async ({ summary }: { summary: string }) => {
    await session.presence.setSummary(summary);
    return { ok: true, name: me, summary };
  }));

  server.registerTool("whoami", {
    title: "Who am I",
    description: "Your agent name (what others pass as to_id), host, OS user, working directory, unread count and inbox policy.",
    inputSchema: {},
    annotations: messagingAnnotations(true),
  }, handler(ctx, "whoami", async () => {
    // `unread` on every result is the note; the count goes by another name here.
    const { unread, ...w } = await bus.presence.whoami(session.identity, session.cwd);
    return { ok: true, ...w, unread_count: unread, summary: session.presence.record().summary };
  }));
}
