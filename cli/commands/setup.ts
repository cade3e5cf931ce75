// `a2a setup claude`: registers `a2a mcp` with Claude Code and installs the a2a hooks, in the
// files Claude Code reads (cli/claude/config.ts), showing a diff of each file it changes.
//
// Invariants:
// - only a2a's own entries change (mcpServers.a2a; hook commands that run `a2a ... hook EVENT`);
//   everything else in the files is kept as it was (values; the JSON is re-indented by 2,
//   as Claude Code writes it);
// - a file is written only when its content changes, by an atomic replace
//   (lib/core/atomic.ts writeUserFile), after its old content was saved as FILE.a2a-backup-TIME;
//   running it twice changes nothing the second time; --dry-run writes nothing;
// - a file that is not valid JSON is not touched: one error line, exit 2;
// - --remove takes out exactly what it adds.

import type { Command } from "commander";
import { mkdirSync, realpathSync } from "node:fs";
import { dirname } from "node:path";
import { writeUserFile } from "../../lib/core/atomic";
import { A2AError } from "../../lib/core/errors";
import { isoTime, nowSec } from "../../lib/core/time";
import { gitRoot } from "../../lib/presence/repo";
import { a2aHookEvent, filesFor, HOOK_EVENTS, HOOK_MATCHERS, readJsonObject, shellQuote, type HookEvent, type Scope } from "../claude/config";
import { lineDiff } from "../claude/diff";
import { durationSec, json, out } from "../io";
import { action, command, type Ctx } from "../run";

const HOOK_TIMEOUT_SEC = 10;

interface Plan {
  path: string;
  before: string | undefined;
  after: string;
  diff: string;
}

const stringify = (v: unknown) => JSON.stringify(v, null, 2) + "\n";

// The a2a command as written into the files: this binary's path for the user's own files, the
// bare name for a project's (shared with a team, whose a2a lives elsewhere); --dir when the
// store is not the default, so the server and the hooks use the same store.
function a2aCommand(c: Ctx, scope: Scope): { command: string; pre: string[] } {
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

function withMcp(value: Record<string, any>, cmd: { command: string; pre: string[] }, tools: string | undefined, remove: boolean): Record<string, any> {
  const servers = { ...(value.mcpServers ?? {}) };
  if (remove) delete servers.a2a;
  else servers.a2a = { type: "stdio", command: cmd.command, args: [...cmd.pre, "mcp", ...(tools ? ["--tools", tools] : [])], env: servers.a2a?.env ?? {} };
  const next = { ...value, mcpServers: servers };
  if (remove && !Object.keys(servers).length) delete next.mcpServers;
  return next;
}

function withHooks(value: Record<string, any>, cmd: { command: string; pre: string[] }, worker: number | undefined, remove: boolean): Record<string, any> {
  const hooks: Record<string, any> = { ...(value.hooks ?? {}) };
  for (const ev of Object.keys(HOOK_EVENTS) as HookEvent[]) {
    // Drop a2a's entries (and groups left empty by that), keep everyone else's in order.
    const groups = (Array.isArray(hooks[ev]) ? hooks[ev] : [])
      .map((g: any) => (Array.isArray(g?.hooks) ? { ...g, hooks: g.hooks.filter((h: any) => !a2aHookEvent(h?.command)) } : g))
      .filter((g: any) => !Array.isArray(g?.hooks) || g.hooks.length);
    if (!remove) {
      const args = [shellQuote(cmd.command), ...cmd.pre.map(shellQuote), "hook", HOOK_EVENTS[ev]];
      let timeout = HOOK_TIMEOUT_SEC;
      if (ev === "Stop" && worker) {
        args.push("--wait", `${worker}s`);
        timeout = Math.ceil(worker) + 30;
      }
      const matcher = HOOK_MATCHERS[ev];
      groups.push({ ...(matcher ? { matcher } : {}), hooks: [{ type: "command", command: args.join(" "), timeout }] });
    }
    if (groups.length) hooks[ev] = groups;
    else delete hooks[ev];
  }
  const next: Record<string, any> = { ...value, hooks };
  if (!Object.keys(hooks).length) delete next.hooks;
  return next;
}

function plan(path: string, change: (v: Record<string, any>) => Record<string, any>): Plan {
  const { text, value } = readJsonObject(path);
  const nextValue = change(value);
  // Unchanged values are not rewritten, whatever the file's own formatting; a file that is not
  // there and would get nothing of a2a's (a --remove) is not created.
  if (JSON.stringify(nextValue) === JSON.stringify(value)) return { path, before: text, after: text ?? "", diff: "" };
  const after = stringify(nextValue);
  return { path, before: text, after, diff: lineDiff(text ?? "", after) };
}

// 20261201T222800Z: a backup's suffix, sortable.
const stamp = () => isoTime(nowSec()).replace(/[-:]/g, "");

function apply(p: Plan): string | undefined {
  let backup: string | undefined;
  if (p.before !== undefined) {
    for (let n = 1; ; n++) {
      backup = `${p.path}.a2a-backup-${stamp()}${n > 1 ? `-${n}` : ""}`;
      try {
        writeUserFile(backup, p.before, { exclusive: true });
        break;
      } catch (e) {
        if (n >= 20 || (e as A2AError).data?.errno !== "EEXIST") throw e; // one per run, a second apart at most
      }
    }
  } else {
    ensureParent(p.path);
  }
  writeUserFile(p.path, p.after);
  return backup;
}

function ensureParent(path: string): void {
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 }); // ~/.claude or PROJECT/.claude, as Claude Code makes it
  } catch (e) {
    throw new A2AError("EIO", `cannot create ${dir}: ${(e as Error).message}`);
  }
}

export const commands = {
  setup: (p: Command) =>
    command(p, "setup", {
      summary: "register a2a with Claude Code (MCP server and hooks), showing the diff",
      description:
        "setup claude: register `a2a mcp` with Claude Code and install the a2a hooks (SessionStart, UserPromptSubmit, Stop: a2a hook ...; PreToolUse for Edit, Write, MultiEdit and NotebookEdit: a2a hook pre-tool-use, which denies an edit of a file another agent reserved), so every session of this user (--scope user, the default: ~/.claude.json and ~/.claude/settings.json) or of this repository (--scope project: .mcp.json and .claude/settings.json at the git root, to commit for a team) is on the bus and hears of its mail. Shows a diff of every file it changes and keeps the old content as FILE.a2a-backup-TIME; changes nothing with --dry-run, nor when already set up. --remove takes a2a's entries out again. --worker DUR makes the Stop hook wait up to DUR for the next message (a session that serves its inbox). Then check with a2a doctor.",
      examples: ["a2a setup claude --dry-run", "a2a setup claude", "a2a setup claude --scope project", "a2a setup claude --remove"],
      json: "print {scope, dry_run, files: [{path, changed, backup, diff}]}",
      quiet: true,
    })
      .argument("<agent>", "the agent to set up: claude (Claude Code)")
      .option("--scope <scope>", "user (every project of yours) or project (this repository, shared)", "user")
      .option("--dry-run", "show what would change, change nothing")
      .option("--remove", "take a2a's MCP server and hooks out again")
      .option("--tools <list>", "the --tools of the registered a2a mcp (see a2a mcp --help)")
      .option("--worker <duration>", "the Stop hook waits up to this long for the next message (e.g. 5m)")
      .action(action(async (c: Ctx, agent: string, o: { scope: string; dryRun?: boolean; remove?: boolean; tools?: string; worker?: string }) => {
        if (agent !== "claude") throw new A2AError("EUSAGE", `a2a setup knows claude (Claude Code), not ${JSON.stringify(agent)}: run a2a setup claude`);
        if (o.scope !== "user" && o.scope !== "project") throw new A2AError("EUSAGE", `invalid --scope ${JSON.stringify(o.scope)}: use user (all your projects) or project (this repository)`);
        const scope = o.scope as Scope;
        const worker = durationSec(o.worker, "--worker");
        const project = gitRoot(process.cwd()) ?? process.cwd();
        const files = filesFor(scope, project);
        const cmd = a2aCommand(c, scope);
        const plans = [
          plan(files.mcp, (v) => withMcp(v, cmd, o.tools, !!o.remove)),
          plan(files.settings, (v) => withHooks(v, cmd, worker, !!o.remove)),
        ];
        const results = plans.map((p) => ({ path: p.path, changed: !!p.diff, backup: !o.dryRun && p.diff ? apply(p) : undefined, diff: p.diff }));
        if (c.json) return out(json({ scope, dry_run: !!o.dryRun, files: results }));
        let text = "";
        for (const r of results) {
          if (!r.changed) text += `${r.path}: unchanged (${o.remove ? "no a2a entries" : "already set up"})\n`;
          else text += `${r.path}${o.dryRun ? " (dry run: not changed)" : r.backup ? ` (backup: ${r.backup})` : " (created)"}\n${r.diff}`;
        }
        if (c.quiet) return;
        if (o.dryRun) text += "dry run: nothing was changed\n";
        else if (results.some((r) => r.changed)) {
          text += o.remove
            ? "a2a removed from Claude Code; sessions already running keep it until they restart\n"
            : `done: new Claude Code sessions start a2a mcp and the a2a hooks${scope === "project" ? " (Claude Code asks each user once to approve the project's .mcp.json server)" : ""}; check with a2a doctor\n`;
        }
        out(text);
      })),
};
