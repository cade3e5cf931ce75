// What the supervisor runs for a worker's task, whatever the worker is: a Launcher turns (worker,
// job) into a process to start (LaunchSpec). exec workers' launcher is here; the coding agents'
// (claude, codex, gemini, opencode, copilot, qwen) is the CLI's (cli/crew/launch.ts), handed to the supervisor.
// A pure module: it builds the spec, lib/crew/process.ts runs it.

import { A2AError } from "../core/errors";
import type { WorkerSpec } from "./file";

export type { WorkerSpec };

export interface Job { queue: string; id: string; attempt: number; token: string; payload: string; expiresAt: number }
export interface LaunchSpec {
  cmd: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  stdin?: string;
  // After the process ended (not when the crew stopped it), before the attempt's end is decided:
  // what the run left, as a line for the worker's log (an agent's worktree: its leftovers
  // committed, its branch and commit).
  after?: () => string | undefined;
}
// Supplied by the CLI adapter (cli/crew/launch.ts for agents; exec is lib/crew/worker.ts's): how to run `worker` on `job`.
// `store`: the store as a worker's own a2a reaches it (A2A_DIR): a directory, or a database URL
// as given (it may hold a password: it goes into the environment only, never argv or a file).
// `job` null: one long session of a keep_session worker, which claims its tasks itself.
export type Launcher = (worker: WorkerSpec, job: Job | null, store: string) => Promise<LaunchSpec>;

// How an attempt's success is known once its process exits (lib/crew/attempt.ts):
// "stdout": exit 0 is done with stdout as the result (the supervisor finishes the task);
// "self": the process ends the task itself (a2a task done/fail, an agent's task_done).
export const endsBy = (w: WorkerSpec): "stdout" | "self" => (w.agent === "exec" && !w.selfFinish ? "stdout" : "self");

// The environment every worker process gets on top of the supervisor's: who it is and what it
// works on. The token only where the process ends the task itself: an exec whose result is
// its stdout has nothing to do with it (the supervisor finishes the task).
export function jobEnv(w: WorkerSpec, job: Job, store: string): Record<string, string | undefined> {
  return {
    A2A_DIR: store,
    A2A_AGENT: w.name,
    A2A_TASK_ID: job.id,
    A2A_TASK_ATTEMPT: String(job.attempt),
    A2A_TASK_QUEUE: job.queue,
    A2A_TASK_TOKEN: endsBy(w) === "self" ? job.token : undefined,
  };
}

// exec: the command, in its cwd, the payload on stdin.
export const execLauncher: Launcher = async (w, job, store) => {
  if (!job) throw new A2AError("EUSAGE", `worker ${w.name}: an exec worker has no long session: take keep_session out`); // refused in the crew file already
  return { cmd: w.command!, cwd: w.cwd, env: jobEnv(w, job, store), stdin: job.payload };
};
