// Which repository a directory is in, what reservations there are keyed by, and a path a user
// gave (from a subdirectory, or absolute) as the repository-relative path a reservation names.
// Read from the .git files themselves, not by running git: the PreToolUse hook asks on every
// edit and must answer in a few milliseconds.
//
// Invariants:
// - every worktree of one repository has one identity (worktrees share their common git
//   directory), so agents in parallel worktrees meet the same reservations;
// - clones of one repository on several machines share an identity when they have the same
//   `origin` (a database store is shared across machines): `git:HOST/PATH` of its URL, whatever
//   the scheme or user; without an origin the identity is this host and the common git
//   directory's real path; A2A_REPO names it outright;
// - outside git the repository is the current directory;
// - a path that leaves the repository (by `..`, or a symlink that resolves outside) is refused
//   by `relativePath` (EUSAGE), and answered "outside" by `insidePath` (a hook lets it be).

import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { A2AError } from "../core/errors";
import { normalisePattern } from "./patterns";

export interface Repo {
  root: string; // the work tree's top directory (real path), or the current directory outside git
  id: string; // what reservations are keyed by (header)
  git: boolean;
}

// The repository `cwd` is in. `repoName`: A2A_REPO (Store.repoName); `host`: this machine's name (Store.host).
export function repoOf(cwd: string, host: string, settings: { repoName?: string } = {}): Repo {
  const start = real(resolve(cwd));
  const found = findGit(start);
  const named = settings.repoName?.trim();
  if (!found) return { root: start, id: named ? `name:${named}` : `dir:${host}:${start}`, git: false };
  const origin = originOf(found.common);
  const id = named ? `name:${named}` : origin ? `git:${origin}` : `dir:${host}:${found.common}`;
  return { root: found.root, id, git: true };
}

// `given` (a path or glob, relative to `cwd` or absolute inside the repository) as the
// normalised repository-relative pattern; EUSAGE when it leaves the repository.
export function relativePath(repo: Repo, cwd: string, given: string): string {
  if (typeof given !== "string" || given === "") return normalisePattern(given);
  const abs = isAbsolute(given) ? given : join(resolve(cwd), given);
  const rel = inside(repo.root, abs);
  if (rel === undefined) {
    throw new A2AError("EUSAGE", `invalid pattern ${JSON.stringify(given)}: it is outside the repository at ${repo.root}`, { data: { pattern: given, root: repo.root } });
  }
  return normalisePattern(rel);
}

// A concrete file path (what an edit tool or git names) as repository-relative, or undefined
// when it is outside the repository.
export function insidePath(repo: Repo, cwd: string, path: string): string | undefined {
  const rel = inside(repo.root, isAbsolute(path) ? path : join(resolve(cwd), path));
  return rel === undefined || rel === "" ? undefined : rel;
}

// `abs` relative to `root`: lexically, then through the symlinks of the part that exists (an
// edit through a link writes its target). Undefined when either way leaves `root`.
function inside(root: string, abs: string): string | undefined {
  const lexical = within(root, resolve(abs));
  if (lexical === undefined) return undefined;
  const { head, tail } = existingHead(resolve(abs));
  const resolved = within(root, join(real(head), ...tail));
  return resolved === undefined ? undefined : resolved;
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

// The `origin` remote's URL in the common git directory's config, as HOST/PATH (lowercase
// host, no scheme, user, port or .git), or undefined.
function originOf(common: string): string | undefined {
  let config: string;
  try {
    config = readFileSync(join(common, "config"), "utf8");
  } catch {
    return undefined;
  }
  const section = /^\s*\[remote\s+"origin"\]\s*$([\s\S]*?)(?=^\s*\[|(?![\s\S]))/m.exec(config);
  const url = section && /^\s*url\s*=\s*(.+?)\s*$/m.exec(section[1])?.[1];
  return url ? normaliseRemote(url) : undefined;
}

export function normaliseRemote(url: string): string {
  let host = "";
  let path = url;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?([^/:]+)(?::\d+)?(\/.*)?$/i.exec(url);
  const scp = /^(?:[^@/]*@)?([^/:]+):(.+)$/.exec(url);
  if (scheme) [host, path] = [scheme[1], scheme[2] ?? ""];
  else if (scp && !isAbsolute(url)) [host, path] = [scp[1], scp[2]];
  path = path.replace(/^\/+|\/+$/g, "").replace(/\.git$/, "");
  return host ? `${host.toLowerCase()}/${path}` : path;
}
