// The crew file (TOML): who the crew's workers are, what each runs and how it is watched. A pure
// module (no storage): the CLI parses and checks a file before anything is started or written.
//
//   name = "builders"            # optional: the file's name without its extension (dots as "-")
//   lease = "30s"                # optional: the crew's lease and each task claim's
//   [[worker]]
//   name = "builder"             # count > 1: builder-1 .. builder-N
//   agent = "exec"               # or claude, codex, gemini, opencode
//   count = 2
//   queues = ["build"]           # one queue: a string
//   command = ["make", "step"]   # exec: an argv array, or a shell string (sh -c)
//   self_finish = false          # exec: true = the command ends the task itself (a2a task done/fail)
//   prompt = "..."               # agents: the task prompt template
//   keep_session = false         # agents: one long session that claims its own tasks, not one per task
//   worktree = true              # agents: its own git worktree, branch a2a/NAME beside the checkout
//   permissions = "edits"        # agents: "edits" (its worktree, git, a2a's tools) or "all" (no prompts at all)
//   env = { K = "v" }            # agents: more environment (its model, its key)
//   args = ["--model", "m"]      # agents: more arguments for its command
//   time_limit = "30m"           # per task; "0" or "none": no limit
//   restarts = 3                 # consecutive failed attempts before the worker is stopped
//   backoff = "1s"               # the first wait after a failed attempt (doubled each time, at most 1m)
//   cwd = "."                    # relative to the crew file's directory
//
// Every refusal is one EUSAGE line naming the file (and line where it can be found), the problem
// and the fix; nothing is started.

import { A2AError } from "../core/errors";
import { isValidName, NAME_RULE } from "../core/names";
import { parseDuration } from "../core/time";

export const AGENTS = ["exec", "claude", "codex", "gemini", "opencode", "copilot", "qwen"] as const;
export type AgentKind = (typeof AGENTS)[number];

export interface WorkerSpec {
  name: string; // its name on the bus: the tasks' assignee, its session, its log
  crew: string;
  agent: AgentKind;
  queues: string[];
  command: string[] | null; // exec only
  selfFinish: boolean; // exec: the command ends the task itself; agents always do
  prompt: string | null; // agents only
  keepSession: boolean;
  worktree: boolean; // agents: in its own git worktree (default), else in cwd itself
  permissions: "edits" | "all"; // agents: what it may do without a human (cli/agents/agent.ts Permissions)
  env: Record<string, string>; // agents: on top of the supervisor's environment
  args: string[]; // agents: more arguments for its command
  timeLimitSec: number | null;
  restarts: number;
  backoffSec: number;
  cwd: string;
}

export interface CrewSpec {
  name: string;
  file: string;
  leaseSec: number;
  workers: WorkerSpec[];
}

export const DEFAULT_LEASE_SEC = 30;
const DEFAULTS = { timeLimit: 30 * 60, restarts: 3, backoff: 1 };
const MAX_COUNT = 100;
const MAX_CREW_NAME = 128 - "crewhost.".length - ".".length - "-0123abcd".length; // room for the host's mark (names.ts)
const TOP_KEYS = ["name", "lease", "worker"];
const WORKER_KEYS = ["name", "agent", "count", "queues", "command", "self_finish", "prompt", "keep_session", "worktree", "permissions", "env", "args", "time_limit", "restarts", "backoff", "cwd"];
const AGENT_KEYS = ["prompt", "keep_session", "worktree", "permissions", "env", "args"];

export interface ParseEnv {
  dir: string; // the crew file's directory (for cwd and relative commands)
  which: (cmd: string, cwd: string) => string | null; // a program on PATH, or null
  isDir: (path: string) => boolean;
}

// The line of `key = ` in the file: the n-th such line counted from the n-th [[worker]] table.
function lineOf(text: string, key: string, worker?: number): number | undefined {
  const lines = text.split("\n");
  let table = -1;
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*\[\[\s*worker\s*\]\]/.test(lines[i])) table++;
    else if (/^\s*\[/.test(lines[i]) && worker === undefined && table === -1) return undefined;
    if ((worker === undefined ? table === -1 : table === worker) && new RegExp(`^\\s*["']?${key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}["']?\\s*=`).test(lines[i])) return i + 1;
  }
  return undefined;
}

export function parseCrew(text: string, file: string, env: ParseEnv): CrewSpec {
  const fail = (what: string, line?: number): never => {
    throw new A2AError("EUSAGE", `${file}${line ? `:${line}` : ""}: ${what}`, { data: { file, ...(line ? { line } : {}) } });
  };
  let doc: Record<string, unknown>;
  try {
    doc = Bun.TOML.parse(text) as Record<string, unknown>;
  } catch (e) {
    return fail(`not valid TOML (${String((e as Error).message).replace(/^TOML Parse error: /, "")}): fix the file's syntax`);
  }
  for (const k of Object.keys(doc)) if (!TOP_KEYS.includes(k)) fail(`unknown key ${k}: the keys of a crew file are ${TOP_KEYS.join(", ")} (a worker's keys go under [[worker]])`, lineOf(text, k));
  const base = file.split("/").pop()!.replace(/\.[^.]*$/, "");
  // No dot in a crew's name: its status is the slot crew.NAME and each worker's log crew.NAME.WORKER,
  // so crew "app.web" would share its status with the log of crew "app"'s worker "web".
  const name = doc.name ?? base.replaceAll(".", "-");
  if (!isValidName(name)) fail(`invalid crew name ${JSON.stringify(name)}: ${NAME_RULE}; set name = "..." in the file`, lineOf(text, "name"));
  // crewhost.NAME.HOST holds at least one character of the host.
  if ((name as string).length > MAX_CREW_NAME) fail(`crew name ${JSON.stringify(name)} is ${(name as string).length} characters, over ${MAX_CREW_NAME} (the crew's lease is crewhost.NAME.HOST): set a shorter name = "..."`, lineOf(text, "name"));
  if ((name as string).includes(".")) fail(`crew name ${JSON.stringify(name)} holds a dot, which a crew's name cannot (its workers' logs are crew.NAME.WORKER): use "-" instead`, lineOf(text, "name"));
  const leaseSec = doc.lease === undefined ? DEFAULT_LEASE_SEC : duration(doc.lease, "lease", lineOf(text, "lease"), fail);
  if (leaseSec === null || leaseSec < 1) fail(`lease must be at least 1s: e.g. lease = "30s"`, lineOf(text, "lease"));
  const tables = doc.worker;
  if (!Array.isArray(tables) || tables.length === 0) fail(`no workers: add a [[worker]] table with name, queues and command`);
  const workers: WorkerSpec[] = [];
  const seen = new Map<string, number>();
  (tables as Record<string, unknown>[]).forEach((w, i) => {
    const at = (k: string) => lineOf(text, k, i);
    const where = `worker ${typeof w.name === "string" ? w.name : i + 1}`;
    for (const k of Object.keys(w)) if (!WORKER_KEYS.includes(k)) fail(`unknown key ${k} in ${where}: a worker's keys are ${WORKER_KEYS.join(", ")}`, at(k));
    if (!isValidName(w.name)) fail(`${w.name === undefined ? `worker ${i + 1} has no name` : `invalid worker name ${JSON.stringify(w.name)}`}: ${NAME_RULE}; set name = "..."`, at("name") ?? tableLine(text, i));
    const agent = w.agent ?? "exec";
    if (typeof agent !== "string" || !(AGENTS as readonly string[]).includes(agent)) fail(`unknown agent ${JSON.stringify(agent)} in ${where}: use one of ${AGENTS.join(", ")}`, at("agent"));
    const queues = typeof w.queues === "string" ? [w.queues] : w.queues;
    if (!Array.isArray(queues) || queues.length === 0) fail(`${where} has no queues: add queues = ["NAME"]`, at("queues") ?? tableLine(text, i));
    for (const q of queues as unknown[]) if (!isValidName(q)) fail(`invalid queue name ${JSON.stringify(q)} in ${where}: ${NAME_RULE}`, at("queues"));
    const count = w.count ?? 1;
    if (!Number.isInteger(count) || (count as number) < 1 || (count as number) > MAX_COUNT) fail(`count in ${where} must be a whole number from 1 to ${MAX_COUNT}`, at("count"));
    const bool = (k: string) => {
      if (w[k] !== undefined && typeof w[k] !== "boolean") fail(`${k} in ${where} must be true or false`, at(k));
      return w[k] === true;
    };
    const selfFinish = bool("self_finish");
    const keepSession = bool("keep_session");
    // keep_session: one long session that claims its own tasks (lib/crew/session.ts), for every
    // coding agent; an exec worker is refused it below (its keys are not an agent's).
    const worktree = w.worktree === undefined ? true : bool("worktree");
    const permissions = w.permissions ?? "edits";
    if (permissions !== "edits" && permissions !== "all") fail(`permissions in ${where} must be "edits" (its worktree, git and a2a's tools) or "all" (no prompts at all)`, at("permissions"));
    const extraEnv = w.env ?? {};
    if (typeof extraEnv !== "object" || Array.isArray(extraEnv) || Object.values(extraEnv as object).some((v) => typeof v !== "string")) fail(`env in ${where} must be a table of texts: env = { NAME = "value" }`, at("env"));
    const args = w.args ?? [];
    if (!Array.isArray(args) || args.some((a) => typeof a !== "string")) fail(`args in ${where} must be a list of texts: args = ["--model", "NAME"]`, at("args"));
    const cwd = w.cwd === undefined ? env.dir : typeof w.cwd === "string" ? (w.cwd.startsWith("/") ? w.cwd : `${env.dir}/${w.cwd}`) : fail(`cwd in ${where} must be a path`, at("cwd"));
    if (!env.isDir(cwd)) fail(`cwd ${cwd} of ${where} is not a directory: make it, or fix the path (relative paths are from the crew file's directory)`, at("cwd") ?? tableLine(text, i));
    let command: string[] | null = null;
    let prompt: string | null = null;
    if (agent === "exec") {
      if (typeof w.command === "string" && w.command.trim()) command = ["/bin/sh", "-c", w.command];
      else if (Array.isArray(w.command) && w.command.length && w.command.every((a) => typeof a === "string") && w.command[0]) command = w.command as string[];
      else fail(`${where} (exec) has no command: add command = ["PROGRAM", "ARG"] or command = "shell line"`, at("command") ?? tableLine(text, i));
      for (const k of AGENT_KEYS) if (w[k] !== undefined) fail(`${k} in ${where} applies to agent workers, not exec: take it out`, at(k));
      const prog = command![0];
      if (!env.which(prog.includes("/") && !prog.startsWith("/") ? `${cwd}/${prog}` : prog, cwd)) fail(`${prog} (the command of ${where}) is not an executable program here: install it, or fix the path (relative paths are from cwd, ${cwd})`, at("command"));
    } else {
      if (w.command !== undefined || w.self_finish !== undefined) fail(`${w.command !== undefined ? "command" : "self_finish"} in ${where} applies to exec workers: an ${agent} worker gets its task as a prompt`, at(w.command !== undefined ? "command" : "self_finish"));
      if (w.prompt !== undefined && typeof w.prompt !== "string") fail(`prompt in ${where} must be a text`, at("prompt"));
      prompt = (w.prompt as string | undefined) ?? null;
      if (!env.which(agent as string, cwd)) fail(`${agent} (the agent of ${where}) is not installed: no ${agent} on PATH; install it, or use another agent`, at("agent"));
    }
    const timeLimitSec = w.time_limit === undefined ? DEFAULTS.timeLimit : duration(w.time_limit, `time_limit in ${where}`, at("time_limit"), fail);
    const restarts = w.restarts ?? DEFAULTS.restarts;
    if (!Number.isInteger(restarts) || (restarts as number) < 1) fail(`restarts in ${where} must be a whole number of at least 1 (failed attempts in a row before the worker is stopped)`, at("restarts"));
    const backoffSec = w.backoff === undefined ? DEFAULTS.backoff : duration(w.backoff, `backoff in ${where}`, at("backoff"), fail) ?? 0;
    const names = count === 1 ? [w.name as string] : Array.from({ length: count as number }, (_, n) => `${w.name}-${n + 1}`);
    for (const n of names) {
      // The worker's log is the slot crew.CREW.WORKER: a name over 128 could never be written.
      if (!isValidName(n) || `crew.${name}.${n}`.length > 128) fail(`worker name ${n} is too long for crew ${name}: its log crew.${name}.${n} must fit in 128 characters; shorten the worker's name or the crew's`, at("name"));
      if (seen.has(n)) fail(`two workers are named ${n} (workers ${seen.get(n)} and ${i + 1}): give each a name of its own`, at("name"));
      seen.set(n, i + 1);
      workers.push({ name: n, crew: name as string, agent: agent as AgentKind, queues: queues as string[], command, selfFinish, prompt, keepSession, worktree, permissions: permissions as "edits" | "all", env: extraEnv as Record<string, string>, args: args as string[], timeLimitSec, restarts: restarts as number, backoffSec, cwd });
    }
  });
  return { name: name as string, file, leaseSec: leaseSec!, workers };
}

const tableLine = (text: string, i: number) => {
  let n = -1;
  const lines = text.split("\n");
  for (let l = 0; l < lines.length; l++) if (/^\s*\[\[\s*worker\s*\]\]/.test(lines[l]) && ++n === i) return l + 1;
  return undefined;
};

// A duration key ("30s", "5m", a number of seconds); "0"/"none"/0: none (null).
function duration(v: unknown, key: string, line: number | undefined, fail: (what: string, line?: number) => never): number | null {
  if (v === 0 || v === "0" || v === "none") return null;
  if (typeof v === "number" && v > 0) return v;
  try {
    if (typeof v === "string") return parseDuration(v, key);
  } catch {
    // said below
  }
  return fail(`${key} ${JSON.stringify(v)} is not a duration: use e.g. "90s", "30m", "2h" (or "none")`, line);
}
