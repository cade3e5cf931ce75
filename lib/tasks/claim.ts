// Claiming: the oldest claimable task of a queue, to exactly one caller, with a token that
// carries the attempt number (fencing: see holder.ts).
//
// Calling sequence (docs/PROTOCOL.md §12; on disk docs/FILE-ENGINE.md §11):
//   1. with KEY: if @claims/HASH(assignee, key) names a claim that is still current (same
//      attempt and token, lease running), return it again (replay); nothing is written;
//   2. list @open/, oldest id first; for each task read its head and
//      - done or dead: drop its marker, next;
//      - claimed with the lease run out, or ready past its TTL: settle it (state.ts), look again;
//      - blocked, dead by a dependency, or claimed: next;
//      - ready: write version + 1 = claimed by us, attempt + 1, a fresh token. *The claim is
//        ours at the instant that link succeeds*; if it fails another claimer (or a cancel)
//        wrote that version first: read the task again and decide again;
//   3. with KEY: record the claim in @claims/HASH (replacing any older one).
// Nothing claimable: ENOTFOUND (exit 3), or with `wait` block on the @open/ directory
// (every add, retry, expiry and dependency done replaces a marker there) and look again
// every RECHECK_MS for leases that run out.
// A crash before the link leaves nothing; after it, a claim that nobody holds: it ends when
// its lease runs out (the next claimer settles it) and the task is handed out again.
//
// Unclaim (unclaimTask) takes back a claim its claimer never received (an MCP answer that
// was cancelled, or could not be written): one chain change, fenced by the claim's token, to
// ready with `attempt` - 1, as if the claim had never been made. The attempt number is
// handed out again with a fresh random token: the unreceived token stays dead.

import type { Store } from "../core/config";
import { A2AError, arg, damageOf, op, text, unknownOutcome } from "../core/errors";
import { done, type Outcome } from "../core/outcome";
import { checkDuration, nowSec } from "../core/time";
import { checkTimeout, waitUntil } from "../core/watch";
import { assigneeOf, checkQueue, checkText, DEFAULT_LEASE_SEC, newToken, type TaskRecord } from "./record";
import { changeTask, queueExists, readTask, readTasks, RECHECK_MS, Resolver, settle, type DamagedChain } from "./state";
import { taskStorage } from "./storage";

export interface ClaimOptions {
  as?: string; // the assignee (default A2A_AGENT, else HOST.PID)
  key?: string; // replay key: the same assignee and key get the same claim back while it lasts
  leaseSec?: number; // default 300
  wait?: boolean; // block until something is claimable
  timeoutMs?: number; // with wait; undefined = no limit
  signal?: AbortSignal;
}

export interface TaskClaim {
  id: string;
  queue: string;
  attempt: number;
  token: string; // pass it back to renew / done / fail
  assignee: string;
  payload: string; // untrusted input: whatever the adder wrote
  claimed_at: number;
  expires_at: number;
  lease_sec: number;
  max_attempts: number;
  replayed: boolean; // true: the same claim as an earlier call with this key
}

const claimOf = (rec: TaskRecord, replayed: boolean): TaskClaim => {
  const c = rec.claim!;
  return {
    id: rec.id, queue: rec.queue, attempt: c.attempt, token: c.token, assignee: c.assignee, payload: rec.payload,
    claimed_at: c.claimed_at, expires_at: c.expires_at, lease_sec: c.lease_sec, max_attempts: rec.max_attempts, replayed,
  };
};

// Claims the oldest claimable task of `queue`. Without `wait`: done with the claim, or
// ENOTFOUND when nothing is claimable. With `wait`: done, timeout or aborted (pending: [queue]).
export async function claimTask(store: Store, queue: string, opts: ClaimOptions = {}): Promise<Outcome<TaskClaim | undefined>> {
  checkQueue(queue);
  const assignee = assigneeOf(store, opts.as);
  if (opts.key !== undefined) checkText(opts.key, "claim key", 1024);
  const leaseSec = opts.leaseSec === undefined ? DEFAULT_LEASE_SEC : checkDuration(opts.leaseSec, "lease", "lease");
  checkTimeout(opts.timeoutMs);
  const key = opts.key;
  const attempt = async () => (key !== undefined && (await replay(store, queue, assignee, key))) || claimOnce(store, queue, assignee, key ?? null, leaseSec);
  if (!opts.wait) {
    // A queue that does not exist has nothing to claim: asked only when nothing was, which
    // spares a claim that finds a task a round trip (a database's).
    const c = await attempt();
    if (c) return done(c);
    if (!(await queueExists(store, queue))) {
      throw new A2AError("ENOTFOUND", text`no queue ${queue} in this store: add a task to it first (${op("task add", queue)}), or wait for one with ${arg("wait")}`, {
        data: { queue, reason: "no queue" },
      });
    }
    throw await nothingClaimable(store, queue);
  }
  const tasks = taskStorage(store);
  await tasks.prepareWait(queue);
  // While it waits, the claimer holds its claim's write ready (storage.ts readyToWrite):
  // between the wake and the claim there is then nothing to create.
  const check = async () => {
    const c = await attempt();
    if (!c) tasks.readyToWrite();
    return c;
  };
  try {
    const outcome = await waitUntil(store, { on: "queue", queue }, check, { timeoutMs: opts.timeoutMs, signal: opts.signal, recheckMs: RECHECK_MS });
    return outcome.kind === "done" ? outcome : { ...outcome, pending: [queue] };
  } finally {
    tasks.doneWaiting();
  }
}

async function replay(store: Store, queue: string, assignee: string, key: string): Promise<TaskClaim | undefined> {
  const k = await taskStorage(store).claimKey(queue, assignee, key);
  if (!k) return undefined;
  const rec = (await readTasks(store, queue, [k.id]))[0]; // damaged: nothing to replay
  if (rec?.state === "claimed" && rec.claim!.token === k.token && rec.claim!.expires_at > nowSec()) return claimOf(rec, true);
  return undefined;
}

// One pass over the queue (step 2); the claim, or undefined when nothing is claimable.
// A task another writer is changing right now (most often another claimer claiming it) is
// passed over at first, so that claimers spread over the queue instead of queueing on its
// oldest task; only when nothing else could be claimed is it tried again, waiting its turn.
async function claimOnce(store: Store, queue: string, assignee: string, key: string | null, leaseSec: number): Promise<TaskClaim | undefined> {
  const resolver = new Resolver(store);
  const busy: string[] = [];
  const tryOne = async (id: string, ifFree: boolean, head?: TaskRecord) => {
    try {
      return await claimOne(store, queue, id, resolver, assignee, key, leaseSec, ifFree, head);
    } catch (err) {
      // One damaged chain (a foreign file at its head) must not stop the queue: its task
      // cannot be claimed, every other one still can (task show names the file to fix).
      if (!damageOf(err)) throw err;
      return undefined;
    }
  };
  for await (const page of taskStorage(store).candidates(queue)) {
    // Once another claimer has been met here (busy, or it wrote first), the page's heads are
    // likely stale for the ids after it: each is read again, one round trip, rather than tried
    // on, a transaction.
    let fresh = true;
    for (const { id, head } of page) {
      const c = await tryOne(id, true, fresh ? head : undefined);
      if (c === "busy" || c === "lost") fresh = false;
      if (c === "busy") busy.push(id);
      else if (c && c !== "lost") return c;
    }
  }
  for (const id of busy) {
    const c = await tryOne(id, false);
    if (c && c !== "busy" && c !== "lost") return c;
  }
  return undefined;
}

// `head`: the task's head as the candidates' listing read it, if it did (storage.ts candidates).
// "lost": not claimed because another writer changed it first (nothing claimable there now).
async function claimOne(store: Store, queue: string, id: string, resolver: Resolver, assignee: string, key: string | null, leaseSec: number, ifFree: boolean, head?: TaskRecord): Promise<TaskClaim | "busy" | "lost" | undefined> {
  let lost = false;
  let rec = head ?? (await readTask(store, queue, id)); // none: a marker left by an older release's add
  while (rec) {
    if (rec.state === "done" || rec.state === "dead") {
      await taskStorage(store).dropCandidate(rec);
      break;
    }
    const settled = await settle(store, rec);
    if (settled !== rec) {
      rec = settled;
      continue;
    }
    if (rec.state !== "ready" || (await resolver.derived(rec)).state !== "ready") break;
    const now = nowSec();
    const attempt = rec.attempt + 1;
    const before = rec.version;
    const r = await changeTask(store, rec, (cur) => {
      if (cur.version !== before) return undefined; // changed since we decided: decide again
      return {
        ...cur, state: "claimed", attempt,
        claim: { attempt, token: newToken(attempt), assignee, key, claimed_at: now, expires_at: now + leaseSec, lease_sec: leaseSec, host: store.host, pid: process.pid },
      };
    }, false, ifFree).catch((err) => {
      // Not "claim again with the same key": the key is recorded after the claim, apart.
      throw unknownOutcome(err, `task ${id} may or may not have been claimed for you`,
        text`see it with ${op("task show", id)}; a claim you were not told of goes back to queue ${queue} when its lease (${leaseSec} s) runs out`);
    });
    if (r.busy) return "busy";
    if (r.changed) {
      if (key !== null) await taskStorage(store).setClaimKey(queue, assignee, key, { id, token: r.rec.claim!.token, at: now });
      return claimOf(r.rec, false);
    }
    rec = r.rec; // someone else changed it first: decide again on what they wrote
    lost = true;
  }
  return lost ? "lost" : undefined;
}

// Takes back `claim` (see the header): lands only while the task's head is that very claim
// (same token), so it can never undo a later claim, a settle, a finish or a cancel; then
// wakes claimers. Returns whether it landed.
export async function unclaimTask(store: Store, claim: Pick<TaskClaim, "id" | "queue" | "token">): Promise<boolean> {
  const rec = await readTask(store, claim.queue, claim.id);
  if (!rec) return false;
  const r = await changeTask(store, rec, (cur) =>
    cur.state === "claimed" && cur.claim!.token === claim.token ? { ...cur, state: "ready", attempt: cur.attempt - 1, claim: null } : undefined,
  );
  return r.changed;
}

async function nothingClaimable(store: Store, queue: string): Promise<A2AError> {
  const counts = { claimed: 0, blocked: 0 };
  const resolver = new Resolver(store);
  const damaged: DamagedChain[] = [];
  for (const rec of await readTasks(store, queue, await taskStorage(store).open(queue), damaged)) {
    const s = (await resolver.derived(rec)).state;
    if (s === "claimed" || s === "blocked") counts[s]++;
  }
  const d = damaged[0];
  const bad = d ? text`, ${damaged.length} damaged: ${d.file} is ${d.why} (${op("task cancel", d.name)} marks it dead)` : [];
  return new A2AError(
    "ENOTFOUND",
    [
      ...text`nothing claimable in queue ${queue} (${counts.claimed} claimed, ${counts.blocked} blocked`, ...bad,
      ...text`): wait for a task with ${arg("wait")}, or add one with ${op("task add", queue)}`,
    ],
    { data: { queue, reason: "nothing claimable", ...counts, ...(damaged.length ? { damaged } : {}) } },
  );
}
