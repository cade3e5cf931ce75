// Which git work tree a directory is in: what a session's name and a peer's repo scope are made
// of. It reads the user's working tree (a .git directory or worktree file), never the store.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

// The top of the git work tree containing `cwd`, or null.
export function gitRoot(cwd: string): string | null {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return null;
  }
}
