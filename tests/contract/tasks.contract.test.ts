// The contract of work queues (docs/PROTOCOL.md section 14, tasks), on every engine, through the
// Bus only: one holder per attempt, fencing by token, leases that run out and hand the task
// out again, attempts counted to a dead letter, dependencies, cancel and retry.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Bus } from "../../lib/bus";
import { A2AError } from "../../lib/core/errors";
import { BOUND_MS, codeOf, move, past, perTest, refusal } from "./support";
import { enginesFor } from "./engines";

setDefaultTimeout(60_000);

type Claim = NonNullable<Awaited<ReturnType<Bus["tasks"]["claim"]>>["value"]>;

// A claim made without waiting (it is there, or the call is refused).
async function claim(bus: Bus, queue: string, opts: { as?: string; leaseSec?: number; key?: string } = {}): Promise<Claim> {
  const o = await bus.tasks.claim(queue, opts);
  expect(o.kind).toBe("done");
  return o.value!;
}

for (const engine of enginesFor("tasks")) {
  describe(`${engine.name}: tasks`, () => {
    const t = perTest(engine);

    test("a claim hands out the oldest ready task with attempt 1, its payload exact, and a token of that attempt", async () => {
      const payload = "build x86\n{\"rm\":\"-rf\"} ✓";
      const a = await t.bus.tasks.add("build", payload);
      const b = await t.bus.tasks.add("build", "second");
      expect({ queue: a.queue, created: a.created }).toEqual({ queue: "build", created: true });
      const c = await claim(t.reopen(), "build", { as: "w1", leaseSec: 60 });
      expect({ id: c.id, queue: c.queue, attempt: c.attempt, assignee: c.assignee, payload: c.payload, lease_sec: c.lease_sec, max_attempts: c.max_attempts, replayed: c.replayed }).toEqual({
        id: a.id, queue: "build", attempt: 1, assignee: "w1", payload, lease_sec: 60, max_attempts: 3, replayed: false,
      });
      expect(c.token).toMatch(/^1-[0-9a-f]{16}$/);
      expect(c.expires_at).toBe(c.claimed_at + 60);
      expect((await claim(t.bus, "build", { as: "w2" })).id).toBe(b.id);
      const v = await t.bus.tasks.show(a.id);
      expect({ state: v.state, assignee: v.assignee, attempt: v.attempt, lease: v.lease_expires_at }).toEqual({ state: "claimed", assignee: "w1", attempt: 1, lease: c.expires_at });
    });

    test("nothing claimable, or no such queue: refused as not found (exit 3)", async () => {
      expect(codeOf(await refusal(t.bus.tasks.claim("nowhere")))).toEqual({ code: "ENOTFOUND", exit: 3 });
      await t.bus.tasks.add("q", "only");
      await claim(t.bus, "q");
      const e = await refusal(t.reopen().tasks.claim("q"));
      expect(codeOf(e)).toEqual({ code: "ENOTFOUND", exit: 3 });
      expect(e.data).toEqual({ queue: "q", reason: "nothing claimable", claimed: 1, blocked: 0 });
    });

    test("exactly one of several concurrent claimers gets a task", async () => {
      const { id } = await t.bus.tasks.add("one", "prize");
      const results = await Promise.allSettled([0, 1, 2, 3, 4, 5].map((i) => t.reopen().tasks.claim("one", { as: `w${i}` })));
      const won = results.filter((r) => r.status === "fulfilled").map((r) => (r as PromiseFulfilledResult<any>).value.value as Claim);
      const lost = results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason);
      expect(won.map((c) => [c.id, c.attempt])).toEqual([[id, 1]]);
      expect(lost.map((e) => (e instanceof A2AError ? e.code : String(e)))).toEqual(Array(5).fill("ENOTFOUND"));
      expect((await t.bus.tasks.show(id)).assignee).toBe(won[0].assignee);
    });

    test("concurrent claimers of many tasks: each task is handed out exactly once", async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 20; i++) ids.add((await t.bus.tasks.add("pool", `job ${i}`)).id);
      const got = await Promise.all(
        [0, 1, 2, 3].map(async (w) => {
          const bus = t.reopen();
          const mine: string[] = [];
          for (;;) {
            try {
              const c = await claim(bus, "pool", { as: `w${w}` });
              mine.push(c.id);
              await bus.tasks.complete(c.id, c.token, `by w${w}`);
            } catch (e) {
              if (e instanceof A2AError && e.code === "ENOTFOUND") return mine;
              throw e;
            }
          }
        }),
      );
      expect(got.flat().length).toBe(20);
      expect(new Set(got.flat())).toEqual(ids);
      const done = await t.bus.tasks.list({ queue: "pool", state: "done" });
      expect(done.length).toBe(20);
      expect(done.every((v) => v.attempt === 1)).toBe(true);
    });

    test("fencing: once a lease ran out and the task was claimed again, the old token can neither finish, fail nor renew it", async () => {
      const { id } = await t.bus.tasks.add("fence", "work");
      const old = await claim(t.bus, "fence", { as: "slow", leaseSec: 0.05 });
      const other = t.reopen();
      const o = await other.tasks.claim("fence", { as: "fast", wait: true, timeoutMs: BOUND_MS });
      expect(o.kind).toBe("done");
      const now = o.value!;
      expect({ id: now.id, attempt: now.attempt, assignee: now.assignee }).toEqual({ id, attempt: 2, assignee: "fast" });
      expect(now.token).not.toBe(old.token);
      for (const call of [
        t.bus.tasks.complete(id, old.token, "late result"),
        t.bus.tasks.fail(id, old.token, { reason: "late" }),
        t.bus.tasks.renew(id, old.token, { leaseSec: 60 }),
      ]) {
        const e = await refusal(call);
        expect(codeOf(e)).toEqual({ code: "ECONFLICT", exit: 4 });
        expect(e.data).toEqual({ id, attempt: 1, current_attempt: 2, state: "claimed" });
      }
      const v = await t.bus.tasks.show(id);
      expect({ state: v.state, assignee: v.assignee, attempts: v.attempts.map((a) => [a.attempt, a.assignee, a.outcome]) }).toEqual({
        state: "claimed", assignee: "fast", attempts: [[1, "slow", "expired"]],
      });
      expect(await other.tasks.complete(id, now.token, "ok")).toEqual({ id, queue: "fence", attempt: 2, state: "done", reason: null });
      const e = await refusal(t.bus.tasks.complete(id, old.token, "late result"));
      expect(e.data.state).toBe("done");
      expect((await t.bus.tasks.show(id)).result).toBe("ok");
    });

    test("a holder whose lease ran out but whom nobody settled yet may still renew and finish", async () => {
      const { id } = await t.bus.tasks.add("late", "work");
      const c = await claim(t.bus, "late", { as: "w", leaseSec: 0.001 });
      await past(c.expires_at);
      const r = await t.reopen().tasks.renew(id, c.token, { leaseSec: 60 });
      expect({ id: r.id, attempt: r.attempt }).toEqual({ id, attempt: 1 });
      expect(r.expires_at).toBeGreaterThan(c.expires_at);
      expect((await t.bus.tasks.show(id)).state).toBe("claimed"); // the renewed lease holds
      expect((await t.bus.tasks.complete(id, c.token, "made it")).state).toBe("done");
    });

    test("a renew by the holder extends the lease; a forged token is refused", async () => {
      const { id } = await t.bus.tasks.add("renew", "work");
      const c = await claim(t.bus, "renew", { leaseSec: 10 });
      const r = await t.bus.tasks.renew(id, c.token, { leaseSec: 600 });
      expect(r.expires_at).toBeGreaterThanOrEqual(c.claimed_at + 600);
      expect((await t.bus.tasks.show(id)).lease_expires_at).toBe(r.expires_at);
      const forged = `1-${"0".repeat(16)}`;
      const e = await refusal(t.bus.tasks.complete(id, forged, "x"));
      expect(codeOf(e)).toEqual({ code: "ECONFLICT", exit: 4 });
      expect(codeOf(await refusal(t.bus.tasks.complete(id, "not-a-token", "x")))).toEqual({ code: "EUSAGE", exit: 2 });
      expect((await t.bus.tasks.show(id)).state).toBe("claimed");
    });

    test("attempts are counted: after max attempts failed the task is a dead letter; retry starts a new round, numbers going on", async () => {
      const { id } = await t.bus.tasks.add("flaky", "work", { maxAttempts: 2 });
      const c1 = await claim(t.bus, "flaky", { as: "w" });
      expect(await t.bus.tasks.fail(id, c1.token, { reason: "r1" })).toEqual({ id, queue: "flaky", attempt: 1, state: "ready", reason: null });
      const c2 = await claim(t.reopen(), "flaky", { as: "w" });
      expect(c2.attempt).toBe(2);
      expect(await t.bus.tasks.fail(id, c2.token, { reason: "r2" })).toEqual({ id, queue: "flaky", attempt: 2, state: "dead", reason: "2 attempts failed; the last: r2" });
      expect(codeOf(await refusal(t.bus.tasks.claim("flaky")))).toEqual({ code: "ENOTFOUND", exit: 3 });
      const dead = await t.bus.tasks.show(id);
      expect({ state: dead.state, reason: dead.reason, left: dead.attempts_left, attempts: dead.attempts.map((a) => [a.attempt, a.outcome, a.reason]) }).toEqual({
        state: "dead", reason: "2 attempts failed; the last: r2", left: 0, attempts: [[1, "failed", "r1"], [2, "failed", "r2"]],
      });
      expect((await t.bus.tasks.list({ state: "dead" })).map((v) => v.id)).toEqual([id]);
      const back = await t.bus.tasks.retry(id);
      expect({ state: back.state, left: back.attempts_left, reason: back.reason }).toEqual({ state: "ready", left: 2, reason: null });
      const c3 = await claim(t.bus, "flaky");
      expect(c3.attempt).toBe(3);
      expect(codeOf(await refusal(t.bus.tasks.complete(id, c2.token, "x")))).toEqual({ code: "ECONFLICT", exit: 4 });
      expect(codeOf(await refusal(t.bus.tasks.retry(id)))).toEqual({ code: "ECONFLICT", exit: 4 }); // only a dead task is retried
    });

    test("fail without retry is dead at once, with its reason", async () => {
      const { id } = await t.bus.tasks.add("fatal", "work", { maxAttempts: 5 });
      const c = await claim(t.bus, "fatal");
      expect(await t.bus.tasks.fail(id, c.token, { reason: "bad input", retry: false })).toEqual({ id, queue: "fatal", attempt: 1, state: "dead", reason: "bad input" });
    });

    test("a lease that runs out counts as an attempt: the last one makes the task dead, and a waiter is told", async () => {
      const { id } = await t.bus.tasks.add("expire", "work", { maxAttempts: 1 });
      const c = await claim(t.bus, "expire", { as: "w", leaseSec: 0.05 });
      const o = await t.reopen().tasks.wait([id], { timeoutMs: BOUND_MS });
      expect(o.kind).toBe("done");
      expect(o.value!.state).toBe("dead");
      const [v] = o.value!.tasks;
      expect({ id: v.id, state: v.state, attempts: v.attempts.map((a) => [a.attempt, a.outcome]) }).toEqual({ id, state: "dead", attempts: [[1, "expired"]] });
      expect(v.reason).toStartWith("1 attempt failed; the last: the lease of attempt 1 ran out at ");
      expect(codeOf(await refusal(t.bus.tasks.complete(id, c.token, "too late")))).toEqual({ code: "ECONFLICT", exit: 4 });
    });

    test("a task past its TTL is dead and not claimable", async () => {
      const a = await t.bus.tasks.add("ttl", "soon stale", { ttlSec: 0.001 });
      const v0 = await t.bus.tasks.show(a.id);
      await past(v0.deadline!);
      const v = await t.reopen().tasks.show(a.id);
      expect(v.state).toBe("dead");
      expect(v.reason).toStartWith("its TTL ran out at ");
      expect(codeOf(await refusal(t.bus.tasks.claim("ttl")))).toEqual({ code: "ENOTFOUND", exit: 3 });
    });

    test("dependencies: a task waits, unclaimable, until its dependency is done; a waiting claimer is woken then", async () => {
      const a = await t.bus.tasks.add("first", "A");
      const b = await t.bus.tasks.add("second", "B", { after: [a.id] });
      const blocked = await t.bus.tasks.show(b.id);
      expect({ state: blocked.state, blocked_by: blocked.blocked_by, after: blocked.after }).toEqual({ state: "blocked", blocked_by: [a.id], after: [a.id] });
      const e = await refusal(t.bus.tasks.claim("second"));
      expect(e.data).toEqual({ queue: "second", reason: "nothing claimable", claimed: 0, blocked: 1 });
      expect(await t.bus.tasks.claimable(["first", "second"])).toMatchObject([{ queue: "first", claimable: 1, oldest_id: a.id }]);
      const waiting = t.reopen().tasks.claim("second", { as: "next", wait: true, timeoutMs: BOUND_MS });
      const ca = await claim(t.bus, "first");
      expect((await t.bus.tasks.show(b.id)).state).toBe("blocked"); // claimed is not done
      await t.bus.tasks.complete(a.id, ca.token, "A done");
      const o = await waiting;
      expect({ kind: o.kind, id: o.value?.id, attempt: o.value?.attempt }).toEqual({ kind: "done", id: b.id, attempt: 1 });
    });

    test("a dead dependency makes its dependants dead (derived) until it is retried; retry the dependency, not the dependant", async () => {
      const a = await t.bus.tasks.add("up", "A");
      const b = await t.bus.tasks.add("down", "B", { after: [a.id] });
      const c = await t.bus.tasks.add("further", "C", { after: [b.id] });
      const waiting = t.reopen().tasks.wait([c.id], { timeoutMs: BOUND_MS });
      const ca = await claim(t.bus, "up");
      await t.bus.tasks.fail(a.id, ca.token, { reason: "broken", retry: false });
      const o = await waiting;
      expect({ kind: o.kind, state: o.value?.state, id: o.value?.tasks[0].id }).toEqual({ kind: "done", state: "dead", id: c.id });
      const vb = await t.bus.tasks.show(b.id);
      expect({ state: vb.state, reason: vb.reason, retry_id: vb.retry_id }).toEqual({ state: "dead", reason: `dependency ${a.id} is dead: broken`, retry_id: a.id });
      expect((await t.bus.tasks.show(c.id)).retry_id).toBe(a.id);
      expect(codeOf(await refusal(t.bus.tasks.claim("down")))).toEqual({ code: "ENOTFOUND", exit: 3 });
      expect(codeOf(await refusal(t.bus.tasks.retry(b.id)))).toEqual({ code: "ECONFLICT", exit: 4 });
      expect((await t.bus.tasks.retry(a.id)).state).toBe("ready");
      const again = await t.bus.tasks.show(b.id);
      expect({ state: again.state, blocked_by: again.blocked_by }).toEqual({ state: "blocked", blocked_by: [a.id] });
    });

    test("a dependency must exist: an unknown id is refused and nothing is added", async () => {
      const e = await refusal(t.bus.tasks.add("q", "x", { after: ["1796040000123456-3fa9c0d2"] }));
      expect(codeOf(e)).toEqual({ code: "EUSAGE", exit: 2 });
      expect(await t.bus.tasks.list()).toEqual([]);
    });

    test("cancel: a claimed task is dead, its holder fenced off; a done task cannot be cancelled; a retry brings a cancelled one back", async () => {
      const { id } = await t.bus.tasks.add("c", "work");
      const held = await claim(t.bus, "c", { as: "w" });
      const v = await t.reopen().tasks.cancel(id, { reason: "not needed" });
      expect({ state: v.state, reason: v.reason, attempts: v.attempts.map((a) => [a.attempt, a.outcome]) }).toEqual({
        state: "dead", reason: "cancelled: not needed", attempts: [[1, "cancelled"]],
      });
      const e = await refusal(t.bus.tasks.complete(id, held.token, "x"));
      expect(codeOf(e)).toEqual({ code: "ECONFLICT", exit: 4 });
      expect(e.data.state).toBe("dead");
      expect(codeOf(await refusal(t.bus.tasks.claim("c")))).toEqual({ code: "ENOTFOUND", exit: 3 });
      expect((await t.bus.tasks.retry(id)).state).toBe("ready");
      const again = await claim(t.bus, "c");
      expect(again.attempt).toBe(2);
      await t.bus.tasks.complete(id, again.token, "done");
      expect(codeOf(await refusal(t.bus.tasks.cancel(id)))).toEqual({ code: "ECONFLICT", exit: 4 });
      expect((await t.bus.tasks.show(id)).state).toBe("done");
    });

    test("unclaim undoes a claim never received: the task is ready, the attempt not counted, the token dead", async () => {
      const { id } = await t.bus.tasks.add("u", "work");
      const lost = await claim(t.bus, "u");
      expect(await t.bus.tasks.unclaim({ id, queue: "u", token: lost.token })).toBe(true);
      expect(await t.bus.tasks.unclaim({ id, queue: "u", token: lost.token })).toBe(false);
      const v = await t.bus.tasks.show(id);
      expect({ state: v.state, attempt: v.attempt, attempts: v.attempts }).toEqual({ state: "ready", attempt: 0, attempts: [] });
      const next = await claim(t.reopen(), "u");
      expect(next.attempt).toBe(1);
      expect(next.token).not.toBe(lost.token);
      expect(codeOf(await refusal(t.bus.tasks.complete(id, lost.token, "x")))).toEqual({ code: "ECONFLICT", exit: 4 });
      expect(await t.bus.tasks.unclaim({ id, queue: "u", token: lost.token })).toBe(false); // never undoes a later claim
      expect((await t.bus.tasks.show(id)).state).toBe("claimed");
    });

    test("an add key makes one task: the same key again returns its id", async () => {
      const a = await t.bus.tasks.add("k", "payload", { key: "build-42" });
      const b = await t.reopen().tasks.add("k", "payload", { key: "build-42" });
      expect({ id: b.id, created: b.created }).toEqual({ id: a.id, created: false });
      expect(a.created).toBe(true);
      expect((await t.bus.tasks.list({ queue: "k" })).map((v) => v.id)).toEqual([a.id]);
    });

    test("a key may be any text, control characters included: the same key again names the same task, the same claim", async () => {
      const key = "build\u0000#42\nné ✓";
      const payload = "nul \u0000 inside";
      const a = await t.bus.tasks.add("anykey", payload, { key });
      expect(await t.reopen().tasks.add("anykey", payload, { key })).toEqual({ id: a.id, queue: "anykey", created: false });
      expect((await t.bus.tasks.add("anykey", payload, { key: "build #42" })).created).toBe(true);
      const c = await claim(t.bus, "anykey", { key });
      expect({ id: c.id, payload: c.payload }).toEqual({ id: a.id, payload });
      expect((await claim(t.reopen(), "anykey", { key })).replayed).toBe(true);
    });

    test("adds racing with one key through several handles make one task: exactly one is created, all return its id", async () => {
      const got = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => t.reopen().tasks.add("race", `payload ${i}`, { key: "deploy-7" })));
      expect(got.filter((a) => a.created).length).toBe(1);
      expect(new Set(got.map((a) => a.id)).size).toBe(1);
      const listed = await t.bus.tasks.list({ queue: "race" });
      expect(listed.map((v) => [v.id, v.version])).toEqual([[got[0].id, 1]]);
      expect(listed[0].payload).toBe(`payload ${got.findIndex((a) => a.created)}`);
    });

    test("versions grow by one per change and a refused change writes none; claims go oldest first", async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await t.bus.tasks.add("ver", `job ${i}`)).id);
      expect([...ids].sort()).toEqual(ids);
      const c = await claim(t.reopen(), "ver");
      expect(c.id).toBe(ids[0]);
      expect((await t.bus.tasks.show(c.id)).version).toBe(2);
      await t.bus.tasks.renew(c.id, c.token, { leaseSec: 60 });
      expect(codeOf(await refusal(t.bus.tasks.complete(c.id, `1-${"0".repeat(16)}`, "forged")))).toEqual({ code: "ECONFLICT", exit: 4 });
      expect(codeOf(await refusal(t.bus.tasks.retry(c.id)))).toEqual({ code: "ECONFLICT", exit: 4 });
      expect((await t.bus.tasks.show(c.id)).version).toBe(3);
      await t.bus.tasks.complete(c.id, c.token, "ok");
      expect((await t.bus.tasks.show(c.id)).version).toBe(4);
      for (const id of ids.slice(1)) expect((await claim(t.bus, "ver")).id).toBe(id);
    });

    test("a cancel racing the holder's done: exactly one lands, the other is refused and writes nothing", async () => {
      for (let round = 0; round < 4; round++) {
        const { id } = await t.bus.tasks.add("duel", `work ${round}`);
        const c = await claim(t.bus, "duel");
        const [done, cancel] = await Promise.allSettled([t.reopen().tasks.complete(id, c.token, "result"), t.reopen().tasks.cancel(id)]);
        const v = await t.bus.tasks.show(id);
        expect(v.version).toBe(3); // add, claim, and one of the two
        if (done.status === "fulfilled") {
          expect(cancel.status).toBe("rejected");
          expect(((cancel as PromiseRejectedResult).reason as A2AError).code).toBe("ECONFLICT");
          expect({ state: v.state, result: v.result }).toEqual({ state: "done", result: "result" });
        } else {
          expect(((done as PromiseRejectedResult).reason as A2AError).code).toBe("ECONFLICT");
          expect(cancel.status).toBe("fulfilled");
          expect({ state: v.state, reason: v.reason, result: v.result }).toEqual({ state: "dead", reason: "cancelled", result: null });
        }
      }
    });

    test("a claim key replays the same claim while it lasts, and takes nothing else", async () => {
      await t.bus.tasks.add("r", "one");
      await t.bus.tasks.add("r", "two");
      const first = await claim(t.bus, "r", { as: "w", key: "attempt-A" });
      const again = await claim(t.reopen(), "r", { as: "w", key: "attempt-A" });
      expect({ id: again.id, token: again.token, replayed: again.replayed }).toEqual({ id: first.id, token: first.token, replayed: true });
      expect((await t.bus.tasks.list({ queue: "r", state: "ready" })).length).toBe(1);
    });

    test("a claim that waits wakes on an add through another handle", async () => {
      const waiting = t.bus.tasks.claim("later", { as: "w", wait: true, timeoutMs: BOUND_MS });
      const { id } = await t.reopen().tasks.add("later", "arrives");
      const o = await waiting;
      expect({ kind: o.kind, id: o.value?.id, attempt: o.value?.attempt }).toEqual({ kind: "done", id, attempt: 1 });
    });

    test("a claim whose wait times out or is cancelled takes nothing: a later task goes to a live claimer, or stays ready", async () => {
      const timedOut = await t.bus.tasks.claim("idle", { wait: true, timeoutMs: 0 });
      expect({ kind: timedOut.kind, value: timedOut.value, pending: timedOut.pending }).toEqual({ kind: "timeout", value: undefined, pending: ["idle"] });
      const stop = new AbortController();
      const waiting = t.bus.tasks.claim("idle", { as: "cancelled", wait: true, signal: stop.signal });
      stop.abort();
      const o = await waiting;
      expect({ kind: o.kind, value: o.value, pending: o.pending }).toEqual({ kind: "aborted", value: undefined, pending: ["idle"] });
      // A claimer waiting on the same handle after the cancel gets the next task, not the cancelled wait.
      const live = t.bus.tasks.claim("idle", { as: "live", wait: true, timeoutMs: BOUND_MS });
      const first = await t.reopen().tasks.add("idle", "for the live claimer");
      const got = await live;
      expect({ kind: got.kind, id: got.value?.id, assignee: got.value?.assignee }).toEqual({ kind: "done", id: first.id, assignee: "live" });
      const { id } = await t.reopen().tasks.add("idle", "with no claimer waiting");
      const v = await t.bus.tasks.show(id);
      expect({ state: v.state, attempt: v.attempt, assignee: v.assignee }).toEqual({ state: "ready", attempt: 0, assignee: null });
      expect((await claim(t.reopen(), "idle")).id).toBe(id);
    });

    test("wait ends when every task is done, with their results in the order asked", async () => {
      const a = await t.bus.tasks.add("w", "A");
      const b = await t.bus.tasks.add("w", "B");
      const waiting = t.reopen().tasks.wait([b.id, a.id], { timeoutMs: BOUND_MS });
      for (let i = 0; i < 2; i++) {
        const c = await claim(t.bus, "w");
        await t.bus.tasks.complete(c.id, c.token, `result of ${c.payload}`);
      }
      const o = await waiting;
      expect({ kind: o.kind, state: o.value?.state, results: o.value?.tasks.map((v) => [v.id, v.result]) }).toEqual({
        kind: "done", state: "done", results: [[b.id, "result of B"], [a.id, "result of A"]],
      });
    });
  });
}

// Moved to another store of the engine (a2a export and import, lib/move/): TaskStorage.restore.
for (const engine of enginesFor("tasks")) {
  describe(`${engine.name}: tasks, moved`, () => {
    const t = perTest(engine);

    test("tasks keep their versions, states, attempts, dependencies and keys; the holder's token still holds", async () => {
      const a = await t.bus.tasks.add("q", "first", { key: "k-a" });
      const b = await t.bus.tasks.add("q", "second", { after: [a.id] });
      const c1 = await claim(t.bus, "q", { as: "w" });
      await t.bus.tasks.fail(c1.id, c1.token, { reason: "broke" });
      const c2 = await claim(t.bus, "q", { as: "w" });
      expect([c1.id, c2.id, c2.attempt]).toEqual([a.id, a.id, 2]);
      const target = (await t.open({})).bus;
      const { report } = await move(t.bus, target);
      expect(report.counts.task).toEqual({ imported: 2, already: 0, kept: 0 });
      for (const id of [a.id, b.id]) expect(await target.tasks.show(id)).toEqual(await t.bus.tasks.show(id));
      expect(await target.tasks.add("q", "again", { key: "k-a" })).toMatchObject({ id: a.id, created: false }); // its add key came along
      expect(codeOf(await refusal(target.tasks.claim("q")))).toEqual({ code: "ENOTFOUND", exit: 3 }); // a held, b waits for it
      await target.tasks.complete(c2.id, c2.token, "ok");
      expect((await claim(target, "q", { as: "w" })).id).toBe(b.id);
      expect((await move(t.bus, target)).report.counts.task).toEqual({ imported: 0, already: 0, kept: 2 }); // newer there
      expect((await target.tasks.show(a.id)).state).toBe("done");
    });

    test("from a pipe, a damaged line after tasks stops the import there: the tasks before it are in (a batch is written before the damage is told), and the whole export again completes it", async () => {
      const a = await t.bus.tasks.add("q", "first", { key: "k-a" });
      const b = await t.bus.tasks.add("q", "second", { after: [a.id] });
      const lines: string[] = [];
      await t.bus.move.exportStore((l) => void lines.push(l));
      const text = lines.join("");
      const rows = text.trimEnd().split("\n"); // the header, a, b, the end line
      expect(rows).toHaveLength(4);
      const pipe = (s: string) => ({ open: async function* () { yield Buffer.from(s, "utf8"); }, again: false });
      const target = (await t.open({})).bus;
      const err = await refusal(target.move.importStore(pipe([...rows.slice(0, 3), '{"kind":"task","record":{}}'].join("\n") + "\n")));
      expect({ code: err.code, line: (err.data as { line?: number }).line }).toEqual({ code: "EUSAGE", line: 4 });
      for (const id of [a.id, b.id]) expect(await target.tasks.show(id)).toEqual(await t.bus.tasks.show(id));
      expect((await target.move.importStore(pipe(text))).counts.task).toEqual({ imported: 0, already: 2, kept: 0 });
    });
  });
}
