// lib/tasks through its API, on real temporary stores, with real child processes where
// crashes and concurrency matter (tests/unit/fixtures/tasks-worker.ts). The CLI and MCP adapters
// come in a later phase; these tests pin the engine's guarantees they will rely on.
// Nothing sleeps to wait for a condition: lease expiry is awaited through claimTask's own
// wait, children through their output, with generous bounds.
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Store } from "../../lib/core/config";
import { openStore } from "../../lib/engine/open";
import { A2AError } from "../../lib/core/errors";
import { taskBell } from "../../lib/fs/paths";
import { closeWatches } from "../../lib/fs/watch";
import { startSlot } from "../../lib/slots/slot";
import { addTask, addTasks } from "../../lib/tasks/add";
import { cancelTask, retryTask } from "../../lib/tasks/admin";
import { claimTask, type TaskClaim } from "../../lib/tasks/claim";
import { completeTask, failTask, renewTask } from "../../lib/tasks/holder";
import { listLeases, releaseLeases, renewLeases, takeLeases } from "../../lib/leases/lease";
import { listTasks, showTask, waitTasks } from "../../lib/tasks/query";

setDefaultTimeout(120_000); // generous: the machine is shared

const FIXTURE = join(import.meta.dir, "fixtures", "tasks-worker.ts");
const dirs: string[] = [];
const stores: Store[] = [];

function fresh(env: Record<string, string> = {}): Store {
  const path = mkdtempSync(join(tmpdir(), "a2a-tasks-"));
  dirs.push(path);
  const s = openStore({ dir: path, env });
  stores.push(s);
  return s;
}
afterEach(() => {
  for (const s of stores.splice(0)) closeWatches(s);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

// Every path under `root` (tmp/ aside) with its content: "nothing was written" means equal.
function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (p === join(root, "tmp")) continue;
      out[p] = lstatSync(p).isDirectory() ? "dir" : readFileSync(p, "utf8");
      if (lstatSync(p).isDirectory()) walk(p);
    }
  };
  walk(root);
  return out;
}

async function rejected(p: Promise<unknown>): Promise<A2AError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof A2AError) return err;
    throw err;
  }
  throw new Error("expected an A2AError, the call succeeded");
}

const claim = async (s: Store, q: string, o: Parameters<typeof claimTask>[2] = {}) => {
  const out = await claimTask(s, q, o);
  expect(out.kind).toBe("done");
  return out.value as TaskClaim;
};

function worker(args: string[]) {
  return Bun.spawn({ cmd: ["bun", FIXTURE, ...args], stdin: "pipe", stdout: "pipe", stderr: "pipe" });
}

// Reads a child's stdout line by line until `pred` holds for a line; returns that line.
async function lineOf(reader: { read(): Promise<{ value?: Uint8Array; done: boolean }> }, buf: { text: string }, pred: (l: string) => boolean, limitMs = 60_000): Promise<string> {
  const dec = new TextDecoder();
  const deadline = Date.now() + limitMs;
  for (;;) {
    const lines = buf.text.split("\n");
    const i = lines.slice(0, -1).findIndex(pred);
    if (i >= 0) {
      buf.text = lines.slice(i + 1).join("\n");
      return lines[i];
    }
    if (Date.now() > deadline) throw new Error(`no matching line within ${limitMs} ms; got ${JSON.stringify(buf.text)}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`the child ended without a matching line; got ${JSON.stringify(buf.text)}`);
    buf.text += dec.decode(value, { stream: true });
  }
}

describe("claims", () => {
  test("a blocked claimer holds its claim's temp file ready, writes the claim into it, and leaves nothing in tmp/", async () => {
    const s = fresh();
    const tmp = join(s.root, "tmp");
    await addTask(s, "q", "seed");
    await claim(s, "q"); // the queue exists; nothing claimable now
    const pending = claimTask(s, "q", { as: "w", wait: true, timeoutMs: 60_000 });
    // The first check (asynchronous: the storage interface is) ran before the event loop's next
    // turn, found nothing and prepared the spare: the file engine answers it without any I/O wait.
    await new Promise((r) => setImmediate(r));
    expect(s.spare).toBeDefined();
    const spare = s.spare!.path;
    expect(readdirSync(tmp).map((f) => join(tmp, f))).toEqual([spare]);
    const a = await addTask(s, "q", "work");
    const c = (await pending).value as TaskClaim;
    expect(c.id).toBe(a.id);
    // The claim's version is the spare's inode, linked into place; the temp name is gone.
    expect(lstatSync(join(s.root, "tasks", "q", a.id, "00000002.json")).nlink).toBe(1);
    expect(readdirSync(tmp)).toEqual([]);
    expect(s.spare).toBeUndefined();
    // A wait that ends without a claim removes its spare too.
    const none = await claimTask(s, "q", { as: "w", wait: true, timeoutMs: 50 });
    expect(none.kind).toBe("timeout");
    expect(readdirSync(tmp)).toEqual([]);
  });

  test("8 processes racing on 200 tasks: every task claimed exactly once and done once", async () => {
    const s = fresh();
    const ids = (await addTasks(s, Array.from({ length: 200 }, (_, i) => ({ queue: "q", payload: `p${i}` })))).map((a) => a.id);
    const procs = Array.from({ length: 8 }, (_, w) => worker(["drain", s.root, "q", `w${w}`]));
    const outs = await Promise.all(procs.map(async (p) => {
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      expect({ err, code }).toEqual({ err: "", code: 0 });
      return out;
    }));
    const claims = outs.flatMap((o, w) => o.split("\n").filter((l) => l.startsWith("claimed ")).map((l) => ({ w, id: l.split(" ")[1], attempt: l.split(" ")[2] })));
    expect(claims.length).toBe(200);
    expect(new Set(claims.map((c) => c.id)).size).toBe(200);
    expect(claims.every((c) => c.attempt === "1")).toBe(true);
    expect(outs.every((o) => o.endsWith("drained\n"))).toBe(true);
    const all = await listTasks(s, { queue: "q" });
    expect(all.map((t) => t.id)).toEqual(ids);
    expect(all.every((t) => t.state === "done")).toBe(true);
    const winner = new Map(claims.map((c) => [c.id, `w${c.w}:${c.id}`]));
    expect(all.every((t) => t.result === winner.get(t.id))).toBe(true);
    expect(readdirSync(join(s.root, "tasks", "q", "@open"))).toEqual([]); // final tasks leave no hint
  });

  test("the oldest claimable task first; an empty queue is ENOTFOUND and an unknown one too", async () => {
    const s = fresh();
    expect((await rejected(claimTask(s, "none"))).code).toBe("ENOTFOUND");
    const a = await addTask(s, "q", "first"), b = await addTask(s, "q", "second");
    expect((await claim(s, "q")).id).toBe(a.id);
    expect((await claim(s, "q")).id).toBe(b.id);
    const e = await rejected(claimTask(s, "q"));
    expect(e.code).toBe("ENOTFOUND");
    expect(e.exitCode).toBe(3);
    expect(e.data).toMatchObject({ queue: "q", reason: "nothing claimable", claimed: 2, blocked: 0 });
  });

  test("a waiting claim is woken by an add; a timeout ends it with the queue pending", async () => {
    const s = fresh();
    const t = await claimTask(s, "q", { wait: true, timeoutMs: 50 });
    expect(t).toEqual({ kind: "timeout", value: undefined, pending: ["q"] });
    const waiting = claimTask(s, "q", { wait: true, timeoutMs: 60_000 });
    const a = await addTask(s, "q", "wake up");
    const got = await waiting;
    expect(got.kind).toBe("done");
    expect(got.value!.id).toBe(a.id);
    const ac = new AbortController();
    const aborted = claimTask(s, "q", { wait: true, signal: ac.signal });
    ac.abort();
    expect((await aborted).kind).toBe("aborted");
  });

  test("replay: the same assignee and key get the same claim and token back; another key does not", async () => {
    const s = fresh();
    await addTask(s, "q", "one");
    await addTask(s, "q", "two");
    const first = await claim(s, "q", { as: "w1", key: "k" });
    const again = await claim(s, "q", { as: "w1", key: "k" });
    expect(again).toEqual({ ...first, replayed: true });
    const other = await claim(s, "q", { as: "w2", key: "k" });
    expect(other.id).not.toBe(first.id);
    await completeTask(s, first.id, first.token, "r");
    // The replayed claim is over: the key claims afresh (nothing left here).
    expect((await rejected(claimTask(s, "q", { as: "w1", key: "k" }))).code).toBe("ENOTFOUND");
  });
});

describe("fencing and leases", () => {
  test("a claim lost in a power cut (its version empty or NUL bytes) reads as the task before it; the lost token never lands", async () => {
    for (const lost of [Buffer.alloc(0), Buffer.alloc(700)]) {
      const s = fresh();
      const a = await addTask(s, "q", "work");
      const first = await claim(s, "q", { as: "gone" });
      const v2 = join(s.root, "tasks", "q", a.id, "00000002.json");
      writeFileSync(v2, lost); // what ext4 (empty) or XFS (zeros) leaves of an unsynced file
      const seen = await showTask(s, a.id);
      expect(seen).toMatchObject({ state: "ready", version: 2, attempt: 0, assignee: null });
      const again = await claim(s, "q", { as: "heir" });
      expect(again).toMatchObject({ id: a.id, attempt: 1, assignee: "heir" });
      expect(again.token).not.toBe(first.token);
      expect(readFileSync(v2)).toEqual(lost); // nothing is ever written into the hole
      const e = (await rejected(completeTask(s, a.id, first.token, "late")));
      expect([e.code, e.exitCode]).toEqual(["ECONFLICT", 4]);
      await completeTask(s, a.id, again.token, "ok");
      expect((await showTask(s, a.id))).toMatchObject({ state: "done", result: "ok", version: 4 });
    }
  });

  test("a head of foreign bytes is still damage, never a hole", async () => {
    const s = fresh();
    const a = await addTask(s, "q", "work");
    await claim(s, "q");
    writeFileSync(join(s.root, "tasks", "q", a.id, "00000002.json"), "garbage\n");
    expect((await rejected(showTask(s, a.id))).message).toMatch(/00000002\.json is not JSON/);
  });

  test("lease expiry hands the task out again as attempt 2; the old token is refused and changes nothing", async () => {
    const s = fresh();
    const a = await addTask(s, "q", "job");
    const first = await claim(s, "q", { leaseSec: 0.3 });
    expect(first.token.startsWith("1-")).toBe(true);
    // Waits, through the watch and its recheck, until the lease has run out and settles it.
    const second = await claim(s, "q", { wait: true, timeoutMs: 60_000 });
    expect([second.id, second.attempt]).toEqual([a.id, 2]);
    expect(second.token.startsWith("2-")).toBe(true);
    const before = tree(s.root);
    for (const call of [() => completeTask(s, a.id, first.token, "late"), () => failTask(s, a.id, first.token), () => renewTask(s, a.id, first.token)]) {
      const e = await rejected(call());
      expect(e.code).toBe("ECONFLICT");
      expect(e.exitCode).toBe(4);
      expect(e.message).toMatch(/the lease of attempt 1 ran out.*it is now attempt 2/);
    }
    expect(tree(s.root)).toEqual(before);
    expect((await renewTask(s, a.id, second.token, { leaseSec: 600 })).expires_at).toBeGreaterThan(second.expires_at);
    await completeTask(s, a.id, second.token, "fine");
    const v = await showTask(s, a.id);
    expect([v.state, v.result, v.attempts.map((x) => x.outcome)]).toEqual(["done", "fine", ["expired"]]);
    expect((await rejected(completeTask(s, a.id, second.token, "twice"))).message).toMatch(/already finished it as done/);
  });

  test("a worker SIGSTOPped past its lease and resumed cannot finish the reassigned task", async () => {
    const s = fresh();
    const a = await addTask(s, "q", "job");
    const p = worker(["hold", s.root, "q", "0.5"]);
    const reader = p.stdout.getReader(), buf = { text: "" };
    const line = await lineOf(reader, buf, (l) => l.startsWith("claimed "));
    expect(line.split(" ").slice(1, 3)).toEqual([a.id, "1"]);
    process.kill(p.pid, "SIGSTOP");
    const second = await claim(s, "q", { wait: true, timeoutMs: 60_000, as: "other" });
    expect(second.attempt).toBe(2);
    process.kill(p.pid, "SIGCONT");
    p.stdin.write("done\n");
    p.stdin.flush();
    const answer = await lineOf(reader, buf, (l) => l.startsWith("ok") || l.startsWith("conflict"));
    expect(answer).toMatch(/^conflict ECONFLICT .*lease of attempt 1 ran out.*held by other/);
    p.kill(9);
    await p.exited;
    const v = await showTask(s, a.id);
    expect([v.state, v.attempt, v.assignee, v.result]).toEqual(["claimed", 2, "other", null]);
  });

  test("kill -9 of a claimer leaves the task claimable again after its lease", async () => {
    const s = fresh();
    const a = await addTask(s, "q", "job");
    const p = worker(["hold", s.root, "q", "0.5"]);
    await lineOf(p.stdout.getReader(), { text: "" }, (l) => l.startsWith("claimed "));
    p.kill(9);
    await p.exited;
    expect((await showTask(s, a.id)).state).toBe("claimed");
    const again = await claim(s, "q", { wait: true, timeoutMs: 60_000 });
    expect([again.id, again.attempt]).toEqual([a.id, 2]);
  });

  test("malformed tokens are EUSAGE, unknown ids ENOTFOUND, a forged token ECONFLICT; none writes", async () => {
    const s = fresh();
    const a = await addTask(s, "q", "job");
    const c = await claim(s, "q");
    const before = tree(s.root);
    for (const bad of ["", "abc", "0-0123456789abcdef", "1-0123", "1-0123456789ABCDEF"]) expect((await rejected(completeTask(s, a.id, bad))).exitCode).toBe(2);
    expect((await rejected(completeTask(s, "nope", c.token))).code).toBe("EUSAGE");
    expect((await rejected(completeTask(s, "1796040000123456-3fa9c0d2", c.token))).code).toBe("ENOTFOUND");
    expect((await rejected(completeTask(s, a.id, "1-0123456789abcdef"))).message).toMatch(/never handed out/);
    expect((await rejected(completeTask(s, a.id, c.token, "x".repeat(s.maxBytes + 1)))).code).toBe("ETOOBIG");
    expect(tree(s.root)).toEqual(before);
  });

  test("max attempts: the task goes to the dead letters with every attempt's reason; retry brings it back", async () => {
    const s = fresh();
    const a = await addTask(s, "q", "flaky", { maxAttempts: 3 });
    for (let i = 1; i <= 3; i++) {
      const c = await claim(s, "q");
      expect(c.attempt).toBe(i);
      expect((await failTask(s, a.id, c.token, { reason: `boom ${i}` })).state).toBe(i < 3 ? "ready" : "dead");
    }
    const dead = await listTasks(s, { queue: "q", state: "dead" });
    expect(dead.map((t) => t.id)).toEqual([a.id]);
    expect(dead[0].attempts.map((x) => [x.attempt, x.outcome, x.reason])).toEqual([[1, "failed", "boom 1"], [2, "failed", "boom 2"], [3, "failed", "boom 3"]]);
    expect(dead[0].reason).toBe("3 attempts failed; the last: boom 3");
    expect((await rejected(claimTask(s, "q"))).code).toBe("ENOTFOUND");
    expect((await retryTask(s, a.id)).state).toBe("ready");
    const c = await claim(s, "q");
    expect(c.attempt).toBe(4); // attempt numbers never repeat: old tokens stay dead
    await failTask(s, a.id, c.token, { reason: "no point", retry: false });
    expect((await showTask(s, a.id))).toMatchObject({ state: "dead", reason: "no point", attempts_left: 2 });
    expect((await rejected(retryTask(s, (await addTask(s, "q", "fresh")).id))).code).toBe("ECONFLICT");
  });

  test("an expired last attempt is settled as dead by whoever looks (list, wait)", async () => {
    const s = fresh();
    const a = await addTask(s, "q", "slow", { maxAttempts: 1 });
    await claim(s, "q", { leaseSec: 0.2 });
    const w = await waitTasks(s, [a.id], { timeoutMs: 60_000 });
    expect(w.kind).toBe("done");
    expect(w.value!.state).toBe("dead");
    expect(w.value!.tasks[0].reason).toMatch(/1 attempt failed; the last: the lease of attempt 1 ran out/);
    expect((await listTasks(s, { state: "dead" })).map((t) => t.id)).toEqual([a.id]);
  });

  test("cancel: a claimed task is dead at once and its holder's done is refused", async () => {
    const s = fresh();
    const a = await addTask(s, "q", "job");
    const c = await claim(s, "q");
    expect((await cancelTask(s, a.id, { reason: "not needed" }))).toMatchObject({ state: "dead", reason: "cancelled: not needed" });
    expect((await rejected(completeTask(s, a.id, c.token, "r"))).message).toMatch(/cancelled/);
    const b = await addTask(s, "q", "other");
    await completeTask(s, b.id, (await claim(s, "q")).token, "r");
    expect((await rejected(cancelTask(s, b.id))).code).toBe("ECONFLICT");
  });
});

describe("adding", () => {
  test("same key, same id, one task; concurrent adders with one key create it once", async () => {
    const s = fresh();
    const a = await addTask(s, "q", "x", { key: "build-1" });
    expect((await addTask(s, "q", "x", { key: "build-1" }))).toEqual({ ...a, created: false });
    expect((await addTask(s, "q", "x", { key: "build-2" })).id).not.toBe(a.id);
    expect((await addTask(s, "other", "x", { key: "build-1" })).id).not.toBe(a.id); // keys are per queue
    const procs = Array.from({ length: 6 }, () => worker(["add", s.root, "race", "k", "payload"]));
    const lines = await Promise.all(procs.map((p) => new Response(p.stdout).text()));
    const ids = lines.map((l) => l.trim().split(" ")[1]);
    expect(new Set(ids).size).toBe(1);
    expect(lines.filter((l) => l.trim().endsWith(" true")).length).toBe(1);
    expect((await listTasks(s, { queue: "race" })).length).toBe(1);
  });

  test("kill -9 of adders at random moments leaves no task or one whole task per key; a retry completes it", async () => {
    const s = fresh();
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    await Promise.all(keys.map(async (k, i) => {
      const p = worker(["add", s.root, "q", k, `payload ${k}`]);
      // Kill after a varying part of its start-up and work; some finish first, some die early.
      await Bun.sleep(40 + i * 25); // picks the kill point, not a wait for a condition
      p.kill(9);
      await p.exited;
    }));
    const before = await listTasks(s, { queue: "q" });
    expect(before.every((t) => t.payload === `payload ${t.key}` && t.state === "ready")).toBe(true);
    // Every version file that exists is whole (it parsed above, or is missing entirely).
    for (const k of keys) (await addTask(s, "q", `payload ${k}`, { key: k }));
    const after = await listTasks(s, { queue: "q" });
    expect(after.map((t) => t.key).sort()).toEqual([...keys].sort());
    for (const t of before) expect(after.find((x) => x.key === t.key)!.id).toBe(t.id);
  });

  test("the add's marker: pending (a dot-name) until version 1 exists; a crash between the two is repaired by the next claim", async () => {
    const s = fresh();
    const open = join(s.root, "tasks", "q", "@open");
    const a = await addTask(s, "q", "whole");
    expect(readdirSync(open)).toEqual([a.id]); // the pending marker became the real one
    // A crash between version 1 and the rename leaves the task behind a pending marker.
    renameSync(join(open, a.id), join(open, "." + a.id));
    // A crash before version 1: a pending marker that names nothing.
    const ghost = "1796040000123456-3fa9c0d2";
    writeFileSync(join(open, "." + ghost), "");
    const c = await claim(s, "q");
    expect(c.id).toBe(a.id);
    expect(readdirSync(open).sort()).toEqual(["." + ghost, a.id]);
    // The ghost is passed over: nothing else is claimable, and claiming says so.
    await expect(claimTask(s, "q", { as: "w" })).rejects.toMatchObject({ code: "ENOTFOUND" });
  });

  test("unknown dependency, a cycle, an oversize payload and bad counts are refused with nothing written", async () => {
    const s = fresh();
    const a = await addTask(s, "q", "exists");
    const before = tree(s.root);
    const cases: [() => Promise<unknown>, A2AError["code"], RegExp][] = [
      [() => addTask(s, "q", "x", { after: ["1796040000123456-3fa9c0d2"] }), "EUSAGE", /unknown dependency 1796040000123456-3fa9c0d2/],
      [() => addTask(s, "q", "x", { after: ["not-an-id"] }), "EUSAGE", /unknown dependency/],
      [() => addTasks(s, [{ queue: "q", payload: "a", ref: "a", after: ["b"] }, { queue: "q", payload: "b", ref: "b", after: ["c", a.id] }, { queue: "q", payload: "c", ref: "c", after: ["a"] }]), "EUSAGE", /cycle \(a -> b -> c -> a\)/],
      [() => addTasks(s, [{ queue: "q", payload: "self", ref: "me", after: ["me"] }]), "EUSAGE", /cycle/],
      [() => addTasks(s, [{ queue: "q", payload: "ok" }, { queue: "q", payload: "x".repeat(s.maxBytes + 1) }]), "ETOOBIG", /over the 1048576-byte limit/],
      [() => addTask(s, "q", "x", { maxAttempts: 0 }), "EUSAGE", /max attempts/],
      [() => addTask(s, "bad/name", "x"), "EUSAGE", /invalid queue name/],
      [() => addTask(s, "q", "x", { ttlSec: -1 }), "EUSAGE", /not a positive duration/],
    ];
    for (const [call, code, msg] of cases) {
      const e = await rejected(call());
      expect([e.code, e.exitCode]).toEqual([code, 2]);
      expect(e.message).toMatch(msg);
    }
    expect(tree(s.root)).toEqual(before);
  });
});

describe("dependencies", () => {
  test("fan-out, fan-in: a task is claimable only once every dependency is done, and waiting sees results", async () => {
    const s = fresh();
    const [root, l, r, join_] = (await addTasks(s, [
      { queue: "q", payload: "root", ref: "root" },
      { queue: "q", payload: "left", ref: "l", after: ["root"] },
      { queue: "q", payload: "right", ref: "r", after: ["root"] },
      { queue: "q", payload: "join", ref: "j", after: ["l", "r"] },
    ])).map((x) => x.id);
    expect((await listTasks(s, { state: "blocked" })).map((t) => t.id)).toEqual([l, r, join_]);
    expect((await showTask(s, join_)).blocked_by).toEqual([l, r]);
    const waitAll = waitTasks(s, [l, r, join_], { timeoutMs: 60_000 });
    const c0 = await claim(s, "q");
    expect(c0.id).toBe(root);
    expect((await rejected(claimTask(s, "q"))).data).toMatchObject({ claimed: 1, blocked: 3 });
    // A claimer waiting meanwhile is woken by the dependency's done.
    const waiting = claimTask(s, "q", { wait: true, timeoutMs: 60_000 });
    await completeTask(s, root, c0.token, "R");
    const c1 = (await waiting).value!;
    const c2 = await claim(s, "q");
    expect([c1.id, c2.id].sort()).toEqual([l, r].sort());
    await completeTask(s, c1.id, c1.token, "first");
    expect((await rejected(claimTask(s, "q"))).data).toMatchObject({ blocked: 1 });
    await completeTask(s, c2.id, c2.token, "second");
    const c3 = await claim(s, "q");
    expect(c3.id).toBe(join_);
    await completeTask(s, join_, c3.token, "joined");
    const w = await waitAll;
    expect(w.kind).toBe("done");
    expect(w.value!.state).toBe("done");
    expect(w.value!.tasks.map((t) => [t.id, t.result])).toEqual([[l, c1.id === l ? "first" : "second"], [r, c1.id === r ? "first" : "second"], [join_, "joined"]]);
  });

  test("a dead dependency kills its dependants, transitively, with the reason; retrying it revives them", async () => {
    const s = fresh();
    const a = await addTask(s, "build", "compile", { maxAttempts: 1 });
    const b = await addTask(s, "test", "unit tests", { after: [a.id] }); // across queues
    const c = await addTask(s, "deploy", "ship", { after: [b.id] });
    const waiting = waitTasks(s, [c.id], { timeoutMs: 60_000 });
    const ca = await claim(s, "build");
    await failTask(s, a.id, ca.token, { reason: "compiler crashed" });
    const w = await waiting;
    expect(w.value!.state).toBe("dead");
    expect(w.value!.tasks[0].reason).toBe(`dependency ${b.id} is dead: dependency ${a.id} is dead: 1 attempt failed; the last: compiler crashed`);
    expect((await showTask(s, b.id)).state).toBe("dead");
    expect((await rejected(retryTask(s, b.id))).message).toMatch(/retry that dependency instead/);
    await retryTask(s, a.id);
    expect((await showTask(s, b.id)).state).toBe("blocked");
    await completeTask(s, a.id, (await claim(s, "build")).token, "ok");
    expect((await claim(s, "test")).id).toBe(b.id);
  });

  test("a dead task rings the bell of every unfinished task below it, however deep (a waiter on any of them wakes)", async () => {
    const s = fresh();
    const a = await addTask(s, "build", "compile");
    const chain = [a];
    for (const q of ["test", "deploy", "announce"]) chain.push(await addTask(s, q, q, { after: [chain[chain.length - 1].id] }));
    const ca = await claim(s, "build");
    await failTask(s, a.id, ca.token, { reason: "broken", retry: false });
    expect(chain.slice(1).map((t) => existsSync(taskBell(s, t.queue, t.id)))).toEqual([true, true, true]);
  });
});

describe("leases on names", () => {
  test("all or nothing: taking any held name fails as a whole, naming holder and expiry", async () => {
    const s = fresh();
    expect((await takeLeases(s, ["src-a", "src-b"], { as: "alice", ttlSec: 60 })).kind).toBe("done");
    const before = tree(s.root);
    const e = await rejected(takeLeases(s, ["src-c", "src-b", "src-d"], { as: "bob" }));
    expect(e.code).toBe("ECONFLICT");
    expect(e.message).toMatch(/held: src-b by alice until \d{4}-.*nothing was taken/);
    expect((await listLeases(s)).map((l) => [l.name, l.holder])).toEqual([["src-a", "alice"], ["src-b", "alice"]]);
    // bob's short-lived take of src-c was undone: src-c is free (its chain records the undo).
    expect(Object.keys(tree(s.root)).filter((p) => !(p in before)).every((p) => /leases\/src-[cd]/.test(p))).toBe(true);
    expect((await takeLeases(s, ["src-c"], { as: "carol" })).kind).toBe("done");
    const waiting = takeLeases(s, ["src-b", "src-e"], { as: "bob", wait: true, timeoutMs: 60_000 });
    expect(await releaseLeases(s, ["src-a", "src-b"], { as: "alice" })).toEqual(["src-a", "src-b"]);
    const got = await waiting;
    expect(got.kind).toBe("done");
    expect(got.value!.map((l) => [l.name, l.holder])).toEqual([["src-b", "bob"], ["src-e", "bob"]]);
    expect((await rejected(releaseLeases(s, ["src-b"], { as: "alice" }))).code).toBe("ECONFLICT");
    expect((await rejected(renewLeases(s, ["src-b"], { as: "alice" }))).message).toMatch(/alice does not hold the lease on src-b: it is held by bob/);
    expect((await renewLeases(s, ["src-b"], { as: "bob", ttlSec: 900 }))[0].expires_at).toBeGreaterThan(got.value![0].expires_at);
    expect((await rejected(renewLeases(s, ["never"], { as: "bob" }))).code).toBe("ECONFLICT");
    expect(existsSync(join(s.root, "leases", "never"))).toBe(false);
    expect((await rejected(takeLeases(s, ["x"]))).code).toBe("EUSAGE"); // no holder name
  });

  test("processes racing for overlapping sets: each name has one holder, each take all or nothing", async () => {
    const s = fresh();
    const sets = [["a", "b"], ["b", "c"], ["c", "d"], ["d", "a"], ["a", "c"], ["b", "d"]];
    const procs = sets.map((names, i) => worker(["take", s.root, `h${i}`, ...names]));
    const outs = (await Promise.all(procs.map((p) => new Response(p.stdout).text()))).map((o) => o.trim());
    const winners = sets.filter((_, i) => outs[i] === "took");
    expect(outs.every((o) => o === "took" || o === "held ECONFLICT")).toBe(true);
    const held = new Map((await listLeases(s)).map((l) => [l.name, l.holder]));
    for (const [i, names] of sets.entries()) {
      const mine = names.filter((n) => held.get(n) === `h${i}`);
      expect(mine.length).toBe(outs[i] === "took" ? names.length : 0);
    }
    expect(winners.length).toBeGreaterThan(0);
  });
});

describe("start exclusive", () => {
  test("refuses a running slot naming its holder; allowed when absent, published or expired", async () => {
    const s = fresh();
    await startSlot(s, "lead", "plan the work", { exclusive: true });
    const e = await rejected(startSlot(s, "lead", "me too", { exclusive: true }));
    expect([e.code, e.exitCode]).toEqual(["ECONFLICT", 4]);
    expect(e.message).toMatch(new RegExp(`slot lead is already running \\(started .* by pid ${process.pid} on .*task "plan the work"`));
    await startSlot(s, "short", "", { ttlSec: 0.05, exclusive: true });
    await Bun.sleep(100); // the condition is time itself: no event announces a TTL passing
    expect((await startSlot(s, "short", "", { exclusive: true })).version).toBe(2);
    expect((await startSlot(s, "lead", "takeover")).task).toBe("takeover"); // without exclusive: replaces
  });

  test("two processes starting one slot exclusively: exactly one wins", async () => {
    const s = fresh();
    const script = `import { openStore } from ${JSON.stringify(join(import.meta.dir, "..", "..", "lib", "engine", "open.ts"))};
import { startSlot } from ${JSON.stringify(join(import.meta.dir, "..", "..", "lib", "slots", "slot.ts"))};
const s = openStore({ dir: process.argv[1], env: {} });
try { await startSlot(s, "one", "x", { exclusive: true }); console.log("won"); } catch (e) { console.log(e.code); }`;
    const procs = Array.from({ length: 4 }, () => Bun.spawn({ cmd: ["bun", "-e", script, s.root], stdout: "pipe" }));
    const outs = (await Promise.all(procs.map((p) => new Response(p.stdout).text()))).map((o) => o.trim()).sort();
    expect(outs).toEqual(["ECONFLICT", "ECONFLICT", "ECONFLICT", "won"]);
  });
});

// Two bindfs views of one directory stand in for two NFS clients (notes/network-fs.md): the
// claim must be exclusive across them, through link(2), which is exclusive on both.
function fuseUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return "not running as root";
  if (!Bun.which("bindfs") || !Bun.which("fusermount3")) return "bindfs/fuse3 not installed";
  if (!existsSync("/dev/fuse")) return "/dev/fuse is missing";
  return undefined;
}
const noFuse = fuseUnavailable();
if (noFuse) console.warn(`tasks.test.ts: skipping the two-view test: ${noFuse}`);

describe.skipIf(!!noFuse)("two views of one directory (network filesystem stand-in)", () => {
  test("workers on both views drain 120 tasks: each claimed exactly once", async () => {
    const base = mkdtempSync(join(tmpdir(), "a2a-tasks-nfs-"));
    dirs.push(base);
    const back = join(base, "back"), va = join(base, "a"), vb = join(base, "b");
    for (const d of [back, va, vb]) mkdirSync(d);
    const mounted: string[] = [];
    try {
      for (const v of [va, vb]) {
        const m = Bun.spawnSync(["bindfs", "--no-allow-other", back, v], { stderr: "pipe" });
        expect(m.exitCode).toBe(0);
        mounted.push(v);
      }
      expect(Number(statfsSync(vb).type) >>> 0).toBe(0x65735546);
      const s = openStore({ dir: join(va, "store"), env: {} });
      stores.push(s);
      await addTasks(s, Array.from({ length: 120 }, (_, i) => ({ queue: "q", payload: `p${i}` })));
      const procs = [va, vb, va, vb].map((v, w) => worker(["drain", join(v, "store"), "q", `w${w}`]));
      const outs = await Promise.all(procs.map((p) => new Response(p.stdout).text()));
      const claims = outs.flatMap((o) => o.split("\n").filter((l) => l.startsWith("claimed ")).map((l) => l.split(" ")[1]));
      expect(claims.length).toBe(120);
      expect(new Set(claims).size).toBe(120);
      const sb = openStore({ dir: join(vb, "store"), env: {} });
      stores.push(sb);
      expect((await listTasks(sb, { queue: "q", state: "done" })).length).toBe(120);
    } finally {
      for (const v of mounted) if (Bun.spawnSync(["fusermount3", "-u", v]).exitCode !== 0) Bun.spawnSync(["fusermount3", "-uz", v]);
      for (const v of [va, vb]) {
        try {
          rmdirSync(v);
        } catch {
          // still busy: removed with the base directory later, or left in tmp
        }
      }
    }
  });
});
