// A keep_session worker (docs/PROTOCOL.md §21, "One long session"): its coding agent is started
// once, told to claim its tasks itself (task_claim with wait), do each, end it (task_done or
// task_fail) and claim again. The supervisor does not hand it tasks; it watches what the session
// holds, the tasks of its queues claimed under the worker's name:
//   - each such claim's lease is renewed while the session runs (at a third of the claim's own
//     lease), so a long task is not taken from a live session;
//   - a task held past the worker's time_limit ends the session (its process group: TERM, then
//     KILL) and fails that attempt with "time limit D reached";
//   - a session that exits fails each attempt it still holds with its exit and its output's tail,
//     and is started again after the backoff (doubled for each exit in a row with no task done
//     between; after `restarts` of them the worker gives up);
//   - a stop (crew stop, crew down, Ctrl-C) ends the session and gives back each claim it still
//     holds (not an attempt).
// Its log is one for the session; claim tokens in its output are replaced by a pattern, as the
// session's tokens are known only once it has claimed.

import type { Store } from "../core/config";
import { nowSec } from "../core/time";
import { unclaimTask } from "../tasks/claim";
import { failTask, renewTask } from "../tasks/holder";
import { listTasks } from "../tasks/query";
import { findTask } from "../tasks/state";
import { readRecord } from "../sessions/hooks";
import { shortDuration, why } from "./attempt";
import type { CrewSpec, WorkerSpec } from "./file";
import { logName, openLog, scrub, secretsOf, type Secrets } from "./log";
import { workerPresence } from "./presence";
import { procStart, runProcess, type RunEnd } from "./process";
import type { WorkerStatus } from "./status";
import { addUsage, usageMeter, usageText, type Usage } from "./usage";
import type { Launcher } from "./worker";

const TOKENS = /\b[1-9]\d{0,9}-[0-9a-f]{16}\b/g;
const WATCH_MS = 500; // how often the session's claims are looked at (a bound on noticing one)

type Set = (w: string, p: Partial<WorkerStatus>) => Promise<unknown>;
interface Held { id: string; queue: string; attempt: number; token: string; claimedAt: number; leaseSec: number }

// `restart` (crew restart): ends the session as a stop does (what it holds given back), and it
// is started again at once.
export async function sessionLoop(store: Store, spec: CrewSpec, w: WorkerSpec, launcher: Launcher, stop: AbortSignal, restart: { get(): AbortSignal; renew(): void }, set: Set, say: (l: string) => void, pause: (ms: number, stop: AbortSignal) => Promise<boolean>, backoffCapSec: number): Promise<void> {
  const presence = workerPresence(store, w);
  const counts = { done: 0, failed: 0, failures: 0 };
  let usage: Usage | null = null;
  let restarted = 0;
  try {
    while (!stop.aborted) {
      set(w.name, { state: "waiting", task: null });
      await presence.waiting();
      const end = await runSession(store, spec, w, launcher, AbortSignal.any([stop, restart.get()]), set, say, counts, presence);
      usage = addUsage(usage, end.usage);
      if (end.usage) set(w.name, { usage });
      if (stop.aborted) break;
      if (restart.get().aborted) {
        restart.renew();
        set(w.name, { restarts: ++restarted });
        continue;
      }
      counts.failures++;
      say(`${w.name}: its session ended: ${end.reason}`);
      if (counts.failures >= w.restarts) {
        const reason = `gave up after ${counts.failures} session ends in a row with no task done between (last: ${end.reason})`;
        say(`${w.name}: ${reason}`);
        set(w.name, { state: "gave-up", failures: counts.failures, task: null, reason });
        return;
      }
      set(w.name, { state: "backoff", failures: counts.failures, task: null, reason: end.reason });
      // A restart cuts the backoff short: the session is started again at once.
      if (!(await pause(Math.min(w.backoffSec * 2 ** (counts.failures - 1), backoffCapSec) * 1000, AbortSignal.any([stop, restart.get()])))) {
        if (stop.aborted) break;
        restart.renew();
        set(w.name, { restarts: ++restarted });
      }
    }
    set(w.name, { state: "stopped", task: null });
  } finally {
    await presence.close();
  }
}

// What the session holds, the tasks claimed under its name: the one its a2a mcp recorded as
// claimed last (the session's record: one small read), each one seen held before, and, when
// `full`, every claimed task of its queues (a claim the record does not name). A claim from a
// queue not its own counts as well (a model may claim anywhere): renewed while it runs, given back
// or failed when it ends, rather than left held after the crew is gone.
async function heldBy(store: Store, w: WorkerSpec, known: Iterable<string>, full: boolean): Promise<Held[]> {
  const ids = new Set(known);
  const rec = await readRecord(store, w.name).catch(() => undefined);
  if (rec?.task) ids.add(rec.task.id);
  if (full) {
    for (const queue of w.queues) {
      for (const v of await listTasks(store, { queue, state: "claimed" }).catch(() => [])) if (v.assignee === w.name) ids.add(v.id);
    }
  }
  const out: Held[] = [];
  for (const id of ids) {
    const t = await findTask(store, id).catch(() => undefined);
    if (t?.state === "claimed" && t.claim?.assignee === w.name) out.push({ id: t.id, queue: t.queue, attempt: t.claim.attempt, token: t.claim.token, claimedAt: t.claim.claimed_at, leaseSec: t.claim.lease_sec });
  }
  return out;
}

async function runSession(store: Store, spec: CrewSpec, w: WorkerSpec, launcher: Launcher, stop: AbortSignal, set: Set, say: (l: string) => void, counts: { done: number; failed: number; failures: number }, presence: ReturnType<typeof workerPresence>): Promise<{ reason: string; usage: Usage | null }> {
  const secrets: Secrets = [...secretsOf(store, "").filter(([s]) => s !== ""), [TOKENS, "[a task's token]"]];
  const log = await openLog(store, logName(spec.name, w.name), `session (queues ${w.queues.join(", ")})`, secrets, true);
  const meter = usageMeter(w.agent);
  const ended = new AbortController(); // the session ended by the supervisor: a time limit
  let overTime: Held | undefined;
  const held = new Map<string, Held>(); // by id: what the session held at the last look
  const renewedAt = new Map<string, number>();
  // What became of a task the session held and no longer does: done by it, or a failed attempt.
  const counted = new Set<string>(); // "id attempt"
  const settle = async (h: Pick<Held, "id" | "attempt">, doneOnly = false) => {
    const rec = await findTask(store, h.id).catch(() => undefined);
    const ok = rec?.state === "done" && rec.attempt === h.attempt;
    if ((doneOnly && !ok) || counted.has(`${h.id} ${h.attempt}`)) return;
    counted.add(`${h.id} ${h.attempt}`);
    if (ok) counts.failures = 0;
    ok ? counts.done++ : counts.failed++;
    log.write(`\n[a2a crew] task ${h.id} attempt ${h.attempt}: ${ok ? "done" : `failed: ${rec?.attempts.findLast((a) => a.attempt === h.attempt)?.reason ?? `it is ${rec?.state ?? "gone"}`}`}\n`);
    await set(w.name, { done: counts.done, failed: counts.failed, failures: counts.failures });
  };
  // A task claimed and ended between two looks is never seen held: the session's own output says
  // it ended one (task_done's answer, "Task ID is done.", which the agent's JSON events carry),
  // and the task's record says whether it is so.
  // A model's text can say so too, of any task: only one done since this session began counts
  // (one done before, by an earlier session or another worker, would count again and reset the
  // give-up count of a session that does nothing).
  const began = nowSec();
  const saidDone = new Set<string>();
  let partial = "";
  const hear = (chunk: string) => {
    const text = partial + chunk;
    for (const m of text.matchAll(/Task (\d+-[0-9a-f]{8}) is done\./g)) saidDone.add(m[1]);
    partial = text.slice(-64);
  };
  // Claims under its name from before this session (a run of a supervisor killed with -9, ended
  // by the takeover) are not this session's: adopted, they were renewed for ever (and ended an
  // innocent session at the time limit); left alone, they run out and go back to their queue.
  const stale = new Set((await heldBy(store, w, [], true).catch(() => [])).map((h) => `${h.id} ${h.attempt}`));
  let idle = true; // the worker is said `waiting` (sessionLoop said so before starting it)
  let looking: Promise<unknown> = Promise.resolve();
  let scanned = 0; // when its queues were last scanned whole (at a third of the crew's lease)
  const look = async (full = false) => {
    const now = nowSec();
    full ||= now - scanned >= spec.leaseSec / 3;
    if (full) scanned = now;
    const current = (await heldBy(store, w, held.keys(), full)).filter((c) => !stale.has(`${c.id} ${c.attempt}`));
    for (const [id, h] of held) if (!current.some((c) => c.id === id && c.attempt === h.attempt)) {
      held.delete(id);
      await settle(h);
    }
    for (const c of current) {
      if (!held.has(c.id)) {
        held.set(c.id, c);
        idle = false;
        await presence.working(c);
        await set(w.name, { state: "working", task: { queue: c.queue, id: c.id, attempt: c.attempt } });
      }
      if (w.timeLimitSec !== null && now - c.claimedAt > w.timeLimitSec && !overTime) {
        overTime = c;
        ended.abort();
      }
      if (now - (renewedAt.get(c.id) ?? c.claimedAt) >= c.leaseSec / 3) {
        renewedAt.set(c.id, now);
        await renewTask(store, c.id, c.token).catch(() => {}); // ended meanwhile: the next look sees it
      }
    }
    for (const id of saidDone) {
      saidDone.delete(id);
      const rec = await findTask(store, id).catch(() => undefined);
      if (rec && w.queues.includes(rec.queue) && !held.has(id) && rec.updated_at >= began) await settle({ id, attempt: rec.attempt }, true);
    }
    // Said once, as it becomes so: each set publishes the crew's status (a write, and a wake of
    // every reader), and an idle session is looked at twice a second.
    if (!current.length && held.size === 0 && !idle) {
      idle = true;
      await set(w.name, { state: "waiting", task: null });
    }
  };
  const timer = setInterval(() => (looking = looking.then(() => look()).catch(() => {})), WATCH_MS);
  let r: RunEnd;
  try {
    const spec_ = await launcher(w, null, store.url ?? store.root);
    r = await runProcess(spec_, { keep: 0, timeLimitMs: null, stop: AbortSignal.any([stop, ended.signal]), endsWithUs: true, onOutput: (s) => log.write(s), onStdout: (c) => (meter.feed(c), hear(c)), onStart: (pid) => {
      set(w.name, { proc: { pid, start: procStart(pid) } }).then(() => say(`${w.name}: session pid ${pid}`));
    } });
    if (spec_.after && !stop.aborted) {
      try {
        const note = spec_.after();
        if (note) log.write(`${note}\n`);
      } catch (e) {
        log.write(`[a2a crew] after the session: ${e instanceof Error ? e.message : String(e)}\n`);
      }
    }
  } catch (e) {
    const said = e instanceof Error ? e.message : String(e);
    r = { code: null, signal: null, stdout: "", overflow: false, tail: said, errTail: said, stopped: null };
  } finally {
    clearInterval(timer);
    await looking;
  }
  r = { ...r, tail: scrub(r.tail, secrets), errTail: scrub(r.errTail, secrets) };
  set(w.name, { proc: null });
  // What it still holds: given back (a stop), or failed (the time limit, or it exited).
  await look(true).catch(() => {});
  const reason = overTime ? `time limit ${shortDuration(w.timeLimitSec!)} reached on task ${overTime.id}` : why(w, r, "exited");
  for (const h of held.values()) {
    if (stop.aborted && !overTime) await unclaimTask(store, h).catch(() => false);
    else {
      const mine = h === overTime || h.id === overTime?.id ? `time limit ${shortDuration(w.timeLimitSec!)} reached` : overTime ? `its session was stopped (${reason})` : `its session ${reason.replace(/^exited with exit (\d+)/, "exited $1 without ending the task")}`;
      await failTask(store, h.id, h.token, { reason: mine.slice(0, 4000) }).catch(() => {});
      counts.failed++;
      log.write(`\n[a2a crew] task ${h.id} attempt ${h.attempt}: failed: ${mine}\n`);
    }
  }
  const used = meter.read();
  if (used) log.write(`[a2a crew] session: ${usageText(used)}\n`);
  await set(w.name, { failed: counts.failed, task: null });
  await log.end(stop.aborted ? `stopped: session ended${held.size ? `, ${[...held.keys()].join(", ")} given back` : ""}` : `session ended: ${reason}`);
  return { reason, usage: used };
}
