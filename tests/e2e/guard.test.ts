// `a2a guard` with real git through the compiled binary: the hooks chain a hook already there
// (it still runs, and can still refuse), refuse a commit or a push touching a path another
// agent reserved (naming the holder), let free and own paths through, in a linked worktree
// too, honour --no-verify, fail open when the store cannot be opened, and uninstall puts back
// the original hook byte for byte. The store is testStore(): the PostgreSQL pass covers it.
import { describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { a2a, BIN, childEnv, tempDir, testStore } from "../harness/run";

const IDENTITY = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t", GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };

// git in `cwd` with the store and agent the hooks see; the result, never thrown.
function git(cwd: string, args: string[], o: { store?: string; agent?: string; env?: Record<string, string | undefined> } = {}) {
  const env = childEnv({ dir: o.store, env: { ...IDENTITY, A2A_AGENT: o.agent, ...o.env } });
  const r = Bun.spawnSync(["git", "-c", "init.defaultBranch=main", ...args], { cwd, env, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}
function ok(cwd: string, args: string[], o: Parameters<typeof git>[2] = {}): string {
  const r = git(cwd, args, o);
  if (r.code !== 0) throw new Error(`git ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.stdout.trim();
}

// A repository with one commit (README.md, src/api.ts), an origin at a local bare repository.
function repo(base: string): { root: string; bare: string } {
  const root = join(base, "repo");
  const bare = join(base, "origin.git");
  mkdirSync(join(root, "src"), { recursive: true });
  ok(base, ["init", "-q", "--bare", bare]);
  ok(root, ["init", "-q"]);
  ok(root, ["remote", "add", "origin", bare]);
  writeFileSync(join(root, "README.md"), "hello\n");
  writeFileSync(join(root, "src", "api.ts"), "export {};\n");
  ok(root, ["add", "."]);
  ok(root, ["commit", "-qm", "one"]);
  return { root, bare };
}

function edit(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
  ok(root, ["add", path]);
}

const count = (root: string) => Number(ok(root, ["rev-list", "--count", "HEAD"]));

async function reserve(store: string, cwd: string, as: string, ...patterns: string[]): Promise<void> {
  const r = await a2a(["reserve", ...patterns, "--as", as, "--reason", "api rework", "--ttl", "1h"], { dir: store, cwd });
  expect(r).toMatchObject({ code: 0 });
}

// What a directory holds: each entry's bytes (base64), mode and inode.
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of readdirSync(dir).sort()) {
    const st = statSync(join(dir, n));
    out[n] = `${st.mode.toString(8)} ${st.ino} ${readFileSync(join(dir, n)).toString("base64")}`;
  }
  return out;
}

describe("a2a guard install and uninstall", () => {
  test("an existing pre-commit hook is chained: it still runs and can still refuse; install twice changes nothing; uninstall restores it byte for byte", async () => {
    using d = tempDir();
    using store = testStore();
    const { root } = repo(d.path);
    const hooks = join(root, ".git", "hooks");
    const marker = join(d.path, "marker");
    const theirs = `#!/bin/sh\n# the project's own hook\necho ran >> '${marker}'\n[ -z "$REFUSE" ] || { echo "own hook refuses" >&2; exit 1; }\n`;
    writeFileSync(join(hooks, "pre-commit"), theirs);
    chmodSync(join(hooks, "pre-commit"), 0o750);
    const before = snapshot(hooks);

    const first = await a2a(["guard", "install"], { dir: store.path, cwd: join(root, "src") });
    expect(first).toMatchObject({ code: 0, stderr: "" });
    expect(first.stdout).toContain("pre-commit.a2a-chained");
    expect(readFileSync(join(hooks, "pre-commit.a2a-chained"), "utf8")).toBe(theirs);
    expect(statSync(join(hooks, "pre-commit.a2a-chained")).mode & 0o777).toBe(0o750);
    const installed = snapshot(hooks);
    const again = await a2a(["guard", "install", "--repo", root], { dir: store.path, cwd: d.path });
    expect(again).toMatchObject({ code: 0 });
    expect(again.stdout).toContain("unchanged");
    expect(snapshot(hooks)).toEqual(installed);

    edit(root, "notes.md", "free\n");
    expect(git(root, ["commit", "-qm", "free"], { store: store.path, agent: "bob" })).toMatchObject({ code: 0 });
    expect(readFileSync(marker, "utf8")).toBe("ran\n");
    expect(count(root)).toBe(2);
    edit(root, "notes.md", "refused by the own hook\n");
    const refused = git(root, ["commit", "-qm", "no"], { store: store.path, agent: "bob", env: { REFUSE: "1" } });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("own hook refuses");
    expect(readFileSync(marker, "utf8")).toBe("ran\nran\n");
    expect(count(root)).toBe(2);

    const un = await a2a(["guard", "uninstall"], { dir: store.path, cwd: root });
    expect(un).toMatchObject({ code: 0 });
    expect(snapshot(hooks)).toEqual(before); // bytes, mode and the very file (inode)
    expect((await a2a(["guard", "uninstall"], { dir: store.path, cwd: root })).stdout).toContain("nothing to remove");
  });

  test("a worktree installs into the shared hooks; core.hooksPath is honoured; a chained name already taken is refused, nothing changed", async () => {
    using d = tempDir();
    using store = testStore();
    const { root } = repo(d.path);
    const wt = join(d.path, "wt");
    ok(root, ["worktree", "add", "-q", "-b", "side", wt]);
    expect(await a2a(["guard", "install"], { dir: store.path, cwd: wt })).toMatchObject({ code: 0 });
    expect(existsSync(join(root, ".git", "hooks", "pre-commit"))).toBe(true);
    expect(existsSync(join(root, ".git", "hooks", "pre-push"))).toBe(true);

    ok(root, ["config", "core.hooksPath", "myhooks"]);
    expect(await a2a(["guard", "install"], { dir: store.path, cwd: root })).toMatchObject({ code: 0 });
    expect(readFileSync(join(root, "myhooks", "pre-push"), "utf8")).toContain("guard pre-push \"$@\"");

    const other = join(d.path, "other");
    mkdirSync(other);
    ok(other, ["init", "-q"]);
    const h = join(other, ".git", "hooks");
    writeFileSync(join(h, "pre-commit"), "#!/bin/sh\nexit 0\n");
    writeFileSync(join(h, "pre-commit.a2a-chained"), "#!/bin/sh\nexit 1\n");
    const before = snapshot(h);
    const r = await a2a(["guard", "install"], { dir: store.path, cwd: other });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("pre-commit.a2a-chained is there already");
    expect(snapshot(h)).toEqual(before);
  });
});

describe("the hooks against reservations", () => {
  test("a commit touching a path another agent reserved is refused naming the holder; free and own paths commit; the same in a worktree; --no-verify bypasses", async () => {
    using d = tempDir();
    using store = testStore();
    const { root } = repo(d.path);
    expect(await a2a(["guard", "install"], { dir: store.path, cwd: root })).toMatchObject({ code: 0 });
    await reserve(store.path, root, "alice", "src/**");

    edit(root, "src/api.ts", "export const bob = 1;\n");
    const refused = git(root, ["commit", "-qm", "bob's"], { store: store.path, agent: "bob" });
    expect(refused.code).toBe(1);
    const lines = refused.stderr.trim().split("\n");
    expect(lines[0]).toContain("src/api.ts is reserved by alice (pattern src/**, reason \"api rework\") until ");
    expect(lines[lines.length - 1]).toContain("git commit --no-verify");
    expect(lines[lines.length - 1]).toContain("advisory");
    expect(count(root)).toBe(1);
    // git commit -a and git commit PATH stage into a temporary index (GIT_INDEX_FILE): seen too.
    ok(root, ["reset", "-q"]);
    expect(git(root, ["commit", "-qam", "all"], { store: store.path, agent: "bob" }).code).toBe(1);
    expect(git(root, ["commit", "-qm", "path", "src/api.ts"], { store: store.path, agent: "bob" }).code).toBe(1);
    expect(count(root)).toBe(1);

    // A rename counts on both sides: moving the reserved file away is refused too.
    ok(root, ["reset", "-q"]);
    ok(root, ["checkout", "-q", "--", "src/api.ts"]);
    ok(root, ["mv", "src/api.ts", "api.ts"]);
    const moved = git(root, ["commit", "-qm", "move"], { store: store.path, agent: "bob" });
    expect(moved.code).toBe(1);
    expect(moved.stderr).toContain("src/api.ts is reserved by alice");
    ok(root, ["reset", "-q", "--hard"]);

    edit(root, "README.md", "free\n");
    expect(git(root, ["commit", "-qm", "free"], { store: store.path, agent: "bob" })).toMatchObject({ code: 0, stderr: "" });
    edit(root, "src/api.ts", "export const alice = 1;\n");
    expect(git(root, ["commit", "-qm", "own"], { store: store.path, agent: "alice" })).toMatchObject({ code: 0, stderr: "" });
    expect(count(root)).toBe(3);

    const wt = join(d.path, "wt");
    ok(root, ["worktree", "add", "-q", "-b", "side", wt]);
    edit(wt, "src/api.ts", "export const fromWorktree = 1;\n");
    const inWt = git(wt, ["commit", "-qm", "bob in a worktree"], { store: store.path, agent: "bob" });
    expect(inWt.code).toBe(1);
    expect(inWt.stderr).toContain("reserved by alice");
    expect(git(wt, ["commit", "-qm", "bypass", "--no-verify"], { store: store.path, agent: "bob" })).toMatchObject({ code: 0 });
    edit(wt, "docs/x.md", "free\n");
    expect(git(wt, ["commit", "-qm", "free in a worktree"], { store: store.path, agent: "bob" })).toMatchObject({ code: 0 });
  });

  test("pre-push refuses a push of a commit made with --no-verify touching a reserved path; a new branch of free paths pushes", async () => {
    using d = tempDir();
    using store = testStore();
    const { root, bare } = repo(d.path);
    ok(root, ["push", "-q", "origin", "main"]);
    expect(await a2a(["guard", "install"], { dir: store.path, cwd: root })).toMatchObject({ code: 0 });
    await reserve(store.path, root, "alice", "src/api.ts");
    const published = ok(bare, ["rev-parse", "main"]);

    edit(root, "src/api.ts", "export const sneaky = 1;\n");
    ok(root, ["commit", "-qm", "sneaky", "--no-verify"], { store: store.path, agent: "bob" });
    const refused = git(root, ["push", "-q", "origin", "main"], { store: store.path, agent: "bob" });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("src/api.ts is reserved by alice (pattern src/api.ts");
    expect(refused.stderr).toContain("git push --no-verify");
    expect(ok(bare, ["rev-parse", "main"])).toBe(published);

    // A new branch from what the remote has, with free paths only: its base is not re-checked.
    ok(root, ["checkout", "-q", "-b", "docs", "origin/main"]);
    edit(root, "docs/guide.md", "free\n");
    ok(root, ["commit", "-qm", "docs"], { store: store.path, agent: "bob" });
    expect(git(root, ["push", "-q", "origin", "docs"], { store: store.path, agent: "bob" })).toMatchObject({ code: 0 });
    expect(ok(bare, ["rev-parse", "docs"])).toBe(ok(root, ["rev-parse", "HEAD"]));

    // The holder herself pushes it.
    ok(root, ["checkout", "-q", "main"]);
    expect(git(root, ["push", "-q", "origin", "main"], { store: store.path, agent: "alice" })).toMatchObject({ code: 0 });
  });

  test("when the store cannot be opened or a2a is gone, the commit goes ahead with a warning; a binary moved away is found on PATH", async () => {
    using d = tempDir();
    using store = testStore();
    const { root } = repo(d.path);
    const copy = join(d.path, "bin", "a2a");
    mkdirSync(dirname(copy));
    copyFileSync(BIN, copy);
    chmodSync(copy, 0o755);
    expect(await a2a(["guard", "install"], { dir: store.path, cwd: root, bin: copy })).toMatchObject({ code: 0 });
    await reserve(store.path, root, "alice", "src");

    const notADir = join(d.path, "a-file");
    writeFileSync(notADir, "not a store");
    edit(root, "src/api.ts", "1\n");
    const open = git(root, ["commit", "-qm", "unchecked"], { store: notADir, agent: "bob" });
    expect(open.code).toBe(0);
    expect(open.stderr).toContain("a2a guard: could not check the commit against reservations");
    expect(open.stderr).toContain("commit not checked");

    rmSync(copy);
    edit(root, "src/api.ts", "2\n");
    const viaPath = git(root, ["commit", "-qm", "checked via PATH"], { store: store.path, agent: "bob", env: { PATH: `${dirname(BIN)}:${process.env.PATH}` } });
    expect(viaPath.code).toBe(1);
    expect(viaPath.stderr).toContain("reserved by alice");
    const gone = git(root, ["commit", "-qm", "no a2a"], { store: store.path, agent: "bob", env: { PATH: "/usr/bin:/bin" } });
    expect(gone.code).toBe(0);
    expect(gone.stderr).toContain("not checked for reservations");
  });
});
