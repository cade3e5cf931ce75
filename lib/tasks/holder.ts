// What the holder of a claim does with it: renew the lease, finish the task (done, with a
// result), or give it up (fail, with a reason; retried unless told not to).
//
// Fencing: each is one compare-and-set on the task (storage.ts change), computed from a head whose claim
// carries the caller's attempt and token. A token whose attempt was settled as expired, or
// superseded by a later claim, or whose task was finished or cancelled, can never land: the
// head it would have to follow is gone, and the version after it is taken. This holds for a
// worker stopped (SIGSTOP) past its lease and resumed in the middle of its write: its link
// of version N + 1 fails because the settling claimer wrote N + 1 first.
// A late call whose lease ran out but which nobody settled yet still lands: the task was
// never handed to anyone else, and the settle and the late call race for the same version.
//
// A refused call changes nothing and says what happened (ECONFLICT, exit 4); a token that is
// not a token at all is EUSAGE; an unknown task ENOTFOUND.

import { checkAttachments } from "../blobs/room";
import type { Store } from "../core/config";
import { checkSize } from "../core/size";
import { A2AError, op, text, unknownOutcome } from "../core/errors";
import { checkDuration, nowSec } from "../core/time";
import { checkText, checkToken, type TaskRecord } from "./record";
import { changeTask, endAttempt, findTask } from "./state";

export interface Renewed {
  id: string;
  attempt: number;
  expires_at: number;
}

export interface Finished {
  id: string;
  queue: string;
  attempt: number;
  state: "done" | "ready" | "dead"; // fail: ready when it will be retried
  reason: string | null;
}

// Why `token` is not the current claim of `cur`, as the error to throw; undefined when it is.
function stale(cur: TaskRecord, token: string, attempt: number, verb: string): A2AError | undefined {
  if (cur.state === "claimed" && cur.claim!.token === token) return undefined;
  const data = { id: cur.id, attempt, current_attempt: cur.attempt, state: cur.state };
  const mine = [...cur.attempts].reverse().find((a) => a.attempt === attempt);
  let what: string;
  if (attempt > cur.attempt || (cur.state === "claimed" && cur.claim!.attempt === attempt)) {
    what = `this token was never handed out for attempt ${attempt}`;
  } else if (mine?.outcome === "expired") {
    what = `the lease of attempt ${attempt} ran out (${mine.reason.replace(/^the lease of attempt \d+ ran out /, "")})`;
  } else if (mine?.outcome === "failed") {
    what = `attempt ${attempt} was already given up as failed (${mine.reason})`;
  } else if (mine?.outcome === "cancelled" || (cur.state === "dead" && cur.reason?.startsWith("cancelled"))) {
    what = `the task was cancelled`;
  } else if (cur.state === "done" && cur.attempt === attempt) {
    what = `attempt ${attempt} already finished it as done`;
  } else {
    what = `attempt ${attempt} is over`;
  }
  const now =
    cur.state === "claimed" ? `it is now attempt ${cur.attempt}, held by ${cur.claim!.assignee}`
    : cur.state === "ready" ? `it is back in queue ${cur.queue}`
    : cur.state === "done" ? `it is done` : `it is dead (${cur.reason})`;
  return new A2AError("ECONFLICT", text`cannot ${verb} task ${cur.id}: ${what}; ${now}. Nothing was changed: claim a task again with ${op("task claim", cur.queue)}`, { data });
}

export async function renewTask(store: Store, id: string, token: string, opts: { leaseSec?: number } = {}): Promise<Renewed> {
  const t = checkToken(token);
  if (opts.leaseSec !== undefined) checkDuration(opts.leaseSec, "lease", "lease");
  const rec = await findTask(store, id);
  const r = await changeTask(store, rec, (cur) => {
    const err = stale(cur, t.token, t.attempt, "renew");
    if (err) throw err;
    const lease = opts.leaseSec ?? cur.claim!.lease_sec;
    return { ...cur, claim: { ...cur.claim!, expires_at: nowSec() + lease, lease_sec: lease } };
  });
  return { id, attempt: t.attempt, expires_at: r.rec.claim!.expires_at };
}

export async function completeTask(store: Store, id: string, token: string, result = "", attach?: { digest: string; name: string }[]): Promise<Finished> {
  const t = checkToken(token);
  if (typeof result !== "string") throw new A2AError("EUSAGE", "the result must be a text");
  checkSize(store, result, "the result", true);
  const attachments = attach?.length ? await checkAttachments(store, attach) : undefined; // no await without: a call stays one step
  const rec = await findTask(store, id);
  const r = await changeTask(store, rec, (cur) => {
    const err = stale(cur, t.token, t.attempt, "finish");
    if (err) throw err;
    return { ...cur, state: "done", claim: null, result, reason: null, ...(attachments ? { attachments } : {}) };
  }).catch((err) => {
    throw unknownOutcome(err, `task ${id} may or may not have been finished`, text`see it with ${op("task show", id)}, or finish it again with the same token: if it was, that says so and changes nothing`);
  });
  return { id, queue: r.rec.queue, attempt: t.attempt, state: "done", reason: null };
}

export interface FailOptions {
  reason?: string;
  retry?: boolean; // default true: back to the queue unless the round's attempts are used up
}

export async function failTask(store: Store, id: string, token: string, opts: FailOptions = {}): Promise<Finished> {
  const t = checkToken(token);
  const reason = opts.reason === undefined ? "failed (no reason given)" : checkText(opts.reason, "reason");
  const rec = await findTask(store, id);
  const r = await changeTask(store, rec, (cur) => {
    const err = stale(cur, t.token, t.attempt, "fail");
    if (err) throw err;
    return endAttempt(cur, "failed", reason, opts.retry === false);
  });
  return { id, queue: r.rec.queue, attempt: t.attempt, state: r.rec.state as Finished["state"], reason: r.rec.reason };
}
