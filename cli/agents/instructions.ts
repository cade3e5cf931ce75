// `a2a setup AGENT --primer`: one short block in the instructions file the agent reads at every
// start (CLAUDE.md, AGENTS.md, GEMINI.md, QWEN.md, copilot-instructions.md), saying to run `a2a primer` for the bus: for people
// who would rather their agents used a2a from the shell than through MCP (a few lines of
// context instead of a tool list).
//
// Invariants: the block is a2a's only change to the file, appended at its end; `--remove` takes
// out exactly the bytes setup added (the opening marker records how many newlines were added
// before it, so a file that did not end with a newline gets its end back as it was); a file
// a2a created and that holds nothing else is deleted (cli/agents/edit.ts). Codex and opencode
// share a project's AGENTS.md: one block serves both, and either's --remove takes it out.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { FileChange, Scope } from "./agent";

const OPEN = (joined: number) => `<!-- a2a:${joined}: written by a2a setup --primer; a2a setup AGENT --remove takes it out -->`;
const BODY = "These agents coordinate through a2a, a bus on this machine: run `a2a primer` to see what it offers and how to use it from the shell.";
const CLOSE = "<!-- /a2a -->";
const BLOCK_RE = /<!-- a2a:([012]): written by a2a setup --primer; a2a setup AGENT --remove takes it out -->\n[^]*?\n<!-- \/a2a -->\n$/;

// The instructions file each agent reads, per scope.
export function instructionsFile(agent: string, scope: Scope, project: string, home: string, env: Record<string, string | undefined> = process.env): string {
  const name = agent === "claude" ? "CLAUDE.md" : agent === "gemini" ? "GEMINI.md" : agent === "qwen" ? "QWEN.md" : agent === "copilot" ? "copilot-instructions.md" : "AGENTS.md";
  // Copilot CLI's own (`copilot instruction list`): .github/copilot-instructions.md, ~/.copilot/copilot-instructions.md.
  if (agent === "copilot") return scope === "project" ? join(project, ".github", name) : join(env.COPILOT_HOME || join(home, ".copilot"), name);
  if (scope === "project") return join(project, name);
  if (agent === "claude") return join(home, ".claude", name);
  if (agent === "gemini") return join(home, ".gemini", name);
  if (agent === "codex") return join(env.CODEX_HOME || join(home, ".codex"), name);
  if (agent === "qwen") return join(env.QWEN_HOME || join(home, ".qwen"), name);
  return join(env.XDG_CONFIG_HOME || join(home, ".config"), "opencode", name);
}

export function instructionsChange(path: string, remove: boolean): FileChange {
  return {
    path,
    change(text) {
      const before = text ?? "";
      const m = before.match(BLOCK_RE);
      if (remove) return m ? before.slice(0, m.index! - Number(m[1])) : before;
      if (m || before.includes("<!-- a2a:") && before.includes("written by a2a setup --primer")) return before; // there already (the user may have written below it)
      const joined = before === "" || before.endsWith("\n\n") ? 0 : before.endsWith("\n") ? 1 : 2;
      return `${before}${"\n".repeat(joined)}${OPEN(joined)}\n${BODY}\n${CLOSE}\n`;
    },
  };
}

// Whether `path` holds the block (so --remove without --primer names the file only then).
export function holdsBlock(path: string): boolean {
  try {
    return BLOCK_RE.test(readFileSync(path, "utf8"));
  } catch {
    return false;
  }
}
