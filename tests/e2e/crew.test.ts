// `a2a crew` through the compiled binary, with exec workers (issue 36): a crew drains a queue,
// each task done once with its stdout as the result; a failing command fails the attempt with
// its stderr's tail and the queue retries it; a self-finishing command; the time limit (the
// whole process group ends); the restarts bound; one supervisor per crew; kill -9 of the
// supervisor loses no task; Ctrl-C, crew stop and crew down leave no process, no claim and no
// lease; crew --json and crew logs; every bad crew file refused in one line, nothing written.
// Nothing sleeps for a condition: tests wait on the supervisor's lines, `task wait`, a process's
// exit or /proc, each with a generous bound.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { a2a, BIN, descendants, exitWithin, readUntil, spawnA2A, tempDir, testStore, until } from "../harness/run";
import { expectCleanError, snapshot } from "./fixtures/core";

setDefaultTimeout(120_000); // generous: the machine is shared

const ok = async (args: string[], dir: string) => {
  const r = await a2a(args, { dir });
  expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
  return r.stdout;
};
const js = async (args: string[], dir: string) => JSON.parse(await ok([...args, "--json"], dir));
const add = async (dir: string, payload: string, ...flags: string[]) => (await ok(["task", "add", "q", payload, ...flags], dir)).trim();

// A crew file in its own directory (the workers' cwd).
function crewFile(root: string, body: string, name = "crew.toml"): string {
  const f = join(root, name);
  writeFileSync(f, body);
  return f;
}

// `a2a crew up FILE`, with its stderr read as it comes: `until(pred)` resolves once the lines so
// far satisfy it.
function up(file: string, store: string) {
  const p = spawnA2A(["crew", "up", file], { dir: store, env: { A2A_HEARTBEAT_MS: "500", A2A_MAX_BYTES: "262144" } });
  let seen = "";
  const stderr = p.stderr as ReadableStream<Uint8Array>;
  return {
    p,
    get seen() {
      return seen;
    },
    async until(pred: (s: string) => boolean, what: string) {
      if (!pred(seen)) seen += await readUntil(stderr, (t) => pred(seen + t), 60_000);
      if (!pred(seen)) throw new Error(`crew up never said ${what}; it said:\n${seen}`);
    },
    // A test that failed before its supervisor ended leaves nothing running: its runs, then it.
    [Symbol.dispose]() {
      if (p.exitCode !== null || p.signalCode !== null) return;
      for (const pid of descendants(p.pid)) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // not a group leader, or gone
        }
      }
      p.kill("SIGKILL");
    },
  };
}

// The processes whose command line holds `marker` (a worker's, by a number no other test uses).
function procsWith(marker: string): number[] {
  const found: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").includes(marker)) found.push(Number(d));
    } catch {
      // gone
    }
  }
  return found;
}

// Whether `pid` is a process that runs (a zombie has ended: only its parent has yet to look).
function running(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1][0] !== "Z";
  } catch {
    return false;
  }
}

// Nothing the crew held is left: no claim, no lease, none of its workers on the bus.
async function nothingHeld(store: string, workers: string[]) {
  expect(await js(["task", "list", "--state", "claimed"], store)).toEqual([]);
  expect(await js(["lease", "list"], store)).toEqual([]);
  const peers = (await js(["peers"], store)).peers.map((p: any) => p.name);
  for (const w of workers) expect(peers).not.toContain(w);
}

describe.concurrent("crew: exec workers", () => {
  test("two workers drain six tasks, each done once with its stdout; crew --json, crew logs, crew down", async () => {
    using d = testStore();
    using w = tempDir();
    const ids = [];
    for (let i = 1; i <= 6; i++) ids.push(await add(d.path, `p${i}`));
    const file = crewFile(w.path, `
lease = "5s"
[[worker]]
name = "drain"
count = 2
queues = ["q"]
command = 'printf "%s by %s token=%s" "$(cat)" "$A2A_AGENT" "\${A2A_TASK_TOKEN:-none}"; echo "log of $A2A_TASK_ID" >&2'
`);
    using c = up(file, d.path);
    await ok(["task", "wait", ...ids], d.path);
    const tasks = await js(["task", "list", "q"], d.path);
    expect(tasks.map((t: any) => [t.state, t.attempt])).toEqual(ids.map(() => ["done", 1]));
    tasks.forEach((t: any, i: number) => expect(t.result).toMatch(new RegExp(`^p${i + 1} by drain-[12] token=none$`)));
    expect(new Set(tasks.map((t: any) => t.result.split(" ")[2])).size).toBe(2); // both worked
    // The crew as any terminal sees it; both wait for the next task.
    const crews = await js(["crew"], d.path);
    expect(crews).toMatchObject([{ crew: "crew", state: "up", pid: c.p.pid, workers: [{ name: "drain-1", agent: "exec" }, { name: "drain-2", agent: "exec" }] }]);
    expect(crews[0].workers.reduce((n: number, x: any) => n + x.done, 0)).toBe(6);
    const table = await ok(["crew"], d.path);
    expect(table).toMatch(new RegExp(`^crew crew: up, supervisor pid ${c.p.pid} on \\S+, \\S+/crew\\.toml\nWORKER +HOST +AGENT +STATE +SINCE +TASK +DONE +FAILED +LAST\ndrain-1 +\\S+ +exec +`));
    const worker = tasks[5].result.split(" ")[2];
    const logs = await a2a(["crew", "logs", worker], { dir: d.path });
    expect(logs.code).toBe(0);
    expect(logs.stdout).toMatch(/^-- task (\S+) attempt 1 \(queue q\)\np6 by drain-[12] token=nonelog of \1\n-- done: task \1\n$/);
    // crew down from another process: the supervisor ends, exit 0, nothing left.
    expect(await a2a(["crew", "down"], { dir: d.path })).toEqual({ code: 0, stdout: "crew crew is down\n", stderr: "" });
    expect(await exitWithin(c.p, 30_000)).toBe(0);
    await nothingHeld(d.path, ["drain-1", "drain-2"]);
    expect((await js(["crew"], d.path))[0]).toMatchObject({ state: "stopped", workers: [{ state: "stopped" }, { state: "stopped" }] });
  });

  test("a worker of several queues takes from each, and leaves no claim in the queues it did not take from", async () => {
    using d = testStore();
    using w = tempDir();
    const ids = [];
    for (const q of ["red", "blue", "red", "blue"]) ids.push((await ok(["task", "add", q, `${q} job`], d.path)).trim());
    const file = crewFile(w.path, `
[[worker]]
name = "both"
queues = ["red", "blue"]
command = 'printf "%s from %s" "$(cat)" "$A2A_TASK_QUEUE"'
`);
    using c = up(file, d.path);
    await ok(["task", "wait", ...ids], d.path);
    const done = [...(await js(["task", "list", "red"], d.path)), ...(await js(["task", "list", "blue"], d.path))];
    expect(done.map((t: any) => [t.state, t.attempt, t.result]).sort()).toEqual([
      ["done", 1, "blue job from blue"], ["done", 1, "blue job from blue"], ["done", 1, "red job from red"], ["done", 1, "red job from red"],
    ]);
    // A new task in either queue is taken at once (both waits are live again).
    const late = (await ok(["task", "add", "blue", "late"], d.path)).trim();
    expect(await ok(["task", "wait", late], d.path)).toBe("late from blue");
    c.p.kill("SIGINT");
    expect(await exitWithin(c.p, 30_000)).toBe(130);
    await nothingHeld(d.path, ["both"]);
  });

  test("a command that exits 1 fails the attempt with its stderr's tail, and the queue retries it", async () => {
    using d = testStore();
    using w = tempDir();
    const id = await add(d.path, "x");
    const file = crewFile(w.path, `
[[worker]]
name = "flaky"
queues = "q"
backoff = "10ms"
command = 'echo "boom on attempt $A2A_TASK_ATTEMPT" >&2; echo "half a result"; [ "$A2A_TASK_ATTEMPT" -ge 2 ] || exit 1; echo fine'
`);
    using c = up(file, d.path);
    expect(await ok(["task", "wait", id], d.path)).toBe("half a result\nfine\n");
    const t = await js(["task", "show", id], d.path);
    expect(t.attempt).toBe(2);
    expect(t.attempts).toMatchObject([{ attempt: 1, outcome: "failed", assignee: "flaky", reason: "exited with exit 1: boom on attempt 1" }]);
    c.p.kill("SIGINT");
    expect(await exitWithin(c.p, 30_000)).toBe(130);
  });

  test("a payload larger than a pipe goes in whole while the output comes out; stdout over the bus's limit fails the attempt, saying so", async () => {
    using d = testStore();
    using w = tempDir();
    const big = "y".repeat(200_000); // more than a pipe holds, both ways
    const added = await a2a(["task", "add", "q", "-"], { dir: d.path, stdin: big, pipeStdin: true });
    expect(added.code).toBe(0);
    const echoed = added.stdout.trim();
    const over = await add(d.path, "over", "--max-attempts", "1");
    const file = crewFile(w.path, `
[[worker]]
name = "bulk"
queues = ["q"]
backoff = "10ms"
command = 'if [ "$(head -c 4)" = over ]; then head -c 300000 /dev/zero | tr "\\0" x; else cat; fi'
`);
    using c = up(file, d.path);
    expect(await ok(["task", "wait", echoed], d.path)).toBe(big.slice(4)); // the rest after the 4 bytes it looked at
    expect((await a2a(["task", "wait", over], { dir: d.path })).code).toBe(1);
    expect((await js(["task", "show", over], d.path)).attempts[0].reason).toBe(`its output is over the bus's limit of 262144 bytes (A2A_MAX_BYTES): write less to stdout, or put the result in a file and print its name`);
    c.p.kill("SIGINT");
    expect(await exitWithin(c.p, 30_000)).toBe(130);
  });

  test("self_finish: the command ends the task itself; exiting without doing so fails the attempt", async () => {
    using d = testStore();
    using w = tempDir();
    const good = await add(d.path, "good");
    const bad = await add(d.path, "bad", "--max-attempts", "1");
    const file = crewFile(w.path, `
[[worker]]
name = "selfie"
queues = ["q"]
self_finish = true
backoff = "10ms"
command = 'p=$(cat); echo "working on $p"; [ "$p" = good ] && "${BIN}" task done "$A2A_TASK_ID" "$A2A_TASK_TOKEN" "finished $p by $A2A_AGENT" >/dev/null; exit 0'
`);
    using c = up(file, d.path);
    expect(await ok(["task", "wait", good], d.path)).toBe("finished good by selfie");
    const r = await a2a(["task", "wait", bad], { dir: d.path });
    expect(r.code).toBe(1);
    const t = await js(["task", "show", bad], d.path);
    expect(t.attempts[0].reason).toBe("exited 0 without ending the task (task done or fail): working on bad");
    c.p.kill("SIGTERM");
    expect(await exitWithin(c.p, 30_000)).toBe(143);
  });

  test("time limit: the run's whole process group is stopped and its attempt failed with the reason", async () => {
    using d = testStore();
    using w = tempDir();
    const id = await add(d.path, "long", "--max-attempts", "1");
    const file = crewFile(w.path, `
[[worker]]
name = "slow"
queues = ["q"]
time_limit = "1s"
command = 'sleep 971.5 & echo $! > pids; sleep 971.5 & echo $! >> pids; wait'
`);
    using c = up(file, d.path);
    const r = await a2a(["task", "wait", id], { dir: d.path });
    expect(r.code).toBe(1);
    expect((await js(["task", "show", id], d.path)).attempts[0]).toMatchObject({ outcome: "failed", reason: "time limit 1s reached" });
    // Both sleeps ran, and went with their group (the shell's background one too).
    const pids = readFileSync(join(w.path, "pids"), "utf8").trim().split("\n").map(Number);
    expect(pids.length).toBe(2);
    for (const pid of pids) expect(running(pid)).toBe(false);
    expect(procsWith("971.5")).toEqual([]);
    c.p.kill("SIGINT");
    expect(await exitWithin(c.p, 30_000)).toBe(130);
  });

  test("restarts: after that many failed attempts in a row the worker is stopped, and says why", async () => {
    using d = testStore();
    using w = tempDir();
    for (let i = 0; i < 3; i++) await add(d.path, `t${i}`, "--max-attempts", "5");
    const file = crewFile(w.path, `
[[worker]]
name = "doomed"
queues = ["q"]
restarts = 2
backoff = "10ms"
command = 'echo "no luck" >&2; exit 7'
`);
    using c = up(file, d.path);
    expect(await exitWithin(c.p, 60_000)).toBe(1);
    await c.until((s) => s.includes("doomed: gave up after 2 failed attempts in a row"), "that the worker gave up");
    const crews = await js(["crew"], d.path);
    expect(crews[0].workers).toMatchObject([{ name: "doomed", state: "gave-up", failed: 2, reason: "gave up after 2 failed attempts in a row (last: exited with exit 7: no luck)" }]);
    const failed = (await js(["task", "list", "q"], d.path)).reduce((n: number, t: any) => n + t.attempt, 0);
    expect(failed).toBe(2); // no attempt after the bound
    await nothingHeld(d.path, ["doomed"]);
  });

  test("one supervisor per crew: a second crew up is refused naming the first; Ctrl-C leaves no process, claim or lease", async () => {
    using d = testStore();
    using w = tempDir();
    const id = await add(d.path, "hold");
    const file = crewFile(w.path, `
lease = "3s"
[[worker]]
name = "sleeper"
queues = ["q"]
command = 'sleep 972.5 & sleep 972.5'
`, "solo.toml");
    using c = up(file, d.path);
    await until(() => procsWith("972.5").length === 2, 60_000, "the worker's sleeps");
    // Working, as any terminal sees it.
    expect((await js(["crew", "solo"], d.path))[0].workers[0]).toMatchObject({ name: "sleeper", state: "working", task: { id, attempt: 1 } });
    expect((await js(["peers"], d.path)).peers.find((p: any) => p.name === "sleeper")).toMatchObject({ state: "working", task: { queue: "q", id } });
    const second = await a2a(["crew", "up", file], { dir: d.path });
    expectCleanError(second, 4, new RegExp(`^a2a: crew solo is already up on this host \\(its supervisor, pid ${c.p.pid} on \\S+, holds crewhost\\.solo\\.\\S+ until \\S+\\): stop it with a2a crew down solo`));
    c.p.kill("SIGINT");
    expect(await exitWithin(c.p, 30_000)).toBe(130);
    expect(procsWith("972.5")).toEqual([]);
    await nothingHeld(d.path, ["sleeper"]);
    // Given back, not counted: the task is ready with no attempt used.
    expect(await js(["task", "show", id], d.path)).toMatchObject({ state: "ready", attempt: 0, attempts: [] });
  });

  test("crew stop NAME stops one worker (its task given back); crew down from another process stops the rest", async () => {
    using d = testStore();
    using w = tempDir();
    const a = await add(d.path, "a");
    const b = await add(d.path, "b");
    const file = crewFile(w.path, `
[[worker]]
name = "pair"
count = 2
queues = ["q"]
command = 'sleep 973.5'
`);
    using c = up(file, d.path);
    await until(() => procsWith("973.5").length === 2, 60_000, "both workers' sleeps");
    const follower = spawnA2A(["crew", "logs", "pair-2", "--follow"], { dir: d.path });
    expect(await a2a(["crew", "stop", "pair-2"], { dir: d.path })).toEqual({ code: 0, stdout: "stopped pair-2 (crew crew)\n", stderr: "" });
    await until(() => procsWith("973.5").length === 1, 30_000, "pair-2's sleep to end");
    // Its follower saw the task start and end, and ended with the worker.
    const [followed, code] = await Promise.all([new Response(follower.stdout).text(), exitWithin(follower, 30_000)]);
    expect({ followed, code }).toEqual({ followed: expect.stringMatching(/^-- task (\S+) attempt 1 \(queue q\)\n-- stopped: task \1 given back\n$/), code: 0 });
    const crew = (await js(["crew"], d.path))[0];
    expect(crew.workers.map((x: any) => x.state)).toEqual(["working", "stopped"]);
    expectCleanError(await a2a(["crew", "stop", "pair-2"], { dir: d.path }), 3, /^a2a: worker pair-2 of crew crew is not running \(stopped\): nothing to stop\n$/);
    expect((await js(["task", "list", "q", "--state", "claimed"], d.path)).map((t: any) => t.assignee)).toEqual(["pair-1"]);
    expect((await js(["task", "list", "q", "--state", "ready"], d.path)).map((t: any) => t.attempt)).toEqual([0]);
    const down = spawnA2A(["crew", "down", "crew", "--timeout", "60"], { dir: d.path });
    expect(await exitWithin(down, 60_000)).toBe(0);
    expect(await exitWithin(c.p, 30_000)).toBe(0);
    expect(procsWith("973.5")).toEqual([]);
    await nothingHeld(d.path, ["pair-1", "pair-2"]);
    expect((await js(["task", "list", "q"], d.path)).map((t: any) => [t.id, t.state, t.attempt])).toEqual([[a, "ready", 0], [b, "ready", 0]]);
    expectCleanError(await a2a(["crew", "down"], { dir: d.path }), 3, /^a2a: no crew is up: start one with a2a crew up FILE\n$/);
  });

  test("crew restart NAME ends the worker's run, gives its task back (no attempt used) and starts it again; a stopped worker is not restarted", async () => {
    using d = testStore();
    using w = tempDir();
    const id = await add(d.path, "again");
    const file = crewFile(w.path, `
[[worker]]
name = "again"
queues = ["q"]
command = 'exec sleep 982.5'
`);
    using c = up(file, d.path);
    await until(() => procsWith("982.5").length === 1, 60_000, "the worker's sleep");
    const [first] = procsWith("982.5");
    expect(await a2a(["crew", "restart", "again"], { dir: d.path })).toEqual({ code: 0, stdout: "restarted again (crew crew)\n", stderr: "" });
    await until(() => procsWith("982.5").length === 1 && !procsWith("982.5").includes(first), 30_000, "the run started again");
    await c.until((t) => t.includes("crew restart again"), "that it restarts");
    expect((await js(["crew"], d.path))[0].workers[0]).toMatchObject({ name: "again", state: "working", restarts: 1, failed: 0, task: { id, attempt: 1 } });
    expect(await js(["task", "show", id], d.path)).toMatchObject({ state: "claimed", attempt: 1, attempts: [] });
    expect((await a2a(["crew", "logs", "again"], { dir: d.path })).stdout).toMatch(new RegExp(`^-- task ${id} attempt 1 \\(queue q\\)\n`));
    expect(await a2a(["crew", "stop", "again"], { dir: d.path })).toMatchObject({ code: 0 });
    expect(await exitWithin(c.p, 30_000)).toBe(0); // its only worker stopped: the crew ends
    expectCleanError(await a2a(["crew", "restart", "again"], { dir: d.path }), 3, /^a2a: crew crew is not up: nothing to restart\n$/);
    expect(procsWith("982.5")).toEqual([]);
    await nothingHeld(d.path, ["again"]);
  });

  test("crew restart of a worker whose process has done its task already: the task is done once, counted done, its log says done, not given back", async () => {
    using d = testStore();
    using w = tempDir();
    const id = await add(d.path, "close");
    const file = crewFile(w.path, `
[[worker]]
name = "closer"
queues = ["q"]
self_finish = true
command = '"${BIN}" task done "$A2A_TASK_ID" "$A2A_TASK_TOKEN" closed >/dev/null; exec sleep 982.7'
`);
    using c = up(file, d.path);
    expect(await ok(["task", "wait", id], d.path)).toBe("closed");
    await until(() => procsWith("982.7").length === 1, 60_000, "the process lingering after its done");
    expect(await a2a(["crew", "restart", "closer"], { dir: d.path })).toEqual({ code: 0, stdout: "restarted closer (crew crew)\n", stderr: "" });
    expect((await js(["crew"], d.path))[0].workers[0]).toMatchObject({ name: "closer", done: 1, failed: 0, restarts: 1 });
    expect(await js(["task", "show", id], d.path)).toMatchObject({ state: "done", attempt: 1, result: "closed" });
    const log = (await a2a(["crew", "logs", "closer"], { dir: d.path })).stdout;
    expect(log).not.toContain("given back");
    expect(log).toContain(`done: task ${id}`);
    c.p.kill("SIGINT");
    expect(await exitWithin(c.p, 30_000)).toBe(130);
    await nothingHeld(d.path, ["closer"]);
  });

  test("crew restart of a worker in backoff cuts the backoff short: it claims again at once", async () => {
    using d = testStore();
    using w = tempDir();
    const id = await add(d.path, "x", "--max-attempts", "5");
    const file = crewFile(w.path, `
[[worker]]
name = "stubborn"
queues = ["q"]
command = 'echo no >&2; exit 1'
backoff = "10m"
restarts = 5
`);
    using c = up(file, d.path);
    await c.until((t) => t.includes(`stubborn: task ${id} attempt 1 failed: `), "the first failure");
    expect(await a2a(["crew", "restart", "stubborn"], { dir: d.path })).toEqual({ code: 0, stdout: "restarted stubborn (crew crew)\n", stderr: "" });
    await c.until((t) => t.includes(`stubborn: task ${id} attempt 2 failed: `), "the second attempt, without the 10 minutes");
    c.p.kill("SIGINT");
    expect(await exitWithin(c.p, 30_000)).toBe(130);
    await nothingHeld(d.path, ["stubborn"]);
  });

  test("kill -9 of the supervisor loses no task: once its lease runs out, the next crew up finishes them", async () => {
    using d = testStore();
    using w = tempDir();
    const ids = [await add(d.path, "one"), await add(d.path, "two")];
    const go = join(w.path, "go");
    const file = crewFile(w.path, `
lease = "2s"
[[worker]]
name = "phoenix"
queues = ["q"]
command = 'if [ -e "${go}" ]; then cat; else exec sleep 974.5; fi'
`);
    using first = up(file, d.path);
    await first.until((t) => / phoenix: task \S+ attempt 1, pid \d+\n/.test(t), "the first attempt's pid");
    const run = Number(/ phoenix: task \S+ attempt 1, pid (\d+)\n/.exec(first.seen)![1]);
    await until(() => procsWith("974.5").includes(run), 30_000, "the run to be the sleep"); // exec: the run's process itself
    first.p.kill("SIGKILL");
    await first.p.exited;
    expect((await js(["crew"], d.path))[0]).toMatchObject({ state: "gone", workers: [{ name: "phoenix", state: "gone", proc: { pid: run } }] });
    expectCleanError(await a2a(["crew", "down"], { dir: d.path }), 3, /^a2a: no crew is up: start one with a2a crew up FILE\n$/);
    expect(procsWith("974.5")).toEqual([run]); // a kill -9 stops nothing else
    writeFileSync(go, "");
    // The dead supervisor's lease runs out (a wait on it, not a sleep), then a new one takes
    // over: it ends the run the dead one left (on this host), and finishes both tasks.
    const lease = `crewhost.crew.${hostname().replace(/[^A-Za-z0-9._-]/g, "-")}`;
    await ok(["lease", "take", lease, "--as", "probe", "--wait", "--timeout", "60"], d.path);
    await ok(["lease", "release", lease, "--as", "probe"], d.path);
    using second = up(file, d.path);
    await second.until((t) => t.includes(`ended the run of phoenix (pid ${run}) that supervisor pid ${first.p.pid} left`), "that it ended the old run");
    await until(() => procsWith("974.5").length === 0, 10_000, "the old run to end");
    expect(await ok(["task", "wait", ...ids], d.path)).toBe(`==> ${ids[0]} <==\none\n\n==> ${ids[1]} <==\ntwo\n`);
    const first_ = await js(["task", "show", ids[0]], d.path);
    expect(first_).toMatchObject({ state: "done", attempt: 2, attempts: [{ attempt: 1, outcome: "expired", assignee: "phoenix" }] });
    second.p.kill("SIGINT");
    expect(await exitWithin(second.p, 30_000)).toBe(130);
    await nothingHeld(d.path, ["phoenix"]);
  });
});

describe.concurrent("crew: bad crew files", () => {
  const cases: [string, string, RegExp, Record<string, string>?][] = [
    ["unknown top-level key", 'nmae = "x"\n[[worker]]\nname = "w"\nqueues = ["q"]\ncommand = "true"\n', /^a2a: \S+crew\.toml:1: unknown key nmae: the keys of a crew file are name, lease, worker/],
    ["unknown worker key", '[[worker]]\nname = "w"\nqueues = ["q"]\ncomand = "true"\n', /^a2a: \S+crew\.toml:4: unknown key comand in worker w: a worker's keys are /],
    ["keep_session for an exec worker", '[[worker]]\nname = "w"\nqueues = ["q"]\ncommand = "cat"\nkeep_session = true\n', /^a2a: \S+crew\.toml:5: keep_session in worker w applies to agent workers, not exec: take it out\n$/],
    ["unknown agent", '[[worker]]\nname = "w"\nagent = "gpt"\nqueues = ["q"]\n', /^a2a: \S+crew\.toml:3: unknown agent "gpt" in worker w: use one of exec, claude, codex, gemini, opencode, copilot, qwen\n$/],
    ["agent not installed", '[[worker]]\nname = "w"\nagent = "claude"\nqueues = ["q"]\n', /^a2a: \S+crew\.toml:3: claude \(the agent of worker w\) is not installed: no claude on PATH; install it, or use another agent\n$/, { PATH: "/nonexistent" }],
    ["Qwen Code not installed", '[[worker]]\nname = "w"\nagent = "qwen"\nqueues = ["q"]\n', /^a2a: \S+crew\.toml:3: qwen \(the agent of worker w\) is not installed: no qwen on PATH; install it, or use another agent\n$/, { PATH: "/nonexistent" }],
    ["Copilot CLI not installed", '[[worker]]\nname = "w"\nagent = "copilot"\nqueues = ["q"]\n', /^a2a: \S+crew\.toml:3: copilot \(the agent of worker w\) is not installed: no copilot on PATH; install it, or use another agent\n$/, { PATH: "/nonexistent" }],
    ["command not installed", '[[worker]]\nname = "w"\nqueues = ["q"]\ncommand = ["no-such-program-36"]\n', /^a2a: \S+crew\.toml:4: no-such-program-36 \(the command of worker w\) is not an executable program here/],
    ["invalid queue name", '[[worker]]\nname = "w"\nqueues = ["bad queue"]\ncommand = "true"\n', /^a2a: \S+crew\.toml:3: invalid queue name "bad queue" in worker w: names are 1-128 characters/],
    ["invalid worker name", '[[worker]]\nname = "../w"\nqueues = ["q"]\ncommand = "true"\n', /^a2a: \S+crew\.toml:2: invalid worker name "..\/w": names are/],
    ["duplicate names", '[[worker]]\nname = "w"\ncount = 2\nqueues = ["q"]\ncommand = "true"\n[[worker]]\nname = "w-2"\nqueues = ["q"]\ncommand = "true"\n', /^a2a: \S+crew\.toml:7: two workers are named w-2 \(workers 1 and 2\): give each a name of its own\n$/],
    ["bad duration", '[[worker]]\nname = "w"\nqueues = ["q"]\ncommand = "true"\ntime_limit = "soon"\n', /^a2a: \S+crew\.toml:5: time_limit in worker w "soon" is not a duration: use e\.g\. "90s", "30m", "2h" \(or "none"\)\n$/],
    ["cwd not a directory", '[[worker]]\nname = "w"\nqueues = ["q"]\ncommand = "true"\ncwd = "nope"\n', /^a2a: \S+crew\.toml:5: cwd \S+\/nope of worker w is not a directory: make it, or fix the path/],
    ["no workers", 'name = "x"\n', /^a2a: \S+crew\.toml: no workers: add a \[\[worker\]\] table with name, queues and command\n$/],
    ["not TOML", '[[worker]\nname = \n', /^a2a: \S+crew\.toml: not valid TOML \(.*\): fix the file's syntax\n$/],
    ["exec without a command", '[[worker]]\nname = "w"\nqueues = ["q"]\n', /^a2a: \S+crew\.toml:1: worker w \(exec\) has no command: add command = /],
  ];
  for (const [what, body, message, env] of cases) {
    test(`${what}: one line, exit 2, nothing started or written`, async () => {
      using d = testStore();
      using w = tempDir();
      await add(d.path, "x");
      const before = snapshot(d.path);
      const file = crewFile(w.path, body);
      const r = await a2a(["crew", "up", file], { dir: d.path, env });
      expectCleanError(r, 2, message);
      expect(snapshot(d.path)).toEqual(before);
    });
  }

  test("a coding agent's worker whose worktree cannot be made: outside a git repository, or its path held by the user: one line, exit 2, nothing written or started", async () => {
    using d = testStore();
    using w = tempDir();
    const bin = join(w.path, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "claude"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    await add(d.path, "x");
    const before = snapshot(d.path);
    const body = '[[worker]]\nname = "w"\nagent = "claude"\nqueues = ["q"]\nprompt = "do {payload}"\n';
    const env = { PATH: `${bin}:${process.env.PATH}` };
    const outside = crewFile(w.path, body);
    expectCleanError(await a2a(["crew", "up", outside], { dir: d.path, env }), 2, /^a2a: \S+ is not in a git repository, so a worker cannot have a worktree there: run the crew in one, or turn the worker's worktree off\n$/);
    const repo = join(w.path, "app");
    mkdirSync(repo);
    expect(Bun.spawnSync(["git", "init", "-q", repo]).exitCode).toBe(0);
    mkdirSync(join(w.path, "app.crew", "w"), { recursive: true });
    writeFileSync(join(w.path, "app.crew", "w", "mine.txt"), "the user's\n");
    const held = crewFile(repo, body);
    expectCleanError(await a2a(["crew", "up", held], { dir: d.path, env }), 2, /^a2a: \S+app\.crew\/w exists and is not an a2a crew worktree: move it aside, or give the crew another worktree directory; nothing was changed\n$/);
    expect(readFileSync(join(w.path, "app.crew", "w", "mine.txt"), "utf8")).toBe("the user's\n");
    expect(snapshot(d.path)).toEqual(before);
  });

  test("a crew file that is not there", async () => {
    using d = testStore();
    const r = await a2a(["crew", "up", "/nonexistent/crew.toml"], { dir: d.path });
    expectCleanError(r, 2, /^a2a: cannot read crew file \/nonexistent\/crew\.toml: no such file; give the path of a crew file/);
  });
});
