// `a2a crew up` against what a real repository may hold around it (issue 36, r3's review), through
// the compiled binary with a stand-in agent on PATH: whatever the crew is given, the user's
// checkout is never where a worker's worktree goes, and a refusal leaves everything as it was.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { collect, exitWithin, spawnA2A, tempDir, testStore, type RunOptions } from "../harness/run";
import { expectCleanError } from "./fixtures/core";
import { sh, snapshot, userRepo } from "./fixtures/crew";

setDefaultTimeout(120_000);

// A stand-in `claude` on PATH (crew up only checks it is there before it refuses).
function fakeAgent(root: string): string {
  const bin = join(root, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "claude"), "#!/bin/sh\nexit 1\n");
  chmodSync(join(bin, "claude"), 0o755);
  return `${bin}:${process.env.PATH}`;
}

// `a2a crew up` that must be refused: one that starts instead is stopped (Ctrl-C's SIGTERM) and
// the test fails on it, rather than running until the test's own time limit.
async function refusedUp(file: string, o: RunOptions) {
  const p = spawnA2A(["crew", "up", file], o);
  try {
    await exitWithin(p, 30_000);
  } catch (e) {
    p.kill("SIGTERM");
    await p.exited;
    throw e;
  }
  return collect(p);
}

describe("crew up: a worker's worktree is never inside the user's checkout", () => {
  for (const [what, target] of [["the checkout itself", "app"], ["its git directory", "app/.git"]] as const) {
    test(`REPO.crew a symlink to ${what}: refused in one line, exit 2, nothing made`, async () => {
      using d = tempDir();
      using store = testStore();
      const repo = userRepo(d.path);
      symlinkSync(join(d.path, target), join(d.path, "app.crew"));
      writeFileSync(join(repo, "crew.toml"), 'lease = "3s"\n[[worker]]\nname = "ann"\nagent = "claude"\nqueues = ["q"]\n');
      const before = snapshot(repo);
      const r = await refusedUp(join(repo, "crew.toml"), { dir: store.path, env: { PATH: fakeAgent(d.path) } });
      expectCleanError(r, 2, /app\.crew\/ann \(.*\) is inside your checkout .*: give the crew a worktree directory outside it/);
      expect(existsSync(join(d.path, target, "ann"))).toBe(false);
      expect(sh(["git", "branch", "--list", "a2a/*"], repo)).toBe("");
      expect(sh(["git", "worktree", "list", "--porcelain"], repo).match(/^worktree /gm)!.length).toBe(1);
      expect(snapshot(repo)).toEqual(before);
    });
  }
});
