// `a2a task` and `a2a lease` through the compiled binary: the lead/worker flow in sh (fan-out,
// a dependency, the --sh scripting form), replay, fencing (a stale token is refused with exit
// 4 and nothing changes), a worker killed with -9 whose task comes back after its lease,
// every bad input with the store unchanged, task wait (done / dead / timeout), leases
// all-or-nothing, start --exclusive, and claim --wait woken by an add and stopped by signals.
// Nothing sleeps for a condition: leases run out while a real `claim --wait` blocks on them.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { a2a, exitWithin, listens, ON_FILES, readUntil, spawnA2A, tempDir, testStore, until } from "../harness/run";
import { expectCleanError, sh, shellEnv, snapshot } from "./fixtures/core";

setDefaultTimeout(120_000); // generous: the machine is shared

const ok = async (args: string[], dir: string, env: Record<string, string> = {}) => {
  const r = await a2a(args, { dir, env });
  expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
  return r.stdout;
};
const js = async (args: string[], dir: string, env: Record<string, string> = {}) => JSON.parse(await ok([...args, "--json"], dir, env));

// The worker of the README: claim with --sh, do the work, done; ends when nothing is claimable.
const WORKER = `
while claim=$("$A2A" task claim build --as "$W" --sh); do
  eval "$claim"
  "$A2A" task done "$TASK_ID" "$TASK_TOKEN" "$TASK_PAYLOAD by $W (attempt $TASK_ATTEMPT)" >/dev/null || exit 9
done
`;

describe.concurrent("task: the lead/worker flow", () => {
  test("fan-out and a dependency: two shell workers, each task done once, the dependant last", async () => {
    using d = testStore();
    const a = (await ok(["task", "add", "build", "compile a"], d.path)).trim();
    const b = (await ok(["task", "add", "build", "compile b"], d.path)).trim();
    const c = (await ok(["task", "add", "build", "compile c"], d.path)).trim();
    const link = (await ok(["task", "add", "build", "link", "--after", `${a},${b}`, "--after", c], d.path)).trim();
    expect(a).toMatch(/^\d{16}-[0-9a-f]{8}$/);
    expect((await js(["task", "show", link], d.path)).state).toBe("blocked");
    // `a2a task claim` while link is blocked and the rest are taken exits 3: the loop's end.
    const workers = await Promise.all(["w1", "w2"].map((W) => sh(WORKER, d.path, { W })));
    for (const w of workers) expect(w).toMatchObject({ code: 0 });
    for (const w of workers) expect(w.stderr).toMatch(/^(a2a: nothing claimable in queue build[^\n]*\n)$/);
    const tasks = await js(["task", "list", "build"], d.path);
    expect(tasks.map((t: any) => [t.id, t.state, t.attempt])).toEqual([a, b, c, link].map((id) => [id, "done", 1]));
    expect(tasks[3].result).toMatch(/^link by w[12] \(attempt 1\)$/);
    // Each dependency was done before link was claimed (done is stamped at its version).
    const linkDone = tasks[3].updated_at;
    for (const t of tasks.slice(0, 3)) expect(t.updated_at).toBeLessThanOrEqual(linkDone);
    expect(await a2a(["task", "wait", link], { dir: d.path })).toEqual({ stdout: tasks[3].result, stderr: "", code: 0 });
    const several = await ok(["task", "wait", a, b], d.path);
    expect(several).toBe(`==> ${a} <==\n${tasks[0].result}\n\n==> ${b} <==\n${tasks[1].result}\n`);
  });

  test("the default form: payload on stdout, the handle on stderr; --json has the token", async () => {
    using d = testStore();
    const id = (await ok(["task", "add", "q", "it's $(not) run"], d.path)).trim();
    const r = await a2a(["task", "claim", "q", "--as", "w"], { dir: d.path });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("it's $(not) run");
    const m = /^claimed (\S+) attempt 1 token (1-[0-9a-f]{16}) until \S+: finish with a2a task done \1 \2 RESULT\n$/.exec(r.stderr);
    expect(m?.[1]).toBe(id);
    expect(await ok(["task", "done", id, m![2], "-"], d.path, {})).toBe(`done ${id} (attempt 1)\n`);
    expect((await js(["task", "show", id], d.path)).result).toBe("");
    // --sh values survive quotes and $(...) without running anything.
    await ok(["task", "add", "q", "a 'quoted' $(touch pwned) `x`"], d.path);
    const out = await sh(`eval "$("$A2A" task claim q --sh)"; printf %s "$TASK_PAYLOAD"; test ! -e pwned`, d.path);
    expect(out).toEqual({ stdout: "a 'quoted' $(touch pwned) `x`", stderr: "", code: 0 });
  });

  test("replay: the same --as and --key get the same claim and token back", async () => {
    using d = testStore();
    await ok(["task", "add", "q", "one"], d.path);
    await ok(["task", "add", "q", "two"], d.path);
    const first = await js(["task", "claim", "q", "--as", "w", "--key", "k1"], d.path);
    const again = await js(["task", "claim", "q", "--as", "w", "--key", "k1"], d.path);
    expect(first.replayed).toBe(false);
    expect(again).toMatchObject({ id: first.id, token: first.token, attempt: 1, replayed: true });
    const other = await js(["task", "claim", "q", "--as", "w", "--key", "k2"], d.path);
    expect(other.id).not.toBe(first.id);
    // An add retried with its key creates nothing twice.
    const k = await js(["task", "add", "q", "three", "--key", "job-3"], d.path);
    const k2 = await js(["task", "add", "q", "three", "--key", "job-3"], d.path);
    expect(k).toMatchObject({ created: true });
    expect(k2).toEqual({ ...k, created: false });
    expect((await js(["task", "list", "q"], d.path)).length).toBe(3);
  });
});

describe.concurrent("task: fencing and crashes", () => {
  test("a token whose lease ran out and was reassigned is refused with exit 4; nothing changes", async () => {
    using d = testStore();
    const id = (await ok(["task", "add", "q", "slow job"], d.path)).trim();
    const first = await js(["task", "claim", "q", "--as", "slow", "--lease", "1"], d.path);
    // A second worker blocks until the first lease runs out, then gets attempt 2.
    const second = await js(["task", "claim", "q", "--as", "fast", "--wait", "--timeout", "60"], d.path);
    expect(second).toMatchObject({ id, attempt: 2, assignee: "fast" });
    expect(second.token).not.toBe(first.token);
    const before = snapshot(d.path);
    for (const args of [["task", "done", id, first.token, "late"], ["task", "fail", id, first.token], ["task", "renew", id, first.token]]) {
      const r = await a2a(args, { dir: d.path });
      expectCleanError(r, 4, /the lease of attempt 1 ran out.*it is now attempt 2, held by fast.*Nothing was changed/);
    }
    expect(snapshot(d.path)).toEqual(before);
    await ok(["task", "done", id, second.token, "on time"], d.path);
    expectCleanError(await a2a(["task", "done", id, second.token, "twice"], { dir: d.path }), 4, /already finished it as done/);
    const t = await js(["task", "show", id], d.path);
    expect(t).toMatchObject({ state: "done", result: "on time", attempt: 2 });
    expect(t.attempts).toEqual([expect.objectContaining({ attempt: 1, assignee: "slow", outcome: "expired" })]);
  });

  test("kill -9 of a worker holding a claim: the task is claimable again after its lease", async () => {
    using d = testStore();
    const id = (await ok(["task", "add", "q", "crashy"], d.path)).trim();
    const worker = Bun.spawn({
      cmd: ["sh", "-c", `eval "$("$A2A" task claim q --as doomed --lease 2 --sh)" && echo "$TASK_ID" && exec sleep 600`],
      env: shellEnv(d.path), stdin: "ignore", stdout: "pipe", stderr: "pipe",
    });
    expect((await readUntil(worker.stdout, (t) => t.includes("\n"))).trim()).toBe(id);
    worker.kill(9);
    expect(await exitWithin(worker)).not.toBe(0);
    expect((await js(["task", "show", id], d.path))).toMatchObject({ state: "claimed", assignee: "doomed" });
    const next = await js(["task", "claim", "q", "--as", "heir", "--wait", "--timeout", "60"], d.path);
    expect(next).toMatchObject({ id, attempt: 2, assignee: "heir" });
    expect((await js(["task", "show", id], d.path)).attempts).toEqual([expect.objectContaining({ attempt: 1, assignee: "doomed", outcome: "expired" })]);
  });

  test("kill -9 of a claimer blocked in --wait claims nothing: the next add goes to a live claimer", async () => {
    using d = testStore();
    await ok(["task", "add", "q", "seed"], d.path);
    await js(["task", "claim", "q"], d.path); // the queue exists, nothing claimable now
    const doomed = spawnA2A(["task", "claim", "q", "--wait", "--as", "doomed"], { dir: d.path });
    await until(() => listens(doomed.pid), 20_000, "the doomed claimer's watch");
    doomed.kill(9);
    await exitWithin(doomed);
    const id = (await ok(["task", "add", "q", "after the crash"], d.path)).trim();
    expect(await js(["task", "claim", "q", "--as", "alive"], d.path)).toMatchObject({ id, attempt: 1, assignee: "alive" });
  });
});

describe.concurrent("task claim --wait", () => {
  test("a blocked claimer is woken by an add; --timeout exits 124; SIGTERM exits 143", async () => {
    using d = testStore();
    const waiter = spawnA2A(["task", "claim", "q", "--wait", "--sh"], { dir: d.path });
    await until(() => listens(waiter.pid), 20_000, "the claimer's watch");
    const id = (await ok(["task", "add", "q", "wake up"], d.path)).trim();
    const out = await new Response(waiter.stdout).text();
    expect(await waiter.exited).toBe(0);
    expect(out).toContain(`TASK_ID='${id}'\n`);
    expect(out).toContain("TASK_PAYLOAD='wake up'\n");

    const t = await a2a(["task", "claim", "q", "--wait", "--timeout", "0.3"], { dir: d.path });
    expectCleanError(t, 124, /nothing became claimable in queue q in time: raise --timeout/);

    const stopped = spawnA2A(["task", "claim", "q", "--wait"], { dir: d.path });
    await until(() => listens(stopped.pid), 20_000, "the claimer's watch");
    stopped.kill("SIGTERM");
    expect(await exitWithin(stopped)).toBe(143);
    expect((await js(["task", "list", "q", "--state", "ready"], d.path))).toEqual([]);
  });
});

describe.concurrent("task wait", () => {
  test("done prints the raw result; dead exits 1 with the reason; --timeout exits 124", async () => {
    using d = testStore();
    const id = (await ok(["task", "add", "q", "work"], d.path)).trim();
    const waiter = spawnA2A(["task", "wait", id], { dir: d.path });
    await until(() => listens(waiter.pid), 20_000, "the waiter's watch");
    const c = await js(["task", "claim", "q"], d.path);
    await ok(["task", "done", id, c.token, "line 1\nline 2\n"], d.path);
    expect(await new Response(waiter.stdout).text()).toBe("line 1\nline 2\n");
    expect(await waiter.exited).toBe(0);

    const doomed = (await ok(["task", "add", "q", "doomed", "--max-attempts", "1"], d.path)).trim();
    const dependant = (await ok(["task", "add", "q", "after doomed", "--after", doomed], d.path)).trim();
    const deadWaiter = spawnA2A(["task", "wait", dependant, "--json"], { dir: d.path });
    await until(() => listens(deadWaiter.pid), 20_000, "the waiter's watch");
    const c2 = await js(["task", "claim", "q"], d.path);
    expect(c2.id).toBe(doomed);
    await ok(["task", "fail", doomed, c2.token, "--reason", "disk on fire"], d.path);
    const [stdout, stderr, code] = await Promise.all([new Response(deadWaiter.stdout).text(), new Response(deadWaiter.stderr).text(), deadWaiter.exited]);
    expect(code).toBe(1);
    // Under --json the error is JSON on stderr too.
    expect(JSON.parse(stderr).error).toMatchObject({ code: "EFAILED", exit: 1, message: `task ${dependant} is dead: dependency ${doomed} is dead: 1 attempt failed; the last: disk on fire; see a2a task show ${dependant}, or it comes back when ${doomed} does: a2a task retry ${doomed}` });
    expect(JSON.parse(stdout)).toMatchObject({ id: dependant, state: "dead", retry_id: doomed });
    expectCleanError(await a2a(["task", "wait", doomed], { dir: d.path }), 1, new RegExp(`is dead: 1 attempt failed; the last: disk on fire; see a2a task show ${doomed}, or put it back with a2a task retry ${doomed}\n`));

    // A dead letter goes back with retry; its dependant is blocked again.
    expect((await js(["task", "list", "q", "--state", "dead"], d.path)).map((t: any) => t.id)).toEqual([doomed, dependant]);
    await ok(["task", "retry", doomed], d.path);
    expect((await js(["task", "show", dependant], d.path)).state).toBe("blocked");
    // The list counts the attempts of the round the retry began, not every attempt there was.
    const row = (await ok(["task", "list", "q"], d.path)).split("\n").find((l) => l.startsWith(doomed))!;
    expect(row.split(/\s+/).slice(2, 4)).toEqual(["ready", "0/1"]);
    expectCleanError(await a2a(["task", "wait", dependant, "--timeout", "0.3"], { dir: d.path }), 124, /timed out waiting for task/);
  });
});

describe.concurrent("bad input: the documented exit code, one line, the store unchanged", () => {
  test("unknown queue or id 3, malformed token 2, oversize payload 2, unknown --after 2, wrong state 4", async () => {
    using d = testStore();
    const env = { A2A_MAX_BYTES: "100" };
    const id = (await ok(["task", "add", "q", "x"], d.path, env)).trim();
    const c = await js(["task", "claim", "q"], d.path, env);
    const doneId = (await ok(["task", "add", "q", "y"], d.path, env)).trim();
    const c2 = await js(["task", "claim", "q"], d.path, env);
    await ok(["task", "done", doneId, c2.token], d.path, env);
    await ok(["lease", "take", "schema", "--as", "alice"], d.path, env);
    const ghost = "1796000000000000-deadbeef";
    const big = "z".repeat(101);
    const cases: [string[], number, RegExp, string?][] = [
      [["task", "claim", "nosuch"], 3, /no queue nosuch in this store/],
      [["task", "list", "nosuch"], 3, /no queue nosuch/],
      [["task", "show", ghost], 3, /no task 1796000000000000-deadbeef/],
      [["task", "done", ghost, "1-0123456789abcdef"], 3, /no task/],
      [["task", "wait", ghost], 3, /no task/],
      [["task", "retry", ghost], 3, /no task/],
      [["task", "show", "not-an-id"], 2, /invalid task id/],
      [["task", "done", id, "not-a-token"], 2, /invalid claim token "not-a-token"/],
      [["task", "renew", id, "1-XYZ"], 2, /invalid claim token/],
      [["task", "done", id, "7-0123456789abcdef"], 4, /never handed out/],
      [["task", "done", id, c.token, big], 2, /the result is 101 bytes, over the 100-byte limit/],
      [["task", "add", "q", big], 2, /over the 100-byte limit/],
      [["task", "add", "q"], 2, /over the 100-byte limit/, big],
      [["task", "add", "q", "p", "--after", ghost], 2, /unknown dependency 1796000000000000-deadbeef: no such task.*--after; nothing was added/],
      [["task", "add", "q", "p", "--after", "garbage"], 2, /unknown dependency "garbage": --after takes task ids/],
      [["task", "add", "bad/queue", "p"], 2, /queue name/],
      [["task", "add", "q", "p", "--max-attempts", "0"], 2, /max attempts 0/],
      [["task", "add", "q", "p", "--ttl", "soon"], 2, /--ttl "soon" is not a duration/],
      [["task", "claim", "q", "--timeout", "5"], 2, /--timeout applies to --wait only/],
      [["task", "claim", "q"], 3, /nothing claimable in queue q \(1 claimed, 0 blocked\)/],
      [["task", "list", "--state", "bogus"], 2, /unknown task state "bogus"/],
      [["task", "retry", id], 4, /cannot retry task .*: it is claimed; only a dead task can be retried/],
      [["task", "cancel", doneId], 4, /it is already done/],
      [["task", "bogus"], 2, /unknown command 'bogus'/],
      [["lease", "take", "schema", "api", "--as", "bob"], 4, /cannot lease as bob: held: schema by alice until \S+; nothing was taken/],
      [["lease", "release", "schema", "--as", "bob"], 4, /bob does not hold the lease on schema: it is held by alice/],
      [["lease", "renew", "api", "--as", "bob"], 4, /bob does not hold the lease on api: it is free/],
      [["start", "x", "--exclusive", "--ttl", "nope"], 2, /--ttl "nope"/],
      // Durations run from 1 ms (records keep time to the millisecond) to 10 years; each side says which.
      [["task", "add", "q", "p", "--ttl", "0.0001ms"], 2, /a TTL of 1e-7 s is under 1 ms, the shortest a2a keeps: give at least --ttl 1ms/],
      [["task", "add", "q", "p", "--ttl", "99999999d"], 2, /a TTL of 8639999913600 s is over the 10-year maximum: give a shorter one/],
      [["task", "claim", "q", "--lease", "0.5ms"], 2, /a lease of 0.0005 s is under 1 ms/],
      [["lease", "take", "n", "--as", "a", "--ttl", "3651d"], 2, /over the 10-year maximum/],
      [["start", "x", "--ttl", "0.0001ms"], 2, /a TTL of 1e-7 s is under 1 ms/],
      [["publish", "x", "r", "--ttl", "99999999d"], 2, /over the 10-year maximum/],
    ];
    const before = snapshot(d.path);
    for (const [args, code, re, stdin] of cases) {
      const r = await a2a(args, { dir: d.path, env, stdin });
      expect({ args, code: r.code }).toEqual({ args, code });
      expectCleanError(r, code, re);
      expect({ args, same: JSON.stringify(snapshot(d.path)) === JSON.stringify(before) }).toEqual({ args, same: true });
    }
  });
});

// A full disk, gc and damaged files are the file engine's (gc refuses a database store for now).
describe.if(ON_FILES)("task add on a full disk", () => {
  // A 1 MiB tmpfs (root only), filled to the last byte: directories and empty files can still
  // be made there, a task's version cannot.
  test("is refused with nothing made: no directory, no marker, no key record, no hint", async () => {
    using d = tempDir();
    const mnt = join(d.path, "mnt");
    mkdirSync(mnt);
    const m = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt], { stderr: "pipe" });
    if (m.exitCode !== 0) return console.warn(`skipped: mount -t tmpfs failed (${m.stderr.toString().trim()}): needs root`);
    try {
      const store = join(mnt, "store");
      const first = (await ok(["task", "add", "q", "first"], store)).trim();
      const fill = openSync(join(mnt, "filler"), "w");
      try {
        for (const block = Buffer.alloc(4096, 0x61); ; ) writeSync(fill, block);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
      } finally {
        closeSync(fill);
      }
      const before = snapshot(store);
      for (const args of [["q", "second"], ["fresh", "a new queue"], ["q", "keyed", "--key", "k1"], ["q", "after", "--after", first]]) {
        const r = await a2a(["task", "add", ...args], { dir: store });
        expectCleanError(r, 1, /the disk is full; free space, then retry \(nothing was changed\)/);
        expect({ args, same: JSON.stringify(snapshot(store)) === JSON.stringify(before) }).toEqual({ args, same: true });
      }
      rmSync(join(mnt, "filler"));
      const again = (await ok(["task", "add", "q", "keyed", "--key", "k1"], store)).trim();
      expect((await js(["task", "show", again], store)).payload).toBe("keyed");
    } finally {
      if (Bun.spawnSync(["umount", mnt]).exitCode !== 0) Bun.spawnSync(["umount", "-l", mnt]);
    }
  });
});

describe.concurrent("leases and exclusive starts", () => {
  test("lease take is all-or-nothing; --wait takes them once released", async () => {
    using d = testStore();
    expect(await ok(["lease", "take", "schema", "--as", "alice", "--ttl", "10m"], d.path)).toMatch(/^leased schema as alice until \S+\n$/);
    expectCleanError(await a2a(["lease", "take", "api", "schema", "--as", "bob"], { dir: d.path }), 4, /held: schema by alice/);
    expect((await js(["lease", "list"], d.path)).map((l: any) => [l.name, l.holder])).toEqual([["schema", "alice"]]);
    const bob = spawnA2A(["lease", "take", "api", "schema", "--as", "bob", "--wait", "--timeout", "60", "--json"], { dir: d.path });
    await until(() => listens(bob.pid), 20_000, "bob's watch");
    expect(await ok(["lease", "release", "schema", "--as", "alice"], d.path)).toBe("released schema\n");
    const got = JSON.parse(await new Response(bob.stdout).text());
    expect(await bob.exited).toBe(0);
    expect(got.map((l: any) => [l.name, l.holder])).toEqual([["api", "bob"], ["schema", "bob"]]);
    expect((await js(["lease", "list", "schema", "api"], d.path)).map((l: any) => l.holder)).toEqual(["bob", "bob"]);
    expect(await ok(["lease", "release", "api", "schema", "--as", "bob"], d.path)).toBe("released api, schema\n");
    expect(await ok(["lease", "list"], d.path)).toBe("no leases held\n");
  });

  test("start --exclusive refuses a running slot with exit 4 naming its holder, nothing changed", async () => {
    using d = testStore();
    expect(await ok(["start", "deploy", "rolling out", "--exclusive"], d.path)).toBe("started deploy (version 1)\n");
    const before = snapshot(d.path);
    const r = await a2a(["start", "deploy", "me too", "--exclusive"], { dir: d.path });
    expectCleanError(r, 4, /slot deploy is already running \(started \S+ by pid \d+ on \S+, task "rolling out", no expiry\)/);
    expect(snapshot(d.path)).toEqual(before);
    await ok(["publish", "deploy", "done"], d.path);
    expect(await ok(["start", "deploy", "next", "--exclusive"], d.path)).toBe("started deploy (version 3)\n");
    // Without --exclusive, start still replaces a running slot, as before.
    expect(await ok(["start", "deploy", "override"], d.path)).toBe("started deploy (version 4)\n");
  });
});

describe.concurrent("gc", () => {
  test("gc keeps recent tasks and leases (old final chains only are swept)", async () => {
    using d = testStore();
    const id = (await ok(["task", "add", "q", "x"], d.path)).trim();
    const c = await js(["task", "claim", "q"], d.path);
    await ok(["task", "done", id, c.token, "r"], d.path);
    await ok(["lease", "take", "n", "--as", "a"], d.path);
    await ok(["lease", "release", "n", "--as", "a"], d.path);
    expect(await js(["gc"], d.path)).toMatchObject({ tasks_removed: 0, leases_removed: 0 });
    expect((await js(["task", "show", id], d.path)).result).toBe("r");
  });
});

describe.concurrent.if(ON_FILES)("a damaged task or lease file", () => {
  const hook = (event: string, dir: string, extra: string[] = []) => a2a(["hook", event, ...extra], { dir, env: { A2A_AGENT: "w" }, stdin: "{}" });

  test("is skipped and named by every store-wide reader, which change nothing; task cancel repairs it", async () => {
    using d = tempDir();
    const a = (await ok(["task", "add", "q", "first"], d.path)).trim();
    const b = (await ok(["task", "add", "q", "second", "--after", a], d.path)).trim();
    const c = (await ok(["task", "add", "r", "third"], d.path)).trim();
    const file = join(d.path, "tasks", "q", a, "00000002.json");
    writeFileSync(file, "garbage\n");
    const warning = `a2a: warning: skipped 1 damaged task(s) or lease(s): ${file} is not JSON (a2a task cancel ${a} marks it dead)\n`;
    const tasks = snapshot(join(d.path, "tasks"));

    const list = await a2a(["task", "list", "--json"], { dir: d.path });
    expect({ code: list.code, stderr: list.stderr }).toEqual({ code: 0, stderr: warning });
    expect(JSON.parse(list.stdout).map((t: any) => [t.id, t.state])).toEqual([[b, "dead"], [c, "ready"]]);
    const dependant = await js(["task", "show", b], d.path);
    expect(dependant.reason).toBe(`dependency ${a} is dead: its record is damaged (${file} is not JSON)`);
    expect((await js(["task", "show", c], d.path)).state).toBe("ready");
    const damagedLine = new RegExp(`^a2a: task ${a} is damaged: ${file} is not JSON, not an a2a record; fix the file, or mark the task dead with a2a task cancel ${a}\\n$`);
    expectCleanError(await a2a(["task", "show", a], { dir: d.path }), 1, damagedLine);
    expectCleanError(await a2a(["task", "retry", a], { dir: d.path }), 1, damagedLine);
    // A wait on its dependant ends at once: it can never become done.
    expectCleanError(await a2a(["task", "wait", b, "--timeout", "60"], { dir: d.path }), 1, /is dead: dependency .* is dead: its record is damaged/);
    expectCleanError(await a2a(["task", "claim", "q"], { dir: d.path }), 3, new RegExp(`\\(0 claimed, 0 blocked, 1 damaged: ${file} is not JSON \\(a2a task cancel ${a} marks it dead\\)\\)`));
    // The hooks of every session still work: session-start sees the other queue's work; a
    // worker's stop is held only by the queues it serves (issue 33.5), and this one serves none.
    const start = await hook("session-start", d.path, []);
    expect({ code: start.code, stderr: start.stderr }).toEqual({ code: 0, stderr: "" });
    expect(start.stdout).toContain(`r (1 claimable, oldest ${c})`);
    expect(await hook("stop", d.path, ["--wait", "0.1s"])).toMatchObject({ code: 0, stderr: "", stdout: "" });
    const gc = await a2a(["gc", "--json"], { dir: d.path });
    expect({ code: gc.code, stderr: gc.stderr }).toEqual({ code: 0, stderr: warning });
    expect(JSON.parse(gc.stdout).damaged).toEqual([{ kind: "task", name: a, file, why: "not JSON" }]);
    expect(snapshot(join(d.path, "tasks"))).toEqual(tasks); // none of them wrote a thing

    // The repair: dead above the damaged version, from the last one that reads.
    expect(await ok(["task", "cancel", a], d.path)).toBe(`cancelled ${a}\n`);
    const fixed = await js(["task", "show", a], d.path);
    expect(fixed).toMatchObject({ state: "dead", version: 3, payload: "first", reason: `cancelled (its version ${file} was damaged: not JSON)` });
    expect(await js(["task", "list"], d.path)).toHaveLength(3);
    await ok(["task", "retry", a], d.path);
    expect((await js(["task", "show", b], d.path)).state).toBe("blocked");
  });

  test("a task done whose dependant is damaged lands, exit 0", async () => {
    using d = tempDir();
    const a = (await ok(["task", "add", "q", "first"], d.path)).trim();
    const b = (await ok(["task", "add", "q", "second", "--after", a], d.path)).trim();
    writeFileSync(join(d.path, "tasks", "q", b, "00000002.json"), "garbage\n");
    const c = await js(["task", "claim", "q"], d.path);
    expect(c.id).toBe(a);
    expect(await ok(["task", "done", a, c.token, "ok"], d.path)).toBe(`done ${a} (attempt 1)\n`);
    expect((await js(["task", "show", a], d.path)).state).toBe("done");
  });

  test("a damaged lease is skipped by list and gc, refused by take, and freed by a release", async () => {
    using d = tempDir();
    await ok(["lease", "take", "x", "--as", "me"], d.path);
    mkdirSync(join(d.path, "leases", "z"));
    const file = join(d.path, "leases", "z", "00000001.json");
    writeFileSync(file, "junk\n");
    const warning = `a2a: warning: skipped 1 damaged task(s) or lease(s): ${file} is not JSON (a2a lease release z --as NAME frees it)\n`;
    const list = await a2a(["lease", "list", "--json"], { dir: d.path });
    expect({ code: list.code, stderr: list.stderr }).toEqual({ code: 0, stderr: warning });
    expect(JSON.parse(list.stdout).map((l: any) => l.name)).toEqual(["x"]);
    const gc = await a2a(["gc"], { dir: d.path });
    expect({ code: gc.code, stderr: gc.stderr }).toEqual({ code: 0, stderr: warning });
    expectCleanError(await a2a(["lease", "take", "z", "--as", "me"], { dir: d.path }), 1, new RegExp(`the lease on z is damaged: ${file} is not JSON.*a2a lease release z --as NAME`));
    // Its holder cannot be read, so anyone may free it.
    expect(await ok(["lease", "release", "z", "--as", "other"], d.path)).toBe("released z\n");
    await ok(["lease", "take", "z", "--as", "me"], d.path);
    expect((await js(["lease", "list"], d.path)).map((l: any) => l.name)).toEqual(["x", "z"]);
  });
});
