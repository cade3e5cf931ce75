// The presence commands: whoami and peers. Each is parse -> one lib call -> format.

import type { Command } from "commander";
import { A2AError, arg, text } from "../../lib/core/errors";
import { checkScope } from "../../lib/presence/scope";
import { checkStates, SESSION_STATES } from "../../lib/sessions/mark";
import { agentOfClient } from "../agents/index";
import { age, preview, table } from "../format";
import { writerNoun } from "../frame";
import { durationMs, err, json, out } from "../io";
import { action, command, end, type Ctx } from "../run";
import PRIMER from "../primer/primer.md" with { type: "text" };

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

  primer: (p: Command) =>
    command(p, "primer", {
      summary: "the whole bus in one page, for an agent that has a shell (under 3 KB)",
      description: "Print a2a explained in one page for a coding agent that works from its shell rather than MCP: who it is on the bus, and the commands for results, mail, peers, work queues, file reservations, topics and search, with the exit codes. Point an agent's instructions file at it (a2a setup AGENT --primer writes one line saying to run it). Under 3 KB, so it costs little context.",
      examples: ["a2a primer", "a2a primer --as worker-1"],
      json: "print {name, store, text}",
    })
      .option("--as <name>", "who you are (default: as a2a whoami says)")
      .action(action(async (c: Ctx, o) => {
        // The page is the point: a store that cannot be read still gets it, with the name unsaid.
        const me = await c.bus.presence.acting(o.as, process.cwd()).then((id) => id.name, () => "the name `a2a whoami` says");
        const where = await Promise.resolve().then(() => c.bus.where).catch(() => "its store");
        const text = PRIMER.replace("{NAME}", me).replace("{STORE}", where);
        out(c.json ? json({ name: me, store: where, text }) : text);
      })),

  peers: (p: Command) =>
    command(p, "peers", {
      summary: "list live agents (a2a mcp sessions) and what each is doing; stale ones are swept",
      description: "List the agents that are live on this store (each running `a2a mcp` session announces itself), with the coding agent each is (Claude Code, Codex CLI, Gemini CLI, opencode, or the MCP client's own name, from its handshake), its state (working: in a turn; idle: at its prompt; waiting: blocked in a wait, on what; needs-you: asking its user something, a permission prompt or a question), since when, what it holds (the task claimed through a2a mcp, while the claim is its own; the paths it reserved), host, pid, directory, last heartbeat and summary; entries whose process is gone (on this host: its pid is dead) are removed as they are found and named as gone (their inboxes are kept). The state is what the session's a2a hooks and a2a mcp say (a2a setup installs them); a session without hooks is idle unless it waits. a2a wait-state waits for one.",
      examples: ["a2a peers", "a2a peers --scope repo --json"],
      json: "print {peers, gone} as JSON; each peer with state, since (unix seconds), on, task ({queue, id} or null) and reserved (the patterns it holds)",
    })
      .option("--scope <scope>", "all, machine (this host), directory (this cwd) or repo (this git root)", "all")
      .action(action(async (c: Ctx, o) => {
        const l = await c.bus.sessions.peers(checkScope(o.scope), { cwd: process.cwd() });
        if (c.json) return out(json({ ...l, peers: l.peers.map((p) => ({ ...p, client: p.client ?? null, agent: agentOfClient(p.client) || null })) }));
        const state = (p: { state: string; on: string | null }) => (p.on ? `${p.state} (${preview(p.on, 30)})` : p.state);
        // The task it holds, and the paths it reserved (the first, and how many more).
        const holds = (p: { task: { queue: string; id: string } | null; reserved: string[] }) =>
          [p.task ? `${p.task.queue}/${p.task.id}` : "", p.reserved.length ? `${preview(p.reserved[0], 30)}${p.reserved.length > 1 ? ` +${p.reserved.length - 1}` : ""}` : ""].filter(Boolean).join(", ") || "-";
        let listing = l.peers.length
          ? table(["NAME", "AGENT", "STATE", "SINCE", "HOLDS", "HOST", "PID", "CWD", "SEEN", "SUMMARY"], l.peers.map((p) => [p.name, agentOfClient(p.client) || "-", state(p), p.since === null ? "-" : age(p.since), holds(p), p.host, String(p.pid), p.cwd, age(p.heartbeat), preview(p.summary, 40)]))
          : `no live peers (scope ${o.scope})\n`;
        if (l.gone.length) listing += `gone (removed now; their inboxes are kept): ${l.gone.map((p) => p.name).join(", ")}\n`;
        out(listing);
      })),

  "wait-state": (p: Command) =>
    command(p, "wait-state", {
      summary: "wait until a session is in a state (idle, gone, ...), e.g. until it has finished its turn",
      description: `Block until the session NAME (an a2a peer) is in one of STATES: ${SESSION_STATES.join(", ")} (several: idle,gone). Returns at once when it already is, printing its state, since when and on what. working: in a turn; idle: stopped at its prompt; waiting: blocked in a wait (agent_wait, task_claim wait, recv wait); needs-you: asking its user something; gone: its process is dead (on this host told from its pid at once; on another after three missed heartbeats). A name nothing is known of yet is gone: a wait for it to be idle waits for it to start (a warning says so). Wakes when the session's hooks or a2a mcp mark a change; a death is seen within a second. Exit 124 on --timeout, 128+N on a signal.`,
      examples: ["a2a wait-state reviewer idle --timeout 10m   # until its turn is over", "a2a wait-state worker-2 gone", "a2a wait-state lead needs-you,idle --json"],
      json: "print {name, state, since, on, host} as JSON",
    })
      .argument("<name>", "the session, as a2a peers names it")
      .argument("<states>", `one or more of ${SESSION_STATES.join(", ")}, comma-separated`)
      .option("--timeout <seconds>", "give up after this long (exit 124)")
      .action(action(async (c: Ctx, name: string, states: string, o: { timeout?: string }) => {
        const wanted = checkStates(states.split(","));
        const timeoutMs = durationMs(o.timeout, "--timeout");
        const now = await c.bus.sessions.state(name);
        // Nothing known of the name (gone, and no record of where): a session about to start, or a typo.
        if (now.state === "gone" && now.host === null && !wanted.includes("gone")) err(`a2a: warning: no session named ${name} has been on the bus yet: waiting for it to start (a2a peers lists the live ones)\n`);
        const outcome = await c.bus.sessions.waitState(name, wanted, { timeoutMs, signal: c.signal() });
        const v = end(c, outcome, { timeout: () => text`${name} was not ${wanted.join(" or ")} in time: raise ${arg("timeout")}, or see what it is doing (a2a peers)` });
        if (!v) throw new A2AError("EIO", `the wait for ${name} ended without a state`);
        out(c.json ? json({ name, ...v }) : `${name} ${v.state}${v.on ? ` (${v.on})` : ""}${v.since === null ? "" : ` for ${age(v.since)}`}${v.host ? ` on ${v.host}` : ""}\n`);
      })),
};
