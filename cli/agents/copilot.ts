// GitHub Copilot CLI (`@github/copilot`, checked with 1.0.102: `copilot help config`, `copilot help
// environment`, `copilot mcp --help`, and its changelog.json; its engine is native code). Where
// `a2a setup copilot` writes and `a2a doctor` looks ($COPILOT_HOME for ~/.copilot):
//   user scope     MCP: ~/.copilot/mcp-config.json "mcpServers"   hooks: ~/.copilot/settings.json "hooks"
//   project scope  MCP: PROJECT/.github/mcp.json "mcpServers"     hooks: PROJECT/.github/copilot/settings.json "hooks"
// (a project's .mcp.json is read too, but it is Claude Code's project file: a2a leaves it to it.)
// Hooks: Copilot CLI takes Claude Code's nested {matcher, hooks: [{type, command, timeout}]} under
// PascalCase event names, and then sends Claude Code's snake_case payloads (hook_event_name,
// session_id, cwd, prompt, tool_name, tool_input, stop_hook_active) and reads Claude Code's answers,
// but for context: a top-level additionalContext. An agentStop (Stop) that always blocks is let go
// after 8 blocks in a row. The tools that write files: create and edit, named Write and Edit in
// the payload (tool_input.path). A folder's own files (the project scope) are read only once the
// folder is trusted (--trust-folder, or the trust prompt).
// It cannot be woken while idle at its prompt: mail waits for the next prompt or stop.

import { join } from "node:path";
import type { A2ACommand, Agent, Check, DoctorContext, Headless, HeadlessOptions, HookFormat, Scope, SetupOptions } from "./agent";
import { a2aHooks, claudeHook, HOOK_EVENTS, hooksCheck, mcpList, notSetUp, registered, toolHookInput, withHookGroups, WORKER_GIT } from "./claude";
import { readJsonQuietly } from "./edit";
import { jsoncChange } from "./jsonc-edit";
import { json } from "../io";

// Under Claude Code's event names Copilot CLI names its tools as Claude Code's (create: Write,
// edit: Edit) to the matcher and in the payload, with its own arguments (path); its own names
// too, in case. The matcher must match the whole tool name.
const HOOK_MATCHERS: Record<string, string | undefined> = { PreToolUse: "Write|Edit|create|edit" };
const FILE_OF: Record<string, string> = { Write: "path", Edit: "path", create: "path", edit: "path" };

const copilotDir = (home: string) => process.env.COPILOT_HOME || join(home, ".copilot");

export function filesFor(scope: Scope, project: string, home: string): { mcp: string; settings: string } {
  return scope === "user"
    ? { mcp: join(copilotDir(home), "mcp-config.json"), settings: join(copilotDir(home), "settings.json") }
    : { mcp: join(project, ".github", "mcp.json"), settings: join(project, ".github", "copilot", "settings.json") };
}

// mcpServers.a2a: a local (stdio) server with every tool; what else the user put in it stays,
// except a URL or cwd, which would reach a2a another way or start it elsewhere.
const NOT_KEPT = new Set(["url", "type", "headers", "cwd"]);
function withMcp(value: Record<string, any>, cmd: A2ACommand, tools: string | undefined, remove: boolean): Record<string, any> {
  const servers = { ...(value.mcpServers ?? {}) };
  const kept = Object.fromEntries(Object.entries(servers.a2a ?? {}).filter(([k]) => !NOT_KEPT.has(k)));
  if (remove) delete servers.a2a;
  else servers.a2a = { type: "local", tools: ["*"], ...kept, command: cmd.command, args: [...cmd.pre, "mcp", ...(tools ? ["--tools", tools] : [])] };
  const next = { ...value, mcpServers: servers };
  if (remove && !Object.keys(servers).length) delete next.mcpServers;
  return next;
}

// Context: Copilot CLI reads a top-level additionalContext (Claude Code's hookSpecificOutput is
// ignored for SessionStart and UserPromptSubmit); the stop's block and the tool's deny are Claude Code's.
export const copilotHook: HookFormat = { ...claudeHook, input: (raw) => toolHookInput(raw, FILE_OF), context: (_event, text) => json({ additionalContext: text }) };

const FIX_SETUP = "a2a setup copilot (every project of yours) or a2a setup copilot --scope project (this repository)";

async function doctor(d: DoctorContext): Promise<Check[]> {
  const checks: Check[] = [];
  const files = { user: filesFor("user", d.project, d.home), project: filesFor("project", d.project, d.home) };
  const scopes = (["user", "project"] as const).filter((s) => readJsonQuietly(files[s].mcp, true).mcpServers?.a2a);
  const where = scopes.map((s) => `${s} (${files[s].mcp})`);
  const found: Record<string, string[]> = {};
  const settings = { user: readJsonQuietly(files.user.settings, true), project: readJsonQuietly(files.project.settings, true) };
  for (const v of [settings.user, settings.project]) for (const [ev, cmds] of Object.entries(a2aHooks(v, Object.keys(HOOK_EVENTS)))) (found[ev] ??= []).push(...cmds);
  if (!scopes.length && !Object.keys(found).length) return [notSetUp("Copilot CLI", "copilot")];
  // `copilot mcp list` names the servers it would start (it starts none: no connection status).
  if (d.live && d.bin) {
    const listed = (await mcpList(d.bin, d.cwd)).split("\n").some((l) => /^\s*a2a \(local\)/.test(l));
    checks.push(listed ? { check: "Copilot CLI MCP", level: "ok", detail: `copilot mcp list shows a2a [${where.join(", ") || "scope unknown"}]` } : { check: "Copilot CLI MCP", level: "problem", detail: `copilot mcp list does not show a2a${where.length ? ` (registered in ${where.join(", ")}; a project's files count only in a folder Copilot CLI trusts)` : ""}`, fix: FIX_SETUP });
  } else checks.push(registered("Copilot CLI", where, FIX_SETUP));
  checks.push(hooksCheck("Copilot CLI", "copilot", HOOK_EVENTS, found));
  const off = [files.project.settings, files.user.settings].find((f, i) => [settings.project, settings.user][i].disableAllHooks === true);
  if (off) checks.push({ check: "Copilot CLI hooks", level: "problem", detail: `disableAllHooks is true in ${off}: Copilot CLI runs no hook`, fix: `set disableAllHooks to false in ${off} (or take it out)` });
  return checks;
}

// A crew worker's run: `copilot` with the prompt piped on stdin (its prompt mode, as -p), JSONL
// output (--output-format json: its events carry no token count, so the attempt's usage stays
// unknown). Copilot CLI reads hooks from settings files only, so a2a's server and hooks go into
// the worktree's project files, .github/mcp.json and .github/copilot/settings.json (a2a's members
// only, the project's own kept, as `a2a setup copilot --scope project` does), which
// cli/crew/launch.ts keeps out of the worker's commits; --trust-folder has this one run read them
// (no trust saved). The store's variables reach the server as ${NAME} references, which Copilot
// CLI expands (no value in the file); its timeout is 600 s, as Gemini CLI's, above a2a mcp's cap
// on a task_claim wait. "edits": file writes, a2a's tools and git's recording
// commands allowed (--allow-tool), anything else denied for want of a human; "all": --allow-all.
function headless(o: HeadlessOptions): Headless {
  const a2a = { command: o.a2a, pre: [] };
  const files = filesFor("project", o.cwd, "");
  const server = (v: Record<string, any>) => {
    const next = withMcp(v, a2a, o.tools, false);
    next.mcpServers.a2a = { ...next.mcpServers.a2a, env: Object.fromEntries(o.pass.map((k) => [k, `\${${k}}`])), timeout: 600_000 };
    return next;
  };
  const perms = o.permissions === "all" ? ["--allow-all"] : ["--allow-tool", "write", "--allow-tool", "a2a", ...WORKER_GIT.flatMap((c) => ["--allow-tool", `shell(git ${c})`])];
  return {
    args: ["--output-format", "json", "--no-color", "--no-ask-user", "--trust-folder", ...perms],
    env: {},
    edits: [jsoncChange(files.mcp, "copilot", server), jsoncChange(files.settings, "copilot", (v) => withHookGroups(v, HOOK_EVENTS, HOOK_MATCHERS, a2a, { remove: false, agent: "copilot" }))],
  };
}

export const copilot: Agent = {
  id: "copilot",
  title: "Copilot CLI",
  bin: "copilot",
  npm: "@github/copilot",
  mcpClient: /^copilot-cli$/, // "copilot-cli 1.0.102"
  setup(o: SetupOptions) {
    const files = filesFor(o.scope, o.project, o.home);
    return [
      jsoncChange(files.mcp, "copilot", (v) => withMcp(v, o.a2a, o.tools, o.remove)),
      jsoncChange(files.settings, "copilot", (v) => withHookGroups(v, HOOK_EVENTS, HOOK_MATCHERS, o.a2a, { ...o, agent: "copilot" })),
    ];
  },
  doctor,
  hook: copilotHook,
  headless,
  done: (o) =>
    o.remove
      ? "a2a removed from Copilot CLI; sessions already running keep it until they restart"
      : `done: new Copilot CLI sessions start a2a mcp and the a2a hooks${o.scope === "project" ? " (in a folder Copilot CLI trusts: it asks once, or copilot --trust-folder)" : ""}; check with a2a doctor`,
};
