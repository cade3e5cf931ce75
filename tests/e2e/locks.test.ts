// The slot lock (lib/fs/lock.ts, docs/FILE-ENGINE.md §4) when clocks disagree and when
// a holder stalls, through the compiled binary. Other clocks come from faketime (Debian's
// faketime package), which shifts what a process reads of the clock but not the times the
// kernel stamps on files, as hosts sharing a store over NFS differ. The faketime tests skip,
// saying so, only when faketime is not installed (.ci/run installs it).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, ON_FILES, readUntil, tempDir, testStore } from "../harness/run";
import { expectCleanError, recordOf, spawnGated } from "./fixtures/core";

setDefaultTimeout(180_000); // generous: the machine is shared; on the code before the fix a blocked publish takes 30 s to fail

const faketime = Bun.which("faketime");
if (!faketime) console.warn("locks.test.ts: skipping the clock-skew tests: faketime is not installed (apt-get install -y faketime)");
const shifted = (offset: string) => ["faketime", "-f", offset];

// A directory in locks/ (a lock, or a lock's break guard) dated `offsetSec` from now, as a
// process that died leaves it.
function plantLock(store: string, file: string, offsetSec: number): string {
  const p = join(store, "locks", file);
  mkdirSync(p, { recursive: true });
  const t = Date.now() / 1000 + offsetSec;
  utimesSync(p, t, t);
  return p;
}

// One writer's loop: `wins` times, read the counter's value and version, publish value + 1
// with --if-version, again on a conflict (exit 4). Returns the versions its publishes got.
async function increment(store: string, wins: number, prefix: string[]): Promise<number[]> {
  const got: number[] = [];
  while (got.length < wins) {
    const st = await a2a(["status", "counter", "--json"], { dir: store, prefix });
    expect([0, 3]).toContain(st.code); // 3: not published yet
    const rec = JSON.parse(st.stdout)[0];
    const version = rec?.version ?? 0;
    const pub = await a2a(["publish", "counter", String(Number(rec?.result ?? 0) + 1), "--if-version", String(version), "--json"], { dir: store, prefix });
    if (pub.code === 4) continue;
    expect(pub).toMatchObject({ code: 0, stderr: "" });
    got.push(JSON.parse(pub.stdout).version);
  }
  return got;
}

describe.skipIf(!faketime)("clock skew (faketime)", () => {
  test("faketime shifts the compiled binary's clock (else these tests would prove nothing)", async () => {
    using d = testStore();
    const r = await a2a(["publish", "probe", "x", "--json"], { dir: d.path, prefix: shifted("+10s") });
    expect(r.code).toBe(0);
    const ahead = JSON.parse(r.stdout).updated_at - Date.now() / 1000;
    expect(ahead).toBeGreaterThan(8);
    expect(ahead).toBeLessThan(12);
  });

  test("writers 10 s apart doing compare-and-set on one counter lose no update", async () => {
    using d = testStore();
    // Two writers on each clock: the ones ahead once took every lock they met for 10 s old.
    const clocks = [[], shifted("+10s"), [], shifted("+10s")];
    const versions = (await Promise.all(clocks.map((prefix) => increment(d.path, 15, prefix)))).flat();
    expect(new Set(versions).size).toBe(versions.length); // no two successes got one version
    expect(recordOf(d.path, "counter")).toMatchObject({ result: String(versions.length), version: versions.length });
  });

  // Lock directories are the file engine's.
  test.if(ON_FILES)("a host an hour behind breaks a dead holder's lock; gc on a host an hour ahead keeps a fresh one", async () => {
    using d = tempDir();
    expect((await a2a(["publish", "seed", "x"], { dir: d.path })).code).toBe(0);
    plantLock(d.path, "dead.lock", -60);
    expect(await a2a(["publish", "dead", "through"], { dir: d.path, prefix: shifted("-1h") })).toMatchObject({ code: 0, stderr: "" });
    const fresh = plantLock(d.path, "fresh.lock", 0);
    const gc = await a2a(["gc", "--json"], { dir: d.path, prefix: shifted("+1h") });
    expect(gc.code).toBe(0);
    expect(JSON.parse(gc.stdout).stale_locks).toEqual([]);
    expect(existsSync(fresh)).toBe(true);
  });
});

describe.if(ON_FILES)("dead holders and clock steps", () => {
  test("a lock dated an hour ahead (a dead holder, then a clock step) is broken at once, and gc removes one", async () => {
    using d = tempDir();
    expect((await a2a(["publish", "seed", "x"], { dir: d.path })).code).toBe(0);
    plantLock(d.path, "ahead.lock", 3600);
    // Not the 30 s "stayed locked" failure: the lock's age is judged on the filesystem's clock.
    expect(await a2a(["publish", "ahead", "through"], { dir: d.path })).toMatchObject({ code: 0, stderr: "" });
    expect(recordOf(d.path, "ahead")).toMatchObject({ result: "through", version: 1 });
    // Its break guard too, left by a breaker that died (a waiter watches it unchanged, then removes it).
    plantLock(d.path, "guarded.lock", 3600);
    const guard = plantLock(d.path, "guarded.lock.break", 3600);
    expect(await a2a(["publish", "guarded", "through"], { dir: d.path })).toMatchObject({ code: 0, stderr: "" });
    expect(existsSync(guard)).toBe(false);
    const left = plantLock(d.path, "left.lock", 3600);
    // A lock behind a dead breaker's guard: gc removes the guard, then the lock.
    const behind = plantLock(d.path, "behind.lock", -3600);
    const deadGuard = plantLock(d.path, "behind.lock.break", -3600);
    const gc = await a2a(["gc", "--json"], { dir: d.path });
    expect(gc.code).toBe(0);
    expect(JSON.parse(gc.stdout).stale_locks.sort()).toEqual(["behind", "behind.lock.break", "left"]);
    for (const p of [left, behind, deadGuard]) expect(existsSync(p)).toBe(false);
  });
});

describe.if(ON_FILES)("a holder stalled past the stale limit", () => {
  test("is taken over, and then writes nothing: the writer that took over keeps its update", async () => {
    using d = tempDir();
    using f = tempDir();
    expect((await a2a(["publish", "w", "v1"], { dir: d.path })).code).toBe(0);
    const fifo = join(f.path, "release");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    // Stalled holding the lock, its new record written to tmp/ but not renamed into place.
    const g = await spawnGated(["publish", "w", "stalled", "--if-version", "1"], d.path, fifo);
    // Another writer waits the stale limit out, takes the lock over, and publishes.
    const other = await a2a(["publish", "w", "other", "--if-version", "1", "--json"], { dir: d.path });
    expect(other).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(other.stdout).version).toBe(2);
    writeFileSync(fifo, "go"); // the stalled one goes on: its last check finds the lock not its own
    const [stderr, code] = await Promise.all([readUntil(g.proc.stderr, () => false), g.proc.exited]); // the rest, to EOF
    expectCleanError({ code, stderr, stdout: "" }, 1, /w's lock was taken over while this process was stalled/);
    expect(recordOf(d.path, "w")).toMatchObject({ result: "other", version: 2 });
    expect(existsSync(g.temp)).toBe(false);
  });
});
