// Claude Code (`@anthropic-ai/claude-code`, checked with 2.1): where it keeps what
// `a2a setup claude` changes and `a2a doctor` checks, and how its command hooks speak.
//   user scope     MCP: ~/.claude.json  "mcpServers"     hooks: ~/.claude/settings.json "hooks"
//   project scope  MCP: PROJECT/.mcp.json "mcpServers"   hooks: PROJECT/.claude/settings.json "hooks"
//   (local scope, `claude mcp add` without -s: ~/.claude.json "projects"[DIR]."mcpServers")
// `mcpServers` in ~/.claude/settings.json is NOT read by Claude Code.
// Hooks: a command gets the event's JSON on stdin and answers JSON on stdout
// (hookSpecificOutput.additionalContext; {"decision":"block","reason"} for Stop;
// permissionDecision "deny" for PreToolUse); exit 2 would mean "block", so a2a never uses it.

import { join } from "node:path";
import type { A2ACommand, A2AEvent, Agent, Check, DoctorContext, Headless, HeadlessOptions, HookFormat, HookInput, Scope, SetupOptions } from "./agent";
import { readJsonQuietly } from "./edit";
import { jsoncChange } from "./jsonc-edit";
import { a2aHookEvent, hookCommand } from "./hook-command";
import { json } from "../io";

const HOOK_TIMEOUT_SEC = 10;

export const HOOK_EVENTS = { SessionStart: "session-start", UserPromptSubmit: "user-prompt-submit", Stop: "stop", PreToolUse: "pre-tool-use", Notification: "notification" } as const;
export type HookEvent = keyof typeof HOOK_EVENTS;
// The tools an event's a2a hook is for (Claude Code's `matcher`); none: every occurrence. PreToolUse
// checks file reservations, so only the tools that write a file (MultiEdit: Claude Code before 2.x).
export const HOOK_MATCHERS: Partial<Record<HookEvent, string>> = { PreToolUse: "Edit|Write|MultiEdit|NotebookEdit" };

export interface Files {
  mcp: string; // the file with "mcpServers"
  settings: string; // the file with "hooks"
}

export function filesFor(scope: Scope, project: string, home: string): Files {
  return scope === "user"
    ? { mcp: join(home, ".claude.json"), settings: join(home, ".claude", "settings.json") }
    : { mcp: join(project, ".mcp.json"), settings: join(project, ".claude", "settings.json") };
}

function withMcp(value: Record<string, any>, cmd: A2ACommand, tools: string | undefined, remove: boolean): Record<string, any> {
  const servers = { ...(value.mcpServers ?? {}) };
  if (remove) delete servers.a2a;
  else servers.a2a = { type: "stdio", command: cmd.command, args: [...cmd.pre, "mcp", ...(tools ? ["--tools", tools] : [])], env: servers.a2a?.env ?? {} };
  const next = { ...value, mcpServers: servers };
  if (remove && !Object.keys(servers).length) delete next.mcpServers;
  return next;
}

// Claude Code's settings "hooks": {EVENT: [{matcher?, hooks: [{type: "command", command, timeout}]}]},
// a2a's entries out, then (unless removing) in again at the end. Codex and Gemini CLI read the same shape.
export function withHookGroups(value: Record<string, any>, events: Record<string, A2AEvent>, matchers: Record<string, string | undefined>, cmd: A2ACommand, o: { worker?: number; remove: boolean; timeoutScale?: number; agent?: string }): Record<string, any> {
  const hooks: Record<string, any> = { ...(value.hooks ?? {}) };
  const scale = o.timeoutScale ?? 1; // seconds (Claude Code, Codex) or milliseconds (Gemini CLI)
  for (const [ev, a2aEvent] of Object.entries(events)) {
    // Drop a2a's entries (and groups left empty by that), keep everyone else's in order.
    const groups = (Array.isArray(hooks[ev]) ? hooks[ev] : [])
      .map((g: any) => (Array.isArray(g?.hooks) ? { ...g, hooks: g.hooks.filter((h: any) => !a2aHookEvent(h?.command)) } : g))
      .filter((g: any) => !Array.isArray(g?.hooks) || g.hooks.length);
    if (!o.remove) {
      const wait = a2aEvent === "stop" && o.worker ? o.worker : undefined;
      const command = hookCommand(cmd, a2aEvent, { wait, agent: o.agent });
      const timeout = (wait ? Math.ceil(wait) + 30 : HOOK_TIMEOUT_SEC) * scale;
      const matcher = matchers[ev];
      groups.push({ ...(matcher ? { matcher } : {}), hooks: [{ type: "command", command, timeout }] });
    }
    if (groups.length) hooks[ev] = groups;
    else delete hooks[ev];
  }
  const next: Record<string, any> = { ...value, hooks };
  if (!Object.keys(hooks).length) delete next.hooks;
  return next;
}

// a2a's hook commands found in a settings value, by event.
export function a2aHooks(settings: Record<string, any>, events: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const ev of events) {
    const groups = settings?.hooks?.[ev];
    if (!Array.isArray(groups)) continue;
    for (const g of groups) for (const h of Array.isArray(g?.hooks) ? g.hooks : []) if (a2aHookEvent(h?.command)) (out[ev] ??= []).push(h.command);
  }
  return out;
}

// The file a Claude Code tool call would write, by tool (absolute paths in Claude Code).
const FILE_OF: Record<string, string> = { Edit: "file_path", Write: "file_path", MultiEdit: "file_path", NotebookEdit: "notebook_path" };

// A hook's input in Claude Code's shape, which Gemini CLI's hooks share: cwd, stop_hook_active,
// and tool_name/tool_input, where `fileOf` names the argument holding the file a tool writes.
export function toolHookInput(raw: Record<string, unknown>, fileOf: Record<string, string>): HookInput {
  const tool = typeof raw.tool_name === "string" && Object.hasOwn(fileOf, raw.tool_name) ? fileOf[raw.tool_name] : undefined;
  const ti = raw.tool_input && typeof raw.tool_input === "object" ? (raw.tool_input as Record<string, unknown>) : {};
  const path = tool ? ti[tool] : undefined;
  return {
    cwd: typeof raw.cwd === "string" && raw.cwd ? raw.cwd : undefined,
    continuation: raw.stop_hook_active === true,
    files: typeof path === "string" && path ? [path] : undefined,
    asks: asksOf(raw),
    idle: raw.notification_type === "idle_prompt",
    compacted: raw.source === "compact",
    prompt: typeof raw.prompt === "string" ? raw.prompt : undefined,
    session: typeof raw.session_id === "string" ? raw.session_id : undefined,
  };
}

// What a Notification asks the user: its message, for the kinds that ask (Claude Code's permission
// prompts and dialogs, Gemini CLI's ToolPermission; one with no kind, an earlier release's). The
// rest ask nothing: Claude Code's idle_prompt ("Claude is waiting for your input", its prompt idle
// for messageIdleNotifThresholdMs, a minute) says the session is idle, and marking it needs-you
// would hold every wake (only idle sessions are woken) until the user's next prompt.
const ASKING = ["permission_prompt", "worker_permission_prompt", "elicitation_dialog", "elicitation_url_dialog", "agent_needs_input", "ToolPermission"];
function asksOf(raw: Record<string, unknown>): string | undefined {
  const kind = raw.notification_type;
  if (kind !== undefined && !(typeof kind === "string" && ASKING.includes(kind))) return undefined;
  return typeof raw.message === "string" && raw.message ? raw.message : undefined;
}

export const claudeHook: HookFormat = {
  input: (raw) => toolHookInput(raw, FILE_OF),
  context: (event, text) => json({ hookSpecificOutput: { hookEventName: event === "session-start" ? "SessionStart" : "UserPromptSubmit", additionalContext: text } }),
  block: (reason) => json({ decision: "block", reason }),
  deny: (reason) => json({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } }),
};

async function doctor(d: DoctorContext): Promise<Check[]> {
  const checks: Check[] = [];
  const user = filesFor("user", d.project, d.home);
  const proj = filesFor("project", d.project, d.home);
  // Where a2a is registered: user, local (this directory only) and project scope.
  const scopes: string[] = [];
  const userJson = readJsonQuietly(user.mcp);
  if (userJson.mcpServers?.a2a) scopes.push("user");
  if (userJson.projects?.[d.cwd]?.mcpServers?.a2a) scopes.push("local (this directory only)");
  if (readJsonQuietly(proj.mcp).mcpServers?.a2a) scopes.push("project (.mcp.json)");
  const events = Object.keys(HOOK_EVENTS);
  const found: Record<string, string[]> = {};
  for (const f of [user.settings, proj.settings, join(d.project, ".claude", "settings.local.json")]) {
    for (const [ev, cmds] of Object.entries(a2aHooks(readJsonQuietly(f), events))) (found[ev] ??= []).push(...cmds);
  }
  if (!scopes.length && !Object.keys(found).length) return [notSetUp("Claude Code", "claude")];
  const fix = "a2a setup claude (every project of yours) or a2a setup claude --scope project (this repository)";
  if (d.live && d.bin) {
    const text = await mcpList(d.bin, d.cwd);
    const line = text.split("\n").find((l) => /^a2a:/.test(l));
    if (!line) {
      checks.push({ check: "Claude Code MCP", level: "problem", detail: `claude mcp list does not show a2a${scopes.length ? ` (registered in ${scopes.join(", ")})` : ""}`, fix });
    } else if (/Connected/.test(line)) {
      checks.push({ check: "Claude Code MCP", level: "ok", detail: `${line.trim()} [scope: ${scopes.join(", ") || "unknown"}]` });
    } else {
      checks.push({ check: "Claude Code MCP", level: "problem", detail: line.trim(), fix: "run the command it shows by hand to see the error; then a2a setup claude" });
    }
  } else checks.push(registered("Claude Code", scopes, fix));
  if (scopes.length > 1) checks.push({ check: "Claude Code MCP scopes", level: "note", detail: `a2a is registered in ${scopes.join(" and ")}: the narrowest one wins in its directory` });
  checks.push(hooksCheck("Claude Code", "claude", HOOK_EVENTS, found));
  // The wake (issue 35) rides Claude Code's channels, which only a flag of each start turns on.
  if (scopes.length) checks.push({ check: "Claude Code idle wake", level: "note", detail: "mail wakes a session idle at its prompt only when it was started with a2a's channel on (Anthropic API accounts whose channels are on; not Bedrock, Vertex or Foundry)", fix: "claude --dangerously-load-development-channels server:a2a (confirm its warning once per start)" });
  return checks;
}

// An agent's `mcp list`, run where the session would start (stdout and stderr): each server
// started and asked, seconds per agent, so only under doctor --live.
export async function mcpList(bin: string, cwd: string): Promise<string> {
  const list = Bun.spawn({ cmd: [bin, "mcp", "list"], cwd, stdout: "pipe", stderr: "pipe", stdin: "ignore", env: { ...process.env, PWD: cwd } });
  const timer = setTimeout(() => list.kill(), 30_000);
  const [text, errText] = await Promise.all([new Response(list.stdout).text(), new Response(list.stderr).text(), list.exited]);
  clearTimeout(timer);
  return text + "\n" + errText;
}

// Doctor's line for an agent that is installed and has no a2a entry anywhere: a note (a user may
// well not use that agent with a2a), with the command that would set it up.
export const notSetUp = (title: string, id: string): Check => ({ check: title, level: "note", detail: "a2a is not set up for it (nothing more to check)", fix: `to use it with a2a: a2a setup ${id}` });

// Doctor's line on where a2a is registered, read from the agent's files (without --live).
export const registered = (title: string, scopes: string[], fix: string): Check =>
  scopes.length
    ? { check: `${title} MCP`, level: "ok", detail: `a2a is registered [scope: ${scopes.join(", ")}] (a2a doctor --live starts it to see it connect)` }
    : { check: `${title} MCP`, level: "problem", detail: "the a2a hooks are installed but the a2a server is not registered", fix };

// Doctor's line on an agent's a2a hooks: each event's first a2a command, or the events without one
// (`found`: a2aHooks of every file the agent reads, merged) and what their absence costs.
export function hooksCheck(title: string, id: string, events: Record<string, A2AEvent>, found: Record<string, string[]>): Check {
  const all = Object.keys(events);
  const missing = all.filter((ev) => !found[ev]?.length);
  const cost = (ev: string) => (events[ev] === "pre-tool-use" ? "an edit of a file another agent reserved is not stopped" : events[ev] === "notification" ? "a session that asks its user something is not shown as needs-you" : "mail reaches a session only when it calls a tool");
  return missing.length
    ? { check: `${title} hooks`, level: "problem", detail: `no a2a hook for ${missing.join(", ")}: ${[...new Set(missing.map(cost))].join("; ")}`, fix: `a2a setup ${id} (installs them with the MCP server)` }
    : { check: `${title} hooks`, level: "ok", detail: `installed: ${all.map((ev) => `${ev}: ${found[ev]![0]}`).join("; ")}` };
}

// The git commands a crew worker runs to record its work (permissions "edits"): a rule allows a
// command's prefix, whatever options follow, so none whose options write a file anywhere (diff
// and log take --output=FILE: a worker could write into the user's checkout or another
// worker's worktree).
export const WORKER_GIT = ["add", "commit", "status"];

// A crew worker's run: `claude -p` (the prompt on stdin), a2a's server (--mcp-config) and hooks
// (--settings: added to the user's own, for this run only), stream-json so the supervisor's log
// shows each step and the last line carries the cost. "edits": acceptEdits (file edits in its
// directory) and an allow-list (a2a's tools, git's recording commands); -p refuses what is not
// allowed instead of asking. "all": bypassPermissions (Claude Code refuses it as root unless
// IS_SANDBOX=1). Flags as --flag=VALUE: the variadic ones would swallow a worker's own arguments.
function headless(o: HeadlessOptions): Headless {
  const a2a = { command: o.a2a, pre: [] };
  const mcp = { mcpServers: { a2a: { type: "stdio", command: o.a2a, args: ["mcp", "--tools", o.tools] } } };
  const settings = withHookGroups({}, HOOK_EVENTS, HOOK_MATCHERS, a2a, { remove: false });
  const allow = ["mcp__a2a__*", ...WORKER_GIT.map((c) => `Bash(git ${c}:*)`)].join(",");
  const perms = o.permissions === "all" ? ["--permission-mode", "bypassPermissions"] : ["--permission-mode", "acceptEdits", `--allowedTools=${allow}`];
  return { args: ["-p", "--output-format", "stream-json", "--verbose", `--mcp-config=${JSON.stringify(mcp)}`, "--settings", JSON.stringify(settings), ...perms], env: {} };
}

export const claude: Agent = {
  id: "claude",
  title: "Claude Code",
  bin: "claude",
  npm: "@anthropic-ai/claude-code",
  mcpClient: /^claude-code$/,
  setup(o: SetupOptions) {
    const files = filesFor(o.scope, o.project, o.home);
    return [
      jsoncChange(files.mcp, "claude", (v) => withMcp(v, o.a2a, o.tools, o.remove), false),
      jsoncChange(files.settings, "claude", (v) => withHookGroups(v, HOOK_EVENTS, HOOK_MATCHERS, o.a2a, o), false),
    ];
  },
  doctor,
  hook: claudeHook,
  headless,
  done: (o) =>
    o.remove
      ? "a2a removed from Claude Code; sessions already running keep it until they restart"
      : `done: new Claude Code sessions start a2a mcp and the a2a hooks${o.scope === "project" ? " (Claude Code asks each user once to approve the project's .mcp.json server)" : ""}; check with a2a doctor`,
};
