// Tests leave nothing outside what they made (issue 33): the places a test's children were
// found writing to (chromium's crash database and dconf cache, opencode's data, cache, config
// and temp directories) are the same at the end of the run as at its start, and no temporary
// directory a test let go of (tempDir()'s dispose) is back, refilled by something still
// running (a release build into a directory already removed). tests/preload.ts checks both
// once, after the last file, and fails the run naming what changed. Cheap: a walk of a few
// small directories.
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

export function watchedPaths(home = homedir(), tmp = tmpdir()): string[] {
  return [
    join(home, ".config", "chromium"),
    join(home, ".cache", "chromium"),
    join(home, ".cache", "dconf"),
    join(home, ".pki"),
    join(home, ".config", "opencode"),
    join(home, ".local", "share", "opencode"),
    join(home, ".local", "state", "opencode"),
    join(home, ".cache", "opencode"),
    join(tmp, "opencode"),
  ];
}

// Per path: "absent", or how many entries it holds and the newest change among them.
export function snapshot(paths: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of paths) {
    if (!lstatIf(p)) {
      out.set(p, "absent");
      continue;
    }
    const seen = { n: 0, newest: 0 };
    walk(p, seen);
    out.set(p, `${seen.n} entries, newest change ${new Date(seen.newest).toISOString()}`);
  }
  return out;
}

function lstatIf(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

function walk(p: string, seen: { n: number; newest: number }): void {
  const st = lstatIf(p);
  if (!st || seen.n > 20_000) return;
  seen.n++;
  seen.newest = Math.max(seen.newest, st.mtimeMs, st.ctimeMs);
  if (!st.isDirectory()) return;
  let names: string[] = [];
  try {
    names = readdirSync(p);
  } catch {
    return; // unreadable: its own mtime is all we see
  }
  for (const n of names) walk(join(p, n), seen);
}

// One line per path whose snapshot differs.
export function changes(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...after].filter(([p, s]) => before.get(p) !== s).map(([p, s]) => `${p}: ${before.get(p)} -> ${s}`);
}

// Directories tempDir() handed out and then removed: none may exist again at the end.
const disposed = new Set<string>();

export function noteDisposed(path: string): void {
  disposed.add(path);
}

export function refilled(): string[] {
  return [...disposed].filter((p) => existsSync(p));
}
