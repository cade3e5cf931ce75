// A crew across machines (issue 36), through the compiled binary: each machine runs its own
// supervisor for its own workers (one lease and one status a crew and host), `a2a crew` shows
// every host's workers with their host, `crew down` reaches every host's supervisor (or one,
// with --host), `crew stop` the one running the worker; a second `crew up` on the same host is
// refused, and so is a worker name another machine already runs. "Machines" here are processes
// in UTS namespaces of their own (`unshare -u`, each with its hostname): a2a knows its host by
// the kernel's hostname only, so that is all a second machine changes for it; on PostgreSQL the
// suite runs the same with A2A_TEST_STORE. Nothing sleeps for a condition.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, descendants, exitWithin, readUntil, spawnA2A, tempDir, testStore, until } from "../harness/run";
import { expectCleanError } from "./fixtures/core";

setDefaultTimeout(120_000);

const canUnshare = process.getuid?.() === 0 && Bun.which("unshare") !== null;
// Runs a command as if on machine `host`.
const on = (host: string) => ["unshare", "-u", "sh", "-c", 'hostname "$0" && exec "$@"', host];

const ok = async (args: string[], dir: string, host?: string) => {
  const r = await a2a(args, { dir, prefix: host ? on(host) : undefined });
  expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
  return r.stdout;
};
const js = async (args: string[], dir: string) => JSON.parse(await ok([...args, "--json"], dir));

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

// ...or in a container of its own named `host`: a pid namespace too, where a2a is pid 1.
const inContainer = (host: string) => ["unshare", "-u", "-p", "-f", "sh", "-c", 'hostname "$0" && exec "$@"', host];

// `a2a crew up FILE` on machine `host`, its stderr read as it comes.
function up(file: string, store: string, host: string, prefix = on(host)) {
  const p = spawnA2A(["crew", "up", file], { dir: store, prefix, env: { A2A_HEARTBEAT_MS: "500" } });
  let seen = "";
  const stderr = p.stderr as ReadableStream<Uint8Array>;
  return {
    p,
    async until(pred: (s: string) => boolean, what: string) {
      if (!pred(seen)) seen += await readUntil(stderr, (t) => pred(seen + t), 60_000);
      if (!pred(seen)) throw new Error(`crew up on ${host} never said ${what}; it said:\n${seen}`);
    },
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

async function nothingHeld(store: string, workers: string[]) {
  expect(await js(["task", "list", "--state", "claimed"], store)).toEqual([]);
  expect(await js(["lease", "list"], store)).toEqual([]);
  const peers = (await js(["peers"], store)).peers.map((p: any) => p.name);
  for (const w of workers) expect(peers).not.toContain(w);
}

const file = (dir: string, name: string, worker: string, marker: string) => {
  const f = join(dir, name);
  writeFileSync(f, `name = "duo"\nlease = "5s"\n[[worker]]\nname = "${worker}"\nqueues = ["q"]\ncommand = 'sleep ${marker}'\n`);
  return f;
};

describe.skipIf(!canUnshare)("crew across machines: one supervisor per crew and host", () => {
  test("two hosts run their own workers of one crew; crew lists both with HOST; a second up on a host and a worker name taken elsewhere are refused; down --host, stop and down reach the right supervisors", async () => {
    using d = testStore();
    using w = tempDir();
    for (const p of ["a", "b"]) await ok(["task", "add", "q", p], d.path);
    const fa = file(w.path, "a.toml", "wa", "978.5");
    const fb = file(w.path, "b.toml", "wb", "978.6");
    using a = up(fa, d.path, "host-a");
    await a.until((t) => t.includes("crew duo up: wa"), "it is up");
    using b = up(fb, d.path, "host-b");
    await b.until((t) => t.includes("crew duo up: wb"), "it is up");
    await until(() => procsWith("978.5").length === 1 && procsWith("978.6").length === 1, 60_000, "each host's worker at work");

    // Every host's supervisor and workers, from any machine.
    const crews = await js(["crew"], d.path);
    expect(crews.map((c: any) => [c.crew, c.host, c.state, c.pid, c.workers.map((x: any) => [x.name, x.state])])).toEqual([
      ["duo", "host-a", "up", a.p.pid, [["wa", "working"]]],
      ["duo", "host-b", "up", b.p.pid, [["wb", "working"]]],
    ]);
    const table = await ok(["crew", "duo"], d.path, "host-c");
    expect(table).toMatch(new RegExp(`^crew duo: up, supervisor pid ${a.p.pid} on host-a, \\S+\ncrew duo: up, supervisor pid ${b.p.pid} on host-b, \\S+\nWORKER +HOST +AGENT +STATE .*\nwa +host-a +exec +working .*\nwb +host-b +exec +working `));

    // The same crew again on host-b: refused, naming this host's supervisor; a worker name that
    // host-a runs, from host-c: refused, naming where it runs. Nothing started by either.
    expectCleanError(await a2a(["crew", "up", fb], { dir: d.path, prefix: on("host-b") }), 4, new RegExp(`^a2a: crew duo is already up on this host \\(its supervisor, pid ${b.p.pid} on host-b, holds crewhost\\.duo\\.host-b until \\S+\\): stop it with a2a crew down duo`));
    expectCleanError(await a2a(["crew", "up", fa], { dir: d.path, prefix: on("host-c") }), 4, new RegExp(`^a2a: worker wa already runs under crew duo on host-a \\(supervisor pid ${a.p.pid}\\): a worker's name is one session on the bus, so each machine's workers need names of their own`));
    expect((await js(["crew"], d.path)).map((c: any) => c.host)).toEqual(["host-a", "host-b"]);

    // crew stop reaches the supervisor running the worker (host-b's: its only worker, so it ends).
    expect(await ok(["crew", "stop", "wb"], d.path, "host-a")).toBe("stopped wb (crew duo)\n");
    expect(await exitWithin(b.p, 30_000)).toBe(0);
    expect(procsWith("978.6")).toEqual([]);

    // down --host: that host's supervisor only; the other goes on.
    using b2 = up(fb, d.path, "host-b");
    await b2.until((t) => t.includes("crew duo up: wb"), "it is up again");
    expect(await ok(["crew", "down", "duo", "--host", "host-b"], d.path, "host-a")).toBe("crew duo is down on host-b\n");
    expect(await exitWithin(b2.p, 30_000)).toBe(0);
    expect(procsWith("978.6")).toEqual([]);
    expect(procsWith("978.5").length).toBe(1);
    expect((await js(["crew"], d.path)).map((c: any) => [c.host, c.state])).toEqual([["host-a", "up"], ["host-b", "stopped"]]);
    expectCleanError(await a2a(["crew", "down", "duo", "--host", "host-b"], { dir: d.path }), 3, /^a2a: crew duo is not up on host-b: start it with a2a crew up FILE; a2a crew lists the crews\n$/);

    // crew down: every host's supervisor.
    using b3 = up(fb, d.path, "host-b");
    await b3.until((t) => t.includes("crew duo up: wb"), "it is up again");
    expect(await ok(["crew", "down"], d.path, "host-c")).toBe("crew duo is down (host-a, host-b)\n");
    expect(await exitWithin(a.p, 30_000)).toBe(0);
    expect(await exitWithin(b3.p, 30_000)).toBe(0);
    expect([...procsWith("978.5"), ...procsWith("978.6")]).toEqual([]);
    await nothingHeld(d.path, ["wa", "wb"]);
    expect((await js(["task", "list", "q"], d.path)).map((t: any) => [t.state, t.attempt])).toEqual([["ready", 0], ["ready", 0]]);
  });

  test("a machine's supervisor killed with -9: its worker's name is refused elsewhere while its leases hold, then another machine runs that worker", async () => {
    using d = testStore();
    using w = tempDir();
    await ok(["task", "add", "q", "p"], d.path);
    const f = join(w.path, "a.toml");
    writeFileSync(f, `name = "duo"\nlease = "2s"\n[[worker]]\nname = "wa"\nqueues = ["q"]\ncommand = 'if [ "$(hostname)" = host-c ]; then cat; else exec sleep 978.7; fi'\n`);
    using a = up(f, d.path, "host-a");
    await until(() => procsWith("978.7").length === 1, 60_000, "host-a's worker at work");
    a.p.kill("SIGKILL");
    await a.p.exited;
    const [left] = procsWith("978.7");
    process.kill(-left, "SIGKILL"); // what host-a's dying took with it (the next crew up there would)
    expectCleanError(await a2a(["crew", "up", f], { dir: d.path, prefix: on("host-c") }), 4, new RegExp(`^a2a: worker wa already runs under crew duo on host-a \\(supervisor pid ${a.p.pid}\\)`));
    // host-a's lease runs out (a wait on it, not a sleep); its worker's a moment after: host-c takes over.
    await ok(["lease", "take", "crewhost.duo.host-a", "--as", "probe", "--wait", "--timeout", "60"], d.path);
    await ok(["lease", "release", "crewhost.duo.host-a", "--as", "probe"], d.path);
    using c = up(f, d.path, "host-c");
    await c.until((t) => t.includes("crew duo up: wa"), "it is up");
    const [id] = (await js(["task", "list", "q"], d.path)).map((t: any) => t.id);
    expect(await ok(["task", "wait", id], d.path)).toBe("p");
    expect((await js(["crew"], d.path)).map((x: any) => [x.host, x.state])).toEqual([["host-a", "gone"], ["host-c", "up"]]);
    expect(await ok(["crew", "down"], d.path)).toBe("crew duo is down\n");
    expect(await exitWithin(c.p, 30_000)).toBe(0);
    await nothingHeld(d.path, ["wa"]);
  });

  test("two containers of one hostname, each supervisor pid 1: the second crew up is refused as on the same host, and the first one's leases stay its own", async () => {
    using d = testStore();
    using w = tempDir();
    const f = file(w.path, "a.toml", "wa", "978.8");
    using a = up(f, d.path, "box", inContainer("box"));
    await a.until((t) => t.includes("crew duo up: wa (pid 1 on box)"), "it is up");
    const second = await a2a(["crew", "up", f], { dir: d.path, prefix: inContainer("box") });
    expectCleanError(second, 4, /^a2a: crew duo is already up on this host \(its supervisor, pid 1 on box, holds crewhost\.duo\.box until \S+\): stop it with a2a crew down duo/);
    expect((await js(["lease", "list"], d.path)).map((l: any) => l.name).sort()).toEqual(["crewhost.duo.box", "crewworker.wa"]);
    expect(await ok(["crew", "down"], d.path)).toBe("crew duo is down\n");
    expect(await exitWithin(a.p, 30_000)).toBe(0);
    await nothingHeld(d.path, ["wa"]);
  });

  test("two hosts whose names are one once cut to fit the crew's lease name (64 characters, a 60-character crew) each run their part: neither is taken for the other", async () => {
    using d = testStore();
    using w = tempDir();
    const crew = "c".repeat(60);
    const [ha, hb] = ["a", "b"].map((x) => `${"h".repeat(63)}${x}`);
    const f = (worker: string, marker: string) => {
      const p = join(w.path, `${worker}.toml`);
      writeFileSync(p, `name = "${crew}"\nlease = "5s"\n[[worker]]\nname = "${worker}"\nqueues = ["q"]\ncommand = 'sleep ${marker}'\n`);
      return p;
    };
    using a = up(f("wa", "978.9"), d.path, ha);
    await a.until((t) => t.includes(`crew ${crew} up: wa`), "it is up");
    using b = up(f("wb", "979.1"), d.path, hb);
    await b.until((t) => t.includes(`crew ${crew} up: wb`), "it is up");
    expect((await js(["crew"], d.path)).map((c: any) => [c.host, c.state, c.workers.map((x: any) => x.name)])).toEqual([[ha, "up", ["wa"]], [hb, "up", ["wb"]]]);
    expect(await ok(["crew", "down", crew, "--host", hb], d.path)).toBe(`crew ${crew} is down on ${hb}\n`);
    expect(await exitWithin(b.p, 30_000)).toBe(0);
    expect((await js(["crew"], d.path)).map((c: any) => [c.host, c.state])).toEqual([[ha, "up"], [hb, "stopped"]]);
    expect(await ok(["crew", "down"], d.path)).toBe(`crew ${crew} is down\n`);
    expect(await exitWithin(a.p, 30_000)).toBe(0);
    await nothingHeld(d.path, ["wa", "wb"]);
  });
});
