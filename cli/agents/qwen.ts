// Qwen Code (`@qwen-code/qwen-code`, checked with 0.24.4: its bundle, packages/core/src/hooks and
// packages/cli/src/config/settingsSchema in chunks/): a Gemini CLI fork that kept Gemini CLI's
// settings files and MCP configuration but took Claude Code's hooks. Where `a2a setup qwen`
// writes and `a2a doctor` looks:
//   user scope     ~/.qwen/settings.json          "mcpServers" and "hooks" ($QWEN_HOME for ~/.qwen)
//   project scope  PROJECT/.qwen/settings.json    the same keys
// JSON with comments, as Gemini CLI's (a2a keeps them: jsonc-edit.ts). Folder trust is off by
// default (security.folderTrust.enabled: false); when the user turns it on, an untrusted folder
// starts no MCP server, as in Gemini CLI (doctor --live shows it from `qwen mcp list`).
// Mail delivery: Claude Code's events and answers (hookSpecificOutput.additionalContext,
// {"decision":"block","reason"} for Stop, permissionDecision "deny" for PreToolUse, stop_hook_active,
// notification_type), timeouts in seconds (1000 or more read as milliseconds); Qwen Code escapes
// < and > of the context. The tools that write files: write_file, edit (file_path), notebook_edit
// (notebook_path); the matcher is a regular expression. `disableAllHooks: true` turns every hook off.
// It cannot be woken while idle at its prompt (no channel, no way in for a background command).

import { join } from "node:path";
import type { A2ACommand, Agent, Check, DoctorContext, Headless, HeadlessOptions, HookFormat, Scope, SetupOptions } from "./agent";
import { a2aHooks, claudeHook, hooksCheck, mcpList, notSetUp, registered, toolHookInput, withHookGroups, HOOK_EVENTS, WORKER_GIT } from "./claude";
import { readJsonQuietly } from "./edit";
import { jsoncChange } from "./jsonc-edit";

// Anchored, so an MCP tool whose name contains "edit" is not checked.
const HOOK_MATCHERS: Record<string, string | undefined> = { PreToolUse: "^(write_file|edit|notebook_edit)$" };
const FILE_OF: Record<string, string> = { write_file: "file_path", edit: "file_path", notebook_edit: "notebook_path" };

// Qwen Code's own directory: $QWEN_HOME (the directory itself, not a home above it) when set.
const qwenDir = (home: string) => process.env.QWEN_HOME || join(home, ".qwen");

export function settingsFile(scope: Scope, project: string, home: string): string {
  return scope === "user" ? join(qwenDir(home), "settings.json") : join(project, ".qwen", "settings.json");
}

// What of the user's own in mcpServers.a2a is not kept: a URL (an HTTP transport wins over
// `command`) and a cwd (a2a mcp takes the session's name from its directory, the session's).
const NOT_KEPT = new Set(["url", "httpUrl", "type", "headers", "cwd"]);

// alwaysLoadTools: Qwen Code shows a model no MCP tool until it searched for it (its tool_search
// and tool_call bridge); a2a's hooks tell the model to call check_messages, and a2a's default set
// is small (6 KB, tests/unit/tool-budget), so its tools are declared upfront unless the user said
// otherwise in the entry.
function withMcp(value: Record<string, any>, cmd: A2ACommand, tools: string | undefined, remove: boolean): Record<string, any> {
  const servers = { ...(value.mcpServers ?? {}) };
  const kept = Object.fromEntries(Object.entries(servers.a2a ?? {}).filter(([k]) => !NOT_KEPT.has(k)));
  if (remove) delete servers.a2a;
  else servers.a2a = { alwaysLoadTools: true, ...kept, command: cmd.command, args: [...cmd.pre, "mcp", ...(tools ? ["--tools", tools] : [])] };
  const next = { ...value, mcpServers: servers };
  if (remove && !Object.keys(servers).length) delete next.mcpServers;
  return next;
}

export const qwenHook: HookFormat = { ...claudeHook, input: (raw) => toolHookInput(raw, FILE_OF) };

const FIX_SETUP = "a2a setup qwen (every project of yours) or a2a setup qwen --scope project (this repository)";

async function doctor(d: DoctorContext): Promise<Check[]> {
  const checks: Check[] = [];
  const files = { user: settingsFile("user", d.project, d.home), project: settingsFile("project", d.project, d.home) };
  const values = { user: readJsonQuietly(files.user, true), project: readJsonQuietly(files.project, true) };
  const scopes = (["user", "project"] as const).filter((s) => values[s].mcpServers?.a2a);
  const where = scopes.map((s) => `${s} (${files[s]})`).join(", ");
  const found: Record<string, string[]> = {};
  for (const v of [values.user, values.project]) for (const [ev, cmds] of Object.entries(a2aHooks(v, Object.keys(HOOK_EVENTS)))) (found[ev] ??= []).push(...cmds);
  if (!scopes.length && !Object.keys(found).length) return [notSetUp("Qwen Code", "qwen")];
  // `qwen mcp list` starts each server and says Connected or Disconnected: --live only.
  if (d.live && d.bin) {
    // It colours its status marks whatever NO_COLOR says.
    const line = (await mcpList(d.bin, d.cwd)).replace(/\x1b\[[0-9;]*m/g, "").split("\n").find((l) => /^\S*\s*a2a: /.test(l))?.trim();
    if (!line) checks.push({ check: "Qwen Code MCP", level: "problem", detail: `qwen mcp list does not show a2a${where ? ` (registered in ${where})` : ""}`, fix: FIX_SETUP });
    else if (/ - Connected$/.test(line)) checks.push({ check: "Qwen Code MCP", level: "ok", detail: `${line} [${where || "scope unknown"}]` });
    else if (/ - Pending approval$/.test(line)) checks.push({ check: "Qwen Code MCP", level: "problem", detail: `${line}: Qwen Code starts a project's MCP server only once each user approved it`, fix: `qwen mcp approve a2a (in ${d.project})` });
    else checks.push({ check: "Qwen Code MCP", level: "problem", detail: line, fix: "run the command it shows by hand to see the error (or trust this folder if folder trust is on); then a2a setup qwen" });
  } else checks.push(registered("Qwen Code", scopes.map((s) => `${s} (${files[s]})`), FIX_SETUP));
  checks.push(hooksCheck("Qwen Code", "qwen", HOOK_EVENTS, found));
  const off = values.project.disableAllHooks === true ? files.project : values.project.disableAllHooks === undefined && values.user.disableAllHooks === true ? files.user : undefined;
  if (off) checks.push({ check: "Qwen Code hooks", level: "problem", detail: `disableAllHooks is true in ${off}: Qwen Code runs no hook`, fix: `set disableAllHooks to false in ${off} (or take it out)` });
  return checks;
}

// A crew worker's run: `qwen -p ""` (the prompt on stdin, which it appends), stream-json output
// (its last {"type":"result"} holds the run's usage). a2a's server comes by --mcp-config (no
// secret in it: Qwen Code gives its MCP servers its own environment, A2A_DIR and A2A_AGENT among
// them); a server of the project's settings would wait for `qwen mcp approve`, one given on the
// command line does not. Hooks are read from settings files only: a2a's go into the worktree's
// project settings, .qwen/settings.json (a2a's members only, the project's own kept, as `a2a setup
// qwen --scope project` does), which cli/crew/launch.ts keeps out of the worker's commits.
// "edits": auto-edit, a2a's tools trusted, git's recording commands allowed (permissions.allow
// under the shell's own name: a headless run bans the shell unless a rule names it so, and
// Claude Code's Bash(...) does not; any other command is declined, no one being there to ask);
// "all": yolo.
function headless(o: HeadlessOptions): Headless {
  const a2a = { command: o.a2a, pre: [] };
  const server = { ...withMcp({}, a2a, o.tools, false).mcpServers.a2a, trust: true, timeout: 600_000 };
  const worker = (v: Record<string, any>) => {
    const allow: string[] = Array.isArray(v.permissions?.allow) ? v.permissions.allow : [];
    const mine = WORKER_GIT.map((c) => `run_shell_command(git ${c} *)`).filter((t) => !allow.includes(t));
    return withHookGroups({ ...v, permissions: { ...(v.permissions ?? {}), allow: [...allow, ...mine] } }, HOOK_EVENTS, HOOK_MATCHERS, a2a, { remove: false, agent: "qwen" });
  };
  const perms = ["--approval-mode", o.permissions === "all" ? "yolo" : "auto-edit"];
  return { args: ["-p", "", "-o", "stream-json", "--mcp-config", JSON.stringify({ mcpServers: { a2a: server } }), ...perms], env: {}, edits: [jsoncChange(settingsFile("project", o.cwd, ""), "qwen", worker)] };
}

export const qwen: Agent = {
  id: "qwen",
  title: "Qwen Code",
  bin: "qwen",
  npm: "@qwen-code/qwen-code",
  mcpClient: /^qwen-cli-mcp-client(-|$)/, // "qwen-cli-mcp-client-SERVER"
  setup(o: SetupOptions) {
    return [jsoncChange(settingsFile(o.scope, o.project, o.home), "qwen", (v) => withHookGroups(withMcp(v, o.a2a, o.tools, o.remove), HOOK_EVENTS, HOOK_MATCHERS, o.a2a, { ...o, agent: "qwen" }))];
  },
  doctor,
  hook: qwenHook,
  headless,
  done: (o) =>
    o.remove
      ? "a2a removed from Qwen Code; sessions already running keep it until they restart"
      : `done: new Qwen Code sessions start a2a mcp and the a2a hooks${o.scope === "project" ? " (Qwen Code starts the project's a2a server once each user approved it: qwen mcp approve a2a)" : ""}; check with a2a doctor`,
};
