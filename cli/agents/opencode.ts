// opencode (`opencode-ai`, checked with 1.18.33): where it keeps what `a2a setup opencode` changes
// and `a2a doctor` checks, and how a2a's plugin there speaks to `a2a hook --agent opencode`.
//   user scope     MCP: $XDG_CONFIG_HOME/opencode/opencode.json (~/.config/opencode/; opencode.jsonc
//                  instead when that exists: opencode reads both, the .jsonc last) "mcp"."a2a"
//                  plugin: $XDG_CONFIG_HOME/opencode/plugins/a2a.js
//   project scope  MCP: ROOT/opencode.json (or opencode.jsonc)   plugin: ROOT/.opencode/plugins/a2a.js
// The files are JSONC: a2a changes its one member in place (jsonc-edit.ts), the user's comments and
// layout stay. The server entry carries a `timeout` (ms): opencode uses it for every tool call
// (its default would be the MCP SDK's 60 s, below the 100 s an agent_wait may block).
// Mail: opencode has no command hooks; it loads JS plugins from those directories, and a2a's
// (opencode-plugin.ts) runs `a2a hook EVENT --agent opencode` on its events: session start and
// new mail join the system prompt of the next model request, an idle session is prompted again
// while mail waits, and write/edit/apply_patch of a reserved file is refused.
// What it cannot do: the idle continuation needs a running opencode (the TUI, `opencode serve`);
// `opencode run` exits at its first idle, so there the stop is not held. What a2a adds to the
// system prompt lasts for the turn, not the whole conversation. A subagent (task tool) session is
// announced as the same a2a session as its parent.

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { A2AError } from "../../lib/core/errors";
import type { A2ACommand, Agent, Check, DoctorContext, FileChange, Headless, HeadlessOptions, HookFormat, Scope, SetupOptions } from "./agent";
import { parseJsonObject, readJsonQuietly, readText } from "./edit";
import { mcpList, notSetUp, registered, WORKER_GIT } from "./claude";
import { jsoncChange } from "./jsonc-edit";
import { PLUGIN_MARK, pluginText } from "./opencode-plugin";
import { opencodePatchFiles } from "./patch-files";
import { json } from "../io";

// One tool call may block this long (a2a's longest wait, and room to answer).
const TOOL_TIMEOUT_MS = 600_000; // well above a2a mcp's longest call (A2A_MCP_MAX_WAIT, 100 s by default), as for Codex

export interface Files {
  config: string; // the opencode.json(c) with "mcp"
  plugin: string; // a2a's plugin
}

// opencode's own config directory: $XDG_CONFIG_HOME/opencode, else ~/.config/opencode.
export const configDir = (home: string) => join(process.env.XDG_CONFIG_HOME || join(home, ".config"), "opencode");

// The config file of a directory: opencode.jsonc when it exists (read last, it wins; opencode's
// first run creates one when there is no config), else opencode.json.
const configIn = (dir: string) => (existsSync(join(dir, "opencode.jsonc")) ? join(dir, "opencode.jsonc") : join(dir, "opencode.json"));

export function filesFor(scope: Scope, project: string, home: string): Files {
  const dir = scope === "user" ? configDir(home) : project;
  return { config: configIn(dir), plugin: join(scope === "user" ? dir : join(project, ".opencode"), "plugins", "a2a.js") };
}

function serverEntry(cmd: A2ACommand, tools: string | undefined, before: any): Record<string, unknown> {
  const environment = before && typeof before === "object" && before.environment && typeof before.environment === "object" ? before.environment : undefined;
  return { type: "local", command: [cmd.command, ...cmd.pre, "mcp", ...(tools ? ["--tools", tools] : [])], enabled: true, timeout: TOOL_TIMEOUT_MS, ...(environment ? { environment } : {}) };
}

// The config's change: mcp.a2a set (or taken out, and "mcp" with it when nothing else is left),
// every other byte as it was (jsonc-edit.ts).
function configChange(path: string, o: SetupOptions): FileChange {
  return jsoncChange(path, "opencode", (value) => {
    if (o.remove && !(value.mcp && typeof value.mcp === "object" && Object.hasOwn(value.mcp, "a2a"))) return value;
    const mcp = { ...(value.mcp && typeof value.mcp === "object" ? value.mcp : {}) };
    if (o.remove) delete mcp.a2a;
    else mcp.a2a = serverEntry(o.a2a, o.tools, value.mcp?.a2a);
    const next = { ...value, mcp };
    if (!Object.keys(mcp).length) delete next.mcp;
    return next;
  });
}

// The plugin file: a2a's whole, so written as a2a wants it, or deleted.
function pluginChange(path: string, o: SetupOptions): FileChange {
  return {
    path,
    change(text) {
      // A file there that a2a did not write is the user's: never replaced nor deleted.
      if (text !== undefined && !text.startsWith(PLUGIN_MARK)) throw new A2AError("EUSAGE", `${path} is not a2a's plugin: move it aside (or rename it), then run a2a setup opencode again; nothing was changed`);
      return o.remove ? null : pluginText(o.a2a, o.worker);
    },
  };
}

// The file a tool call would write (opencode's tools: write and edit take filePath; apply_patch a
// patch whose header lines name them, as opencode reads them: patch-files.ts).
function filesOf(tool: unknown, args: Record<string, unknown>): string[] | undefined {
  if (typeof tool !== "string") return undefined;
  if (["write", "edit", "multiedit"].includes(tool)) return typeof args.filePath === "string" && args.filePath ? [args.filePath] : undefined;
  if (["apply_patch", "patch"].includes(tool) && typeof args.patchText === "string") {
    const files = opencodePatchFiles(args.patchText);
    return files.length ? files : undefined;
  }
  return undefined;
}

// The plugin's JSON: {cwd, continuation, prompt, tool, args, asks, answered}; the answers: {context}, {block},
// {deny}, and a wake's {block} (the session's next prompt) or {held} (a line for opencode's log).
export const opencodeHook: HookFormat = {
  input(raw) {
    const args = raw.args && typeof raw.args === "object" ? (raw.args as Record<string, unknown>) : {};
    const prompt = typeof raw.prompt === "string" ? raw.prompt : undefined;
    const asks = typeof raw.asks === "string" && raw.asks ? raw.asks : undefined;
    return { cwd: typeof raw.cwd === "string" && raw.cwd ? raw.cwd : undefined, continuation: raw.continuation === true, files: filesOf(raw.tool, args), prompt, asks, answered: raw.answered === true };
  },
  context: (_event, text) => json({ context: text }),
  block: (reason) => json({ block: reason }),
  deny: (reason) => json({ deny: reason }),
  wake: { read: "check_messages (the a2a_check_messages tool)", endOnHold: true, answer: (a) => json("wake" in a ? { block: a.wake } : a) },
};

const stripAnsi = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");

async function doctor(d: DoctorContext): Promise<Check[]> {
  const checks: Check[] = [];
  const user = filesFor("user", d.project, d.home);
  const proj = filesFor("project", d.project, d.home);
  const scopes: string[] = [];
  if (readJsonQuietly(user.config, true).mcp?.a2a) scopes.push(`user (${user.config})`);
  if (readJsonQuietly(proj.config, true).mcp?.a2a) scopes.push(`project (${proj.config})`);
  const plugins = [user.plugin, proj.plugin].filter((p) => readText(p)?.startsWith(PLUGIN_MARK));
  if (!scopes.length && !plugins.length) return [notSetUp("opencode", "opencode")];
  const fix = "a2a setup opencode (every project of yours) or a2a setup opencode --scope project (this repository)";
  if (d.live && d.bin) {
    // ~4 s: opencode starts every configured server and lists its tools (--live only).
    const text = await mcpList(d.bin, d.cwd);
    const line = stripAnsi(text).split("\n").find((l) => /\sa2a\s/.test(l + " "));
    if (!line) checks.push({ check: "opencode MCP", level: "problem", detail: `opencode mcp list does not show a2a${scopes.length ? ` (registered in ${scopes.join(", ")})` : ""}`, fix });
    else if (/connected/.test(line)) checks.push({ check: "opencode MCP", level: "ok", detail: `a2a connected [scope: ${scopes.join(", ") || "unknown"}]` });
    else checks.push({ check: "opencode MCP", level: "problem", detail: line.replace(/^[\s●│]+/, "").trim(), fix: "run its command by hand to see the error; then a2a setup opencode" });
  } else checks.push(registered("opencode", scopes, fix));
  checks.push(plugins.length
    ? { check: "opencode plugin", level: "ok", detail: `installed: ${plugins.join(", ")}` }
    : { check: "opencode plugin", level: "problem", detail: "a2a's plugin is not installed: mail reaches a session only when it calls an a2a tool, and an edit of a file another agent reserved is not stopped", fix: "a2a setup opencode (installs it with the MCP server)" });
  return checks;
}

// A crew worker's run: `opencode run` (the prompt on stdin) with --format json (its events),
// a2a's server, plugin and permissions in OPENCODE_CONFIG_CONTENT (a layer over the user's and
// the project's config, for this run only). The plugin is a file opencode loads by URL: a2a's,
// written into the work tree's own git directory, never into the work tree. What `opencode run`
// cannot do: hold a stop (it exits at its first idle), so mail that comes after the model's last
// tool call waits for the next task. "edits": edits allowed, bash denied but git's recording
// commands; "all": --auto (every permission not explicitly denied).
function headless(o: HeadlessOptions): Headless {
  const a2a = { command: o.a2a, pre: [] };
  const plugin = join(o.privateDir, "a2a-crew-opencode.js");
  const bash = Object.fromEntries([["*", "deny"], ...WORKER_GIT.map((c) => [`git ${c}*`, "allow"])]);
  const config = {
    mcp: { a2a: serverEntry(a2a, o.tools, undefined) },
    plugin: [`file://${plugin}`],
    ...(o.permissions === "all" ? {} : { permission: { edit: "allow", bash, webfetch: "deny" } }),
  };
  return {
    args: ["run", "--format", "json", ...(o.permissions === "all" ? ["--auto"] : [])],
    env: { OPENCODE_CONFIG_CONTENT: JSON.stringify(config) },
    edits: [{ path: plugin, change: () => pluginText(a2a) }],
  };
}

export const opencode: Agent = {
  id: "opencode",
  title: "opencode",
  bin: "opencode",
  npm: "opencode-ai",
  mcpClient: /^opencode$/,
  setup(o: SetupOptions) {
    const files = filesFor(o.scope, o.project, o.home);
    // --remove takes a2a out of both files opencode reads there, wherever it was put.
    const dir = dirname(files.config);
    const configs = o.remove ? [join(dir, "opencode.json"), join(dir, "opencode.jsonc")] : [files.config];
    return [...configs.map((f) => configChange(f, o)), pluginChange(files.plugin, o)];
  },
  doctor,
  hook: opencodeHook,
  headless,
  done: (o) =>
    o.remove
      ? "a2a removed from opencode; sessions already running keep it until they restart"
      : `done: new opencode sessions start a2a mcp and load a2a's plugin${o.scope === "project" ? " (commit opencode.json and .opencode/plugins/a2a.js for the team)" : ""}; check with a2a doctor`,
};
