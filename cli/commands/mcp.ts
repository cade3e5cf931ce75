// `a2a mcp`: the MCP stdio server (cli/mcp/), loaded only here: the SDK and zod cost start-up
// time no other command should pay.

import type { Command } from "commander";
import { err, isTTY } from "../io";
import { action, command, type Ctx } from "../run";

export const commands = {
  mcp: (p: Command) =>
    command(p, "mcp", {
      summary: "run the MCP stdio server (claude mcp add a2a -- a2a mcp)",
      description: "Run the MCP server on stdin/stdout for an agent (Claude Code: claude mcp add a2a -- a2a mcp): the agent2agent tools (agent_publish, agent_wait, ...) and the messaging tools, on the same store as the CLI. It announces the session as a peer while it runs, and ends when its client closes stdin.",
      examples: ["claude mcp add a2a -- a2a mcp", "A2A_AGENT=reviewer A2A_DIR=~/team-bus a2a mcp"],
      json: "accepted, as by every command: the server always speaks JSON-RPC on stdout",
    }).action(action(async (c: Ctx) => {
      // Started by hand on a terminal, it would otherwise sit silent: say what it is.
      if (isTTY(0)) {
        err(
          "a2a mcp: this is the MCP server: it speaks JSON-RPC on stdin/stdout, for an MCP client (an agent) to start, not for typing at.\n" +
            "  register it with Claude Code:  claude mcp add a2a -- a2a mcp\n" +
            '  or in .mcp.json:               {"mcpServers": {"a2a": {"command": "a2a", "args": ["mcp"]}}}\n' +
            "  on another machine, over ssh:  claude mcp add a2a -- ssh HOST a2a mcp\n" +
            "Serving on this terminal now; Ctrl-D or Ctrl-C ends it.\n",
        );
      }
      const { runMcpServer } = await import("../mcp/server");
      await runMcpServer(c.dir);
    })),
};
