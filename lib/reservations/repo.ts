// Which repository a directory (or a file being edited) is in, what reservations there are keyed
// by, and a path a user gave (from a subdirectory, or absolute) as the repository-relative path a
// reservation names. Read from the .git files themselves, not by running git: the PreToolUse
// hook asks on every edit and must answer in a few milliseconds.
//
// Invariants:
// - every worktree of one repository has one identity (worktrees share their common git
//   directory), so agents in parallel worktrees meet the same reservations;
// - clones of one repository on several machines share an identity when they have the same
//   `origin` (a database store is shared across machines): `git:HOST/PATH` of its URL as git
//   reads it from the config (git-config.ts: any `[remote "origin"]` section, quoting, insteadOf),
//   whatever the scheme, user, port, `.git` or letter case; without an origin the identity is this
//   host and the common git directory's real path; A2A_REPO names it outright;
// - a repository answers to the identities its other sources would give too (`aliases`: the
//   common git directory's when an origin or A2A_REPO names it, the origin's when A2A_REPO does,
//   and the spelling a2a gave the origin before letter case was folded), so adding an origin or
//   A2A_REPO, or a new a2a, hides no reservation made under the old identity;
// - outside git the repository is the current directory;
// - paths are compared after resolving their symlinks (what an edit writes is the link's
//   target), a `..` after a link going up from its target as the kernel's does: a path whose
//   target leaves the repository is refused by `relativePath` (EUSAGE); `fileRepos` finds the
//   repository of the file itself, not only the session directory's.

import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { A2AError } from "../core/errors";
import { remoteUrl } from "./git-config";
import { normalisePattern } from "./patterns";

export interface Repo {
  root: string; // the work tree's top directory (real path), or the current directory outside git
  id: string; // what reservations are keyed by (header)
  aliases: string[]; // the identities its other sources give: their reservations are its too
  git: boolean;
}

// The repository `cwd` is in. `repoName`: A2A_REPO (Store.repoName); `host`: this machine's name (Store.host).
export function repoOf(cwd: string, host: string, settings: { repoName?: string } = {}): Repo {
  const start = kernelPath(cwd, process.cwd());
  return repoAt(start, findGit(start), host, settings);
}

// The repository of directory `start` (a real path), whose nearest .git `findGit` found.
function repoAt(start: string, found: { root: string; common: string } | undefined, host: string, settings: { repoName?: string }): Repo {
  const named = settings.repoName?.trim();
  if (!found) return withAliases({ root: start, git: false }, [named && `name:${named}`, `dir:${host}:${start}`]);
  const url = originOf(found.common);
  const origin = url && [`git:${normaliseRemote(url)}`, `git:${caseKept(url)}`];
  return withAliases({ root: found.root, git: true }, [named && `name:${named}`, ...(origin || []), `dir:${host}:${found.common}`]);
}

// The first identity is the repository's; the others are aliases.
function withAliases(r: { root: string; git: boolean }, ids: (string | undefined | "")[]): Repo {
  const [id, ...aliases] = [...new Set(ids.filter((x): x is string => !!x))];
  return { root: r.root, id, aliases, git: r.git };
}

// The repositories a file an edit tool or git names (relative to `cwd`, or absolute) belongs to,
// and its repository-relative path in each, its symlinks resolved: the git repository holding
// the file, whatever the session's directory; and the session's own repository (`repoOf(cwd)`)
// when the file is inside it too (a file of a submodule is also the superproject's; a file in no
// git repository, only the session's). Empty: in no repository a2a knows. `session`: repoOf(cwd),
// when the caller has it already (the hook asks for several paths of one session); the file's
// own repository's config is read only when it is not the session's.
export function fileRepos(path: string, cwd: string, host: string, settings: { repoName?: string } = {}, session = repoOf(cwd, host, settings)): { repo: Repo; rel: string }[] {
  const target = kernelPath(path, cwd);
  const found = findGit(dirname(target));
  const own = !found ? undefined : session.git && found.root === session.root ? session : repoAt(dirname(target), found, host, settings);
  const out: { repo: Repo; rel: string }[] = [];
  // Under A2A_REPO a nested repository has the session's identity but its own root: both are checked.
  const both = own && (session.id !== own.id || session.root !== own.root);
  for (const repo of own ? [own, ...(both ? [session] : [])] : [session]) {
    const rel = within(repo.root, target);
    if (rel) out.push({ repo, rel });
  }
  return out;
}

// `given` (a path or glob, relative to `cwd` or absolute inside the repository) as the
// normalised repository-relative pattern; EUSAGE when it leaves the repository.
export function relativePath(repo: Repo, cwd: string, given: string): string {
  if (typeof given !== "string" || given === "") return normalisePattern(given);
  const rel = within(repo.root, kernelPath(given, cwd));
  if (rel === undefined) {
    throw new A2AError("EUSAGE", `invalid pattern ${JSON.stringify(given)}: it is outside the repository at ${repo.root}`, { data: { pattern: given, root: repo.root } });
  }
  return normalisePattern(rel);
}

// `path` (absolute, or relative to `cwd`) as the kernel reaches it, its existing part's symlinks
// resolved (an edit through a link writes its target; a path spelled through a link to the
// repository is in it), the names below that kept as they are. Walked name by name: a `..` goes
// up from the real path of what precedes it (`link/..` is the parent of the link's target, not
// the directory holding the link), which path.resolve, folding `..` as text, gets wrong.
export function kernelPath(path: string, cwd: string): string {
  const base = isAbsolute(path) ? sep : walk(isAbsolute(cwd) ? sep : process.cwd(), cwd);
  return resolvedPath(walk(base, path));
}

function walk(from: string, path: string): string {
  let at = from;
  for (const name of path.split(sep)) {
    if (name === "" || name === ".") continue;
    at = name === ".." ? dirname(resolvedPath(at)) : join(at, name);
  }
  return at;
}

// `abs` (no `..` in it) with the symlinks of its existing part resolved.
function resolvedPath(abs: string): string {
  const { head, tail } = existingHead(abs);
  return tail.length ? join(real(head), ...tail) : real(head);
}

function within(root: string, abs: string): string | undefined {
  const r = relative(root, abs);
  if (r === "") return "";
  if (r.startsWith("..") || isAbsolute(r)) return undefined;
  return r.split(sep).join("/");
}

// The longest existing prefix of `abs` and the names below it that do not exist (yet).
function existingHead(abs: string): { head: string; tail: string[] } {
  const tail: string[] = [];
  let head = abs;
  while (!existsSync(head)) {
    const up = dirname(head);
    if (up === head) break;
    tail.unshift(head.slice(up.length).replace(/^[/\\]+/, ""));
    head = up;
  }
  return { head, tail };
}

const real = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

// The work tree's root and the common git directory, from the nearest `.git` up from `dir`: a
// directory (a main work tree), or a file `gitdir: PATH` (a linked worktree or a submodule),
// whose directory names its common directory in `commondir` when it is a worktree.
function findGit(dir: string): { root: string; common: string } | undefined {
  for (let d = dir; ; d = dirname(d)) {
    const dotgit = join(d, ".git");
    let st;
    try {
      st = statSync(dotgit);
    } catch {
      st = undefined;
    }
    if (st?.isDirectory()) return { root: d, common: real(dotgit) };
    if (st?.isFile()) {
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotgit, "utf8"));
      if (m) {
        const gitdir = resolve(d, m[1]);
        let common = gitdir;
        try {
          common = resolve(gitdir, readFileSync(join(gitdir, "commondir"), "utf8").trim());
        } catch {
          // no commondir: a submodule's own git directory is its common one
        }
        return { root: d, common: real(common) };
      }
    }
    if (dirname(d) === d) return undefined;
  }
}

// The `origin` remote's URL in the common git directory's config (git-config.ts), or undefined.
function originOf(common: string): string | undefined {
  try {
    return remoteUrl(readFileSync(join(common, "config"), "utf8"));
  } catch {
    return undefined;
  }
}

// A remote URL as HOST/PATH: no scheme, user, port, surrounding slashes or `.git`; one repository
// reached by https and by ssh, or spelled `Org/Repo` and `org/repo` (forges fold letter case),
// gives one identity. A local path gives the path.
export function normaliseRemote(url: string): string {
  return caseKept(url).toLowerCase();
}

// The same with the path's letter case kept: the identity a2a gave an origin before case was
// folded, looked up as an alias so those reservations stay visible.
function caseKept(url: string): string {
  let host = "";
  let path = url.trim();
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?(\[[^\]]*\]|[^/:]+)(?::\d*)?(\/.*)?$/i.exec(path);
  const scp = /^(?:[^@/]*@)?(\[[^\]]*\]|[^/:]+):(.+)$/.exec(path);
  if (scheme) [host, path] = [scheme[1], scheme[2] ?? ""];
  else if (scp && !isAbsolute(path)) [host, path] = [scp[1], scp[2]];
  path = path.replace(/^\/+|\/+$/g, "").replace(/\.git$/, "").replace(/\/+$/, "");
  return host ? `${host.toLowerCase()}/${path}` : path;
}
