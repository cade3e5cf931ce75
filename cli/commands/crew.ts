// `a2a crew`: a crew of workers that a2a starts, feeds from queues and watches (lib/crew/,
// docs/PROTOCOL.md "Crew"). `crew up FILE` is the supervisor, in the foreground until Ctrl-C or
// `crew down`; `crew` lists the crews and their workers from any terminal; `crew logs`, `crew
// stop`, `crew down` reach a crew through the bus (on PostgreSQL from any machine).

import type { Command } from "commander";
import { readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { A2AError, arg, op, text } from "../../lib/core/errors";
import { parseCrew } from "../../lib/crew/file";
import type { LogPart } from "../../lib/crew/follow";
import type { CrewStatus } from "../../lib/crew/status";
import type { Usage } from "../../lib/crew/usage";
import type { Launcher } from "../../lib/crew/worker";
import { launchAgent, type AgentId } from "../crew/launch";
import { checkWorktree } from "../../lib/crew/worktree";
import { age, preview, table } from "../format";
import { durationMs, err, json, out } from "../io";
import { action, command, end, type Ctx } from "../run";

const MAX_FILE = 1024 * 1024;

// The crew file as text: one line naming the problem when it cannot be read.
function readCrewFile(path: string): string {
  try {
    if (statSync(path).size > MAX_FILE) throw new A2AError("EUSAGE", `${path} is over ${MAX_FILE} bytes: that is no crew file; give the path of one`);
    return readFileSync(path, "utf8");
  } catch (e) {
    if (e instanceof A2AError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new A2AError("EUSAGE", `cannot read crew file ${path}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : code ?? "unreadable"}; give the path of a crew file (a2a crew up --help shows one)`);
  }
}

const usageCell = (u: Usage) => `${u.input}/${u.output}${u.cost === null ? "" : ` $${u.cost.toFixed(4)}`}`;

// One block a crew: a line per supervisor (one per host), then every host's workers.
function crewTable(crews: CrewStatus[]): string {
  if (!crews.length) return "no crews: a2a crew up FILE starts one\n";
  const names = [...new Set(crews.map((s) => s.crew))];
  return names.map((name) => {
    const sups = crews.filter((s) => s.crew === name);
    const head = sups.map((s) => `crew ${s.crew}: ${s.state}${s.state === "gone" ? " (its supervisor is gone: its tasks go back when their leases run out)" : ""}, supervisor pid ${s.pid} on ${s.host}, ${s.file}\n`).join("");
    // Tokens and cost: only for a crew whose agents reported some (an exec crew has none).
    const usage = sups.some((s) => s.workers.some((w) => w.usage));
    const rows = sups.flatMap((s) => s.workers.map((w) => [
      w.name, s.host, w.agent, w.state, age(w.since), w.task ? `${w.task.id} #${w.task.attempt}` : "-", String(w.done), String(w.failed),
      ...(usage ? [w.usage ? usageCell(w.usage) : "-"] : []),
      preview(w.state === "gave-up" || w.state === "backoff" ? (w.reason ?? "") : (w.last ?? ""), 50),
    ]));
    return head + table(["WORKER", "HOST", "AGENT", "STATE", "SINCE", "TASK", "DONE", "FAILED", ...(usage ? ["TOKENS IN/OUT, COST"] : []), "LAST"], rows);
  }).join("\n");
}

const TIMEOUT = ["--timeout <seconds>", "give up waiting after this long (exit 124)"] as const;

function crewCommands(t: Command): void {
  command(t, "up", {
    summary: "start a crew from FILE and watch its workers, until Ctrl-C or crew down",
    description: "Start the workers a crew file (TOML) names and supervise them in the foreground: each worker claims a task from its queues (as its own name), runs it, ends it; a failed attempt backs off and is retried by the queue, and after `restarts` failed attempts in a row the worker is stopped. A run over its time_limit is stopped and its attempt failed. Ctrl-C (or SIGTERM, or `a2a crew down` from anywhere) stops every worker's processes, gives back their tasks (not counted as attempts) and every lease the crew holds; exit 130 for Ctrl-C, 0 after crew down. A crew file that is not valid is refused with one line and exit 2, nothing started; a crew that is already up is refused with exit 4, naming its supervisor.\n\nA crew file:\n  name = \"build\"          # default: the file's name\n  lease = \"30s\"           # the crew's lease and each task claim's\n  [[worker]]\n  name = \"builder\"         # count = 2: builder-1, builder-2\n  count = 2\n  queues = [\"build\"]\n  command = [\"make\", \"-s\", \"step\"]   # or a shell line; the payload on stdin\n  time_limit = \"30m\"      # restarts = 3, backoff = \"1s\", self_finish = false, cwd = \".\"\n  # or agent = \"claude\" (codex, gemini, opencode, copilot, qwen): a coding agent",
    examples: ["a2a crew up crew.toml", "a2a crew up crew.toml 2>crew.log &"],
    json: "print {crew, workers, gaveUp} when it ends",
  })
    .argument("<file>", "the crew file (TOML)")
    .action(action(async (c: Ctx, file: string) => {
      const spec = parseCrew(readCrewFile(file), file, { dir: dirname(resolve(file)), which: (cmd, cwd) => Bun.which(cmd, { cwd }), isDir: (p) => !!statSync(p, { throwIfNoEntry: false })?.isDirectory() });
      // The coding agents' launcher (cli/crew/launch.ts): the agent's headless one-task run in its
      // worktree, set up for a2a for that run only; exec's is lib/crew/worker.ts's own.
      // Every agent worker's worktree is checked before anything starts: one line and exit 2 for
      // a directory outside a repository, or a path that holds something not a2a's.
      for (const w of spec.workers) if (w.agent !== "exec" && w.worktree) checkWorktree(w.cwd, w.name, { bus: c.bus.where });
      const agent: Launcher = (w, job, store) =>
        launchAgent({ name: w.name, agent: w.agent as AgentId, prompt: w.prompt ?? undefined, queues: w.queues, worktree: w.worktree, repo: w.cwd, permissions: w.permissions, env: w.env, args: w.args }, job, { store, a2aBin: process.execPath, bus: c.bus.where });
      const launchers: Record<string, Launcher> = { claude: agent, codex: agent, gemini: agent, opencode: agent, copilot: agent, qwen: agent };
      const outcome = await c.bus.crew.up(spec, { launchers, signal: c.signal(), onLine: (l) => err(`a2a crew: ${l}\n`) });
      const r = end(c, outcome, { timeout: "ok", aborted: () => text`crew ${spec.name} stopped: every worker's process ended and its task was given back` });
      if (c.json) out(json(r));
      if (r.gaveUp.length) {
        const w = r.workers.find((x) => x.name === r.gaveUp[0])!;
        throw new A2AError("EFAILED", text`crew ${spec.name} ended: ${r.gaveUp.join(", ")} ${w.reason ?? "gave up"}; see the attempts with ${op("task list", "--state", "dead")}`, { data: { gave_up: r.gaveUp } });
      }
    }));

  command(t, "logs", {
    summary: "print a worker's output (its current or last task); -f: follow it, task after task",
    description: "Print the output of worker NAME's current task (or its last one) as it came, headed by the task and ended by how it ended. With --follow, keep printing as it comes, task after task, until the worker stops (crew stop, crew down, gave up) or its supervisor is gone. The log is on the bus (the slot crew.CREW.NAME: `a2a status` and `a2a tail` read it too), so it can be read from any terminal, and on PostgreSQL from any machine. Exit 3 if no crew has a worker NAME, 124 on --timeout.",
    examples: ["a2a crew logs builder-1", "a2a crew logs builder-1 -f"],
    json: "one JSON object per part: {worker, task} at a task's start, {worker, n, text} per chunk of output, {worker, end} at its end",
  })
    .argument("<name>", "the worker")
    .option("-f, --follow", "keep printing, task after task, until the worker stops")
    .option(...TIMEOUT)
    .action(action(async (c: Ctx, name: string, o) => {
      let bare = true; // the output so far ends a line
      const show = (p: LogPart) => {
        if (c.json) return out(json(p.kind === "output" ? { worker: name, n: p.n, text: p.text } : { worker: name, [p.kind]: p.text }));
        const text = p.kind === "output" ? p.text : `${bare ? "" : "\n"}-- ${p.text}\n`;
        if (text) bare = text.endsWith("\n");
        out(text);
      };
      const outcome = await c.bus.crew.logs(name, show, { follow: !!o.follow, timeoutMs: durationMs(o.timeout, "--timeout"), signal: o.follow ? c.signal() : undefined });
      end(c, outcome, { timeout: () => text`timed out following ${name}: it did not stop in time; raise ${arg("timeout")}` });
    }));

  command(t, "stop", {
    summary: "stop one worker of a crew that is up",
    description: "Ask the supervisor of worker NAME's crew to stop it: its process group ends, its task goes back to the queue (not counted as an attempt) and it takes no more tasks; the rest of the crew goes on. Waits until it has stopped. Exit 3 if no crew that is up has a worker NAME, 124 on --timeout.",
    examples: ["a2a crew stop builder-2"],
    json: "print the crew's status once the worker has stopped",
  })
    .argument("<name>", "the worker")
    .option(...TIMEOUT)
    .action(action(async (c: Ctx, name: string, o) => {
      const outcome = await c.bus.crew.control(undefined, { stop: name }, { timeoutMs: durationMs(o.timeout, "--timeout"), signal: c.signal() });
      const s = end(c, outcome, { timeout: () => text`timed out waiting for ${name} to stop: see ${op("crew")}` })![0];
      c.confirm(s, `stopped ${name} (crew ${s.crew})`);
    }));

  command(t, "restart", {
    summary: "restart one worker of a crew that is up: its run ends, its task given back, and it goes on",
    description: "Ask the supervisor of worker NAME to restart it: its process group ends, its task goes back to the queue (not counted as an attempt, so it is claimed again, by this worker or another), and the worker claims its next task as before. A waiting worker starts its wait again. The dashboard's restart does the same. Waits until it has. Exit 3 if no crew that is up has a worker NAME running, 124 on --timeout.",
    examples: ["a2a crew restart builder-2"],
    json: "print the crew's status once the worker has restarted",
  })
    .argument("<name>", "the worker")
    .option(...TIMEOUT)
    .action(action(async (c: Ctx, name: string, o) => {
      const outcome = await c.bus.crew.control(undefined, { restart: name }, { timeoutMs: durationMs(o.timeout, "--timeout"), signal: c.signal() });
      const s = end(c, outcome, { timeout: () => text`timed out waiting for ${name} to restart: see ${op("crew")}` })![0];
      c.confirm(s, `restarted ${name} (crew ${s.crew})`);
    }));

  command(t, "down", {
    summary: "stop a crew that is up: every worker, its tasks given back, its leases released",
    description: "Ask the supervisors of crew CREW (or of the only crew that is up) to stop, every host's (one per machine; --host: that one's only), from any terminal (on PostgreSQL from any machine): every worker's process group ends, each task it held goes back to its queue (not counted as an attempt), the workers leave the bus, the worktrees a2a made for them are removed when everything in them is committed (the branch a2a/NAME stays: it holds the work; one kept with changes is named on stderr), and the crew's leases are released. Waits until it has. Exit 3 if the crew is not up (on that host), 124 on --timeout.",
    examples: ["a2a crew down", "a2a crew down build --timeout 1m", "a2a crew down build --host build-2"],
    json: "print the last status of each supervisor it stopped, as a JSON array",
  })
    .argument("[crew]", "the crew (default: the only one up)")
    .option("--host <host>", "stop only the crew's supervisor on this host (as a2a crew shows it)")
    .option(...TIMEOUT)
    .action(action(async (c: Ctx, crew: string | undefined, o) => {
      const outcome = await c.bus.crew.control(crew, { down: true }, { timeoutMs: durationMs(o.timeout, "--timeout"), signal: c.signal(), host: o.host });
      const all = end(c, outcome, { timeout: () => text`timed out waiting for crew ${crew ?? ""} to stop: see ${op("crew")}` })!;
      c.confirm(all, `crew ${all[0].crew} is down${o.host !== undefined ? ` on ${o.host}` : all.length > 1 ? ` (${all.map((s) => s.host).join(", ")})` : ""}`);
    }));
}

export const commands = {
  crew: (p: Command) => {
    const t = command(p, "crew", {
      summary: "a crew of workers a2a starts, feeds from queues and watches: up, logs, stop, restart, down",
      description: "Show the crews and their workers (on PostgreSQL every machine's: each machine runs its own supervisor for its own workers, each shown with its host): each worker's agent, state (waiting for a task, working, backoff after a failed attempt, gave-up, stopped; gone when its supervisor is), since when, its task and attempt, tasks done and attempts failed, and the last line of its output. Subcommands: up FILE (start a crew, or this host's part of it), logs NAME [-f], stop NAME, restart NAME, down [CREW] [--host H] (every host's part of the crew, or H's).",
      examples: ["a2a crew up crew.toml", "a2a crew", "a2a crew --json | jq '.[].workers[] | {name, state}'", "a2a crew logs builder-1 -f", "a2a crew down"],
      json: "print the crews' supervisors (one per crew and host) as a JSON array: {crew, host, pid, state, workers: [{name, agent, state, since, task, done, failed, reason, restarts, last, usage}]} (usage: {input, output, cost} tokens and US dollars over the worker's runs, where its agent reports them; cost null where it gives none)",
    })
      .argument("[crew]", "only this crew")
      .action(action(async (c: Ctx, crew: string | undefined) => {
        const crews = await c.bus.crew.list(crew);
        if (crew !== undefined && !crews.length) throw new A2AError("ENOTFOUND", text`no crew named ${crew}: ${op("crew")} lists them`, { data: { crew } });
        out(c.json ? json(crews) : crewTable(crews));
      }));
    crewCommands(t);
    return t;
  },
};
