// Each agent's way into an idle session, as the session's own a2a mcp can use it (wake.ts decides
// when). The agent is known from the client's initialize (clientInfo.name, cli/agents mcpClient).
//   Claude Code  a notifications/claude/channel event on this very connection: an interactive
//                session started with `--dangerously-load-development-channels server:a2a` (and
//                an account whose channels are on) starts a turn with it while idle, and queues it
//                behind a turn or the user's typing;
//   Codex CLI    `codex queue` (codex-queue.ts).
// Any other client gets no wake (its mail comes at its next prompt, stop or tool result).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { WakeDecision } from "../../lib/sessions/wake-rule";

export interface WakeWay {
  name: string; // for the log: "claude channel"
  read: string; // how the woken session reads its mail, as the wake's text names it
  wake(text: string, d: Extract<WakeDecision, { wake: true }>): Promise<void>;
}

// Claude Code's channel: one event per batch, carrying the wake's text (no body: the session reads
// its mail with check_messages, which marks it read). `meta` becomes the <channel> tag's attributes.
export function claudeChannel(server: McpServer): WakeWay {
  return {
    name: "claude channel",
    read: "check_messages (the a2a MCP tool)",
    async wake(text, d) {
      const meta = { kind: "wake", from: d.senders.join(","), count: String(d.count) };
      // The SDK types notifications by its own schema; claude/channel is an extension.
      await server.server.notification({ method: "notifications/claude/channel", params: { content: text, meta } } as Parameters<typeof server.server.notification>[0]);
    },
  };
}

// The way into the session of the client that initialized `server`, if a2a has one.
export function wayFor(server: McpServer): WakeWay | undefined {
  const name = server.server.getClientVersion()?.name;
  if (name === "claude-code") return claudeChannel(server); // cli/agents/claude.ts mcpClient
  return undefined;
}
