// A crew worker's git worktree: branch a2a/NAME checked out in a directory beside the user's
// checkout (REPO.crew/NAME next to REPO, or NAME under a directory the crew names), where the
// worker's agent edits and commits. git itself makes and removes it (`git worktree add/remove`),
// so the repository knows it as any other worktree: it shares the common git directory, hence the
// reservations' repository (lib/reservations/repo.ts), and its commits are on its branch.
//
// Invariants:
// - the user's checkout is never touched: not its files, index, HEAD nor status (a worktree adds
//   only git's own bookkeeping under the common git directory: worktrees/ID and the branch);
// - a directory is a2a's when it is a linked worktree of this repository whose private git
//   directory holds MARKER (a file git ignores, written right after `git worktree add`): only
//   such a directory is reused or removed; anything else at the path is the user's, refused with
//   EUSAGE naming the path and the fix, and left as it was;
// - removing takes the worktree and its directory away, never the branch: it holds the work;
// - git runs without the caller's GIT_DIR, GIT_WORK_TREE and the like (a supervisor started from a
//   git hook must not aim git at another repository), never through a shell.

import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmdirSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { A2AError } from "../core/errors";
import { isValidName, NAME_RULE } from "../core/names";
import { writeUserFile } from "../core/user-file";

export const MARKER = "a2a-crew";
export const branchOf = (name: string) => `a2a/${name}`;

const LOCATING = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX"];

function gitEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !LOCATING.includes(k)) env[k] = v;
  return env;
}

// `git ARGS` in `cwd`: its stdout, trimmed; a failure is one line with git's first complaint. In
// a session of its own: a terminal's Ctrl-C (sent to its whole foreground group) is a2a's to
// handle, and must not kill git halfway through making or removing a worktree.
export function git(args: string[], cwd: string): string {
  let r;
  try {
    r = Bun.spawnSync(["git", ...args], { cwd, env: gitEnv(), stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true });
  } catch (e) {
    throw new A2AError("EIO", `cannot run git (${(e as Error).message}): install git or put it on PATH`, { cause: e });
  }
  if (r.exitCode !== 0) {
    const why = r.stderr.toString().trim().split("\n").find((l) => l.trim()) ?? `exit ${r.exitCode}`;
    throw new A2AError("EFAILED", `git ${args.join(" ")} in ${cwd} failed: ${why}`, { data: { git: args, cwd } });
  }
  return r.stdout.toString().trim();
}

export interface Checkout {
  root: string; // the user's work tree (its top directory, real path)
  common: string; // its common git directory (real path)
}

// The user's repository around `dir`.
export function checkoutOf(dir: string): Checkout {
  if (!existsSync(dir)) throw new A2AError("ENOTFOUND", `${dir} does not exist: give the crew the directory of your git repository`);
  let root: string, common: string;
  try {
    root = git(["rev-parse", "--show-toplevel"], dir);
    common = git(["rev-parse", "--path-format=absolute", "--git-common-dir"], dir);
  } catch (e) {
    throw new A2AError("EUSAGE", `${dir} is not in a git repository, so a worker cannot have a worktree there: run the crew in one, or turn the worker's worktree off`, { cause: e });
  }
  return { root: realpathSync(root), common: realpathSync(common) };
}

// Where worker `name`'s worktree goes: NAME under `dir` when given, else REPO.crew/NAME.
export function worktreePath(c: Checkout, name: string, dir?: string): string {
  return dir ? join(resolve(c.root, dir), name) : join(dirname(c.root), `${basename(c.root)}.crew`, name);
}

// The private git directory of the linked worktree at `path`, or undefined when `path` is not
// one (its .git is a file "gitdir: DIR").
function linkedGitDir(path: string): string | undefined {
  try {
    const dotGit = join(path, ".git");
    if (!statSync(dotGit).isFile()) return undefined;
    const m = readFileSync(dotGit, "utf8").match(/^gitdir: (.+)$/m);
    return m ? resolve(path, m[1].trim()) : undefined;
  } catch {
    return undefined;
  }
}

// What a2a wrote in MARKER when `path` is a worktree it made for checkout `c` (the marker in its
// private git directory, and that directory under c's common git directory); `bus`: the store
// (as shown: no password) of the crew that made it (absent in a marker from before it was kept).
export function markOf(c: Checkout, path: string): { name?: string; bus?: string } | undefined {
  const gitDir = linkedGitDir(path);
  const mark = gitDir ? tryRead(join(gitDir, MARKER)) : undefined;
  try {
    return mark !== undefined && realpathSync(dirname(dirname(gitDir!))) === c.common ? JSON.parse(mark) : undefined;
  } catch {
    return mark === undefined ? undefined : {};
  }
}
export const isCrewWorktree = (c: Checkout, path: string) => markOf(c, path) !== undefined;

const inside = (path: string, dir: string) => {
  const r = relative(dir, path);
  return r === "" || (!r.startsWith("..") && !isAbsolute(r));
};

function refuseTaken(path: string): never {
  throw new A2AError("EUSAGE", `${path} exists and is not an a2a crew worktree: move it aside, or give the crew another worktree directory; nothing was changed`, { data: { path } });
}

export interface Worktree {
  path: string;
  branch: string;
  created: boolean; // made now (false: reused)
}

// Worker `name`'s worktree of the checkout around `repo`, made when absent (its branch from
// `base`, else the checkout's HEAD; a branch a2a/NAME kept from before is checked out as it is),
// reused when it is a2a's, refused when the path holds anything else.
export function ensureWorktree(repo: string, name: string, o: { dir?: string; base?: string; bus?: string } = {}): Worktree {
  const { c, path, there } = checkWorktree(repo, name, o);
  const branch = branchOf(name);
  if (there) return { path, branch, created: false };
  if (goneRecord(c, path)) git(["worktree", "remove", path], c.root);
  const kept = tryGit(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`], c.root) !== undefined;
  if (kept) git(["worktree", "add", "--quiet", path, branch], c.root);
  else git(["worktree", "add", "--quiet", "-b", branch, path, o.base ?? "HEAD"], c.root);
  const gitDir = linkedGitDir(path);
  if (!gitDir) throw new A2AError("EIO", `git worktree add made no linked worktree at ${path}: remove it, then try again`, { data: { path } });
  writeUserFile(join(gitDir, MARKER), JSON.stringify({ name, branch, checkout: c.root, bus: o.bus }) + "\n", { exclusive: true });
  return { path, branch, created: true };
}

// What ensureWorktree would refuse, refused before anything is made (crew up checks every worker
// first): a name git cannot take as a branch, a directory outside a repository, a path inside the
// checkout or held by anything but a2a. `there`: a2a's worktree is at the path already.
export function checkWorktree(repo: string, name: string, o: { dir?: string; bus?: string } = {}): { c: Checkout; path: string; there: boolean } {
  checkWorkerName(name);
  const c = checkoutOf(repo);
  const path = worktreePath(c, name, o.dir);
  // Judged where the path really leads: REPO.crew (or a directory on the way) may be a symlink
  // into the checkout or its git directory.
  const real = realPathOf(path);
  for (const dir of [c.root, c.common]) {
    if (inside(path, dir) || inside(real, dir)) throw new A2AError("EUSAGE", `${path}${real !== path ? ` (${real})` : ""} is inside your checkout ${dir}: give the crew a worktree directory outside it`, { data: { path } });
  }
  if (existsSync(path) || isSymlink(path)) {
    const mark = markOf(c, path) ?? refuseTaken(path);
    // Another bus's crew runs (or ran) its worker of this name there: two agents in one directory.
    if (o.bus && mark.bus && mark.bus !== o.bus) throw new A2AError("EUSAGE", `${path} is the worktree of worker ${name} of a crew on another bus (${mark.bus}): rename this crew's worker, or stop that crew and remove the worktree; nothing was changed`, { data: { path, bus: mark.bus } });
    return { c, path, there: true };
  }
  // git checks a branch out in one worktree only: refused here rather than at each task, where
  // every attempt would fail, and the task go to the dead letters, without anything run.
  // a2a's own record here, its directory gone (removed by hand, a crash mid-removal): forgotten.
  const at = checkedOutAt(c, branchOf(name));
  if (at !== undefined && !(at === path && goneRecord(c, path))) {
    throw new A2AError("EUSAGE", `branch ${branchOf(name)}, worker ${name}'s, is checked out at ${at}: switch that checkout to another branch (or git worktree prune, when its directory is gone), or rename the worker; nothing was changed`, { data: { name, branch: branchOf(name), at } });
  }
  return { c, path, there: false };
}

// The worktree of checkout `c` that has `branch` checked out, if one has.
function checkedOutAt(c: Checkout, branch: string): string | undefined {
  let at: string | undefined;
  for (const line of git(["worktree", "list", "--porcelain"], c.root).split("\n")) {
    if (line.startsWith("worktree ")) at = line.slice("worktree ".length);
    else if (line === `branch refs/heads/${branch}`) return at;
  }
  return undefined;
}

// A worker's name is a directory and a branch (a2a/NAME): an a2a name git takes as a branch name.
function checkWorkerName(name: string): void {
  if (!isValidName(name)) throw new A2AError("EUSAGE", `worker name ${JSON.stringify(name)} is not valid: ${NAME_RULE}`, { data: { name } });
  if (tryGit(["check-ref-format", `refs/heads/${branchOf(name)}`], process.cwd()) === undefined) {
    throw new A2AError("EUSAGE", `worker name ${JSON.stringify(name)} cannot be a git branch (${branchOf(name)}): take out "..", and a "." or ".lock" at its end`, { data: { name } });
  }
}

// Where `path` leads: its deepest existing directory resolved (symlinks followed), the rest as
// written; a symlink at `path` itself is followed too.
function realPathOf(path: string): string {
  let dir = path;
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(dir), ...rest);
    } catch {
      if (dirname(dir) === dir) return path;
      rest.unshift(basename(dir));
      dir = dirname(dir);
    }
  }
}

// A dangling symlink is something at the path too (existsSync follows links).
const isSymlink = (path: string) => lstatSync(path, { throwIfNoEntry: false }) !== undefined;

export function tryGit(args: string[], cwd: string): string | undefined {
  try {
    return git(args, cwd);
  } catch {
    return undefined;
  }
}

// Takes worker `name`'s worktree away (git's record and the directory; REPO.crew too when it is
// left empty); its branch stays. Nothing there: nothing done. `force`: even with changes not
// committed (they are lost). Returns whether a worktree was removed.
export function removeWorktree(repo: string, name: string, o: { dir?: string; force?: boolean } = {}): boolean {
  const c = checkoutOf(repo);
  const path = worktreePath(c, name, o.dir);
  if (!existsSync(path)) return false;
  if (!isCrewWorktree(c, path)) refuseTaken(path);
  git(["worktree", "remove", ...(o.force ? ["--force"] : []), path], c.root);
  if (!o.dir) {
    try {
      rmdirSync(dirname(path)); // only when empty: another worker's worktree may be there
    } catch {
      // not empty, or gone
    }
  }
  return true;
}

// Commits what the agent left in its worktree uncommitted (an agent whose sandbox keeps the git
// directory read-only, as Codex's does, cannot commit itself), with `message`; git's hooks run
// (a2a guard judges it as any commit). The user's git identity when they have one, else the
// worker's. Returns whether there was anything to commit.
export function commitLeftovers(path: string, name: string, message: string): boolean {
  if (!git(["status", "--porcelain", "--untracked-files=all"], path)) return false;
  git(["add", "--all"], path);
  const who = tryGit(["var", "GIT_AUTHOR_IDENT"], path) === undefined ? ["-c", `user.name=${name}`, "-c", `user.email=${name}@a2a.invalid`] : [];
  git([...who, "commit", "--quiet", "-m", message], path);
  return true;
}

// Keeps file `rel` (work-tree relative) of the worktree at `path` out of the worker's commits and
// status, by what is the worktree's alone (its index; an ignore file in the work tree), never the
// repository's shared info/exclude, which the user's checkout reads too: a tracked file is
// marked skip-worktree in the worktree's own index; an untracked one is named in a .gitignore
// beside it, which names itself too (or, when that .gitignore is tracked, is marked so as well).
export function keepOutOfCommits(path: string, rel: string): void {
  const tracked = (f: string) => tryGit(["ls-files", "--error-unmatch", "--", f], path) !== undefined;
  if (tracked(rel)) {
    git(["update-index", "--skip-worktree", "--", rel], path);
    return;
  }
  const ignoreRel = join(dirname(rel), ".gitignore");
  const ignore = join(path, ignoreRel);
  const had = existsSync(ignore) ? readFileSync(ignore, "utf8") : "";
  const lines = [`/${basename(rel)}`, ...(tracked(ignoreRel) ? [] : ["/.gitignore"])].filter((l) => !had.split("\n").includes(l));
  if (!lines.length) return;
  if (tracked(ignoreRel)) git(["update-index", "--skip-worktree", "--", ignoreRel], path);
  mkdirSync(dirname(ignore), { recursive: true });
  writeUserFile(ignore, `${had}${had && !had.endsWith("\n") ? "\n" : ""}# a2a crew: this worker's own settings, kept out of its commits\n${lines.join("\n")}\n`);
}

// The worktree's own git directory: where a run keeps files no file of the work tree (git never shows them).
export const gitDirOf = (path: string): string => git(["rev-parse", "--absolute-git-dir"], path);

// What an attempt left, for the task's record: the worker's branch and its commit.
export function worktreeResult(path: string): { branch: string; commit: string } {
  return { branch: git(["symbolic-ref", "--short", "HEAD"], path), commit: git(["rev-parse", "HEAD"], path) };
}

// git keeps a record of a worktree a2a made (MARKER) at `path`, whose directory is gone.
export function goneRecord(c: Checkout, path: string): boolean {
  if (existsSync(path) || isSymlink(path)) return false;
  const admin = join(c.common, "worktrees");
  return (existsSync(admin) ? readdirSync(admin) : []).some((id) => tryRead(join(admin, id, "gitdir"))?.trim() === join(path, ".git") && existsSync(join(admin, id, MARKER)));
}

function tryRead(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
