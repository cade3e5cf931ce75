// `a2a setup AGENT`: registers `a2a mcp` with a coding agent and installs the a2a hooks where that
// agent offers them, in the files it reads (cli/agents/AGENT.ts), showing a diff of each file it
// changes (cli/agents/edit.ts: backups, atomic replace, nothing written by --dry-run or twice).
//
// Invariants: see cli/agents/agent.ts (only a2a's own entries change; --remove takes out exactly
// what setup adds; a file a2a cannot parse is not touched: one error line, exit 2).

import type { Command } from "commander";
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { A2AError } from "../../lib/core/errors";
import { gitRoot } from "../../lib/presence/repo";
import type { A2ACommand, Scope } from "../agents/agent";
import { apply, plan } from "../agents/edit";
import { holdsBlock, instructionsChange, instructionsFile } from "../agents/instructions";
import { AGENTS, agentIds, agentTitles } from "../agents/index";
import { durationSec, json, out } from "../io";
import { action, command, type Ctx } from "../run";

// The a2a command as written into the files: this binary's path for the user's own files, the
// bare name for a project's (shared with a team, whose a2a lives elsewhere); --dir when the
// store is not the default, so the server and the hooks use the same store.
function a2aCommand(c: Ctx, scope: Scope): A2ACommand {
  let bin = "a2a";
  if (scope === "user") {
    try {
      bin = realpathSync(process.execPath);
    } catch {
      bin = process.execPath;
    }
  }
  // `where` carries no password: the config may be committed (.mcp.json at project scope).
  return { command: bin, pre: c.bus.from === "default" ? [] : ["--dir", c.bus.where] };
}

export const commands = {
  setup: (p: Command) =>
    command(p, "setup", {
      summary: "register a2a with a coding agent (MCP server and hooks), showing the diff",
      description:
        "setup claude: register `a2a mcp` with Claude Code and install the a2a hooks (SessionStart, UserPromptSubmit, Stop: a2a hook ...; PreToolUse for Edit, Write, MultiEdit and NotebookEdit: a2a hook pre-tool-use, which denies an edit of a file another agent reserved), so every session of this user (--scope user, the default: ~/.claude.json and ~/.claude/settings.json) or of this repository (--scope project: .mcp.json and .claude/settings.json at the git root, to commit for a team) is on the bus and hears of its mail. The other agents the same way in their own files (README, \"Other coding agents\"). Shows a diff of every file it changes and keeps the old content as a backup under ~/.local/state/a2a/setup/ (the last 5 of each file); changes nothing with --dry-run, nor when already set up. --remove takes a2a's entries out again, and deletes a file (and directories) setup created once nothing else is in it. --worker DUR makes the Stop hook wait up to DUR for the next message (a session that serves its inbox). --primer also adds one marked block to the instructions file the agent reads at its start (CLAUDE.md, AGENTS.md for Codex and opencode, GEMINI.md, QWEN.md, .github/copilot-instructions.md; in ~/.claude, ~/.codex, ~/.gemini, ~/.config/opencode, ~/.qwen, ~/.copilot at user scope) saying to run `a2a primer`, for agents that use a2a from the shell; --remove takes it out too, byte for byte. Then check with a2a doctor.",
      examples: ["a2a setup claude --dry-run", "a2a setup claude", "a2a setup claude --scope project", "a2a setup codex", "a2a setup gemini --remove"],
      json: "print {agent, scope, dry_run, files: [{path, changed, deleted, backup, diff}]}",
      quiet: true,
    })
      .argument("<agent>", `the agent to set up: ${agentTitles()}`)
      .option("--scope <scope>", "user (every project of yours) or project (this repository, shared)", "user")
      .option("--dry-run", "show what would change, change nothing")
      .option("--remove", "take a2a's MCP server and hooks out again")
      .option("--tools <list>", "the --tools of the registered a2a mcp (see a2a mcp --help)")
      .option("--worker <duration>", "the Stop hook waits up to this long for the next message (e.g. 5m)")
      .option("--primer", "also add a line to the agent's instructions file (CLAUDE.md, AGENTS.md, GEMINI.md, QWEN.md, copilot-instructions.md) saying to run a2a primer")
      .action(action(async (c: Ctx, id: string, o: { scope: string; dryRun?: boolean; remove?: boolean; tools?: string; worker?: string; primer?: boolean }) => {
        const agent = Object.hasOwn(AGENTS, id) ? AGENTS[id] : undefined;
        if (!agent) throw new A2AError("EUSAGE", `a2a setup knows ${agentIds()}, not ${JSON.stringify(id)}: run a2a setup claude (or another of those)`);
        if (o.scope !== "user" && o.scope !== "project") throw new A2AError("EUSAGE", `invalid --scope ${JSON.stringify(o.scope)}: use user (all your projects) or project (this repository)`);
        const scope = o.scope as Scope;
        const opts = { scope, project: gitRoot(process.cwd()) ?? process.cwd(), home: homedir(), a2a: a2aCommand(c, scope), tools: o.tools, worker: durationSec(o.worker, "--worker"), remove: !!o.remove };
        // Every file is planned (and so parsed) before any is written: a broken one stops them all.
        const changes = agent.setup(opts);
        // --remove takes out everything setup may have added, the primer's line included.
        const instructions = instructionsFile(agent.id, scope, opts.project, opts.home);
        if (o.primer || (o.remove && holdsBlock(instructions))) changes.push(instructionsChange(instructions, !!o.remove));
        const plans = changes.map((c) => plan(c, opts.home));
        const results = plans.map((p) => ({ path: p.path, changed: !!p.diff, deleted: !!p.diff && p.after === null, backup: !o.dryRun && p.diff ? apply(p, opts.home) : undefined, diff: p.diff }));
        if (c.json) return out(json({ agent: agent.id, scope, dry_run: !!o.dryRun, files: results }));
        let text = "";
        for (const r of results) {
          if (!r.changed) text += `${r.path}: unchanged (${o.remove ? "no a2a entries" : "already set up"})\n`;
          else text += `${r.path}${o.dryRun ? " (dry run: not changed)" : r.deleted ? ` (deleted; backup: ${r.backup})` : r.backup ? ` (backup: ${r.backup})` : " (created)"}\n${r.diff}`;
        }
        if (c.quiet) return;
        if (o.dryRun) text += "dry run: nothing was changed\n";
        else if (results.some((r) => r.changed)) text += agent.done(opts) + "\n";
        out(text);
      })),
};
