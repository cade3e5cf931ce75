// The path a2a takes off Linux (macOS, BSD), run here by forcing it: A2A_PLATFORM=portable makes
// lib/core/platform.ts answer as it does where there is no inotify of our own, no /proc and no
// trustworthy filesystem type. Waits then wake by fs.watch events (A2A_POLL_MS is set to a
// minute, so a wake within the test's bounds came from an event, not a poll tick), the store is
// also polled because its filesystem cannot be known, doctor says both, and session naming and
// presence do without /proc. A regression on that path fails here, in CI.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, hasWatch, ON_FILES, ownHome, readUntil, spawnA2A, tempDir, until } from "../harness/run";
import { connect } from "../harness/mcp";
import { sh, slotPath } from "./fixtures/core";

setDefaultTimeout(120_000);

const PORTABLE = { A2A_PLATFORM: "portable", A2A_POLL_MS: "60000" }; // a poll tick would come after every bound below

// The file engine's wake path off Linux (fs.watch, polling, doctor): files only.
describe.concurrent.if(ON_FILES)("A2A_PLATFORM=portable (the macOS path, on Linux)", () => {
  test("wait, wait --any and x=$(a2a wait) wake on a publish through fs.watch events", async () => {
    using d = tempDir();
    const o = { dir: d.path, env: PORTABLE };
    const waiter = spawnA2A(["wait", "r", "--timeout", "100s"], o);
    await until(() => hasWatch(waiter.pid), 20_000, "the waiter's fs.watch");
    expect((await a2a(["publish", "r", "hello"], o)).code).toBe(0);
    expect(await new Response(waiter.stdout).text()).toBe("hello");
    expect(await waiter.exited).toBe(0);
    const any = spawnA2A(["wait", "s", "t", "--any", "--json", "--timeout", "100s"], o);
    await until(() => hasWatch(any.pid), 20_000, "the --any waiter's fs.watch");
    await a2a(["publish", "t", "second"], o);
    expect(Object.keys(JSON.parse(await new Response(any.stdout).text()))).toEqual(["t"]);
    const shell = await sh(`( "$A2A" publish u later -q ) & x=$("$A2A" wait u --timeout 100s); echo "got $x"`, d.path, PORTABLE);
    expect(shell).toEqual({ stdout: "got later\n", stderr: "", code: 0 });
  });

  test("tail --follow, recv --wait and task claim --wait wake on events too", async () => {
    using d = tempDir();
    const o = { dir: d.path, env: PORTABLE };
    await a2a(["start", "build", "make"], o);
    const tail = spawnA2A(["tail", "build", "--follow", "--timeout", "100s"], o);
    await until(() => hasWatch(tail.pid), 20_000, "tail's watch");
    await a2a(["append", "build", "line 1\n"], o);
    expect(await readUntil(tail.stdout, (t) => t.includes("line 1"), 60_000)).toBe("line 1\n");
    await a2a(["publish", "build", "ok"], o);
    expect(await tail.exited).toBe(0);

    const recv = spawnA2A(["recv", "--as", "bob", "--wait", "--timeout", "100s", "--json"], o);
    await until(() => hasWatch(recv.pid), 20_000, "recv's watch");
    await a2a(["send", "bob", "ping", "--as", "alice"], o);
    expect(JSON.parse(await new Response(recv.stdout).text())).toMatchObject({ from: "alice", body: "ping" });

    const claim = spawnA2A(["task", "claim", "q", "--as", "w", "--wait", "--timeout", "100s", "--json"], o);
    await until(() => hasWatch(claim.pid), 20_000, "the claimer's watch");
    const id = (await a2a(["task", "add", "q", "job"], o)).stdout.trim();
    expect(JSON.parse(await new Response(claim.stdout).text())).toMatchObject({ id, payload: "job" });
  });

  test("the store's filesystem cannot be known, so it is polled as well: a write no watch reports is seen", async () => {
    using d = tempDir();
    const env = { A2A_PLATFORM: "portable", A2A_POLL_MS: "20" };
    await a2a(["start", "r", "t".repeat(64)], { dir: d.path, env });
    const waiter = spawnA2A(["wait", "r", "--timeout", "30s"], { dir: d.path, env });
    await until(() => hasWatch(waiter.pid), 20_000, "the waiter's watch");
    // Rewrite the record in place through a shared mmap: no inotify event at all (nfs.test.ts's
    // control shows a Linux-mode waiter on a local disk misses exactly this write).
    const file = slotPath(d.path, "r");
    const running = readFileSync(file, "utf8");
    const rec = JSON.parse(running);
    const make = (task: string) => JSON.stringify({ ...rec, state: "done", task, result: "polled", size: 6, version: rec.version + 1, published_at: rec.started_at }) + "\n";
    const done = Buffer.from(make("x".repeat(Buffer.byteLength(running) - Buffer.byteLength(make("")))));
    Bun.mmap(file, { shared: true }).set(done);
    expect(await new Response(waiter.stdout).text()).toBe("polled");
    expect(await waiter.exited).toBe(0);
  });

  test("doctor says the wake mode is watch + poll and why, and that inotify is not used", async () => {
    using d = tempDir();
    using h = tempDir("a2a-home-");
    const r = await a2a(["doctor", "--json"], { dir: d.path, env: { ...ownHome(h.path), A2A_PLATFORM: "portable", A2A_POLL_MS: "100" } });
    const checks = JSON.parse(r.stdout).checks as { check: string; level: string; detail: string }[];
    const by = (name: string) => checks.find((c) => c.check === name);
    expect(by("wake mode")).toMatchObject({ level: "ok", detail: expect.stringMatching(/^watch \+ poll every 100 ms: this platform does not say whether .* is on a network filesystem/) });
    expect(by("inotify")).toMatchObject({ level: "note", detail: expect.stringContaining("not used on this platform") });
    const linux = JSON.parse((await a2a(["doctor", "--json"], { dir: d.path, env: ownHome(h.path) })).stdout).checks as typeof checks;
    expect(linux.find((c) => c.check === "wake mode")!.detail).toMatch(/^watch \(inotify events\): a local filesystem/);
  });

  test("without /proc: a2a mcp sessions in one directory still get distinct, remembered names; whoami answers; peers have no terminal", async () => {
    using d = tempDir();
    const store = join(d.path, "store");
    const proj = join(d.path, "proj");
    mkdirSync(proj);
    const first = await connect(store, PORTABLE, { cwd: proj, stderr: "ignore" });
    const second = await connect(store, PORTABLE, { cwd: proj, stderr: "ignore" });
    try {
      const names = [(await first.structured("whoami")).name, (await second.structured("whoami")).name].sort();
      expect(names).toEqual(["proj", "proj-2"]);
      const peers = JSON.parse((await a2a(["peers", "--json"], { dir: store, env: PORTABLE })).stdout).peers;
      expect(peers.map((p: any) => [p.name, p.tty])).toEqual(expect.arrayContaining([["proj", null], ["proj-2", null]]));
      // Step 2 (the session's own server, found by ancestry) needs /proc: whoami falls to the
      // name a2a mcp started here would take, and says so.
      const who = JSON.parse((await a2a(["whoami", "--json"], { dir: store, env: PORTABLE, cwd: proj })).stdout);
      expect(who).toMatchObject({ name: "proj-3", source: "directory" });
    } finally {
      await first.close();
      await second.close();
    }
  });
});
