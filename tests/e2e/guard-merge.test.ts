// The git guard against the ways a commit reaches a branch other than `git commit` (issue 32,
// item 8), with real git through the compiled binary: `git merge` runs the pre-merge-commit hook
// and is refused; a fast-forward, a cherry-pick and a merge made with --no-verify make commits
// no commit hook sees, and the push carrying them is refused, whatever made them; an origin
// added after the reservation changes nothing (issue 33, item 3).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { a2a, childEnv, tempDir, testStore } from "../harness/run";

setDefaultTimeout(60_000);

const IDENTITY = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t", GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };

function git(cwd: string, args: string[], o: { store?: string; agent?: string } = {}) {
  const env = childEnv({ dir: o.store, env: { ...IDENTITY, A2A_AGENT: o.agent } });
  const r = Bun.spawnSync(["git", "-c", "init.defaultBranch=main", ...args], { cwd, env, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}
function ok(cwd: string, args: string[], o: Parameters<typeof git>[2] = {}): string {
  const r = git(cwd, args, o);
  if (r.code !== 0) throw new Error(`git ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.stdout.trim();
}
function edit(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
  ok(root, ["add", path]);
}

// main (README.md, src/api.ts) pushed to a bare origin, and a branch `feature` changing
// src/api.ts, pushed too, both before anyone reserved anything; the guard installed.
async function setUp(base: string, store: string) {
  const root = join(base, "repo");
  const bare = join(base, "origin.git");
  mkdirSync(join(root, "src"), { recursive: true });
  ok(base, ["init", "-q", "--bare", bare]);
  ok(root, ["init", "-q"]);
  ok(root, ["remote", "add", "origin", bare]);
  edit(root, "README.md", "hello\n");
  edit(root, "src/api.ts", "export {};\n");
  ok(root, ["commit", "-qm", "one"]);
  ok(root, ["checkout", "-q", "-b", "feature"]);
  edit(root, "src/api.ts", "export const feature = 1;\n");
  ok(root, ["commit", "-qm", "feature"]);
  ok(root, ["push", "-q", "origin", "main", "feature"]);
  ok(root, ["checkout", "-q", "main"]);
  expect(await a2a(["guard", "install"], { dir: store, cwd: root })).toMatchObject({ code: 0 });
  expect(await a2a(["reserve", "src/api.ts", "--as", "alice", "--reason", "api rework"], { dir: store, cwd: root })).toMatchObject({ code: 0 });
  return { root, bare };
}

describe("the guard beyond git commit", () => {
  test("git merge bringing a reserved change is refused by pre-merge-commit; --no-verify bypasses it, and the push of the merge is refused", async () => {
    using d = tempDir();
    using store = testStore();
    const { root, bare } = await setUp(d.path, store.path);
    const bob = { store: store.path, agent: "bob" };
    edit(root, "README.md", "bob's\n");
    ok(root, ["commit", "-qm", "bob"], bob);
    const before = ok(root, ["rev-parse", "HEAD"]);
    const refused = git(root, ["merge", "--no-edit", "feature"], bob);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("a2a guard: src/api.ts is reserved by alice (pattern src/api.ts");
    expect(refused.stderr).toContain("git merge --no-verify");
    expect(ok(root, ["rev-parse", "HEAD"])).toBe(before);
    ok(root, ["merge", "--abort"]);
    // Bypassed at merge time, caught on the way out; the holder's own push goes.
    ok(root, ["merge", "-q", "--no-edit", "--no-verify", "feature"], bob);
    const push = git(root, ["push", "-q", "origin", "main"], bob);
    expect(push.code).not.toBe(0);
    expect(push.stderr).toContain("src/api.ts is reserved by alice");
    expect(git(root, ["push", "-q", "origin", "main"], { store: store.path, agent: "alice" })).toMatchObject({ code: 0 });
    expect(ok(bare, ["rev-parse", "main"])).toBe(ok(root, ["rev-parse", "HEAD"]));
  });

  test("a fast-forward and a cherry-pick (no commit hook runs) carry a reserved change the remote holds on another branch: their push is refused", async () => {
    using d = tempDir();
    using store = testStore();
    const { root, bare } = await setUp(d.path, store.path);
    const bob = { store: store.path, agent: "bob" };
    const published = ok(bare, ["rev-parse", "main"]);
    expect(git(root, ["merge", "-q", "--ff-only", "feature"], bob)).toMatchObject({ code: 0 }); // no hook: advisory here
    const ff = git(root, ["push", "-q", "origin", "main"], bob);
    expect(ff.code).not.toBe(0);
    expect(ff.stderr).toContain("src/api.ts is reserved by alice");
    expect(ok(bare, ["rev-parse", "main"])).toBe(published);

    ok(root, ["reset", "-q", "--hard", published]);
    expect(git(root, ["cherry-pick", "feature"], bob)).toMatchObject({ code: 0 }); // no hook: advisory here
    const picked = git(root, ["push", "-q", "origin", "main"], bob);
    expect(picked.code).not.toBe(0);
    expect(picked.stderr).toContain("src/api.ts is reserved by alice");
    expect(ok(bare, ["rev-parse", "main"])).toBe(published);
  });

  test("a merge whose resolution edits a reserved file (its combined diff) is refused at push; a clean merge of free paths pushes", async () => {
    using d = tempDir();
    using store = testStore();
    const { root } = await setUp(d.path, store.path);
    const bob = { store: store.path, agent: "bob" };
    ok(root, ["checkout", "-q", "-b", "docs"]);
    edit(root, "docs/a.md", "a\n");
    ok(root, ["commit", "-qm", "docs"], bob);
    ok(root, ["push", "-q", "origin", "docs"], bob);
    ok(root, ["checkout", "-q", "main"]);
    edit(root, "README.md", "main\n");
    ok(root, ["commit", "-qm", "main"], bob);
    ok(root, ["merge", "-q", "--no-commit", "docs"], bob);
    edit(root, "src/api.ts", "export const slipped = 1;\n");
    ok(root, ["commit", "-qm", "merge docs", "--no-verify"], bob);
    const evil = git(root, ["push", "-q", "origin", "main"], bob);
    expect(evil.code).not.toBe(0);
    expect(evil.stderr).toContain("src/api.ts is reserved by alice");
    ok(root, ["reset", "-q", "--hard", "HEAD^1"]);
    expect(git(root, ["merge", "-q", "--no-edit", "docs"], bob)).toMatchObject({ code: 0, stderr: "" });
    expect(git(root, ["push", "-q", "origin", "main"], bob)).toMatchObject({ code: 0 });
  });

  test("an origin added after the reservation: the commit and the push are still refused", async () => {
    using d = tempDir();
    using store = testStore();
    const root = join(d.path, "solo");
    mkdirSync(join(root, "src"), { recursive: true });
    ok(root, ["init", "-q"]);
    edit(root, "src/api.ts", "export {};\n");
    ok(root, ["commit", "-qm", "one"]);
    expect(await a2a(["guard", "install"], { dir: store.path, cwd: root })).toMatchObject({ code: 0 });
    expect(await a2a(["reserve", "src/api.ts", "--as", "alice"], { dir: store.path, cwd: root })).toMatchObject({ code: 0 });
    const bare = join(d.path, "later.git");
    ok(d.path, ["init", "-q", "--bare", bare]);
    ok(root, ["remote", "add", "origin", bare]);
    const listed = await a2a(["reservations"], { dir: store.path, cwd: root });
    expect(listed.stdout).toMatch(/src\/api\.ts\s+alice/);
    edit(root, "src/api.ts", "export const bob = 1;\n");
    const bob = { store: store.path, agent: "bob" };
    expect(git(root, ["commit", "-qm", "bob"], bob).code).toBe(1);
    ok(root, ["commit", "-qm", "bob", "--no-verify"], bob);
    const push = git(root, ["push", "-q", "origin", "main"], bob);
    expect(push.code).not.toBe(0);
    expect(push.stderr).toContain("src/api.ts is reserved by alice");
  });
});
