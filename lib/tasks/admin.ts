// What the lead does to a task regardless of who holds it: retry a dead one (back to ready,
// with a fresh round of attempts and, with a TTL, a fresh deadline), or cancel one that is not
// done (dead, reason "cancelled"; a holder's later done/fail/renew is refused: fencing).
// Each is one compare-and-set on the task (state.ts changeTask): a cancel racing a
// done lands or is refused as a whole, never half. Cancel is also the repair of a task whose
// head is damaged: it writes the task dead above that head, from its newest whole version.

import type { Store } from "../core/config";
import { A2AError, op, text } from "../core/errors";
import { nowSec } from "../core/time";
import { checkText, keptAttempts, type TaskRecord } from "./record";
import { changeTask, findTask, locateTask, Resolver, settle, viewOf, type TaskView } from "./state";

const view = async (store: Store, rec: TaskRecord) => viewOf(rec, await new Resolver(store).derived(rec));

export async function retryTask(store: Store, id: string): Promise<TaskView> {
  const rec = await settle(store, await findTask(store, id));
  // The decision is synchronous (storage.ts change) and the derived state of a task that is not
  // dead reads its dependencies: the change declines, and the refusal is worded after it.
  let notDead: TaskRecord | undefined;
  const r = await changeTask(store, rec, (cur) => {
    if (cur.state !== "dead") {
      notDead = cur;
      return undefined;
    }
    notDead = undefined;
    const now = nowSec();
    return { ...cur, state: "ready", reason: null, round_from: cur.attempt, deadline: cur.ttl_sec === null ? null : now + cur.ttl_sec };
  });
  if (notDead) {
    const d = await new Resolver(store).derived(notDead);
    const why = d.state === "dead" ? `it is dead because ${d.reason}; retry that dependency instead` : `it is ${d.state}; only a dead task can be retried`;
    throw new A2AError("ECONFLICT", text`cannot retry task ${id}: ${why} (see ${op("task show", id)})`, { data: { id, state: d.state } });
  }
  return view(store, r.rec);
}

export async function cancelTask(store: Store, id: string, opts: { reason?: string } = {}): Promise<TaskView> {
  const reason = opts.reason === undefined ? "cancelled" : `cancelled: ${checkText(opts.reason, "reason")}`;
  const r = await changeTask(store, await locateTask(store, id), (cur, damaged) => {
    if (!damaged) {
      if (cur.state === "done") throw new A2AError("ECONFLICT", text`cannot cancel task ${id}: it is already done (see ${op("task show", id)})`, { data: { id, state: "done" } });
      if (cur.state === "dead") return undefined; // already dead: nothing to do
    }
    const attempts = cur.claim
      ? keptAttempts([...cur.attempts, { attempt: cur.claim.attempt, assignee: cur.claim.assignee, claimed_at: cur.claim.claimed_at, ended_at: nowSec(), outcome: "cancelled" as const, reason }])
      : cur.attempts;
    const why = damaged ? `${reason} (its version ${damaged.file} was damaged: ${damaged.why}${cur.version ? "" : "; no earlier version could be read"})` : reason;
    return { ...cur, state: "dead", claim: null, attempts, reason: why };
  }, true);
  return view(store, r.rec);
}
