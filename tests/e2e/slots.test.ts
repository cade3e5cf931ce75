// The slot store: records, versions, compare-and-set, concurrency, TTL, clear and gc, all
// through the compiled binary on real temporary stores.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, listens, ON_FILES, spawnA2A, storeExists, storeSql, tempDir, testStore, until } from "../harness/run";
import { expectCleanError, killGated, recordOf, recordText, sh, slotNames, slotPath, spawnGated } from "./fixtures/core";

setDefaultTimeout(120_000); // generous: the machine is shared and may be heavily loaded

// A record as stored is one line of JSON, complete, with a size that matches its result.
function expectWholeRecord(text: string, name: string): any {
  expect(text.endsWith("\n")).toBe(true);
  expect(text.indexOf("\n")).toBe(text.length - 1);
  const r = JSON.parse(text);
  expect(r).toMatchObject({ a2a: 1, name });
  expect(r.size).toBe(r.result === null ? 0 : Buffer.byteLength(r.result, "utf8"));
  return r;
}

describe.concurrent("records and versions", () => {
  test("start, then publish: one record with every field, version counting each change", async () => {
    using d = testStore();
    const before = Date.now() / 1000;
    const s = await a2a(["start", "job", "crunch numbers", "--json"], { dir: d.path });
    expect(s.code).toBe(0);
    const started = JSON.parse(s.stdout);
    expect(started).toMatchObject({ name: "job", state: "running", task: "crunch numbers", result: null, version: 1, published_at: null, expires_at: null, chunks: 0, pid: expect.any(Number), host: expect.any(String) });
    expect(started.started_at).toBeGreaterThanOrEqual(Math.floor(before));
    const p = await a2a(["publish", "job", "done: 7", "--json"], { dir: d.path });
    const published = JSON.parse(p.stdout);
    expect(published).toMatchObject({ name: "job", state: "done", task: "crunch numbers", result: "done: 7", size: 7, version: 2, started_at: started.started_at });
    expect(published.published_at).toBeGreaterThanOrEqual(started.started_at);
    // The record stored is that record, whole.
    expect(expectWholeRecord(recordText(d.path, "job")!, "job")).toEqual(published);
    // start on a published slot: back to running, next version (agent2agent semantics).
    const again = JSON.parse((await a2a(["start", "job", "round two", "--json"], { dir: d.path })).stdout);
    expect(again).toMatchObject({ state: "running", task: "round two", result: null, version: 3 });
  });

  test("human output of start, publish and status", async () => {
    using d = testStore();
    expect(await a2a(["start", "a", "first task"], { dir: d.path })).toEqual({ stdout: "started a (version 1)\n", stderr: "", code: 0 });
    expect(await a2a(["publish", "b", "héllo"], { dir: d.path })).toEqual({ stdout: "published b (version 1, 6B)\n", stderr: "", code: 0 });
    const st = await a2a(["status"], { dir: d.path });
    expect(st.code).toBe(0);
    const lines = st.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+STATE\s+TASK\s+AGE\s+SIZE\s+PREVIEW$/);
    // Newest first.
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2))).toEqual([["b", "done"], ["a", "running"]]);
    expect(lines[2]).toContain("first task");
    expect(lines[1]).toContain("héllo");
  });

  test("status on an empty or missing store creates nothing", async () => {
    using d = testStore();
    const store = ON_FILES ? join(d.path, "store") : d.path;
    expect((await a2a(["status"], { dir: store })).stdout).toMatch(/^no slots yet/);
    expect(await a2a(["status", "--json"], { dir: store })).toEqual({ stdout: "[]\n", stderr: "", code: 0 });
    expectCleanError(await a2a(["status", "nope"], { dir: store }), 3, /no slot named nope/);
    // A read on PostgreSQL makes the schema (lib/pg/engine.ts migrates when a statement finds
    // it missing, reads included), where a read of a missing directory makes nothing.
    if (ON_FILES) expect(storeExists(store)).toBe(false);
  });

  test("status --json lists full records, newest first; status NAME only those", async () => {
    using d = testStore();
    for (const n of ["x", "y", "z"]) await a2a(["publish", n, `r-${n}`], { dir: d.path });
    const all = JSON.parse((await a2a(["status", "--json"], { dir: d.path })).stdout);
    expect(all.map((r: any) => r.name)).toEqual(["z", "y", "x"]);
    expect(all[0]).toMatchObject({ a2a: 1, result: "r-z", state: "done", version: 1 });
    const some = JSON.parse((await a2a(["status", "x", "z", "--json"], { dir: d.path })).stdout);
    expect(some.map((r: any) => r.name).sort()).toEqual(["x", "z"]);
  });

  test.if(ON_FILES)("the store is private: directories 0700, files 0600", async () => {
    using d = tempDir();
    const store = join(d.path, "s");
    await a2a(["publish", "p", "secret"], { dir: store });
    const { statSync } = await import("node:fs");
    expect(statSync(store).mode & 0o777).toBe(0o700);
    expect(statSync(join(store, "slots")).mode & 0o777).toBe(0o700);
    expect(statSync(slotPath(store, "p")).mode & 0o777).toBe(0o600);
  });
});

describe.concurrent("compare-and-set (--if-version)", () => {
  test("a matching version publishes; a stale one exits 4 and leaves the record byte for byte", async () => {
    using d = testStore();
    await a2a(["publish", "cfg", '{"v":1}'], { dir: d.path });
    const ok = await a2a(["publish", "cfg", '{"v":2}', "--if-version", "1", "--json"], { dir: d.path });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ result: '{"v":2}', version: 2 });
    const before = recordText(d.path, "cfg");
    const lost = await a2a(["publish", "cfg", '{"v":"lost"}', "--if-version", "1"], { dir: d.path });
    expectCleanError(lost, 4, /slot cfg is at version 2, not 1: .*--if-version 2/);
    expect(lost.stdout).toBe("");
    expect(recordText(d.path, "cfg")).toBe(before!);
  });

  test("--if-version 0 creates an absent slot, and conflicts once it exists", async () => {
    using d = testStore();
    const first = await a2a(["publish", "claim", "mine", "--if-version", "0"], { dir: d.path });
    expect(first.code).toBe(0);
    const before = recordText(d.path, "claim");
    expectCleanError(await a2a(["publish", "claim", "theirs", "--if-version", "0"], { dir: d.path }), 4);
    expect(recordText(d.path, "claim")).toBe(before!);
    // A version ahead of the slot conflicts too, and never creates.
    expectCleanError(await a2a(["publish", "other", "x", "--if-version", "3"], { dir: d.path }), 4, /at version 0, not 3/);
    expect(recordText(d.path, "other")).toBeUndefined();
  });

  test("racing CAS writers on one version: exactly one wins", async () => {
    using d = testStore();
    await a2a(["publish", "ctr", "0"], { dir: d.path });
    const racers = await Promise.all(Array.from({ length: 6 }, (_, i) => a2a(["publish", "ctr", `w${i}`, "--if-version", "1"], { dir: d.path })));
    const codes = racers.map((r) => r.code).sort();
    expect(codes).toEqual([0, 4, 4, 4, 4, 4]);
    const winner = racers.findIndex((r) => r.code === 0);
    expect(recordOf(d.path, "ctr")).toMatchObject({ version: 2, result: `w${winner}` });
  });
});

describe("concurrency", () => {
  test("8 processes x 20 publishes on one slot: every version once, final version 160, record whole", async () => {
    using d = testStore();
    const writers = Array.from({ length: 8 }, (_, k) =>
      sh(`for i in $(seq 1 20); do "$A2A" publish hot "writer ${k} publish $i" --json || exit 1; done`, d.path),
    );
    const results = await Promise.all(writers);
    const versions: number[] = [];
    for (const r of results) {
      expect(r.code).toBe(0);
      for (const line of r.stdout.trim().split("\n")) versions.push(JSON.parse(line).version);
    }
    // No two publishes saw the same old version: no lost update.
    expect(versions.sort((a, b) => a - b)).toEqual(Array.from({ length: 160 }, (_, i) => i + 1));
    const rec = expectWholeRecord(recordText(d.path, "hot")!, "hot");
    expect(rec.version).toBe(160);
    expect(rec.result).toMatch(/^writer \d publish \d+$/);
    // Nothing left behind: no temp files, no lock directories (the file engine's own).
    if (ON_FILES) {
      expect(readdirSync(join(d.path, "tmp"))).toEqual([]);
      expect(readdirSync(join(d.path, "locks"))).toEqual([]);
    }
  });

  test("a reader looping over the stored record and over status --json never sees a partial record", async () => {
    using d = testStore();
    // Results of very different sizes, so a torn read would show as a bad size or bad JSON.
    const big = "B".repeat(100_000); // under the 128 KiB limit of one environment string
    await a2a(["publish", "live", "seed"], { dir: d.path });
    const writer = sh(
      `i=0; while [ $i -lt 60 ]; do i=$((i+1)); if [ $((i % 2)) = 0 ]; then "$A2A" publish live "small $i" >/dev/null || exit 1; else printf '%s %s' "$BIG" "$i" | "$A2A" publish live >/dev/null || exit 1; fi; done`,
      d.path,
      { BIG: big },
    );
    let done = false;
    writer.then(() => (done = true));
    let fileReads = 0;
    let statusReads = 0;
    let lastVersion = 0;
    const versions = new Set<number>();
    while (!done) {
      const rec = expectWholeRecord(recordText(d.path, "live")!, "live");
      expect(rec.result === "seed" || /^small \d+$/.test(rec.result) || rec.result.startsWith(big)).toBe(true);
      expect(rec.version).toBeGreaterThanOrEqual(lastVersion);
      lastVersion = rec.version;
      versions.add(rec.version);
      fileReads++;
      if (fileReads % 20 === 0) {
        const st = await a2a(["status", "live", "--json"], { dir: d.path });
        expect(st.stderr).toBe("");
        const [r] = JSON.parse(st.stdout);
        expect(r.size).toBe(Buffer.byteLength(r.result, "utf8"));
        statusReads++;
      }
      await Bun.sleep(0); // let the writer's promise settle
    }
    expect((await writer).code).toBe(0);
    expect(recordOf(d.path, "live").version).toBe(61);
    // The reads really overlapped the writes: the reader saw the record change under it, and
    // status was read while writing too (one status read per 20 file reads).
    expect(versions.size).toBeGreaterThan(1);
    expect(statusReads).toBe(Math.floor(fileReads / 20));
    expect(statusReads).toBeGreaterThan(0);
  });

  test.if(ON_FILES)("a writer killed with -9 mid-write, holding the lock, leaves the record as it was and does not wedge the store", async () => {
    using d = tempDir();
    await a2a(["publish", "w", "before"], { dir: d.path });
    const g = await spawnGated(["publish", "w", "lost"], d.path);
    // The kill lands while the writer holds the lock with the new record written to tmp/.
    expect(existsSync(join(d.path, "locks", "w.lock"))).toBe(true);
    expect(JSON.parse(readFileSync(g.temp, "utf8"))).toMatchObject({ name: "w", result: "lost", version: 2 });
    expect(recordOf(d.path, "w")).toMatchObject({ result: "before", version: 1 });
    await killGated(g);
    expect(existsSync(join(d.path, "locks", "w.lock"))).toBe(true);
    expect((await a2a(["wait", "w", "--timeout", "5"], { dir: d.path })).stdout).toBe("before");
    // The next writer takes the dead writer's lock over once it is stale (lib/fs/lock.ts).
    const r = await a2a(["publish", "w", "after"], { dir: d.path });
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(recordOf(d.path, "w")).toMatchObject({ result: "after", version: 2 });
    expect(existsSync(join(d.path, "locks", "w.lock"))).toBe(false);
  });
});

describe.concurrent("TTL", () => {
  test("an expired record counts as absent in status, wait and CAS", async () => {
    using d = testStore();
    const p = JSON.parse((await a2a(["publish", "t", "short-lived", "--ttl", "50ms", "--json"], { dir: d.path })).stdout);
    expect(p.expires_at).toBeCloseTo(p.published_at + 0.05, 2);
    await until(() => Date.now() / 1000 > p.expires_at, 10_000, "the TTL to pass");
    expectCleanError(await a2a(["wait", "t", "--timeout", "0.1"], { dir: d.path }), 124);
    // CAS sees the expired slot as version 0.
    expectCleanError(await a2a(["publish", "t", "x", "--if-version", "1"], { dir: d.path }), 4, /at version 0/);
    expectCleanError(await a2a(["status", "t"], { dir: d.path }), 3);
    expect((await a2a(["status", "--json"], { dir: d.path })).stdout).toBe("[]\n");
  });

  test("a record with a long TTL is live, and publish keeps the TTL set by start", async () => {
    using d = testStore();
    const s = JSON.parse((await a2a(["start", "long", "--ttl", "2h", "--json"], { dir: d.path })).stdout);
    expect(s.expires_at - s.started_at).toBeCloseTo(7200, 1);
    const p = JSON.parse((await a2a(["publish", "long", "ok", "--json"], { dir: d.path })).stdout);
    expect(p.expires_at).toBe(s.expires_at);
    expect((await a2a(["wait", "long", "--timeout", "5"], { dir: d.path })).stdout).toBe("ok");
  });

  test("a tiny TTL shows as absent in status within a bound", async () => {
    using d = testStore();
    await a2a(["start", "blip", "--ttl", "0.05s"], { dir: d.path });
    const end = Date.now() + 20_000;
    let st = await a2a(["status", "blip", "--json"], { dir: d.path });
    while (st.stdout !== "[]\n" && Date.now() < end) st = await a2a(["status", "blip", "--json"], { dir: d.path });
    // Asked by name and absent: an empty list, and "not found" (as JSON, under --json).
    expect(st.stdout).toBe("[]\n");
    expect([st.code, JSON.parse(st.stderr).error]).toEqual([3, expect.objectContaining({ code: "ENOTFOUND", exit: 3, message: expect.stringMatching(/^no slot named blip: /) })]);
    // Expired records are swept lazily into a tombstone that keeps the version going.
    expect(recordOf(d.path, "blip")).toMatchObject({ state: "cleared", version: 2, result: null });
  });
});

describe.concurrent("clear", () => {
  test("clear NAME removes the slot and its chunks; a missing name exits 3", async () => {
    using d = testStore();
    await a2a(["start", "s"], { dir: d.path });
    await a2a(["append", "s", "chunk"], { dir: d.path });
    await a2a(["publish", "keep", "k"], { dir: d.path });
    expect(await a2a(["clear", "s"], { dir: d.path })).toEqual({ stdout: "cleared s\n", stderr: "", code: 0 });
    // start v1, append v2, clear: a tombstone at v3, absent to every reader.
    expect(recordOf(d.path, "s")).toMatchObject({ state: "cleared", version: 3, result: null, chunks: 0 });
    expect(JSON.parse((await a2a(["status", "--json"], { dir: d.path })).stdout).map((r: any) => r.name)).toEqual(["keep"]);
    expect(ON_FILES ? existsSync(join(d.path, "streams", "s")) : storeSql(d.path, "select 1 from slot_chunks where name = 's'") !== "").toBe(false);
    expect(recordOf(d.path, "keep")).toMatchObject({ result: "k" });
    expectCleanError(await a2a(["clear", "s"], { dir: d.path }), 3, /no slot named s/);
    // Versions never go backwards: the next publish continues from the tombstone.
    expect(JSON.parse((await a2a(["publish", "s", "new", "--json"], { dir: d.path })).stdout).version).toBe(4);
  });

  test("clear with present and missing names clears the present ones and exits 3", async () => {
    using d = testStore();
    await a2a(["publish", "a", "1"], { dir: d.path });
    const r = await a2a(["clear", "a", "ghost", "--json"], { dir: d.path });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toEqual({ cleared: ["a"], missing: ["ghost"] });
    expect(recordOf(d.path, "a")).toMatchObject({ state: "cleared", version: 2 });
    expect(recordText(d.path, "ghost")).toBeUndefined();
  });

  test("clear --all removes every slot; clear with neither or both is a usage error", async () => {
    using d = testStore();
    for (const n of ["a", "b", "c"]) await a2a(["publish", n, n], { dir: d.path });
    const r = await a2a(["clear", "--all", "--json"], { dir: d.path });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).cleared.sort()).toEqual(["a", "b", "c"]);
    expect(slotNames(d.path).map((n) => recordOf(d.path, n).state)).toEqual(["cleared", "cleared", "cleared"]);
    expectCleanError(await a2a(["clear"], { dir: d.path }), 2, /nothing to clear/);
    expectCleanError(await a2a(["clear", "a", "--all"], { dir: d.path }), 2, /both --all and names/);
    expect(await a2a(["clear", "--all"], { dir: d.path })).toMatchObject({ code: 0, stderr: "" });
  });

  test("a waiter blocked on a cleared slot keeps waiting for the next publish", async () => {
    using d = testStore();
    await a2a(["start", "c"], { dir: d.path });
    await using waiter = spawnA2A(["wait", "c"], { dir: d.path });
    await until(() => listens(waiter.pid));
    await a2a(["clear", "c"], { dir: d.path });
    await a2a(["publish", "c", "after clear"], { dir: d.path });
    expect(await new Response(waiter.stdout).text()).toBe("after clear");
    expect(await waiter.exited).toBe(0);
  });
});

// The file engine's own leftovers (temp files, lock directories, chunk directories); gc on
// PostgreSQL is tests/e2e/pg-gc.test.ts.
describe.concurrent.if(ON_FILES)("gc", () => {
  test("removes expired records, stale temp files, orphaned chunk dirs and stale locks; keeps the rest", async () => {
    using d = tempDir();
    const root = d.path;
    const exp = JSON.parse((await a2a(["publish", "old", "x", "--ttl", "10ms", "--json"], { dir: root })).stdout);
    await a2a(["publish", "live", "y", "--ttl", "1h"], { dir: root });
    await a2a(["start", "streaming"], { dir: root });
    await a2a(["append", "streaming", "part"], { dir: root });
    await until(() => Date.now() / 1000 > exp.expires_at, 10_000, "the TTL to pass");
    const hoursAgo = new Date(Date.now() - 2 * 3600_000);
    // A temp file abandoned by a crash two hours ago, and one being written right now.
    writeFileSync(join(root, "tmp", "123.dead.tmp"), "partial");
    utimesSync(join(root, "tmp", "123.dead.tmp"), hoursAgo, hoursAgo);
    writeFileSync(join(root, "tmp", "456.busy.tmp"), "in flight");
    // A tombstone older than a day (removed) and a fresh one (kept: it carries the version).
    await a2a(["publish", "gone", "g"], { dir: root });
    await a2a(["clear", "gone"], { dir: root });
    const tomb = recordOf(root, "gone");
    writeFileSync(slotPath(root, "gone"), JSON.stringify({ ...tomb, updated_at: tomb.updated_at - 2 * 86400 }) + "\n");
    await a2a(["publish", "recent", "r"], { dir: root });
    await a2a(["clear", "recent"], { dir: root });
    // Chunks of a slot that no longer exists.
    mkdirSync(join(root, "streams", "ghost"), { recursive: true });
    writeFileSync(join(root, "streams", "ghost", "0000000001"), "boo");
    // A lock whose holder died long ago, and one just taken.
    mkdirSync(join(root, "locks", "stuck.lock"), { recursive: true });
    utimesSync(join(root, "locks", "stuck.lock"), hoursAgo, hoursAgo);
    mkdirSync(join(root, "locks", "fresh.lock"));
    const r = await a2a(["gc", "--json"], { dir: root });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ expired: ["old"], tombstones: 1, temp_files: 1, orphan_streams: ["ghost"], stale_locks: ["stuck"], claims_recovered: 0, tasks_removed: 0, leases_removed: 0, reservations_removed: 0, topic_messages_removed: 0, blobs_removed: 0, damaged: [] });
    expect(recordOf(root, "old")).toMatchObject({ state: "cleared", version: 2 });
    expect(existsSync(slotPath(root, "gone"))).toBe(false);
    expect(recordOf(root, "recent")).toMatchObject({ state: "cleared" });
    expect(readdirSync(join(root, "tmp"))).toEqual(["456.busy.tmp"]);
    expect(readdirSync(join(root, "streams"))).toEqual(["streaming"]);
    expect(readdirSync(join(root, "locks"))).toEqual(["fresh.lock"]);
    expect(recordOf(root, "live")).toMatchObject({ result: "y" });
    expect((await a2a(["tail", "streaming"], { dir: root })).stdout).toBe("part");
    // A second run finds nothing; the human summary says so.
    expect(await a2a(["gc"], { dir: root })).toEqual({
      stdout: "swept 0 expired slot(s); removed 0 old tombstone(s), 0 temp file(s), 0 orphaned stream(s), 0 stale lock(s); returned 0 abandoned message claim(s) to unread; removed 0 old task(s), 0 old lease(s), 0 expired reservation(s), 0 old topic message(s), 0 blob(s) nothing names\n",
      stderr: "",
      code: 0,
    });
  });

  test("gc on an empty or missing store succeeds and creates nothing", async () => {
    using d = tempDir();
    const store = join(d.path, "none");
    expect(JSON.parse((await a2a(["gc", "--json"], { dir: store })).stdout)).toEqual({ expired: [], tombstones: 0, temp_files: 0, orphan_streams: [], stale_locks: [], claims_recovered: 0, tasks_removed: 0, leases_removed: 0, reservations_removed: 0, topic_messages_removed: 0, blobs_removed: 0, damaged: [] });
    expect(existsSync(store)).toBe(false);
  });
});
