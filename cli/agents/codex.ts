// Codex CLI (`@openai/codex`, checked with 0.171.0, a native binary): where it keeps what
// `a2a setup codex` changes and `a2a doctor` checks, and how its command hooks speak.
//   user scope     MCP: $CODEX_HOME/config.toml [mcp_servers.a2a]   hooks: $CODEX_HOME/hooks.json
//                  ($CODEX_HOME defaults to ~/.codex), and the hooks' trust in config.toml
//                  [hooks.state."HOOKS.JSON:EVENT:GROUP:HANDLER"] trusted_hash
//   project scope  MCP: PROJECT/.codex/config.toml                   hooks: PROJECT/.codex/hooks.json
//                  (read only in a project the user trusts; Codex asks each user to review
//                  the project's hooks: hook trust is kept in the user's config only)
// config.toml is edited as text (toml.ts): every other line and comment stays as it was.
// Hooks: Claude Code's shape and dialect (SessionStart, UserPromptSubmit, Stop, PreToolUse;
// hookSpecificOutput.additionalContext, {"decision":"block"}, permissionDecision "deny"). Codex
// runs a hook only once its trusted_hash (sha256 of the hook's normalised identity) is
// recorded; setup records it for a2a's own hooks, as the user's "trust" in /hooks would.
// PreToolUse: Codex edits files with apply_patch, whose tool_input.command is the patch text.
// Idle at its prompt no hook fires: the session's a2a mcp wakes it with `codex queue --thread ID
// --resume` (cli/mcp/wake-ways.ts), the thread id kept from the hooks' session_id; that needs
// Codex's local app-server daemon (doctor says when it is not running).

import { hashHex } from "../../lib/core/digest";
import { join } from "node:path";
import { existsSync } from "node:fs";
import type { A2AEvent, Agent, Check, DoctorContext, Headless, HeadlessOptions, HookFormat, Scope, SetupOptions } from "./agent";
import { a2aHooks, claudeHook, notSetUp, withHookGroups } from "./claude";
import { parseJsonObject, readJsonQuietly, readText } from "./edit";
import { jsoncChange } from "./jsonc-edit";
import { a2aHookEvent } from "./hook-command";
import { codexPatchFiles } from "./patch-files";
import { parseToml, replaceTables, tableText, tomlHeader, tomlKey, tomlString } from "./toml";

const HOOK_EVENTS = { SessionStart: "session-start", UserPromptSubmit: "user-prompt-submit", Stop: "stop", PreToolUse: "pre-tool-use" } as const satisfies Record<string, A2AEvent>;
// Codex's labels in hook trust keys and hashes.
const EVENT_LABEL: Record<string, string> = { SessionStart: "session_start", UserPromptSubmit: "user_prompt_submit", Stop: "stop", PreToolUse: "pre_tool_use" };
// apply_patch is how Codex writes files; Edit and Write are the aliases its matcher also knows.
const HOOK_MATCHERS: Record<string, string | undefined> = { PreToolUse: "apply_patch|Edit|Write" };

// An agent_wait blocks up to a2a mcp's max wait (100 s by default): Codex's default tool
// timeout (60 s) would cut it short. a2a's tools are approved up front (they touch only the
// a2a store): Codex otherwise asks before each one that is not read-only, and `codex exec`
// (approval "never") refuses them outright ("MCP tool call requires approval").
export const TOOL_TIMEOUT_SEC = 600;

export function codexHome(home: string): string {
  return process.env.CODEX_HOME || join(home, ".codex");
}

export function filesFor(scope: Scope, project: string, home: string): { config: string; hooks: string } {
  const dir = scope === "user" ? codexHome(home) : join(project, ".codex");
  return { config: join(dir, "config.toml"), hooks: join(dir, "hooks.json") };
}

export function mcpBlock(o: SetupOptions): string {
  const args = [...o.a2a.pre, "mcp", ...(o.tools ? ["--tools", o.tools] : [])];
  return [tomlHeader(["mcp_servers", "a2a"]), `command = ${tomlString(o.a2a.command)}`, `args = [${args.map(tomlString).join(", ")}]`, `tool_timeout_sec = ${TOOL_TIMEOUT_SEC}`, `default_tools_approval_mode = "approve"`, ""].join("\n");
}

// Codex's trust hash of one command hook: sha256 over the JSON (keys sorted, compact) of
// {event_name, matcher?, hooks: [{type, command, timeout, async}]} (codex-rs hooks discovery,
// checked against the hashes Codex 0.171.0 itself records).
export function hookTrustHash(event: string, matcher: string | undefined, command: string, timeout: number): string {
  const canon = (v: any): any => (Array.isArray(v) ? v.map(canon) : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])])) : v);
  const id: Record<string, unknown> = { event_name: EVENT_LABEL[event], hooks: [{ type: "command", command, timeout: Math.max(1, timeout ?? 600), async: false }] };
  if (matcher !== undefined) id.matcher = matcher;
  return "sha256:" + hashHex("sha256", JSON.stringify(canon(id)));
}

interface HookSite {
  key: string; // Codex's trust key: HOOKS.JSON:EVENT:GROUP:HANDLER
  hash: string;
}

// a2a's hooks in a hooks.json value, where Codex finds them (its trust keys) and their hashes.
function a2aSites(hooksPath: string, value: Record<string, any>): HookSite[] {
  const sites: HookSite[] = [];
  for (const ev of Object.keys(HOOK_EVENTS)) {
    const groups = value?.hooks?.[ev];
    if (!Array.isArray(groups)) continue;
    groups.forEach((g: any, gi: number) =>
      (Array.isArray(g?.hooks) ? g.hooks : []).forEach((h: any, hi: number) => {
        if (a2aHookEvent(h?.command)) sites.push({ key: `${hooksPath}:${EVENT_LABEL[ev]}:${gi}:${hi}`, hash: hookTrustHash(ev, typeof g.matcher === "string" ? g.matcher : undefined, h.command, typeof h.timeout === "number" ? h.timeout : 600) });
      }),
    );
  }
  return sites;
}

const stateBlock = (s: HookSite) => [tomlHeader(["hooks", "state", s.key]), `trusted_hash = ${tomlString(s.hash)}`, ""].join("\n");

function setup(o: SetupOptions) {
  const files = filesFor(o.scope, o.project, o.home);
  // The hooks.json change runs first (setup.ts plans in order): config.toml's trust entries
  // follow a2a's hooks from where they were to where they are now.
  let sites: { before: HookSite[]; after: HookSite[] } | undefined;
  const hooksJson = (v: Record<string, any>) => {
    const next = withHookGroups(v, HOOK_EVENTS, HOOK_MATCHERS, o.a2a, { ...o, agent: "codex" });
    sites = { before: a2aSites(files.hooks, v), after: a2aSites(files.hooks, next) };
    return next;
  };
  const json = jsoncChange(files.hooks, "codex", hooksJson, false);
  // A hooks.json left with nothing in it is taken out (Codex warns about a file without "hooks").
  const hooksChange = { path: files.hooks, change: (text: string | undefined) => { const next = json.change(text); return o.remove && next !== null && /^\{\}\s*$/.test(next) ? null : next; } };
  const configChange = {
    path: files.config,
    change(text: string | undefined): string {
      let t = text ?? "";
      parseToml(files.config, t, "codex");
      // The user's environment for the server ([mcp_servers.a2a.env]) stays through a re-setup.
      const env = tableText(t, ["mcp_servers", "a2a", "env"]);
      t = replaceTables(files.config, t, ["mcp_servers", "a2a"], o.remove ? undefined : mcpBlock(o) + (env ? "\n" + env : ""), "codex");
      if (o.scope === "user") {
        const s = sites ?? { before: [], after: a2aSites(files.hooks, parseJsonObject(files.hooks, readText(files.hooks), { agent: "codex" })) };
        const now = new Set(s.after.map((x) => x.key));
        for (const old of s.before) if (!now.has(old.key)) t = replaceTables(files.config, t, ["hooks", "state", old.key], undefined, "codex");
        for (const x of s.after) t = replaceTables(files.config, t, ["hooks", "state", x.key], stateBlock(x), "codex");
      }
      return t;
    },
  };
  return [hooksChange, configChange];
}

export const codexHook: HookFormat = {
  input(raw, event) {
    const base = claudeHook.input(raw, event);
    if (event !== "pre-tool-use") return { ...base, files: undefined };
    const ti = raw.tool_input && typeof raw.tool_input === "object" ? (raw.tool_input as Record<string, unknown>) : {};
    const patch = typeof ti.command === "string" ? ti.command : typeof ti.patch === "string" ? ti.patch : typeof ti.input === "string" ? ti.input : "";
    const files = raw.tool_name === "apply_patch" ? codexPatchFiles(patch) : typeof ti.file_path === "string" ? [ti.file_path] : [];
    return { ...base, files: files.length ? files : undefined };
  },
  context: claudeHook.context,
  block: claudeHook.block,
  deny: claudeHook.deny,
};

function tomlQuietly(path: string): Record<string, any> {
  try {
    return Bun.TOML.parse(readText(path) ?? "") as Record<string, any>;
  } catch {
    return {};
  }
}

async function doctor(d: DoctorContext): Promise<Check[]> {
  const checks: Check[] = [];
  const user = filesFor("user", d.project, d.home);
  const proj = filesFor("project", d.project, d.home);
  const userConfig = tomlQuietly(user.config);
  const scopes: string[] = [];
  if (userConfig.mcp_servers?.a2a) scopes.push(`user (${user.config})`);
  const projConfig = tomlQuietly(proj.config);
  if (projConfig.mcp_servers?.a2a) scopes.push(`project (${proj.config})`);
  const fix = "a2a setup codex (every project of yours) or a2a setup codex --scope project (this repository)";
  const events = Object.keys(HOOK_EVENTS);
  const found: Record<string, string[]> = {};
  for (const f of [user.hooks, proj.hooks]) for (const [ev, cmds] of Object.entries(a2aHooks(readJsonQuietly(f), events))) (found[ev] ??= []).push(...cmds);
  if (!scopes.length && !Object.keys(found).length) return [notSetUp("Codex CLI", "codex")];
  if (!scopes.length) checks.push({ check: "Codex CLI MCP", level: "problem", detail: "a2a is not registered in Codex's config.toml", fix });
  else {
    const a2a = (userConfig.mcp_servers?.a2a ?? projConfig.mcp_servers?.a2a) as Record<string, any>;
    checks.push({ check: "Codex CLI MCP", level: "ok", detail: `a2a: ${[a2a.command, ...(a2a.args ?? [])].join(" ")} [scope: ${scopes.join(", ")}]` });
    if (typeof a2a.tool_timeout_sec !== "number" || a2a.tool_timeout_sec < 120) checks.push({ check: "Codex CLI MCP tool timeout", level: "problem", detail: `tool_timeout_sec is ${a2a.tool_timeout_sec ?? "Codex's default, 60 s"}: an agent_wait longer than that is cut short`, fix: "a2a setup codex (sets it to 600)" });
    if (scopes.length === 1 && !userConfig.mcp_servers?.a2a && userConfig.projects?.[d.project]?.trust_level !== "trusted") checks.push({ check: "Codex CLI project trust", level: "note", detail: `${d.project} is not marked trusted in ${user.config}: Codex ignores the project's .codex/config.toml until you trust it`, fix: "start codex in the project once and trust it" });
  }
  const missing = events.filter((ev) => !found[ev]?.length);
  if (missing.length) checks.push({ check: "Codex CLI hooks", level: "problem", detail: `no a2a hook for ${missing.join(", ")}: mail reaches a session only when it calls an a2a tool`, fix: "a2a setup codex (installs them with the MCP server)" });
  else {
    const trusted = new Set(Object.entries(userConfig.hooks?.state ?? {}).map(([k, v]: [string, any]) => `${k} ${v?.trusted_hash}`));
    const untrusted = a2aSites(user.hooks, readJsonQuietly(user.hooks)).filter((s) => !trusted.has(`${s.key} ${s.hash}`));
    checks.push(untrusted.length
      ? { check: "Codex CLI hooks", level: "problem", detail: `${untrusted.length} a2a hook(s) in ${user.hooks} are not trusted: Codex skips them`, fix: "a2a setup codex (records their trust), or trust them in codex's /hooks" }
      : { check: "Codex CLI hooks", level: "ok", detail: `installed: ${events.map((ev) => `${ev}: ${found[ev]![0]}`).join("; ")}` });
  }
  // The wake (issue 35) asks Codex's local daemon to resume the session's thread (cli/mcp/wake-ways.ts).
  const codexHome = process.env.CODEX_HOME || join(d.home, ".codex");
  if (scopes.length && !existsSync(join(codexHome, "app-server-control", "app-server-control.sock"))) {
    checks.push({ check: "Codex CLI idle wake", level: "note", detail: "Codex's local app-server daemon is not running: mail does not wake a session idle at its prompt (it comes at the next prompt, stop or tool call)", fix: "codex app-server daemon start (interactive codex sessions then use it)" });
  }
  return checks;
}

// A JSON value as a TOML inline value (strings, numbers, booleans, arrays, tables).
const inlineToml = (v: unknown): string =>
  Array.isArray(v) ? `[${v.map(inlineToml).join(", ")}]` : v && typeof v === "object" ? `{ ${Object.entries(v).map(([k, x]) => `${tomlKey(k)} = ${inlineToml(x)}`).join(", ")} }` : typeof v === "string" ? tomlString(v) : String(v);

// A crew worker's run: `codex exec -` (the prompt on stdin), --json (its events, with token
// counts, for the supervisor's log), a2a's server and hooks as -c settings for this run only.
// Hooks given so (Codex's session-flags layer) run only under --dangerously-bypass-hook-trust:
// trust recorded for them there is ignored, and recording it in the user's config.toml would
// outlast the run. That flag also runs the user's own enabled hooks without their review.
// Codex hands an MCP server only a few variables of its own: `env_vars` names the store's.
// "edits": the workspace-write sandbox, which keeps every .git read-only (even one given with
// --add-dir): the agent cannot commit, so its work is committed after the run (lib/crew/worktree.ts
// commitLeftovers); "all": no sandbox, no approvals.
function headless(o: HeadlessOptions): Headless {
  const set = (key: string, value: unknown) => ["-c", `${key}=${inlineToml(value)}`];
  const hooks = withHookGroups({}, HOOK_EVENTS, HOOK_MATCHERS, { command: o.a2a, pre: [] }, { remove: false, agent: "codex" }).hooks as Record<string, unknown>;
  const perms = o.permissions === "all" ? ["--dangerously-bypass-approvals-and-sandbox"] : ["-s", "workspace-write"];
  return {
    args: [
      "exec", "--json", "--skip-git-repo-check", ...perms,
      ...set("mcp_servers.a2a", { command: o.a2a, args: ["mcp", "--tools", o.tools], env_vars: o.pass, tool_timeout_sec: TOOL_TIMEOUT_SEC, default_tools_approval_mode: "approve" }),
      ...Object.entries(hooks).flatMap(([ev, groups]) => set(`hooks.${ev}`, groups)),
      "--dangerously-bypass-hook-trust",
      "-",
    ],
    env: {},
  };
}

export const codex: Agent = {
  id: "codex",
  title: "Codex CLI",
  bin: "codex",
  npm: "@openai/codex",
  mcpClient: /^codex-mcp-client$/,
  setup,
  doctor,
  hook: codexHook,
  headless,
  done: (o) =>
    o.remove
      ? "a2a removed from Codex CLI; sessions already running keep it until they restart"
      : `done: new Codex sessions start a2a mcp and the a2a hooks${o.scope === "project" ? " (Codex reads .codex/ only in a project you trust, and asks each user to review its hooks in /hooks)" : ""}; check with a2a doctor`,
};
