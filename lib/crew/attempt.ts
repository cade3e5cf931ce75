// One attempt of a worker at a task it claimed (docs/PROTOCOL.md, "Crew"): launch its process,
// renew the task's lease while it runs, and end the attempt once the process is gone.
//
// The end-of-run check, one for every worker (an exec whose stdout is its result is the one
// case where the supervisor finishes the task itself):
//   - stopped (crew stop, crew down, Ctrl-C): the claim is given back, as if never made (not an
//     attempt: lib/tasks/claim.ts unclaimTask), unless the process ended the task first;
//   - "stdout" (exec): exit 0 is done with stdout as the result; stdout over the bus's limit, any
//     other exit, a signal, or the time limit fail the attempt with the reason and the output's tail;
//   - "self" (self_finish exec, agents): the task done by this attempt is a success; a task still
//     claimed by this attempt is failed with the exit (or the time limit) and the output's tail;
//     a task this attempt failed itself is a failed attempt (its reason is the one it gave).

import type { Store } from "../core/config";
import { A2AError } from "../core/errors";
import { claimTask, unclaimTask } from "../tasks/claim";
import { completeTask, failTask, renewTask } from "../tasks/holder";
import { findTask } from "../tasks/state";
import { scrub, secretsOf, type Log } from "./log";
import { runProcess, type RunEnd } from "./process";
import { usageMeter, usageText, type Usage } from "./usage";
import { endsBy, type Job, type Launcher, type WorkerSpec } from "./worker";

export interface AttemptEnd {
  ok: boolean;
  stopped: boolean; // given back (not an attempt)
  reason: string | null; // why it failed
  usage: Usage | null; // what the agent's run reported it cost (lib/crew/usage.ts); null: nothing reported
}

export const shortDuration = (sec: number) =>
  sec % 3600 === 0 ? `${sec / 3600}h` : sec % 60 === 0 ? `${sec / 60}m` : sec >= 1 ? `${+sec.toFixed(3)}s` : `${Math.round(sec * 1000)}ms`;

// A run's output is anyone's text (a model's, a tool's): in a reason it is shown on terminals
// (the supervisor's lines, a2a crew, task show), so its escape sequences (colours, but also a
// title, a clear screen, the clipboard) are dropped and other control characters but the line
// ends made spaces; the log keeps the output as it came.
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|\x9b[0-?]*[ -/]*[@-~]/g;
const printable = (s: string) => s.replace(ESCAPES, "").replace(/\r\n?/g, "\n").replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, " ");
const tailOf = (s: string) => printable(s).trim().split("\n").slice(-5).join("\n").slice(-1000);

// Why a run failed: how it ended, and the tail of what it said (`errors`: of its stderr, where
// its stdout is its result; else of all its output), so the reason shows the error.
export function why(w: WorkerSpec, r: RunEnd, what: string, errors = false): string {
  const how = r.stopped === "time" ? `time limit ${shortDuration(w.timeLimitSec!)} reached`
    : r.code !== null ? `${what} with exit ${r.code}`
    : r.signal ? `killed by ${r.signal}` : "could not be started"; // the launcher or the spawn failed
  const tail = tailOf(errors && r.errTail.trim() ? r.errTail : r.tail);
  return tail ? `${how}: ${tail}` : how;
}

export async function runAttempt(store: Store, w: WorkerSpec, job: Job, launcher: Launcher, leaseSec: number, stop: AbortSignal, log: Log, onStart: (pid: number) => void): Promise<AttemptEnd> {
  // Renewed at a third of the lease, so two renewals can be late before the task is taken away.
  let renewing: Promise<unknown> = Promise.resolve();
  let renew = true;
  const timer = setInterval(() => {
    if (!renew) return;
    renewing = renewing.then(() => renewTask(store, job.id, job.token, { leaseSec })).catch((e) => {
      // ended (done by the process itself, cancelled, taken away): nothing more to renew
      if (e instanceof A2AError && (e.code === "ECONFLICT" || e.code === "ENOTFOUND")) renew = false;
    });
  }, (leaseSec * 1000) / 3);
  let r: RunEnd;
  const meter = w.agent === "exec" ? undefined : usageMeter(w.agent);
  try {
    const spec = await launcher(w, job, store.url ?? store.root);
    r = await runProcess(spec, { keep: store.maxBytes, timeLimitMs: w.timeLimitSec === null ? null : w.timeLimitSec * 1000, stop, onOutput: (s) => log.write(s), onStdout: meter?.feed, onStart });
    if (spec.after && r.stopped !== "stop") {
      try {
        const note = spec.after();
        if (note) log.write(`${note}\n`);
      } catch (e) {
        log.write(`[a2a crew] after the run: ${e instanceof Error ? e.message : String(e)}\n`); // the attempt's end is still decided
      }
    }
  } catch (e) {
    const said = e instanceof Error ? e.message : String(e);
    r = { code: null, signal: null, stdout: "", overflow: false, tail: said, errTail: said, stopped: null };
    if (stop.aborted) r.stopped = "stop";
  } finally {
    clearInterval(timer);
    await renewing;
  }
  // The output's tail goes into the reason (the task's record, the status, the supervisor's
  // lines): without the attempt's secrets, as the log.
  const secrets = secretsOf(store, job.token);
  r = { ...r, tail: scrub(r.tail, secrets), errTail: scrub(r.errTail, secrets) };
  const usage = meter?.read() ?? null;
  if (usage) log.write(`[a2a crew] task ${job.id} attempt ${job.attempt}: ${usageText(usage)}\n`);
  if (r.stopped === "stop") {
    if (await unclaimTask(store, job).catch(() => false)) return { ok: false, stopped: true, reason: null, usage };
    // Not given back: the process may have done the task itself before the stop reached it, and
    // then it is done by this attempt (the worker's count, its log), not "given back".
    const rec = await findTask(store, job.id).catch(() => undefined);
    return rec?.state === "done" && rec.attempt === job.attempt ? { ok: true, stopped: false, reason: null, usage } : { ok: false, stopped: true, reason: null, usage };
  }
  const end = await (endsBy(w) === "stdout" ? endByStdout(store, w, job, r) : endBySelf(store, w, job, r));
  return { ...end, usage };
}

async function endByStdout(store: Store, w: WorkerSpec, job: Job, r: RunEnd): Promise<Omit<AttemptEnd, "usage">> {
  let reason: string;
  if (r.stopped === null && r.code === 0 && !r.overflow) {
    try {
      await completeTask(store, job.id, job.token, r.stdout);
      return { ok: true, stopped: false, reason: null };
    } catch (e) {
      return { ok: false, stopped: false, reason: e instanceof A2AError ? e.message : String(e) };
    }
  }
  if (r.stopped === null && r.code === 0) reason = `its output is over the bus's limit of ${store.maxBytes} bytes (A2A_MAX_BYTES): write less to stdout, or put the result in a file and print its name`;
  else reason = why(w, r, "exited", true);
  return fail(store, job, reason);
}

async function endBySelf(store: Store, w: WorkerSpec, job: Job, r: RunEnd): Promise<Omit<AttemptEnd, "usage">> {
  const rec = await findTask(store, job.id).catch(() => undefined);
  if (rec?.state === "claimed" && rec.claim?.token === job.token) {
    const reason = r.stopped === "time" ? why(w, r, "") : `${why(w, r, "exited")}`.replace(/^exited with exit (\d+)/, "exited $1 without ending the task (task done or fail)");
    return fail(store, job, reason);
  }
  if (rec?.state === "done" && rec.attempt === job.attempt) return { ok: true, stopped: false, reason: null };
  const mine = rec?.attempts.findLast((a) => a.attempt === job.attempt);
  return { ok: false, stopped: false, reason: mine ? mine.reason : `task ${job.id} is ${rec?.state ?? "gone"}` };
}

async function fail(store: Store, job: Job, reason: string): Promise<Omit<AttemptEnd, "usage">> {
  await failTask(store, job.id, job.token, { reason: reason.slice(0, 4000) }).catch(() => {});
  return { ok: false, stopped: false, reason };
}

// Claims a task for worker `w` from the first of its queues that has one, waiting until one
// does; undefined when `stop` ends the wait. Several queues: one wait each, the first claim
// wins and a claim another wait made meanwhile is given back.
export async function claimFor(store: Store, w: WorkerSpec, leaseSec: number, stop: AbortSignal): Promise<Job | undefined> {
  if (stop.aborted) return undefined; // a listener added now would never hear of it
  const ac = new AbortController();
  const onStop = () => ac.abort();
  stop.addEventListener("abort", onStop, { once: true });
  let winner: Job | undefined;
  let failed: unknown;
  const one = async (q: string) => {
    try {
      const o = await claimTask(store, q, { as: w.name, leaseSec, wait: true, signal: ac.signal });
      const c = o.kind === "done" ? o.value : undefined;
      if (!c) return;
      if (winner || stop.aborted) await unclaimTask(store, c).catch(() => false);
      else {
        winner = { queue: c.queue, id: c.id, attempt: c.attempt, token: c.token, payload: c.payload, expiresAt: c.expires_at };
        ac.abort();
      }
    } catch (e) {
      // one wait failed: the others end too (nothing is left waiting), and the caller hears of it
      failed ??= e;
      ac.abort();
    }
  };
  try {
    await Promise.all(w.queues.map(one));
  } finally {
    stop.removeEventListener("abort", onStop);
  }
  if (failed !== undefined || (winner && stop.aborted)) {
    if (winner) await unclaimTask(store, { ...winner }).catch(() => false);
    if (failed !== undefined) throw failed;
    return undefined;
  }
  return winner;
}
