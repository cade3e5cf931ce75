// Network filesystems, where a directory watch never sees another machine's writes.
//
// 1. Detection by statfs: an LD_PRELOAD shim (tests/e2e/fixtures/fake-nfs.c) makes statfs report NFS
//    under one directory of a local disk. A write the watch cannot see (an in-place write through
//    a shared mmap, which inotify never reports) then wakes a waiter in auto mode only if auto
//    mode chose to poll: the control runs show the same write goes unseen without the shim.
// 2. Two bindfs views of one directory behave like two NFS clients (notes/network-fs.md): a
//    waiter on view A in auto mode must wake for a publish made through view B, which the
//    control run (forced watch mode) shows no watch can see.
// Each part is skipped, with the reason printed, when its tools are missing.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { a2a, hasWatch, ON_FILES, spawnA2A, tempDir, until } from "../harness/run";
import { MODES, Output, arm, blocked, buildShim, expectCleanError, recordOf, slotPath } from "./fixtures/core";

setDefaultTimeout(120_000); // generous: the machine is shared and may be heavily loaded

const FUSE_MAGIC = 0x65735546;

// ---------------------------------------------------------------------------------------------
// 1. statfs detection, with the LD_PRELOAD shim

const shim = buildShim("fake-nfs");
if (shim.why) console.warn(`nfs.test.ts: skipping the statfs shim tests: ${shim.why}`);
afterAll(() => shim.dir && rmSync(shim.dir, { recursive: true, force: true }));

// Rewrites the running record of `name` in place, through a shared mmap, into a published one
// of exactly the same length: the content changes with no inotify event at all.
function publishUnseen(store: string, name: string, result: string): void {
  const file = slotPath(store, name);
  const running = readFileSync(file, "utf8");
  const rec = JSON.parse(running);
  const make = (task: string) =>
    JSON.stringify({ ...rec, state: "done", task, result, size: Buffer.byteLength(result), version: rec.version + 1, published_at: rec.started_at }) + "\n";
  const pad = Buffer.byteLength(running) - Buffer.byteLength(make(""));
  if (pad < 0) throw new Error("publishUnseen: start the slot with a longer task");
  const done = Buffer.from(make("x".repeat(pad)));
  const map = Bun.mmap(file, { shared: true });
  expect(map.length).toBe(done.length);
  map.set(done);
}

// Network filesystems are the file engine's.
describe.skipIf(!shim.so || !ON_FILES)("statfs detection (LD_PRELOAD shim reporting NFS)", () => {
  // Starts a waiter on a running slot, publishes behind the watch's back, returns the wait's result.
  async function unseenPublish(env: Record<string, string>, timeout: string) {
    using d = tempDir();
    await a2a(["start", "r", "t".repeat(64)], { dir: d.path });
    const fake = env.FAKE ? { LD_PRELOAD: shim.so!, FAKE_NFS_PREFIX: d.path } : {};
    // Armed before the waiter starts: nothing but the hidden write may give it a reason to re-read.
    arm(slotPath(d.path, "r"));
    await using waiter = spawnA2A(["wait", "r", "--timeout", timeout], { dir: d.path, env: { ...env, ...fake, FAKE: undefined } });
    // Past its first check (which would see the change without any watch) and blocked.
    await blocked(waiter.pid, MODES[env.A2A_WATCH === "poll" ? 1 : 0], slotPath(d.path, "r"));
    publishUnseen(d.path, "r", "seen only by polling");
    const [stdout, stderr, code] = await Promise.all([new Response(waiter.stdout).text(), new Response(waiter.stderr).text(), waiter.exited]);
    return { stdout, stderr, code };
  }

  test("the shim works on this binary's runtime: statfs says NFS under the prefix only", () => {
    const probe = Bun.spawnSync({
      cmd: ["bun", "-e", "const fs=require('fs');console.log(fs.statfsSync(process.argv[1]).type, fs.statfsSync('/').type)", join(tmpdir())],
      env: { ...process.env, LD_PRELOAD: shim.so!, FAKE_NFS_PREFIX: tmpdir() },
      stdout: "pipe",
    });
    const [under, outside] = probe.stdout.toString().trim().split(" ").map(Number);
    expect(under).toBe(0x6969);
    expect(outside).not.toBe(0x6969);
  });

  test("auto mode on a store statfs reports as NFS polls: it sees a write no watch reports", async () => {
    const r = await unseenPublish({ A2A_POLL_MS: "20", FAKE: "1" }, "30");
    expect(r).toEqual({ stdout: "seen only by polling", stderr: "", code: 0 });
  });

  test("control: auto mode on a local disk relies on its watch and misses that write", async () => {
    const r = await unseenPublish({ A2A_POLL_MS: "20" }, "1.5");
    expectCleanError(r, 124, /timed out waiting for r/);
  });

  test("control: A2A_WATCH=watch overrides detection, even on NFS", async () => {
    const r = await unseenPublish({ A2A_POLL_MS: "20", A2A_WATCH: "watch", FAKE: "1" }, "1.5");
    expectCleanError(r, 124, /timed out waiting for r/);
  });

  test("A2A_WATCH=poll sees it on a local disk", async () => {
    const r = await unseenPublish({ A2A_POLL_MS: "20", A2A_WATCH: "poll" }, "30");
    expect(r).toEqual({ stdout: "seen only by polling", stderr: "", code: 0 });
  });
});

// ---------------------------------------------------------------------------------------------
// 2. Two bindfs views of one directory

function fuseUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return "not running as root";
  if (!Bun.which("bindfs") || !Bun.which("fusermount3")) return "bindfs/fuse3 not installed (apt-get install -y bindfs fuse3)";
  if (!existsSync("/dev/fuse")) return "/dev/fuse is missing";
  return undefined;
}

const views = { root: "", back: "", a: "", b: "" };
let why = fuseUnavailable();
if (!why) {
  // Probe once: a container may have /dev/fuse and still refuse the mount.
  views.root = mkdtempSync(join(tmpdir(), "a2a-nfs-"));
  for (const k of ["back", "a", "b"] as const) mkdirSync((views[k] = join(views.root, k)));
  for (const v of [views.a, views.b]) {
    const m = Bun.spawnSync(["bindfs", "--no-allow-other", views.back, v], { stderr: "pipe" });
    if (m.exitCode !== 0) why ??= `bindfs cannot mount here: ${m.stderr.toString().trim()}`;
  }
}
if (why) console.warn(`nfs.test.ts: skipping the bindfs tests: ${why}`);

function unmount() {
  for (const v of [views.a, views.b]) if (v) Bun.spawnSync(["fusermount3", "-u", "-z", v], { stderr: "ignore" });
  if (views.root) rmSync(views.root, { recursive: true, force: true });
}

describe.skipIf(!!why || !ON_FILES)("two bindfs views of one directory (the NFS stand-in)", () => {
  let n = 0;
  // A fresh store per test, seen as `a` (machine A) and `b` (machine B).
  const store = () => {
    const name = `s${n++}`;
    mkdirSync(join(views.back, name));
    return { a: join(views.a, name), b: join(views.b, name) };
  };
  beforeAll(() => {
    expect(statfsSync(views.a).type >>> 0).toBe(FUSE_MAGIC);
  });
  afterAll(unmount);

  test("control: a watch on view A does not see a publish through view B", async () => {
    const s = store();
    await a2a(["start", "r"], { dir: s.a });
    arm(slotPath(s.a, "r"));
    await using waiter = spawnA2A(["wait", "r", "--timeout", "1.5"], { dir: s.a, env: { A2A_WATCH: "watch" } });
    await blocked(waiter.pid, MODES[0], slotPath(s.a, "r"));
    expect((await a2a(["publish", "r", "from B"], { dir: s.b })).code).toBe(0);
    const [stdout, stderr, code] = await Promise.all([new Response(waiter.stdout).text(), new Response(waiter.stderr).text(), waiter.exited]);
    expectCleanError({ stdout, stderr, code }, 124);
  });

  test("auto mode: a waiter on view A wakes for a publish through view B", async () => {
    const s = store();
    await a2a(["start", "r"], { dir: s.a });
    arm(slotPath(s.a, "r"));
    await using waiter = spawnA2A(["wait", "r"], { dir: s.a });
    // On FUSE auto mode watches (for local writes) and polls (for everyone else's).
    await blocked(waiter.pid, MODES[0], slotPath(s.a, "r"));
    expect((await a2a(["publish", "r", '{"from":"B","ok":true}'], { dir: s.b })).code).toBe(0);
    expect(await new Response(waiter.stdout).text()).toBe('{"from":"B","ok":true}');
    expect(await waiter.exited).toBe(0);
  });

  test("auto mode: a waiter on view A for a slot that does not exist yet, fan-in over both views", async () => {
    const s = store();
    await using waiter = spawnA2A(["wait", "x", "y", "--json"], { dir: s.a });
    await until(() => hasWatch(waiter.pid));
    await a2a(["publish", "x", "via A"], { dir: s.a });
    await a2a(["publish", "y", "via B"], { dir: s.b });
    const out = JSON.parse(await new Response(waiter.stdout).text());
    expect(await waiter.exited).toBe(0);
    expect({ x: out.x.result, y: out.y.result }).toEqual({ x: "via A", y: "via B" });
  });

  test("tail --follow on view A prints chunks appended through view B once, in order", async () => {
    const s = store();
    await a2a(["start", "s"], { dir: s.b });
    await using follower = spawnA2A(["tail", "s", "--follow"], { dir: s.a });
    const out = new Output(follower.stdout);
    await until(() => hasWatch(follower.pid));
    let expected = "";
    for (let i = 1; i <= 12; i++) {
      const c = `chunk ${i}\n`;
      expected += c;
      expect((await a2a(["append", "s", c], { dir: s.b })).code).toBe(0);
      if (i === 6) await out.until((t) => t.includes("chunk 6\n"), "chunk 6 on view A");
    }
    await a2a(["publish", "s", "end"], { dir: s.b });
    await out.rest();
    expect(await follower.exited).toBe(0);
    expect(out.text).toBe(expected);
  });

  test("readers on view A never get a torn record while view B rewrites it (default 1 s attribute cache)", async () => {
    const s = store();
    // Result i has a length that changes with i, so a read cut to a cached length is torn.
    const result = (i: number) => `${i}:` + "#".repeat((i * 37) % 500);
    await a2a(["publish", "r", result(0)], { dir: s.b });
    const writer = (async () => {
      for (let i = 1; i <= 40; i++) {
        const p = await a2a(["publish", "r", result(i), "--if-version", String(i)], { dir: s.b });
        if (p.code !== 0) throw new Error(p.stderr);
      }
    })();
    // Follow every visible version on view A, each wait blocked until a newer one shows up
    // (the poll path, where a torn read must count as "not yet"), checking status between.
    let last = 0;
    let waits = 0;
    while (last < 41) {
      const w = await a2a(["wait", "r", "--after-version", String(last), "--json", "--timeout", "30"], { dir: s.a });
      expect({ code: w.code, stderr: w.stderr }).toEqual({ code: 0, stderr: "" });
      const rec = JSON.parse(w.stdout);
      expect(rec.result).toBe(result(rec.version - 1));
      expect(rec.version).toBeGreaterThan(last);
      last = rec.version;
      waits++;
      const st = await a2a(["status", "r", "--json"], { dir: s.a });
      expect(st.code).toBe(0);
      // A torn read is retried, or the record skipped with a warning: never returned wrong.
      for (const r of JSON.parse(st.stdout)) expect(r.result).toBe(result(r.version - 1));
    }
    await writer;
    expect(waits).toBeGreaterThan(1);
    expect(recordOf(s.a, "r")).toMatchObject({ version: 41 });
  });
});

// If the describe was skipped its afterAll never runs: clean up the probe mounts anyway.
if (why) unmount();
