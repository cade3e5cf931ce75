// The presence commands: whoami and peers. Each is parse -> one lib call -> format.

import type { Command } from "commander";
import { checkScope } from "../../lib/presence/scope";
import { agentOfClient } from "../agents/index";
import { age, preview, table } from "../format";
import { writerNoun } from "../frame";
import { json, out } from "../io";
import { action, command, type Ctx } from "../run";

export const commands = {
  whoami: (p: Command) =>
    command(p, "whoami", {
      summary: "say which agent name you act as, and your inbox state",
      description: "Say which agent name you act as here and why: --as, else $A2A_AGENT, else the name of this Claude Code session's a2a mcp server, else the name a2a mcp started in this directory would take (remembered for it, or from the git root's name). The same rule names you in send, recv, inbox, ack, allow, deny, policy and lease, so mail sent to this name is what `a2a recv` here reads and what the a2a hooks announce. With host, OS user (on PostgreSQL: the database role), unread count, policy and store.",
      examples: ["a2a whoami", "A2A_AGENT=alice a2a whoami", "a2a whoami --as bob --json"],
      json: "print as JSON",
    })
      .option("--as <name>", "who you are (default: $A2A_AGENT)")
      .action(action(async (c: Ctx, o) => {
        const id = await c.bus.presence.acting(o.as, process.cwd());
        // lib says "given"; here that is --as.
        const w = { ...await c.bus.presence.whoami(id, process.cwd()), ...(id.source === "given" ? { source: "--as", why: "--as is given" } : { why: id.why }) };
        out(c.json ? json(w) : `${w.name} (from ${w.source}: ${w.why}) on ${w.host} as ${writerNoun(c.bus.engine)} ${w.user}: ${w.unread} unread, policy ${w.policy}, store ${w.store}\n`);
      })),

  peers: (p: Command) =>
    command(p, "peers", {
      summary: "list live agents (a2a mcp sessions); stale ones are swept",
      description: "List the agents that are live on this store (each running `a2a mcp` session announces itself), with the coding agent each is (Claude Code, Codex CLI, Gemini CLI, opencode, or the MCP client's own name, from its handshake), host, pid, directory, last heartbeat and summary; entries whose process is gone are removed as they are found (their inboxes are kept).",
      examples: ["a2a peers", "a2a peers --scope repo --json"],
      json: "print {peers, gone} as JSON",
    })
      .option("--scope <scope>", "all, machine (this host), directory (this cwd) or repo (this git root)", "all")
      .action(action(async (c: Ctx, o) => {
        const l = await c.bus.presence.peers(checkScope(o.scope), { cwd: process.cwd() });
        if (c.json) return out(json({ ...l, peers: l.peers.map((p) => ({ ...p, client: p.client ?? null, agent: agentOfClient(p.client) || null })) }));
        let listing = l.peers.length
          ? table(["NAME", "AGENT", "HOST", "PID", "CWD", "SEEN", "SUMMARY"], l.peers.map((p) => [p.name, agentOfClient(p.client) || "-", p.host, String(p.pid), p.cwd, age(p.heartbeat), preview(p.summary, 40)]))
          : `no live peers (scope ${o.scope})\n`;
        if (l.gone.length) listing += `gone (removed now; their inboxes are kept): ${l.gone.map((p) => p.name).join(", ")}\n`;
        out(listing);
      })),
};
