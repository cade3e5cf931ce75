// Where Claude Code keeps what `a2a setup claude` changes and `a2a doctor` checks, and what
// a2a's entries there look like (checked with Claude Code 2.1; see docs in README "Claude Code"):
//   user scope     MCP: ~/.claude.json  "mcpServers"     hooks: ~/.claude/settings.json "hooks"
//   project scope  MCP: PROJECT/.mcp.json "mcpServers"   hooks: PROJECT/.claude/settings.json "hooks"
//   (local scope, `claude mcp add` without -s: ~/.claude.json "projects"[DIR]."mcpServers")
// `mcpServers` in ~/.claude/settings.json is NOT read by Claude Code.
//
// a2a's hook entries are recognised by their command: a2a (any path) then `hook EVENT`.

import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { A2AError } from "../../lib/core/errors";

export type Scope = "user" | "project";

export const HOOK_EVENTS = { SessionStart: "session-start", UserPromptSubmit: "user-prompt-submit", Stop: "stop", PreToolUse: "pre-tool-use" } as const;
export type HookEvent = keyof typeof HOOK_EVENTS;
// The tools an event's a2a hook is for (Claude Code's `matcher`); none: every occurrence. PreToolUse
// checks file reservations, so only the tools that write a file (MultiEdit: Claude Code before 2.x).
export const HOOK_MATCHERS: Partial<Record<HookEvent, string>> = { PreToolUse: "Edit|Write|MultiEdit|NotebookEdit" };

export interface Files {
  mcp: string; // the file with "mcpServers"
  settings: string; // the file with "hooks"
}

export function filesFor(scope: Scope, project: string, home = homedir()): Files {
  return scope === "user"
    ? { mcp: join(home, ".claude.json"), settings: join(home, ".claude", "settings.json") }
    : { mcp: join(project, ".mcp.json"), settings: join(project, ".claude", "settings.json") };
}

// A JSON object file: its text and value; absent -> {text: undefined, value: {}}.
export function readJsonObject(path: string): { text: string | undefined; value: Record<string, any> } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { text: undefined, value: {} };
    throw new A2AError("EIO", `cannot read ${path}: ${(e as Error).message}: check its permissions`);
  }
  if (!text.trim()) return { text, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new A2AError("EUSAGE", `${path} is not valid JSON: fix it (or move it aside), then run a2a setup claude again; nothing was changed`);
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new A2AError("EUSAGE", `${path} does not hold a JSON object: fix it, then retry; nothing was changed`);
  return { text, value: value as Record<string, any> };
}

// The words of a hook command (no shell parsing beyond quotes: a2a writes plain commands).
const words = (cmd: string) => (cmd.match(/'[^']*'|"[^"]*"|\S+/g) ?? []).map((w) => w.replace(/^['"]|['"]$/g, ""));

// The event an a2a hook command answers ("stop" for `/x/a2a --dir D hook stop --wait 5m`), or undefined.
export function a2aHookEvent(cmd: unknown): string | undefined {
  if (typeof cmd !== "string") return undefined;
  const w = words(cmd);
  if (!w.length || basename(w[0]) !== "a2a") return undefined;
  const i = w.indexOf("hook");
  return i > 0 && Object.values(HOOK_EVENTS).includes(w[i + 1] as any) ? w[i + 1] : undefined;
}

// a2a's hook commands found in a settings value, by Claude Code event.
export function a2aHooks(settings: Record<string, any>): Partial<Record<HookEvent, string[]>> {
  const out: Partial<Record<HookEvent, string[]>> = {};
  for (const ev of Object.keys(HOOK_EVENTS) as HookEvent[]) {
    const groups = settings?.hooks?.[ev];
    if (!Array.isArray(groups)) continue;
    for (const g of groups) for (const h of Array.isArray(g?.hooks) ? g.hooks : []) if (a2aHookEvent(h?.command)) (out[ev] ??= []).push(h.command);
  }
  return out;
}

export const shellQuote = (s: string) => (/^[A-Za-z0-9_./=:@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
