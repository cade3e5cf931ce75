// Running git for the guard: the hooks directory a repository uses, and the paths a commit or a
// push changes. The guard asks git itself (not the .git files, as lib/reservations/repo.ts does)
// because what it needs is git's own answer: the index, core.hooksPath, the commit graph.
//
// Invariants:
// - git is run with the caller's directory and environment (GIT_DIR, GIT_INDEX_FILE and the
//   rest, as git sets them for a hook), never through a shell;
// - a failure is one A2AError naming the git command and git's first line of complaint;
// - paths are returned as git prints them with -z: repository-relative, unquoted, in order,
//   without repeats.

import { A2AError, arg, text } from "../core/errors";

const MAX_OUTPUT = 64 * 1024 * 1024;

// `git ARGS` in `cwd`: its stdout; `input` is its stdin.
export function git(args: string[], cwd: string, input?: string): string {
  let r;
  try {
    r = Bun.spawnSync(["git", ...args], { cwd, stdin: input === undefined ? "ignore" : new TextEncoder().encode(input), stdout: "pipe", stderr: "pipe", maxBuffer: MAX_OUTPUT });
  } catch (e) {
    throw new A2AError("EIO", `cannot run git (${(e as Error).message}): install git or put it on PATH`, { cause: e });
  }
  if (r.exitCode !== 0) {
    const why = r.stderr.toString().trim().split("\n")[0] || `exit ${r.exitCode}`;
    throw new A2AError("EUSAGE", `git ${args[0]} in ${cwd} failed: ${why}`, { data: { git: args, cwd } });
  }
  return r.stdout.toString();
}

const split0 = (out: string): string[] => [...new Set(out.split("\0").filter(Boolean))];

// The hooks directory git runs `dir`'s hooks from: core.hooksPath when set, else the COMMON git
// directory's hooks (a linked worktree shares its main work tree's), as an absolute path.
export function hooksDir(dir: string): string {
  const out = git(["rev-parse", "--path-format=absolute", "--git-path", "hooks"], dir).trim();
  if (!out) throw new A2AError("EUSAGE", text`${dir} is not in a git repository: run this in one, or give ${arg("repo", "DIR")}`);
  return out;
}

// The top of the work tree `dir` is in.
export const workTree = (dir: string): string => git(["rev-parse", "--show-toplevel"], dir).trim();

// The paths the next commit changes: what is staged against HEAD (against nothing on an unborn
// branch). --no-renames: a rename is its old path deleted and its new path added, so both count.
export const stagedPaths = (top: string): string[] => split0(git(["diff", "--cached", "--name-only", "-z", "--no-renames"], top));

export const ZERO_SHA = /^0+$/;

export interface PushedRef {
  localRef: string;
  localSha: string;
  remoteRef: string;
  remoteSha: string;
}

// git's pre-push stdin: one line per ref, "<local ref> <local sha> <remote ref> <remote sha>".
export function parsePushLines(input: string): PushedRef[] {
  const refs: PushedRef[] = [];
  for (const line of input.split("\n")) {
    if (!line.trim()) continue;
    const f = line.trim().split(/\s+/);
    if (f.length !== 4) throw new A2AError("EUSAGE", `a pre-push line is not "<local ref> <local sha> <remote ref> <remote sha>": ${JSON.stringify(line)}`);
    refs.push({ localRef: f[0], localSha: f[1], remoteRef: f[2], remoteSha: f[3] });
  }
  return refs;
}

// The paths changed by the commits a push sends: for each ref pushed (a deletion sends none),
// the commits reachable from its new tip that the remote ref does not have: not reachable from
// its old tip when this repository has that commit. A commit the remote holds on ANOTHER branch
// still counts (a fast-forward or merge bringing a branch's commits into this one carries
// them). A new ref, or an old tip this repository has not fetched, is compared with `remote`'s
// remote-tracking branches instead (its merge base with them), so a first push to an empty
// remote checks every commit. Each commit counts by its own changes; a merge by the paths its
// result changes against every parent (a conflict resolved, an edit slipped in: git's combined
// diff, --cc), the commits it brings being counted themselves.
export function pushedPaths(top: string, remote: string, refs: PushedRef[]): string[] {
  const paths = new Set<string>();
  for (const r of refs) {
    if (ZERO_SHA.test(r.localSha)) continue;
    const known = !ZERO_SHA.test(r.remoteSha) && hasCommit(top, r.remoteSha);
    const not = ["--not", ...(known ? [r.remoteSha] : remote && isRemote(top, remote) ? [`--remotes=${remote}`] : [])];
    const out = git(["log", "--format=", "--name-only", "-z", "--no-renames", "--cc", r.localSha, ...not], top);
    for (const p of split0(out)) paths.add(p);
  }
  return [...paths];
}

function isRemote(top: string, name: string): boolean {
  return git(["remote"], top).split("\n").includes(name);
}

function hasCommit(top: string, sha: string): boolean {
  try {
    git(["cat-file", "-e", `${sha}^{commit}`], top);
    return true;
  } catch {
    return false;
  }
}
