// How a crew worker's coding agent is started for one task (issue 36): the command line of the
// agent's own headless one-task mode, run in the worker's git worktree, with a2a's MCP server and
// hooks given for that run only (flags and environment, never the user's config files nor files in
// the worktree), bound to the worker's name (A2A_AGENT) and the crew's store (A2A_DIR: a database
// URL stays in the environment, never in argv). The prompt (lib/crew/prompt.ts) goes on stdin:
// neither the payload nor the lease token is shown in `ps`. The supervisor spawns the spec, waits,
// and reads the task: ended by this attempt (task_done or task_fail, which the agent calls through
// its a2a mcp) or still claimed (the attempt failed). Each agent's command: its `headless` in
// cli/agents/AGENT.ts.

import { commitLeftovers, ensureWorktree, gitDirOf, keepOutOfCommits, worktreeResult } from "../../lib/crew/worktree";
import { readText } from "../agents/edit";
import { writeUserFile } from "../../lib/core/user-file";
import { A2AError } from "../../lib/core/errors";
import { isAbsolute, relative } from "node:path";
import { sessionPrompt, taskPrompt, type Job } from "../../lib/crew/prompt";
import type { LaunchSpec } from "../../lib/crew/worker";
import { AGENTS } from "../agents";
import type { Permissions } from "../agents/agent";

export type { Job };

export type { LaunchSpec };

export type AgentId = "claude" | "codex" | "gemini" | "opencode" | "qwen" | "copilot";

// The worker as the crew file gives it (the parts a launch needs).
export interface AgentWorker {
  name: string;
  agent: AgentId;
  prompt?: string; // the template (lib/crew/prompt.ts names its placeholders)
  queues?: string[]; // a long session's (job null): the queues it claims from itself
  worktree: boolean; // its own git worktree (branch a2a/NAME) rather than the checkout itself
  repo?: string; // the user's repository (git root); default: the supervisor's directory
  worktreeDir?: string; // where worktrees go (default: REPO.crew beside the checkout)
  base?: string; // what a new worktree's branch starts from (default: the checkout's HEAD)
  permissions?: Permissions; // default "edits" (see PERMISSIONS)
  env?: Record<string, string>; // the agent's environment on top of the supervisor's (its model, its API key)
  args?: string[]; // more arguments for the agent's command (a model, a provider)
  bin?: string; // the agent's command (default: its name on PATH)
}


export interface LaunchContext {
  store: string; // the store as a2a reads it (A2A_DIR): a directory or a database URL
  a2aBin: string; // the a2a binary the agent's MCP server and hooks run
  bus?: string; // the store as shown (no password): whose worktree it is (lib/crew/worktree.ts)
}

// The tools a worker's a2a mcp offers: the usual ones, the queue's, and file reservations.
export const WORKER_TOOLS = "default,tasks,files";

// Refused before anything is made (EUSAGE, one line with the fix): an agent a2a does not know, or
// one not installed. `job` null: one long session (keep_session) that claims its tasks itself.
export async function launchAgent(w: AgentWorker, job: Job | null, ctx: LaunchContext): Promise<LaunchSpec> {
  const agent = Object.hasOwn(AGENTS, w.agent) ? AGENTS[w.agent] : undefined;
  if (!agent?.headless) throw new A2AError("EUSAGE", `worker ${w.name}: unknown agent ${JSON.stringify(w.agent)}: use one of ${Object.values(AGENTS).filter((a) => a.headless).map((a) => a.id).join(", ")}`);
  const bin = w.bin ?? agent.bin;
  if (!Bun.which(bin, { PATH: w.env?.PATH ?? process.env.PATH ?? "" })) throw new A2AError("EUSAGE", `worker ${w.name}: ${agent.title} is not installed (no ${bin} on PATH): npm install -g ${agent.npm}, or give the worker its path`);
  const repo = w.repo ?? process.cwd();
  const wt = w.worktree ? ensureWorktree(repo, w.name, { dir: w.worktreeDir, base: w.base, bus: ctx.bus }) : undefined;
  const cwd = wt?.path ?? repo;
  const where = { name: w.name, branch: wt?.branch, worktree: cwd };
  const prompt = job ? taskPrompt(job, where, w.prompt) : sessionPrompt(w.queues ?? [], where, w.prompt);
  // The user's own settings (A2A_REPO among them) pass; the store and the name are the crew's.
  const env: Record<string, string | undefined> = { ...process.env, ...w.env, A2A_DIR: ctx.store, A2A_AGENT: w.name, PWD: cwd };
  const pass = Object.keys(env).filter((k) => k.startsWith("A2A_") || k.startsWith("PG")).sort();
  const run = agent.headless({ a2a: ctx.a2aBin, tools: WORKER_TOOLS, permissions: w.permissions ?? "edits", cwd, pass, privateDir: gitDirOf(cwd) });
  for (const e of run.edits ?? []) {
    const rel = relative(cwd, e.path);
    const inTree = !rel.startsWith("..") && !isAbsolute(rel);
    if (inTree && !wt) throw new A2AError("EUSAGE", `${agent.title} reads a2a's settings from a file in its directory: give worker ${w.name} a worktree of its own`);
    const before = readText(e.path);
    const next = e.change(before);
    if (next !== null && next !== before) {
      if (inTree) keepOutOfCommits(cwd, rel);
      writeUserFile(e.path, next);
    }
  }
  // What the run left: anything the agent did not commit (Codex's sandbox keeps .git read-only),
  // committed on its branch; the branch and commit, for the worker's log.
  const after = wt
    ? () => {
        const committed = commitLeftovers(cwd, w.name, `a2a crew: what ${w.name} left uncommitted in ${job ? `task ${job.id} (attempt ${job.attempt})` : "its session"}`);
        const r = worktreeResult(cwd);
        return `[a2a crew] ${job ? `task ${job.id}` : "session"}: the work is on ${r.branch} at ${r.commit.slice(0, 12)}${committed ? " (what was left uncommitted was committed)" : ""}`;
      }
    : undefined;
  return { cmd: [bin, ...run.args, ...(w.args ?? [])], cwd, env: { ...env, ...run.env }, stdin: prompt, after };
}
