// Each agent's way into an idle session, as the session's own a2a mcp can use it (wake.ts decides
// when). The agent is known from the client's initialize (clientInfo.name, cli/agents mcpClient).
//   Claude Code  a notifications/claude/channel event on this very connection: an interactive
//                session started with `--dangerously-load-development-channels server:a2a` (and
//                an account whose channels are on) starts a turn with it while idle, and queues it
//                behind a turn or the user's typing;
//   Codex CLI    `codex queue --thread ID --message TEXT --resume`: the message is queued for the
//                session's thread (the id its hooks gave, kept in the session record) and the local
//                app-server daemon resumes the thread, so a TUI attached to that daemon (the default
//                while one runs) starts a turn at once. Without a daemon the queued message would
//                wait for the user's next prompt: no wake then (logged).
// Any other client gets no wake (its mail comes at its next prompt, stop or tool result).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { existsSync, readlinkSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import type { WakeDecision } from "../../lib/sessions/wake-rule";
import type { McpCtx } from "./context";

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

const CODEX_SOCKET = ["app-server-control", "app-server-control.sock"]; // under CODEX_HOME: the local daemon's

// The Codex that started this server (its parent), else `codex` on PATH.
function codexBin(): string {
  try {
    const exe = readlinkSync(`/proc/${process.ppid}/exe`);
    if (basename(exe) === "codex") return exe;
  } catch {
    // not Linux, or the parent is gone
  }
  return "codex";
}

export function codexQueue(ctx: McpCtx): WakeWay {
  return {
    name: "codex queue",
    read: "check_messages (the a2a MCP tool)",
    async wake(text) {
      const thread = await ctx.bus.sessions.thread(ctx.session.me);
      if (!thread) throw new Error("no Codex thread id known yet (its hooks give it at the session's first prompt)");
      const home = process.env.CODEX_HOME || join(homedir(), ".codex");
      if (!existsSync(join(home, ...CODEX_SOCKET))) throw new Error("Codex runs no local app-server daemon: a queued message would wait for the user's next prompt (codex app-server daemon start)");
      const p = Bun.spawn({ cmd: [codexBin(), "queue", "--thread", thread, "--message", text, "--resume"], stdin: "ignore", stdout: "ignore", stderr: "pipe" });
      const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
      const warning = err.split("\n").find((l) => /could not resume|error/i.test(l));
      if (code !== 0 || warning) throw new Error(`codex queue: ${(warning ?? err.trim().split("\n").pop() ?? `exit ${code}`).slice(0, 300)}`);
    },
  };
}

// The way into the session of the client that initialized `server`, if a2a has one (the names
// are cli/agents' mcpClient).
export function wayFor(server: McpServer, ctx: McpCtx): WakeWay | undefined {
  const name = server.server.getClientVersion()?.name;
  if (name === "claude-code") return claudeChannel(server);
  if (name === "codex-mcp-client") return codexQueue(ctx);
  return undefined;
}
