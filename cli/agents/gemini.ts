// Gemini CLI (`@google/gemini-cli`, checked with 0.61.0: its bundle and the docs shipped in it,
// docs/hooks/reference.md, docs/reference/configuration.md): where `a2a setup gemini` writes and
// `a2a doctor` looks, and how its command hooks speak.
//   user scope     ~/.gemini/settings.json          "mcpServers" and "hooks" ($GEMINI_CLI_HOME for ~)
//   project scope  PROJECT/.gemini/settings.json    the same keys; read only in a trusted folder
// The file is JSON with comments (Gemini CLI strips them on reading and keeps them when it writes):
// a2a keeps them too (jsonc-edit.ts changes only the members it owns).
// Folder trust: in a folder the user has not trusted, Gemini CLI starts NO MCP server, not even
// the user's own ("Disabled" in `gemini mcp list`), and runs no project hooks; doctor says so.
// Mail delivery: Gemini CLI has command hooks, with the event's JSON on stdin ({session_id, cwd,
// hook_event_name, ...}) and JSON on stdout; a2a uses four:
//   SessionStart  -> session-start        hookSpecificOutput.additionalContext (prepended to the
//                                         prompt of `gemini -p`, a first turn interactively)
//   BeforeAgent   -> user-prompt-submit   hookSpecificOutput.additionalContext (appended to the prompt)
//   AfterAgent    -> stop                 {"decision":"block","reason"}: the reason is sent to the
//                                         model as a new prompt (stop_hook_active: true then)
//   BeforeTool    -> pre-tool-use         {"decision":"deny","reason"} for write_file and replace
//                                         (tool_input.file_path): the reason is the tool's error
// Timeouts are in milliseconds. Exit 2 would block the action with stderr as the reason, so a2a
// never uses it (its failures exit 1: a warning, the session goes on). Gemini CLI shows context
// with < and > escaped, inside <hook_context> tags. It cannot be woken while idle at its prompt:
// mail waits for the next prompt or stop, as with Claude Code.

import { join } from "node:path";
import { WAKE_TAG } from "../../lib/sessions/wake-rule";
import type { A2ACommand, A2AEvent, Agent, Check, DoctorContext, Headless, HeadlessOptions, HookFormat, Scope, SetupOptions } from "./agent";
import { a2aHooks, hooksCheck, mcpList, notSetUp, registered, toolHookInput, withHookGroups, WORKER_GIT } from "./claude";
import { readJsonQuietly } from "./edit";
import { jsoncChange } from "./jsonc-edit";
import { json } from "../io";

export const HOOK_EVENTS = { SessionStart: "session-start", BeforeAgent: "user-prompt-submit", AfterAgent: "stop", BeforeTool: "pre-tool-use", Notification: "notification" } as const satisfies Record<string, A2AEvent>;
// BeforeTool's matcher is an unanchored regular expression over the tool name: anchored, so an
// MCP tool whose name contains "replace" is not checked.
export const HOOK_MATCHERS: Record<string, string | undefined> = { BeforeTool: "^(write_file|replace)$" };

// Gemini CLI's home: $GEMINI_CLI_HOME when set, as Gemini CLI itself reads it.
const geminiHome = (home: string) => process.env.GEMINI_CLI_HOME || home;

export function settingsFile(scope: Scope, project: string, home: string): string {
  return scope === "user" ? join(geminiHome(home), ".gemini", "settings.json") : join(project, ".gemini", "settings.json");
}

// What of the user's own in mcpServers.a2a is not kept: a URL (an HTTP transport wins over
// `command`) and a cwd (a2a mcp takes the session's name from its directory, the session's).
const NOT_KEPT = new Set(["url", "httpUrl", "type", "headers", "cwd"]);

// mcpServers.a2a: command and args are a2a's; what else the user put in the entry (timeout,
// trust, env, includeTools) stays.
function withMcp(value: Record<string, any>, cmd: A2ACommand, tools: string | undefined, remove: boolean): Record<string, any> {
  const servers = { ...(value.mcpServers ?? {}) };
  const kept = Object.fromEntries(Object.entries(servers.a2a ?? {}).filter(([k]) => !NOT_KEPT.has(k)));
  if (remove) delete servers.a2a;
  else servers.a2a = { ...kept, command: cmd.command, args: [...cmd.pre, "mcp", ...(tools ? ["--tools", tools] : [])] };
  const next = { ...value, mcpServers: servers };
  if (remove && !Object.keys(servers).length) delete next.mcpServers;
  return next;
}

// The files Gemini CLI's tools write, by tool: write_file and replace name it in file_path
// (absolute, or relative to the project: a2a resolves it against the hook's cwd).
const FILE_OF: Record<string, string> = { write_file: "file_path", replace: "file_path" };

// Gemini CLI brings a background command's end into an idle session as a "user steering update"
// wrapping its output: the prompt of a2a's wake is the wake's text inside, so that turn is not
// taken for the user's (the loop guard counts it).
function promptOf(raw: Record<string, unknown>): string | undefined {
  if (typeof raw.prompt !== "string") return undefined;
  const at = raw.prompt.indexOf(WAKE_TAG);
  return at > 0 && raw.prompt.includes("[Background command completed") ? raw.prompt.slice(at) : raw.prompt;
}

export const geminiHook: HookFormat = {
  input: (raw) => ({ ...toolHookInput(raw, FILE_OF), prompt: promptOf(raw) }),
  context: (event, text) => json({ hookSpecificOutput: { hookEventName: event === "session-start" ? "SessionStart" : "BeforeAgent", additionalContext: text } }),
  block: (reason) => json({ decision: "block", reason }),
  deny: (reason) => json({ decision: "deny", reason }),
  // The waiter is a background shell command the model starts: its output is what the model reads.
  wake: { read: "check_messages (the a2a MCP tool)", endOnHold: false, answer: (a) => ("wake" in a ? a.wake : a.held) + "\n" },
};

const FIX_SETUP = "a2a setup gemini (every project of yours) or a2a setup gemini --scope project (this repository)";
const FIX_TRUST = "trust this folder in Gemini CLI (/permissions trust, or add it to ~/.gemini/trustedFolders.json), or start gemini with --skip-trust";

async function doctor(d: DoctorContext): Promise<Check[]> {
  const checks: Check[] = [];
  const files = { user: settingsFile("user", d.project, d.home), project: settingsFile("project", d.project, d.home) };
  const values = { user: readJsonQuietly(files.user, true), project: readJsonQuietly(files.project, true) };
  const scopes = (["user", "project"] as const).filter((s) => values[s].mcpServers?.a2a);
  const where = scopes.map((s) => `${s} (${files[s]})`).join(", ");
  const events = Object.keys(HOOK_EVENTS);
  const found: Record<string, string[]> = {};
  for (const v of [values.user, values.project]) for (const [ev, cmds] of Object.entries(a2aHooks(v, events))) (found[ev] ??= []).push(...cmds);
  if (!scopes.length && !Object.keys(found).length) return [notSetUp("Gemini CLI", "gemini")];
  // `gemini mcp list` starts each server and says Connected, Disconnected or Disabled (untrusted
  // folder); it takes ~4 s of CPU (Gemini CLI's start-up): --live only.
  if (d.live && d.bin) {
    const text = await mcpList(d.bin, d.cwd);
    const line = text.split("\n").find((l) => /^\S*\s*a2a: /.test(l))?.trim();
    if (!line) checks.push({ check: "Gemini CLI MCP", level: "problem", detail: `gemini mcp list does not show a2a${where ? ` (registered in ${where})` : ""}`, fix: FIX_SETUP });
    else if (/ - Connected$/.test(line)) checks.push({ check: "Gemini CLI MCP", level: "ok", detail: `${line} [${where || "scope unknown"}]` });
    else if (/ - Disabled$/.test(line) && /untrusted/.test(text)) checks.push({ check: "Gemini CLI MCP", level: "problem", detail: `${line}: Gemini CLI starts no MCP server in a folder you have not trusted (${d.cwd})`, fix: FIX_TRUST });
    else checks.push({ check: "Gemini CLI MCP", level: "problem", detail: line, fix: "run the command it shows by hand to see the error; then a2a setup gemini" });
  } else checks.push(registered("Gemini CLI", scopes.map((s) => `${s} (${files[s]})`), FIX_SETUP));
  checks.push(hooksCheck("Gemini CLI", "gemini", HOOK_EVENTS, found));
  // The project's setting wins over the user's; on by default.
  const off = values.project.hooksConfig?.enabled === false ? files.project : values.project.hooksConfig?.enabled === undefined && values.user.hooksConfig?.enabled === false ? files.user : undefined;
  if (off) checks.push({ check: "Gemini CLI hooks", level: "problem", detail: `hooksConfig.enabled is false in ${off}: Gemini CLI runs no hook`, fix: `set hooksConfig.enabled to true in ${off} (or take it out)` });
  // Its only way into an idle session (issue 35, docs/AGENTS.md) rests on two experimental
  // settings a2a leaves to the user; the project's value wins over the user's.
  const setting = (get: (v: any) => unknown) => get(values.project) ?? get(values.user);
  const steering = setting((v) => v.experimental?.modelSteering) === true;
  const inject = setting((v) => v.tools?.shell?.backgroundCompletionBehavior) === "inject";
  if (!steering || !inject) {
    checks.push({
      check: "Gemini CLI idle wake",
      level: "note",
      detail: `mail does not wake a session idle at its prompt (it comes at the next prompt or stop): Gemini CLI's one way in, a background command's end, needs ${[!steering && "experimental.modelSteering: true", !inject && 'tools.shell.backgroundCompletionBehavior: "inject"'].filter(Boolean).join(" and ")}, both experimental`,
      fix: `to have it: set them in ${files.user}, and have the model run a2a hook wake --agent gemini in the background (docs/AGENTS.md)`,
    });
  }
  return checks;
}

// A crew worker's run: `gemini -p` (the prompt on stdin), stream-json output. Gemini CLI reads
// MCP servers and hooks from settings files only, and a file it is pointed at by variable
// (GEMINI_CLI_SYSTEM_DEFAULTS_PATH) must be root's in directories only root writes: so a2a's go
// into the worktree's project settings, .gemini/settings.json (a2a's members only, the
// project's own kept, as `a2a setup gemini --scope project` does), which cli/crew/launch.ts keeps
// out of the worker's commits. The store's variables reach the server as $NAME references,
// which Gemini CLI expands (no value in the file). GEMINI_CLI_TRUST_WORKSPACE: a new worktree is
// a folder no one trusted, where Gemini CLI reads no project settings (its --skip-trust sets the
// same variable, but only after the settings were read). It warns on stderr of the project hooks.
// "edits": auto_edit, a2a's tools trusted, git's recording commands allowed (tools.allowed:
// deprecated for its policy engine, still honoured by 0.61); "all": yolo.
function headless(o: HeadlessOptions): Headless {
  const a2a = { command: o.a2a, pre: [] };
  const worker = (v: Record<string, any>) => {
    const next = withMcp(v, a2a, o.tools, false);
    next.mcpServers.a2a = { ...next.mcpServers.a2a, env: Object.fromEntries(o.pass.map((k) => [k, `$${k}`])), trust: true, timeout: 600_000 };
    const allowed: string[] = Array.isArray(v.tools?.allowed) ? v.tools.allowed : [];
    const mine = WORKER_GIT.map((c) => `run_shell_command(git ${c})`).filter((t) => !allowed.includes(t));
    return withHookGroups({ ...next, tools: { ...(v.tools ?? {}), allowed: [...allowed, ...mine] } }, HOOK_EVENTS, HOOK_MATCHERS, a2a, { remove: false, agent: "gemini", timeoutScale: 1000 });
  };
  const perms = o.permissions === "all" ? ["--approval-mode", "yolo"] : ["--approval-mode", "auto_edit"];
  return { args: ["-p", "", "-o", "stream-json", ...perms], env: { GEMINI_CLI_TRUST_WORKSPACE: "true" }, edits: [jsoncChange(settingsFile("project", o.cwd, ""), "gemini", worker)] };
}

export const gemini: Agent = {
  id: "gemini",
  title: "Gemini CLI",
  bin: "gemini",
  npm: "@google/gemini-cli",
  mcpClient: /^gemini-cli-mcp-client$/,
  setup(o: SetupOptions) {
    return [jsoncChange(settingsFile(o.scope, o.project, o.home), "gemini", (v) => withHookGroups(withMcp(v, o.a2a, o.tools, o.remove), HOOK_EVENTS, HOOK_MATCHERS, o.a2a, { ...o, agent: "gemini", timeoutScale: 1000 }))];
  },
  doctor,
  hook: geminiHook,
  headless,
  done: (o) =>
    o.remove
      ? "a2a removed from Gemini CLI; sessions already running keep it until they restart"
      : `done: new Gemini CLI sessions start a2a mcp and the a2a hooks in folders you trust (Gemini CLI starts no MCP server in an untrusted folder)${o.scope === "project" ? "; the project's hooks run once each user trusts this folder" : ""}; check with a2a doctor`,
};
