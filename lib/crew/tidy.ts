// When a crew stops, the worktrees a2a made for its agent workers (lib/crew/worktree.ts) are
// taken away where nothing would be lost: their branches hold the work.
//
// Invariants:
// - never a worktree a2a did not make, nor one another bus's crew made (its worker may run there);
// - nothing is lost that no branch holds: changes not committed, a git repository inside it,
//   commits on another HEAD; files the repository ignores go with it (build output, the agent's
//   settings: by the repository's own word not work);
// - git's record of a2a's worktree whose directory is gone is forgotten, no other record.

import { existsSync } from "node:fs";
import { branchOf, checkoutOf, git, goneRecord, markOf, removeWorktree, tryGit, worktreePath } from "./worktree";

// Worker `name`'s worktree, for a crew on bus `bus` (as shown: no password): removed, or kept
// with why.
export function tidyWorktree(repo: string, name: string, bus?: string): { removed: boolean; kept?: string; path: string } {
  const c = checkoutOf(repo);
  const path = worktreePath(c, name);
  if (!existsSync(path)) return { removed: goneRecord(c, path) && tryGit(["worktree", "remove", path], c.root) !== undefined, path };
  const mark = markOf(c, path);
  if (!mark) return { removed: false, path };
  if (bus && mark.bus && mark.bus !== bus) return { removed: false, kept: `it is the worktree of a crew on another bus (${mark.bus})`, path };
  const kept = wouldLose(path);
  if (kept) return { removed: false, kept, path };
  if (tryGit(["symbolic-ref", "--quiet", "HEAD"], path) !== `refs/heads/${branchOf(name)}`) return { removed: false, kept: `its HEAD is not branch ${branchOf(name)}`, path };
  return { removed: removeWorktree(repo, name), path };
}

// What removing the worktree at `path` would lose that no branch holds: changes not committed, or
// a repository inside (an ignored one too: git worktree remove takes it silently, history and all).
// With every untracked file listed, git stops only at a nested repository, naming it DIR/.
function wouldLose(path: string): string | undefined {
  const entries = git(["status", "--porcelain", "-z", "--ignored=traditional", "--untracked-files=all"], path).split("\0").filter(Boolean);
  if (entries.some((e) => !e.startsWith("!! "))) return "it has changes not committed";
  const repo = entries.find((e) => e.endsWith("/"));
  return repo ? `it holds a git repository of its own, ${repo.slice(3, -1)}` : undefined;
}
