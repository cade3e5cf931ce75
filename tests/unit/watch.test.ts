// lib/core/watch.ts and lib/core/inotify.ts: which event source a wait uses, and what happens
// when it fails. The compiled binary is checked through /proc (its watch is on its own
// inotify instance, with no fs.watch thread); the fallbacks in-process, each wait bounded.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../lib/core/config";
import { ensureDir } from "../../lib/core/guard";
import { slotsDir } from "../../lib/core/paths";
import { closeWatches, subscribe } from "../../lib/core/watch";
import { waitSlots } from "../../lib/slots/wait";
import { a2a, hasWatch, inotifyFds, inotifyInstances, spawnA2A, tempDir, until } from "../harness/run";

setDefaultTimeout(60_000);
const linux = process.platform === "linux";

const threadNames = (pid: number) => readdirSync(`/proc/${pid}/task`).map((t) => readFileSync(`/proc/${pid}/task/${t}/comm`, "utf8").trim());

const watchedInodes = (pid: number) => inotifyInstances(pid).flat();

// A record of slot `name` renamed into place by hand, as another process's publish would be.
function plantRecord(root: string, name: string, result: string): void {
  const now = Math.floor(Date.now() / 1000);
  const rec = { a2a: 1, name, state: "done", task: "", result, size: result.length, version: 1, started_at: now, published_at: now, updated_at: now, expires_at: null, chunks: 0, host: "test", pid: 1 };
  mkdirSync(join(root, "tmp"), { recursive: true, mode: 0o700 });
  writeFileSync(join(root, "tmp", `${name}.tmp`), JSON.stringify(rec) + "\n", { mode: 0o600 });
  renameSync(join(root, "tmp", `${name}.tmp`), join(root, "slots", `${name}.json`));
}

describe.if(linux)("on Linux", () => {
  test("a blocked `a2a wait` watches slots/ on its own inotify instance, with no fs.watch thread, and wakes on a publish", async () => {
    using d = tempDir();
    await using waiter = spawnA2A(["wait", "w"], { dir: d.path });
    const slots = join(d.path, "slots");
    await until(() => existsSync(slots) && watchedInodes(waiter.pid).includes(statSync(slots).ino), 20_000, "the waiter's watch on slots/");
    expect(threadNames(waiter.pid)).not.toContain("fs.watch");
    expect((await a2a(["publish", "w", "woken"], { dir: d.path })).code).toBe(0);
    expect(await new Response(waiter.stdout).text()).toBe("woken");
    expect(await waiter.exited).toBe(0);
  });

  test("one instance serves every directory a process watches, and closeWatches releases it", async () => {
    using d = tempDir();
    const store = openStore({ dir: d.path, env: {} });
    const before = inotifyFds(process.pid);
    const dirs = ["a", "b", "c"].map((n) => join(d.path, n));
    for (const dir of dirs) ensureDir(store, dir);
    const stops = dirs.map((dir) => subscribe(store, dir, () => {}));
    expect(store.inotify).toBeTruthy();
    const mine = inotifyInstances(process.pid).filter((inodes) => inodes.includes(statSync(dirs[0]).ino));
    expect(mine.map((inodes) => inodes.sort())).toEqual([dirs.map((dir) => statSync(dir).ino).sort()]);
    stops.forEach((s) => s());
    closeWatches(store);
    expect(store.inotify).toBeUndefined();
    await until(() => inotifyFds(process.pid) === before, 20_000, "the inotify fds closed");
  });

  test("a watched directory that goes away falls back to polling, which still sees it come back", async () => {
    using d = tempDir();
    const store = openStore({ dir: d.path, env: { A2A_POLL_MS: "20" } });
    const dir = join(d.path, "gone");
    ensureDir(store, dir);
    let calls = 0;
    const stop = subscribe(store, dir, () => calls++);
    try {
      rmdirSync(dir);
      const seen = calls;
      await until(() => calls > seen + 2, 20_000, "poll ticks after the directory went away");
    } finally {
      stop();
      closeWatches(store);
    }
  });
});

describe("where inotify is not to be had", () => {
  test("waits run on fs.watch and wake on a rename", async () => {
    using d = tempDir();
    const store = openStore({ dir: d.path, env: {} });
    store.inotify = null; // as on macOS, or where the instance limit is reached
    try {
      ensureDir(store, slotsDir(store));
      const waiting = waitSlots(store, ["f"], { timeoutMs: 30_000 });
      if (linux) await until(() => hasWatch(process.pid) && threadNames(process.pid).includes("fs.watch"), 20_000, "the fs.watch thread");
      plantRecord(d.path, "f", "through fs.watch");
      const o = await waiting;
      expect(o.kind).toBe("done");
      expect(o.value.get("f")?.result).toBe("through fs.watch");
    } finally {
      closeWatches(store);
    }
  });
});
