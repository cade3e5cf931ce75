// lib/fs/task-sweep.ts (run by `a2a gc`): old final task chains and old free lease chains go as
// a whole; a done task an unfinished task depends on stays, and so does anything recent,
// claimed, held, or foreign. "Old" is decided by the `now` passed in, so nothing waits.
// Also lib/tasks/query.ts claimable(): what a claim would find, without writing anything.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Store } from "../../lib/core/config";
import { openStore } from "../../lib/engine/open";
import { closeWatches } from "../../lib/fs/watch";
import { addTask } from "../../lib/tasks/add";
import { claimTask, type TaskClaim } from "../../lib/tasks/claim";
import { completeTask, failTask } from "../../lib/tasks/holder";
import { listLeases, releaseLeases, takeLeases } from "../../lib/leases/lease";
import { claimable, listTasks } from "../../lib/tasks/query";
import { DEAD_KEEP_SEC, LEASE_KEEP_SEC, sweepTasksAndLeases, TASK_KEEP_SEC } from "../../lib/fs/task-sweep";
import { nowSec } from "../../lib/core/time";

const stores: Store[] = [];
function fresh(): Store {
  const s = openStore({ dir: mkdtempSync(join(tmpdir(), "a2a-sweep-")), env: {} });
  stores.push(s);
  return s;
}
afterEach(() => {
  for (const s of stores.splice(0)) {
    closeWatches(s);
    rmSync(s.root, { recursive: true, force: true });
  }
});

const claim = async (s: Store, q: string) => (await claimTask(s, q, { as: "w" })).value as TaskClaim;
const doneOne = async (s: Store, q: string, payload: string, opts = {}) => {
  const a = await addTask(s, q, payload, opts);
  const c = await claim(s, q);
  expect(c.id).toBe(a.id);
  await completeTask(s, a.id, c.token, "r");
  return a.id;
};

describe("sweep", () => {
  test("pending markers: an old one naming no task goes, a recent one stays, one whose task exists is promoted", async () => {
    const s = fresh();
    const open = join(s.root, "tasks", "q", "@open");
    const a = await addTask(s, "q", "whole");
    renameSync(join(open, a.id), join(open, "." + a.id)); // crashed between version 1 and the rename
    const ghost = "1796040000123456-3fa9c0d2"; // crashed before version 1
    writeFileSync(join(open, "." + ghost), "");
    sweepTasksAndLeases(s, nowSec());
    expect(readdirSync(open).sort()).toEqual(["." + ghost, a.id]);
    sweepTasksAndLeases(s, nowSec() + 2 * 3600);
    expect(readdirSync(open)).toEqual([a.id]);
  });

  test("old done and dead tasks go whole (with their key); recent, unfinished and depended-on ones stay", async () => {
    const s = fresh();
    const old = await doneOne(s, "q", "old", { key: "k-old" });
    const base = await doneOne(s, "q", "base");
    const dead = (await addTask(s, "q", "dies", { maxAttempts: 1 })).id;
    const c = await claim(s, "q");
    expect(c.id).toBe(dead);
    await failTask(s, c.id, c.token, { reason: "no" });
    await addTask(s, "q", "waits for base", { after: [base] }); // ready, not final
    const now = nowSec();

    expect(sweepTasksAndLeases(s, now + 60)).toEqual({ tasks: 0, leases: 0, damaged: [] }); // nothing old yet
    const r = sweepTasksAndLeases(s, now + TASK_KEEP_SEC + 60);
    expect(r.tasks).toBe(1);
    expect(existsSync(join(s.root, "tasks", "q", old))).toBe(false);
    expect(readdirSync(join(s.root, "tasks", "q", "@keys"))).toEqual([]); // its key went with it
    expect(existsSync(join(s.root, "tasks", "q", base))).toBe(true); // a dependant is not final
    // An add with the old key now makes a new task.
    expect((await addTask(s, "q", "old again", { key: "k-old" })).created).toBe(true);

    // Dead letters are kept longer.
    const later = sweepTasksAndLeases(s, now + DEAD_KEEP_SEC + 60);
    const left = (await listTasks(s, { queue: "q" })).map((t) => t.payload);
    expect(later.tasks).toBe(1);
    expect(left).not.toContain("dies");
    expect(left).toContain("waits for base");
    expect(left).toContain("base"); // still depended on by an unfinished task
  });

  test("free lease chains go after a day; held ones stay", async () => {
    const s = fresh();
    await takeLeases(s, ["a", "b"], { as: "x", ttlSec: 10 * 86400 });
    await releaseLeases(s, ["a"], { as: "x" });
    const now = nowSec();
    expect(sweepTasksAndLeases(s, now + 60).leases).toBe(0);
    expect(sweepTasksAndLeases(s, now + LEASE_KEEP_SEC + 60).leases).toBe(1);
    expect(readdirSync(join(s.root, "leases"))).toEqual(["b"]);
    expect((await listLeases(s)).map((l) => l.name)).toEqual(["b"]);
    // The name can be taken again from nothing.
    expect((await takeLeases(s, ["a"], { as: "y" })).value?.map((l) => l.holder)).toEqual(["y"]);
  });

  test("a long-running process that knew a swept lease's directory takes the name again", async () => {
    const gc = fresh();
    const server = openStore({ dir: gc.root, env: {} }); // another process's view: its own known directories
    stores.push(server);
    await takeLeases(server, ["c"], { as: "srv" });
    await releaseLeases(server, ["c"], { as: "srv" });
    expect(sweepTasksAndLeases(gc, nowSec() + LEASE_KEEP_SEC + 60).leases).toBe(1);
    expect(existsSync(join(gc.root, "leases", "c"))).toBe(false);
    expect((await takeLeases(server, ["c"], { as: "srv" })).value?.map((l) => l.name)).toEqual(["c"]);
    expect((await listLeases(gc)).map((l) => l.holder)).toEqual(["srv"]);
  });
});

describe("claimable", () => {
  test("counts what a claim would hand out, per queue, oldest first, writing nothing", async () => {
    const s = fresh();
    expect((await claimable(s))).toEqual([]);
    const a = (await addTask(s, "build", "a")).id;
    await addTask(s, "build", "b");
    await addTask(s, "build", "blocked", { after: [a] });
    await addTask(s, "docs", "d");
    await claim(s, "docs");
    expect((await claimable(s))).toEqual([{ queue: "build", claimable: 2, oldest_id: a, oldest_created_at: expect.any(Number) }]);
    expect((await claimable(s, ["docs", "nosuch"]))).toEqual([]);
    await expect(claimable(s, ["bad/name"])).rejects.toThrow(/queue name/);
  });
});
