// lib/fs/watch.ts and lib/fs/inotify.ts: which event source a wait uses, and what happens
// when it fails. The compiled binary is checked through /proc (its watch is on its own
// inotify instance, with no fs.watch thread); the fallbacks in-process, each wait bounded.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../lib/engine/open";
import { ensureDir } from "../../lib/fs/guard";
import { slotsDir } from "../../lib/fs/paths";
import { closeWatches, subscribe } from "../../lib/fs/watch";
import { waitSlots } from "../../lib/slots/wait";
import { a2a, inotifyWatches, spawnA2A, tempDir, until } from "../harness/run";

setDefaultTimeout(60_000);
const linux = process.platform === "linux";

const threadNames = (pid: number) => readdirSync(`/proc/${pid}/task`).map((t) => readFileSync(`/proc/${pid}/task/${t}/comm`, "utf8").trim());
const watchedInodes = (pid: number) => inotifyWatches(pid).flatMap((f) => f.inodes);

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
    const dirs = ["a", "b", "c"].map((n) => join(d.path, n));
    for (const dir of dirs) ensureDir(store, dir);
    const before = new Set(inotifyWatches(process.pid).map((f) => f.fd));
    const stops = dirs.map((dir) => subscribe(store, dir, () => {}));
    expect(store.inotify).toBeTruthy();
    const mine = inotifyWatches(process.pid).filter((f) => !before.has(f.fd));
    // One instance: its fd and the duplicate Bun reads it through, each with all three watches.
    expect(mine.length).toBeGreaterThanOrEqual(1);
    expect(mine.length).toBeLessThanOrEqual(2);
    for (const f of mine) expect(f.inodes.sort()).toEqual(dirs.map((dir) => statSync(dir).ino).sort());
    stops.forEach((s) => s());
    closeWatches(store);
    expect(store.inotify).toBeUndefined();
    const stillOpen = () => new Set(inotifyWatches(process.pid).map((f) => f.fd));
    await until(() => mine.every((f) => !stillOpen().has(f.fd)), 20_000, "the instance's fds closed");
  });

  test("a watched directory that goes away is polled, and watched again once it is back", async () => {
    using d = tempDir();
    const store = openStore({ dir: d.path, env: { A2A_POLL_MS: "20" } });
    const dir = join(d.path, "gone");
    ensureDir(store, dir);
    const seen: (string | undefined)[] = [];
    const stop = subscribe(store, dir, (file) => seen.push(file));
    try {
      expect(store.watches.get(dir)?.wd).toBeDefined(); // on inotify, not fs.watch
      rmdirSync(dir);
      await until(() => seen.filter((f) => f === undefined).length >= 3, 20_000, "poll ticks after the directory went away");
      mkdirSync(dir, { mode: 0o700 });
      await until(() => store.watches.get(dir)?.wd !== undefined, 20_000, "the directory watched again");
      writeFileSync(join(dir, "back.json"), "{}\n");
      // Poll ticks carry no name: a named event is the new watch's.
      await until(() => seen.includes("back.json"), 20_000, "an event from the new watch");
    } finally {
      stop();
      closeWatches(store);
    }
  });
});

describe("a wait with nothing to wait for", () => {
  test("returns from its first check and makes no watch at all", async () => {
    using d = tempDir();
    const store = openStore({ dir: d.path, env: {} });
    try {
      ensureDir(store, slotsDir(store));
      plantRecord(d.path, "here", "already");
      const o = await waitSlots(store, ["here"], { timeoutMs: 30_000 });
      expect(o.kind).toBe("done");
      expect(o.value.get("here")?.result).toBe("already");
      expect(store.watches.size).toBe(0);
      expect(store.inotify).toBeUndefined();
      // One not there yet does make the watch (and is woken through it).
      const waiting = waitSlots(store, ["later"], { timeoutMs: 30_000 });
      await until(() => store.watches.size === 1, 20_000, "the wait's watch"); // made after its first (asynchronous) check
      plantRecord(d.path, "later", "woken");
      expect((await waiting).value.get("later")?.result).toBe("woken");
    } finally {
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
      // Once the watch is there, a rename is seen by the watch alone (there is no poll in watch
      // mode), so the wait ends only if fs.watch delivered it.
      const waiting = waitSlots(store, ["f"], { timeoutMs: 30_000 });
      await until(() => store.watches.has(slotsDir(store)), 20_000, "the wait's watch");
      const w = store.watches.get(slotsDir(store));
      expect(w?.watcher).toBeDefined();
      expect(w?.wd).toBeUndefined();
      expect(w?.polled).toBeUndefined();
      plantRecord(d.path, "f", "through fs.watch");
      const o = await waiting;
      expect(o.kind).toBe("done");
      expect(o.value.get("f")?.result).toBe("through fs.watch");
    } finally {
      closeWatches(store);
    }
  });
});
