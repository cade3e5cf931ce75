// The crew's supervisor (`a2a crew up`): one per crew and host, holding the lease
// `crewhost.CREW.HOST` and one `crewworker.WORKER` per worker; for each worker a loop of claim,
// run, end (lib/crew/attempt.ts), with restarts and backoff; stopped by the caller's signal
// (Ctrl-C), by `crew stop`/`crew down` (mail to its own name), or when every worker has stopped.
// docs/PROTOCOL.md "Crew" states the lifecycle as numbered steps.
//
// Invariants:
// - a second supervisor of the same crew on the same host is refused while its lease is held
//   (ECONFLICT, naming the holder's pid); so is one whose worker's name another supervisor (any
//   crew, any host) runs: a name is one session on the bus. All of them are taken at once
//   (lib/crew/hold.ts); once a killed supervisor's leases run out, the next one takes over;
// - the lease is renewed at a third of its length; a supervisor that loses it (frozen past it)
//   stops its workers, as another may have taken over;
// - a stop ends every worker's process group within GRACE_MS, gives back each claim (not an
//   attempt), removes the workers' presence and releases the lease: nothing is left held.

import type { Store } from "../core/config";
import { A2AError, text } from "../core/errors";
import { done, ended, type Outcome } from "../core/outcome";
import { nowSec } from "../core/time";
import { randomHex } from "../core/digest";
import { releaseLeases, renewLeases } from "../leases/lease";
import { receive } from "../mail/receive";
import { pidAlive } from "../core/holder";
import { claimFor, runAttempt } from "./attempt";
import type { AgentKind, CrewSpec, WorkerSpec } from "./file";
import { logName, openLog, secretsOf } from "./log";
import { workerPresence } from "./presence";
import { killGroup, procStart } from "./process";
import { takeCrewLeases } from "./hold";
import { addUsage, usageText, type Usage } from "./usage";
import { sessionLoop } from "./session";
import { controlName, crewStatus, leaseName, publishStatus, type Control, type CrewStatus, type WorkerStatus } from "./status";
import { execLauncher, type Launcher } from "./worker";
import { branchOf } from "./worktree";
import { tidyWorktree } from "./tidy";

export const BACKOFF_CAP_SEC = 60;

export interface CrewOptions {
  launchers?: Partial<Record<AgentKind, Launcher>>; // the coding agents' (cli/crew/launch.ts); exec's is lib's own
  signal?: AbortSignal; // Ctrl-C / SIGTERM of `crew up`
  onLine?: (line: string) => void; // what the supervisor says as it goes (started, attempts, stops)
}

export interface CrewEnd {
  crew: string;
  workers: WorkerStatus[];
  gaveUp: string[];
}

// The holder of the crew's leases: this process, and no other anywhere (a lease holder is a name,
// and a take by the same holder extends it): host and pid alone are one holder in two containers
// of one hostname whose supervisors are both pid 1, so a random part follows them.
const holderOf = (store: Store) => `${store.host.replace(/[^A-Za-z0-9_-]/g, "-").slice(0, 100)}.${process.pid}.${randomHex(4)}`;

export async function runCrew(store: Store, spec: CrewSpec, o: CrewOptions = {}): Promise<Outcome<CrewEnd>> {
  const launchers: Partial<Record<AgentKind, Launcher>> = { exec: execLauncher, ...o.launchers };
  for (const w of spec.workers) {
    if (!launchers[w.agent]) throw new A2AError("EUSAGE", `${spec.file}: worker ${w.name} is a ${w.agent} worker, which crew up cannot start yet: use agent = "exec" for now`, { data: { worker: w.name, agent: w.agent } });
  }
  const say = o.onLine ?? (() => {});
  const holder = holderOf(store);
  const lease = leaseName(spec.name, store.host);
  const leases = await takeCrewLeases(store, spec, holder, o.signal);
  await takeOver(store, spec.name, say);
  const stopAll = new AbortController();
  const onSignal = () => stopAll.abort("signal");
  if (o.signal?.aborted) onSignal();
  o.signal?.addEventListener("abort", onSignal, { once: true });
  const started = nowSec();
  const states = new Map<string, WorkerStatus>(spec.workers.map((w) => [w.name, { name: w.name, agent: w.agent, queues: w.queues, state: "starting", since: started, task: null, done: 0, failed: 0, failures: 0, reason: null, restarts: 0 }]));
  let publishing: Promise<unknown> = Promise.resolve();
  const status = (state: "up" | "stopped"): CrewStatus => ({
    a2a_crew: 1, crew: spec.name, file: spec.file, host: store.host, pid: process.pid, started_at: started, updated_at: nowSec(), state, lease_sec: spec.leaseSec, workers: [...states.values()],
  });
  const publish = (state: "up" | "stopped" = "up") => (publishing = publishing.then(() => publishStatus(store, status(state))).catch(() => {}));
  const set = (w: string, patch: Partial<WorkerStatus>) => {
    const was = states.get(w)!;
    states.set(w, { ...was, ...(patch.state && patch.state !== was.state ? { since: nowSec() } : {}), ...patch });
    return publish();
  };

  // The lease, renewed; lost: every worker stops (another supervisor may have it now).
  const renewal = setInterval(() => {
    renewLeases(store, leases, { as: holder, ttlSec: spec.leaseSec }).catch((e) => {
      if (e instanceof A2AError && e.code === "ECONFLICT") {
        say(`lost the crew's lease ${lease}: stopping every worker`);
        stopAll.abort("lease");
      }
    });
  }, (spec.leaseSec * 1000) / 3);

  // Control mail: anything already there was meant for an earlier supervisor.
  const inbox = controlName(spec.name, store.host);
  const stops = new Map(spec.workers.map((w) => [w.name, new AbortController()]));
  const restarts = new Map(spec.workers.map((w) => [w.name, new AbortController()]));
  let control: Promise<void> = Promise.resolve();
  try {
    await receive(store, inbox, { max: 1000 }, () => {});
    control = (async () => {
      while (!stopAll.signal.aborted) {
        const got = await receive(store, inbox, { wait: true, max: 100, signal: stopAll.signal }, () => {}).catch(() => undefined);
        // The store unreachable for now: look again after a pause, not in a tight loop.
        if (!got && !(await pause(1000, stopAll.signal))) break;
        for (const m of got?.kind === "done" ? got.value : []) {
          let c: Control | undefined;
          try {
            c = JSON.parse(m.body);
          } catch {
            continue;
          }
          if (c && "down" in c) {
            say("crew down: stopping every worker");
            stopAll.abort("down");
          } else if (c && "stop" in c && stops.has(c.stop)) {
            say(`crew stop ${c.stop}`);
            stops.get(c.stop)!.abort();
          } else if (c && "restart" in c && restarts.has(c.restart)) {
            say(`crew restart ${c.restart}`);
            restarts.get(c.restart)!.abort();
          }
        }
      }
    })();
    // Said once its status is there: a crew down run on seeing the line finds the crew up.
    await publish();
    say(`crew ${spec.name} up: ${spec.workers.map((w) => w.name).join(", ")} (pid ${process.pid} on ${store.host})`);
    await Promise.all(spec.workers.map((w) => {
      const stop = AbortSignal.any([stopAll.signal, stops.get(w.name)!.signal]);
      const restart = { get: () => restarts.get(w.name)!.signal, renew: () => void restarts.set(w.name, new AbortController()) };
      return w.keepSession ? sessionLoop(store, spec, w, launchers[w.agent]!, stop, restart, set, say, pause, BACKOFF_CAP_SEC) : workerLoop(store, spec, w, launchers[w.agent]!, stop, restart, set, say);
    }));
  } finally {
    // Whatever ended the crew, nothing it holds is left: the workers have stopped (their loops
    // give back their claims), then the status says so and the lease goes.
    if (!stopAll.signal.aborted) stopAll.abort("done");
    clearInterval(renewal);
    await control;
    tidy(store, spec, say);
    await publish("stopped");
    await releaseLeases(store, leases, { as: holder }).catch(() => []);
    o.signal?.removeEventListener("abort", onSignal);
  }
  const workers = [...states.values()];
  const end = { crew: spec.name, workers, gaveUp: workers.filter((w) => w.state === "gave-up").map((w) => w.name) };
  if (stopAll.signal.reason === "lease") {
    throw new A2AError("EFAILED", text`crew ${spec.name} stopped: its lease ${lease} was taken over while this supervisor could not renew it (frozen, or cut off from the store); every worker was stopped`, { data: { crew: spec.name } });
  }
  return stopAll.signal.reason === "signal" ? ended("aborted", end, [spec.name]) : done(end);
}

// A worker's restart (`crew restart`): `get` aborts its current claim or run; `renew` arms the next.
interface Restart { get(): AbortSignal; renew(): void }

async function workerLoop(store: Store, spec: CrewSpec, w: WorkerSpec, launcher: Launcher, stop: AbortSignal, restart: Restart, set: (w: string, p: Partial<WorkerStatus>) => Promise<unknown>, say: (l: string) => void): Promise<void> {
  const presence = workerPresence(store, w);
  let failures = 0;
  let done = 0;
  let failed = 0;
  let usage: Usage | null = null; // the worker's running total, as its agent reported it
  let restarted = 0;
  // Restarted rather than stopped: the run (or the wait for a task) ended, the worker goes on.
  const again = () => {
    if (stop.aborted || !restart.get().aborted) return false;
    restart.renew();
    set(w.name, { restarts: ++restarted });
    return true;
  };
  try {
    while (!stop.aborted) {
      set(w.name, { state: "waiting", task: null });
      await presence.waiting();
      let job;
      const run = AbortSignal.any([stop, restart.get()]);
      try {
        job = await claimFor(store, w, spec.leaseSec, run);
      } catch (e) {
        // the store is unreachable or damaged for now: try again after the backoff
        say(`${w.name}: cannot claim: ${(e as Error).message}`);
        if (!(await pause(w.backoffSec * 1000, stop))) break;
        continue;
      }
      if (!job) {
        if (again()) continue;
        break;
      }
      set(w.name, { state: "working", task: { queue: job.queue, id: job.id, attempt: job.attempt } });
      await presence.working(job);
      const log = await openLog(store, logName(spec.name, w.name), `task ${job.id} attempt ${job.attempt} (queue ${job.queue})`, secretsOf(store, job.token));
      // Its process is in the status before it is said to run: a supervisor that takes over
      // after a kill -9 here ends what it finds there (takeOver).
      const end = await runAttempt(store, w, job, launcher, spec.leaseSec, run, log, (pid) => {
        set(w.name, { proc: { pid, start: procStart(pid) } }).then(() => say(`${w.name}: task ${job.id} attempt ${job.attempt}, pid ${pid}`));
      });
      usage = addUsage(usage, end.usage);
      set(w.name, { proc: null, ...(end.usage ? { usage } : {}) });
      const restarting = end.stopped && !stop.aborted && restart.get().aborted;
      const cost = end.usage ? ` (${usageText(end.usage)})` : "";
      await log.end(end.stopped ? `${restarting ? "restarted" : "stopped"}: task ${job.id} given back${cost}` : end.ok ? `done: task ${job.id}${cost}` : `failed: task ${job.id}${cost}: ${end.reason}`);
      if (end.stopped) {
        if (again()) continue;
        break;
      }
      if (end.ok) {
        failures = 0;
        set(w.name, { done: ++done, failures, task: null });
        continue;
      }
      failures++;
      say(`${w.name}: task ${job.id} attempt ${job.attempt} failed: ${end.reason}`);
      if (failures >= w.restarts) {
        const reason = `gave up after ${failures} failed attempts in a row (last: ${end.reason})`;
        say(`${w.name}: ${reason}`);
        set(w.name, { state: "gave-up", failed: ++failed, failures, task: null, reason });
        return;
      }
      set(w.name, { state: "backoff", failed: ++failed, failures, task: null, reason: end.reason });
      // A restart cuts the backoff short: the worker claims again at once.
      if (!(await pause(Math.min(w.backoffSec * 2 ** (failures - 1), BACKOFF_CAP_SEC) * 1000, AbortSignal.any([stop, restart.get()])))) {
        if (again()) continue;
        break;
      }
    }
    set(w.name, { state: "stopped", task: null });
  } finally {
    await presence.close();
  }
}

// A supervisor of this crew killed on this host (its pid gone) left its workers' runs going, in
// process groups of their own: each one its status names, and that is still the same process
// (same start time), is ended, so no run of a dead supervisor goes on beside the new ones.
// Elsewhere nothing can be done from here: those runs end by themselves (docs/PROTOCOL.md §21).
async function takeOver(store: Store, crew: string, say: (l: string) => void): Promise<void> {
  const prev = await crewStatus(store, crew, store.host).catch(() => undefined);
  if (!prev || prev.host !== store.host || prev.pid === process.pid || pidAlive(prev.pid)) return;
  for (const w of prev.workers) {
    if (!w.proc || w.proc.start === null || procStart(w.proc.pid) !== w.proc.start) continue;
    killGroup(w.proc.pid, "SIGKILL");
    say(`ended the run of ${w.name} (pid ${w.proc.pid}) that supervisor pid ${prev.pid} left`);
  }
}

// The worktrees a2a made for the crew's agent workers, removed where nothing would be lost (their
// branches stay), kept with a line saying why where something would.
function tidy(store: Store, spec: CrewSpec, say: (l: string) => void): void {
  for (const w of spec.workers) {
    if (w.agent === "exec" || !w.worktree) continue;
    try {
      const t = tidyWorktree(w.cwd, w.name, store.root);
      if (t.kept) say(`${w.name}: kept its worktree ${t.path}: ${t.kept} (its branch ${branchOf(w.name)} holds what was committed)`);
      else if (t.removed) say(`${w.name}: removed its worktree ${t.path}; the work is on branch ${branchOf(w.name)}`);
    } catch (e) {
      say(`${w.name}: left its worktree as it is: ${(e as Error).message}`);
    }
  }
}

// Waits `ms` unless `stop` comes first; false when it did.
function pause(ms: number, stop: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (stop.aborted) return resolve(false);
    const t = setTimeout(() => {
      stop.removeEventListener("abort", onStop);
      resolve(true);
    }, ms);
    const onStop = () => {
      clearTimeout(t);
      resolve(false);
    };
    stop.addEventListener("abort", onStop, { once: true });
  });
}
