// A crew worker's git worktree (lib/crew/worktree.ts) against real git repositories in temp dirs:
// made beside the user's checkout on branch a2a/NAME, reused when a2a's, refused when the path is
// anyone else's (left as it was), removed with its branch kept; and the user's checkout (files,
// index, HEAD, git status) byte for byte the same through all of it.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { tempDir } from "../harness/run";
import { A2AError } from "../../lib/core/errors";
import { commitLeftovers, ensureWorktree, isCrewWorktree, checkoutOf, keepOutOfCommits, removeWorktree, worktreePath, worktreeResult } from "../../lib/crew/worktree";

const GIT_ENV = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.org", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.org" };

function sh(cmd: string[], cwd: string): string {
  const r = Bun.spawnSync(cmd, { cwd, env: { ...process.env, ...GIT_ENV }, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr}`);
  return r.stdout.toString();
}

// A repository with a commit, a change staged and a change not: a user mid-work.
function userRepo(root: string): string {
  const repo = join(root, "app");
  mkdirSync(join(repo, "src"), { recursive: true });
  sh(["git", "init", "-q", "-b", "main", repo], root);
  writeFileSync(join(repo, "src", "a.ts"), "export const a = 1;\n");
  writeFileSync(join(repo, "README"), "app\n");
  sh(["git", "add", "."], repo);
  sh(["git", "commit", "-q", "-m", "first"], repo);
  writeFileSync(join(repo, "src", "a.ts"), "export const a = 2;\n");
  sh(["git", "add", "src/a.ts"], repo);
  writeFileSync(join(repo, "README"), "app, edited\n");
  writeFileSync(join(repo, "notes.txt"), "untracked\n");
  return repo;
}

// Everything of the user's checkout a worktree must not change.
function snapshot(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.name === ".git" && dir === repo) continue;
      if (e.isDirectory()) walk(p);
      else out[relative(repo, p)] = readFileSync(p, "base64") + ` ${statSync(p).mtimeMs}`;
    }
  };
  walk(repo);
  out[".git/index"] = readFileSync(join(repo, ".git", "index"), "base64");
  out[".git/HEAD"] = readFileSync(join(repo, ".git", "HEAD"), "utf8");
  out.status = sh(["git", "status", "--porcelain=v2", "--branch", "--untracked-files=all"], repo);
  out.head = sh(["git", "rev-parse", "HEAD"], repo);
  return out;
}

describe("a crew worker's worktree", () => {
  test("made beside the checkout on a2a/NAME from HEAD, reused, its commit reported, removed with the branch kept; the checkout untouched", () => {
    using d = tempDir();
    const repo = userRepo(d.path);
    const before = snapshot(repo);
    const w = ensureWorktree(repo, "ann");
    expect(w).toEqual({ path: join(d.path, "app.crew", "ann"), branch: "a2a/ann", created: true });
    expect(readFileSync(join(w.path, "src", "a.ts"), "utf8")).toBe("export const a = 1;\n"); // HEAD's, not the user's staged change
    expect(isCrewWorktree(checkoutOf(repo), w.path)).toBe(true);
    expect(sh(["git", "status", "--porcelain"], w.path)).toBe(""); // the marker is no file of the work tree
    // The worker's work: a commit on its branch.
    writeFileSync(join(w.path, "src", "b.ts"), "export const b = 1;\n");
    sh(["git", "add", "src/b.ts"], w.path);
    sh(["git", "commit", "-q", "-m", "b"], w.path);
    const commit = sh(["git", "rev-parse", "HEAD"], w.path).trim();
    expect(worktreeResult(w.path)).toEqual({ branch: "a2a/ann", commit });
    expect(ensureWorktree(repo, "ann")).toEqual({ ...w, created: false });
    expect(snapshot(repo)).toEqual(before);
    expect(removeWorktree(repo, "ann")).toBe(true);
    expect(existsSync(join(d.path, "app.crew"))).toBe(false);
    expect(sh(["git", "rev-parse", "refs/heads/a2a/ann"], repo).trim()).toBe(commit);
    expect(snapshot(repo)).toEqual(before);
    // Made again: the kept branch, with its work.
    const again = ensureWorktree(repo, "ann");
    expect(existsSync(join(again.path, "src", "b.ts"))).toBe(true);
    expect(removeWorktree(repo, "ann")).toBe(true);
    expect(removeWorktree(repo, "ann")).toBe(false);
    expect(snapshot(repo)).toEqual(before);
  });

  test("a path taken by a user's directory, or by a worktree a2a did not make, is refused and left as it was", () => {
    using d = tempDir();
    const repo = userRepo(d.path);
    const before = snapshot(repo);
    const taken = join(d.path, "app.crew", "bob");
    mkdirSync(taken, { recursive: true });
    writeFileSync(join(taken, "mine.txt"), "the user's\n");
    const refused = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as A2AError;
      }
      throw new Error("not refused");
    };
    for (const f of [() => ensureWorktree(repo, "bob"), () => removeWorktree(repo, "bob")]) {
      const e = refused(f);
      expect(e).toBeInstanceOf(A2AError);
      expect(e.code).toBe("EUSAGE");
      expect(e.message).toBe(`${taken} exists and is not an a2a crew worktree: move it aside, or give the crew another worktree directory; nothing was changed`);
    }
    expect(readdirSync(taken)).toEqual(["mine.txt"]);
    expect(sh(["git", "branch", "--list", "a2a/*"], repo)).toBe("");
    // The user's own worktree at the path: git's, not a2a's.
    const own = join(d.path, "app.crew", "cy");
    sh(["git", "worktree", "add", "-q", "-b", "cy-work", own], repo);
    expect(refused(() => ensureWorktree(repo, "cy")).code).toBe("EUSAGE");
    expect(refused(() => removeWorktree(repo, "cy")).code).toBe("EUSAGE");
    expect(existsSync(join(own, "README"))).toBe(true);
    // A directory inside the checkout is refused before anything is made.
    expect(refused(() => ensureWorktree(repo, "dee", { dir: "crew" })).message).toMatch(/is inside your checkout .*: give the crew a worktree directory outside it$/);
    sh(["git", "worktree", "remove", own], repo);
    sh(["git", "branch", "-D", "cy-work"], repo);
    expect(snapshot(repo)).toEqual(before);
  });

  test("a configured directory and base; outside git the error names the fix", () => {
    using d = tempDir();
    const repo = userRepo(d.path);
    const first = sh(["git", "rev-parse", "HEAD"], repo).trim();
    const c = checkoutOf(repo);
    expect(worktreePath(c, "eve", join(d.path, "workers"))).toBe(join(d.path, "workers", "eve"));
    const w = ensureWorktree(repo, "eve", { dir: join(d.path, "workers"), base: first });
    expect(worktreeResult(w.path)).toEqual({ branch: "a2a/eve", commit: first });
    expect(removeWorktree(repo, "eve", { dir: join(d.path, "workers") })).toBe(true);
    expect(existsSync(join(d.path, "workers"))).toBe(true); // a directory the crew named stays
    const plain = join(d.path, "plain");
    mkdirSync(plain);
    expect(() => ensureWorktree(plain, "x")).toThrow(/is not in a git repository, so a worker cannot have a worktree there/);
  });

  test("a run's own settings files stay out of the worker's commits and status, by what is the worktree's alone; what the agent left is committed after", () => {
    using d = tempDir();
    const repo = userRepo(d.path);
    writeFileSync(join(repo, "tool.json"), "{}\n");
    sh(["git", "add", "tool.json"], repo);
    sh(["git", "commit", "-q", "-m", "tool"], repo);
    const before = snapshot(repo);
    const w = ensureWorktree(repo, "fay");
    // Untracked: a .gitignore beside it names it and itself. Tracked: skip-worktree in the worktree's index.
    mkdirSync(join(w.path, ".agent"));
    writeFileSync(join(w.path, ".agent", "settings.json"), "{\"a2a\": 1}\n");
    keepOutOfCommits(w.path, ".agent/settings.json");
    keepOutOfCommits(w.path, ".agent/settings.json"); // twice changes nothing
    expect(readFileSync(join(w.path, ".agent", ".gitignore"), "utf8")).toBe("# a2a crew: this worker's own settings, kept out of its commits\n/settings.json\n/.gitignore\n");
    writeFileSync(join(w.path, "tool.json"), "{\"a2a\": 1}\n");
    keepOutOfCommits(w.path, "tool.json");
    expect(sh(["git", "status", "--porcelain", "--untracked-files=all"], w.path)).toBe("");
    writeFileSync(join(w.path, "work.txt"), "done\n");
    expect(commitLeftovers(w.path, "fay", "task t attempt 1")).toBe(true);
    expect(sh(["git", "show", "--name-only", "--format=%s", "HEAD"], w.path).trim().split("\n")).toEqual(["task t attempt 1", "", "work.txt"]);
    expect(commitLeftovers(w.path, "fay", "again")).toBe(false);
    expect(snapshot(repo)).toEqual(before); // the user's checkout ignores nothing new
    expect(removeWorktree(repo, "fay")).toBe(true); // its ignored and skip-worktree files go with it
  });
});
