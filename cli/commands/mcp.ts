// `a2a mcp`: the MCP stdio server (cli/mcp/), loaded only here: the SDK and zod cost start-up
// time no other command should pay.

import type { Command } from "commander";
import { err, isTTY } from "../io";
import { action, command, type Ctx } from "../run";

export const commands = {
  mcp: (p: Command) =>
    command(p, "mcp", {
      summary: "run the MCP stdio server (a2a setup claude registers it)",
      description: "Run the MCP server on stdin/stdout for an agent (Claude Code: a2a setup claude, or claude mcp add -s user a2a -- a2a mcp), on the same store as the CLI. --tools picks what tools/list offers: sets slots (agent_start, agent_publish, agent_wait, agent_wait_all, agent_status, agent_clear: hand results over), stream (agent_append, agent_tail), mail (send_message, check_messages, reply, ack_messages, read_thread: direct mail to one agent), peers (whoami, list_peers, set_summary), topics (publish_topic, read_topic, agent_send, agent_recv: broadcast every agent reads), tasks (task_add, task_claim, task_renew, task_done, task_fail, task_wait, task_list, task_show, task_retry, task_cancel: a work queue), leases (lease_take, lease_renew, lease_release, lease_list: reservations of names); aliases default (slots,mail,peers), all, agent2agent (its seven tools), claude-peers (its four); or tool names. It announces the session as a peer while it runs, and ends when its client closes stdin. A store it cannot use is reported as the error of every tool call, not by exiting.",
      examples: ["claude mcp add -s user a2a -- a2a mcp", "a2a mcp --tools default,topics", "a2a mcp --tools agent2agent   # agent2agent's seven tools only", "A2A_AGENT=reviewer A2A_DIR=~/team-bus a2a mcp"],
      json: "accepted, as by every command: the server always speaks JSON-RPC on stdout",
    })
      .option("--tools <list>", "tool sets and tool names, comma-separated (default: slots,mail,peers; a worker: default,tasks)")
      .action(action(async (c: Ctx, o: { tools?: string }) => {
        // Started by hand on a terminal, it would otherwise sit silent: say what it is.
        if (isTTY(0)) {
          err(
            "a2a mcp: this is the MCP server: it speaks JSON-RPC on stdin/stdout, for an MCP client (an agent) to start, not for typing at.\n" +
              "  register it with Claude Code:  a2a setup claude   (or: claude mcp add -s user a2a -- a2a mcp)\n" +
              '  or in .mcp.json:               {"mcpServers": {"a2a": {"command": "a2a", "args": ["mcp"]}}}\n' +
              "  on another machine, over ssh:  claude mcp add -s user a2a -- ssh HOST a2a mcp\n" +
              "Serving on this terminal now; Ctrl-D or Ctrl-C ends it.\n",
          );
        }
        const { runMcpServer } = await import("../mcp/server");
        await runMcpServer(c.dir, o.tools);
      })),
};
